"""The flow-level time model of one phase: resources, bandwidth sharing, latency.

A phase's flows all start at t = 0. Each inter-node flow crosses the machine links its
router gives it (:meth:`rankmap.routing.Router.paths`; split into sub-flows under
adaptive routing) and, when a NIC bandwidth is set, the injection port of its source node and
the ejection port of its destination node. A flow inside one node uses only that node's
memory resource (capacity ``mem_bw``, shared by all the node's intra-node flows); on a
machine whose nodes have packages and NUMA domains (``node=``), every domain has its own
``mem_bw`` and messages between packages also cross an inter-socket link of ``socket_bw``
(:mod:`rankmap.timing.domains`). Bandwidth
is shared max-min fairly and re-shared whenever flows finish (:mod:`rankmap.timing.maxmin`).

A flow's time is its transfer finish time plus its latency: ``overhead_s`` (per message)
plus hops x the per-hop latency (the options' ``hop_latency_s``, else the machine's; the expected
hop count under adaptive routing).
The phase's predicted time is the largest flow time (the phase ends when its last message
has arrived), in seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import RankmapError
from ..kernels.jit import kernel
from ..routing import Router, router_for
from ..kernels.flows import group_max
from ..routing.groups import FlowGroups, flow_groups
from ..units import parse_bandwidth, parse_time
from ..validate import check_limit, show
from .domains import domain_memory_times
from .maxmin import completion_times
from .processor_sharing import shared_memory_times
from ..routing.symmetry import SymmetricPhase
from .symmetry import class_incidence, template_class_incidence, translation_classes

__all__ = ["TimeOptions", "parse_time_options", "resource_incidence", "resource_capacity",
           "shared_memory_times", "unique_flows", "flow_times", "phase_time", "DEFAULT_MEM_BW",
           "DEFAULT_OVERHEAD_S", "DEFAULT_SOCKET_BW"]

#: default memory bandwidth for a flow between two ranks of one node (bytes/s); on nodes
#: with NUMA domains, of each domain.
DEFAULT_MEM_BW = 10e9
#: default bandwidth of the link between two packages (sockets) of a node, each direction
#: (bytes/s): half a domain's memory bandwidth, as a copy to the other socket's memory runs
#: at roughly half the speed of a local one on two-socket x86 nodes.
DEFAULT_SOCKET_BW = 5e9
#: default per-message software overhead (seconds).
DEFAULT_OVERHEAD_S = 1e-6
#: default relative tolerance for retiring near-simultaneous flows together.
DEFAULT_TOLERANCE = 1e-3
#: default smallest fraction of the running flows retired per re-sharing event.
DEFAULT_RETIRE_FRACTION = 0.0


@dataclass(frozen=True)
class TimeOptions:
    """Options of the time model.

    ``nic_bw``: injection and ejection bandwidth per node in bytes/s (None: unlimited, the
    node's links are the only limit). ``mem_bw``: bandwidth of a node's memory for flows
    between its own ranks, bytes/s, shared by those flows (None: intra-node flows cost only
    their overhead). ``overhead_s``: per-message overhead in seconds. ``tolerance``: flows
    finishing within this relative time of the first are retired in one re-sharing event.
    ``retire_fraction``: every event retires at least this fraction of the running flows
    (the soonest ones), which bounds the cost on placements with spread-out finish times
    (see :mod:`rankmap.timing.maxmin`); 0 = exact event sequence.
    ``enabled``: False turns the model off (no ``predicted_time_s``). ``mem_shared``: True
    (default) makes a node's memory one resource shared by its intra-node flows; False gives
    every intra-node flow the full ``mem_bw`` (SimGrid's loopback link behaves so).
    ``hop_latency_s``: per-hop latency in seconds (None: the machine's ``lat=``).
    ``socket_bw``: bandwidth of the link between two packages of a node, each direction,
    bytes/s (None: unlimited); used only on machines with a node structure, where ``mem_bw``
    is per NUMA domain.
    """

    nic_bw: float | None = None
    mem_bw: float | None = DEFAULT_MEM_BW
    overhead_s: float = DEFAULT_OVERHEAD_S
    tolerance: float = DEFAULT_TOLERANCE
    retire_fraction: float = DEFAULT_RETIRE_FRACTION
    enabled: bool = True
    mem_shared: bool = True
    hop_latency_s: float | None = None
    socket_bw: float | None = DEFAULT_SOCKET_BW

    def __post_init__(self):
        from ..units import BANDWIDTH_RANGE, MAX_TIME
        lo, hi = BANDWIDTH_RANGE
        for name in ("nic_bw", "mem_bw", "socket_bw"):
            v = getattr(self, name)
            # the physical range the command line's units allow: a bandwidth of 1e-320 B/s
            # made predicted times NaN, and a NaN time won the ranking
            if v is not None and not lo <= (_finite_number(v) or 0.0) <= hi:
                raise RankmapError(f"bad {name} {show(v)}: must be a bandwidth of {lo:g} to "
                                   f"{hi:g} bytes/s (None for unlimited)")
        for name in ("overhead_s", "tolerance", "retire_fraction", "hop_latency_s"):
            v = getattr(self, name)
            if (v is not None or name != "hop_latency_s") and _finite_number(v) is None:
                raise RankmapError(f"bad {name} {show(v)}: must be a finite number")
        for name in ("enabled", "mem_shared"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise RankmapError(f"bad {name} {getattr(self, name)!r}: must be True or False")
        if not self.overhead_s >= 0:
            raise RankmapError(f"bad per-message overhead {self.overhead_s!r}: must be >= 0")
        for name in ("overhead_s", "hop_latency_s"):
            v = getattr(self, name)
            if v is not None and not 0 <= v <= MAX_TIME:
                raise RankmapError(f"bad {name} {show(v)}: must be 0 to {MAX_TIME:g} s")
        if not 0 <= self.tolerance < 1:
            raise RankmapError(f"bad time tolerance {self.tolerance!r}: must be in [0, 1)")
        if self.hop_latency_s is not None and not self.hop_latency_s >= 0:
            raise RankmapError(f"bad per-hop latency {self.hop_latency_s!r}: must be >= 0")
        if not 0 <= self.retire_fraction < 1:
            raise RankmapError(f"bad retire fraction {self.retire_fraction!r}: must be in [0, 1)")

    def describe(self) -> dict:
        """JSON-ready options (bandwidths in bytes/s, times in seconds).

        Returns
        -------
        dict
            ``nic_bw_Bps``, ``mem_bw_Bps``, ``socket_bw_Bps`` (bytes/s, None when
            unlimited), ``overhead_s`` (seconds), ``tolerance``, ``retire_fraction`` and
            ``mem_shared``.
        """
        return {"nic_bw_Bps": self.nic_bw, "mem_bw_Bps": self.mem_bw,
                "overhead_s": self.overhead_s, "tolerance": self.tolerance,
                "retire_fraction": self.retire_fraction,
                "mem_shared": self.mem_shared, "socket_bw_Bps": self.socket_bw}


def _finite_number(v) -> float | None:
    """``v`` as a float when it is a finite number (numpy's too; never a bool or a string)."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                             np.floating)):
        return None
    try:
        x = float(v)
    except OverflowError:
        return None
    return x if math.isfinite(x) else None


def parse_time_options(nic: str | None = None, mem: str | None = None,
                       overhead: str | None = None, enabled: bool = True,
                       mem_sharing: str = "node", socket: str | None = None) -> TimeOptions:
    """TimeOptions from text such as ``nic="2GB/s"``, ``mem="none"``, ``overhead="1us"``,
    ``socket="20GB/s"``.

    ``none`` or ``inf`` means unlimited for a bandwidth; absent values keep the defaults.
    ``mem_sharing`` is ``node`` (a node's intra-node flows share mem) or ``flow`` (each
    gets all of it).

    Parameters
    ----------
    nic : str, optional
        Injection/ejection bandwidth per node (e.g. ``"2GB/s"``); default unlimited.
    mem : str, optional
        Memory bandwidth of a node (or NUMA domain) for intra-node flows; default
        :data:`DEFAULT_MEM_BW` (10 GB/s).
    overhead : str, optional
        Per-message overhead (e.g. ``"1us"``); default :data:`DEFAULT_OVERHEAD_S` (1 us).
    enabled : bool
        False turns the time model off.
    mem_sharing : str
        ``node`` or ``flow``, as above.
    socket : str, optional
        Inter-socket link bandwidth, each direction; default :data:`DEFAULT_SOCKET_BW`
        (5 GB/s).

    Returns
    -------
    TimeOptions
        The options, bandwidths in bytes/s and the overhead in seconds.

    Raises
    ------
    RankmapError
        When ``mem_sharing`` is neither ``node`` nor ``flow``, or a bandwidth or time cannot
        be parsed or is out of range.
    """
    if mem_sharing not in ("node", "flow"):
        raise RankmapError(f"bad memory sharing {mem_sharing!r}: choose node or flow")
    def bw(text, what, default):
        if text is None:
            return default
        if str(text).strip().lower() in ("none", "inf", "unlimited"):
            return None
        return parse_bandwidth(text, what)

    # named as the command line's options too: the message is the same from Python
    return TimeOptions(nic_bw=bw(nic, "NIC bandwidth (--nic-bw)", None),
                       mem_bw=bw(mem, "memory bandwidth (--mem-bw)", DEFAULT_MEM_BW),
                       overhead_s=(DEFAULT_OVERHEAD_S if overhead is None
                                   else parse_time(overhead,
                                                   "per-message overhead (--msg-overhead)")),
                       enabled=enabled, mem_shared=mem_sharing == "node",
                       socket_bw=bw(socket, "inter-socket bandwidth (--socket-bw)",
                                    DEFAULT_SOCKET_BW))


@kernel(nogil=True)
def _augment(indptr, indices, data, src, dst, n_links, n_nodes, use_nic, use_mem):
    """Add NIC (injection n_links+node, ejection n_links+n_nodes+node) and memory
    (n_links+2*n_nodes+node) columns to a flow x link CSR."""
    n = src.shape[0]
    extra = np.zeros(n, dtype=np.int64)
    for f in range(n):
        if src[f] == dst[f]:
            extra[f] = 1 if use_mem else 0
        else:
            extra[f] = 2 if use_nic else 0
    out_ptr = np.zeros(n + 1, dtype=np.int64)
    for f in range(n):
        out_ptr[f + 1] = out_ptr[f] + (indptr[f + 1] - indptr[f]) + extra[f]
    out_idx = np.empty(out_ptr[n], dtype=np.int64)
    out_val = np.empty(out_ptr[n], dtype=np.float64)
    for f in range(n):
        p = out_ptr[f]
        for k in range(indptr[f], indptr[f + 1]):
            out_idx[p] = indices[k]
            out_val[p] = data[k]
            p += 1
        if src[f] == dst[f]:
            if use_mem:
                out_idx[p] = n_links + 2 * n_nodes + src[f]
                out_val[p] = 1.0
        elif use_nic:
            out_idx[p] = n_links + src[f]
            out_val[p] = 1.0
            out_idx[p + 1] = n_links + n_nodes + dst[f]
            out_val[p + 1] = 1.0
    return out_ptr, out_idx, out_val


def resource_incidence(machine, src_node, dst_node, routing: "str | Router", options: TimeOptions,
                       memory: bool = True, paths: tuple | None = None):
    """(indptr, indices, data, capacity) of the flows over links, NIC ports and memories.

    Columns: the machine's links, then injection and ejection ports, then node memories
    (capacities in bytes/s; unlimited resources are left out). ``routing`` is a router (whose
    choices are fixed for the phase) or a routing name. ``memory=False`` leaves the memory
    columns empty (:func:`flow_times` handles flows inside a node on their own). Indices stay
    32-bit when the path model gives them so (half the memory of the largest arrays of a
    phase).

    Parameters
    ----------
    machine : Machine
        The network (links with their bandwidths, nodes).
    src_node, dst_node : array of int, shape (n_flows,)
        Source and destination node of every flow.
    routing : str or Router
        The routing name, or a router.
    options : TimeOptions
        Model options (``nic_bw``, ``mem_bw``, ``mem_shared`` decide the extra columns).
    memory : bool
        Whether flows inside a node use their node's memory column.
    paths : tuple of numpy.ndarray, optional
        The router's :meth:`~rankmap.routing.Router.path_arrays` of these flows, when the
        caller has them.

    Returns
    -------
    indptr : ndarray of int64, shape (n_flows + 1,)
        CSR row pointers: flow f uses ``indices[indptr[f]:indptr[f+1]]``.
    indices : ndarray of int32 or int64
        Resource (column) of every entry.
    data : ndarray of float64
        Fraction of the flow's bytes on each resource.
    capacity : ndarray of float64, shape (n_links + 3 * n_nodes,)
        Capacity of every resource, bytes/s (``inf`` for unlimited ones).
    """
    try:
        indptr, indices, data = (paths if paths is not None else
                                 router_for(machine, routing).path_arrays(src_node, dst_node))
    except RankmapError as exc:     # a router refusing routes too big to build
        raise RankmapError(f"the time model needs the routes (--time-model off skips it): "
                           f"{exc}") from None
    # the max-min model keeps a few copies of the routes: bound them before it starts
    _check_route_entries(len(indices), len(src_node), machine)
    # a row's resources stay in the router's order: max-min sharing adds up every
    # resource's flows in flow order, whatever the order inside a row
    n_links, n_nodes = machine.n_links, machine.n_nodes
    src_node = np.ascontiguousarray(src_node, dtype=np.int64)
    dst_node = np.ascontiguousarray(dst_node, dtype=np.int64)
    indptr = np.asarray(indptr).astype(np.int64, copy=False)
    indices = np.asarray(indices)
    if indices.dtype not in (np.int32, np.int64):
        indices = indices.astype(np.int64)
    data = np.asarray(data).astype(np.float64, copy=False)
    use_nic = options.nic_bw is not None
    use_mem = memory and options.mem_bw is not None and options.mem_shared
    if use_nic or use_mem:
        indptr, indices, data = _augment(indptr, indices.astype(np.int64, copy=False), data,
                                         src_node, dst_node, n_links, n_nodes, use_nic, use_mem)
    return indptr, indices, data, resource_capacity(machine, options)


def resource_capacity(machine, options: TimeOptions) -> np.ndarray:
    """Capacity of every resource of :func:`resource_incidence`'s columns.

    Parameters
    ----------
    machine : Machine
        The network.
    options : TimeOptions
        Model options (``nic_bw``, ``mem_bw``).

    Returns
    -------
    numpy.ndarray of float64, shape (n_links + 3 * n_nodes,)
        Bytes/s of every link, then injection and ejection port, then node memory (``inf``
        for unlimited ones).
    """
    n_nodes = machine.n_nodes
    return np.concatenate([np.asarray(machine.link_bandwidth, dtype=np.float64),
                           np.full(2 * n_nodes, options.nic_bw or np.inf),
                           np.full(n_nodes, options.mem_bw or np.inf)])


def _check_route_entries(n_entries: int, n_flows: int, machine) -> None:
    """The cap on the routes the max-min model keeps (a few copies of them)."""
    check_limit(n_entries, "route_entries",
                f"the time model of a phase of {n_flows:,} node pairs on "
                f"{machine.spec} (--time-model off skips it)")


def unique_flows(src_node, dst_node, nbytes):
    """Group identical flows (same source node, destination node and bytes).

    Returns (src, dst, bytes, multiplicity) of the groups and ``inverse`` such that flow
    ``f`` belongs to group ``inverse[f]``. Identical flows get identical max-min rates, so
    the model works on groups (a big win for stencils with several ranks per node). The
    groups of :func:`rankmap.routing.groups.flow_groups`, sorted by (source, destination,
    size).

    Parameters
    ----------
    src_node, dst_node : array of int, shape (n_flows,)
        Source and destination node of every flow.
    nbytes : array of float, shape (n_flows,)
        Size of every flow, bytes.

    Returns
    -------
    src, dst : ndarray of int64, shape (n_groups,)
        Source and destination node of every group.
    bytes : ndarray of float64, shape (n_groups,)
        Size of each flow of the group, bytes.
    multiplicity : ndarray of float64, shape (n_groups,)
        Number of flows in every group.
    inverse : ndarray of int64, shape (n_flows,)
        Group of every flow.
    """
    g = flow_groups(src_node, dst_node, nbytes)
    return g.src, g.dst, g.nbytes, g.count.astype(np.float64), g.inverse


def flow_times(machine, src_node, dst_node, nbytes, routing: "str | Router", options: TimeOptions,
               flow_hops=None, src_core=None, dst_core=None,
               groups: FlowGroups | None = None,
               symmetry: SymmetricPhase | bool | None = None) -> np.ndarray:
    """Time (s) at which each flow of a phase has fully arrived: bandwidth-shared transfer
    finish time + per-message overhead + hops x per-hop latency.

    Parameters
    ----------
    machine : Machine
        The network.
    src_node, dst_node : array of int
        Nodes of every flow.
    nbytes : array of float
        Bytes of every flow.
    routing : str or Router
        The routing name, or a router; a router that decides from the traffic (UGAL) is fixed
        for these flows first (:meth:`rankmap.routing.Router.for_phase`).
    options : TimeOptions
        Model options.
    flow_hops : array of float, optional
        Hops of every flow (default: the machine's shortest hop distance).
    src_core, dst_core : array of int, optional
        Core within its node of every flow's sender and receiver; with the machine's
        ``node_structure`` they put flows inside a node on NUMA domains and inter-socket
        links (:func:`~rankmap.timing.domains.domain_memory_times`). Without them (or without
        a structure) a node's memory is one resource.
    groups : FlowGroups, optional
        The flows' groups of identical flows, when the caller has them
        (:func:`rankmap.routing.groups.flow_groups`); computed otherwise.
    symmetry : SymmetricPhase, False or None
        The groups' translation symmetry with its cell's routes, when the caller has it
        (:func:`rankmap.routing.symmetry.phase_symmetry`, of these ``groups``); False when
        the caller knows there is none; None: looked for here.

    Returns
    -------
    numpy.ndarray
        Arrival time of every flow, seconds.

    Flows between nodes and flows inside a node use disjoint resources (links and NIC ports;
    a node's memory), so they are modelled apart: the first by max-min sharing with
    re-sharing (:func:`~rankmap.timing.maxmin.completion_times`), the second by
    :func:`shared_memory_times` (or ``bytes / mem_bw`` each with ``mem_shared=False``).
    """
    nbytes = np.ascontiguousarray(nbytes, dtype=np.float64)
    if nbytes.size == 0:
        return np.zeros(0)
    src_node = np.asarray(src_node)
    dst_node = np.asarray(dst_node)
    groups, group_finish, flow_finish = _finish_times(machine, src_node, dst_node, nbytes,
                                                      routing, options, src_core, dst_core,
                                                      groups, symmetry)
    if flow_hops is None:
        flow_hops = machine.hop_distance(src_node, dst_node)
    latency = _latency(machine, options, flow_hops)
    if flow_finish is not None:
        return flow_finish + latency
    return group_finish[groups.inverse] + latency


def _hop_latency(machine, options: TimeOptions) -> float:
    """The per-hop latency (s): the options', else the machine's."""
    return machine.hop_latency_s if options.hop_latency_s is None else options.hop_latency_s


def _latency(machine, options: TimeOptions, hops) -> np.ndarray:
    """Per-message overhead plus ``hops`` x the per-hop latency (s)."""
    return options.overhead_s + np.asarray(hops, dtype=np.float64) * _hop_latency(machine,
                                                                                  options)


def _finish_times(machine, src_node, dst_node, nbytes, routing, options: TimeOptions, src_core,
                  dst_core, groups: FlowGroups | None, symmetry):
    """The phase's groups, every group's transfer finish time (s) and, when the node's
    domains time the flows inside a node one by one, every flow's (else None): what
    :func:`flow_times` adds the latencies to."""
    router = router_for(machine, routing).for_phase(src_node, dst_node, nbytes)
    if groups is None:
        groups = flow_groups(src_node, dst_node, nbytes)
    us, ud, ub, inverse = groups.src, groups.dst, groups.nbytes, groups.inverse
    mult = groups.count.astype(np.float64)
    if len(us) >= 2**31:
        raise RankmapError(f"{len(us):,} distinct flows in one phase: the time model handles "
                           "fewer than 2**31 (use --time-model off)")
    group_finish = np.zeros(len(us))
    net = us != ud
    if net.any():
        group_finish[net] = _network_finish(machine, router, us[net], ud[net], ub[net],
                                            mult[net], options, symmetry)
    inside = ~net
    structure = machine.node_structure
    by_domain = structure is not None and src_core is not None and dst_core is not None
    flow_finish = None
    if by_domain and inside.any():
        here = np.nonzero(np.asarray(src_node) == np.asarray(dst_node))[0]
        times = domain_memory_times(np.asarray(src_node)[here], np.asarray(src_core)[here],
                                    np.asarray(dst_core)[here], nbytes[here], structure,
                                    options.mem_bw, options.socket_bw, options.mem_shared,
                                    options.tolerance, options.retire_fraction)
        group_finish[inside] = 0.0
        flow_finish = group_finish[inverse]
        flow_finish[here] = times
    elif inside.any() and options.mem_bw is not None:
        if options.mem_shared:
            group_finish[inside] = shared_memory_times(us[inside], ub[inside], mult[inside],
                                                       options.mem_bw)
        else:
            group_finish[inside] = ub[inside] / options.mem_bw
    return groups, group_finish, flow_finish


def _network_finish(machine, router, src, dst, nbytes, mult, options: TimeOptions,
                    symmetry: SymmetricPhase | bool | None = None) -> np.ndarray:
    """Finish time (s) of every inter-node flow group under max-min sharing: on one cell's
    flows when the phase is translation-invariant (:mod:`rankmap.timing.symmetry`; exact
    mode only), else on every group. ``symmetry`` (of all the phase's groups) saves finding
    the symmetry and routing the cell's flows again."""
    if options.retire_fraction != 0 or symmetry is False:
        classes, paths = None, None
    elif symmetry is not None:
        classes, paths = symmetry.classes, symmetry.paths
    else:
        classes, paths = translation_classes(machine, router, src, dst, nbytes, mult), None
    if classes is not None:
        r = classes.rows
        if symmetry is not None and symmetry.templates is not None:
            # minimal adaptive routes summed from their templates, row by row
            tpl = symmetry.templates
            _check_route_entries(int((tpl[3][1:] - tpl[3][:-1])[tpl[2]].sum()), len(r), machine)
            indptr, indices, data, cap = template_class_incidence(
                machine, classes, tpl, resource_capacity(machine, options),
                options.nic_bw is not None)
        else:
            indptr, indices, data, cap = class_incidence(
                machine, classes, *resource_incidence(machine, src[r], dst[r], router, options,
                                                      memory=False, paths=paths))
        finish, _fills = completion_times(indptr, indices, data, cap, nbytes[r],
                                          options.tolerance, mult[r], 0.0)
        return finish[classes.class_of]
    indptr, indices, data, cap = resource_incidence(machine, src, dst, router, options,
                                                    memory=False)
    finish, _fills = completion_times(indptr, indices, data, cap, nbytes, options.tolerance,
                                      mult, options.retire_fraction)
    return finish


def phase_time(machine, src_node, dst_node, nbytes, routing: "str | Router", options: TimeOptions,
               flow_hops=None, src_core=None, dst_core=None,
               groups: FlowGroups | None = None,
               symmetry: SymmetricPhase | bool | None = None) -> float:
    """Predicted time (s) of one phase: when its last flow has arrived (0 with no flows).

    Parameters
    ----------
    machine : Machine
        The network.
    src_node, dst_node : array of int
        Nodes of every flow.
    nbytes : array of float
        Bytes of every flow.
    routing : str or Router
        The routing name, or a router (fixed for these flows, as in :func:`flow_times`).
    options : TimeOptions
        Model options.
    flow_hops : array of float, optional
        Hops of every flow (default: the machine's shortest hop distance).
    src_core, dst_core : array of int, optional
        Core within its node of every flow's sender and receiver (see :func:`flow_times`).
    groups : FlowGroups, optional
        The flows' groups of identical flows (see :func:`flow_times`).
    symmetry : SymmetricPhase, False or None
        The groups' translation symmetry (see :func:`flow_times`).

    Returns
    -------
    float
        The largest arrival time of the phase's flows, seconds.

    Raises
    ------
    RankmapError
        When the phase has 2**31 or more distinct flows.
    """
    nbytes = np.ascontiguousarray(nbytes, dtype=np.float64)
    if nbytes.size == 0:
        return 0.0
    src_node = np.asarray(src_node)
    dst_node = np.asarray(dst_node)
    groups, group_finish, flow_finish = _finish_times(machine, src_node, dst_node, nbytes,
                                                      routing, options, src_core, dst_core,
                                                      groups, symmetry)
    if flow_finish is not None or not _hop_latency(machine, options) >= 0:
        hops = machine.hop_distance(src_node, dst_node) if flow_hops is None else flow_hops
        late = _latency(machine, options, hops)
        return float(((flow_finish if flow_finish is not None
                       else group_finish[groups.inverse]) + late).max())
    # the latest arrival of a group is its finish time plus the latency of its flow with the
    # most hops (latency grows with hops): the same maximum as over every flow, bit for bit,
    # without arrays of flows; the default hops are the group's node pair's distance
    if flow_hops is None:
        hops = machine.hop_distance(groups.src, groups.dst)
    else:
        hops = group_max(groups.inverse, np.ascontiguousarray(flow_hops, dtype=np.float64),
                         len(groups.src))
    return float((group_finish + _latency(machine, options, hops)).max())
