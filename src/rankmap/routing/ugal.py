"""The UGAL policy of a dragonfly: which pairs of groups go Valiant for a phase's traffic.

Per pair of groups (so per flow), from the phase's own load under minimal routing: with
``T[a, b]`` the bytes on one global link from group a to group b, flows from group s to group
d go Valiant when ``T[s, d] > 2 * (mean over i of max(T[s, i], T[i, d]) + T[s, d] / (G - 2))``
(i: the G - 2 other groups), else minimal.

This is UGAL's rule (Singh's thesis; Kim, Dally, Scott and Abts' dragonfly paper, UGAL-G)
with global-link loads in place of queue lengths: a packet goes minimally when the congestion
of the minimal path times its hop count is at most that of the non-minimal path times its
hop count. The minimal path crosses one global link, s -> d; a Valiant path through group i
crosses two, s -> i and then i -> d (links are directed: what group d sends to i does not
slow traffic arriving at d), so its congestion is the busier of ``T[s, i]`` and ``T[i, d]``
and its global hop count twice the minimal one: hence the factor 2. The intermediate group is
drawn uniformly, so its congestion is averaged over i. The pair's own traffic weighs on both
sides: gone Valiant, its bytes spread over the G - 2 intermediate groups and add
``T[s, d] / (G - 2)`` to each of their links. Without that term a lone flow on an idle
network went Valiant (its minimal link "busier" than idle Valiant links): two global hops
instead of one and no more bandwidth with 3 groups; with many groups a heavy pair still goes
Valiant, where spreading it over their links does raise its bandwidth.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ugal_valiant_pairs"]


def ugal_valiant_pairs(machine, src, dst, nbytes) -> np.ndarray:
    """Group pairs whose flows UGAL sends Valiant.

    Parameters
    ----------
    machine : Dragonfly
        The network (groups, routers, nodes, parallel global links).
    src, dst : array of int
        Source and destination node ids of the phase's flows.
    nbytes : array of float
        Bytes of every flow.

    Returns
    -------
    numpy.ndarray
        Boolean G x G matrix; entry (s, d) is True when flows from group s to group d go
        Valiant. Always False on the diagonal and with fewer than 3 groups.
    """
    G = machine.G
    out = np.zeros((G, G), dtype=bool)
    if G < 3:
        return out
    per_group = machine.R * machine.C * machine.N
    gs, gd = np.asarray(src) // per_group, np.asarray(dst) // per_group
    inter = gs != gd
    T = np.bincount(gs[inter] * G + gd[inter], weights=np.asarray(nbytes)[inter],
                    minlength=G * G).reshape(G, G) / machine.L
    val = np.maximum(T[:, :, None], T[None, :, :])   # val[s, i, d] = max(T[s, i], T[i, d])
    idx = np.arange(G)
    val[idx, idx, :] = 0.0
    val[:, idx, idx] = 0.0
    est = (val.sum(axis=1) + T) / (G - 2)    # the pair's own bytes spread over G - 2 groups
    out = T > 2.0 * est
    out[idx, idx] = False
    return out
