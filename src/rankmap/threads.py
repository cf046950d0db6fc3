"""One BLAS thread inside rankmap, the user's own setting in the programs it starts.

rankmap's numerical work is sparse and element-wise: its few dense products (a greedy
mapper's matrix-vector product, a partitioner's cut) are too small to gain from BLAS threads,
while OpenBLAS's idle threads spin after every call. On the 2-core reference box they burned
0.2 s of CPU in a small ``compare`` and 0.9 s in a 4,096-rank ``map --mapping auto``, with
no change in wall time or output. Parallel work is rankmap's own (``--jobs``, MPI), so the
command line asks for one BLAS thread before numpy and scipy load their libraries (the
libraries read the variables once, when they load). It does so whatever the environment
says: a multi-threaded BLAS splits its sums differently with each thread count, so the last
digits of a float metric (hop-bytes of fractional routes) would depend on the user's
``OPENBLAS_NUM_THREADS``; with one thread they depend only on the inputs. The programs rankmap
starts (the user's MPI program, the simulator) get the user's own values back through
:func:`child_environ`.
"""

from __future__ import annotations

import os

__all__ = ["BLAS_THREAD_VARIABLES", "child_environ", "limit_blas_threads"]

#: the variables OpenBLAS (pthreads or OpenMP builds), MKL and BLIS read for their thread count
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                         "BLIS_NUM_THREADS")

#: the user's value of each variable :func:`limit_blas_threads` set (None: it was unset)
_USER_VALUES: dict[str, str | None] = {}


def limit_blas_threads() -> None:
    """Ask for one BLAS thread in this process, before numpy and scipy are loaded.

    Sets each of :data:`BLAS_THREAD_VARIABLES` to ``1``, the user's own value included (it is
    kept for :func:`child_environ`); a library already loaded keeps its thread count.

    Returns
    -------
    None
    """
    for var in BLAS_THREAD_VARIABLES:
        if var not in _USER_VALUES:
            _USER_VALUES[var] = os.environ.get(var)
        os.environ[var] = "1"


def child_environ(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a program rankmap starts: this process's, with the user's own
    values of the variables :func:`limit_blas_threads` set (unset where the user had not set
    them), plus ``extra``.

    Parameters
    ----------
    extra : dict of str to str, optional
        Variables to add or override.

    Returns
    -------
    dict of str to str
        The environment.
    """
    env = dict(os.environ)
    for var, user in _USER_VALUES.items():
        if env.get(var) != "1":
            continue                 # changed since: the caller's own value stays
        if user is None:
            del env[var]
        else:
            env[var] = user
    env.update(extra or {})
    return env
