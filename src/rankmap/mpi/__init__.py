"""Rank reordering inside a running MPI job (mpi4py).

* :func:`cart_create` — MPI_Cart_create that really reorders ranks by a rankmap placement;
* :func:`dist_graph_create_adjacent` — the same for a distributed graph (see
  :mod:`rankmap.mpi.graph` for the exact semantics);
* :func:`reorder_ranks` — the collective step both use (node discovery, placement, broadcast).

The machine is a spec string or object (default ``$RANKMAP_MACHINE``); each process's node is
its host name or ``$RANKMAP_NODE``. mpi4py is imported only when a function is called.
"""

from importlib import import_module

__all__ = ["cart_create", "dist_graph_create_adjacent", "reorder_ranks", "Reordering",
           "ReorderWarning"]

#: public name -> submodule defining it; imported on first use, so that the engine the PMPI
#: library runs (``rankmap pmpi place``, which needs only :mod:`.placement` and :mod:`.nodes`)
#: does not load the mpi4py front ends
_HOME = {"cart_create": "cart", "dist_graph_create_adjacent": "graph", "reorder_ranks": "reorder",
         "Reordering": "reorder", "ReorderWarning": "reorder"}


def __getattr__(name: str):
    if name in _HOME:
        return getattr(import_module(f"{__name__}.{_HOME[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
