"""Which machine node each MPI process runs on.

Every process reports a *label*: the ``RANKMAP_NODE`` environment variable when set (a node id
such as ``12`` or a host name, or a comma-separated list with one entry per process, entry p
for rank p: ``RANKMAP_NODE=0,0,1,1``; meant for tests and for sites whose host names do not
match the machine description), else its host name (``MPI.Get_processor_name()``). The labels are mapped
to machine node ids: an integer is the id itself; a name is matched against the machine's own
node names (``Machine.node_name``) and then against the ``--nodes`` parsers (host lists, site
names). Unknown labels make the reordering fall back to the launcher's order.
"""

from __future__ import annotations

import os
import socket

import numpy as np

from ..allocation import parse_allocation
from ..errors import RankmapError

NODE_ENV = "RANKMAP_NODE"
MACHINE_ENV = "RANKMAP_MACHINE"


def local_node_label(processor_name: str | None = None, rank: int = 0, size: int = 1) -> str:
    """This process's node label: $RANKMAP_NODE (entry ``rank`` of a list), else the host name.

    A list whose length is not ``size`` is an error.
    """
    label = os.environ.get(NODE_ENV, "").strip()
    if "," in label:
        items = [x.strip() for x in label.split(",")]
        if len(items) != size or not all(items):
            raise RankmapError(f"${NODE_ENV}={label!r} has {len(items)} entries, the "
                               f"communicator has {size} processes")
        return items[rank]
    if label:
        return label
    return (processor_name or socket.gethostname()).strip()


def resolve_node_labels(labels: list[str], machine) -> tuple[np.ndarray | None, str]:
    """Machine node id of every label, or (None, reason naming the first unknown label)."""
    unique = list(dict.fromkeys(labels))
    ids: dict[str, int] = {}
    names = None
    for label in unique:
        if label.isdigit():
            node = int(label)
            if node >= machine.n_nodes:
                return None, (f"node {label} (from ${NODE_ENV}) is outside the machine "
                              f"(ids 0-{machine.n_nodes - 1})")
            ids[label] = node
            continue
        if names is None:
            names = {machine.node_name(i): i for i in range(machine.n_nodes)}
        if label in names:
            ids[label] = names[label]
            continue
        try:
            alloc = parse_allocation(label, machine)
        except RankmapError:
            alloc = None
        if alloc is not None and alloc.n_nodes == 1 and alloc.source != "whole machine":
            ids[label] = int(alloc.nodes[0])
            continue
        return None, (f"host {label!r} is not a node of machine {machine.spec!r} (its nodes "
                      f"are named like {machine.node_name(0)!r})")
    return np.array([ids[lb] for lb in labels], dtype=np.int64), ""
