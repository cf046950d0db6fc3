"""Fat trees: k-ary n-trees (``fattree:k=16:levels=3``) and trees read from a Slurm
``topology.conf`` (``fattree:topology=FILE``, see :mod:`rankmap.machines.slurm_topology`).

k-ary n-tree: ``k^n`` hosts (the machine's nodes), ``n`` levels of ``k^(n-1)`` switches with
``k`` down and ``k`` up ports (the top level has no up ports). Host ``h`` hangs off level-1
switch ``h // k``. Numbering is in :mod:`rankmap.kernels.fattree`.

Links: every cable is two directed links. Host links (classes ``host-up``, ``host-down``)
are network links here, so they count as hops: two hosts under the same level-1 switch are 2
hops apart, and hosts whose nearest common ancestor is at level m are 2m apart.

Bandwidth: ``bw=`` (default 12.5 GB/s, a 100 Gb/s port) on host links and, divided by
``taper=`` (default 1: full bisection), on every switch-to-switch link.

Routing:

* ``dmodk``: up to the nearest common ancestor level m, taking at level l the up port given by
  digit l-1 of the destination (``(dst // k^(l-1)) mod k``), then the unique way down;
* ``ecmp``: equal split over all up ports at every level (so over all ``k^(m-1)`` common
  ancestors), then down.
"""

from __future__ import annotations

import numpy as np

from ..errors import RankmapError
from ..units import BANDWIDTH_RANGE
from ..validate import as_float, as_int
from .base import Machine

DEFAULT_BANDWIDTH = 12.5e9
DEFAULT_HOP_LATENCY = 100e-9
CLASSES = ("host-up", "host-down", "up", "down")

__all__ = ["TreeMachine", "FatTree", "CLASSES", "DEFAULT_BANDWIDTH", "DEFAULT_HOP_LATENCY",
           "MAX_FAT_TREE_HOSTS", "check_fat_tree_size"]


class TreeMachine(Machine):
    """Tree networks (k-ary n-trees, Slurm topology trees): routed by ``dmodk`` or ``ecmp``
    (:mod:`rankmap.routing.fattree`); links described by class and level."""

    routings = ("dmodk", "ecmp")
    letters = ""


#: hosts of a generated fat tree at most (whatever RANKMAP_MAX_NODES says)
MAX_FAT_TREE_HOSTS = 1 << 22


def check_fat_tree_size(k: int, levels: int) -> None:
    """Refuse a k-ary n-tree of more than :data:`MAX_FAT_TREE_HOSTS` hosts.

    Parameters
    ----------
    k : int
        Ports down per switch (2 or more).
    levels : int
        Switch levels (1 or more).

    Raises
    ------
    RankmapError
        When ``k ** levels`` is over the limit (computed without a huge integer).
    """
    if levels > 22 or k ** levels > MAX_FAT_TREE_HOSTS:
        hosts = f"{k ** levels}" if levels <= 64 else f"{k}^{levels}"
        raise RankmapError(f"fat tree k={k}, levels={levels} has {hosts} hosts: at most "
                           f"{MAX_FAT_TREE_HOSTS}, a fixed limit of generated fat trees "
                           "(RANKMAP_MAX_NODES does not raise it)")


