"""Rank reordering inside a running MPI job (mpi4py).

* :func:`cart_create` — MPI_Cart_create that really reorders ranks by a rankmap placement;
* :func:`dist_graph_create_adjacent` — the same for a distributed graph (see
  :mod:`rankmap.mpi.graph` for the exact semantics);
* :func:`reorder_ranks` — the collective step both use (node discovery, placement, broadcast).

The machine is a spec string or object (default ``$RANKMAP_MACHINE``); each process's node is
its host name or ``$RANKMAP_NODE``. mpi4py is imported only when a function is called.
"""

from .cart import cart_create
from .graph import dist_graph_create_adjacent
from .reorder import Reordering, ReorderWarning, reorder_ranks

__all__ = ["cart_create", "dist_graph_create_adjacent", "reorder_ranks", "Reordering",
           "ReorderWarning"]
