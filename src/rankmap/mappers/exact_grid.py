"""When the compiled local-search steps give the Python steps' results exactly.

The compiled steps of ``refine`` and of ``graph``'s link swaps
(:mod:`rankmap.kernels.refine_grid`) walk dimension-order routes on a torus or mesh (and
``refine``'s, d-mod-k routes on a k-ary n-tree) and add link bytes, hop-bytes and squared
link bytes in their own order. Float sums depend on their
order only through rounding, and there is none when every term is a whole multiple of a
common power of two and every sum stays below 2**53 such multiples: then both steps compute
the same numbers and take the same decisions. These functions say when that holds.

``refine``'s compiled step also routes by minimal adaptive templates on a torus or mesh
(:func:`adaptive_steps_apply`). Shares such as 1/3 make link sums round, so it adds every
link's shares in the Python step's order (flow by flow, each template in its order); its
hop-bytes use the minimal hop counts, whole numbers, and stay exact.
"""

from __future__ import annotations

import numpy as np

from ..kernels.hops import tree_geometry
from ..kernels.template_store import MAX_TEMPLATE_CODES
from ..machines.fattree import FatTree
from ..machines.torus import Torus
from ..routing.fattree import DmodK
from ..routing.torus import DOR, Adaptive

__all__ = ["grid_steps_apply", "adaptive_steps_apply", "largest_template", "grid_hops_apply",
           "tree_steps_apply", "hop_geometry", "link_slots", "whole_sums_exact",
           "longest_route", "EXACT_LIMIT"]

#: float64 represents every whole number below this exactly
EXACT_LIMIT = float(2 ** 53)


def grid_steps_apply(router, machine) -> bool:
    """Whether the compiled steps route as ``router`` does: dimension order on a torus or
    mesh whose every link counts as a hop.

    Parameters
    ----------
    router : Router
        The search's router.
    machine : Machine
        The machine.

    Returns
    -------
    bool
        True for :class:`~rankmap.routing.torus.DOR` on a
        :class:`~rankmap.machines.torus.Torus` with links and no ``hop_links``.
    """
    return type(router) is DOR and _every_link_a_hop(machine)


def adaptive_steps_apply(router, machine) -> bool:
    """Whether ``refine``'s compiled step routes as ``router`` does by minimal adaptive
    templates: on a torus or mesh whose every link counts as a hop, with at most
    :data:`~rankmap.kernels.template_store.MAX_TEMPLATE_CODES` offset codes.

    Parameters
    ----------
    router, machine
        As :func:`grid_steps_apply`.

    Returns
    -------
    bool
        True for :class:`~rankmap.routing.torus.Adaptive` on such a
        :class:`~rankmap.machines.torus.Torus`.
    """
    return (type(router) is Adaptive and _every_link_a_hop(machine)
            and int(np.prod(2 * np.asarray(machine.dims, dtype=np.int64))) <= MAX_TEMPLATE_CODES)


def _every_link_a_hop(machine) -> bool:
    """A torus or mesh with links, every one of them counted as a hop (no ``hop_links``)."""
    return grid_hops_apply(machine) and machine.n_links > 0 and machine.hop_links is None


def largest_template(machine) -> float:
    """Link entries of the largest minimal-adaptive template of a torus or mesh: its farthest
    offset's (half way round a ring, end to end on a line), the bound
    :func:`rankmap.kernels.torus.adaptive_templates` checks against the limits.

    Parameters
    ----------
    machine : Torus
        The torus or mesh.

    Returns
    -------
    float
        Entries (a float: it cannot overflow).
    """
    states, links = 1.0, 0.0
    for n, wraps in zip(np.asarray(machine.dims).tolist(), np.asarray(machine.wrap).tolist()):
        h = n // 2 if wraps else n - 1
        tie = bool(wraps) and n % 2 == 0 and h > 0
        k = 2.0 * h + 1.0 if tie else h + 1.0
        links = links * k + (2.0 * h if tie else 1.0 * h) * states
        states *= k
    return links


def tree_steps_apply(router, machine) -> bool:
    """Whether the compiled steps (``refine``'s and ``graph``'s link swaps) route as
    ``router`` does on a tree: d-mod-k on a k-ary n-tree (one route per pair, every link a
    hop; the compiled steps walk it).

    Parameters
    ----------
    router : Router
        The search's router.
    machine : Machine
        The machine.

    Returns
    -------
    bool
        True for :class:`~rankmap.routing.fattree.DmodK` on a
        :class:`~rankmap.machines.fattree.FatTree` with links and no ``hop_links``.
    """
    return (type(router) is DmodK and type(machine) is FatTree and machine.n_links > 0
            and machine.hop_links is None)


