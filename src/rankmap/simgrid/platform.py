"""SimGrid platform XML and hostfile for a rankmap machine and placement.

A torus or fat tree becomes one SimGrid ``<cluster>`` whose hosts ``node-<id>`` are rankmap's
node ids (``radical="0-(n-1)"``), with ``SPLITDUPLEX`` links (one resource per direction, like
rankmap's directed links); a dragonfly becomes a zone of one cluster per router (below).
:mod:`.routes` checks that SimGrid then routes every host pair over the same links as rankmap
(up to naming); the findings below come from that check.

* Torus: ``topology="TORUS" topo_parameters="X,Y,Z"``. SimGrid numbers the hosts with the
  first dimension fastest, exactly rankmap's ids. It always wraps and routes by dimension
  order the shorter way round; a tie (offset exactly n/2) goes + except from coordinate n/2
  itself, where it goes - (rankmap's ``dor`` always goes +): the same hop counts, but on a
  torus with even sides some links differ (8x8x16: 4,949 of 6,016 used links carry the same
  pairs). Odd sides route identically.
* k-ary n-tree (``fattree:k=K:levels=N``): ``topology="FAT_TREE"
  topo_parameters="N;K,..,K;1,K,..,K;1,..,1"`` (K children per switch, one parent per host
  and K per switch, single links). Its labels give the same switches, wiring and host
  order as rankmap, and its d-mod-k up-port choice is rankmap's ``dmodk``: identical routes.
  Needs ``taper=1`` (one bandwidth for every link) and ``--routing dmodk``.
* Dragonfly: ``topology="DRAGONFLY" topo_parameters="G,blue;R,black;C,green;N"``: G groups of
  R chassis (rankmap's rows) of C blades (columns) with N nodes each, numbered like rankmap.
  Node links get the cluster bandwidth and the green (row), black (column) and blue (global)
  links that many times more, so rankmap's ``bw_row``/``bw_col``/``bw_global`` must be whole
  multiples of ``bw_inject``. SimGrid joins groups i and j by **one** link, between router j
  of group i and router i of group j, and routes all traffic between the two groups over it:
  rankmap's ``global=1,layout=absolute``. To reach router j it takes column j of the
  source's own row, so it needs groups <= cols. With several rows it walks row-first (rankmap
  splits row-first and column-first) and, inside a group, after a row hop from a router not
  in row 0 it continues from row 0 (a link the message never reaches; groups=4,rows=2,cols=4:
  140 of 268 used links match), so validation needs ``rows=1``, where routes are identical.
  That cluster also puts the link latency on the node (injection/ejection) links, which
  rankmap does not count as hops (two nodes of one router were 2 x lat apart, not 0), so the
  platform writes that arrangement out instead: a ``Full`` zone of one ``<cluster>`` per
  router (its nodes, node links of latency 0, ``router_id="router-<r>"``), one link per
  direction between routers (``row-<a>-<b>``, ``global-<a>-<b>``, carrying the latency) and
  a ``zoneRoute`` per router pair along the DRAGONFLY cluster's minimal route. With zero
  latency it simulates the same times as the DRAGONFLY cluster, which is then written instead
  (validation's platforms: routers^2 routes are 14 MB of XML at 256 routers).

Link latency: SimGrid's CM02 model shares a link's bandwidth in inverse proportion to each
flow's route latency (its "sharing penalty", a TCP round-trip unfairness model), so a 3-hop
flow gets a third of a 1-hop flow's share. rankmap's model is plain max-min (equal shares),
so validation writes ``lat=0`` (``link_latency=0``): SimGrid then gives every flow penalty 1.
Intra-node messages use the cluster's loopback link (``loopback_bw`` = the time model's
memory bandwidth, or 1e15 B/s when it is ``none``).
"""

from __future__ import annotations

import numpy as np

from ..errors import RankmapError
from ..machines import FatTree, GridMachine

from ..io.hostfile import SIMGRID_HOST_PREFIX as HOST_PREFIX  # the hostfile emitter's names

__all__ = ["FREE_BW", "check_supported", "platform_xml", "hostfile"]
#: loopback bandwidth (bytes/s) written when intra-node messages are free (``mem_bw=None``)
FREE_BW = 1e15


def _bw(value: float) -> str:
    return f"{value:.10g}Bps"


def _time(value: float) -> str:
    return f"{value:.10g}s"


def _torus_problems(machine, routing: str) -> list[str]:
    problems = []
    if not all(machine.wrap):
        problems.append(f"SimGrid's torus always wraps: {machine.spec} has unwrapped dimensions")
    if routing != "dor":
        problems.append(f"SimGrid routes a torus by dimension order only: use --routing dor, "
                        f"not {routing!r}")
    return problems


