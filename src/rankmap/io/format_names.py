"""The launcher placement formats' names and one-line descriptions, with no heavy import.

``rankmap map --help`` and ``evaluate --help`` list them without loading numpy; the
writers and readers are :data:`rankmap.io.emit.EMITTERS`, built on these descriptions.
"""

from __future__ import annotations

from types import MappingProxyType

__all__ = ["FORMAT_DESCRIPTIONS"]

#: format name -> one-line description, in the order the help lists them (read-only)
FORMAT_DESCRIPTIONS = MappingProxyType({
    "bgp": "Blue Gene/L-P mapfile: one line per rank, 'x y z t' (e.g. '0 0 0 1')",
    "bgq": "Blue Gene/Q mapfile: one line per rank, 'a b c d e t' (e.g. '0 1 0 0 1 3')",
    "cray": "Cray MPICH_RANK_ORDER: ranks in core order, one line per node "
            "(e.g. '0,1,16,17')",
    "slurm": "SLURM_HOSTFILE for srun --distribution=arbitrary: host of rank r on line r "
             "(e.g. 'nid00012')",
    "openmpi": "Open MPI rankfile: 'rank N=host slot=S' (e.g. 'rank 5=nid00012 slot=1')",
    "mpich": "MPICH Hydra machinefile in rank order: 'host:count' (e.g. 'nid00012:4')",
    "hostfile": "one host per line in rank order, as SimGrid smpirun reads it "
                "(e.g. 'nid00012')",
})
