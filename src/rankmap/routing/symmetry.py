"""Translation symmetry of a phase on a torus: one cell's flows stand for all of them.

On a torus that wraps in every dimension, translating every node by the same vector maps
links onto links of the same direction and dimension, and dimension-order and minimal
adaptive routes onto the routes of the translated flows (their choices depend only on the
offset between the ends). A phase is invariant under a translation when every node sends
the same flows as the node it is moved to: the same multiset of (offset to the destination,
size, multiplicity). The translations by multiples of ``period[d]`` along each dimension d
then split the nodes into translates of one *cell* (the nodes with coordinates below the
periods), and the links into classes (the cell node a link translates to, its dimension and
direction): every link of a class is crossed by exactly one translate of each route share of
that class. So the loads of a phase (:func:`symmetric_loads`) and its max-min sharing
(:mod:`rankmap.timing.symmetry`) follow from the routes of the cell's flows alone.

This is the issue's "group identical flow shapes across the whole phase". A rank order of a
periodic stencil on a torus is usually invariant with a small cell: the 131,072-rank
26-neighbour stencil in TXYZ order on a 32x32x32 torus has 884,736 node-level flow groups
and 14.7 M route entries (373 M under adaptive routing); its cell's flows are 26,624 groups.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.torus import adaptive_templates, class_link_sums, template_class_sums
from ..kernels.translation import match_translates, translation_signature
from ..machines import GridMachine
from .base import LinkLoads
from .torus import DOR, Adaptive

__all__ = ["MIN_GAIN", "TranslationClasses", "SymmetricPhase", "translation_classes",
           "phase_symmetry", "cell_of_nodes", "exact_integer_sums", "symmetric_loads"]


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
    strides = machine.strides.astype(np.int64)
    nbytes = np.ascontiguousarray(nbytes, dtype=np.float64)
    mult = np.ascontiguousarray(mult, dtype=np.float64)
    offset, signature = translation_signature(src, dst, nbytes.view(np.uint64),
                                              mult.view(np.uint64), dims, strides, n_nodes)
    period = _periods(machine, signature)
    q = int(np.prod(period))
    if q * MIN_GAIN * int(per_node.max()) > len(src):
        return None
    in_cell = machine.coords(np.arange(n_nodes)) % period   # every node's place in its cell
    if not _uniform_link_classes(machine, _cell_index(in_cell, period)):
        return None
    cell_node = (in_cell * strides).sum(axis=1).astype(np.int64)
    ok, rows, class_of = match_translates(src, offset, nbytes, mult, cell_node, n_nodes)
    if not ok:
        return None
    return TranslationClasses(rows=rows, class_of=class_of, period=period)


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


def cell_of_nodes(machine, period) -> np.ndarray:
    """The cell node (0 .. prod(period)-1) every node of the torus translates to.

    Parameters
    ----------
    machine : GridMachine
        The torus.
    period : numpy.ndarray of int64
        The translation period in every dimension.

    Returns
    -------
    numpy.ndarray of int64, shape (n_nodes,)
        Cell index of every node (first dimension fastest).
    """
    return _cell_index(machine.coords(np.arange(machine.n_nodes)) % period, period)


def _cell_index(in_cell, period) -> np.ndarray:
    """Index (0 .. prod(period)-1, first dimension fastest) of cell coordinates ``in_cell``."""
    cell_strides = np.concatenate(([1], np.cumprod(period)[:-1])).astype(np.int64)
    return (in_cell * cell_strides).sum(axis=1).astype(np.int64)


@dataclass(frozen=True)
class SymmetricPhase:
    """A phase's translation symmetry with the routes of its cell's flows.

    Attributes
    ----------
    classes : TranslationClasses
        The classes of the phase's inter-node flow groups (indices relative to those groups,
        in group order).
    rows : numpy.ndarray of int64
        Indices into all the phase's groups of the representative (cell) groups.
    paths : tuple of numpy.ndarray or None
        The router's :meth:`~rankmap.routing.Router.path_arrays` of the representative groups
        (None under minimal adaptive routing: ``templates`` stand for them).
    templates : tuple of numpy.ndarray or None
        Under minimal adaptive routing, the representative groups' routes as
        ``(src, dst, tid, ptr, rel, slots, shares)``: their end nodes and their
        :func:`rankmap.kernels.torus.adaptive_templates`, from which the loads and the time
        model's classes are summed row by row (their path arrays, 432 entries per
        representative group and 131 MiB on the 131,072-rank stencil, are never stored).
    """

    classes: TranslationClasses
    rows: np.ndarray
    paths: tuple | None
    templates: tuple | None = None


def phase_symmetry(router, src, dst, nbytes, count) -> SymmetricPhase | None:
    """The translation symmetry of a phase's flow groups with its cell's routes, or None.

    Parameters
    ----------
    router : Router
        The phase's router (dimension order or minimal adaptive on a torus wrapping in every
        dimension; None for anything else).
    src, dst : numpy.ndarray of int64
        Source and destination node of every flow group, sorted by source.
    nbytes : numpy.ndarray of float64
        Size of every group's flows, bytes.
    count : numpy.ndarray of int
        Number of flows in every group.

    Returns
    -------
    SymmetricPhase or None
        The classes (:func:`translation_classes` of the inter-node groups) and the routes of
        the representative groups.
    """
    machine = router.machine
    net = src != dst
    mult = np.asarray(count, dtype=np.float64)
    classes = translation_classes(machine, router, src[net], dst[net], nbytes[net], mult[net])
    if classes is None:
        return None
    rows = np.flatnonzero(net)[classes.rows]
    if type(router) is Adaptive:
        rs = np.ascontiguousarray(src[rows], dtype=np.int64)
        rd = np.ascontiguousarray(dst[rows], dtype=np.int64)
        # the cap path_arrays would check: the rows' entries, as if stored
        tid, ptr, rel, slots, shares, _hops = adaptive_templates(
            rs, rd, machine.dims, machine.strides, machine.wrap, "route_entries")
        return SymmetricPhase(classes, rows, None, (rs, rd, tid, ptr, rel, slots, shares))
    return SymmetricPhase(classes, rows, router.path_arrays(src[rows], dst[rows]))


def exact_integer_sums(nbytes, count) -> bool:
    """Whether every group's bytes x count is a whole number and all of them sum below
    2**53, so that float64 sums of any of them, in any order, are exact.

    Parameters
    ----------
    nbytes, count
        As :func:`phase_symmetry`.

    Returns
    -------
    bool
        True when every partial sum of ``nbytes * count`` is an exact integer.
    """
    w = np.asarray(nbytes, dtype=np.float64) * np.asarray(count, dtype=np.float64)
    if not bool(np.all(np.isfinite(w))) or bool(np.any(w < 0)):
        return False
    return bool(np.all(w == np.floor(w))) and float(w.sum()) < 2.0 ** 53


def symmetric_loads(router, src, dst, nbytes, count,
                    symmetry: SymmetricPhase | None = None) -> LinkLoads | None:
    """Link loads of a translation-invariant phase under minimal adaptive or dimension-order
    routing, from the routes of one cell's flow groups, or None when the phase has no usable
    symmetry.

    Every link of one class (the cell node it translates to, dimension and direction) is
    crossed by exactly one translate of each route share of that class, so it carries the
    class's sum of ``share * bytes * count`` and ``count`` streams: the loads the per-group
    routing gives, up to the order of floating-point sums (relative differences of 1e-14 at
    most on a 131,072-rank stencil: adaptive shares are thirds and sixths). Under dimension
    order every share is 1, and the symmetry is used only when every group's bytes x count
    is a whole number and all of them sum below 2**53: each partial sum is then exact, so
    the loads are those of routing every group bit for bit (:func:`exact_integer_sums`);
    and only when the caller found it (:meth:`rankmap.evaluation.Evaluator.route` does when
    its time model will take it too), since dimension-order routing of every group costs
    about as much as looking for it.

    Parameters
    ----------
    router : Router
        The router: :class:`~rankmap.routing.torus.Adaptive` or
        :class:`~rankmap.routing.torus.DOR` (anything else: None).
    src, dst : numpy.ndarray of int64
        Source and destination node of every flow group, sorted by source.
    nbytes : numpy.ndarray of float64
        Size of every group's flows, bytes.
    count : numpy.ndarray of int
        Number of flows in every group.
    symmetry : SymmetricPhase, optional
        The phase's :func:`phase_symmetry`, when the caller has it (found here otherwise,
        under adaptive routing only).

    Returns
    -------
    LinkLoads or None
        Bytes and streams per link, hops per group (the minimal distance), or None.
    """
    if type(router) is DOR:
        if symmetry is None or not exact_integer_sums(nbytes, count):
            return None
    elif type(router) is not Adaptive:
        return None
    machine = router.machine
    if symmetry is None:
        symmetry = phase_symmetry(router, src, dst, nbytes, count)
        if symmetry is None:
            return None
    classes, rows = symmetry.classes, symmetry.rows
    mult = np.asarray(count, dtype=np.float64)
    nd2 = 2 * len(machine.dims)
    cell = cell_of_nodes(machine, classes.period)
    n_cls = int(np.prod(classes.period)) * nd2
    slot = machine.dense_slot_of_link
    link_class = (cell[slot // nd2] * nd2 + slot % nd2).astype(np.int64)
    weight, many = nbytes[rows] * mult[rows], mult[rows]
    if symmetry.templates is not None:
        rs, _rd, tid, ptr, rel, slots, shares = symmetry.templates
        class_bytes, class_streams = template_class_sums(
            rs, tid, ptr, rel, slots, shares, machine.dims, machine.strides,
            np.asarray(machine.link_of_dense_slot, dtype=np.int64), weight, many, link_class, n_cls)
    else:
        ptr, links, frac = symmetry.paths
        class_bytes, class_streams = class_link_sums(
            np.asarray(ptr, dtype=np.int64), np.asarray(links),
            np.ascontiguousarray(np.broadcast_to(np.asarray(frac, dtype=np.float64),
                                                 len(links))),
            weight, many, link_class, n_cls)
    hops = machine.hop_distance(src, dst).astype(np.float64)
    return LinkLoads(bytes=class_bytes[link_class],
                     streams=np.rint(class_streams[link_class]).astype(np.int64),
                     flow_hops=hops)
