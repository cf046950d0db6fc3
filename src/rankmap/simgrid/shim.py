"""The source of the shim a user links into the ``smpicc`` build of a program for
``rankmap validate -- PROGRAM`` (``programs/shim.c``; written by ``rankmap simgrid shim``).

It replaces two SimGrid 3.32 functions inside the program: ``MPI_Pcontrol`` (SimGrid aborts
on it; ``record`` uses it to start phases) does nothing, and ``MPI_Dims_create`` gives the
dimensions Open MPI's or MPICH's does (SimGrid's makes 9x4 of 36 processes where both give
6x6, so a program that sizes its grid with it would send other messages in the simulator than
in its recording). C and Fortran entry points both.
"""

from __future__ import annotations

from ..errors import RankmapError
from .build import program_source

__all__ = ["SHIM_FLAVOURS", "shim_source"]

#: the MPI libraries whose ``MPI_Dims_create`` the shim can imitate
SHIM_FLAVOURS = ("openmpi", "mpich")

_DEFAULT = "#define RANKMAP_DIMS_LIKE_MPICH 0\n"


def shim_source(like: str = "openmpi") -> str:
    """The shim's C source, its ``MPI_Dims_create`` like the named MPI library's.

    Parameters
    ----------
    like : str
        ``openmpi`` (Open MPI 4.1's dimensions) or ``mpich`` (MPICH 4's): the library the
        program's recording was made with.

    Returns
    -------
    str
        C source to compile with ``smpicc`` beside the program.

    Raises
    ------
    RankmapError
        When ``like`` is not one of :data:`SHIM_FLAVOURS`.
    """
    if like not in SHIM_FLAVOURS:
        raise RankmapError(f"bad MPI library {like!r} for the shim's MPI_Dims_create: choose "
                           f"from {', '.join(SHIM_FLAVOURS)}")
    text = program_source("shim")
    if _DEFAULT not in text:
        raise RankmapError("the shipped shim.c lacks its RANKMAP_DIMS_LIKE_MPICH line "
                           "(internal error)")
    return text.replace(_DEFAULT, f"#define RANKMAP_DIMS_LIKE_MPICH {int(like == 'mpich')}\n")