class FatTree(TreeMachine):
    """A k-ary n-tree with ``cores`` cores per host and an optional taper."""

    kind = "fattree"

    def __init__(self, k: int, levels: int, cores_per_node: int = 1,
                 bandwidth: float = DEFAULT_BANDWIDTH, taper: float = 1.0,
                 hop_latency_s: float = DEFAULT_HOP_LATENCY, spec: str | None = None,
                 node_structure=None):
        k = as_int(k, "fat-tree k")
        levels = as_int(levels, "fat-tree levels")
        bandwidth = as_float(bandwidth, "fat-tree link bandwidth (B/s)", *BANDWIDTH_RANGE)
        taper = as_float(taper, "fat-tree taper")
        if k < 2:
            raise RankmapError(f"bad fat-tree k={k}: at least 2 ports down per switch")
        if levels < 1:
            raise RankmapError(f"bad fat-tree levels={levels}: at least 1")
        check_fat_tree_size(k, levels)
        if not taper >= 1.0:
            raise RankmapError(f"bad taper={taper}: must be at least 1 (1 = full bisection)")
        self.k, self.levels = int(k), int(levels)
        H = self.k ** self.levels
        spec = spec or f"fattree:k={k}:levels={levels}:cores={cores_per_node}"
        super().__init__(spec, H, cores_per_node, hop_latency_s, node_structure)
        self.bandwidth, self.taper = float(bandwidth), float(taper)
        S = self.k ** (self.levels - 1)
        n_sw = (self.levels - 1) * S * self.k
        self._n_links = 2 * H + 2 * n_sw
        hosts = np.arange(H, dtype=np.int64)
        lvl = np.repeat(np.arange(1, self.levels), S * self.k)
        w = np.tile(np.repeat(np.arange(S), self.k), self.levels - 1)
        c = np.tile(np.arange(self.k), (self.levels - 1) * S)
        kl1 = self.k ** (lvl - 1)
        parent = (w // kl1 // self.k) * (kl1 * self.k) + (w % kl1) + c * kl1  # level l+1 index
        # vertex ids for CSV: hosts 0..H-1, switch (l, w) = H + (l-1)*S + w
        sw_lo = H + (lvl - 1) * S + w
        sw_hi = H + lvl * S + parent
        self._cls = np.concatenate([np.zeros(H), np.ones(H), np.full(n_sw, 2),
                                    np.full(n_sw, 3)]).astype(np.int64)
        self._level = np.concatenate([np.zeros(2 * H), lvl, lvl]).astype(np.int64)
        self._src = np.concatenate([hosts, H + hosts // self.k, sw_lo, sw_hi])
        self._dst = np.concatenate([H + hosts // self.k, hosts, sw_hi, sw_lo])
        self._bw = np.where(self._cls >= 2, self.bandwidth / self.taper, self.bandwidth)

    def link_columns(self) -> dict[str, np.ndarray]:
        """``class`` (host-up/host-down/up/down), ``level`` (lower end's switch level, 0 for
        host links), ``src``, ``dst`` (hosts: node id; switch (l, w): hosts + (l-1)*k^(n-1) + w)."""
        return {"class": np.array(CLASSES)[self._cls], "level": self._level,
                "src": self._src, "dst": self._dst}

    def coords(self, nodes) -> np.ndarray:
        """Base-k digits of the host id, most significant first (``levels`` columns)."""
        nodes = np.asarray(nodes, dtype=np.int64)
        powers = self.k ** np.arange(self.levels - 1, -1, -1)
        return (nodes[..., None] // powers) % self.k

    def node_ids(self, coords) -> np.ndarray:
        """Host ids of rows of base-k digits (most significant first)."""
        c = np.asarray(coords, dtype=np.int64)
        if c.shape[-1] != self.levels or (c < 0).any() or (c >= self.k).any():
            raise RankmapError(f"fat-tree coordinates are {self.levels} digits in 0-{self.k - 1}")
        return c @ (self.k ** np.arange(self.levels - 1, -1, -1))

    def hop_distance(self, a, b) -> np.ndarray:
        """2m links, m the level of the nearest common ancestor switch (0 for the same host)."""
        from ..kernels.fattree import ktree_hops    # numba: loaded when distances are asked

        a, b = np.broadcast_arrays(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
        return ktree_hops(np.ascontiguousarray(a).reshape(-1), np.ascontiguousarray(b).reshape(-1),
                          self.k).reshape(a.shape)

    def describe(self) -> dict:
        """k, levels, hosts, links, bandwidths (bytes/s) and taper."""
        return {"kind": self.kind, "spec": self.spec, "k": self.k, "levels": self.levels,
                "nodes": self.n_nodes, "cores_per_node": self.cores_per_node,
                "links": self._n_links, "link_bandwidth_Bps": self.bandwidth,
                "taper": self.taper, "hop_latency_s": self.hop_latency_s,
                **self.describe_node()}
