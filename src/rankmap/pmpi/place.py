"""The engine behind the PMPI library's reordering: a request file in, new ranks out.

Rank 0 of the reordering communicator writes a request (text, one ``key value`` per line)::

    rankmap-pmpi-request 1
    call MPI_Cart_create
    machine bgp:512         (the $RANKMAP_MACHINE of rank 0)
    mapping auto            ($RANKMAP_MAPPING)
    stencil star            ($RANKMAP_STENCIL: star or box, for Cartesian grids)
    seed 0                  ($RANKMAP_SEED)
    processes 6
    ranks 4
    dims 2 2                (Cartesian calls) / edges E, then E lines "src dst weight" (graphs)
    periods 0 1
    labels                  (then one node label per process, in rank order)

and runs ``rankmap pmpi place REQUEST -o RESULT``, which answers::

    rankmap-pmpi-result 1
    mapping TXYZ
    new_rank
    <new rank of process 0> ... (-1: the process is not part of the topology)

Graph edge weights are the program's MPI edge weights (1 when unweighted), kept as ratios:
the heaviest edge carries 1 MiB (:func:`rankmap.mpi.graph.weights_as_bytes`).
"""

from __future__ import annotations

import numpy as np

from ..errors import RankmapError
from ..io.atomic import check_writable, write_atomic
from ..patterns.base import Pattern, Phase

__all__ = ["Request", "read_request", "request_pattern", "place_request", "format_result"]

STENCILS = ("star", "box")


class Request:
    """A parsed request: ``fields`` (key -> value text), ``labels``, ``edges`` (E x 3)."""

    def __init__(self, fields: dict[str, str], labels: list[str], edges: np.ndarray | None):
        self.fields = fields
        self.labels = labels
        self.edges = edges

    def get(self, key: str) -> str:
        """The value of ``key``.

        Parameters
        ----------
        key : str
            A request key, e.g. ``machine``.

        Returns
        -------
        str
            Its value text.

        Raises
        ------
        RankmapError
            When the request has no ``key`` line.
        """
        if key not in self.fields:
            raise RankmapError(f"PMPI request: no {key!r} line")
        return self.fields[key]

    def integer(self, key: str) -> int:
        """The value of ``key`` as an integer.

        Parameters
        ----------
        key : str
            A request key, e.g. ``processes``.

        Returns
        -------
        int
            Its value.

        Raises
        ------
        RankmapError
            When the line is missing or its value is not an integer.
        """
        value = self.get(key)
        try:
            return int(value)
        except ValueError:
            raise RankmapError(f"PMPI request: {key} {value!r} is not an integer") from None


def read_request(path: str) -> Request:
    """Parse a request file (format in the module docstring).

    Parameters
    ----------
    path : str
        The request file rank 0 of the program wrote.

    Returns
    -------
    Request
        Its key lines, node labels (one per process) and edges (graph calls only).

    Raises
    ------
    RankmapError
        When the first line is not ``rankmap-pmpi-request 1``, the process count is bad, node
        labels are missing or empty, or the edge list is malformed.
    """
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = fh.read().split("\n")
    if not lines or lines[0].strip() != "rankmap-pmpi-request 1":
        raise RankmapError(f"{path}: not a rankmap PMPI request (first line "
                           f"{lines[0][:40] if lines else ''!r})")
    fields: dict[str, str] = {}
    i = 1
    while i < len(lines) and lines[i] != "labels":
        key, _, value = lines[i].partition(" ")
        if key:
            fields[key] = value.strip()
        i += 1
    req = Request(fields, [], None)
    n = req.integer("processes")
    if n < 1 or i + n >= len(lines) + 1:
        raise RankmapError(f"{path}: expected {n} node labels after 'labels'")
    labels = [ln.strip() for ln in lines[i + 1:i + 1 + n]]
    if len(labels) != n or not all(labels):
        raise RankmapError(f"{path}: expected {n} non-empty node labels")
    req.labels = labels
    rest = lines[i + 1 + n:]
    if rest and rest[0].startswith("edges "):
        try:
            n_edges = int(rest[0].split()[1])
            data = " ".join(rest[1:1 + n_edges]).split()
            edges = np.array(data, dtype=np.int64).reshape(n_edges, 3) if n_edges else \
                np.zeros((0, 3), dtype=np.int64)
        except (ValueError, IndexError, OverflowError):
            raise RankmapError(f"{path}: bad edge list (3 integers of 64 bits a line)") from None
        req.edges = edges
    return req


