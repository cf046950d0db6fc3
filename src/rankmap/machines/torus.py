"""Torus and mesh networks of 1 to 6 dimensions (Blue Gene, Cray XT/XE style).

Node ids are row-major with the first dimension fastest: ``id = x + X*(y + Y*z)``.
Every node has, per dimension of size > 1, a link in the + and in the - direction
(a mesh lacks the ones that would wrap). Directed link ``(node, dim, dir)`` has the dense
index ``node*2*ndim + 2*dim + (0 if dir == +1 else 1)``; links that do not exist are absent
from the machine's link list.
"""

from __future__ import annotations

import numpy as np

from ..errors import RankmapError
from ..routing import torus_kernels
from .base import LinkLoads, Machine

LETTER_SETS = {1: "X", 2: "XY", 3: "XYZ", 4: "ABCD", 5: "ABCDE", 6: "ABCDEF"}

#: Blue Gene/L-P link bandwidth: 425 MB/s per direction (seed 001, BG/P).
DEFAULT_BANDWIDTH = 425e6
#: per-hop router latency (seconds), a typical torus figure (~100 ns).
DEFAULT_HOP_LATENCY = 100e-9


class Torus(Machine):
    """A torus or mesh: ``dims`` sizes, ``wrap`` per dimension, ``cores_per_node`` cores."""

    kind = "torus"
    routings = ("dor", "adaptive")

    def __init__(self, dims, wrap=None, cores_per_node: int = 1,
                 bandwidth: float = DEFAULT_BANDWIDTH,
                 hop_latency_s: float = DEFAULT_HOP_LATENCY, spec: str | None = None,
                 name: str | None = None):
        dims = tuple(int(d) for d in dims)
        if not 1 <= len(dims) <= 6:
            raise RankmapError(f"a torus has 1 to 6 dimensions, not {len(dims)} ({dims})")
        if any(d <= 0 for d in dims):
            raise RankmapError(f"bad torus shape {'x'.join(map(str, dims))}: sizes must be positive")
        wrap = (True,) * len(dims) if wrap is None else tuple(bool(w) for w in wrap)
        if len(wrap) != len(dims):
            raise RankmapError("wrap must give one flag per dimension")
        spec = spec or ("torus:" + "x".join(map(str, dims)) + f":cores={cores_per_node}")
        n_nodes = int(np.prod(dims))
        super().__init__(spec, n_nodes, cores_per_node, hop_latency_s)
        self.dims = np.array(dims, dtype=np.int64)
        self.wrap = np.array(wrap, dtype=np.bool_)
        self.strides = np.concatenate(([1], np.cumprod(self.dims)[:-1])).astype(np.int64)
        self.letters = LETTER_SETS[len(dims)]
        self.bandwidth = float(bandwidth)
        self.name = name
        if all(wrap):
            self.kind = "torus"
        elif not any(wrap):
            self.kind = "mesh"
        else:
            self.kind = "torus"  # partially wrapped: still routed the same way
        self._build_links()

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.dims)

    # ---- links -------------------------------------------------------------------------
    def _build_links(self) -> None:
        nd = self.ndim
        nodes = np.arange(self.n_nodes, dtype=np.int64)
        c = self.coords(nodes)
        dense_exists = np.zeros((self.n_nodes, nd, 2), dtype=bool)
        dense_dst = np.full((self.n_nodes, nd, 2), -1, dtype=np.int64)
        for d in range(nd):
            n = self.dims[d]
            if n == 1:
                continue
            for k, step in enumerate((1, -1)):
                target = c[:, d] + step
                ok = (target >= 0) & (target < n)
                if self.wrap[d]:
                    ok[:] = True
                    target = target % n
                dense_exists[:, d, k] = ok
                dense_dst[:, d, k] = nodes + (target - c[:, d]) * self.strides[d]
        flat = dense_exists.reshape(-1)
        self._dense_index = np.nonzero(flat)[0]           # link -> dense slot
        self._n_dense = flat.size
        self._src = self._dense_index // (2 * nd)
        self._dim = (self._dense_index // 2) % nd
        self._dir = np.where(self._dense_index % 2 == 0, 1, -1).astype(np.int64)
        self._dst = dense_dst.reshape(-1)[self._dense_index]
        self._bw = np.full(len(self._dense_index), self.bandwidth)

    @property
    def link_dim(self) -> np.ndarray:
        """Dimension (0-based) of every directed link."""
        return self._dim

    @property
    def link_dir(self) -> np.ndarray:
        """Direction (+1 or -1) of every directed link."""
        return self._dir

    def link_columns(self) -> dict[str, np.ndarray]:
        """``src``, ``dim``, ``dir``, ``dst`` of every directed link."""
        return {"src": self._src, "dim": self._dim, "dir": self._dir, "dst": self._dst}

    def link_index(self, node, dim, direction) -> np.ndarray:
        """Index into the link list of directed link(s) (node, dim, dir); -1 where absent."""
        node = np.asarray(node, dtype=np.int64)
        dense = node * 2 * self.ndim + 2 * np.asarray(dim) + np.where(np.asarray(direction) > 0, 0, 1)
        lookup = np.full(self._n_dense, -1, dtype=np.int64)
        lookup[self._dense_index] = np.arange(self.n_links)
        return lookup[dense]

    # ---- nodes -------------------------------------------------------------------------
    def coords(self, nodes) -> np.ndarray:
        nodes = np.asarray(nodes, dtype=np.int64)
        return (nodes[..., None] // self.strides) % self.dims

    def node_ids(self, coords) -> np.ndarray:
        coords = np.asarray(coords, dtype=np.int64)
        if coords.shape[-1] != self.ndim:
            raise RankmapError(f"expected {self.ndim} coordinates per node, got {coords.shape[-1]}")
        bad = (coords < 0) | (coords >= self.dims)
        if bad.any():
            row = coords[np.nonzero(bad.any(axis=-1))[0][0]] if coords.ndim > 1 else coords
            raise RankmapError(f"coordinates {tuple(int(v) for v in row)} are outside the "
                               f"{'x'.join(map(str, self.dims))} machine")
        return coords @ self.strides

    def hop_distance(self, a, b) -> np.ndarray:
        ca, cb = self.coords(a), self.coords(b)
        delta = np.abs(cb - ca)
        delta = np.where(self.wrap, np.minimum(delta, self.dims - delta), delta)
        return delta.sum(axis=-1)

    def node_name(self, node: int) -> str:
        """``<prefix>-x-y-z`` style default name built from coordinates."""
        return "node" + "-".join(str(int(v)) for v in self.coords(np.int64(node)))

    # ---- routing -----------------------------------------------------------------------
    def route(self, src, dst, nbytes, routing: str) -> LinkLoads:
        """Route flows by dimension order (``dor``) or minimal adaptive (``adaptive``).

        See :mod:`rankmap.routing.torus_kernels` for the exact rules.
        """
        routing = self.check_routing(routing)
        src = np.ascontiguousarray(src, dtype=np.int64)
        dst = np.ascontiguousarray(dst, dtype=np.int64)
        nbytes = np.ascontiguousarray(nbytes, dtype=np.float64)
        dense_bytes = np.zeros(self._n_dense, dtype=np.float64)
        dense_streams = np.zeros(self._n_dense, dtype=np.int64)
        hops = np.zeros(len(src), dtype=np.int64)
        kernel = torus_kernels.route_dor if routing == "dor" else torus_kernels.route_adaptive
        kernel(src, dst, nbytes, self.dims, self.strides, self.wrap, dense_bytes, dense_streams,
               hops)
        return LinkLoads(bytes=dense_bytes[self._dense_index],
                         streams=dense_streams[self._dense_index],
                         flow_hops=hops.astype(np.float64))

    def route_paths(self, src, dst, routing: str):
        """Flow x link incidence: a ``scipy.sparse.csr_matrix`` of shape (flows, n_links)
        whose entry (f, l) is the fraction of flow f's bytes that crosses link l.

        Same rules as :meth:`route` (``dor``: 1 on each link of the path; ``adaptive``: the
        equal-split shares), so ``paths.T @ nbytes`` equals ``route(...).bytes``. Flows inside
        a node have an empty row. Kernel: :mod:`rankmap.routing.torus_paths`.
        """
        from scipy.sparse import csr_matrix

        from ..routing.torus_paths import path_incidence

        routing = self.check_routing(routing)
        indptr, slots, frac = path_incidence(src, dst, self.dims, self.strides, self.wrap,
                                             routing)
        if not hasattr(self, "_slot_to_link"):
            lookup = np.full(self._n_dense, -1, dtype=np.int64)
            lookup[self._dense_index] = np.arange(self.n_links)
            self._slot_to_link = lookup
        return csr_matrix((frac, self._slot_to_link[slots], indptr),
                          shape=(len(indptr) - 1, self.n_links))

    def describe(self) -> dict:
        d = {"kind": self.kind, "spec": self.spec, "dims": [int(v) for v in self.dims],
             "wrap": [bool(w) for w in self.wrap], "letters": self.letters,
             "nodes": self.n_nodes, "cores_per_node": self.cores_per_node,
             "links": self.n_links, "link_bandwidth_Bps": self.bandwidth,
             "hop_latency_s": self.hop_latency_s}
        if self.name:
            d["preset"] = self.name
        return d
