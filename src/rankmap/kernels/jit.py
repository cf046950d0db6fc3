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

The cache loads through two methods of numba's ``FunctionCache`` that are not public API
(``_load_overload`` and its I/O guard, there since numba 0.4x); ``tests/test_kernel_jit.py``
checks on the installed numba that kernels load without a refresh and compile after one.
"""

from __future__ import annotations

import logging

from numba.core import config
from numba.core.caching import FunctionCache
from numba.core.registry import CPUDispatcher
from numba.core.runtime import nrt

__all__ = ["KernelDispatcher", "LOGGER", "QuickLoadCache", "kernel"]

#: logs, at level INFO, every kernel the cache does not have, before numba compiles it
LOGGER = logging.getLogger("rankmap.kernels.jit")


class QuickLoadCache(FunctionCache):
    """numba's on-disk cache of a function, loading without refreshing the compiler.

    Parameters
    ----------
    py_func : callable
        The kernel's Python function.
    """

    def __init__(self, py_func):
        super().__init__(py_func)
        #: the kernel's module and qualified name, for the compile log
        self.kernel_name = f"{py_func.__module__}.{py_func.__qualname__}"

    def load_overload(self, sig, target_context):
        """Load the compiled kernel of one signature, or None when the cache has none.

        Parameters
        ----------
        sig : numba signature
            The argument types.
        target_context : numba.core.base.BaseContext
            numba's CPU target context; only its runtime is initialised here.

        Returns
        -------
        numba.core.compiler.CompileResult or None
            The kernel; None when the cache has no current entry (numba then compiles).
        """
        nrt.rtsys.initialize(target_context)
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
