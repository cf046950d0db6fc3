"""Compiled routing kernels for k-ary n-trees and for general trees (Slurm topology.conf).

k-ary n-tree numbering (see :mod:`rankmap.machines.fattree`): host ``h`` in ``[0, k^n)``;
level-``l`` switch (``l = 1..n``) ``w = prefix*k^(l-1) + rep`` with ``prefix = h // k^l`` of
the hosts below it and ``rep`` in ``[0, k^(l-1))`` telling the replicas apart. The up link
``c`` (``0..k-1``) of switch ``(l, prefix, rep)`` goes to ``(l+1, prefix // k,
rep + c*k^(l-1))``; the down link back is the same cable in the other direction.

Link ids: host up ``h``; host down ``H + h``; switch up ``2H + ((l-1)*S + w)*k + c``; switch
down ``2H + (n-1)*S*k + ((l-1)*S + w)*k + c`` (the cable from (l,w) up-port c, downwards),
with ``H = k^n`` hosts and ``S = k^(n-1)`` switches per level.
"""

from __future__ import annotations

import numpy as np

from .jit import kernel

__all__ = ["ktree_rows", "ktree_accumulate", "ktree_entry_counts", "ktree_crosses",
           "ktree_hop", "ktree_hops", "dmodk_walk", "dmodk_takes", "dmodk_ends", "tree_rows"]


@kernel(nogil=True)
def _nca_level(s, d, k):
    """Level of the nearest common ancestor switch of hosts s != d."""
    m = 1
    kp = k
    while s // kp != d // kp:
        m += 1
        kp *= k
    return m


