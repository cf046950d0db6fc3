"""``cart_create``: an MPI Cartesian communicator whose ranks really follow a placement.

Grid position <-> rank follows MPI (row-major, last dimension fastest); the placement decides
which *process* gets which rank, so ``Get_coords``, ``Shift`` and the neighbour collectives
of the returned communicator are consistent with each other by construction (the topology is
created with ``reorder=False`` on a communicator already split in the new order).
"""

from __future__ import annotations

import numpy as np

from ..errors import RankmapError
from .reorder import reorder_ranks, split_by_new_rank

__all__ = ["check_cart_args", "cart_create", "cart_from_reordering"]


def check_cart_args(size: int, dims, periods) -> tuple[list[int], list[bool]]:
    """Validate dims (positive, product at most ``size``) and periods (same length)."""
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
    or box stencil with ``box=True``) on the job's nodes is applied; ``machine`` is a machine
    spec or object (default ``$RANKMAP_MACHINE``). Processes beyond ``prod(dims)`` get
    ``MPI.COMM_NULL``, as with MPI_Cart_create.
    """
    dims, periods = check_cart_args(comm.Get_size(), dims, periods)
    if not reorder:
        return comm.Create_cart(dims, periods, reorder=False)
    def pattern():
        """The Cartesian halo pattern (built on the root process only)."""
        from ..patterns.stencil import make_stencil
        return make_stencil(f"cart:{'x'.join(map(str, dims))}", tuple(dims), box=box,
                            periodic=tuple(periods))

    reordering = reorder_ranks(comm, pattern, machine, mapping, seed)
    return cart_from_reordering(comm, dims, periods, reordering)


def cart_from_reordering(comm, dims, periods, reordering):
    """Cartesian communicator on the processes of ``comm`` in the order of ``reordering``."""
    from mpi4py import MPI
    sub = split_by_new_rank(comm, reordering)
    if sub == MPI.COMM_NULL:
        return MPI.COMM_NULL
    cart = sub.Create_cart(dims, periods, reorder=False)
    sub.Free()
    return cart
