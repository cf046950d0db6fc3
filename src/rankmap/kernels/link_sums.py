"""Compiled sums of a few flows' routes per (part, link), from their CSR path rows.

A local search changes the loads of the links on its moved flows' old and new routes; the
change is every flow's signed weight times its share of each link, summed per link and per
part (a phase). :func:`row_link_sums` does it in one pass over the rows, adding each key's
entries in flow order and, within a flow, in row order -- the order in which ``numpy.bincount``
adds them -- so the sums are the same, bit for bit, as the array-at-a-time version.
"""

from __future__ import annotations

import numpy as np

from .jit import kernel

__all__ = ["row_link_sums", "part_flush"]


@kernel(nogil=True)
def part_flush(p, n_links, touched, na, acc, seen, keys, sums, pos):
    """Write the part's sums as sorted keys ``p * n_links + link`` from ``pos`` and clear
    them for the next part.

    Parameters
    ----------
    p, n_links : int
        The part and the machine's links.
    touched : ndarray of int64
        The part's links, in first-touch order (``na`` of them).
    na : int
        Number of links of the part.
    acc : ndarray of float64, shape (n_links,)
        The part's sum of every link (zero elsewhere).
    seen : ndarray of bool, shape (n_links,)
        Whether each link is among the part's (cleared here).
    keys : ndarray of int64
        Output keys (room for ``na`` more from ``pos``).
    sums : ndarray of float64
        Output sums, beside the keys.
    pos : int
        First free output position.

    Returns
    -------
    int
        The next free output position.
    """
    done = np.sort(touched[:na])
    for i in range(na):
        lk = done[i]
        keys[pos] = p * n_links + lk
        sums[pos] = acc[lk]
        pos += 1
        acc[lk] = 0.0
        seen[lk] = False
    return pos


@kernel
def row_link_sums(indptr, links, frac, weight, part, n_links, hop, use_hop):
    """Signed weights of flows summed along their rows, per part and link.

    Parameters
    ----------
    indptr : ndarray of int64, shape (n_flows + 1,)
        Row pointers of the flows' paths.
    links : ndarray of int32 or int64
        Link of every entry.
    frac : ndarray of float64
        Share of the flow's bytes on that link.
    weight : ndarray of float64
        Signed weight of every flow (bytes).
    part : ndarray of int64
        Part of every flow; flows come grouped by part, in part order.
    n_links : int
        Links of the machine.
    hop : ndarray of bool
        Which links count as a hop (read when ``use_hop``).
    use_hop : bool
        Count only ``hop`` links as hops and entries (else every link).

    Returns
    -------
    keys : ndarray of int64
        Sorted distinct ``part * n_links + link`` of every entry.
    sums : ndarray of float64
        Each key's sum of ``frac * weight``, in flow and row order.
    hops : ndarray of float64
        Every flow's hops: its shares summed over hop links, in row order.
    entries : ndarray of int64
        Every flow's entries on hop links.
    """
    F = indptr.shape[0] - 1
    total = indptr[F]
    acc = np.zeros(n_links, dtype=np.float64)
    seen = np.zeros(n_links, dtype=np.bool_)
    touched = np.empty(n_links, dtype=np.int64)
    keys = np.empty(total, dtype=np.int64)
    sums = np.empty(total, dtype=np.float64)
    hops = np.zeros(F, dtype=np.float64)
    entries = np.zeros(F, dtype=np.int64)
    pos = 0
    f = 0
    while f < F:
        p = part[f]
        na = 0
        while f < F and part[f] == p:
            w = weight[f]
            h = 0.0
            n = 0
            for j in range(indptr[f], indptr[f + 1]):
                lk = links[j]
                fr = frac[j]
                if not seen[lk]:
                    seen[lk] = True
                    touched[na] = lk
                    na += 1
                acc[lk] += fr * w
                if use_hop:
                    if hop[lk]:
                        h += fr * 1.0
                        n += 1
                    else:
                        h += fr * 0.0
                else:
                    h += fr
                    n += 1
            hops[f] = h
            entries[f] = n
            f += 1
        pos = part_flush(p, n_links, touched, na, acc, seen, keys, sums, pos)
    return keys[:pos].copy(), sums[:pos].copy(), hops, entries
