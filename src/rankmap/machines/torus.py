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
from ..units import BANDWIDTH_RANGE
from ..validate import as_float, as_int
from .base import GridMachine

__all__ = ["LETTER_SETS", "DEFAULT_BANDWIDTH", "DEFAULT_HOP_LATENCY", "Torus"]

LETTER_SETS = {1: "X", 2: "XY", 3: "XYZ", 4: "ABCD", 5: "ABCDE", 6: "ABCDEF"}

#: default link bandwidth: Blue Gene/P's 425 MB/s per direction (seed 001; the bgl preset has 175).
DEFAULT_BANDWIDTH = 425e6
#: per-hop router latency (seconds), a typical torus figure (~100 ns).
DEFAULT_HOP_LATENCY = 100e-9


def _flag(value) -> bool:
    """A wrap flag: True/False (or 1/0); anything else, e.g. the string "no", is refused
    rather than read as Python's truth of it."""
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, np.integer))
                                               and value in (0, 1)):
        return bool(value)
    raise RankmapError(f"bad wrap flag {value!r}: give True or False per dimension")


class Torus(GridMachine):
    """A torus or mesh: ``dims`` sizes, ``wrap`` per dimension, ``cores_per_node`` cores."""

    kind = "torus"
    routings = ("dor", "adaptive")

    def __init__(self, dims, wrap=None, cores_per_node: int = 1,
                 bandwidth: float = DEFAULT_BANDWIDTH,
                 hop_latency_s: float = DEFAULT_HOP_LATENCY, spec: str | None = None,
                 name: str | None = None, node_structure=None):
        dims = tuple(as_int(d, "torus size") for d in dims)
        if not 1 <= len(dims) <= 6:
            raise RankmapError(f"a torus has 1 to 6 dimensions, not {len(dims)} ({dims})")
        if any(d <= 0 for d in dims):
            raise RankmapError(f"bad torus shape {'x'.join(map(str, dims))}: sizes must be positive")
        wrap = (True,) * len(dims) if wrap is None else tuple(_flag(w) for w in wrap)
        if len(wrap) != len(dims):
            raise RankmapError("wrap must give one flag per dimension")
        spec = spec or ("torus:" + "x".join(map(str, dims)) + f":cores={cores_per_node}")
        n_nodes = int(np.prod(dims))
        super().__init__(spec, n_nodes, cores_per_node, hop_latency_s, node_structure)
        self.dims = np.array(dims, dtype=np.int64)
        self.wrap = np.array(wrap, dtype=np.bool_)
        self.strides = np.concatenate(([1], np.cumprod(self.dims)[:-1])).astype(np.int64)
        for fixed in (self.dims, self.wrap, self.strides):
            fixed.flags.writeable = False
        self.letters = LETTER_SETS[len(dims)]
        # the command line's physical range, for machines built in Python too (1e-320 B/s
        # made predicted times NaN)
        self.bandwidth = as_float(bandwidth, f"link bandwidth (B/s) of {spec!r}",
                                  *BANDWIDTH_RANGE)
        self.name = name
        if all(wrap):
            self.kind = "torus"
        elif not any(wrap):
            self.kind = "mesh"
        else:
            self.kind = "torus"  # partially wrapped: still routed the same way
        self._build_links()

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
        lookup = np.full(self._n_dense, -1, dtype=np.int64)
        lookup[self._dense_index] = np.arange(len(self._dense_index))
        self._link_of_slot = lookup

    @property
    def n_dense_slots(self) -> int:
        """Size of the dense (node, dim, dir) slot space: ``n_nodes * 2 * ndim``."""
        return self._n_dense

    @property
    def dense_slot_of_link(self) -> np.ndarray:
        """Dense slot ``node*2*ndim + 2*dim + (0 if + else 1)`` of every link (int64)."""
        return self._dense_index

    @property
    def link_of_dense_slot(self) -> np.ndarray:
        """Link id of every dense slot, -1 where the link does not exist (int64)."""
        return self._link_of_slot

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
        """Positions in the link list of directed links given by their source and direction.

        Parameters
        ----------
        node : int or numpy.ndarray
            Source node ids.
        dim : int or numpy.ndarray
            Dimension of the link (0 = X).
        direction : int or numpy.ndarray
            +1 or -1 along that dimension.

        Returns
        -------
        numpy.ndarray
            int64 link index of every (node, dim, direction); -1 where the link does not exist
            (the open faces of a mesh).
        """
        node = np.asarray(node, dtype=np.int64)
        dense = node * 2 * self.ndim + 2 * np.asarray(dim) + np.where(np.asarray(direction) > 0, 0, 1)
        return self._link_of_slot[dense]

    # ---- nodes -------------------------------------------------------------------------
    def coords(self, nodes) -> np.ndarray:
        """Grid coordinates, first dimension fastest in the node id (design.md)."""
        nodes = np.asarray(nodes, dtype=np.int64)
        return (nodes[..., None] // self.strides) % self.dims

    def node_ids(self, coords) -> np.ndarray:
        """Node id = sum of coordinate x stride; out-of-range coordinates are an error."""
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
        """Sum over dimensions of |delta|, the shorter way round on wrapped dimensions."""
        a, b = np.broadcast_arrays(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
        if a.size >= 64:      # compiled: no (n, ndim) coordinate temporaries
            from ..kernels.torus import hop_distances
            return hop_distances(np.ascontiguousarray(a).reshape(-1),
                                 np.ascontiguousarray(b).reshape(-1), self.dims.astype(np.int64),
                                 self.strides, self.wrap).reshape(a.shape)
        ca, cb = self.coords(a), self.coords(b)
        delta = np.abs(cb - ca)
        delta = np.where(self.wrap, np.minimum(delta, self.dims - delta), delta)
        return delta.sum(axis=-1)

    def node_name(self, node: int) -> str:
        """``<prefix>-x-y-z`` style default name built from coordinates."""
        return "node" + "-".join(str(int(v)) for v in self.coords(np.int64(node)))

    def describe(self) -> dict:
        """Kind, spec, dims, wrap, letters, nodes, cores and link bandwidth (bytes/s)."""

        d = {"kind": self.kind, "spec": self.spec, "dims": [int(v) for v in self.dims],
             "wrap": [bool(w) for w in self.wrap], "letters": self.letters,
             "nodes": self.n_nodes, "cores_per_node": self.cores_per_node,
             "links": self.n_links, "link_bandwidth_Bps": self.bandwidth,
             "hop_latency_s": self.hop_latency_s}
        if self.name:
            d["preset"] = self.name
        d.update(self.describe_node())
        return d
