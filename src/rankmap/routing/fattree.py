"""Routers of tree networks: :class:`DmodK` (up port = digit of the destination) and
:class:`ECMP` (equal split over all up ports); on a tree read from a Slurm topology file
there is one path per pair and both give it. Rules: :mod:`rankmap.kernels.fattree`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..kernels import fattree as fk
from ..machines.fattree import FatTree
from .base import LinkLoads, Router

if TYPE_CHECKING:  # scipy.sparse loads in the functions that build matrices
    import scipy.sparse as sp

__all__ = ["DmodK", "ECMP"]


class _TreeRouter(Router):
    ecmp = False
    minimal = True
    cheap_crosses = True

    def _rows(self, src, dst):
        m = self.machine
        src = np.ascontiguousarray(src, dtype=np.int64)
        dst = np.ascontiguousarray(dst, dtype=np.int64)
        if isinstance(m, FatTree):
            return fk.ktree_rows(src, dst, m.k, m.levels, self.ecmp)
        return fk.tree_rows(src, dst, m.parent, m.depth, m.up_link, m.down_link)

    def _paths(self, src, dst, nbytes=None) -> sp.csr_matrix:
        """Flows x links fractions (see :class:`Router`); host links included."""
        import scipy.sparse as sp
        indptr, links, frac = self._rows(src, dst)
        return sp.csr_matrix((frac, links, indptr), shape=(len(indptr) - 1, self.machine.n_links))

    def _path_arrays(self, src, dst, nbytes=None):
        """The rows of :meth:`paths` as the kernels give them, without a sparse matrix (see
        :meth:`Router.path_arrays`)."""
        return self._rows(src, dst)

    def _crosses(self, src, dst, link: int) -> np.ndarray:
        """Whether each flow puts bytes on ``link`` (see :meth:`Router.crosses`); on a k-ary
        n-tree walked without building the rows."""
        m = self.machine
        if not isinstance(m, FatTree):
            return super()._crosses(src, dst, link)
        return fk.ktree_crosses(np.ascontiguousarray(src, dtype=np.int64),
                                np.ascontiguousarray(dst, dtype=np.int64), m.k, m.levels,
                                self.ecmp, int(link))

    def _route_entries(self, src, dst) -> np.ndarray:
        """Route entries of every flow (see :meth:`Router.route_entries`); on a k-ary n-tree
        counted without building the rows."""
        m = self.machine
        if not isinstance(m, FatTree):
            return super()._route_entries(src, dst)
        return fk.ktree_entry_counts(np.ascontiguousarray(src, dtype=np.int64),
                                     np.ascontiguousarray(dst, dtype=np.int64), m.k, self.ecmp)

    def _loads(self, src, dst, nbytes, counts=None) -> LinkLoads:
        """Link bytes and streams; ``flow_hops`` counts host links too (``counts``: see
        :meth:`Router.loads`)."""
        m = self.machine
        nbytes = np.ascontiguousarray(nbytes, dtype=np.float64)
        counts = (np.ones(len(nbytes), dtype=np.int64) if counts is None
                  else np.ascontiguousarray(counts, dtype=np.int64))
        if isinstance(m, FatTree):
            link_bytes = np.zeros(m.n_links)
            streams = np.zeros(m.n_links, dtype=np.int64)
            hops = np.zeros(len(nbytes))
            fk.ktree_accumulate(np.ascontiguousarray(src, dtype=np.int64),
                                np.ascontiguousarray(dst, dtype=np.int64), nbytes, counts, m.k,
                                m.levels, self.ecmp, link_bytes, streams, hops)
            return LinkLoads(bytes=link_bytes, streams=streams, flow_hops=hops)
        indptr, links, frac = self._rows(src, dst)
        per_flow = np.diff(indptr)
        per_entry = np.repeat(nbytes * counts, per_flow) * frac
        link_bytes = np.bincount(links, weights=per_entry, minlength=m.n_links)
        streams = np.rint(np.bincount(links, weights=np.repeat(counts, per_flow),
                                      minlength=m.n_links)).astype(np.int64)
        hops = np.bincount(np.repeat(np.arange(len(per_flow)), per_flow), weights=frac,
                           minlength=len(per_flow))
        return LinkLoads(bytes=link_bytes, streams=streams, flow_hops=hops)


class DmodK(_TreeRouter):
    """d-mod-k: at level l the up port given by digit l-1 of the destination."""

    name = "dmodk"

    def _ends_through(self, link: int):
        """The hosts every flow over ``link`` starts at, or ends at, whichever are fewer
        (see :meth:`Router.ends_through`): on a k-ary n-tree a down link carries the flows
        to one host (:func:`rankmap.kernels.fattree.dmodk_ends`); elsewhere None.

        Parameters
        ----------
        link : int
            The directed link.

        Returns
        -------
        tuple of (str, numpy.ndarray) or None
            ``("src", hosts)`` or ``("dst", hosts)``, int64 in increasing order.
        """
        m = self.machine
        if not isinstance(m, FatTree):
            return None
        return fk.dmodk_ends(int(link), m.k, m.levels)


class ECMP(_TreeRouter):
    """Equal split over all up ports at every level."""

    name = "ecmp"
    ecmp = True