def _fattree_problems(machine, routing: str) -> list[str]:
    problems = []
    if not isinstance(machine, FatTree):
        problems.append(f"SimGrid's FAT_TREE cluster is a k-ary n-tree: {machine.spec} is read "
                        "from a topology file")
        return problems
    if machine.taper != 1.0:
        problems.append(f"SimGrid's FAT_TREE gives every link the same bandwidth: "
                        f"{machine.spec} has taper={machine.taper:g}")
    if routing != "dmodk":
        problems.append(f"SimGrid routes a fat tree by d-mod-k only: use --routing dmodk, "
                        f"not {routing!r}")
    return problems


def _multiple(value: float, base: float) -> int | None:
    ratio = value / base
    return int(round(ratio)) if round(ratio) >= 1 and abs(ratio - round(ratio)) < 1e-9 else None


def _dragonfly_problems(machine, routing: str) -> list[str]:
    problems = []
    if machine.G > 1 and (machine.layout != "absolute" or machine.L != 1):
        problems.append("SimGrid's DRAGONFLY joins two groups by one link on router p of a group "
                        f"for group p: give global=1,layout=absolute (not global={machine.L},"
                        f"layout={machine.layout})")
    if machine.G > machine.C:
        problems.append(f"SimGrid's DRAGONFLY reaches group p through column p of a row: it "
                        f"needs groups <= cols ({machine.G} > {machine.C})")
    if machine.R > 1:
        problems.append(f"SimGrid's DRAGONFLY misroutes inside a group when there are several "
                        f"rows (chassis) and routes row-first where rankmap splits: use rows=1 "
                        f"(not {machine.R})")
    if routing != "minimal":
        problems.append(f"SimGrid routes a dragonfly minimally only: use --routing minimal, "
                        f"not {routing!r}")
    base = machine.bw["inject"]
    for cls in ("row", "col", "global"):
        if _multiple(machine.bw[cls], base) is None:
            problems.append(f"SimGrid's DRAGONFLY gives {cls} links a whole multiple of the node "
                            f"link bandwidth: bw_{cls}={machine.bw[cls]:.4g} B/s is not a "
                            f"multiple of bw_inject={base:.4g} B/s (set bw_{cls}= in the "
                            "machine spec)")
    return problems


_PROBLEMS = {"torus": _torus_problems, "fattree": _fattree_problems,
             "dragonfly": _dragonfly_problems}


def check_supported(machine, routing: str) -> None:
    """Raise unless SimGrid can model this machine and routing like rankmap (module docstring).

    Parameters
    ----------
    machine : Machine
        A torus, k-ary fat tree or dragonfly machine.
    routing : str
        The rankmap routing the validation compares with (``dor``, ``dmodk``, ``minimal``).

    Raises
    ------
    RankmapError
        Naming the first mismatch: an unsupported machine kind, or a wrap, taper, dragonfly
        layout, bandwidth ratio or routing SimGrid cannot reproduce.
    """
    find = _PROBLEMS.get(machine.kind)
    if find is None or (machine.kind == "torus" and not isinstance(machine, GridMachine)):
        raise RankmapError(f"SimGrid platforms are written for torus, k-ary fat-tree and "
                           f"dragonfly machines, not {machine.kind} ({machine.spec})")
    ns = machine.node_structure
    if ns is not None and (ns.n_packages > 1 or ns.n_domains > 1):
        raise RankmapError(f"machine {machine.spec!r} has {ns.n_packages} socket(s) and "
                           f"{ns.n_domains} NUMA domain(s) a node (node=...), which a SimGrid "
                           "host does not have (one loopback link): give the machine without "
                           "node=")
    problems = find(machine, routing)
    if problems:
        raise RankmapError(problems[0])


def _topology(machine) -> tuple[str, str, float]:
    """(topology, topo_parameters, base link bandwidth in bytes/s) of the cluster: a torus, a
    fat tree, or a dragonfly whose links have no latency."""
    if machine.kind == "torus":
        bw = float(np.max(machine.link_bandwidth)) if machine.n_links else machine.bandwidth
        return "TORUS", ",".join(str(int(d)) for d in machine.dims), bw
    if machine.kind == "fattree":
        k, n = machine.k, machine.levels
        params = ";".join([str(n), ",".join([str(k)] * n),
                           ",".join(["1"] + [str(k)] * (n - 1)), ",".join(["1"] * n)])
        return "FAT_TREE", params, machine.bandwidth
    base = machine.bw["inject"]     # a dragonfly without latency (validation's)
    mult = {c: _multiple(machine.bw[c], base) for c in ("row", "col", "global")}
    params = (f"{machine.G},{mult['global']};{machine.R},{mult['col']};"
              f"{machine.C},{mult['row']};{machine.N}")
    return "DRAGONFLY", params, base


