"""rankmap.kernels.jit: kernels load from numba's cache without refreshing its compiler, and
whatever still needs compiling afterwards compiles as before."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rankmap.kernels.jit import KernelDispatcher, QuickLoadCache, kernel, rebuild_environment

#: counts numba's compiler refreshes (its typing and lowering registries) in a subprocess
_COUNT_REFRESHES = textwrap.dedent("""\
    import sys
    from numba.core import base
    REFRESHES = []
    _refresh = base.BaseContext.refresh
    def counted(self):
        REFRESHES.append(type(self).__name__)
        _refresh(self)
    base.BaseContext.refresh = counted
    sys.path.insert(0, sys.argv[1])
    """)

#: a module of kernels: one loaded from the cache, one needing numba's implementation of sort
_MODULE = textwrap.dedent("""\
    import numpy as np
    from rankmap.kernels.jit import kernel

    @kernel(nogil=True)
    def doubled(values):
        out = np.empty_like(values)
        for i in range(values.size):
            out[i] = 2 * values[i]
        return out

    @kernel
    def sorted_copy(values):
        return np.sort(values)

    @kernel(nogil=True)
    def distinct(values):
        seen = set()
        for v in values:
            seen.add(v)
        return len(seen)

    @kernel
    def seeded_sum(n):
        np.random.seed(7)
        return np.random.random(n).sum()
    """)

#: calls the kernels that load from the cache in the second process (hashing, random state)
_CALLS = ("import numpy as np, jit_probe\n"
          "print('DOUBLED', jit_probe.doubled(np.arange(4.0)).tolist())\n"
          "print('DISTINCT', jit_probe.distinct(np.array([3, 1, 3, 2])))\n"
          "print('SEEDED', repr(jit_probe.seeded_sum(5)))\n")


def _python(code: str, folder) -> str:
    proc = subprocess.run([sys.executable, "-c", _COUNT_REFRESHES + code, str(folder)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_cached_kernel_loads_without_a_compiler_refresh_and_compiling_still_works(tmp_path):
    """The first process compiles (numba refreshes its compiler); the next loads the kernels
    with no refresh at all and the same results (a set, which needs the hash secret's
    symbols, and numpy's seeded random numbers, which need numba's random state, included),
    then compiles a kernel that needs numba's implementation registries (np.sort), which
    refreshes the compiler and sorts right."""
    (tmp_path / "jit_probe.py").write_text(_MODULE)
    first = _python(_CALLS + "print('REFRESHED', len(REFRESHES) > 0)\n", tmp_path)
    assert "DOUBLED [0.0, 2.0, 4.0, 6.0]" in first and "REFRESHED True" in first
    assert "DISTINCT 3" in first
    seeded = first.split("SEEDED ")[1].splitlines()[0]
    second = _python(_CALLS +
                     "print('LOADED', sum(sum(k.stats.cache_hits.values()) for k in"
                     " (jit_probe.doubled, jit_probe.distinct, jit_probe.seeded_sum)))\n"
                     "print('REFRESHES', len(REFRESHES))\n"
                     "print('ARRAYOBJ', 'numba.np.arrayobj' in sys.modules)\n"
                     "print('SORTED', jit_probe.sorted_copy(np.array([3, 1, 2])).tolist())\n"
                     "print('AFTER', len(REFRESHES) > 0)\n", tmp_path)
    assert "DOUBLED [0.0, 2.0, 4.0, 6.0]" in second
    assert "DISTINCT 3" in second and f"SEEDED {seeded}" in second
    assert "REFRESHES 0" in second and "ARRAYOBJ False" in second
    assert "LOADED 3" in second
    assert "SORTED [1, 2, 3]" in second and "AFTER True" in second


#: a kernel first compiled after jit_probe's kernels were loaded, calling one of them
_LATER_MODULE = textwrap.dedent("""\
    from rankmap.kernels.jit import kernel
    from jit_probe import doubled

    @kernel
    def quadrupled(values):
        return doubled(doubled(values))
    """)


def test_a_kernel_compiled_after_lazy_environments_caches_and_loads_them(tmp_path):
    """Loading a kernel that allocates imports none of numba's array implementation modules
    (their functions' environments are rebuilt from the module's name); a kernel compiled
    after that, which links the loaded one, is cached with those environments and loads and
    runs in the next process."""
    (tmp_path / "jit_probe.py").write_text(_MODULE)
    (tmp_path / "jit_later.py").write_text(_LATER_MODULE)
    _python(_CALLS, tmp_path)
    call_later = ("import numpy as np, jit_probe\n"
                  "print('DOUBLED', jit_probe.doubled(np.arange(3.0)).tolist())\n"
                  "print('ARRAYOBJ', 'numba.np.arrayobj' in sys.modules)\n"
                  "import jit_later\n"
                  "print('QUAD', jit_later.quadrupled(np.arange(3.0)).tolist())\n"
                  "print('HITS', sum(jit_later.quadrupled.stats.cache_hits.values()))\n")
    compiled = _python(call_later, tmp_path)
    assert "ARRAYOBJ False" in compiled and "QUAD [0.0, 4.0, 8.0]" in compiled
    assert "HITS 0" in compiled
    loaded = _python(call_later, tmp_path)
    assert "ARRAYOBJ False" in loaded and "QUAD [0.0, 4.0, 8.0]" in loaded
    assert "HITS 1" in loaded


def test_environments_are_rebuilt_as_numba_does_but_for_numba_modules_not_yet_imported():
    """A numba module not imported gives an environment holding only its name and the
    constants, kept under its symbol name; an imported module, or any other module, gives
    numba's environment of that module's globals."""
    import json

    from numba.core import environment

    absent = "numba.rankmap_test_absent_module"
    env = rebuild_environment(absent, [1.5, "c"], "_ZN08NumbaEnvRankmapTestAbsent")
    assert env.globals == {"__name__": absent} and list(env.consts) == [1.5, "c"]
    assert env.can_cache()
    assert environment.lookup_environment("_ZN08NumbaEnvRankmapTestAbsent") is env
    assert rebuild_environment(absent, [], "_ZN08NumbaEnvRankmapTestAbsent") is env
    imported = rebuild_environment("numba.core.environment", [], "_ZN08NumbaEnvRankmapTestIn")
    assert imported.globals is environment.__dict__
    other = rebuild_environment("json", [], "_ZN08NumbaEnvRankmapTestJson")
    assert other.globals is json.__dict__
    del env, imported, other


def test_a_default_compare_refreshes_numba_s_compiler_nowhere(tmp_path):
    """Once its kernels are cached, a compare loads every one of them without refreshing
    numba's compiler, and prints what it printed while they were being compiled."""
    run = ("from rankmap.cli import main\n"
           "main(['compare', '-m', 'torus:4x4x4:cores=2', '-p', 'stencil:8x4x4:box:periodic',"
           " '--mappings', 'TXYZ,ZYXT'])\n"
           "print('REFRESHES', len(REFRESHES))\n")
    warm = _python(run, tmp_path)
    again = _python(run, tmp_path)
    assert "REFRESHES 0" in again
    assert warm.split("REFRESHES")[0] == again.split("REFRESHES")[0]


