"""Slurm arbitrary distribution: SLURM_HOSTFILE with one host per rank, in rank order.

``srun --distribution=arbitrary`` starts rank r on the host named on line r of the file named
by SLURM_HOSTFILE. Example line: ``nid00012``. Slurm picks the core within the node itself.
"""

from __future__ import annotations

from ..allocation import Allocation
from ..mappers.base import Placement
from .hostfile import host_lines, read_hostfile

__all__ = ["SRUN_USAGE", "format_slurm_hostfile", "read_slurm_hostfile"]

SRUN_USAGE = "SLURM_HOSTFILE={path} srun --distribution=arbitrary -n {n_ranks} ./app"


def format_slurm_hostfile(mapping: Placement, machine, allocation: Allocation) -> str:
    """SLURM_HOSTFILE text: one host per line, line r = host of rank r.

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
        The file's text, one line per rank (its host name).
    """
    return host_lines(mapping, machine, allocation, fmt="slurm")


def read_slurm_hostfile(path: str, machine, allocation: Allocation,
                        n_ranks: int | None = None) -> Placement:
    """Read a SLURM_HOSTFILE back into a Placement.

    Parameters
    ----------
    path : str
        The file.
    machine : Machine
        The machine whose nodes the file names.
    allocation : Allocation
        The allocation; every rank must land on one of its cores.
    n_ranks : int, optional
        Ranks expected (default: one per line).

    Returns
    -------
    Placement
        Rank r on the next free core of the host on line r.
    """
    return read_hostfile(path, machine, allocation, n_ranks, what="Slurm hostfile")
