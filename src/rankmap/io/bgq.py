"""Blue Gene/Q mapfile: one line per rank, ``A B C D E T`` (five torus coordinates, then core).

``runjob --mapping FILE`` reads it. Example line: ``0 1 0 0 1 3``. Same layout as the BG/P
mapfile, so the reader is :func:`rankmap.io.bgmap.read_mapfile`; the machine must be 5-D.
"""

from __future__ import annotations

from ..allocation import Allocation
from ..errors import RankmapError
from ..mappers.base import Placement
from .bgmap import format_mapfile, read_mapfile

__all__ = ["check_bgq_machine", "format_bgq_mapfile", "read_bgq_mapfile"]


def check_bgq_machine(machine) -> None:
    """Refuse a machine the bgq format cannot describe (before any search is run for it).

    Parameters
    ----------
    machine : Machine
        The machine: it must be a 5-D torus.

    Raises
    ------
    RankmapError
        On any other machine.
    """
    if len(machine.letters) != 5:
        raise RankmapError(f"the bgq format needs a 5-D torus (A B C D E), machine "
                           f"{machine.spec!r} has {len(machine.letters)} dimensions")


def format_bgq_mapfile(mapping: Placement, machine, allocation: Allocation) -> str:
    """BG/Q mapfile text: ``a b c d e t`` per rank.

    Parameters
    ----------
    mapping : Placement
        The placement written.
    machine : Machine
        The machine (coordinates, default host names).
    allocation : Allocation
        The allocation the placement refers to.

    Returns
    -------
    str
        The file's text, one line per rank (``a b c d e t``).
    """
    check_bgq_machine(machine)
    return format_mapfile(mapping, machine, allocation)


def read_bgq_mapfile(path: str, machine, allocation: Allocation, n_ranks: int) -> Placement:
    """Read a BG/Q mapfile into a Placement.

    Parameters
    ----------
    path : str
        The file.
    machine : Machine
        The machine whose nodes the file names.
    allocation : Allocation
        The allocation; every rank must land on one of its cores.
    n_ranks : int
        Ranks the pattern has.

    Returns
    -------
    Placement
        The validated placement.
    """
    check_bgq_machine(machine)
    return read_mapfile(path, machine, allocation, n_ranks)
