"""The interface every network model implements.

A machine knows its nodes (integer ids, coordinates), cores per node and its directed links
(source node, destination node, bandwidth), and names the routing models it supports; how
a routing spreads flows over the links is a :class:`rankmap.routing.Router`'s job. It knows
nothing about applications or placements.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
import numpy as np

from ..errors import RankmapError
from .node_structure import NodeStructure

__all__ = ["Machine", "GridMachine"]


class Machine(ABC):
    """A parallel machine's network: nodes, cores, directed links and routing models."""

    kind: str = "machine"
    #: routing model names this machine understands; the first is the default.
    routings: tuple[str, ...] = ()
    #: one letter per coordinate, used by rank-order mappings ("XYZ"); "" when not meaningful.
    letters: str = ""

    def __init__(self, spec: str, n_nodes: int, cores_per_node: int,
                 hop_latency_s: float = 0.0, node_structure: NodeStructure | None = None):
        if cores_per_node <= 0:
            raise RankmapError(f"bad cores per node {cores_per_node} in {spec!r}: must be positive")
        from ..validate import check_limit
        check_limit(int(n_nodes), "nodes", spec)
        check_limit(int(cores_per_node), "cores", spec)
        self.spec = spec
        self.n_nodes = int(n_nodes)
        self.cores_per_node = int(cores_per_node)
        self.hop_latency_s = float(hop_latency_s)
        if node_structure is not None and node_structure.n_cores != self.cores_per_node:
            raise RankmapError(f"node structure {node_structure.source!r} has "
                               f"{node_structure.n_cores} cores, the machine {spec!r} "
                               f"{self.cores_per_node} per node")
        #: packages, NUMA domains and cores inside every node (None: not described)
        self.node_structure = node_structure

    # ---- links -------------------------------------------------------------------------
    # Every machine builds three parallel arrays when it is constructed: ``_src`` and
    # ``_dst`` (int64 vertex ids of each directed link's ends) and ``_bw`` (bytes/s).

    @property
    def n_links(self) -> int:
        """Number of directed links in the whole machine."""
        return len(self._src)

    @property
    def link_src(self) -> np.ndarray:
        """Source vertex of every directed link (int64, length ``n_links``): a node id, or
        what the machine's module docstring says for switch/router ends."""
        return self._src

    @property
    def link_dst(self) -> np.ndarray:
        """Destination vertex of every directed link (int64, length ``n_links``)."""
        return self._dst

    @property
    def link_bandwidth(self) -> np.ndarray:
        """Bandwidth of every directed link in bytes per second (float64)."""
        return self._bw

    def link_columns(self) -> dict[str, np.ndarray]:
        """Columns describing every link for CSV output (at least ``src`` and ``dst``)."""
        return {"src": self.link_src, "dst": self.link_dst}

    # ---- nodes -------------------------------------------------------------------------
    @property
    def n_cores(self) -> int:
        """Total cores in the machine."""
        return self.n_nodes * self.cores_per_node

    @abstractmethod
    def coords(self, nodes: np.ndarray) -> np.ndarray:
        """Coordinates of the given node ids, shape (len(nodes), len(letters))."""

    @abstractmethod
    def node_ids(self, coords: np.ndarray) -> np.ndarray:
        """Node ids of the given coordinates (rows); raises RankmapError when out of range."""

    @abstractmethod
    def hop_distance(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Links on a shortest path between node ids ``a`` and ``b`` (elementwise, int64)."""

    def geometry(self, nodes: np.ndarray) -> np.ndarray:
        """Coordinates that geometric mappers (rcb, greedy) split and walk, one row per node.

        Default: :meth:`coords`. A dragonfly, say, returns (col, row, group) so that recursive
        bisection treats the group as z and router row/column as y/x (seed 002).
        """
        return self.coords(nodes)

    def node_name(self, node: int) -> str:
        """A default host name for a node: ``node<id>``."""
        return f"node{int(node)}"

    # ---- routing -----------------------------------------------------------------------
    def check_routing(self, routing: str | None) -> str:
        """Return the routing name to use (the default when None); error on an unknown one."""
        if routing is None:
            return self.routings[0]
        if routing not in self.routings:
            raise RankmapError(f"unknown routing {routing!r} for a {self.kind}: "
                               f"choose from {', '.join(self.routings)}")
        return routing

    def describe_node(self) -> dict:
        """``{"node": {...}}`` describing the node structure, or ``{}`` without one."""
        return {} if self.node_structure is None else {"node": self.node_structure.describe()}

    @abstractmethod
    def describe(self) -> dict:
        """A JSON-ready description (kind, shape, cores, bandwidths)."""


class GridMachine(Machine):
    """A machine whose nodes form a Cartesian grid: a torus or a mesh (wrap per dimension).

    Subclasses set ``dims`` (int64 sizes), ``wrap`` (bool per dimension), ``strides``,
    ``letters`` (one per dimension) and the per-link ``link_dim`` / ``link_dir``.
    Capabilities that need a grid (rank orders, Blue Gene mapfiles, bisection, per-dimension
    link maps) test ``isinstance(machine, GridMachine)``.
    """

    dims: np.ndarray
    wrap: np.ndarray

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.dims)
