"""Reading a placement file of any launcher format (``rankmap evaluate --mapfile``).

The format is told by the file's first line (comments and blank lines skipped), or given:

* ``rank N=host slot=S``: an Open MPI rankfile (``openmpi``);
* fields separated by spaces, the first a number (``x y z t``): a Blue Gene mapfile
  (``bgp``; the BG/Q layout is the same with five coordinates);
* ranks and rank ranges separated by commas, or one of them (``0,1,16,17``, ``0-3``): Cray
  ``MPICH_RANK_ORDER`` (``cray``); a file of one number a line is also a host file of hosts
  named by numbers, so it is read as a rank order only when a comment names
  ``MPICH_RANK_REORDER_METHOD`` (as rankmap's do), and refused otherwise;
* ``host:count``: an MPICH Hydra machinefile (``mpich``);
* one host name: a host of every rank in rank order (``hostfile``; ``slurm``'s
  ``SLURM_HOSTFILE`` is the same).

Host-only formats (``slurm``, ``mpich``, ``hostfile``) fix the node of every rank, not its
core: ranks on a node take its cores in rank order.
"""

from __future__ import annotations

import re

from ..allocation import Allocation
from ..errors import RankmapError
from ..mappers.base import Placement
from ..validate import show
from .emit import EMITTERS
from .hostnames import read_lines

__all__ = ["detect_format", "read_placement"]

#: first-line shapes, in the order tried, and the format each tells
_SHAPES = (
    (re.compile(r"rank\s+\d+\s*=.*", re.ASCII), "openmpi"),
    # (the bgp reader then names a field that is no number)
    (re.compile(r"[-+]?\d+(?:\s+\S+)+", re.ASCII), "bgp"),
    (re.compile(r"\d+(?:-\d+)?(?:\s*,\s*\d+(?:-\d+)?)*", re.ASCII), "cray"),
    (re.compile(r"[^\s:,]+:\d+", re.ASCII), "mpich"),
    (re.compile(r"[^\s,=]+"), "hostfile"),
)


_ONE_NUMBER = re.compile(r"[0-9]+")


def _says_rank_order(path: str) -> bool:
    """Whether the file's comments name MPICH_RANK_REORDER_METHOD, as rankmap's Cray rank
    orders do (``# rankmap ...: ranks per node: 1 (MPICH_RANK_REORDER_METHOD=3)``)."""
    from ..validate import read_lines as read_text_lines
    return any("MPICH_RANK_REORDER_METHOD" in line.partition("#")[2]
               for line in read_text_lines(path, "placement file"))


def detect_format(path: str) -> str:
    """The launcher format of a placement file, told by its first line.

    Parameters
    ----------
    path : str
        The file.

    Returns
    -------
    str
        A key of :data:`rankmap.io.emit.EMITTERS` (``openmpi``, ``bgp``, ``cray``,
        ``mpich`` or ``hostfile``).

    Raises
    ------
    RankmapError
        The file is missing, places no ranks, or its first line has none of the shapes.
    """
    lines = read_lines(path)
    lineno, first = lines[0]
    for shape, name in _SHAPES:
        if shape.fullmatch(first):
            if name == "cray" and all(_ONE_NUMBER.fullmatch(t) for _, t in lines) \
                    and not _says_rank_order(path):
                raise RankmapError(
                    f"{path}: every line is one number, which is both a Cray rank order "
                    "(one rank a node) and a host file of hosts named by numbers, read "
                    "the other way round: name its format with --mapfile-format cray "
                    "or hostfile")
            return name
    raise RankmapError(f"{path}: line {lineno}: {show(first)} is not a line of a placement "
                       f"file rankmap knows; name its format with --mapfile-format "
                       f"({', '.join(EMITTERS)})")


def read_placement(path: str, machine, allocation: Allocation, n_ranks: int,
                   fmt: str | None = None) -> Placement:
    """Read a placement file written for a launcher (any :data:`EMITTERS` format).

    Parameters
    ----------
    path : str
        The file.
    machine : Machine
        The machine whose nodes it names.
    allocation : Allocation
        The allocation; every rank must land on one of its cores.
    n_ranks : int
        Ranks of the pattern (the file must place exactly these).
    fmt : str, optional
        The format (default: :func:`detect_format`).

    Returns
    -------
    Placement
        The validated placement.

    Raises
    ------
    RankmapError
        An unknown format, or the reader's error (naming the file and line).
    """
    name = detect_format(path) if fmt is None else fmt
    if name not in EMITTERS:
        raise RankmapError(f"unknown --mapfile-format {name!r}: choose from "
                           f"{', '.join(EMITTERS)}")
    return EMITTERS[name].read(path, machine, allocation, n_ranks)
