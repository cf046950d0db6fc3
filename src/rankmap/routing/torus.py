"""Routers of tori and meshes: dimension order (:class:`DOR`) and minimal adaptive
(:class:`Adaptive`); the rules are in :mod:`rankmap.kernels.torus`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..kernels import torus as tk
from ..kernels.template_cache import TEMPLATE_CACHE_ENTRIES, TemplateCache
from .base import LinkLoads, Router

if TYPE_CHECKING:  # scipy.sparse loads in the functions that build matrices
    import scipy.sparse as sp

__all__ = ["DOR", "Adaptive"]


class _GridRouter(Router):
    """Shared parts: kernels fill dense per-(node, dim, dir) arrays, mapped to link ids."""

    minimal = True

    def _dense_loads(self, kernel, src, dst, nbytes, counts) -> LinkLoads:
        m = self.machine
        src = np.ascontiguousarray(src, dtype=np.int64)
        dst = np.ascontiguousarray(dst, dtype=np.int64)
        nbytes = np.ascontiguousarray(nbytes, dtype=np.float64)
        counts = (np.ones(len(src), dtype=np.int64) if counts is None
                  else np.ascontiguousarray(counts, dtype=np.int64))
        dense_bytes = np.zeros(m.n_dense_slots, dtype=np.float64)
        dense_streams = np.zeros(m.n_dense_slots, dtype=np.int64)
        hops = np.zeros(len(src), dtype=np.int64)
        kernel(src, dst, nbytes, counts, m.dims, m.strides, m.wrap, dense_bytes, dense_streams,
               hops)
        idx = m.dense_slot_of_link
        return LinkLoads(bytes=dense_bytes[idx], streams=dense_streams[idx],
                         flow_hops=hops.astype(np.float64))

    def _paths(self, src, dst, nbytes=None) -> sp.csr_matrix:
        """The routes (see :class:`Router`), from :meth:`path_arrays`."""
        import scipy.sparse as sp
        indptr, links, frac = self._path_arrays(src, dst, nbytes)
        return sp.csr_matrix((np.ascontiguousarray(frac), links, indptr),
                             shape=(len(indptr) - 1, self.machine.n_links))


class DOR(_GridRouter):
    """Dimension-order routing: dimensions in order, the shorter way round (ties +)."""

    name = "dor"
    #: a walk's crossing of one link is decided per dimension (:meth:`crosses`)
    cheap_crosses = True

    def _path_arrays(self, src, dst, nbytes=None):
        """One path per flow, fraction 1 on each of its links, in walk order (see
        :meth:`Router.path_arrays`); the fractions are a read-only view of a single 1.0 (no
        memory per entry)."""
        m = self.machine
        return tk.dor_paths(src, dst, m.dims, m.strides, m.wrap,
                            link_of_slot=m.link_of_dense_slot)

    def _crosses(self, src, dst, link: int) -> np.ndarray:
        """Whether each flow's walk takes ``link`` (see :meth:`Router.crosses`), walked
        without building the paths."""
        m = self.machine
        return tk.dor_crosses(np.ascontiguousarray(src, dtype=np.int64),
                              np.ascontiguousarray(dst, dtype=np.int64), m.dims, m.strides,
                              m.wrap, int(m.dense_slot_of_link[link]))

    def _route_entries(self, src, dst) -> np.ndarray:
        """Route entries of every flow (see :meth:`Router.route_entries`): one per hop of its
        walk, its hop distance."""
        return np.asarray(self.machine.hop_distance(src, dst), dtype=np.int64)

    def _ends_through(self, link: int):
        """The smaller of the two node sets that flows over ``link`` start or end at (see
        :meth:`Router.ends_through`). A walk crosses a link of dimension k after it has
        set dimensions 0..k-1 to the destination's coordinates and before it leaves the
        source's coordinates in dimensions k+1..: its source agrees with the link's node in
        dimensions k+1.., its destination in dimensions 0..k-1.

        Parameters
        ----------
        link : int
            The directed link.

        Returns
        -------
        tuple of (str, numpy.ndarray)
            ``("src", nodes)`` or ``("dst", nodes)``, int64 node ids in increasing order.
        """
        m = self.machine
        k = int(m.link_dim[link])
        dims, strides = m.dims.astype(np.int64), m.strides.astype(np.int64)
        at = m.coords(np.array([int(m.link_src[link])], dtype=np.int64))[0]
        n_src = int(np.prod(dims[:k + 1]))            # free: dimensions 0..k
        n_dst = int(np.prod(dims[k:]))                # free: dimensions k..
        if n_src <= n_dst:
            fixed = int(np.dot(at[k + 1:], strides[k + 1:]))
            return "src", fixed + np.arange(n_src, dtype=np.int64)
        fixed = int(np.dot(at[:k], strides[:k]))
        return "dst", fixed + strides[k] * np.arange(n_dst, dtype=np.int64)

    def _link_sums_by_part(self, src, dst, weight, part, n_parts: int):
        """Signed weights summed per part and link (see :meth:`Router.link_sums_by_part`),
        the same sums in the same order, walked without building the paths (one link
        per hop: the route entries are the hops)."""
        m = self.machine
        hop = m.hop_links
        keys, sums, hops = tk.dor_link_sums(np.ascontiguousarray(src, dtype=np.int64),
                                np.ascontiguousarray(dst, dtype=np.int64),
                                np.ascontiguousarray(weight, dtype=np.float64),
                                np.ascontiguousarray(part, dtype=np.int64), m.n_links,
                                m.dims, m.strides, m.wrap, m.link_of_dense_slot,
                                np.zeros(1, dtype=np.bool_) if hop is None
                                else np.ascontiguousarray(hop, dtype=np.bool_),
                                hop is not None)
        return keys, sums, hops, np.rint(hops).astype(np.int64)

    def _loads(self, src, dst, nbytes, counts=None) -> LinkLoads:
        """Link bytes, streams, hops along the same walk as :meth:`paths` (``counts``: see
        :meth:`Router.loads`)."""
        return self._dense_loads(tk.route_dor, src, dst, nbytes, counts)


class Adaptive(_GridRouter):
    """Minimal adaptive routing: equal split over the productive links at every hop.

    Its :meth:`path_arrays` keeps the templates it works out (by offset code, up to
    ``template_entries`` link entries: :class:`~rankmap.kernels.template_cache.TemplateCache`),
    so a search routing a few moved flows per step computes each offset's split once; 0
    keeps none. The routes are the same either way.

    Parameters
    ----------
    machine : GridMachine
        The torus or mesh.
    template_entries : int
        Link entries of templates kept at most
        (:data:`~rankmap.kernels.template_cache.TEMPLATE_CACHE_ENTRIES`).
    """

    name = "adaptive"

    def __init__(self, machine, template_entries: int = TEMPLATE_CACHE_ENTRIES):
        super().__init__(machine)
        self.templates = TemplateCache(template_entries)

    def _path_arrays(self, src, dst, nbytes=None):
        """The split shares of every flow (see :meth:`Router.path_arrays`)."""
        m = self.machine
        return tk.adaptive_paths(src, dst, m.dims, m.strides, m.wrap,
                                 link_of_slot=m.link_of_dense_slot, cache=self.templates)

    def _loads(self, src, dst, nbytes, counts=None) -> LinkLoads:
        """Link bytes, streams, expected hops from the same templates as :meth:`paths`
        (``counts``: see :meth:`Router.loads`)."""
        return self._dense_loads(tk.route_adaptive, src, dst, nbytes, counts)

    def _link_sums_by_part(self, src, dst, weight, part, n_parts: int):
        """Signed weights summed per part and link (see :meth:`Router.link_sums_by_part`),
        with every flow's hops the minimal hop count, as :meth:`loads` counts them (a
        template's shares summed, 1/3 and the like, can miss the whole number by a rounding).

        Parameters
        ----------
        src, dst : numpy.ndarray of int
            Source and destination node of every flow.
        weight : numpy.ndarray of float64
            Signed weight of every flow (bytes).
        part : numpy.ndarray of int64
            Part of every flow (grouped by part, in part order).
        n_parts : int
            Number of parts.

        Returns
        -------
        tuple of numpy.ndarray
            ``(keys, sums, flow_hops, flow_entries)`` as :meth:`Router.link_sums_by_part`.
        """
        keys, sums, _shares, entries = super()._link_sums_by_part(src, dst, weight, part,
                                                                 n_parts)
        hops = np.asarray(self.machine.hop_distance(src, dst), dtype=np.float64)
        return keys, sums, hops, entries
