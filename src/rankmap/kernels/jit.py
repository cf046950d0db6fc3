"""The decorator of every compiled kernel: numba's ``njit``, cached, loading without a compiler.

numba's cache refreshes the compiler before it loads a kernel: it imports numba's
implementation modules (strings, typed containers, random numbers, linear algebra, dates, ...)
and installs their typing and lowering registries. Compiling needs them; loading does not:
a cached kernel is machine code that calls numba's runtime (NRT) to allocate arrays. On the
131,072-rank ``compare`` of issue 11, where every kernel comes from the cache, that refresh
was 0.05-0.06 s of 0.70 s, and the first kernel load 0.11-0.13 s instead of 0.04-0.05 s.

:func:`kernel` builds numba's CPU dispatcher, as ``njit(cache=True)`` does, with a cache
(:class:`QuickLoadCache`) that initialises the runtime and loads. A kernel missing from the
cache, or stale, is compiled as numba always compiles: its compiler refreshes itself first
(``CompilerBase``), as does the typing of one kernel called from another. Such a compile is
logged (:data:`LOGGER`, level INFO) before it starts: the command line tells the user once
why the first run waits (:mod:`rankmap.cli.compile_notice`).

A kernel's cached data names the module of every numba function compiled into it, and
numba's loader imports each of them to rebuild the function's environment (the module's
globals, which only object-mode code reads). A kernel that allocates an array carries
numba's array implementations, so the first such load imported ``numba.np.arrayobj`` and the
string, hashing and sorting modules it pulls in, and the time model's kernel numba's math
and ufunc modules: 25-40 ms of every command's start. Kernels here are compiled in nopython
mode, so :class:`QuickLoadCacheFile` rebuilds the environment of a function of a numba module
not yet imported with the module's name as its only global (its constants are kept): the
name is what numba writes back when a kernel compiled later links it, and nothing reads the
rest. Any other module's environment is rebuilt as numba does.

numba's runtime is initialised from cached machine code (:mod:`rankmap.kernels.runtime`),
and a kernel's machine code is loaded without parsing its bitcode until a compile links it
(:class:`QuickLoadCacheImpl`, :mod:`rankmap.kernels.code_library`).

The cache loads through methods and attributes of numba's ``FunctionCache`` and its cache
file that are not public API (``_load_overload`` and its I/O guard, ``_cache_file``,
``_cache_path``, ``_impl``, ``_load_data``, ``_data_path``, there since numba 0.4x) and the
environments' memo, and builds numba's compile result as numba's own ``_rebuild`` does;
``tests/test_kernel_jit.py`` checks on the installed numba that kernels load without a
refresh and without those imports, and compile after them.
"""

from __future__ import annotations

import logging
import pickle
import sys

from numba.core import config, environment
from numba.core.caching import CompileResultCacheImpl, FunctionCache, IndexDataCacheFile
from numba.core.compiler import CompileResult
from numba.core.registry import CPUDispatcher

from .code_library import load_object_library
from .runtime import initialize_runtime

__all__ = ["KernelDispatcher", "LOGGER", "QuickLoadCache", "QuickLoadCacheFile",
           "QuickLoadCacheImpl", "kernel", "rebuild_environment"]

#: logs, at level INFO, every kernel the cache does not have, before numba compiles it
LOGGER = logging.getLogger("rankmap.kernels.jit")


def rebuild_environment(modname, consts, env_name):
    """A compiled function's environment, as numba rebuilds it, without importing numba's
    implementation modules.

    Parameters
    ----------
    modname : str or None
        The module the function was defined in.
    consts : list
        The environment's constant Python objects.
    env_name : str
        The environment's symbol name.

    Returns
    -------
    numba.core.environment.Environment
        The one already loaded under ``env_name``; for a function of a ``numba`` module not
        imported yet, an environment whose globals are only that module's ``__name__``;
        otherwise numba's (the module imported, its globals).
    """
    if modname is None or modname in sys.modules or not modname.startswith("numba."):
        return environment._rebuild_env(modname, consts, env_name)
    env = environment.lookup_environment(env_name)
    if env is None:
        env = environment.Environment({"__name__": modname})
        env.consts[:] = consts
        env.env_name = env_name
        environment.Environment._memo[env_name] = env
    return env


class _EnvironmentUnpickler(pickle.Unpickler):
    """Unpickles a cached kernel, its environments by :func:`rebuild_environment`."""

    def find_class(self, module, name):
        if module == "numba.core.environment" and name == "_rebuild_env":
            return rebuild_environment
        return super().find_class(module, name)


