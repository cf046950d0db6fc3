"""The allocation model: the nodes a job got, in scheduler order, and their cores.

Cores of the allocation are numbered node by node: core ``c`` is core ``c % cores_per_node``
of node ``nodes[c // cores_per_node]``. Parsing ``--nodes`` is :mod:`rankmap.allocation`'s
job (ids, ranges, files) and :mod:`rankmap.allocation_names`' (host names).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .errors import RankmapError
from .validate import as_int, first_repeated, id_array, show

if TYPE_CHECKING:   # annotations only: machines sit below this layer
    from .machines.base import Machine

__all__ = ["Allocation"]


@dataclass
class Allocation:
    """Allocated node ids in scheduler order, plus optional host names for them."""

    nodes: np.ndarray
    cores_per_node: int
    names: list[str] | None = None
    source: str = "whole machine"
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        self.nodes = id_array(self.nodes, "node ids of the allocation")
        self.cores_per_node = as_int(self.cores_per_node, "cores per node of the allocation",
                                     minimum=1)
        twice = first_repeated(self.nodes)
        if twice is not None:
            where = "" if self.source == "whole machine" else f" ({show(self.source)})"
            raise RankmapError(f"node {twice} is listed twice in the allocation{where}")
        if self.names is not None and len(self.names) != len(self.nodes):
            raise RankmapError(f"{len(self.names)} host names for {len(self.nodes)} nodes")
        if self.names is not None and len(set(self.names)) != len(self.names):
            # two nodes under one name: launcher files would merge them (x:4, two ranks on
            # one slot)
            seen: set = set()
            name = next(n for n in self.names if n in seen or seen.add(n))
            raise RankmapError(f"host name {show(str(name), 40)} is given to two nodes of the "
                               "allocation")

    def check_on(self, machine) -> None:
        """Refuse an allocation that is not of ``machine``: a node id outside it, or more
        cores a node than its nodes have (the placement would be for cores that do not
        exist).

        Parameters
        ----------
        machine : Machine
            The machine the allocation is used on.

        Raises
        ------
        RankmapError
            Naming the node or the core counts.
        """
        if self.n_nodes and (self.nodes.max() >= machine.n_nodes or self.nodes.min() < 0):
            bad = int(self.nodes.max() if self.nodes.max() >= machine.n_nodes
                      else self.nodes.min())
            raise RankmapError(f"allocation node {bad} is not a node of {machine.spec!r} "
                               f"(ids 0-{machine.n_nodes - 1})")
        if self.cores_per_node > machine.cores_per_node:
            raise RankmapError(f"the allocation has {self.cores_per_node} cores a node, the "
                               f"nodes of {machine.spec!r} have {machine.cores_per_node}")

    @property
    def n_nodes(self) -> int:
        """Number of allocated nodes."""
        return len(self.nodes)

    @property
    def n_cores(self) -> int:
        """Number of allocated cores."""
        return len(self.nodes) * self.cores_per_node

    def node_of_core(self, cores: np.ndarray) -> np.ndarray:
        """Machine node id of each allocation core index.

        Parameters
        ----------
        cores : numpy.ndarray
            Allocation core indices (0 .. n_cores - 1).

        Returns
        -------
        numpy.ndarray
            int64 machine node id of each core.
        """
        return self.nodes[np.asarray(cores) // self.cores_per_node]

    def slot_of_core(self, cores: np.ndarray) -> np.ndarray:
        """Core number within its node of each allocation core index.

        Parameters
        ----------
        cores : numpy.ndarray
            Allocation core indices.

        Returns
        -------
        numpy.ndarray
            int64 core within its node (0 .. cores_per_node - 1).
        """
        return np.asarray(cores) % self.cores_per_node

    def position_of_node(self, machine_nodes: np.ndarray) -> np.ndarray:
        """Position in the allocation of each machine node id (-1 if not allocated).

        Parameters
        ----------
        machine_nodes : numpy.ndarray
            Machine node ids.

        Returns
        -------
        numpy.ndarray
            int64 position of each node in ``nodes`` (its index), -1 where not allocated.
        """
        lookup = np.full(int(self.nodes.max()) + 1 if len(self.nodes) else 1, -1, dtype=np.int64)
        lookup[self.nodes] = np.arange(len(self.nodes))
        machine_nodes = np.asarray(machine_nodes, dtype=np.int64)
        inside = (machine_nodes >= 0) & (machine_nodes < len(lookup))
        out = np.full(machine_nodes.shape, -1, dtype=np.int64)
        out[inside] = lookup[machine_nodes[inside]]
        return out

    def host_names(self, machine: Machine) -> list[str]:
        """Host name of every allocated node (given names, else the machine's default).

        Parameters
        ----------
        machine : Machine
            The machine (its default names when the allocation was given by ids).

        Returns
        -------
        list of str
            Host name of every allocated node, in allocation order.
        """
        if self.names is not None:
            return list(self.names)
        return [machine.node_name(n) for n in self.nodes]

    def describe(self) -> dict:
        """JSON-ready summary.

        Returns
        -------
        dict
            ``nodes`` and ``cores`` (counts), ``source`` (how it was given) and
            ``threads_per_rank`` when ranks have several threads (JSON values).
        """
        d = {"nodes": int(self.n_nodes), "cores": int(self.n_cores), "source": self.source}
        if "threads" in self.extra:
            d["threads_per_rank"] = int(self.extra["threads"])
        return d

    def with_threads(self, threads: int) -> "Allocation":
        """The allocation seen by ranks of ``threads`` threads each: cores per node become
        ranks per node (``cores_per_node // threads``); threads must divide the cores.

        Parameters
        ----------
        threads : int
            Threads per rank (>= 1).

        Returns
        -------
        Allocation
            The same nodes with ``cores_per_node // threads`` ranks per node.

        Raises
        ------
        RankmapError
            ``threads`` does not divide the cores per node.
        """
        if threads < 1 or self.cores_per_node % threads:
            raise RankmapError(f"bad --threads {threads}: must divide the {self.cores_per_node} "
                               "cores per node")
        from dataclasses import replace
        return replace(self, cores_per_node=self.cores_per_node // threads,
                       extra={**self.extra, "threads": int(threads)})
