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
from ..validate import read_only_view
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
        from ..units import MAX_TIME
        from ..validate import as_float, as_int, check_limit
        cores_per_node = as_int(cores_per_node, f"cores per node in {spec!r}", minimum=1)
        hop_latency_s = as_float(hop_latency_s, f"per-hop latency (s) in {spec!r}", minimum=0,
                                 maximum=MAX_TIME)
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
    def hop_links(self) -> np.ndarray | None:
        """Which links count as a hop (bool per link), or None when every link does.

        A route's hops are the links on it that count; links between a node and its own
        router (a dragonfly's injection and ejection links) carry bytes but are not hops.
        """
        return None

    @property
    def link_src(self) -> np.ndarray:
        """Source vertex of every directed link (int64, length ``n_links``, read-only): a
        node id, or what the machine's module docstring says for switch/router ends."""
        return read_only_view(self._src)

    @property
    def link_dst(self) -> np.ndarray:
        """Destination vertex of every directed link (int64, length ``n_links``, read-only)."""
        return read_only_view(self._dst)

    @property
    def link_bandwidth(self) -> np.ndarray:
        """Bandwidth of every directed link in bytes per second (float64, read-only)."""
        return read_only_view(self._bw)

    def link_columns(self) -> dict[str, np.ndarray]:
        """Columns naming every link, for CSV output and for matching counters files.

        Returns
        -------
        dict of str to numpy.ndarray
            Column name -> one value per directed link (length ``n_links``), at least ``src``
            and ``dst`` (int64 vertex ids); machines add their own (``dim``, ``dir`` on a
            torus; ``class``, routers on a dragonfly).
        """
        return {"src": self.link_src, "dst": self.link_dst}

    # ---- nodes -------------------------------------------------------------------------
    @property
    def n_cores(self) -> int:
        """Total cores in the machine."""
        return self.n_nodes * self.cores_per_node

    @abstractmethod
    def coords(self, nodes: np.ndarray) -> np.ndarray:
        """Coordinates of nodes.

        Parameters
        ----------
        nodes : int or numpy.ndarray
            Node ids (0 .. n_nodes - 1).

        Returns
        -------
        numpy.ndarray
            int64 coordinates, one row per node (one column per coordinate: the machine's
            letters on a grid, ``[group, row, col, node]`` on a dragonfly); a single row for
            a single id.
        """

    @abstractmethod
    def node_ids(self, coords: np.ndarray) -> np.ndarray:
        """Node ids of coordinates (the inverse of :meth:`coords`).

        Parameters
        ----------
        coords : numpy.ndarray
            int coordinates, one row per node.

        Returns
        -------
        numpy.ndarray
            int64 node id of every row.

        Raises
        ------
        RankmapError
            A coordinate is out of range.
        """

    @abstractmethod
    def hop_distance(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Hops between nodes: links on a shortest path, elementwise.

        Parameters
        ----------
        a, b : numpy.ndarray
            Node ids (broadcast against each other).

        Returns
        -------
        numpy.ndarray
            int64 number of network links a message crosses (0 for a node to itself; what
            counts as a hop is the machine's: router-to-router links on a dragonfly, host
            links too on a fat tree).
        """

    def geometry(self, nodes: np.ndarray) -> np.ndarray:
        """Coordinates that geometric mappers (rcb, greedy) split and walk, one row per node.

        Default: :meth:`coords`. A dragonfly, say, returns (col, row, group) so that recursive
        bisection treats the group as z and router row/column as y/x (seed 002).

        Parameters
        ----------
        nodes : numpy.ndarray
            Node ids.

        Returns
        -------
        numpy.ndarray
            int64 coordinates, one row per node, in the order mappers split them.
        """
        return self.coords(nodes)

    def node_name(self, node: int) -> str:
        """A default host name for a node.

        Parameters
        ----------
        node : int
            Node id.

        Returns
        -------
        str
            ``node<id>`` here; grid machines use coordinates (``node<x>-<y>-<z>``).
        """
        return f"node{int(node)}"

    # ---- routing -----------------------------------------------------------------------
    def check_routing(self, routing: str | None) -> str:
        """The routing to use.

        Parameters
        ----------
        routing : str or None
            A routing name (``dor``, ``minimal``, ...), or None for the machine's default.

        Returns
        -------
        str
            ``routing``, or the default (the first of :attr:`routings`) when None.

        Raises
        ------
        RankmapError
            A routing this machine does not support (the message lists the supported ones).
        """
        if routing is None:
            return self.routings[0]
        if routing not in self.routings:
            raise RankmapError(f"unknown routing {routing!r} for a {self.kind}: "
                               f"choose from {', '.join(self.routings)}")
        return routing

    def describe_node(self) -> dict:
        """``{"node": {...}}`` describing the node structure, or ``{}`` without one.

        Returns
        -------
        dict
            ``{"node": NodeStructure.describe()}``, or ``{}`` without a node structure.
        """
        return {} if self.node_structure is None else {"node": self.node_structure.describe()}

    @abstractmethod
    def describe(self) -> dict:
        """A JSON-ready description of the machine.

        Returns
        -------
        dict
            Kind, shape, cores per node and link bandwidths (bytes/s), plain JSON values.
        """



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
