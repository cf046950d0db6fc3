"""rankmap.kernels.runtime: numba's runtime is compiled once, then loaded as cached machine
code, and kernels allocate, free and compile through it as before."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from numba.core import config
from numba.core.registry import cpu_target

from rankmap.kernels import runtime

#: counts numba's compiles of its runtime module in a subprocess, then runs the probe
_PROBE = textwrap.dedent("""\
    import sys
    from numba.core.runtime import nrtdynmod
    COMPILES = []
    _create = nrtdynmod.create_nrt_module
    def counted(ctx):
        COMPILES.append(1)
        return _create(ctx)
    nrtdynmod.create_nrt_module = counted
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import numba
    from numba.core.runtime import nrt
    import runtime_probe
    out = runtime_probe.squares(np.arange(5.0))
    print('SQUARES', out.tolist())
    del out
    try:
        runtime_probe.squares(np.arange(-1.0, 1.0))
    except ValueError as exc:
        print('RAISED', exc)
    fresh = numba.njit(lambda n: np.arange(n)[::-1].copy())   # compiled here, not cached
    print('FRESH', fresh(4).tolist())
    del fresh
    stats = nrt.rtsys.get_allocation_stats()
    print('BALANCED', stats.alloc == stats.free and stats.mi_alloc == stats.mi_free)
    print('COMPILES', len(COMPILES))
    """)

#: a cached kernel that allocates its output and raises on a negative value
_MODULE = textwrap.dedent("""\
    import numpy as np
    from rankmap.kernels.jit import kernel

    @kernel
    def squares(values):
        out = np.empty(values.size)
        for i in range(values.size):
            if values[i] < 0:
                raise ValueError("a negative value")
            out[i] = values[i] * values[i]
        return out
    """)


def _run(folder, cache) -> str:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "NUMBA_NRT_STATS": "1"}
    proc = subprocess.run([sys.executable, "-c", _PROBE, str(folder)], capture_output=True,
                          text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _runtime_files(cache) -> list:
    return sorted(p for p in cache.rglob("rankmap-nrt-*.nbo"))


def test_the_runtime_is_compiled_once_then_loaded_and_kernels_work_through_it(tmp_path):
    """A cold process compiles the runtime and writes it; a warm one compiles none, and its
    kernels give the same results, raise, free every allocation, and a kernel compiled in
    that process links the loaded runtime."""
    (tmp_path / "runtime_probe.py").write_text(_MODULE)
    cache = tmp_path / "cache"
    cold = _run(tmp_path, cache)
    assert "COMPILES 1" in cold
    files = _runtime_files(cache)
    assert len(files) == 1
    warm = _run(tmp_path, cache)
    assert "COMPILES 0" in warm
    for out in (cold, warm):
        assert "SQUARES [0.0, 1.0, 4.0, 9.0, 16.0]" in out
        assert "RAISED a negative value" in out
        assert "FRESH [3, 2, 1, 0]" in out
        assert "BALANCED True" in out
    assert _runtime_files(cache) == files


def test_a_damaged_runtime_file_is_compiled_again_and_replaced(tmp_path):
    """A truncated file, or one that is not numba's serialised library, is never trusted:
    the runtime is compiled and the file written again."""
    (tmp_path / "runtime_probe.py").write_text(_MODULE)
    cache = tmp_path / "cache"
    _run(tmp_path, cache)
    path = _runtime_files(cache)[0]
    good = path.read_bytes()
    for damaged in (good[: len(good) // 2], b"not a pickle", __import__("pickle").dumps(("x",))):
        path.write_bytes(damaged)
        out = _run(tmp_path, cache)
        assert "COMPILES 1" in out and "SQUARES [0.0, 1.0, 4.0, 9.0, 16.0]" in out
        assert "BALANCED True" in out
        assert path.read_bytes() != damaged
        assert "COMPILES 0" in _run(tmp_path, cache)


def test_the_key_follows_the_code_generator_s_settings(monkeypatch):
    """The file's key is 16 hex digits that change with numba's optimisation level and its
    NRT debug switch (the CPU and versions are hashed alike)."""
    ctx = cpu_target.target_context
    key = runtime.runtime_cache_key(ctx)
    assert len(key) == 16 and int(key, 16) >= 0
    assert runtime.runtime_cache_key(ctx) == key
    monkeypatch.setattr(config, "OPT", 0 if config.OPT else 3)
    assert runtime.runtime_cache_key(ctx) != key
    monkeypatch.undo()
    monkeypatch.setattr(config, "DEBUG_NRT", not config.DEBUG_NRT)
    assert runtime.runtime_cache_key(ctx) != key


def test_without_a_cache_directory_the_runtime_has_no_file(monkeypatch):
    """Where numba finds no directory to cache in, there is no runtime file (it compiles)."""
    def no_locator(_function):
        raise RuntimeError("cannot cache function")

    monkeypatch.setattr(runtime, "FunctionCache", no_locator)
    assert runtime.runtime_cache_path(cpu_target.target_context) is None


def test_the_runtime_file_has_the_permissions_of_numba_s_cache_files(tmp_path):
    """Written through a file of the process's own name and renamed: readable by whoever
    may read numba's cache (the umask's mode, not a private temporary file's), and no
    temporary file is left."""
    (tmp_path / "runtime_probe.py").write_text(_MODULE)
    cache = tmp_path / "cache"
    _run(tmp_path, cache)
    path = _runtime_files(cache)[0]
    kernels = list(cache.rglob("*.nbi"))      # numba's own files, the probe kernel's index
    assert kernels
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask
    assert all(k.stat().st_mode & 0o777 == path.stat().st_mode & 0o777 for k in kernels)
    assert not list(path.parent.glob(".rankmap-nrt-*"))
