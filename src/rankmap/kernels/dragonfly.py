"""Compiled routing kernels for dragonfly networks (Cray XC / Aries style).

Routers are numbered ``u = group*R*C + row*C + col``. Inside a group every router has a link
to every other router of its row (class ``row``) and of its column (class ``col``). Between
every ordered pair of groups there are ``L`` parallel global links.

Routing is split into *stages* whose link sets never overlap for one flow, and each stage is
computed once per distinct *key* (not once per flow), so a phase of a million flows between a
few thousand routers costs little:

* ``local``  key (u, v), same group: minimal intra-group path (row then column and column then
  row, half each when both differ);
* ``src``    key (u, target group): from u to the exit routers of the global links towards the
  target group(s), equal share per global link;
* ``glob``   key (source group, destination group): the global links themselves;
* ``mid``    key (source group, destination group), Valiant only: inside every intermediate
  group, from each entry router to each exit router;
* ``dst``    key (v, source group): from the entry routers of the incoming global links to v.

Each kernel returns a CSR-like triple (``indptr``, ``links``, ``fractions``): row k lists the
links used by key k and the fraction of the key's bytes crossing each (a link used by several
alternative paths of the same key appears once, with the fractions added).
"""

from __future__ import annotations

import numpy as np

from .jit import kernel
from .link_sums import part_flush

__all__ = ["stage_rows", "gather_rows", "minimal_link_sums", "min_router_hops"]


@kernel(nogil=True)
def _add(link, w, scratch, touched, nt):
    """Add weight ``w`` to ``link`` in the scratch row; return the new touched count."""
    if scratch[link] == 0.0:
        touched[nt] = link
        nt += 1
    scratch[link] += w
    return nt


@kernel(nogil=True)
def _intra(u, v, w, R, C, row0, col0, scratch, touched, nt):
    """Minimal path between routers u and v of one group, weight w (split on two orders)."""
    if u == v:
        return nt
    nr = R * C
    g = u // nr
    r1 = (u % nr) // C
    c1 = u % C
    r2 = (v % nr) // C
    c2 = v % C
    if r1 == r2:
        return _add(row0 + u * (C - 1) + (c2 if c2 < c1 else c2 - 1), w, scratch, touched, nt)
    if c1 == c2:
        return _add(col0 + u * (R - 1) + (r2 if r2 < r1 else r2 - 1), w, scratch, touched, nt)
    h = 0.5 * w
    # row first: along the row to column c2, then along that column to row r2
    mid = g * nr + r1 * C + c2
    nt = _add(row0 + u * (C - 1) + (c2 if c2 < c1 else c2 - 1), h, scratch, touched, nt)
    nt = _add(col0 + mid * (R - 1) + (r2 if r2 < r1 else r2 - 1), h, scratch, touched, nt)
    # column first
    mid = g * nr + r2 * C + c1
    nt = _add(col0 + u * (R - 1) + (r2 if r2 < r1 else r2 - 1), h, scratch, touched, nt)
    nt = _add(row0 + mid * (C - 1) + (c2 if c2 < c1 else c2 - 1), h, scratch, touched, nt)
    return nt


@kernel(nogil=True)
def _gidx(g1, g2, l, G, L):
    """Index (among global links) of parallel link l from group g1 to group g2."""
    j = (g2 - g1 - 1) % G
    return (g1 * (G - 1) + j) * L + l


@kernel(nogil=True)
def _room(ids, vals, pos, more):
    """``ids`` and ``vals`` (their first ``pos`` entries kept), grown by doubling when
    ``more`` entries do not fit after them."""
    if pos + more <= ids.shape[0]:
        return ids, vals
    size = max(2 * ids.shape[0], pos + more)
    grown_i = np.empty(size, dtype=np.int64)
    grown_v = np.empty(size, dtype=np.float64)
    grown_i[:pos] = ids[:pos]
    grown_v[:pos] = vals[:pos]
    return grown_i, grown_v


@kernel(nogil=True)
def _flush(k, scratch, touched, nt, rows_k, out_l, out_w, pos):
    """Move the scratch row into the output arrays and clear it (dropping cancelled links:
    a real share is at least 1/(2*G*L*L), far above the rounding left by a subtraction)."""
    for i in range(nt):
        lk = touched[i]
        w = scratch[lk]
        scratch[lk] = 0.0
        if abs(w) > 1e-12:
            out_l[pos] = lk
            out_w[pos] = w
            pos += 1
    rows_k[k + 1] = pos
    return pos