def test_the_decorator_builds_a_cached_dispatcher_with_the_options_given():
    """``kernel`` with and without options gives numba's CPU dispatcher with the quick-load
    cache, nopython mode and the options passed (nogil, inline), and computes right."""
    def add(a, b):
        return a + b

    plain = kernel(add)
    inlined = kernel(nogil=True, inline="always")(add)
    for dispatcher in (plain, inlined):
        assert isinstance(dispatcher, KernelDispatcher)
        assert isinstance(dispatcher._cache, QuickLoadCache)
        assert dispatcher.targetoptions["nopython"] is True
    assert inlined.targetoptions["nogil"] is True and inlined.targetoptions["inline"] == "always"
    assert "nogil" not in plain.targetoptions
    assert plain(np.int64(2), np.int64(3)) == 5


def test_numba_s_disable_jit_leaves_the_python_function():
    """Under ``NUMBA_DISABLE_JIT=1`` the decorator returns the function itself."""
    code = ("from rankmap.kernels.jit import kernel\n"
            "def f(x):\n    return x + 1\n"
            "print('SAME', kernel(f) is f, kernel(nogil=True)(f) is f)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "NUMBA_DISABLE_JIT": "1"},
                          timeout=120)
    assert "SAME True True" in proc.stdout, proc.stderr


