"""numba's runtime (NRT) loaded as cached machine code instead of compiled in every process.

Compiled kernels allocate and free arrays through numba's runtime: a few C helpers, and a
small module of LLVM functions (reference counts, atomic adds) that numba builds from its IR
and compiles with LLVM once per process, before the first kernel can run. That compile took
17-25 ms of every command's start on the 2-core reference box, a quarter of the kernel loads of
the default 131,072-rank ``compare`` (issue 11).

:func:`initialize_runtime` does what numba's ``rtsys.initialize`` does (register the C
helpers' symbols, the statistics switch, the compiled module), taking the module's machine
code from a file next to the kernels' cache when one was written for this numba, llvmlite,
LLVM, CPU and configuration (:func:`runtime_cache_key`), and compiling and writing it
otherwise. The machine code is numba's own serialised library (object code and the bitcode
it links from), the form numba caches kernels in. A file that is missing, unreadable or not
that form is compiled again; a cache directory that cannot be written is left alone.

It sets two attributes of numba's runtime object that are not public API (``_library`` and
``_init``, there since numba 0.4x); on a numba without them it calls ``rtsys.initialize``.
``tests/test_kernel_runtime.py`` checks on the installed numba that a warm process compiles no
runtime and that kernels allocate, free and compile as before.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys

import llvmlite
from llvmlite import binding as ll
import numba
from numba.core import config
from numba.core.caching import FunctionCache
from numba.core.compiler_lock import global_compiler_lock
from numba.core.runtime import _nrt_python, nrt, nrtdynmod

__all__ = ["initialize_runtime", "runtime_cache_key", "runtime_cache_path", "RUNTIME_FILE"]

#: the cached runtime's file name; {key} is :func:`runtime_cache_key`
RUNTIME_FILE = "rankmap-nrt-{key}.nbo"

#: numba's runtime object exposes what this module sets (else numba initialises it)
_KNOWN_RUNTIME = (isinstance(getattr(nrt.rtsys, "_init", None), bool)
                  and isinstance(getattr(type(nrt.rtsys), "library", None), property)
                  and hasattr(nrtdynmod, "create_nrt_module")
                  and hasattr(_nrt_python, "c_helpers"))


def _anchor():
    """A function of this module: numba's cache locator finds the directory from it."""


def runtime_cache_key(target_context) -> str:
    """What the runtime's machine code depends on, hashed.

    Parameters
    ----------
    target_context : numba.core.base.BaseContext
        numba's CPU target context.

    Returns
    -------
    str
        16 hex digits of a hash of the numba, llvmlite and LLVM versions, the code generator's
        target triple, CPU name and features, and numba's optimisation level and NRT debug
        switch.
    """
    parts = (numba.__version__, llvmlite.__version__, ll.llvm_version_info,
             target_context.codegen().magic_tuple(), config.OPT, config.DEBUG_NRT,
             sys.byteorder)
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def runtime_cache_path(target_context) -> str | None:
    """The file the runtime's machine code is cached in, or None without a cache directory.

    Parameters
    ----------
    target_context : numba.core.base.BaseContext
        numba's CPU target context.

    Returns
    -------
    str or None
        In the directory numba caches this package's kernels in (``NUMBA_CACHE_DIR`` when set,
        else ``__pycache__`` next to the source, or a user-wide cache when that is read-only);
        None when numba finds no usable directory.
    """
    try:
        folder = FunctionCache(_anchor).cache_path
    except RuntimeError:    # numba: no locator can cache here
        return None
    return os.path.join(folder, RUNTIME_FILE.format(key=runtime_cache_key(target_context)))


def _load_library(codegen, path: str):
    """The runtime library unserialised from ``path``, or None when it cannot be."""
    try:
        with open(path, "rb") as fh:
            state = pickle.load(fh)
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError,
            ImportError, IndexError, MemoryError):
        return None
    if not (isinstance(state, tuple) and len(state) == 3 and isinstance(state[0], str)
            and state[1] == "object" and isinstance(state[2], tuple) and len(state[2]) == 2
            and all(isinstance(part, bytes) for part in state[2])):
        return None
    try:
        return codegen.unserialize_library(state)
    except (RuntimeError, ValueError):      # llvmlite: bitcode or object code it cannot read
        return None


def _save_library(library, path: str) -> None:
    """Write the library's serialised form to ``path`` atomically (through a file of this
    process's own name, with the permissions the user's umask gives, as numba's cache files
    have); nothing when it cannot."""
    state = library.serialize_using_object_code()
    tmp = os.path.join(os.path.dirname(path), f".rankmap-nrt-{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            pickle.dump(state, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _compile_library(target_context):
    """numba's runtime module compiled, its machine code kept for serialising."""
    ir_module, library = nrtdynmod.create_nrt_module(target_context)
    library.enable_object_caching()
    library.add_ir_module(ir_module)
    library.finalize()
    return library


@global_compiler_lock
def initialize_runtime(target_context) -> None:
    """Initialise numba's runtime once per process, from cached machine code when there is.

    Parameters
    ----------
    target_context : numba.core.base.BaseContext
        numba's CPU target context.

    Returns
    -------
    None
    """
    runtime = nrt.rtsys
    if not _KNOWN_RUNTIME:
        runtime.initialize(target_context)
        return
    if runtime._init:
        return
    if config.NRT_STATS:
        _nrt_python.memsys_enable_stats()
    for name, address in _nrt_python.c_helpers.items():
        ll.add_symbol(name if name.startswith("_") else "NRT_" + name, address)
    path = runtime_cache_path(target_context)
    library = None if path is None else _load_library(target_context.codegen(), path)
    if library is None:
        library = _compile_library(target_context)
        if path is not None:
            _save_library(library, path)
    runtime._library = library
    runtime._init = True
