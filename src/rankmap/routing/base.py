"""The router interface: how one routing model spreads flows over a machine's links.

A :class:`Router` is bound to one machine. Its single source of truth is :meth:`Router.paths`,
the flows x links matrix of the fraction of each flow's bytes on each directed link; the fast
:meth:`Router.loads` gives the same link bytes (``paths(...).T @ nbytes``) without building
that matrix, plus stream counts and hops per flow. A router whose choices depend on the
phase's own traffic (UGAL) fixes them with :meth:`Router.for_phase`, so that every metric of a
phase reads routes of the same decision.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import RankmapError
from ..validate import id_array

if TYPE_CHECKING:  # scipy.sparse loads in the functions that build matrices
    import scipy.sparse as sp

__all__ = ["LinkLoads", "Router"]


@dataclass
class LinkLoads:
    """Traffic routed onto a machine's directed links for one phase.

    ``bytes[l]`` is the data crossing link ``l`` (bytes, float because adaptive routing splits
    flows); ``streams[l]`` counts the flows with a non-zero share on it; ``flow_hops[f]`` is the
    number of links flow ``f`` crosses (its expected number under a routing that splits).
    ``class_hops`` (dragonfly only, else None) is flows x 3: expected row, column and global
    hops of every flow.
    """

    bytes: np.ndarray
    streams: np.ndarray
    flow_hops: np.ndarray
    class_hops: np.ndarray | None = None


class Router(ABC):
    """A routing model on one machine (subclasses: one per routing name)."""

    #: the routing's name as the CLI spells it (``--routing``)
    name: str = ""
    #: every route is a shortest one (a split route: every share of it): a flow's hops, as
    #: :meth:`loads` counts them, are the machine's ``hop_distance`` between its ends (not so
    #: for a dragonfly's ``minimal`` routing, whose shares may reach another router's global
    #: link)
    minimal: bool = False
    #: :meth:`crosses` and :meth:`route_entries` cost about a hop distance per flow (no route
    #: is built, or a tree's unique one), far less than :meth:`link_sums_by_part`
    cheap_crosses: bool = False

    def __init__(self, machine):
        self.machine = machine

    def checked_flows(self, src, dst, nbytes=None, sizes: bool = False):
        """``src``, ``dst`` (and ``nbytes``) as checked arrays.

        Node ids of this machine, one of each per flow (a bad id read memory outside the
        router's tables, or crashed the process), and with ``sizes`` every size finite and at
        least 0.

        Parameters
        ----------
        src, dst : array of int
            Source and destination node ids (0 .. n_nodes - 1).
        nbytes : array of float, optional
            Bytes (or weights: refinement routes signed ones) of every flow.
        sizes : bool
            Check that ``nbytes`` are sizes: finite, at least 0.

        Returns
        -------
        src, dst : numpy.ndarray of int64
        nbytes : numpy.ndarray of float64 or None

        Raises
        ------
        RankmapError
            A node id outside the machine, arrays of different lengths, or a negative or
            non-finite size.
        """
        n = self.machine.n_nodes
        src = id_array(src, f"{self.name} routing: source nodes", n, copy=False)
        dst = id_array(dst, f"{self.name} routing: destination nodes", n, copy=False)
        if dst.shape != src.shape:
            raise RankmapError(f"{self.name} routing: sources and destinations differ in "
                               "length")
        if nbytes is not None:
            nbytes = np.asarray(nbytes, dtype=np.float64)
            if nbytes.shape != src.shape:
                raise RankmapError(f"{self.name} routing: sources, destinations and sizes "
                                   "differ in length")
            if sizes and nbytes.size and not (np.isfinite(nbytes).all() and nbytes.min() >= 0):
                raise RankmapError(f"{self.name} routing: a flow size is negative or not "
                                   "finite")
        return src, dst, nbytes

    def paths(self, src, dst, nbytes=None) -> sp.csr_matrix:
        """Flows x links incidence of the flows ``src[f] -> dst[f]``.

        Parameters
        ----------
        src, dst : array of int
            Source and destination node ids of every flow.
        nbytes : array of float, optional
            Bytes of every flow; only routers that choose from the phase's load (UGAL) read
            them (None: every flow counts the same).

        Returns
        -------
        scipy.sparse.csr_matrix
            Shape (flows, machine links); entry (f, l) is the fraction (0..1] of flow f's bytes
            that crosses directed link l. Rows of flows inside one node are empty.

        Raises
        ------
        RankmapError
            As :meth:`checked_flows`.
        """
        return self._paths(*self.checked_flows(src, dst, nbytes))

    @abstractmethod
    def _paths(self, src, dst, nbytes=None) -> sp.csr_matrix:
        """:meth:`paths` of checked flows (each router's own)."""

    def path_arrays(self, src, dst, nbytes=None):
        """:meth:`paths` as plain CSR arrays, for kernels that read them directly.

        Routers whose kernels give the arrays skip building a sparse matrix; a row's links
        come in the router's own order (not necessarily sorted).

        Parameters
        ----------
        src, dst : array of int
            Source and destination node ids of every flow.
        nbytes : array of float, optional
            Bytes of every flow (see :meth:`paths`).

        Returns
        -------
        indptr : numpy.ndarray of int64, shape (flows + 1,)
            Row pointers: flow f crosses ``indices[indptr[f]:indptr[f+1]]``.
        indices : numpy.ndarray of int32 or int64
            Directed link of every entry (int32 when the machine has fewer than 2**31 links).
        data : numpy.ndarray of float64
            Fraction (0..1] of the flow's bytes on that link (possibly a read-only view,
            e.g. of a single 1.0 when every flow takes one path).

        Raises
        ------
        RankmapError
            As :meth:`checked_flows`.
        """
        return self._path_arrays(*self.checked_flows(src, dst, nbytes))

    def _path_arrays(self, src, dst, nbytes=None):
        """:meth:`path_arrays` of checked flows (from :meth:`_paths` unless a router has its
        own)."""
        P = self._paths(src, dst, nbytes).tocsr()
        return (P.indptr.astype(np.int64, copy=False), P.indices,
                P.data.astype(np.float64, copy=False))

    def loads(self, src, dst, nbytes, counts=None) -> LinkLoads:
        """Link bytes, streams and hops of the flows, equal to ``paths(...).T @ nbytes``.

        The flows are checked first: node ids of this machine, one size of at least 0 bytes
        (finite) and one multiplicity per flow.

        Parameters
        ----------
        src, dst : array of int
            Source and destination node ids (0 .. n_nodes - 1).
        nbytes : array of float
            Bytes of every flow.
        counts : array of int, optional
            Multiplicity of every flow (see :meth:`_loads`).

        Returns
        -------
        LinkLoads
            Bytes (bytes) and streams (flows) per link, hops per flow (links).

        Raises
        ------
        RankmapError
            A node id outside the machine, arrays of different lengths, or a negative or
            non-finite size.
        """
        src, dst, nbytes = self.checked_flows(src, dst, np.asarray(nbytes, dtype=np.float64),
                                              sizes=True)
        if counts is not None and np.shape(counts) != src.shape:
            raise RankmapError(f"{self.name} routing: sources, destinations, sizes (and "
                               "counts) differ in length")
        return self._loads(src, dst, nbytes, counts)

    def _loads(self, src, dst, nbytes, counts=None) -> LinkLoads:
        """:meth:`loads` of checked flows (routers override this with their kernels).

        Parameters
        ----------
        src, dst : array of int
            Source and destination node ids.
        nbytes : array of float
            Bytes of every flow.
        counts : array of int, optional
            Multiplicity of every flow: entry f stands for ``counts[f]`` identical flows
            (their bytes and streams add; default 1 each). See
            :func:`rankmap.routing.groups.grouped_loads`.

        Returns
        -------
        LinkLoads
            Bytes (bytes) and streams (flows) per link, hops per flow (links).
        """
        nbytes = np.asarray(nbytes, dtype=np.float64)
        weight = nbytes if counts is None else nbytes * counts
        P = self._paths(src, dst, weight).tocsr()
        ones = P.copy()
        ones.data[:] = 1.0
        many = np.ones(P.shape[0]) if counts is None else np.asarray(counts, dtype=np.float64)
        return LinkLoads(bytes=np.asarray(P.T @ weight).ravel(),
                         streams=np.rint(np.asarray(ones.T @ many)).astype(np.int64).ravel(),
                         flow_hops=np.asarray(P.sum(axis=1)).ravel())

    def ends_through(self, link: int):
        """Nodes at which every flow routed over ``link`` starts, or at which every such
        flow ends, when the routing narrows them down (None when it does not).

        Parameters
        ----------
        link : int
            The directed link.

        Returns
        -------
        tuple of (str, numpy.ndarray) or None
            ``("src", nodes)``: every flow with bytes on ``link`` starts at one of ``nodes``;
            ``("dst", nodes)``: every such flow ends at one of them. None here: any flow may.

        Raises
        ------
        RankmapError
            A link that is not one of the machine's.
        """
        return self._ends_through(self.checked_link(link))

    def _ends_through(self, link: int):
        """:meth:`ends_through` of a checked link (None unless a router narrows it down)."""
        return None

    def checked_link(self, link) -> int:
        """``link`` as an int, checked to be one of the machine's directed links.

        Parameters
        ----------
        link : int
            A directed link id.

        Returns
        -------
        int
            The link.

        Raises
        ------
        RankmapError
            Not an integer from 0 to the machine's links - 1.
        """
        if isinstance(link, bool) or not isinstance(link, (int, np.integer)) or \
                not 0 <= int(link) < self.machine.n_links:
            raise RankmapError(f"{self.name} routing: link {link!r} is not one of the "
                               f"machine's (0-{self.machine.n_links - 1})")
        return int(link)

    def crosses(self, src, dst, link: int) -> np.ndarray:
        """Whether each flow ``src[f] -> dst[f]`` puts bytes on directed link ``link``.

        Parameters
        ----------
        src, dst : array of int
            Source and destination node ids of every flow.
        link : int
            The directed link.

        Returns
        -------
        numpy.ndarray
            bool per flow: True when a (fraction of the) flow is routed over ``link``; the
            same as a non-zero entry in that column of :meth:`paths`.

        Raises
        ------
        RankmapError
            As :meth:`checked_flows`, or a link that is not one of the machine's.
        """
        src, dst, _ = self.checked_flows(src, dst)
        return self._crosses(src, dst, self.checked_link(link))

    def _crosses(self, src, dst, link: int) -> np.ndarray:
        """:meth:`crosses` of checked flows (from :meth:`_path_arrays` unless a router has
        its own)."""
        ptr, links, frac = self._path_arrays(src, dst)
        hit = (np.asarray(links) == link) & (np.asarray(frac) > 0)
        rows = np.repeat(np.arange(len(src)), np.diff(ptr))
        return np.bincount(rows[hit], minlength=len(src)) > 0

    def route_entries(self, src, dst) -> np.ndarray:
        """Route entries of every flow, as :meth:`link_sums_by_part` counts them.

        Parameters
        ----------
        src, dst : array of int
            Source and destination node ids of every flow.

        Returns
        -------
        numpy.ndarray
            int64 per flow: the entries of its :meth:`path_arrays` row on hop links (the
            machine's :attr:`~rankmap.machines.Machine.hop_links`; every link when None).

        Raises
        ------
        RankmapError
            As :meth:`checked_flows`.
        """
        src, dst, _ = self.checked_flows(src, dst)
        return self._route_entries(src, dst)

    def _route_entries(self, src, dst) -> np.ndarray:
        """:meth:`route_entries` of checked flows (from :meth:`_path_arrays` unless a router
        has its own)."""
        ptr, links, _frac = self._path_arrays(src, dst)
        ptr = np.asarray(ptr, dtype=np.int64)
        hop = self.machine.hop_links
        if hop is None:
            return np.diff(ptr)
        counted = np.asarray(hop, dtype=bool)[np.asarray(links)]
        return np.diff(np.concatenate([[0], np.cumsum(counted, dtype=np.int64)])[ptr])

    def link_sums_by_part(self, src, dst, weight, part, n_parts: int):
        """Signed weights of a few flows summed on every link of their routes, per part.

        The exact change of link loads when some flows move is this sum over their old routes
        (negative weights) and new routes (positive weights), each part (a phase) apart.

        Parameters
        ----------
        src, dst : numpy.ndarray of int
            Source and destination node of every flow.
        weight : numpy.ndarray of float64
            Signed weight of every flow (bytes; negative to take a flow off).
        part : numpy.ndarray of int64
            Part (0 .. n_parts-1) of every flow; flows come grouped by part, in part order
            (ValueError otherwise).
        n_parts : int
            Number of parts.

        Returns
        -------
        keys : numpy.ndarray of int64
            Sorted distinct ``part * n_links + link`` of every link on any of the routes
            (a link whose sum is 0 is kept).
        sums : numpy.ndarray of float64
            Each key's sum of ``fraction * weight``, added in flow order and, within a flow,
            in route order (the order of :meth:`path_arrays`).
        flow_hops : numpy.ndarray of float64
            Hops of every flow, as :meth:`loads` counts them (the machine's
            :attr:`~rankmap.machines.Machine.hop_links`).
        flow_entries : numpy.ndarray of int64
            Route entries of every flow: the hop links its bytes (or a share of them) cross.
            A single-path route has as many as it has hops; a route split over parallel paths
            has many more, and summing it costs that many.

        Raises
        ------
        RankmapError
            As :meth:`checked_flows` (node ids; the weights may be negative).
        """
        src, dst, _ = self.checked_flows(src, dst)
        return self._link_sums_by_part(src, dst, weight, part, n_parts)

    def _link_sums_by_part(self, src, dst, weight, part, n_parts: int):
        """:meth:`link_sums_by_part` of checked flows (from :meth:`_path_arrays` unless a
        router has its own kernel)."""
        from ..kernels.link_sums import row_link_sums   # numba: loaded when a search runs

        p_ptr, p_links, p_frac = self._path_arrays(src, dst, weight)
        part = np.ascontiguousarray(part, dtype=np.int64)
        if len(part) > 1 and np.any(part[1:] < part[:-1]):
            raise ValueError("link_sums_by_part needs the flows grouped by part, in order")
        hop = self.machine.hop_links
        return row_link_sums(np.ascontiguousarray(p_ptr, dtype=np.int64),
                             np.ascontiguousarray(p_links),
                             np.ascontiguousarray(p_frac, dtype=np.float64),
                             np.ascontiguousarray(weight, dtype=np.float64), part,
                             self.machine.n_links,
                             np.zeros(1, dtype=np.bool_) if hop is None
                             else np.ascontiguousarray(hop, dtype=np.bool_), hop is not None)

    def for_phase(self, src, dst, nbytes) -> "Router":
        """The router with its choices fixed for this phase's flows (``self`` unless the
        routing decides from the traffic).

        Parameters
        ----------
        src, dst : array of int
            Source and destination node ids of the whole phase.
        nbytes : array of float
            Bytes of every flow.

        Returns
        -------
        Router
            A router whose :meth:`paths` and :meth:`loads` give the same routes for any
            subset of the phase's flows.
        """
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.machine.spec!r})"
