"""Random pairwise exchange (seed 003, section 2): ranks pair off at random and every pair
exchanges a message in both directions. With an odd number of ranks one rank sits out.
"""

from __future__ import annotations

import numpy as np

from .base import Pattern, Phase

__all__ = ["make_random_pairs"]


def make_random_pairs(spec_text: str, n_ranks: int, seed: int = 0,
                      nbytes: int = 1 << 20) -> Pattern:
    """One phase ``pairs``: a random perfect matching of ``n_ranks`` ranks, both directions.

    Parameters
    ----------
    spec_text : str
        The spec, kept as the pattern's name.
    n_ranks : int
        Ranks (an odd one stays idle).
    seed : int
        Seed of the matching.
    nbytes : int
        Bytes each way.

    Returns
    -------
    Pattern
        One phase ``pairs``.
    """
    perm = np.random.default_rng(seed).permutation(n_ranks)
    half = n_ranks // 2
    a, b = perm[:2 * half:2], perm[1:2 * half:2]
    src = np.concatenate([a, b])
    dst = np.concatenate([b, a])
    notes = []
    if n_ranks % 2:
        notes.append(f"note: {spec_text}: {n_ranks} ranks have no perfect matching; rank "
                     f"{int(perm[-1])} sends nothing")
    return Pattern(spec=spec_text, kind="pairs", n_ranks=n_ranks,
                   phases=[Phase("pairs", src, dst, float(nbytes))],
                   params={"seed": seed, "bytes": nbytes}, notes=notes)
