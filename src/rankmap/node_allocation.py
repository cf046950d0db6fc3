"""The allocation model: the nodes a job got, in scheduler order, and their cores.

Cores of the allocation are numbered node by node: core ``c`` is core ``c % cores_per_node``
of node ``nodes[c // cores_per_node]``. Parsing ``--nodes`` is :mod:`rankmap.allocation`'s
job (ids, ranges, files) and :mod:`rankmap.allocation_names`' (host names).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import RankmapError

__all__ = ["Allocation"]


@dataclass
class Allocation:
    """Allocated node ids in scheduler order, plus optional host names for them."""

    nodes: np.ndarray
    cores_per_node: int
    names: list[str] | None = None
    source: str = "whole machine"
    extra: dict = field(default_factory=dict)

    @property
    def n_nodes(self) -> int:
        """Number of allocated nodes."""
        return len(self.nodes)

    @property
    def n_cores(self) -> int:
        """Number of allocated cores."""
        return len(self.nodes) * self.cores_per_node

    def node_of_core(self, cores: np.ndarray) -> np.ndarray:
        """Machine node id of each allocation core index."""
        return self.nodes[np.asarray(cores) // self.cores_per_node]

    def slot_of_core(self, cores: np.ndarray) -> np.ndarray:
        """Core number within its node of each allocation core index."""
        return np.asarray(cores) % self.cores_per_node

    def position_of_node(self, machine_nodes: np.ndarray) -> np.ndarray:
        """Position in the allocation of each machine node id (-1 if not allocated)."""
        lookup = np.full(int(self.nodes.max()) + 1 if len(self.nodes) else 1, -1, dtype=np.int64)
        lookup[self.nodes] = np.arange(len(self.nodes))
        machine_nodes = np.asarray(machine_nodes, dtype=np.int64)
        inside = (machine_nodes >= 0) & (machine_nodes < len(lookup))
        out = np.full(machine_nodes.shape, -1, dtype=np.int64)
        out[inside] = lookup[machine_nodes[inside]]
        return out

    def host_names(self, machine: Machine) -> list[str]:
        """Host name of every allocated node (given names, else the machine's default)."""
        if self.names is not None:
            return list(self.names)
        return [machine.node_name(n) for n in self.nodes]

    def describe(self) -> dict:
        """JSON-ready summary."""
        d = {"nodes": int(self.n_nodes), "cores": int(self.n_cores), "source": self.source}
        if "threads" in self.extra:
            d["threads_per_rank"] = int(self.extra["threads"])
        return d

    def with_threads(self, threads: int) -> "Allocation":
        """The allocation seen by ranks of ``threads`` threads each: cores per node become
        ranks per node (``cores_per_node // threads``); threads must divide the cores."""
        if threads < 1 or self.cores_per_node % threads:
            raise RankmapError(f"bad --threads {threads}: must divide the {self.cores_per_node} "
                               "cores per node")
        from dataclasses import replace
        return replace(self, cores_per_node=self.cores_per_node // threads,
                       extra={**self.extra, "threads": int(threads)})
