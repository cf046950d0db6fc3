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
  :mod:`rankmap.simgrid.platform`). It needs ``ceil(G*L / (R*C)) <= gports``.
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

Routing (see :mod:`rankmap.routing.dragonfly_kernels`):

* ``minimal``: at most a row and a column hop in the source group, one global hop, at most a row
  and a column hop in the destination group. Traffic is split equally over the ``L`` parallel
  global links of the group pair and, inside a group, equally between row-then-column and
  column-then-row when both differ.
* ``valiant``: traffic between groups goes minimally to an intermediate group and minimally on
  from there, split equally over all ``G-2`` intermediate groups (and their parallel links).
  Traffic inside a group, and every flow on a machine with fewer than 3 groups, routes
  minimally.
* ``ugal``: decided per pair of groups (so per flow) from the phase's own predicted load: with
  every flow routed minimally, let ``T[a,b]`` be the bytes on one global link from group a to
  group b. Flows from group s to group d go Valiant when
  ``T[s,d] > 2 * mean over i of max(T[s,i], T[i,d])`` (the minimal global queue weighed by one
  global hop against the Valiant queues weighed by two), else minimal.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import RankmapError
from ..routing import dragonfly_kernels as dk
from .base import LinkLoads, Machine

LAYOUTS = ("spread", "consecutive", "absolute")
LINK_CLASSES = ("inject", "eject", "row", "col", "global")
#: Aries-like link bandwidths, bytes per second per direction.
DEFAULT_BW = {"row": 5.25e9, "col": 15.75e9, "global": 4.7e9, "inject": 10.0e9}
DEFAULT_HOP_LATENCY = 100e-9


def _register_hops_hook() -> None:
    """Add the per-class hop metrics to evaluations (once, when a dragonfly is first built)."""
    from ..evaluation import PHASE_METRIC_HOOKS
    from ..routing.dragonfly_metrics import dragonfly_hops_hook
    if dragonfly_hops_hook not in PHASE_METRIC_HOOKS:
        PHASE_METRIC_HOOKS.append(dragonfly_hops_hook)