class QuickLoadCacheFile(IndexDataCacheFile):
    """numba's index and data files of a kernel's cache, read by :class:`_EnvironmentUnpickler`.

    Parameters
    ----------
    cache_path : str
        The cache's directory.
    filename_base : str
        The kernel's file name stem.
    source_stamp : tuple
        The source file's modification time and size.
    """

    def _load_data(self, name):
        path = self._data_path(name)
        with open(path, "rb") as fh:
            loaded = _EnvironmentUnpickler(fh).load()
        if config.DEBUG_CACHE:          # numba's own line under NUMBA_DEBUG_CACHE=1
            print(f"[cache] data loaded from {path!r}")
        return loaded


class QuickLoadCacheImpl(CompileResultCacheImpl):
    """numba's rebuilding of a cached compile result, its library loaded by
    :func:`rankmap.kernels.code_library.load_object_library`.

    Parameters
    ----------
    py_func : callable
        The kernel's Python function.
    """

    def rebuild(self, target_context, payload):
        """The compile result of a cached kernel.

        Parameters
        ----------
        target_context : numba.core.base.BaseContext
            numba's CPU target context.
        payload : tuple
            What numba cached: the serialised library, the function's descriptor, its
            environment, signature, object-mode flag, lifted loops, type annotation,
            initialisers to run again and the environments it references.

        Returns
        -------
        numba.core.compiler.CompileResult
            As numba rebuilds it; numba rebuilds it itself when the payload has
            initialisers to run or its library is not machine code this module reads.
        """
        if len(payload) != 9:
            return super().rebuild(target_context, payload)
        (libdata, fndesc, env, signature, objectmode, lifted, typeann, reload_init,
         referenced_envs) = payload
        library = None if reload_init else load_object_library(target_context.codegen(),
                                                               libdata)
        if library is None:
            return super().rebuild(target_context, payload)
        entry_point = target_context.get_executable(library, fndesc, env)
        result = CompileResult(target_context=target_context,
                               typing_context=target_context.typing_context,
                               library=library, environment=env, entry_point=entry_point,
                               fndesc=fndesc, type_annotation=typeann, signature=signature,
                               objectmode=objectmode, lifted=lifted, typing_error=None,
                               call_helper=None, metadata=None, reload_init=reload_init,
                               referenced_envs=referenced_envs)
        for referenced in referenced_envs:
            library.codegen.set_env(referenced.env_name, referenced)
        return result


class QuickLoadCache(FunctionCache):
    """numba's on-disk cache of a function, loading without refreshing the compiler.

    Parameters
    ----------
    py_func : callable
        The kernel's Python function.
    """

    _impl_class = QuickLoadCacheImpl

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = QuickLoadCacheFile(cache_path=self._cache_path,
                                              filename_base=self._impl.filename_base,
                                              source_stamp=self._impl.locator.get_source_stamp())
        #: the kernel's module and qualified name, for the compile log
        self.kernel_name = f"{py_func.__module__}.{py_func.__qualname__}"

    def load_overload(self, sig, target_context):
        """Load the compiled kernel of one signature, or None when the cache has none.

        Parameters
        ----------
        sig : numba signature
            The argument types.
        target_context : numba.core.base.BaseContext
            numba's CPU target context; only its runtime is initialised here
            (:func:`rankmap.kernels.runtime.initialize_runtime`).

        Returns
        -------
        numba.core.compiler.CompileResult or None
            The kernel; None when the cache has no current entry (numba then compiles).
        """
        initialize_runtime(target_context)
        loaded = None   # stays None when the guard swallows an I/O error: numba compiles
        with self._guard_against_spurious_io_errors():
            loaded = self._load_overload(sig, target_context)
        if loaded is None:
            LOGGER.info("compiling %s%s", self.kernel_name, sig)
        return loaded


class KernelDispatcher(CPUDispatcher):
    """numba's CPU dispatcher whose cache is a :class:`QuickLoadCache`."""

    def enable_caching(self):
        """Cache this kernel's compiled code on disk (numba's cache directory).

        Returns
        -------
        None
        """
        self._cache = QuickLoadCache(self.py_func)


def kernel(function=None, /, **options):
    """Compile ``function`` in nopython mode, cached on disk, as ``njit(cache=True)`` does.

    Parameters
    ----------
    function : callable, optional
        The Python function; omitted when options are given (``@kernel(inline="always")``).
    **options
        numba's target options (``nogil``, ``inline``, ``fastmath``, ...).

    Returns
    -------
    KernelDispatcher or callable
        The compiled kernel (the function itself under ``NUMBA_DISABLE_JIT``), or, without
        ``function``, the decorator.
    """
    def build(py_func):
        if config.DISABLE_JIT:
            return py_func
        dispatcher = KernelDispatcher(py_func=py_func, locals={},
                                      targetoptions={"nopython": True, "boundscheck": None,
                                                     **options})
        dispatcher.enable_caching()
        return dispatcher

    return build if function is None else build(function)
