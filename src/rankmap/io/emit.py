"""Launcher placement formats, by name (``rankmap map --emit NAME``).

Each emitter turns a Placement into the text a launcher reads, and its reader turns such a
file back into a Placement (``rankmap evaluate --mapfile``). :data:`EMITTERS` lists them,
once, with a one-line description (:mod:`rankmap.io.format_names`) and the launcher command
that uses the file.
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
from .format_names import FORMAT_DESCRIPTIONS
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
    #: ``caveat(text)``: one line on what the written file cannot make the launcher do for
    #: this placement, or None
    caveat: Callable | None = None


#: every format, by name (read-only)
EMITTERS = MappingProxyType({e.name: e for e in (
    Emitter("bgp", format_bgp_mapfile,
            FORMAT_DESCRIPTIONS["bgp"],
            usage="mpirun{bg_mode} -mapfile {path} -np {n_ranks} ./app\n"
                  "# Blue Gene/P: or BG_MAPPING={path} in the job's environment",
            read=read_mapfile, check_machine=check_bgp_machine),
    Emitter("bgq", bgq.format_bgq_mapfile,
            FORMAT_DESCRIPTIONS["bgq"],
            usage="runjob --mapping {path} --np {n_ranks} --ranks-per-node {bgq_per_node} "
                  ": ./app", read=bgq.read_bgq_mapfile,
            check_machine=bgq.check_bgq_machine),
    Emitter("cray", cray.format_rank_order,
            FORMAT_DESCRIPTIONS["cray"],
            usage=cray.USAGE, read=cray.read_rank_order),
    Emitter("slurm", slurm.format_slurm_hostfile,
            FORMAT_DESCRIPTIONS["slurm"], usage=slurm.SRUN_USAGE, read=slurm.read_slurm_hostfile),
    Emitter("openmpi", openmpi.format_rankfile,
            FORMAT_DESCRIPTIONS["openmpi"],
            usage="mpirun --rankfile {path} -n {n_ranks} ./app\n"
                  "# Open MPI 5: mpirun --map-by rankfile:file={path} -n {n_ranks} ./app",
            read=openmpi.read_rankfile),
    Emitter("mpich", mpich.format_machinefile,
            FORMAT_DESCRIPTIONS["mpich"],
            usage="mpiexec.hydra -f {path} -n {n_ranks} ./app\n"
                  "# or mpirun.mpich; Open MPI's mpirun/mpiexec take --emit openmpi",
            read=mpich.read_machinefile,
            caveat=mpich.split_host_caveat),
    Emitter("hostfile", hostfile.format_hostfile,
            FORMAT_DESCRIPTIONS["hostfile"],
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


def _blue_gene_mode(cores: int, machine_spec: str) -> str:
    """mpirun's ``-mode`` for a mapfile whose t runs over ``cores`` slots: Blue Gene/L and /P
    start one rank a node unless told (CO / SMP); a mapfile's t > 0 needs VN (L: 2 a node;
    P: up to 4) or DUAL (P: 2). None past 4: the usage line's note says so."""
    if cores == 1 or cores > 4:     # (more than Blue Gene's nodes run: no mode holds them)
        return ""
    if cores == 2 and not machine_spec.strip().lower().startswith("bgl"):
        return " -mode DUAL"
    return " -mode VN"


def _bgq_ranks_per_node(cores: int) -> int:
    """runjob's ``--ranks-per-node`` for a mapfile whose t runs over ``cores`` slots: the
    smallest power of two holding them (runjob takes 1 to 64: the usage line's note says
    when a node has more)."""
    per_node = 1
    while per_node < cores:
        per_node *= 2
    return per_node


def usage_text(emitter: Emitter, path: str, mapping, allocation, machine_spec: str = "M",
               no_platform: str | None = None) -> str:
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
    no_platform : str, optional
        For ``hostfile``: why no SimGrid platform can be written for the machine (the
        platform writer's own check, made by the caller, a layer above); then that reason is
        printed instead of a ``rankmap simgrid platform`` command that would fail.

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
    if emitter.name != "hostfile":
        no_platform = None
    if no_platform is not None:     # the command would fail: say why instead
        usage = ("# no SimGrid platform can be written for this machine (" +
                 no_platform.replace("{", "{{").replace("}", "}}") +
                 "): give smpirun a platform of your own\n" +
                 usage.split("\n", 1)[1].replace("platform.xml", "PLATFORM.xml"))
    threads = int(allocation.extra.get("threads", 1))
    if threads > 1:                                 # the cores each rank was placed on
        usage = usage.replace("srun ", f"srun --cpus-per-task={threads} ")
    text = usage.format(path=shlex.quote(path), n_ranks=len(mapping.core_of_rank),
                        n_nodes=len(used), per_node=int(used.max()),
                        machine=machine_spec.replace("'", "'\\''"),
                        bg_mode=_blue_gene_mode(allocation.cores_per_node, machine_spec),
                        bgq_per_node=_bgq_ranks_per_node(allocation.cores_per_node))
    if emitter.name in ("bgp", "bgq") and allocation.cores_per_node > (
            4 if emitter.name == "bgp" else 64):
        text += (f"\n# note: Blue Gene/{'P' if emitter.name == 'bgp' else 'Q'} runs at most "
                 f"{4 if emitter.name == 'bgp' else 64} ranks a node; this machine has "
                 f"{allocation.cores_per_node} cores a node")
    if emitter.name == "hostfile" and no_platform is None and allocation.names is not None and \
            any(not str(n).startswith("node-") for n in allocation.names):
        text += ("\n(the file names the hosts as --names/--nodes gave them; the SimGrid "
                 "platform's hosts are node-<id>: for smpirun, write it without names)")
    return text