@kernel(nogil=True)
def _spread(u, own, src_side, G, R, C, L, row0, col0, g_src, g_dst, tot, tt, ntt):
    """Into ``tot``: the Valiant share (1/((G-2)L) per global link) of the intra-group paths
    between router u and every global link of u's group towards (``src_side``) or from every
    other group; ``own`` is u's group. Returns the touched count."""
    w = 1.0 / ((G - 2) * L)
    for gi in range(G):
        if gi == own:
            continue
        for l in range(L):
            if src_side:
                e = g_src[_gidx(own, gi, l, G, L)]
                ntt = _intra(u, e, w, R, C, row0, col0, tot, tt, ntt)
            else:
                e = g_dst[_gidx(gi, own, l, G, L)]
                ntt = _intra(e, u, w, R, C, row0, col0, tot, tt, ntt)
    return ntt


@kernel
def stage_rows(stage, valiant, a, b, G, R, C, L, row0, col0, glob0, g_src, g_dst, n_links):
    """Links and fractions of every key (a[k], b[k]) of one stage.

    Keys sharing a router should be consecutive (Valiant rows are cached per router).

    Parameters
    ----------
    stage : int
        0 local (a=u, b=v), 1 src (a=u, b=destination group), 2 glob (a=source group,
        b=destination group), 3 mid (a=source group, b=destination group, Valiant only),
        4 dst (a=v, b=source group).
    valiant : bool
        Valiant routing (through every other group, equal share) instead of minimal routing.
    a, b : ndarray of int64, shape (n_keys,)
        The two halves of every key, as listed for ``stage``.
    G, R, C, L : int
        Groups, router rows and router columns per group, parallel global links per ordered
        pair of groups.
    row0, col0, glob0 : int
        First link id of the row links, of the column links and of the global links.
    g_src, g_dst : ndarray of int64
        Source and destination router of every global link (indexed from 0, not ``glob0``).
    n_links : int
        Number of links of the network (size of the scratch rows).

    Returns
    -------
    indptr : ndarray of int64, shape (n_keys + 1,)
        Row k of the result is ``links[indptr[k]:indptr[k+1]]``.
    links : ndarray of int64
        Link ids used by each key.
    fractions : ndarray of float64
        Fraction (0..1) of the key's bytes crossing each listed link.
    """
    nk = a.shape[0]
    nr = R * C
    scratch = np.zeros(n_links, dtype=np.float64)
    touched = np.empty(n_links, dtype=np.int64)
    indptr = np.zeros(nk + 1, dtype=np.int64)
    out_l = np.empty(max(4 * nk, 1024), dtype=np.int64)
    out_w = np.empty(max(4 * nk, 1024), dtype=np.float64)
    pos = 0
    tot = np.zeros(n_links, dtype=np.float64)   # cached Valiant row of the current router
    tt = np.empty(n_links, dtype=np.int64)
    ntt = 0
    cur = -1
    for k in range(nk):
        nt = 0
        if stage == 0:
            nt = _intra(a[k], b[k], 1.0, R, C, row0, col0, scratch, touched, nt)
        elif stage == 1:
            u = a[k]
            gs = u // nr
            gd = b[k]
            if not valiant:
                for l in range(L):
                    e = g_src[_gidx(gs, gd, l, G, L)]
                    nt = _intra(u, e, 1.0 / L, R, C, row0, col0, scratch, touched, nt)
            else:
                # all intermediate groups but gd: the row towards every other group (cached
                # while the keys share u), minus the part towards gd
                if u != cur:
                    for i in range(ntt):
                        tot[tt[i]] = 0.0
                    ntt = _spread(u, gs, True, G, R, C, L, row0, col0, g_src, g_dst, tot, tt, 0)
                    cur = u
                for i in range(ntt):
                    nt = _add(tt[i], tot[tt[i]], scratch, touched, nt)
                w = 1.0 / ((G - 2) * L)
                for l in range(L):
                    e = g_src[_gidx(gs, gd, l, G, L)]
                    nt = _intra(u, e, -w, R, C, row0, col0, scratch, touched, nt)
        elif stage == 2:
            gs = a[k]
            gd = b[k]
            if not valiant:
                for l in range(L):
                    nt = _add(glob0 + _gidx(gs, gd, l, G, L), 1.0 / L, scratch, touched, nt)
            else:
                w = 1.0 / ((G - 2) * L)
                for gi in range(G):
                    if gi == gs or gi == gd:
                        continue
                    for l in range(L):
                        nt = _add(glob0 + _gidx(gs, gi, l, G, L), w, scratch, touched, nt)
                        nt = _add(glob0 + _gidx(gi, gd, l, G, L), w, scratch, touched, nt)
        elif stage == 3:
            gs = a[k]
            gd = b[k]
            w = 1.0 / ((G - 2) * L * L)
            for gi in range(G):
                if gi == gs or gi == gd:
                    continue
                for l1 in range(L):
                    entry = g_dst[_gidx(gs, gi, l1, G, L)]
                    for l2 in range(L):
                        ex = g_src[_gidx(gi, gd, l2, G, L)]
                        nt = _intra(entry, ex, w, R, C, row0, col0, scratch, touched, nt)
        else:
            v = a[k]
            gs = b[k]
            gd = v // nr
            if not valiant:
                for l in range(L):
                    e = g_dst[_gidx(gs, gd, l, G, L)]
                    nt = _intra(e, v, 1.0 / L, R, C, row0, col0, scratch, touched, nt)
            else:
                if v != cur:
                    for i in range(ntt):
                        tot[tt[i]] = 0.0
                    ntt = _spread(v, gd, False, G, R, C, L, row0, col0, g_src, g_dst, tot, tt, 0)
                    cur = v
                for i in range(ntt):
                    nt = _add(tt[i], tot[tt[i]], scratch, touched, nt)
                w = 1.0 / ((G - 2) * L)
                for l in range(L):
                    e = g_dst[_gidx(gs, gd, l, G, L)]
                    nt = _intra(e, v, -w, R, C, row0, col0, scratch, touched, nt)
        out_l, out_w = _room(out_l, out_w, pos, nt)
        pos = _flush(k, scratch, touched, nt, indptr, out_l, out_w, pos)
    return indptr, out_l[:pos].copy(), out_w[:pos].copy()