def request_pattern(req: Request) -> Pattern:
    """The communication pattern of the topology the program asked for.

    Parameters
    ----------
    req : Request
        A parsed request.

    Returns
    -------
    Pattern
        A star or box stencil on ``dims`` without its dimensions of width 1 (they hold no
        neighbour and change no rank; Cartesian calls), or a ``graph`` pattern whose flow
        sizes are the program's edge weights (graph calls; self-loops dropped).

    Raises
    ------
    RankmapError
        When ranks and processes disagree, the stencil, dims or periods are bad (the message
        names the bad value), more than 6 dimensions are wider than 1, an edge names a vertex
        outside the ranks, or the graph has no edges between distinct ranks.
    """
    n_ranks = req.integer("ranks")
    n_procs = req.integer("processes")
    if not 1 <= n_ranks <= n_procs:
        raise RankmapError(f"PMPI request: {n_ranks} ranks on {n_procs} processes")
    call = req.get("call")
    if "dims" in req.fields:
        from ..patterns.stencil import MAX_STENCIL_DIMS, make_stencil
        stencil = req.fields.get("stencil", "star")
        if stencil not in STENCILS:
            raise RankmapError(f"RANKMAP_STENCIL={stencil!r}: choose star or box")
        text = req.get("dims")
        try:
            dims = tuple(int(x) for x in text.split())
            periods = tuple(x != "0" for x in req.get("periods").split())
        except ValueError:
            raise RankmapError(f"PMPI request: bad dims {text!r} (integers expected)") from None
        bad = [d for d in dims if d < 1]
        if not dims or bad:
            raise RankmapError(f"PMPI request: bad dims {text!r}"
                               + (f": width {bad[0]} is not 1 or more" if bad else ""))
        if len(periods) != len(dims):
            raise RankmapError(f"PMPI request: {len(periods)} periods for the {len(dims)} "
                               f"dims {text!r}")
        if int(np.prod(dims, dtype=object)) != n_ranks:
            raise RankmapError(f"PMPI request: dims {text!r} make "
                               f"{int(np.prod(dims, dtype=object))} ranks, not {n_ranks}")
        grid = "x".join(map(str, dims))
        # a dimension of width 1 holds no neighbour and leaves the row-major rank of every
        # cell as it is: the engine places the grid without it (the program's grid is MPI's)
        wide = [k for k, d in enumerate(dims) if d > 1]
        if len(wide) > MAX_STENCIL_DIMS:
            raise RankmapError(f"{call} grid {grid}: {len(wide)} dimensions wider than 1; "
                               f"rankmap places grids of up to {MAX_STENCIL_DIMS}")
        if not wide:
            wide = [0]      # one cell: a 1-rank grid
        return make_stencil(f"{call}:{grid}", tuple(dims[k] for k in wide),
                            box=stencil == "box", periodic=tuple(periods[k] for k in wide))
    if req.edges is None:
        raise RankmapError("PMPI request: neither dims nor edges")
    src, dst, w = req.edges[:, 0], req.edges[:, 1], req.edges[:, 2].astype(np.float64)
    if ((src < 0) | (src >= n_ranks) | (dst < 0) | (dst >= n_ranks)).any():
        raise RankmapError(f"PMPI request: an edge names a vertex outside 0-{n_ranks - 1}")
    keep = src != dst
    if not keep.any():
        raise RankmapError(f"{call}: the graph has no edges between distinct ranks")
    from ..mpi.graph import weights_as_bytes
    w = weights_as_bytes(w[keep])  # ratios only: the heaviest edge 1 MiB, a zero weight 1 byte
    return Pattern(spec=call, kind="graph", n_ranks=n_ranks,
                   phases=[Phase("graph", src[keep], dst[keep], w)])


def place_request(req: Request):
    """Placement for a request.

    Parameters
    ----------
    req : Request
        A parsed request.

    Returns
    -------
    new_rank : numpy.ndarray of int64
        New rank of every process (-1: not part of the topology).
    mapping : str
        The placement applied.

    Raises
    ------
    RankmapError
        Unknown machine, mapping or node label, a bad seed, or a pattern that does not fit.
    """
    from ..machines import parse_machine
    import os

    from ..mpi.nodes import HOST_NODES_ENV, host_nodes, resolve_node_labels
    from ..mpi.placement import assign_ranks

    pattern = request_pattern(req)
    machine = parse_machine(req.get("machine"))
    # the engine runs in rank 0's environment, which the job's processes share
    nodes, reason = resolve_node_labels(req.labels, machine,
                                        host_nodes(os.environ.get(HOST_NODES_ENV)))
    if nodes is None:
        raise RankmapError(f"{reason}; set RANKMAP_NODE to the node id")
    try:
        seed = int(req.fields.get("seed", "0"))
    except ValueError:
        raise RankmapError(f"RANKMAP_SEED={req.fields['seed']!r} is not an integer") from None
    a = assign_ranks(pattern, machine, nodes, req.fields.get("mapping") or "auto", seed)
    return a.new_rank, a.mapping


def format_result(new_rank: np.ndarray, mapping: str) -> str:
    """The result file's text.

    Parameters
    ----------
    new_rank : numpy.ndarray of int
        New rank of every process (-1: not part of the topology).
    mapping : str
        The placement applied, e.g. ``auto (refine:rcb)`` (line breaks become spaces).

    Returns
    -------
    str
        ``rankmap-pmpi-result 1``, the mapping line, ``new_rank`` and one rank per line.
    """
    body = "\n".join(str(int(r)) for r in new_rank)
    name = " ".join(str(mapping).split())
    return f"rankmap-pmpi-result 1\nmapping {name}\nnew_rank\n{body}\n"


def run_place(request_path: str, result_path: str, force: bool = False) -> str:
    """Read a request, compute the placement, write the result; returns the mapping name.

    Parameters
    ----------
    request_path : str
        The request file the library wrote.
    result_path : str
        The result file to write (the library's is new, in its own temporary folder).
    force : bool
        Replace an existing result file.

    Returns
    -------
    str
        The placement applied (``auto (refine:rcb)``).
    """
    check_writable(result_path, force)      # before the work, not after it
    new_rank, mapping = place_request(read_request(request_path))
    write_atomic(result_path, format_result(new_rank, mapping), force=force)
    return mapping
