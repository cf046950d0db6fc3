"""Which machine node each MPI process runs on.

Every process reports a *label*: the ``RANKMAP_NODE`` environment variable when set (a node id
such as ``12`` or a host name, or a comma-separated list with one entry per process, entry p
for MPI_COMM_WORLD rank p: ``RANKMAP_NODE=0,0,1,1``; meant for tests and for sites whose host names do not
match the machine description), else its host name (``MPI.Get_processor_name()``). The labels are mapped
to machine node ids: an integer is the id itself; a name is matched against the machine's own
node names (``Machine.node_name``) and then against the ``--nodes`` parsers (host lists, site
names). Unknown labels make the reordering fall back to the launcher's order.
"""

from __future__ import annotations

import os
import socket

import numpy as np

from ..errors import RankmapError
from ..validate import is_digits
from .env_names import HOST_NODES_ENV, MACHINE_ENV, NODE_ENV

__all__ = ["NODE_ENV", "MACHINE_ENV", "HOST_NODES_ENV", "local_node_label", "host_nodes",
           "resolve_node_labels"]



def local_node_label(processor_name: str | None = None, rank: int = 0, size: int = 1) -> str:
    """This process's node label: $RANKMAP_NODE (entry ``rank`` of a list), else the host name.

    Parameters
    ----------
    processor_name : str, optional
        The MPI processor name; default the host name (``socket.gethostname()``).
    rank : int, optional
        ``MPI_COMM_WORLD`` rank of this process: picks its entry of a comma-separated
        ``$RANKMAP_NODE``.
    size : int, optional
        Processes in ``MPI_COMM_WORLD``; a comma-separated ``$RANKMAP_NODE`` must have this
        many entries.

    Returns
    -------
    str
        A node id (digits) or a host name.

    Raises
    ------
    RankmapError
        When a comma-separated ``$RANKMAP_NODE`` does not have ``size`` non-empty entries.
    """
    label = os.environ.get(NODE_ENV, "").strip()
    if "," in label:
        items = [x.strip() for x in label.split(",")]
        if len(items) != size:
            raise RankmapError(f"${NODE_ENV}={label!r} has {len(items)} entries, "
                               f"MPI_COMM_WORLD has {size} processes")
        if not items[rank]:
            raise RankmapError(f"${NODE_ENV}={label!r}: entry {rank} (for MPI_COMM_WORLD "
                               f"rank {rank}) is empty")
        return items[rank]
    if label:
        return label
    return (processor_name or socket.gethostname()).strip()


def _parse_names(names: list[str], machine) -> list[int] | None:
    """Node ids of ``names`` through the ``--nodes`` parsers, or None when they cannot."""
    from ..allocation import parse_allocation
    try:
        alloc = parse_allocation(",".join(names), machine)
    except RankmapError:
        return None
    if alloc.source == "whole machine" or alloc.n_nodes != len(names):
        return None
    if alloc.names is not None and list(alloc.names) != list(names):
        return None
    return [int(v) for v in alloc.nodes]


def host_nodes(text: str | None) -> dict[str, int]:
    """The host-to-node table of ``$RANKMAP_HOST_NODES`` (``host=id,host=id``).

    Parameters
    ----------
    text : str or None
        The variable's value (None or empty: no table).

    Returns
    -------
    dict of str to int
        Machine node id of each host named.

    Raises
    ------
    RankmapError
        When an entry is not ``host=id`` with a non-negative integer id.
    """
    table: dict[str, int] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        host, sep, node = item.strip().rpartition("=")
        if not sep or not host.strip() or not is_digits(node.strip()) or len(node) > 18:
            raise RankmapError(f"${HOST_NODES_ENV}: bad entry {item.strip()!r} (expected "
                               "host=node id)")
        table[host.strip()] = int(node)
    return table


def resolve_node_labels(labels: list[str], machine,
                        hosts: dict[str, int] | None = None) -> tuple[np.ndarray | None, str]:
    """Machine node id of every label, or (None, reason naming the first unknown label).

    Parameters
    ----------
    labels : list of str
        Node label of every process (from :func:`local_node_label`).
    machine : Machine
        The machine whose node ids and names the labels are matched against.
    hosts : dict of str to int, optional
        Node ids of host names (:func:`host_nodes`), tried first: a label found there is that
        node, else a label whose part before the first dot is a name's part before it.

    Returns
    -------
    nodes : numpy.ndarray of int64 or None
        Machine node id of every process, or None when a label is unknown.
    reason : str
        Empty on success, else why the labels could not be resolved.
    """
    if hosts:
        # a name or its part before the first dot, on either side: a PBS node file's
        # n0.ib.cluster is MPI_Get_processor_name's n0, and the other way round
        short = {h.split(".")[0]: n for h, n in hosts.items()}
        labels = [str(hosts[lb]) if lb in hosts else
                  str(short[lb.split(".")[0]]) if lb.split(".")[0] in short else lb
                  for lb in labels]
    unique = list(dict.fromkeys(labels))
    ids: dict[str, int] = {}
    names = None
    rest = []
    for label in unique:
        if is_digits(label):
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
        else:
            rest.append(label)
    if rest:
        parsed = _parse_names(rest, machine)  # all at once: site names, Cray nids, ...
        if parsed is None:  # find the first name no parser knows
            for label in rest:
                one = _parse_names([label], machine)
                if one is None:
                    return None, (f"host {label!r} is not a node of machine {machine.spec!r} "
                                  f"(its nodes are named like {machine.node_name(0)!r})")
            return None, f"hosts {', '.join(rest[:3])}... do not map to distinct machine nodes"
        ids.update(zip(rest, parsed))
    return np.array([ids[lb] for lb in labels], dtype=np.int64), ""
