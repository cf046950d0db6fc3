"""Answer numba's BLAS probe without loading scipy.linalg (0.16 s where nothing else needs it).

numba's compiler, before its first compile in a process, imports every one of its
implementation modules (a kernel loaded from the cache imports none of them:
:mod:`rankmap.kernels.jit`). One of them, ``numba.np.arraymath``, asks once whether ``np.dot`` in
compiled code may call BLAS: it imports ``scipy.linalg.cython_blas``, and with it all of
``scipy.linalg`` and scipy's array-API layer (which copies numpy's namespace, importing
``numpy.f2py``, ``numpy.testing`` and ``numpy.ma``). No rankmap kernel calls ``np.dot`` or
``numpy.linalg``, and nothing else on the default path needs scipy (``scipy.sparse`` loads
only where a matrix is built): on the 131,072-rank ``compare`` of issue 11, the probe and
``scipy.sparse`` were 0.09 of 0.83 s, and either alone loads the array-API layer.

:func:`decline_blas_probe` puts a finder at the head of :data:`sys.meta_path` that refuses
``scipy.linalg`` to that one probe (``_check_blas`` in ``numba.np.arraymath``, seen on the
call stack) and then removes itself. numba then records that BLAS is absent and compiles
``np.dot`` of floats as a plain loop, should a kernel ever use it; its linear-algebra
functions (``np.linalg.*``) still load scipy when they are compiled, as any other import of
``scipy.linalg`` does, before or after.
"""

from __future__ import annotations

import sys

__all__ = ["BlasProbeFinder", "PROBE_FUNCTION", "PROBE_MODULE", "REFUSED", "decline_blas_probe"]

#: the module refused to the probe (``scipy`` itself is loaded by numba's own import)
REFUSED = "scipy.linalg"

#: the module and function of numba's probe
PROBE_MODULE = "numba.np.arraymath"
PROBE_FUNCTION = "_check_blas"


class BlasProbeFinder:
    """A meta-path finder that refuses ``scipy.linalg`` to numba's BLAS probe only, once.

    A finder of :data:`sys.meta_path` only needs ``find_spec`` (importing
    :mod:`importlib.abc` for its base class would cost every command 0.02 s)."""

    def find_spec(self, fullname, path=None, target=None):
        """Refuse ``scipy.linalg`` when numba's probe imports it; find nothing otherwise.

        Parameters
        ----------
        fullname : str
            The module being imported.
        path, target
            As :meth:`importlib.abc.MetaPathFinder.find_spec` (unused).

        Returns
        -------
        None
            The other finders decide, for every other import.

        Raises
        ------
        ImportError
            For ``scipy.linalg`` imported by numba's probe (the finder is then removed).
        """
        if fullname != REFUSED or not _called_by_probe():
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        raise ImportError(f"rankmap: {fullname} is not loaded for numba's BLAS probe")


def _called_by_probe() -> bool:
    """Whether numba's BLAS probe is on the call stack."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == PROBE_FUNCTION and frame.f_globals.get("__name__") == PROBE_MODULE:
            return True
        frame = frame.f_back
    return False


def decline_blas_probe() -> BlasProbeFinder | None:
    """Install a :class:`BlasProbeFinder`, unless numba's probe has already run.

    Returns
    -------
    BlasProbeFinder or None
        The finder installed (it removes itself after the probe), or None when numba's
        implementation module, ``scipy.linalg`` or a finder is already loaded or installed.
    """
    if PROBE_MODULE in sys.modules or REFUSED in sys.modules:
        return None
    if any(isinstance(f, BlasProbeFinder) for f in sys.meta_path):
        return None
    finder = BlasProbeFinder()
    sys.meta_path.insert(0, finder)
    return finder