def hop_geometry(machine):
    """``(dims, strides, wrap)`` for the compiled steps' hop counts
    (:mod:`rankmap.kernels.hops`): a torus's or mesh's, a k-ary n-tree's
    (:func:`~rankmap.kernels.hops.tree_geometry`), else None.

    Parameters
    ----------
    machine : Machine
        The machine.

    Returns
    -------
    tuple of numpy.ndarray or None
        int64 sides, int64 node-id strides, bool (grid) or int8 (tree) ``wrap``.
    """
    if grid_hops_apply(machine):
        return (np.ascontiguousarray(machine.dims, dtype=np.int64),
                np.ascontiguousarray(machine.strides, dtype=np.int64),
                np.ascontiguousarray(machine.wrap, dtype=np.bool_))
    if type(machine) is FatTree:
        return tree_geometry(machine.k, machine.levels)
    return None


def link_slots(machine) -> tuple[np.ndarray, np.ndarray]:
    """The link of every dense slot the compiled walks write, and the dense slot of every
    link: a torus's or mesh's dense numbering, a tree's link ids themselves.

    Parameters
    ----------
    machine : Torus or FatTree
        The machine the compiled steps walk.

    Returns
    -------
    tuple of numpy.ndarray
        int64 link of every slot, int64 slot of every link.
    """
    if type(machine) is FatTree:
        ids = np.arange(machine.n_links, dtype=np.int64)
        return ids, ids
    return (np.ascontiguousarray(machine.link_of_dense_slot, dtype=np.int64),
            np.ascontiguousarray(machine.dense_slot_of_link, dtype=np.int64))


def longest_route(machine) -> float:
    """An upper bound of the links on one route (a torus or mesh: its sides summed; a
    k-ary n-tree: twice its levels).

    Parameters
    ----------
    machine : Torus or FatTree
        The machine.

    Returns
    -------
    float
        Links.
    """
    if isinstance(machine, FatTree):
        return 2.0 * machine.levels
    return float(np.sum(machine.dims))


def grid_hops_apply(machine) -> bool:
    """Whether the compiled steps' hop distance is the machine's: a torus or mesh.

    Parameters
    ----------
    machine : Machine
        The machine.

    Returns
    -------
    bool
        True for a :class:`~rankmap.machines.torus.Torus` (not a subclass).
    """
    return type(machine) is Torus


def whole_sums_exact(nbytes: np.ndarray, machine, squares: bool = False,
                     busiest: float | None = None) -> bool:
    """Whether every sum of the search is exact for flows of these sizes on this machine.

    With ``g`` the largest power of two dividing every size (sizes must be whole numbers),
    a link's bytes, a phase's hop-bytes and a move's change are whole multiples of ``g``
    bounded by ``B`` = (total bytes) x (longest route); with ``squares``, squared link bytes
    are multiples of ``g**2`` summing to at most ``B**2``.

    Given ``busiest``, the busiest link's bytes where a search that keeps only moves that do
    not raise it starts (``graph``'s link swaps), every link a kept move leaves stays at or
    below it, so a phase's squared link bytes sum to at most ``busiest`` x its hop-bytes
    and all phases' to at most ``busiest x B``; a move's sums add at most as much again.
    A move that puts a link above ``busiest`` is refused on the busiest link alone (exact,
    and at least ``g`` above it: more than the searches' tolerance of ``1e-9 x busiest``,
    as ``busiest / g`` is then below ``2**26``), whatever its inexact squares. So the bound
    is ``2 x busiest x B`` instead of ``B**2``.

    Parameters
    ----------
    nbytes : numpy.ndarray
        Bytes of every flow (all phases).
    machine : Torus or FatTree
        The torus, mesh or tree (:func:`longest_route`).
    squares : bool
        Whether sums of squared link bytes are taken too (``graph``'s link swaps).
    busiest : float, optional
        With ``squares``: the busiest link's bytes at the search's start (bytes), which no
        kept move raises.

    Returns
    -------
    bool
        True when ``B / g`` is below :data:`EXACT_LIMIT` and, with ``squares``,
        ``(B / g)**2`` (given ``busiest``, ``2 x (busiest / g) x (B / g)``) is too.
    """
    b = np.asarray(nbytes, dtype=np.float64)
    if b.size == 0 or not np.all(np.isfinite(b)) or np.any(b < 0) \
            or np.any(b != np.floor(b)) or float(b.max()) >= EXACT_LIMIT:
        return False
    whole = b.astype(np.int64)
    nonzero = whole[whole > 0]
    g = float(np.min(nonzero & -nonzero)) if nonzero.size else 1.0
    bound = float(b.sum()) * (longest_route(machine) + 1.0) / g
    if not squares:
        return bound < EXACT_LIMIT
    if busiest is None or not 0 <= busiest <= bound * g:
        return bound * bound < EXACT_LIMIT
    return bound < EXACT_LIMIT and 2.0 * (busiest / g) * bound < EXACT_LIMIT