class Dragonfly(Machine):
    """A dragonfly of ``groups`` x ``rows`` x ``cols`` routers with ``nodes`` nodes each."""

    kind = "dragonfly"
    routings = ("minimal", "valiant", "ugal")
    letters = ""  # rank orders are not offered: use inorder, random, rcb, greedy, graph

    def __init__(self, groups: int, rows: int, cols: int, nodes: int, cores: int,
                 global_links: int | None = None, gports: int = 1, layout: str = "spread",
                 bandwidth: dict | None = None, hop_latency_s: float = DEFAULT_HOP_LATENCY,
                 spec: str | None = None, name: str | None = None,
                 cabinet_cols: int | None = None):
        for what, v in (("groups", groups), ("rows", rows), ("cols", cols), ("nodes", nodes),
                        ("gports", gports)):
            if int(v) < 1:
                raise RankmapError(f"bad dragonfly {what}={v}: must be at least 1")
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
            if layout == "absolute" and -(-G * L // nr) > int(gports):
                raise RankmapError(f"layout=absolute puts {-(-G * L // nr)} global links on one "
                                   f"router ({G} groups x global={L} over {nr} routers): raise "
                                   f"gports= to {-(-G * L // nr)} or lower global=")
        else:
            L = 0
        spec = spec or f"dragonfly:groups={G},rows={R},cols={C},nodes={N},cores={cores}"
        super().__init__(spec, G * nr * N, cores, hop_latency_s)
        self.G, self.R, self.C, self.N, self.L = G, R, C, N, L
        self.gports, self.layout, self.name = int(gports), layout, name
        self.cabinet_cols = cabinet_cols
        self.bw = dict(DEFAULT_BW)
        self.bw.update(bandwidth or {})
        self._build_links()
        self._hop_table = None
        _register_hops_hook()

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
        self.row0 = 2 * n
        self.col0 = self.row0 + len(row_src)
        self.glob0 = self.col0 + len(col_src)
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
    def link_class(self) -> np.ndarray:
        """Class of every link as an index into :data:`LINK_CLASSES`."""
        return self._class

    def link_columns(self) -> dict[str, np.ndarray]:
        """``class`` (inject/eject/row/col/global), ``src_router``, ``dst_router``, ``node``
        (the node of an injection/ejection link, else -1), ``src``, ``dst`` (node ids)."""
        return {"class": np.array(LINK_CLASSES)[self._class], "src_router": self._router_src,
                "dst_router": self._router_dst, "node": self._node, "src": self._src,
                "dst": self._dst}

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

    def hop_distance(self, a, b) -> np.ndarray:
        """Router-to-router links on a shortest minimal route (injection/ejection excluded)."""
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        shape = np.broadcast(a, b).shape
        ua = np.broadcast_to(a // self.N, shape).ravel()
        ub = np.broadcast_to(b // self.N, shape).ravel()
        if self.n_routers <= 4096:
            if self._hop_table is None:
                rr = np.arange(self.n_routers, dtype=np.int64)
                uu, vv = np.meshgrid(rr, rr, indexing="ij")
                self._hop_table = dk.min_router_hops(
                    uu.ravel(), vv.ravel(), self.G, self.R, self.C, self.L, self.g_src,
                    self.g_dst).astype(np.int8).reshape(self.n_routers, self.n_routers)
            out = self._hop_table[ua, ub].astype(np.int64)
        else:
            out = dk.min_router_hops(np.ascontiguousarray(ua), np.ascontiguousarray(ub), self.G,
                                     self.R, self.C, self.L, self.g_src, self.g_dst)
        return out.reshape(shape)

    def node_name(self, node: int) -> str:
        """Cray cname ``cX-YcCsSnN`` on an XC machine, else ``g<G>r<R>c<C>n<N>``."""
        g, r, c, n = (int(v) for v in self.coords(np.int64(node)))
        if self.cabinet_cols is not None:
            half = self.cabinet_cols // 2
            y, x = g // half, 2 * (g % half) + r // 3
            return f"c{x}-{y}c{r % 3}s{c}n{n}"
        return f"g{g}r{r}c{c}n{n}"

    # ---- routing -----------------------------------------------------------------------
    def _stage(self, stage: int, valiant: bool, a: np.ndarray, b: np.ndarray) -> sp.csr_matrix:
        indptr, links, frac = dk.stage_rows(
            stage, valiant, np.ascontiguousarray(a, dtype=np.int64),
            np.ascontiguousarray(b, dtype=np.int64), self.G, self.R, self.C, self.L,
            self.row0, self.col0, self.glob0, self.g_src, self.g_dst, self._n_links)
        return sp.csr_matrix((frac, links, indptr), shape=(len(a), self._n_links))

    def _keyed(self, stage, valiant, flows, a, b):
        """(flow indices, key index per flow, key matrix) for one stage over ``flows``."""
        if len(flows) == 0:
            return None
        m = int(max(a.max(), b.max())) + 1
        keys, inv = np.unique(a * m + b, return_inverse=True)
        return flows, inv.ravel(), self._stage(stage, valiant, keys // m, keys % m)

    def ugal_valiant_pairs(self, src, dst, nbytes) -> np.ndarray:
        """Boolean G x G matrix: group pairs whose flows UGAL sends Valiant (module docstring)."""
        G = self.G
        out = np.zeros((G, G), dtype=bool)
        if G < 3:
            return out
        per_group = self.R * self.C * self.N
        gs, gd = np.asarray(src) // per_group, np.asarray(dst) // per_group
        inter = gs != gd
        T = np.bincount(gs[inter] * G + gd[inter], weights=np.asarray(nbytes)[inter],
                        minlength=G * G).reshape(G, G) / self.L
        val = np.maximum(T[:, :, None], T.T[None, :, :])  # [s, i, d] = max(T[s,i], T[i,d])
        idx = np.arange(G)
        val[idx, idx, :] = 0.0
        val[:, idx, idx] = 0.0
        est = val.sum(axis=1) / (G - 2)
        out = T > 2.0 * est
        out[idx, idx] = False
        return out

    def _stages(self, src, dst, nbytes, routing):
        """Every stage of the routing as (flow indices, key per flow, key matrix)."""
        routing = self.check_routing(routing)
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        nr = self.R * self.C
        ru, rv = src // self.N, dst // self.N
        gu, gv = ru // nr, rv // nr
        idx = np.arange(len(src))
        out = []
        local = (gu == gv) & (ru != rv)
        out.append(self._keyed(0, False, idx[local], ru[local], rv[local]))
        inter = gu != gv
        if routing == "minimal" or self.G < 3:
            val = np.zeros(len(src), dtype=bool)
        elif routing == "valiant":
            val = inter.copy()
        else:
            val = self.ugal_valiant_pairs(src, dst, nbytes)[gu, gv] & inter
        for valiant, sel in ((False, inter & ~val), (True, val)):
            f = idx[sel]
            out.append(self._keyed(1, valiant, f, ru[sel], gv[sel]))
            out.append(self._keyed(2, valiant, f, gu[sel], gv[sel]))
            if valiant:
                out.append(self._keyed(3, True, f, gu[sel], gv[sel]))
            out.append(self._keyed(4, valiant, f, rv[sel], gu[sel]))
        return [s for s in out if s is not None]

    def route_paths(self, src, dst, routing: str | None = None,
                    nbytes=None) -> sp.csr_matrix:
        """Flows x links matrix: entry (f, l) = fraction of flow f's bytes crossing link l.

        Includes the injection and ejection links; rows of flows with ``src == dst`` are empty.
        ``ugal`` chooses from the phase's load, so give the flows' ``nbytes`` to get exactly the
        choice :meth:`route` makes; without them every flow counts as the same size.
        """
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        F = len(src)
        off = np.nonzero(src != dst)[0]
        ones = np.ones(len(off))
        P = sp.csr_matrix((np.concatenate([ones, ones]),
                           (np.concatenate([off, off]),
                            np.concatenate([src[off], self.n_nodes + dst[off]]))),
                          shape=(F, self._n_links))
        weights = np.ones(F) if nbytes is None else np.asarray(nbytes, dtype=np.float64)
        for flows, keys, A in self._stages(src, dst, weights, routing):
            sel = sp.csr_matrix((np.ones(len(flows)), (flows, keys)), shape=(F, A.shape[0]))
            P = P + sel @ A
        return P.tocsr()

    def route(self, src, dst, nbytes, routing: str) -> LinkLoads:
        """Spread flows over the links (module docstring); ``flow_hops`` are expected
        router-to-router hops."""
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        nbytes = np.asarray(nbytes, dtype=np.float64)
        n = self.n_nodes
        off = src != dst
        link_bytes = np.bincount(src[off], weights=nbytes[off], minlength=2 * n)
        link_bytes[n:] += np.bincount(dst[off], weights=nbytes[off], minlength=n)[:n]
        link_bytes = np.concatenate([link_bytes[:2 * n], np.zeros(self._n_links - 2 * n)])
        streams = np.concatenate([np.bincount(src[off], minlength=n),
                                  np.bincount(dst[off], minlength=n),
                                  np.zeros(self._n_links - 2 * n, dtype=np.int64)])
        hops = np.zeros(len(src))
        for flows, keys, A in self._stages(src, dst, nbytes, routing):
            nk = A.shape[0]
            w = np.bincount(keys, weights=nbytes[flows], minlength=nk)
            cnt = np.bincount(keys, minlength=nk).astype(np.float64)
            link_bytes += A.T @ w
            ones = A.copy()
            ones.data[:] = 1.0
            streams += np.rint(ones.T @ cnt).astype(np.int64)
            hops[flows] += np.asarray(A.sum(axis=1)).ravel()[keys]
        return LinkLoads(bytes=link_bytes, streams=streams, flow_hops=hops)

    def class_hops(self, src, dst, routing: str | None = None, nbytes=None) -> np.ndarray:
        """Expected hops per flow by link class: array (flows, 3) of row, col, global hops."""
        src = np.asarray(src, dtype=np.int64)
        nbytes = np.ones(len(src)) if nbytes is None else np.asarray(nbytes, dtype=np.float64)
        out = np.zeros((len(src), 3))
        onehot = sp.csr_matrix((np.ones(self._n_links), (np.arange(self._n_links),
                                np.clip(self._class - 2, 0, 2))), shape=(self._n_links, 3))
        onehot = sp.csr_matrix(onehot.multiply((self._class >= 2)[:, None]))
        for flows, keys, A in self._stages(src, dst, nbytes, routing):
            per_key = (A @ onehot).toarray()
            np.add.at(out, flows, per_key[keys])
        return out

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
        return d


# ---- spec parsing -------------------------------------------------------------------------
def _pop_int(spec, key, default, minimum=1):
    from ..specs import parse_int
    v = spec.pop_option(key)
    return default if v is None else parse_int(v, f"dragonfly {key}", minimum=minimum)


def _pop_common(spec) -> dict:
    from ..units import parse_bandwidth, parse_time
    bw = {}
    for cls in ("row", "col", "global", "inject"):
        if (v := spec.pop_option(f"bw_{cls}")) is not None:
            bw[cls] = parse_bandwidth(v, f"{cls} link bandwidth")
    opts = {"bandwidth": bw}
    if (v := spec.pop_option("lat")) is not None:
        opts["hop_latency_s"] = parse_time(v, "per-hop latency")
    if (v := spec.pop_option("global")) is not None:
        from ..specs import parse_int
        opts["global_links"] = parse_int(v, "global links per group pair", minimum=1)
    if (v := spec.pop_option("layout")) is not None:
        opts["layout"] = v.lower()
    return opts


def _check_size(text, groups, routers, nodes, cores, gports, global_links,
                rows=None, cols=None) -> None:
    """Caps on nodes, routers, cores and links, checked before anything is built."""
    from ..validate import check_limit, limit
    check_limit(groups * routers * nodes, "nodes", text)
    if rows is not None:  # every router links to the others of its row and of its column
        check_limit(groups * routers * (rows + cols - 2), "links", text)
    check_limit(groups * routers, "nodes", f"{text} (routers)")
    if cores > limit("cores"):
        check_limit(cores, "cores", text)
    if groups > 1:
        per_pair = global_links if global_links is not None else routers * gports // (groups - 1)
        check_limit(groups * (groups - 1) * min(per_pair, routers * gports), "links", text)


def parse_dragonfly(spec) -> Dragonfly:
    """``dragonfly:groups=G,rows=R,cols=C,nodes=N,cores=K[,global=L][,gports=P]
    [,layout=spread|consecutive|absolute][,bw_row=..,bw_col=..,bw_global=..,bw_inject=..][,lat=..]``.

    Defaults: rows=1, cols=1, nodes=1, cores=1, gports=1 (so ``global`` defaults to
    ``floor(R*C/(G-1))``), layout spread, Aries-like bandwidths.
    """
    if spec.words:
        raise RankmapError(f"bad machine {spec.text!r}: dragonfly takes key=value options, e.g. "
                           "dragonfly:groups=4,rows=2,cols=3,nodes=2,cores=4")
    if "groups" not in spec.options:
        raise RankmapError(f"bad machine {spec.text!r}: give groups=G")
    dims = {k: _pop_int(spec, k, 1) for k in ("groups", "rows", "cols", "nodes", "cores")}
    gports = _pop_int(spec, "gports", 1)
    opts = _pop_common(spec)
    spec.reject_leftovers("dragonfly")
    _check_size(spec.text, dims["groups"], dims["rows"] * dims["cols"], dims["nodes"],
                dims["cores"], gports, opts.get("global_links"), dims["rows"], dims["cols"])
    return Dragonfly(dims["groups"], dims["rows"], dims["cols"], dims["nodes"], dims["cores"],
                     gports=gports, spec=spec.text, **opts)


#: Cray XC (Aries) group: 6 rows (chassis) x 16 columns (slots) of routers, 4 nodes each;
#: Trinity-like nodes with 32 cores. Each Aries has 10 optical links in 5 connectors: a global
#: link here is one connector (two links, 2 x 4.7 GB/s), so 5 global ports per router.
XC = {"rows": 6, "cols": 16, "nodes": 4, "cores": 32, "gports": 5, "cabinet_cols": 12,
      "bw_global": 9.4e9}


def parse_xc(spec) -> Dragonfly:
    """``xc:groups=G[,cabinet_cols=N][,cores=K][,global=L][,...]``: a Cray XC (Aries) dragonfly.

    ``cabinet_cols`` (cabinets per row of the machine room, default 12) only affects Cray
    names ``cX-YcCsSnN``: group = floor(X/2) + Y*floor(N/2).
    """
    if spec.words:
        raise RankmapError(f"bad machine {spec.text!r}: use xc:groups=G, e.g. xc:groups=26")
    if "groups" not in spec.options:
        raise RankmapError(f"bad machine {spec.text!r}: give groups=G, e.g. xc:groups=26")
    groups = _pop_int(spec, "groups", 1)
    cores = _pop_int(spec, "cores", XC["cores"])
    gports = _pop_int(spec, "gports", XC["gports"])
    cab = _pop_int(spec, "cabinet_cols", XC["cabinet_cols"], minimum=2)
    if cab % 2:
        raise RankmapError(f"bad cabinet_cols={cab}: a group is a pair of cabinets, use an even "
                           "number")
    opts = _pop_common(spec)
    opts["bandwidth"] = {"global": XC["bw_global"], **opts["bandwidth"]}
    spec.reject_leftovers("xc")
    _check_size(spec.text, groups, XC["rows"] * XC["cols"], XC["nodes"], cores, gports,
                opts.get("global_links"), XC["rows"], XC["cols"])
    return Dragonfly(groups, XC["rows"], XC["cols"], XC["nodes"], cores, gports=gports,
                     spec=spec.text, name=f"Cray XC {groups} groups", cabinet_cols=cab, **opts)
