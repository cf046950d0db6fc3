"""Translation symmetry of a phase on a torus: max-min sharing on one cell's flows.

On a torus that wraps in every dimension, translating every node by the same vector maps
links onto links of the same direction and dimension, and dimension-order and minimal
adaptive routes onto the routes of the translated flows (their choices depend only on the
offset between the ends). A phase is invariant under a translation when every node sends
the same flows as the node it is moved to: the same multiset of (offset to the
destination, size, multiplicity). The translations by multiples of ``period[d]`` along
each dimension d then split the nodes into translates of one *cell* (the nodes with
coordinates below the periods), and the max-min fair sharing of the phase, with its
re-sharing each time flows finish, is invariant too: progressive filling raises equivalent
flows together, and the links of one class (the cell node they translate to, dimension and
sign) carry the same load and saturate at the same level. So the phase is solved on the
flows of the cell's nodes, with one resource per link class: the weight of a flow on a
class is the sum of its route's fractions on the links of that class (each link of the
class is crossed by exactly one translate of each such route entry), with one link's
capacity; the NIC ports likewise. Every flow finishes when its representative does, exact
up to the order in which floating-point sums are taken (relative differences of about
1e-15).

This is the issue's "group identical flow shapes across the whole phase". A rank order of a
periodic stencil on a torus is usually invariant with a small cell: the 131,072-rank
26-neighbour stencil in TXYZ order on a 32x32x32 torus has 884,736 node-level flow groups
and 14.7 M route entries (373 M under adaptive routing), and a cell of a few nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.torus import fold_resource_classes, torus_offsets
from ..machines import GridMachine
from ..routing.torus import DOR, Adaptive

__all__ = ["MIN_GAIN", "TranslationClasses", "translation_classes", "class_incidence"]


#: below this many flow groups per representative one the symmetry is not worth finding
MIN_GAIN = 4


@dataclass(frozen=True)
class TranslationClasses:
    """The flows of one cell of nodes standing for a translation-invariant phase.

    Attributes
    ----------
    rows : numpy.ndarray of int64
        Indices (into the phase's flow groups) of the representative flows: those sent by
        the nodes of the cell (coordinates below ``period`` in every dimension).
    class_of : numpy.ndarray of int64
        Representative (0 .. len(rows)-1) of every flow group.
    period : numpy.ndarray of int64
        The translation period in every dimension (the cell's side; it divides the torus's).
    """

    rows: np.ndarray
    class_of: np.ndarray
    period: np.ndarray


def translation_classes(machine, router, src, dst, nbytes, mult) -> TranslationClasses | None:
    """The translation classes of a phase's inter-node flow groups, or None when the phase
    has no translation symmetry worth using (or the machine or routing has none).

    The phase is invariant under a translation by ``period[d]`` along every dimension d
    (the smallest such periods, found from a hash of every node's flows and then checked
    exactly): every node sends the same (offset, size, multiplicity) flow groups as the
    node of the cell at its coordinates modulo the periods, no two of them to one node.

    Parameters
    ----------
    machine : Machine
        The network: a torus wrapping in every dimension.
    router : Router
        The phase's router: dimension-order or minimal adaptive.
    src, dst : numpy.ndarray of int
        Source and destination node of every flow group (``src != dst``), sorted by source.
    nbytes : numpy.ndarray of float64
        Size of every group's flows, bytes.
    mult : numpy.ndarray of float64
        Number of flows in every group.

    Returns
    -------
    TranslationClasses or None
        The cell's groups and the class of every group; None when there is no symmetry,
        when the cell holds more than 1 / :data:`MIN_GAIN` of the groups, or when links of
        one class differ in bandwidth.
    """
    if not isinstance(machine, GridMachine) or not bool(np.all(machine.wrap)) \
            or type(router) not in (DOR, Adaptive) or len(src) == 0:
        return None
    n_nodes = machine.n_nodes
    dims = machine.dims.astype(np.int64)
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    if np.any(src[1:] < src[:-1]):
        return None
    per_node = np.bincount(src, minlength=n_nodes)
    # the counts of groups per node must repeat too: a cheap first look
    if int(np.prod(_periods(machine, per_node))) * MIN_GAIN * int(per_node.max()) > len(src):
        return None
    offset = torus_offsets(src, dst, dims, machine.strides.astype(np.int64))
    period = _periods(machine, _signature(per_node, offset, nbytes, mult))
    q = int(np.prod(period))
    if q * MIN_GAIN * int(per_node.max()) > len(src):
        return None
    node_coords = machine.coords(np.arange(n_nodes))
    cell_strides = np.concatenate(([1], np.cumprod(period)[:-1])).astype(np.int64)
    cell_of_node = ((node_coords % period) * cell_strides).sum(axis=1)
    if not _uniform_link_classes(machine, cell_of_node):
        return None
    in_cell_node = np.all(node_coords < period, axis=1)
    rows = np.flatnonzero(in_cell_node[src])
    key = cell_of_node[src] * n_nodes + offset
    rep_key = key[rows]
    order = np.argsort(rep_key, kind="stable")
    sorted_keys = rep_key[order]
    if np.any(sorted_keys[1:] == sorted_keys[:-1]):
        return None                     # a node sends two sizes to one node
    at = np.minimum(np.searchsorted(sorted_keys, key), len(sorted_keys) - 1)
    if not np.array_equal(sorted_keys[at], key):
        return None
    class_of = order[at]
    rep = rows[class_of]
    if not (np.array_equal(nbytes[rep], nbytes) and np.array_equal(mult[rep], mult)
            and np.array_equal(per_node, per_node[
                ((node_coords % period) * machine.strides).sum(axis=1)])):
        return None
    return TranslationClasses(rows=rows, class_of=class_of.astype(np.int64), period=period)


def _mix(x: np.ndarray) -> np.ndarray:
    """A 64-bit mixing of unsigned integers (splitmix64's finaliser), wrapping."""
    x = x.astype(np.uint64)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _signature(per_node, offset, nbytes, mult) -> np.ndarray:
    """Every node's order-free hash of its flow groups (offset, size, multiplicity)."""
    with np.errstate(over="ignore"):
        h = _mix(offset.astype(np.uint64)
                 ^ _mix(np.asarray(nbytes, dtype=np.float64).view(np.uint64))
                 ^ (_mix(np.asarray(mult, dtype=np.float64).view(np.uint64)) << np.uint64(1)))
        starts = np.concatenate(([0], np.cumsum(per_node)[:-1]))
        sig = np.zeros(len(per_node), dtype=np.uint64)
        has = per_node > 0
        sig[has] = np.add.reduceat(h, starts[has])
    return sig


def _periods(machine, values) -> np.ndarray:
    """Per dimension, the smallest divisor p of the side such that every node's value
    equals that of the node p further along."""
    dims = [int(d) for d in machine.dims]
    # node id = sum(coord[d] * strides[d]) with strides[0] = 1: C order is reversed dims
    grid = np.asarray(values).reshape(dims[::-1])
    period = []
    for d, n in enumerate(dims):
        axis = len(dims) - 1 - d
        p = next(p for p in range(1, n + 1)
                 if n % p == 0 and np.array_equal(np.roll(grid, p, axis=axis), grid))
        period.append(p)
    return np.array(period, dtype=np.int64)


def _uniform_link_classes(machine, cell_of_node) -> bool:
    """Whether the links of one class (cell node, dimension and sign) share one bandwidth."""
    nd2 = 2 * len(machine.dims)
    bw = np.asarray(machine.link_bandwidth, dtype=np.float64)
    slot = machine.dense_slot_of_link
    cls = cell_of_node[slot // nd2] * nd2 + slot % nd2
    n_cls = int(cell_of_node.max() + 1) * nd2
    lo = np.full(n_cls, np.inf)
    hi = np.full(n_cls, -np.inf)
    np.minimum.at(lo, cls, bw)
    np.maximum.at(hi, cls, bw)
    return bool(np.all((lo == hi) | np.isinf(lo)))


def class_incidence(machine, classes: TranslationClasses, indptr, indices, data, cap):
    """The representative flows' resource incidence folded onto resource classes.

    Parameters
    ----------
    machine : GridMachine
        The torus.
    classes : TranslationClasses
        The phase's classes (their ``period`` defines the cell).
    indptr, indices, data, cap : numpy.ndarray
        :func:`rankmap.timing.model.resource_incidence` of the representative flows (links,
        then injection and ejection ports; no memory columns).

    Returns
    -------
    indptr, indices, data, cap : numpy.ndarray
        CSR over the resource classes: per cell node, one per link direction (``2 * ndim``);
        then the cell's injection ports, then its ejection ports; each entry the sum of the
        row's fractions on the class (every resource of a class is crossed by one translate
        of each such fraction), classes in increasing order within a row; and the capacity
        of one resource of every class (bytes/s; ``inf`` for a class no flow uses).
    """
    period = classes.period
    cell_strides = np.concatenate(([1], np.cumprod(period)[:-1])).astype(np.int64)
    cell_of_node = ((machine.coords(np.arange(machine.n_nodes)) % period)
                    * cell_strides).sum(axis=1).astype(np.int64)
    return fold_resource_classes(np.asarray(indptr, dtype=np.int64), np.asarray(indices),
                                 np.asarray(data, dtype=np.float64),
                                 np.asarray(cap, dtype=np.float64), machine.n_links,
                                 machine.n_nodes,
                                 machine.dense_slot_of_link.astype(np.int64), cell_of_node,
                                 int(np.prod(period)), 2 * len(machine.dims))
