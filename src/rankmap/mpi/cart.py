"""``cart_create``: an MPI Cartesian communicator whose ranks really follow a placement.

Grid position <-> rank follows MPI (row-major, last dimension fastest); the placement decides
which *process* gets which rank, so ``Get_coords``, ``Shift`` and the neighbour collectives
of the returned communicator are consistent with each other by construction (the topology is
created with ``reorder=False`` on a communicator already split in the new order).
"""

from __future__ import annotations

from ..errors import RankmapError
from .reorder import reorder_ranks, split_by_new_rank

__all__ = ["check_cart_args", "cart_create", "cart_from_reordering", "placed_dims"]


def check_cart_args(size: int, dims, periods) -> tuple[list[int], list[bool]]:
    """Validate Cartesian ``dims`` and ``periods`` for a communicator of ``size`` processes.

    Parameters
    ----------
    size : int
        Number of processes of the communicator.
    dims : sequence of int
        Extent of each grid dimension (1 to 16 dimensions, each positive); their product must
        be at most ``size``.
    periods : sequence of bool, bool or None
        Whether each dimension wraps around; one bool applies to every dimension, None means
        no dimension is periodic.

    Returns
    -------
    dims : list of int
        The validated extents.
    periods : list of bool
        One flag per dimension.

    Raises
    ------
    RankmapError
        When ``dims`` or ``periods`` are not lists of the right kind, their lengths differ, or
        the grid needs more processes than ``size``.
    """
    from ..validate import as_int, limit, show
    if isinstance(dims, (str, bytes)) or not hasattr(dims, "__iter__"):
        raise RankmapError(f"bad dims {show(dims)}: expected a list of positive integers")
    dims = list(dims)
    dims = [as_int(d, f"dims entry in {show(list(dims) if len(dims) < 20 else '...')}",
                   minimum=1, maximum=limit("ranks")) for d in dims]
    if not dims:
        raise RankmapError("bad dims []: expected a list of positive integers")
    if len(dims) > 16:
        raise RankmapError(f"bad dims: {len(dims)} dimensions, at most 16")
    if periods is None:
        periods = [False] * len(dims)
    elif isinstance(periods, bool):
        periods = [periods] * len(dims)
    if isinstance(periods, (str, bytes)) or not hasattr(periods, "__iter__"):
        raise RankmapError(f"bad periods {show(periods)}: expected a list of booleans")
    periods = list(periods)
    for p in periods:
        if not isinstance(p, (bool, int)) or isinstance(p, int) and p not in (0, 1):
            raise RankmapError(f"bad periods entry {show(p)}: expected True or False")
    periods = [bool(p) for p in periods]
    if len(periods) != len(dims):
        raise RankmapError(f"periods {periods!r} has {len(periods)} entries, dims {dims!r} has "
                           f"{len(dims)}")
    n = 1
    for d in dims:
        n *= d
    if n > size:
        raise RankmapError(f"dims {'x'.join(map(str, dims))} need {n} processes, the "
                           f"communicator has {size}")
    return dims, periods


def cart_create(comm, dims, periods=None, reorder: bool = True, machine=None,
                mapping: str = "auto", seed: int = 0, box: bool = False):
    """Collective: a Cartesian communicator on ``dims`` whose ranks follow a placement.

    With ``reorder`` the placement ``mapping`` of the Cartesian halo pattern (star stencil,
    or box stencil with ``box=True``) on the job's nodes is applied. Processes beyond
    ``prod(dims)`` get ``MPI.COMM_NULL``, as with MPI_Cart_create.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        Communicator whose processes all call this function.
    dims : sequence of int
        Extent of each grid dimension (product at most ``comm``'s size).
    periods : sequence of bool, bool or None, optional
        Whether each dimension wraps around (default: none).
    reorder : bool, optional
        Apply the placement (True) or keep the launcher's order (plain ``Create_cart``).
    machine : str or Machine, optional
        Machine spec or object; default ``$RANKMAP_MACHINE``. Without one the ranks are not
        reordered (a ``ReorderWarning`` says so).
    mapping : str, optional
        Name of the placement to apply (``auto`` picks the best candidate).
    seed : int, optional
        Seed of the randomised placements; same seed, same ranks.
    box : bool, optional
        Take the diagonal neighbours into the halo pattern (box stencil).

    Returns
    -------
    mpi4py.MPI.Cartcomm
        The Cartesian communicator, or ``MPI.COMM_NULL`` on processes outside the grid.

    Raises
    ------
    RankmapError
        On every process, when ``dims``/``periods`` are bad (on any process, or not the same
        on every one), more than 6 dimensions are wider than 1 (with ``reorder``), or the
        placement cannot be built. Dimensions of width 1 are left out of the placement
        (:func:`placed_dims`), not out of the communicator.
    """
    dims, periods = _agreed_args(comm, dims, periods, reorder)
    if not reorder:
        return comm.Create_cart(dims, periods, reorder=False)
    placed = placed_dims(dims)

    def pattern():
        """The Cartesian halo pattern (built on the root process only), on the grid without
        its dimensions of width 1 (:func:`placed_dims`)."""
        from ..patterns.stencil import make_stencil
        return make_stencil(f"cart:{'x'.join(map(str, dims))}",
                            tuple(dims[k] for k in placed), box=box,
                            periodic=tuple(periods[k] for k in placed))

    reordering = reorder_ranks(comm, pattern, machine, mapping, seed)
    return cart_from_reordering(comm, dims, periods, reordering)


