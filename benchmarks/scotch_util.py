"""What the benchmarks that run Scotch as a peer share: the pattern as a Scotch graph."""

from __future__ import annotations


def write_scotch_graph(path: str, pattern) -> None:
    """Write the pattern's symmetric communication graph in Scotch's .grf format.

    Parameters
    ----------
    path : str
        The .grf file to write.
    pattern : rankmap.patterns.Pattern
        The pattern; edge weights are its bytes between each pair of ranks (both directions),
        scaled to Scotch's integer weights.
    """
    from rankmap.mappers.graph_partition import communication_graph
    from rankmap.mappers.node_partition import int_weights

    g = communication_graph(pattern)
    w = int_weights(g.data)
    with open(path, "w") as fh:
        fh.write(f"0\n{g.shape[0]} {g.nnz}\n0 010\n")
        for v in range(g.shape[0]):
            a, b = g.indptr[v], g.indptr[v + 1]
            items = " ".join(f"{int(w[k])} {int(g.indices[k])}" for k in range(a, b))
            fh.write(f"{b - a} {items}\n")
