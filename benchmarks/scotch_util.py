"""What the benchmarks that run Scotch as a peer share: the command, and the pattern as a
Scotch graph."""

from __future__ import annotations

#: the Scotch command and options every benchmark runs (``-b0``: no load imbalance; ``-Cd``:
#: deterministic even with threads, without which one graph's mapping changed from run to run)
SCOTCH_GMAP = ["scotch_gmap", "-b0", "-Cd"]


def write_scotch_graph(path: str, pattern) -> None:
    """Write the pattern's symmetric communication graph in Scotch's .grf format.

    Parameters
    ----------
    path : str
        The .grf file to write.
    pattern : rankmap.patterns.Pattern
        The pattern; edge weights are its bytes between each pair of ranks (both directions),
        scaled to Scotch's integer weights (:func:`scotch_weights`).
    """
    from rankmap.mappers.graph_partition import communication_graph

    g = communication_graph(pattern)
    w = scotch_weights(g.data)
    with open(path, "w") as fh:
        fh.write(f"0\n{g.shape[0]} {g.nnz}\n0 010\n")
        for v in range(g.shape[0]):
            a, b = g.indptr[v], g.indptr[v + 1]
            items = " ".join(f"{int(w[k])} {int(g.indices[k])}" for k in range(a, b))
            fh.write(f"{b - a} {items}\n")


#: Scotch (Debian's build) sums edge weights in 32-bit integers: the weights of a graph must
#: add up to less than 2**31 (``gtst`` reports "edge load sum overflow" and ``scotch_gmap``
#: crashes with SIGSEGV or hangs beyond it); this leaves a factor 2 of room
SCOTCH_WEIGHT_SUM = 2**30


def scotch_weights(data):
    """Positive integer edge weights proportional to ``data`` (bytes), the largest at most
    10**6 and all of them together under :data:`SCOTCH_WEIGHT_SUM`.

    Parameters
    ----------
    data : numpy.ndarray
        Bytes of every edge entry (both directions of an edge count).

    Returns
    -------
    numpy.ndarray
        int64 weights, each at least 1.
    """
    import numpy as np

    data = np.asarray(data, dtype=np.float64)
    if data.size == 0 or data.max() <= 0:
        return np.ones(data.size, dtype=np.int64)
    scale = min(1e6 / data.max(), SCOTCH_WEIGHT_SUM / data.sum())
    return np.maximum(1, np.rint(data * scale)).astype(np.int64)
