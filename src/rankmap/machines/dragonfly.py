"""Dragonfly networks (Cray XC / Aries style): groups of routers, all-to-all inside rows and
columns of a group, parallel global links between every pair of groups.

Layout and numbering
--------------------
* ``G`` groups, each ``R`` rows x ``C`` columns of routers, ``N`` nodes per router, ``K`` cores
  per node. Router ``u = group*R*C + row*C + col``; node id ``= u*N + n``. Node coordinates are
  ``[group, row, col, node]``.
* Inside a group every router has a link to every other router of its row (class ``row``,
  Aries' backplane links) and of its column (class ``col``, Aries' chassis-to-chassis cables).
* Global links: every ordered pair of groups is joined by ``L`` parallel links (``global=L``;
  default: as many as the group's global ports allow, ``floor(R*C*gports / (G-1))``). Group
  ``g`` numbers its ports ``q = j*L + l`` for the ``l``-th link to its ``j``-th peer (peers in
  the order ``g+1, g+2, ...`` modulo G); port ``q`` sits on router ``q mod (R*C)`` with
  ``layout=spread`` (the default: global links spread evenly over routers) or on router
  ``q // gports`` with ``layout=consecutive`` (ports fill router 0 first, then router 1, ...).
  ``layout=absolute`` places the ``l``-th link from group ``g`` to group ``p`` on router
  ``(l*G + p) mod (R*C)`` of ``g``, whatever ``g`` is: with one link per pair, router ``p`` of
  every group leads to group ``p`` (SimGrid's ``DRAGONFLY`` cluster, see
  :mod:`rankmap.simgrid.platform`). It needs ``gports`` at least the most links that rule puts
  on one router (a group has no link to itself).
* Every node also has an injection link (node -> router, class ``inject``) and an ejection
  link (router -> node, class ``eject``). They are directed links of the machine, so they
  carry load and count in ``mean_link_bytes`` and the plateau point, but they are not *hops*:
  hop counts (``hop_distance``, ``avg_hops``) count router-to-router links only.

Link ids: injection ``[0, n)``, ejection ``[n, 2n)``, then row links, column links, global
links. ``link_src``/``link_dst`` give node ids; a router end of a link is represented by the
router's first node (``u*N``); ``link_columns()`` gives the exact routers and the link class.

Bandwidths (bytes/s per direction; Aries-like defaults): row 5.25 GB/s (one Aries tile),
column 15.75 GB/s (three tiles bundled), global 4.7 GB/s per link (one optical tile; the
``xc`` preset models a global link as one optical connector of two tiles, 9.4 GB/s, with 5
connectors per router), injection/ejection 10 GB/s (the NIC). Options ``bw_row=``,
``bw_col=``, ``bw_global=``, ``bw_inject=`` change them.

Routing: :mod:`rankmap.routing.dragonfly` (minimal, valiant) and :mod:`rankmap.routing.ugal`.
Spec strings: :mod:`rankmap.machines.dragonfly_spec`; the Cray XC preset and names:
:mod:`rankmap.machines.xc`, :mod:`rankmap.machines.cray_names`.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..errors import RankmapError
from ..units import BANDWIDTH_RANGE
from ..validate import as_float, as_int
from ..kernels import dragonfly as dk
from .base import Machine
from .cray_names import cray_cname

LAYOUTS = ("spread", "consecutive", "absolute")
LINK_CLASSES = ("inject", "eject", "row", "col", "global")
#: Aries-like link bandwidths, bytes per second per direction.
DEFAULT_BW = {"row": 5.25e9, "col": 15.75e9, "global": 4.7e9, "inject": 10.0e9}
DEFAULT_HOP_LATENCY = 100e-9

__all__ = ["Dragonfly", "LAYOUTS", "LINK_CLASSES", "DEFAULT_BW"]


def _absolute_ports(G: int, L: int, nr: int) -> int:
    """The most global links ``layout=absolute`` puts on one router of a group: link ``l`` to
    group ``p`` on router ``(l*G + p) mod nr``, for every ``p`` but the group itself.

    Parameters
    ----------
    G, L, nr : int
        Groups, links per pair of groups, routers per group.

    Returns
    -------
    int
        Global ports the busiest router of the busiest group needs.
    """
    p = np.arange(G)
    routers = (np.arange(L)[:, None] * G + p[None, :]) % nr           # (L, G)
    all_peers = np.bincount(routers.ravel(), minlength=nr)             # as if p = g counted
    own = np.zeros((G, nr), dtype=np.int64)                            # minus each group's own
    np.add.at(own, (np.broadcast_to(p, routers.shape).ravel(), routers.ravel()), 1)
    return int((all_peers[None, :] - own).max())


class Dragonfly(Machine):
    """A dragonfly of ``groups`` x ``rows`` x ``cols`` routers with ``nodes`` nodes each."""

    kind = "dragonfly"
    routings = ("minimal", "valiant", "ugal")
    letters = ""  # rank orders are not offered: use inorder, random, rcb, greedy, graph

    def __init__(self, groups: int, rows: int, cols: int, nodes: int, cores: int,
                 global_links: int | None = None, gports: int = 1, layout: str = "spread",
                 bandwidth: dict | None = None, hop_latency_s: float = DEFAULT_HOP_LATENCY,
                 spec: str | None = None, name: str | None = None,
                 cabinet_cols: int | None = None, node_structure=None):
        for what, v in (("groups", groups), ("rows", rows), ("cols", cols), ("nodes", nodes),
                        ("gports", gports)):
            if as_int(v, f"dragonfly {what}") < 1:
                raise RankmapError(f"bad dragonfly {what}={v}: must be at least 1")
        unknown = set(bandwidth or {}) - set(DEFAULT_BW)
        if unknown:
            raise RankmapError(f"unknown dragonfly link class {sorted(unknown)[0]!r} in the "
                               f"bandwidths: use {', '.join(DEFAULT_BW)}")
        for what, v in (bandwidth or {}).items():
            as_float(v, f"dragonfly {what} bandwidth (B/s)", *BANDWIDTH_RANGE)
        G, R, C, N = int(groups), int(rows), int(cols), int(nodes)
        nr = R * C
        if layout not in LAYOUTS:
            raise RankmapError(f"bad dragonfly layout {layout!r}: choose {', '.join(LAYOUTS)}")
        if G > 1:
            ports = nr * int(gports)
            if global_links is None:
                global_links = ports // (G - 1)
                if global_links < 1:
                    raise RankmapError(f"a group of {nr} routers with {gports} global ports each "
                                       f"cannot reach {G - 1} other groups: raise gports=")
            elif global_links * (G - 1) > ports:
                raise RankmapError(f"global={global_links} links to each of {G - 1} groups need "
                                   f"{global_links * (G - 1)} ports per group, only {ports} "
                                   f"exist ({nr} routers x gports={gports})")
            L = int(global_links)
            if L < 1:
                raise RankmapError(f"bad global={global_links}: must be at least 1")
            if layout == "absolute":
                most = _absolute_ports(G, L, nr)
                if most > int(gports):
                    raise RankmapError(f"layout=absolute puts {most} global links on one router "
                                       f"({G - 1} peer groups x global={L} on {nr} routers "
                                       f"a group): raise gports= to {most} or lower global=")
        else:
            L = 0
        spec = spec or f"dragonfly:groups={G},rows={R},cols={C},nodes={N},cores={cores}"
        super().__init__(spec, G * nr * N, cores, hop_latency_s, node_structure)
        self.G, self.R, self.C, self.N, self.L = G, R, C, N, L
        self.gports, self.layout, self.name = int(gports), layout, name
        self.cabinet_cols = cabinet_cols
        self.bw = dict(DEFAULT_BW)
        self.bw.update(bandwidth or {})
        self._build_links()

    def check_routing(self, routing: str | None) -> str:
        """The routing to use; ``valiant`` needs a third group to route through.

        Parameters
        ----------
        routing : str or None
            ``minimal``, ``valiant``, ``ugal``, or None for the default (``minimal``).

        Returns
        -------
        str
            The routing.

        Raises
        ------
        RankmapError
            An unknown routing, or ``valiant`` on fewer than 3 groups (it was routed
            minimally under the name valiant).
        """
        routing = super().check_routing(routing)
        if routing == "valiant" and self.G < 3:
            raise RankmapError(f"valiant routing goes through a group other than the source's "
                               f"and the destination's; this dragonfly has {self.G} "
                               f"group{'s' if self.G != 1 else ''}: use minimal")
        return routing

    # ---- links -------------------------------------------------------------------------
    @property
    def n_routers(self) -> int:
        """Routers in the machine."""
        return self.G * self.R * self.C

    def _port_router(self, q: np.ndarray) -> np.ndarray:
        nr = self.R * self.C
        return q % nr if self.layout == "spread" else q // self.gports

    def _build_links(self) -> None:
        G, R, C, N, L = self.G, self.R, self.C, self.N, self.L
        n, NR, nr = self.n_nodes, self.n_routers, R * C
        nodes = np.arange(n, dtype=np.int64)
        u = np.arange(NR, dtype=np.int64)
        row, col = (u % nr) // C, u % C
        base = u - (u % nr)
        # row links: u -> same row, column c2 != col
        c2 = np.arange(C)[None, :].repeat(NR, 0)
        c2 = c2[c2 != col[:, None]].reshape(NR, C - 1)
        row_src = np.repeat(u, C - 1)
        row_dst = (base[:, None] + row[:, None] * C + c2).ravel()
        r2 = np.arange(R)[None, :].repeat(NR, 0)
        r2 = r2[r2 != row[:, None]].reshape(NR, R - 1)
        col_src = np.repeat(u, R - 1)
        col_dst = (base[:, None] + r2 * C + col[:, None]).ravel()
        # global links (g1 -> g2, l), index (g1*(G-1) + j)*L + l with j = (g2-g1-1) mod G
        if G > 1 and L > 0:
            g1 = np.repeat(np.arange(G), (G - 1) * L)
            j = np.tile(np.repeat(np.arange(G - 1), L), G)
            l = np.tile(np.arange(L), G * (G - 1))
            g2 = (g1 + 1 + j) % G
            j_back = (g1 - g2 - 1) % G
            if self.layout == "absolute":
                g_src = g1 * nr + (l * G + g2) % nr
                g_dst = g2 * nr + (l * G + g1) % nr
            else:
                g_src = g1 * nr + self._port_router(j * L + l)
                g_dst = g2 * nr + self._port_router(j_back * L + l)
        else:
            g_src = g_dst = np.zeros(0, dtype=np.int64)
        self.g_src = np.ascontiguousarray(g_src, dtype=np.int64)
        self.g_dst = np.ascontiguousarray(g_dst, dtype=np.int64)
        self._row0 = 2 * n
        self._col0 = self._row0 + len(row_src)
        self._glob0 = self._col0 + len(col_src)
        rsrc = np.concatenate([nodes // N, nodes // N, row_src, col_src, self.g_src])
        rdst = np.concatenate([nodes // N, nodes // N, row_dst, col_dst, self.g_dst])
        cls = np.concatenate([np.zeros(n), np.ones(n), np.full(len(row_src), 2),
                              np.full(len(col_src), 3), np.full(len(self.g_src), 4)])
        self._class = cls.astype(np.int64)
        self._router_src = rsrc.astype(np.int64)
        self._router_dst = rdst.astype(np.int64)
        self._node = np.concatenate([nodes, nodes, np.full(len(rsrc) - 2 * n, -1)]).astype(np.int64)
        self._src = np.where(self._class == 0, self._node, self._router_src * N)
        self._dst = np.where(self._class == 1, self._node, self._router_dst * N)
        bw_of_class = np.array([self.bw["inject"], self.bw["inject"], self.bw["row"],
                                self.bw["col"], self.bw["global"]])
        self._bw = bw_of_class[self._class]
        self._n_links = len(self._class)

    @property
    def row0(self) -> int:
        """Id of the first row link (after the injection and ejection links)."""
        return self._row0

    @property
    def col0(self) -> int:
        """Id of the first column link."""
        return self._col0

    @property
    def glob0(self) -> int:
        """Id of the first global link."""
        return self._glob0

    @property
    def hop_links(self) -> np.ndarray:
        """Router-to-router links (row, column, global): injection and ejection links are
        not hops."""
        return self._class >= 2

    @property
    def link_class(self) -> np.ndarray:
        """Class of every link as an index into :data:`LINK_CLASSES`."""
        return self._class

    def link_columns(self) -> dict[str, np.ndarray]:
        """``class`` (inject/eject/row/col/global), ``src_router``, ``dst_router``, ``node``
        (the node of an injection/ejection link, else -1), ``src``, ``dst`` (node ids) and
        ``lane``: 0, 1, ... among parallel links that share all the other columns (global
        links between the same two routers), so that every link has its own row."""
        key = np.lexsort((self._node, self._router_dst, self._router_src, self._class))
        same = np.r_[False, (np.diff(self._class[key]) == 0) & (np.diff(self._router_src[key]) == 0)
                     & (np.diff(self._router_dst[key]) == 0) & (np.diff(self._node[key]) == 0)]
        start = np.maximum.accumulate(np.where(~same, np.arange(len(key)), 0))
        lane = np.empty(len(key), dtype=np.int64)
        lane[key] = np.arange(len(key)) - start
        return {"class": np.array(LINK_CLASSES)[self._class], "src_router": self._router_src,
                "dst_router": self._router_dst, "node": self._node, "src": self._src,
                "dst": self._dst, "lane": lane}

    # ---- nodes -------------------------------------------------------------------------
    def coords(self, nodes) -> np.ndarray:
        """``[group, row, col, node]`` of each node id."""
        nodes = np.asarray(nodes, dtype=np.int64)
        u = nodes // self.N
        nr = self.R * self.C
        return np.stack([u // nr, (u % nr) // self.C, u % self.C, nodes % self.N], axis=-1)

    def node_ids(self, coords) -> np.ndarray:
        """Node ids of ``[group, row, col, node]`` rows; error when out of range."""
        c = np.asarray(coords, dtype=np.int64)
        if c.shape[-1] != 4:
            raise RankmapError(f"a dragonfly node has 4 coordinates (group,row,col,node), "
                               f"got {c.shape[-1]}")
        lim = np.array([self.G, self.R, self.C, self.N])
        bad = (c < 0) | (c >= lim)
        if bad.any():
            row = c.reshape(-1, 4)[np.nonzero(bad.reshape(-1, 4).any(axis=1))[0][0]]
            raise RankmapError(f"coordinates {tuple(int(v) for v in row)} are outside the "
                               f"dragonfly (groups {self.G}, rows {self.R}, cols {self.C}, "
                               f"nodes {self.N})")
        return ((c[..., 0] * self.R + c[..., 1]) * self.C + c[..., 2]) * self.N + c[..., 3]

    def geometry(self, nodes) -> np.ndarray:
        """``(col, row, group)``: router column as x, row as y, group as z (seed 002)."""
        c = self.coords(nodes)
        return np.stack([c[..., 2], c[..., 1], c[..., 0]], axis=-1)

    @cached_property
    def _hop_table(self) -> np.ndarray:
        """Router x router minimal hop counts (int8), built on first use."""
        rr = np.arange(self.n_routers, dtype=np.int64)
        uu, vv = np.meshgrid(rr, rr, indexing="ij")
        return dk.min_router_hops(uu.ravel(), vv.ravel(), self.G, self.R, self.C, self.L,
                                  self.g_src, self.g_dst).astype(np.int8).reshape(
                                      self.n_routers, self.n_routers)

    def hop_distance(self, a, b) -> np.ndarray:
        """Router-to-router links on a shortest minimal route (injection/ejection excluded)."""
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        shape = np.broadcast(a, b).shape
        ua = np.broadcast_to(a // self.N, shape).ravel()
        ub = np.broadcast_to(b // self.N, shape).ravel()
        if self.n_routers <= 4096:
            out = self._hop_table[ua, ub].astype(np.int64)
        else:
            out = dk.min_router_hops(np.ascontiguousarray(ua), np.ascontiguousarray(ub), self.G,
                                     self.R, self.C, self.L, self.g_src, self.g_dst)
        return out.reshape(shape)

    def node_name(self, node: int) -> str:
        """Cray cname ``cX-YcCsSnN`` on an XC machine, else ``g<G>r<R>c<C>n<N>``."""
        g, r, c, n = (int(v) for v in self.coords(np.int64(node)))
        if self.cabinet_cols is not None:
            return cray_cname(g, r, c, n, self.cabinet_cols)
        return f"g{g}r{r}c{c}n{n}"

    def describe(self) -> dict:
        """Shape, global link count and layout, per-class bandwidths (bytes/s)."""
        d = {"kind": self.kind, "spec": self.spec, "groups": self.G, "rows": self.R,
             "cols": self.C, "nodes_per_router": self.N, "nodes": self.n_nodes,
             "cores_per_node": self.cores_per_node, "global_links_per_group_pair": self.L,
             "global_ports_per_router": self.gports, "layout": self.layout,
             "links": self._n_links, "link_bandwidth_Bps": dict(self.bw),
             "hop_latency_s": self.hop_latency_s}
        if self.name:
            d["preset"] = self.name
        if self.cabinet_cols is not None:
            d["cabinet_cols"] = self.cabinet_cols
        d.update(self.describe_node())
        return d