def test_object_files_name_the_symbols_numba_finds_in_their_bitcode(tmp_path, monkeypatch):
    """For every library cached for the probe kernels (an array, a sort with numba's
    helpers, a set, random numbers), the symbols the object file defines are exactly those
    numba records from the bitcode walk it no longer does; other bytes give None and are
    left to numba."""
    import pickle

    from llvmlite import binding as ll

    from rankmap.kernels.code_library import elf_defined_symbols, load_object_library

    (tmp_path / "jit_probe.py").write_text(_MODULE)
    cache = tmp_path / "cache"
    proc = subprocess.run([sys.executable, "-c", _CALLS + "print('SORTED', jit_probe"
                           ".sorted_copy(np.array([2, 1])).tolist())", str(tmp_path)],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NUMBA_CACHE_DIR": str(cache),
                               "PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    files = sorted(cache.rglob("*.nbc"))
    assert len(files) >= 4
    monkeypatch.syspath_prepend(str(tmp_path))     # the environments name jit_probe
    for path in files:
        payload = pickle.loads(path.read_bytes())
        _name, kind, (object_code, bitcode) = payload[0]
        assert kind == "object"
        module = ll.parse_bitcode(bitcode)
        walked = {g.name for gs in (module.functions, module.global_variables) for g in gs
                  if not g.is_declaration}
        assert elf_defined_symbols(object_code) == walked, path.name
        assert elf_defined_symbols(object_code[: len(object_code) // 3]) is None
    assert elf_defined_symbols(b"\x7fELF\x01\x01\x01" + bytes(100)) is None
    assert elf_defined_symbols(b"") is None
    assert load_object_library(None, ("name", "bitcode", b"")) is None
    assert load_object_library(None, ("name", "object", (b"MZ not elf", b""))) is None


def _object_file() -> bytes:
    """A small relocatable object file emitted by LLVM for this machine: two functions, a
    constant and a call to an undefined symbol."""
    from llvmlite import binding as ll

    ll.initialize_native_target()
    ll.initialize_native_asmprinter()
    module = ll.parse_assembly("""
        @table = constant [2 x i64] [i64 3, i64 5]
        declare i64 @elsewhere(i64)
        define i64 @twice(i64 %x) {
          %y = add i64 %x, %x
          %z = call i64 @elsewhere(i64 %y)
          ret i64 %z
        }
        define internal i64 @helper(i64 %x) {
          ret i64 %x
        }
        define i64 @first() {
          %p = getelementptr [2 x i64], [2 x i64]* @table, i64 0, i64 0
          %v = load i64, i64* %p
          %w = call i64 @helper(i64 %v)
          ret i64 %w
        }
        """)
    target = ll.Target.from_default_triple().create_target_machine(opt=0)
    return target.emit_object(module)


_OBJECT = _object_file()


def test_an_emitted_object_names_its_defined_symbols_only():
    """LLVM's own object file: the functions and the constant it defines are named, the
    undefined callee is not."""
    from rankmap.kernels.code_library import elf_defined_symbols

    names = elf_defined_symbols(_OBJECT)
    assert {"twice", "first", "table"} <= names and "elsewhere" not in names


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(_OBJECT) - 1), st.integers(0, 255)),
                max_size=12),
       st.integers(0, len(_OBJECT)))
@example(changes=[(0x28 + i, 0xFF) for i in range(8)], keep=len(_OBJECT))
def test_reading_symbols_of_damaged_objects_gives_names_or_none(changes, keep):
    """A real object file with bytes changed and cut short: the reader returns a set of names
    or None, and never raises (a damaged cache is left to numba). The explicit example puts
    the section table past any index (hypothesis found it: an OverflowError)."""
    from rankmap.kernels.code_library import elf_defined_symbols

    data = bytearray(_OBJECT)
    for at, value in changes:
        data[at] = value
    names = elf_defined_symbols(bytes(data[:keep]))
    assert names is None or (isinstance(names, set) and all(isinstance(n, str) for n in names))


def test_numba_s_cache_log_still_names_every_data_file_loaded(tmp_path):
    """Under ``NUMBA_DEBUG_CACHE=1`` a warm load prints numba's "data loaded" line for the
    kernel's data file, as numba's own loader does."""
    (tmp_path / "jit_probe.py").write_text(_MODULE)
    _python(_CALLS, tmp_path)
    proc = subprocess.run([sys.executable, "-c", _COUNT_REFRESHES + _CALLS, str(tmp_path)],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NUMBA_DEBUG_CACHE": "1"})
    assert proc.returncode == 0, proc.stderr
    loaded = [line for line in proc.stdout.splitlines() if line.startswith("[cache] data loaded")]
    assert len(loaded) == 3 and all("jit_probe." in line and ".nbc'" in line for line in loaded)
