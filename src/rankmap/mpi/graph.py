"""``dist_graph_create_adjacent``: a distributed graph communicator that follows a placement.

Semantics (these differ from a plain renumbering, which cannot move any traffic): the graph's
vertices are the ranks of ``comm``; each process describes the vertex equal to its rank in
``comm`` (its ``sources``, ``destinations`` and ``weights`` as ranks of ``comm``). After
reordering, the process with rank v in the returned communicator *plays vertex v*: its
neighbour lists (``Get_dist_neighbors``, neighbour collectives) are those given for vertex v,
already in the new numbering (vertex ids are the new ranks). An application therefore decides
what data it owns from its rank in the *returned* communicator, exactly as with
MPI_Cart_create. Without reordering each process keeps its own lists.
"""

from __future__ import annotations

import numpy as np

from ..errors import RankmapError
from .reorder import reorder_ranks, split_by_new_rank

__all__ = ["graph_pattern", "dist_graph_create_adjacent", "source_weights", "weights_as_bytes",
           "EDGE_BYTES", "MPI_INT_MAX"]


def _ranks(values, size: int, what: str) -> list[int]:
    try:
        # whole numbers only: int() made 3.9 rank 3 and "1" rank 1 without a word
        out = [int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, bool)
               else None for v in values]
    except TypeError:
        raise RankmapError(f"bad {what} {values!r}: expected ranks") from None
    if any(v is None for v in out):
        raise RankmapError(f"bad {what} {values!r}: expected ranks (whole numbers)")
    bad = [v for v in out if not 0 <= v < size]
    if bad:
        raise RankmapError(f"{what} names rank {bad[0]}, outside the communicator (0-{size - 1})")
    return out


#: the largest MPI edge weight (a C ``int``): mpi4py raises OverflowError above it, in the
#: processes that gave it only (the others would wait in Create_dist_graph_adjacent)
MPI_INT_MAX = 2**31 - 1


def _short(values, width: int = 200) -> str:
    """``repr(values)``, cut to ``width`` characters (an error stays one readable line)."""
    text = repr(values)
    return text if len(text) <= width else text[:width - 3] + "..."


#: bytes the heaviest edge of a graph from MPI carries (its weights have no unit): an unweighted
#: graph's edges carry it, as an unweighted graph file's do
EDGE_BYTES = 1 << 20


def weights_as_bytes(weights) -> np.ndarray:
    """Bytes of the edges of a graph the program gave with MPI weights.

    MPI edge weights have no unit, so only their ratios are kept: the heaviest edge carries
    :data:`EDGE_BYTES` and the others in proportion, in whole bytes, at least 1 (a zero
    weight still names an edge). A uniformly weighted graph is then the unweighted one
    (weights 1): placed alike whatever the scale (weights of 1 as 1 byte each made the
    per-message overhead, not the links, decide).

    Parameters
    ----------
    weights : array_like of float
        The edges' weights (non-negative).

    Returns
    -------
    numpy.ndarray
        float64 bytes of every edge.
    """
    w = np.asarray(weights, dtype=np.float64)
    top = float(w.max()) if w.size else 0.0
    if top <= 0:
        return np.full(w.shape, float(EDGE_BYTES))
    return np.maximum(1.0, np.round(w / top * EDGE_BYTES))


def graph_pattern(lists):
    """Pattern of the whole graph from every vertex's (sources, destinations, weights).

    Parameters
    ----------
    lists : list of tuple
        Entry v is ``(sources, destinations, weights)`` of vertex v, as ranks of the
        communicator; ``weights[i]`` is the volume sent to ``destinations[i]`` (any unit, a
        zero weight still names an edge).

    Returns
    -------
    Pattern
        A one-phase ``graph`` pattern with one flow per edge u->v.

    Raises
    ------
    RankmapError
        When an edge u->v is given by u but v does not list u as a source (or vice versa).
    """
    from ..patterns.base import Pattern, Phase
    size = len(lists)
    src = np.concatenate([np.full(len(d), v) for v, (_, d, _) in enumerate(lists)] or [[]])
    dst = np.concatenate([np.asarray(d, dtype=np.int64) for _, d, _ in lists] or [[]])
    w = np.concatenate([np.asarray(wt, dtype=np.float64) for _, _, wt in lists] or [[]])
    w = weights_as_bytes(w)  # ratios only: the heaviest edge 1 MiB, a zero weight 1 byte
    out_edges = sorted(zip(src.astype(int).tolist(), dst.astype(int).tolist()))
    in_edges = sorted((int(u), v) for v, (s, _, _) in enumerate(lists) for u in s)
    if out_edges != in_edges:
        diff = sorted(set(out_edges) ^ set(in_edges)) or [out_edges[0]]
        u, v = diff[0]
        raise RankmapError(f"inconsistent graph: edge {u}->{v} is in the destinations of rank "
                           f"{u} or the sources of rank {v}, not both")
    return Pattern(spec="dist_graph", kind="graph", n_ranks=size,
                   phases=[Phase("graph", src.astype(np.int64), dst.astype(np.int64), w)])