@kernel
def min_router_hops(us, vs, G, R, C, L, g_src, g_dst):
    """Links on a shortest router path between routers us[i] and vs[i] (row/col/global).

    Parameters
    ----------
    us, vs : ndarray of int64, shape (n,)
        Source and destination routers.
    G, R, C, L : int
        Groups, router rows and router columns per group, parallel global links per ordered
        pair of groups.
    g_src, g_dst : ndarray of int64
        Source and destination router of every global link.

    Returns
    -------
    ndarray of int64, shape (n,)
        Number of router-to-router links (hops) on a shortest path; 0 when us[i] == vs[i].
    """
    nr = R * C
    # row and column, inside its group, of both ends of every global link
    n_links = g_src.shape[0]
    e_row = np.empty(n_links, dtype=np.int64)
    e_col = np.empty(n_links, dtype=np.int64)
    b_row = np.empty(n_links, dtype=np.int64)
    b_col = np.empty(n_links, dtype=np.int64)
    for k in range(n_links):
        e = g_src[k] % nr
        b = g_dst[k] % nr
        e_row[k] = e // C
        e_col[k] = e % C
        b_row[k] = b // C
        b_col[k] = b % C
    out = np.empty(us.shape[0], dtype=np.int64)
    for i in range(us.shape[0]):
        u = us[i]
        v = vs[i]
        gu = u // nr
        gv = v // nr
        ur = (u % nr) // C
        uc = u % C
        vr = (v % nr) // C
        vc = v % C
        if gu == gv:
            out[i] = (1 if ur != vr else 0) + (1 if uc != vc else 0)
            continue
        best = 1 << 30
        first = _gidx(gu, gv, 0, G, L)           # the L parallel links follow each other
        for l in range(L):
            k = first + l
            h = 1 + (1 if ur != e_row[k] else 0) + (1 if uc != e_col[k] else 0) \
                + (1 if b_row[k] != vr else 0) + (1 if b_col[k] != vc else 0)
            if h < best:
                best = h
                if h == 1:                       # a global link straight between them
                    break
        out[i] = best
    return out


@kernel(nogil=True)
def gather_rows(flows, key, key_start, key_end, key_links, key_frac, fill, out_links,
                out_frac):
    """Append one stage's key rows to the rows of the flows that have them.

    Parameters
    ----------
    flows : ndarray of int64
        Flow of every stage entry (distinct).
    key : ndarray of int64
        The key of each of those flows: its row is ``key_links[key_start[key]:key_end[key]]``.
    key_start, key_end : ndarray of int64
        First and past-the-last entry of every key's row.
    key_links, key_frac : ndarray
        Links (int64) and fractions (float64) of the key rows, as :func:`stage_rows` gives
        them.
    fill : ndarray of int64, shape (n_flows,)
        Next free position of every flow's row in the output (advanced past the rows
        written).
    out_links : ndarray of int32 or int64
        Link of every output entry (written).
    out_frac : ndarray of float64
        Fraction of every output entry (written).
    """
    for i in range(flows.shape[0]):
        f = flows[i]
        k = key[i]
        p = fill[f]
        for j in range(key_start[k], key_end[k]):
            out_links[p] = key_links[j]
            out_frac[p] = key_frac[j]
            p += 1
        fill[f] = p


