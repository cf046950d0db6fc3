"""Allocations: the nodes a job got, in the order the scheduler lists them.

``--nodes`` accepts node ids and ranges (``0-15,32-47``) or a file with one id (or range)
per line (``#`` comments allowed). Default: the whole machine in node-id order. Cores of the
allocation are numbered node by node: core ``c`` is core ``c % cores_per_node`` of node
``nodes[c // cores_per_node]``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .errors import RankmapError
from .machines import Machine
from .validate import read_lines, show


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


def whole_machine(machine: Machine) -> Allocation:
    """Every node of the machine, in id order."""
    return Allocation(np.arange(machine.n_nodes, dtype=np.int64), machine.cores_per_node)


_RANGE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+))?\s*$")


def _parse_id_list(items: list[str], machine: Machine, where: str) -> list[int]:
    ids: list[int] = []
    for item in items:
        m = _RANGE.match(item)
        if not m:
            raise RankmapError(f"bad node {show(item.strip(), 40)} in {where}: expected an id "
                               "or a range like 32-47")
        lo_t, hi_t = m.group(1), m.group(2) if m.group(2) is not None else m.group(1)
        if max(len(lo_t), len(hi_t)) > 18:
            raise RankmapError(f"node {show(item.strip(), 40)} in {where} is outside the machine "
                               f"(ids 0-{machine.n_nodes - 1})")
        lo, hi = int(lo_t), int(hi_t)
        if hi < lo:
            raise RankmapError(f"bad node range {item.strip()!r} in {where}: end before start")
        if hi >= machine.n_nodes:
            raise RankmapError(f"node {hi} in {where} is outside the machine "
                               f"(ids 0-{machine.n_nodes - 1})")
        ids.extend(range(lo, hi + 1))
        if len(ids) > machine.n_nodes:
            raise RankmapError(f"{where} lists more nodes than the machine has "
                               f"({machine.n_nodes}): some are repeated")
    return ids


#: extra --nodes parsers: each takes (text, machine) and returns an Allocation or None
#: when the text is not of its form. Dragonfly names, host lists etc. register here.
NODE_PARSERS: list[Callable[[str, Machine], "Allocation | None"]] = []


def parse_allocation(text: str | None, machine: Machine) -> Allocation:
    """Build the allocation from ``--nodes`` (None: the whole machine)."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return whole_machine(machine)
    text = text.strip()
    for parser in NODE_PARSERS:
        alloc = parser(text, machine)
        if alloc is not None:
            return _checked(alloc, text)
    if os.path.isfile(text):
        lines = [ln.split("#", 1)[0].strip() for ln in read_lines(text, "node file")]
        items = [it for ln in lines for it in ln.replace(",", " ").split() if it]
        if not items:
            raise RankmapError(f"node file {show(text)} lists no nodes")
        ids = _parse_id_list(items, machine, f"node file {show(text)}")
        source = f"file {text}"
    else:
        if "/" in text or text.endswith((".txt", ".csv")):
            raise RankmapError(f"node file {show(text)} not found")
        ids = _parse_id_list(text.split(","), machine, "--nodes")
        source = text if len(text) < 60 else text[:57] + "..."
    alloc = Allocation(np.array(ids, dtype=np.int64), machine.cores_per_node, source=source)
    return _checked(alloc, text)


def _checked(alloc: Allocation, text: str) -> Allocation:
    nodes = alloc.nodes
    if len(nodes) == 0:
        raise RankmapError(f"--nodes {show(text)} selects no nodes")
    uniq, counts = np.unique(nodes, return_counts=True)
    if (counts > 1).any():
        raise RankmapError(f"node {int(uniq[counts > 1][0])} is listed twice in --nodes")
    return alloc


from . import allocation_names  # noqa: E402,F401  (host lists, Cray names, topology files)