def placed_dims(dims) -> list[int]:
    """The dimensions of a Cartesian grid that its placement takes into account: those wider
    than 1 (``[0]`` when none is).

    A dimension of width 1 holds no neighbour and leaves the row-major rank of every cell as
    it is: the grid is placed without it (MPI's grid, ``MPI.Compute_dims(4, 7)`` =
    2x2x1x1x1x1x1, stays the communicator's), as the PMPI library does.

    Parameters
    ----------
    dims : sequence of int
        The grid's extents (validated).

    Returns
    -------
    list of int
        Indices of the dimensions placed.

    Raises
    ------
    RankmapError
        When more than :data:`rankmap.patterns.stencil.MAX_STENCIL_DIMS` dimensions are wider
        than 1.
    """
    from ..patterns.stencil import MAX_STENCIL_DIMS
    wide = [k for k, d in enumerate(dims) if d > 1]
    if len(wide) > MAX_STENCIL_DIMS:
        raise RankmapError(f"cart_create dims {'x'.join(map(str, dims))}: {len(wide)} "
                           f"dimensions wider than 1; rankmap places grids of up to "
                           f"{MAX_STENCIL_DIMS} (reorder=False keeps the launcher's order)")
    return wide or [0]


def _agreed_args(comm, dims, periods, reorder: bool) -> tuple[list[int], list[bool]]:
    """``check_cart_args`` (and, with ``reorder``, :func:`placed_dims`) on every process,
    then collectively: bad arguments on one process, or processes giving different ones,
    raise RankmapError on every process (a process that raised alone left the others
    waiting in the next collective)."""
    try:
        dims, periods = check_cart_args(comm.Get_size(), dims, periods)
        if reorder:
            placed_dims(dims)
        mine = (dims, periods, bool(reorder))
    except RankmapError as exc:
        mine = str(exc)
    every = comm.allgather(mine)
    bad = next(((p, g) for p, g in enumerate(every) if isinstance(g, str)), None)
    if bad is not None:
        raise RankmapError(bad[1] if bad[0] == 0 else f"process {bad[0]}: {bad[1]}")
    if any(g != every[0] for g in every):
        p = next(p for p, g in enumerate(every) if g != every[0])
        raise RankmapError(f"cart_create: process {p} gave dims {every[p][0]}, periods "
                           f"{every[p][1]}, reorder {every[p][2]}; process 0 gave "
                           f"{every[0][0]}, {every[0][1]}, {every[0][2]}: every process must "
                           "give the same")
    return dims, periods


def cart_from_reordering(comm, dims, periods, reordering):
    """Cartesian communicator on the processes of ``comm`` in the order of ``reordering``.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        Communicator whose processes all call this function.
    dims : list of int
        Extent of each grid dimension (already validated).
    periods : list of bool
        Whether each dimension wraps around.
    reordering : Reordering
        New rank of every process of ``comm`` (-1 for processes left out).

    Returns
    -------
    mpi4py.MPI.Cartcomm
        The communicator (created with ``reorder=False`` on the reordered processes), or
        ``MPI.COMM_NULL`` on processes left out.
    """
    from mpi4py import MPI
    sub = split_by_new_rank(comm, reordering)
    if sub == MPI.COMM_NULL:
        return MPI.COMM_NULL
    cart = sub.Create_cart(dims, periods, reorder=False)
    sub.Free()
    return cart
