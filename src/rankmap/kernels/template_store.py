"""Minimal-adaptive templates kept by offset code in arrays, for compiled searches.

The compiled refinement step (:mod:`rankmap.kernels.refine_grid`) routes the moved flows of
every proposal under minimal adaptive routing on a torus or mesh. A flow's split depends only
on its offset code (:func:`rankmap.kernels.torus.adaptive_code`), so each code's template
(:func:`rankmap.kernels.torus.adaptive_template`) is worked out once and kept in a store of
plain arrays the compiled code reads and fills:

* ``start``, ``length``: int64, one per offset code (``prod(2 * dims)`` of them), where the
  code's template starts in the entry arrays (-1: not kept yet) and its entries;
* ``rel`` (entries x ndim), ``slots``, ``shares``: the kept templates' entries, one after the
  other, room for :data:`~rankmap.kernels.template_cache.TEMPLATE_CACHE_ENTRIES` (allocated
  untouched: only the entries written take memory);
* ``used``: int64, one value: entries written;
* ``coords``: int64 (nodes x ndim), every node's coordinates (a flow's code and the links of
  its template placed at its source, without a division).

A template that no longer fits is computed each time it is needed. A kept template is the
arrays the computation gave, copied, so no result depends on what the store holds. A search
that routes otherwise passes None instead of a store.
"""

from __future__ import annotations

import numpy as np

from .jit import kernel
from .template_cache import TEMPLATE_CACHE_ENTRIES
from .torus import adaptive_code, adaptive_template

__all__ = ["template_store", "stored_template", "stored_entries", "MAX_TEMPLATE_CODES"]

#: offset codes (``prod(2 * dims)``) a store indexes at most (16 MB of index per array):
#: a larger machine keeps the Python step
MAX_TEMPLATE_CODES = 1 << 21


def template_store(dims, strides, max_entries: int = TEMPLATE_CACHE_ENTRIES) -> tuple:
    """An empty store for a torus or mesh of sides ``dims`` (module docstring).

    Parameters
    ----------
    dims, strides : array of int
        Sides (nodes) and node-id strides of the torus or mesh.
    max_entries : int
        Template entries kept at most.

    Returns
    -------
    tuple of numpy.ndarray
        ``(start, length, rel, slots, shares, used, coords)``.

    Raises
    ------
    ValueError
        More than :data:`MAX_TEMPLATE_CODES` offset codes.
    """
    dims = np.asarray(dims, dtype=np.int64)
    n_codes = int(np.prod(2 * dims))
    if n_codes > MAX_TEMPLATE_CODES:
        raise ValueError(f"{n_codes} offset codes: a template store indexes at most "
                         f"{MAX_TEMPLATE_CODES}")
    cap = int(max_entries)
    nodes = np.arange(int(np.prod(dims)), dtype=np.int64)
    coords = np.ascontiguousarray(
        (nodes[:, None] // np.asarray(strides, dtype=np.int64)[None, :]) % dims[None, :])
    return (np.full(n_codes, -1, dtype=np.int64), np.zeros(n_codes, dtype=np.int64),
            np.empty((cap, len(dims)), dtype=np.int64), np.empty(cap, dtype=np.int64),
            np.empty(cap, dtype=np.float64), np.zeros(1, dtype=np.int64), coords)


@kernel(nogil=True)
def stored_template(s, t, dims, strides, wrap, start, length, rel, slots, shares, used, coords):
    """The template of the flow from node s to node t, from the store (kept there first when
    it is not yet and fits).

    Parameters
    ----------
    s, t, dims, strides, wrap
        As :func:`rankmap.kernels.torus.adaptive_template`.
    start, length, rel, slots, shares, used, coords : ndarray
        The store (module docstring; updated in place).

    Returns
    -------
    rel : ndarray of int64, shape (k, ndim)
        Source-node offsets of the template's links
        (:func:`rankmap.kernels.torus.adaptive_template`).
    slots : ndarray of int64, shape (k,)
        Their slots.
    shares : ndarray of float64, shape (k,)
        Their shares of the flow.
    hops : int
        The flow's hop count.
    """
    code, hops = adaptive_code(coords[s], coords[t], dims, wrap)
    k = start[code]
    if k >= 0:
        n = length[code]
        return rel[k:k + n], slots[k:k + n], shares[k:k + n], hops
    r, sl, sh = adaptive_template(s, t, dims, strides, wrap)
    u = used[0]
    n = sl.shape[0]
    if u + n <= slots.shape[0]:
        rel[u:u + n] = r
        slots[u:u + n] = sl
        shares[u:u + n] = sh
        start[code] = u
        length[code] = n
        used[0] = u + n
    return r, sl, sh, hops


@kernel(nogil=True)
def stored_entries(s, t, dims, strides, wrap, start, length, rel, slots, shares, used, coords):
    """The number of entries (links) of the template of the flow from node s to node t: read
    from the store when kept (no array taken), else from :func:`stored_template`.

    Parameters
    ----------
    s, t, dims, strides, wrap, start, length, rel, slots, shares, used, coords
        As :func:`stored_template`.

    Returns
    -------
    int
        The template's entries.
    """
    code, _hops = adaptive_code(coords[s], coords[t], dims, wrap)
    if start[code] >= 0:
        return length[code]
    _r, sl, _sh, _h = stored_template(s, t, dims, strides, wrap, start, length, rel, slots,
                                      shares, used, coords)
    return sl.shape[0]
