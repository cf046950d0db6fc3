"""Launcher placement formats, by name (``rankmap map --emit NAME``).

Each emitter turns a Placement into the text a launcher reads, and its reader turns such a
file back into a Placement (``rankmap evaluate --mapfile``). :data:`EMITTERS` lists them,
once, with a one-line description and the launcher command that uses the file.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable

import numpy as np

from ..errors import RankmapError
from . import bgq, cray, hostfile, mpich, openmpi, slurm
from .bgmap import check_bgp_machine, format_bgp_mapfile, read_mapfile

__all__ = ["Emitter", "EMITTERS", "get_emitter", "usage_text"]


@dataclass(frozen=True)
class Emitter:
    """A placement file format: ``write(mapping, machine, allocation) -> text`` and
    ``read(path, machine, allocation, n_ranks) -> Placement``."""

    name: str
    write: Callable
    description: str
    #: printed after writing, e.g. the launcher options that use the file ({path} substituted)
    usage: str = ""
    #: reads such a file back (errors name the file and line)
    read: Callable | None = None
    #: ``check_machine(machine)`` refuses a machine the format cannot describe, before work
    check_machine: Callable | None = None


#: every format, by name (read-only)
EMITTERS = MappingProxyType({e.name: e for e in (
    Emitter("bgp", format_bgp_mapfile,
            "Blue Gene/L-P mapfile: one line per rank, 'x y z t' (e.g. '0 0 0 1')",
            usage="mpirun -mapfile {path} ...   (Blue Gene/P: or BG_MAPPING={path})",
            read=read_mapfile, check_machine=check_bgp_machine),
    Emitter("bgq", bgq.format_bgq_mapfile,
            "Blue Gene/Q mapfile: one line per rank, 'a b c d e t' (e.g. '0 1 0 0 1 3')",
            usage="runjob --mapping {path} --np {n_ranks} : ./app", read=bgq.read_bgq_mapfile,
            check_machine=bgq.check_bgq_machine),
    Emitter("cray", cray.format_rank_order,
            "Cray MPICH_RANK_ORDER: ranks in core order, one line per node (e.g. '0,1,16,17')",
            usage=cray.USAGE, read=cray.read_rank_order),
    Emitter("slurm", slurm.format_slurm_hostfile,
            "SLURM_HOSTFILE for srun --distribution=arbitrary: host of rank r on line r "
            "(e.g. 'nid00012')", usage=slurm.SRUN_USAGE, read=slurm.read_slurm_hostfile),
    Emitter("openmpi", openmpi.format_rankfile,
            "Open MPI rankfile: 'rank N=host slot=S' (e.g. 'rank 5=nid00012 slot=1')",
            usage="mpirun --rankfile {path} -n {n_ranks} ./app   "
                  "(Open MPI 5: --map-by rankfile:file={path})", read=openmpi.read_rankfile),
    Emitter("mpich", mpich.format_machinefile,
            "MPICH Hydra machinefile in rank order: 'host:count' (e.g. 'nid00012:4')",
            usage="mpiexec.hydra -f {path} -n {n_ranks} ./app   (or mpirun.mpich; "
                  "Open MPI's mpiexec takes the openmpi format)", read=mpich.read_machinefile),
    Emitter("hostfile", hostfile.format_hostfile,
            "one host per line in rank order, as SimGrid smpirun reads it (e.g. 'nid00012')",
            usage="rankmap simgrid platform --machine '{machine}' -o platform.xml\n"
                  "smpirun -hostfile {path} -platform platform.xml -np {n_ranks} ./app",
            read=hostfile.read_hostfile),
)})


def get_emitter(name: str) -> Emitter:
    """The format called ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`EMITTERS` (``bgp``, ``slurm``, ...).

    Returns
    -------
    Emitter
        The format.

    Raises
    ------
    RankmapError
        An unknown name (the message lists the known ones).
    """
    if name not in EMITTERS:
        raise RankmapError(f"unknown --emit format {name!r}: choose from {', '.join(EMITTERS)}")
    return EMITTERS[name]


def usage_text(emitter: Emitter, path: str, mapping, allocation, machine_spec: str = "M") -> str:
    """The emitter's usage line, filled in.

    Parameters
    ----------
    emitter : Emitter
        The format written.
    path : str
        The file written (``{path}``).
    mapping : Placement
        The placement written (``{n_ranks}``; ``{n_nodes}`` and ``{per_node}`` count the
        nodes it uses and the most ranks on one of them).
    allocation : Allocation
        The allocation the placement's cores refer to.
    machine_spec : str
        The machine spec (``{machine}``).

    Returns
    -------
    str
        ``emitter.usage`` with its fields substituted.
    """
    counts = np.bincount(mapping.core_of_rank // allocation.cores_per_node)
    used = counts[counts > 0]
    usage = emitter.usage
    if emitter.name == "cray" and os.path.abspath(path) == os.path.abspath("MPICH_RANK_ORDER"):
        usage = usage.split(" && ", 1)[1]          # already where Cray MPICH reads it
    threads = int(allocation.extra.get("threads", 1))
    if threads > 1:                                 # the cores each rank was placed on
        usage = usage.replace("srun ", f"srun --cpus-per-task={threads} ")
    text = usage.format(path=shlex.quote(path), n_ranks=len(mapping.core_of_rank),
                        n_nodes=len(used), per_node=int(used.max()),
                        machine=machine_spec.replace("'", "'\\''"))
    if emitter.name == "hostfile" and allocation.names is not None and \
            any(not str(n).startswith("node-") for n in allocation.names):
        text += ("\n(the file names the hosts as --names/--nodes gave them; the SimGrid "
                 "platform's hosts are node-<id>: for smpirun, write it without names)")
    return text