@kernel(nogil=True)
def _emit(scratch, touched, nt, w, acc, seen, links, na, hops, n):
    """Add the scratch row (links in touched order, times ``w``) to the part's sums ``acc``,
    dropping cancelled links as :func:`_flush` does, and clear it; returns the part's
    touched count, ``hops`` plus each fraction (added one by one) and ``n`` plus the
    entries."""
    for i in range(nt):
        lk = touched[i]
        fr = scratch[lk]
        scratch[lk] = 0.0
        if abs(fr) > 1e-12:
            if not seen[lk]:
                seen[lk] = True
                links[na] = lk
                na += 1
            acc[lk] += fr * w
            hops += fr
            n += 1
    return na, hops, n


@kernel(nogil=True)
def _end_link(lk, w, acc, seen, links, na):
    """Add ``w`` (a whole flow on an injection or ejection link) to the part's sums."""
    if not seen[lk]:
        seen[lk] = True
        links[na] = lk
        na += 1
    acc[lk] += 1.0 * w
    return na


@kernel
def minimal_link_sums(src, dst, weight, part, N, n_nodes, G, R, C, L, row0, col0, glob0,
                      g_src, g_dst, n_links):
    """Signed flow weights summed per (part, link) along minimal dragonfly routes.

    The same sums, in the same order, as summing the rows of :func:`stage_rows` (injection,
    ejection, then the stages in route order: inside the group, or to the global links, the
    global links, from them), walked flow by flow without building the rows.

    Parameters
    ----------
    src, dst : ndarray of int64
        Source and destination node of every flow.
    weight : ndarray of float64
        Signed weight of every flow.
    part : ndarray of int64
        Part of every flow; flows come grouped by part, in part order.
    N, n_nodes : int
        Nodes per router; nodes of the machine (ejection links start at ``n_nodes``).
    G, R, C, L : int
        Groups, router rows and columns per group, parallel global links per pair of groups.
    row0, col0, glob0 : int
        First link id of the row, column and global links.
    g_src, g_dst : ndarray of int64
        Source and destination router of every global link.
    n_links : int
        Links of the machine.

    Returns
    -------
    keys : ndarray of int64
        Sorted distinct ``part * n_links + link`` of every link on any route.
    sums : ndarray of float64
        Each key's sum of ``fraction * weight``, added in flow order and route order.
    hops : ndarray of float64
        Router-to-router hops of every flow (fractions of its row, column and global links).
    entries : ndarray of int64
        Row, column and global links of every flow's route.
    """
    F = src.shape[0]
    nr = R * C
    scratch = np.zeros(n_links, dtype=np.float64)     # one stage row
    touched = np.empty(n_links, dtype=np.int64)
    acc = np.zeros(n_links, dtype=np.float64)         # the current part's sums
    seen = np.zeros(n_links, dtype=np.bool_)
    links = np.empty(n_links, dtype=np.int64)
    out_k = np.empty(max(64, 4 * F), dtype=np.int64)
    out_v = np.empty(max(64, 4 * F), dtype=np.float64)
    hops = np.zeros(F, dtype=np.float64)
    entries = np.zeros(F, dtype=np.int64)
    pos = 0
    na = 0
    f = 0
    while f < F:
        p = part[f]
        while f < F and part[f] == p:
            s = src[f]
            d = dst[f]
            if s != d:
                w = weight[f]
                na = _end_link(s, w, acc, seen, links, na)
                na = _end_link(n_nodes + d, w, acc, seen, links, na)
                ru = s // N
                rv = d // N
                gu = ru // nr
                gv = rv // nr
                h = 0.0
                n = 0
                if gu == gv:
                    if ru != rv:
                        nt = _intra(ru, rv, 1.0, R, C, row0, col0, scratch, touched, 0)
                        na, h, n = _emit(scratch, touched, nt, w, acc, seen, links, na, h, n)
                else:
                    nt = 0
                    for l in range(L):
                        e = g_src[_gidx(gu, gv, l, G, L)]
                        nt = _intra(ru, e, 1.0 / L, R, C, row0, col0, scratch, touched, nt)
                    na, h, n = _emit(scratch, touched, nt, w, acc, seen, links, na, h, n)
                    nt = 0
                    for l in range(L):
                        nt = _add(glob0 + _gidx(gu, gv, l, G, L), 1.0 / L, scratch, touched, nt)
                    na, h, n = _emit(scratch, touched, nt, w, acc, seen, links, na, h, n)
                    nt = 0
                    for l in range(L):
                        e = g_dst[_gidx(gu, gv, l, G, L)]
                        nt = _intra(e, rv, 1.0 / L, R, C, row0, col0, scratch, touched, nt)
                    na, h, n = _emit(scratch, touched, nt, w, acc, seen, links, na, h, n)
                hops[f] = h
                entries[f] = n
            f += 1
        # the part's links, sorted, then cleared for the next part
        out_k, out_v = _room(out_k, out_v, pos, na)
        pos = part_flush(p, n_links, links, na, acc, seen, out_k, out_v, pos)
        na = 0
    return out_k[:pos].copy(), out_v[:pos].copy(), hops, entries
