"""One BLAS thread inside rankmap, the user's own setting in the programs it starts.

rankmap's numerical work is sparse and element-wise: its few dense products (a greedy
mapper's matrix-vector product, a partitioner's cut) are too small to gain from BLAS threads,
while OpenBLAS's idle threads spin after every call. On the 2-core reference box they burned
0.2 s of CPU in a small ``compare`` and 0.9 s in a 4,096-rank ``map --mapping auto``, with
no change in wall time or output. Parallel work is rankmap's own (``--jobs``, MPI), so the
command line asks for one BLAS thread before numpy and scipy load their libraries (the
libraries read the variables once, when they load). The variables are set only where the
user has not set them, and the programs rankmap starts (the user's MPI program, the
simulator) get the user's environment back through :func:`child_environ`.
"""

from __future__ import annotations

import os

__all__ = ["BLAS_THREAD_VARIABLES", "child_environ", "limit_blas_threads"]

#: the variables OpenBLAS (pthreads or OpenMP builds), MKL and BLIS read for their thread count
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                         "BLIS_NUM_THREADS")

#: the variables :func:`limit_blas_threads` set (the user had not)
_SET_HERE: set[str] = set()


def limit_blas_threads() -> None:
    """Ask for one BLAS thread in this process, before numpy and scipy are loaded.

    Sets each of :data:`BLAS_THREAD_VARIABLES` the user has not set to ``1``; a library
    already loaded keeps its thread count.

    Returns
    -------
    None
    """
    for var in BLAS_THREAD_VARIABLES:
        if var not in os.environ:
            os.environ[var] = "1"
            _SET_HERE.add(var)


def child_environ(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a program rankmap starts: this process's, without the thread
    limits :func:`limit_blas_threads` added, plus ``extra``.

    Parameters
    ----------
    extra : dict of str to str, optional
        Variables to add or override.

    Returns
    -------
    dict of str to str
        The environment.
    """
    env = {k: v for k, v in os.environ.items()
           if not (k in _SET_HERE and v == "1")}
    env.update(extra or {})
    return env