def _dragonfly_zone(machine, lat: float, loop: str) -> str:
    """The dragonfly (``rows=1``, ``global=1,layout=absolute``) as explicit SimGrid zones.

    Every router is a ``<cluster>`` of its nodes (``router_id="router-<r>"``) whose node links
    have latency 0: they are no hops (rankmap charges hops x lat, hops counting router links).
    The router links (``row-<a>-<b>``, ``global-<a>-<b>``: one link per direction) carry
    ``lat``, and a ``Full`` zone routes every ordered router pair as SimGrid's DRAGONFLY
    cluster does: a row hop to the router of the destination group's column, the group's one
    global link, a row hop to the destination router (each hop left out when not needed).
    """
    G, C, N = machine.G, machine.C, machine.N
    n_routers = G * C
    node_bw, row_bw, glob_bw = (_bw(machine.bw[c]) for c in ("inject", "row", "global"))
    lines = ['  <zone id="rankmap" routing="Full">']
    for r in range(n_routers):
        lines.append(f'    <cluster id="rankmap-router-{r}" prefix="{HOST_PREFIX}" suffix="" '
                     f'radical="{r * N}-{r * N + N - 1}" speed="1Gf" '
                     f'core="{machine.cores_per_node}" bw="{node_bw}" lat="0s" '
                     f'sharing_policy="SPLITDUPLEX" router_id="router-{r}"{loop}/>')
    links = []
    for g in range(G):
        for a in range(C):
            for b in range(C):
                if a != b:
                    links.append((f"row-{g * C + a}-{g * C + b}", row_bw))
        for h in range(G):
            if h != g:      # router h of group g <-> router g of group h
                links.append((f"global-{g * C + h}-{h * C + g}", glob_bw))
    lines += [f'    <link id="{name}" bandwidth="{bw}" latency="{_time(lat)}"/>'
              for name, bw in links]

    def hops(a: int, b: int) -> list[str]:
        ga, gb = a // C, b // C
        if ga == gb:
            return [f"row-{a}-{b}"]
        out, exit_r, entry_r = [], ga * C + gb, gb * C + ga
        if a != exit_r:
            out.append(f"row-{a}-{exit_r}")
        out.append(f"global-{exit_r}-{entry_r}")
        if entry_r != b:
            out.append(f"row-{entry_r}-{b}")
        return out

    for a in range(n_routers):
        for b in range(n_routers):
            if a == b:
                continue
            ctn = "".join(f'<link_ctn id="{name}"/>' for name in hops(a, b))
            lines.append(f'    <zoneRoute src="rankmap-router-{a}" dst="rankmap-router-{b}" '
                         f'gw_src="router-{a}" gw_dst="router-{b}" symmetrical="NO">{ctn}'
                         '</zoneRoute>')
    lines.append("  </zone>")
    return "\n".join(lines) + "\n"


def platform_xml(machine, mem_bw: float | None = None, link_latency: float | None = None) -> str:
    """The SimGrid platform (XML text) of ``machine`` (see the module docstring).

    Parameters
    ----------
    machine : Machine
        A machine :func:`check_supported` accepts with its first routing.
    mem_bw : float, optional
        Intra-node (loopback) bandwidth in bytes/s; None means free intra-node messages
        (:data:`FREE_BW`).
    link_latency : float, optional
        Latency in seconds written on every network link, overriding the machine's per-hop
        latency (validation uses 0, see the module docstring); a dragonfly's node links, which
        are no hops, always get 0.

    Returns
    -------
    str
        The platform file text: one ``<cluster>`` with ``SPLITDUPLEX`` links (torus, fat
        tree, dragonfly without latency), or a zone of one cluster per router joined by
        router links (a dragonfly whose links have latency).

    Raises
    ------
    RankmapError
        When SimGrid cannot model the machine (:func:`check_supported`).
    """
    check_supported(machine, machine.routings[0])
    lat = machine.hop_latency_s if link_latency is None else float(link_latency)
    # a loopback link always (without one SimGrid has no route from a host to itself);
    # mem_bw None means free intra-node messages: a link SimGrid never saturates in practice
    loop = f' loopback_bw="{_bw(FREE_BW if mem_bw is None else mem_bw)}" loopback_lat="0s"'
    head = ("<?xml version='1.0'?>\n"
            '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
            '<platform version="4.1">\n')
    if machine.kind == "dragonfly" and lat > 0:   # (routers^2 routes: only when needed)
        return head + _dragonfly_zone(machine, lat, loop) + "</platform>\n"
    topology, params, bw = _topology(machine)
    return (
        head +
        f'  <cluster id="rankmap" prefix="{HOST_PREFIX}" suffix="" '
        f'radical="0-{machine.n_nodes - 1}" speed="1Gf" core="{machine.cores_per_node}" '
        f'bw="{_bw(bw)}" lat="{_time(lat)}" sharing_policy="SPLITDUPLEX" '
        f'topology="{topology}" topo_parameters="{params}"{loop}/>\n'
        "</platform>\n")


def hostfile(node_of_rank) -> str:
    """Hostfile text whose line r is the host of rank r (how smpirun takes a placement).

    Parameters
    ----------
    node_of_rank : array_like of int
        Machine node id of every rank.

    Returns
    -------
    str
        One ``node-<id>`` line per rank.
    """
    nodes = np.asarray(node_of_rank, dtype=np.int64)
    return "".join(f"{HOST_PREFIX}{n}\n" for n in nodes.tolist())