def dist_graph_create_adjacent(comm, sources, destinations, weights=None, reorder: bool = True,
                               machine=None, mapping: str = "auto", seed: int = 0):
    """Collective: a distributed graph communicator that follows a placement (module docs).

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        Communicator whose processes all call this function; each describes the vertex equal
        to its rank in ``comm``.
    sources : sequence of int
        Ranks of ``comm`` that send to this vertex.
    destinations : sequence of int
        Ranks of ``comm`` this vertex sends to.
    weights : sequence of int, optional
        ``weights[i]`` is the volume sent to ``destinations[i]`` (non-negative integers, any
        unit). The source weights of the new communicator are the weights their senders
        gave. When no process gives weights the communicator is unweighted
        (``MPI_UNWEIGHTED``, as mpi4py makes it) and the placement counts 1 per edge.
    reorder : bool, optional
        Apply the placement (True) or keep every process on its own vertex.
    machine : str or Machine, optional
        Machine spec or object; default ``$RANKMAP_MACHINE``.
    mapping : str, optional
        Name of the placement to apply (``auto`` picks the best candidate).
    seed : int, optional
        Seed of the randomised placements.

    Returns
    -------
    mpi4py.MPI.Distgraphcomm
        The graph communicator; the process of rank v in it plays vertex v.

    Raises
    ------
    RankmapError
        On every process, when a rank is outside the communicator, the weights are not one
        non-negative integer per destination (at most :data:`MPI_INT_MAX`, MPI's ``int``),
        or the processes' lists disagree on an edge.
    """
    size = comm.Get_size()
    # a process's own bad lists are said on every process: checked here, then gathered (a
    # process that raised before the gather left the others waiting in it)
    try:
        srcs = _ranks(sources, size, "sources")
        dsts = _ranks(destinations, size, "destinations")
        if weights is None:
            wts = [1] * len(dsts)
        else:
            try:
                wts = [int(x) for x in weights]
            except (TypeError, ValueError, OverflowError):
                wts = []
            if (len(wts) != len(dsts) or any(not 0 <= x <= MPI_INT_MAX for x in wts)
                    or wts != list(weights)):
                raise RankmapError(f"weights {_short(weights)} must be {len(dsts)} "
                                   "non-negative integers, one per destination (MPI edge "
                                   f"weights: C ints, at most {MPI_INT_MAX})")
        mine = (srcs, dsts, wts, weights is None)
    except (RankmapError, TypeError, ValueError, OverflowError) as exc:
        # any of this process's own input errors, said on every process after the gather
        mine = str(exc) if isinstance(exc, RankmapError) else \
            f"bad sources, destinations or weights: {exc}"
    gathered = comm.gather(mine, root=0)
    lists, error, unweighted = None, None, False
    if comm.Get_rank() == 0:
        bad = next(((p, g) for p, g in enumerate(gathered) if isinstance(g, str)), None)
        if bad is not None:
            error = f"process {bad[0]}: {bad[1]}"
        else:
            lists = [g[:3] for g in gathered]
            unweighted = all(g[3] for g in gathered)
            try:
                graph_pattern(lists)
            except RankmapError as exc:
                error = str(exc)
    error, unweighted = comm.bcast((error, unweighted), root=0)
    if error is not None:
        raise RankmapError(error)
    if reorder:
        reordering = reorder_ranks(comm, lambda: graph_pattern(lists), machine, mapping, seed)
        new_rank = reordering.new_rank
    else:
        new_rank = None
    # rank 0 sends every process the lists of the vertex it plays (itself without reordering)
    mine = None
    if comm.Get_rank() == 0:
        sw = source_weights(lists)
        mine = []
        for p in range(size):
            v = p if new_rank is None else int(new_rank[p])
            mine.append((*lists[v], sw[v]))
    s, d, w, sw = comm.scatter(mine, root=0)
    if unweighted:
        w = sw = None
    if new_rank is None:
        return _create(comm, s, d, w, sw)
    sub = split_by_new_rank(comm, reordering)
    graph = _create(sub, s, d, w, sw)
    sub.Free()
    return graph


def source_weights(lists) -> list[list[int]]:
    """For every vertex v, the weight each of its sources gave to its edge towards v.

    With repeated edges u->v the k-th listing of u as a source of v takes the weight of the
    k-th listing of v among u's destinations.

    Parameters
    ----------
    lists : list of tuple
        Entry v is ``(sources, destinations, weights)`` of vertex v (a consistent graph, as
        checked by :func:`graph_pattern`).

    Returns
    -------
    list of list of int
        Entry v holds one weight per entry of vertex v's ``sources``, in the same order.
    """
    out = []
    for v, (srcs, _, _) in enumerate(lists):
        seen: dict[int, int] = {}
        row = []
        for u in srcs:
            k = seen.get(u, 0)
            seen[u] = k + 1
            positions = [i for i, d in enumerate(lists[u][1]) if d == v]
            row.append(lists[u][2][positions[k]])
        out.append(row)
    return out


def _create(comm, srcs, dsts, wts, sws):
    """The graph communicator (weights None: ``MPI_UNWEIGHTED``)."""
    return comm.Create_dist_graph_adjacent(srcs, dsts, sourceweights=sws, destweights=wts,
                                           reorder=False)