@kernel(nogil=True)
def dmodk_walk(s, d, k, n, out):
    """Write the link ids of the d-mod-k route from host s to host d into ``out`` (host up,
    host down, then an up and a down link per level below the common switch, the order of
    :func:`ktree_rows`); return their number (0 when s == d).

    Parameters
    ----------
    s, d : int
        Source and destination host.
    k : int
        Arity of the tree.
    n : int
        Number of switch levels.
    out : ndarray of int64
        Buffer of at least ``2 * n`` entries.

    Returns
    -------
    int
        Links on the route.
    """
    if s == d:
        return 0
    H = k ** n
    S = k ** (n - 1)
    down0 = 2 * H + (n - 1) * S * k
    m = _nca_level(s, d, k)
    out[0] = s
    out[1] = H + d
    pos = 2
    kl1 = 1  # k^(l-1)
    for l in range(1, m):
        prefix_s = s // (kl1 * k)
        prefix_d = d // (kl1 * k)
        rep = d % kl1
        c = (d // kl1) % k
        out[pos] = 2 * H + ((l - 1) * S + prefix_s * kl1 + rep) * k + c
        out[pos + 1] = down0 + ((l - 1) * S + prefix_d * kl1 + rep) * k + c
        pos += 2
        kl1 *= k
    return pos


@kernel(nogil=True)
def dmodk_takes(s, d, link, k, n):
    """Whether the d-mod-k route from host s to host d takes ``link`` (the links of
    :func:`dmodk_walk`, tested as they are found: nothing is written).

    Parameters
    ----------
    s, d : int
        Source and destination host.
    link : int
        Link id.
    k : int
        Arity of the tree.
    n : int
        Number of switch levels.

    Returns
    -------
    bool
        True when ``link`` is on the route (never for s == d).
    """
    if s == d:
        return False
    H = k ** n
    if link < 2 * H:
        return link == s or link == H + d
    S = k ** (n - 1)
    down0 = 2 * H + (n - 1) * S * k
    m = _nca_level(s, d, k)
    kl1 = 1  # k^(l-1)
    for l in range(1, m):
        rep = d % kl1
        c = (d // kl1) % k
        if link == 2 * H + ((l - 1) * S + s // (kl1 * k) * kl1 + rep) * k + c:
            return True
        if link == down0 + ((l - 1) * S + d // (kl1 * k) * kl1 + rep) * k + c:
            return True
        kl1 *= k
    return False


def dmodk_ends(link: int, k: int, n: int) -> tuple[str, np.ndarray]:
    """The hosts every d-mod-k flow over ``link`` starts at, or those every such flow ends
    at, whichever are fewer (:meth:`rankmap.routing.Router.ends_through`).

    A host link's flows start (up) or end (down) at its host. A switch link between levels
    ``l`` and ``l + 1`` (``l >= 1``) is taken up by flows from the ``k^l`` hosts below its
    lower switch to destinations whose lowest ``l`` digits pick it (``H / k^l`` of them,
    those below the switch included), and down by the flows to the one host those digits
    and the switch's prefix name.

    Parameters
    ----------
    link : int
        Link id (module docstring).
    k : int
        Arity of the tree.
    n : int
        Number of switch levels.

    Returns
    -------
    tuple of (str, numpy.ndarray)
        ``("src", hosts)`` or ``("dst", hosts)``, int64 host ids in increasing order.
    """
    H = k ** n
    S = k ** (n - 1)
    if link < H:
        return "src", np.array([link], dtype=np.int64)
    if link < 2 * H:
        return "dst", np.array([link - H], dtype=np.int64)
    rest = link - 2 * H
    down = rest >= (n - 1) * S * k
    if down:
        rest -= (n - 1) * S * k
    sw, c = divmod(rest, k)
    l0, w = divmod(sw, S)                  # l0 = l - 1
    kl1 = k ** l0
    prefix, rep = divmod(w, kl1)
    low = c * kl1 + rep                    # the destinations' lowest l digits
    if down:
        return "dst", np.array([prefix * kl1 * k + low], dtype=np.int64)
    below = prefix * kl1 * k + np.arange(kl1 * k, dtype=np.int64)
    picked = low + kl1 * k * np.arange(H // (kl1 * k), dtype=np.int64)
    return ("src", below) if len(below) <= len(picked) else ("dst", picked)


@kernel(nogil=True)
def _ktree_flow(s, d, k, n, ecmp, links, frac, pos):
    """Write the route of one flow s != d at ``pos``; return the new position."""
    if not ecmp:
        h = dmodk_walk(s, d, k, n, links[pos:])
        frac[pos:pos + h] = 1.0
        return pos + h
    H = k ** n
    S = k ** (n - 1)
    down0 = 2 * H + (n - 1) * S * k
    m = _nca_level(s, d, k)
    links[pos] = s
    frac[pos] = 1.0
    pos += 1
    links[pos] = H + d
    frac[pos] = 1.0
    pos += 1
    kl1 = 1  # k^(l-1)
    for l in range(1, m):
        prefix_s = s // (kl1 * k)
        prefix_d = d // (kl1 * k)
        w = 1.0 / (kl1 * k)
        for rep in range(kl1):
            ws = prefix_s * kl1 + rep
            wd = prefix_d * kl1 + rep
            for c in range(k):
                links[pos] = 2 * H + ((l - 1) * S + ws) * k + c
                frac[pos] = w
                pos += 1
                links[pos] = down0 + ((l - 1) * S + wd) * k + c
                frac[pos] = w
                pos += 1
        kl1 *= k
    return pos


@kernel(nogil=True)
def _ktree_entries(s, d, k, ecmp):
    if s == d:
        return 0
    m = _nca_level(s, d, k)
    if not ecmp:
        return 2 * m
    total = 2
    p = 1
    for _ in range(1, m):
        p *= k
        total += 2 * p
    return total


@kernel(nogil=True)
def _ktree_max_entries(k, n):
    """The most entries a route has on a k-ary n-tree (an ECMP route through the top)."""
    cap = 2
    p = 1
    for _ in range(1, n):
        p *= k
        cap += 2 * p
    return cap


@kernel
def ktree_rows(src, dst, k, n, ecmp):
    """CSR rows (indptr, links, fractions) of the routes of flows src[f] -> dst[f].

    ``dmodk`` (``ecmp`` False): going up from level l the up port is digit l-1 of the
    destination (``(dst // k^(l-1)) % k``). ``ecmp``: equal split over all up ports at every
    level. The way down from the nearest common ancestor level is unique.

    Parameters
    ----------
    src, dst : ndarray of int64, shape (n_flows,)
        Source and destination host of every flow; a flow with src == dst gets an empty row.
    k : int
        Arity of the tree (down ports and up ports per switch).
    n : int
        Number of switch levels (``k**n`` hosts).
    ecmp : bool
        Equal split over all up ports instead of destination-mod-k routing.

    Returns
    -------
    indptr : ndarray of int64, shape (n_flows + 1,)
        Row f of the result is ``links[indptr[f]:indptr[f+1]]``.
    links : ndarray of int64
        Link ids on the route of each flow.
    fractions : ndarray of float64
        Fraction (0..1) of the flow's bytes crossing each listed link.
    """
    F = src.shape[0]
    indptr = np.zeros(F + 1, dtype=np.int64)
    for f in range(F):
        indptr[f + 1] = indptr[f] + _ktree_entries(src[f], dst[f], k, ecmp)
    links = np.empty(indptr[F], dtype=np.int64)
    frac = np.empty(indptr[F], dtype=np.float64)
    for f in range(F):
        if src[f] != dst[f]:
            _ktree_flow(src[f], dst[f], k, n, ecmp, links, frac, indptr[f])
    return indptr, links, frac


@kernel(nogil=True)
def ktree_hop(a, b, k):
    """Links between hosts ``a`` and ``b``: 2m, m the level of their nearest common ancestor
    switch (0 for the same host).

    Parameters
    ----------
    a, b : int
        Host ids.
    k : int
        Arity of the tree.

    Returns
    -------
    int
        Links between the two hosts.
    """
    if a == b:
        return 0
    return 2 * _nca_level(a, b, k)


@kernel(nogil=True)
def ktree_hops(a, b, k):
    """Hop distance 2m of every pair of hosts (m: the level of their nearest common ancestor
    switch; 0 for the same host).

    Parameters
    ----------
    a, b : ndarray of int64, shape (n,)
        Host ids.
    k : int
        Arity of the tree.

    Returns
    -------
    ndarray of int64, shape (n,)
        Links between the two hosts.
    """
    out = np.empty(a.shape[0], dtype=np.int64)
    for i in range(a.shape[0]):
        out[i] = ktree_hop(a[i], b[i], k)
    return out


@kernel
def ktree_entry_counts(src, dst, k, ecmp):
    """Route entries (links listed, a split route's every share counted) of every flow.

    Parameters
    ----------
    src, dst : ndarray of int64, shape (n_flows,)
        Source and destination host of every flow.
    k : int
        Arity of the tree.
    ecmp : bool
        Equal split over all up ports instead of destination-mod-k routing.

    Returns
    -------
    ndarray of int64, shape (n_flows,)
        The length of each flow's row in :func:`ktree_rows` (0 when src == dst).
    """
    out = np.empty(src.shape[0], dtype=np.int64)
    for f in range(src.shape[0]):
        out[f] = _ktree_entries(src[f], dst[f], k, ecmp)
    return out


@kernel
def ktree_crosses(src, dst, k, n, ecmp, link):
    """Whether each flow's route (:func:`ktree_rows`) puts bytes on ``link``.

    Parameters
    ----------
    src, dst : ndarray of int64, shape (n_flows,)
        Source and destination host of every flow.
    k : int
        Arity of the tree.
    n : int
        Number of switch levels.
    ecmp : bool
        Equal split over all up ports instead of destination-mod-k routing.
    link : int
        The directed link.

    Returns
    -------
    ndarray of bool, shape (n_flows,)
        True when a non-zero share of the flow crosses ``link``.
    """
    cap = _ktree_max_entries(k, n)
    links = np.empty(cap, dtype=np.int64)
    frac = np.empty(cap, dtype=np.float64)
    out = np.zeros(src.shape[0], dtype=np.bool_)
    for f in range(src.shape[0]):
        if src[f] == dst[f]:
            continue
        end = _ktree_flow(src[f], dst[f], k, n, ecmp, links, frac, 0)
        for i in range(end):
            if links[i] == link and frac[i] > 0:
                out[f] = True
                break
    return out


@kernel
def ktree_accumulate(src, dst, nbytes, counts, k, n, ecmp, link_bytes, link_streams, hops):
    """Add the flows' bytes and stream counts into per-link arrays; hops per flow (links).

    The same routes as :func:`ktree_rows`, accumulated on the fly without building the rows.
    The three output arrays are updated in place.

    Parameters
    ----------
    src, dst : ndarray of int64, shape (n_flows,)
        Source and destination host of every flow.
    nbytes : ndarray of float64, shape (n_flows,)
        Size of every flow, bytes.
    counts : ndarray of int64, shape (n_flows,)
        Multiplicity of every flow (entry f stands for counts[f] identical flows).
    k : int
        Arity of the tree.
    n : int
        Number of switch levels.
    ecmp : bool
        Equal split over all up ports instead of destination-mod-k routing.
    link_bytes : ndarray of float64, shape (n_links,)
        Bytes crossing each link; the flows' shares are added (bytes).
    link_streams : ndarray of int64, shape (n_links,)
        Number of flows crossing each link; incremented.
    hops : ndarray of float64, shape (n_flows,)
        Set to each flow's hop count (links, weighted by the fraction crossing each; 0 when
        src == dst).
    """
    cap = _ktree_max_entries(k, n)
    links = np.empty(cap, dtype=np.int64)
    frac = np.empty(cap, dtype=np.float64)
    for f in range(src.shape[0]):
        if src[f] == dst[f]:
            hops[f] = 0.0
            continue
        end = _ktree_flow(src[f], dst[f], k, n, ecmp, links, frac, 0)
        h = 0.0
        b = nbytes[f] * counts[f]
        for i in range(end):
            link_bytes[links[i]] += b * frac[i]
            link_streams[links[i]] += counts[f]
            h += frac[i]
        hops[f] = h


@kernel
def tree_rows(src, dst, parent, depth, up_link, down_link):
    """CSR rows of flows on a tree: up from src to the lowest common ancestor, down to dst.

    ``parent[v]`` (-1 at the root), ``depth[v]``, ``up_link[v]``/``down_link[v]`` (the links
    between v and its parent) are indexed by vertex (hosts first, then switches).

    Parameters
    ----------
    src, dst : ndarray of int64, shape (n_flows,)
        Source and destination vertex (host) of every flow; src == dst gives an empty row.
    parent : ndarray of int64, shape (n_vertices,)
        Parent of every vertex, -1 at the root.
    depth : ndarray of int64, shape (n_vertices,)
        Distance of every vertex from the root (links).
    up_link, down_link : ndarray of int64, shape (n_vertices,)
        Link id from every vertex up to its parent and from the parent down to it.

    Returns
    -------
    indptr : ndarray of int64, shape (n_flows + 1,)
        Row f of the result is ``links[indptr[f]:indptr[f+1]]``.
    links : ndarray of int64
        Link ids on the route of each flow.
    fractions : ndarray of float64
        All 1.0: a tree route is unique.
    """
    F = src.shape[0]
    indptr = np.zeros(F + 1, dtype=np.int64)
    maxd = 0
    for v in range(depth.shape[0]):
        if depth[v] > maxd:
            maxd = depth[v]
    links = np.empty(F * 2 * (maxd + 1), dtype=np.int64)
    pos = 0
    for f in range(F):
        a = src[f]
        b = dst[f]
        if a != b:
            while depth[a] > depth[b]:
                links[pos] = up_link[a]
                pos += 1
                a = parent[a]
            while depth[b] > depth[a]:
                links[pos] = down_link[b]
                pos += 1
                b = parent[b]
            while a != b:
                links[pos] = up_link[a]
                pos += 1
                links[pos] = down_link[b]
                pos += 1
                a = parent[a]
                b = parent[b]
        indptr[f + 1] = pos
    return indptr, links[:pos].copy(), np.ones(pos, dtype=np.float64)
