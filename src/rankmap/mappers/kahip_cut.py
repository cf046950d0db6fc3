"""KaHIP's cut of a graph, each distinct cut made once within a mapper's build.

Every mapper that cuts graphs (``graph``'s node parts and network bisection, the
recursive bipartitions of :mod:`rankmap.mappers.graph_partition`) calls KaHIP through
:func:`kahip_blocks`. KaHIP's ``kaffpa`` is deterministic: the same graph, block count,
imbalance, seed and mode give the same blocks. Patterns made of identical pieces hand it
the same subgraph many times: on ``fft2d:64x64`` with 4 cores a node, the 16 blocks of the
two-level node cut are the same 256-vertex graph, and the network bisection cuts the same
domains' subgraphs again and again (80 calls, 37 distinct; 0.53 of KaHIP's 1.15 s went to
repeats). Inside :func:`memoised_cuts` (every :func:`~rankmap.mappers.build_mapping` runs
in one), a cut already made is answered from memory, keyed by a 256-bit BLAKE2b digest of
everything KaHIP is given. Outside it, every call runs KaHIP. The memory lives as long as the
build: separate builds (and separate runs in one process) never share it.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
from typing import Iterator

import numpy as np

__all__ = ["kahip_blocks", "kahip_seed", "memoised_cuts"]

#: the memory of the innermost :func:`memoised_cuts` (None outside any)
_CUTS: contextvars.ContextVar[dict | None] = contextvars.ContextVar("rankmap_kahip_cuts",
                                                                   default=None)


@contextlib.contextmanager
def memoised_cuts() -> Iterator[None]:
    """Within the block, each distinct KaHIP cut of :func:`kahip_blocks` is made once.

    Nested blocks share the outermost block's memory, which is dropped when it ends.

    Yields
    ------
    None
    """
    if _CUTS.get() is not None:
        yield
        return
    token = _CUTS.set({})
    try:
        yield
    finally:
        _CUTS.reset(token)


def kahip_seed(seed: int) -> int:
    """KaHIP's seed (a C int, 0 to 2**31-1) for a rankmap seed (0 to 2**63-1).

    Parameters
    ----------
    seed : int
        The rankmap seed.

    Returns
    -------
    int
        ``seed`` itself below 2**31 (placements of those seeds are unchanged); above, the
        64-bit value mixed (splitmix64's finaliser) and cut to 31 bits: taking it modulo
        2**31 gave seeds 2**31, 2**32 and 0 the same placement.
    """
    seed = int(seed)
    if 0 <= seed < 1 << 31:
        return seed
    z = seed & ((1 << 64) - 1)
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & ((1 << 64) - 1)
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & ((1 << 64) - 1)
    return (z ^ (z >> 31)) & ((1 << 31) - 1)


def kahip_blocks(indptr: np.ndarray, indices: np.ndarray, weights: np.ndarray, k: int,
                 imbalance: float, seed: int, mode: int) -> np.ndarray:
    """KaHIP's (``kaffpa``) cut of a graph into ``k`` blocks, every vertex of weight 1.

    Parameters
    ----------
    indptr, indices : numpy.ndarray
        The graph's CSR structure (symmetric, no diagonal).
    weights : numpy.ndarray
        int32 edge weights, one per entry of ``indices`` (positive).
    k : int
        Number of blocks (at least 2).
    imbalance : float
        KaHIP's allowed imbalance (a fraction of the average block size).
    seed : int
        The random seed (0 to 2**63-1): below 2**31 it is KaHIP's seed as it is; a larger
        one is mixed down to 31 bits (:func:`kahip_seed`), so seeds 2**31 and 2**32 are not
        both KaHIP's seed 0.
    mode : int
        KaHIP's mode (0 FAST, 1 ECO, 2 STRONG).

    Returns
    -------
    numpy.ndarray
        int64 block (0..k-1) of every vertex; a new array the caller may change.
    """
    import kahip

    n = len(indptr) - 1
    args = (np.ascontiguousarray(indptr, dtype=np.int32),
            np.ascontiguousarray(weights, dtype=np.int32),
            np.ascontiguousarray(indices, dtype=np.int32))
    settings = (int(k), float(imbalance), kahip_seed(seed), int(mode))
    memory = _CUTS.get()
    key = None
    if memory is not None:
        digest = hashlib.blake2b(repr((n,) + settings).encode(), digest_size=32)
        for a in args:
            digest.update(len(a).to_bytes(8, "little"))
            digest.update(a.data)
        key = digest.digest()
        known = memory.get(key)
        if known is not None:
            return known.copy()
    indptr32, weights32, indices32 = args
    _cut, blocks = kahip.kaffpa(np.ones(n, dtype=np.int32), indptr32, weights32, indices32,
                                settings[0], settings[1], True, settings[2], settings[3])
    blocks = np.asarray(blocks, dtype=np.int64)
    if key is not None:
        memory[key] = blocks.copy()
    return blocks
