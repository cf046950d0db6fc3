"""Collective reordering of an MPI communicator's ranks by a rankmap placement (mpi4py).

Protocol (all processes of ``comm`` call it): every process reports its node label
(:mod:`rankmap.mpi.nodes`), rank 0 resolves the labels to machine nodes, computes the
placement of the pattern on the job's nodes (:mod:`rankmap.mpi.placement`) and broadcasts
the new rank of every process. Bad input raises :class:`RankmapError` on every process (no
process is left waiting); unknown nodes or no machine description give a warning and the
launcher's order.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import RankmapError
from .nodes import (HOST_NODES_ENV, MACHINE_ENV, NODE_ENV, host_nodes, local_node_label,
                    resolve_node_labels)
from .wait import wait_for_all

__all__ = ["ReorderWarning", "Reordering", "identity", "reorder_ranks", "split_by_new_rank"]


class ReorderWarning(UserWarning):
    """The ranks were not reordered (unknown node, no machine); the launcher's order is kept."""


@dataclass
class Reordering:
    """Outcome of :func:`reorder_ranks`, identical on every process.

    ``new_rank[p]``: new rank of the process with rank p in the old communicator (-1: not part
    of the new one). ``mapping``: the placement applied, or ``"none"`` when not reordered, with
    ``reason`` saying why. ``nodes[p]``: machine node of process p (None when unknown).
    ``kept_order``: ``auto``'s placement was predicted no faster than the launcher's order,
    which was kept (``mapping`` says so, ``reason`` too).
    """

    new_rank: np.ndarray
    mapping: str
    reason: str = ""
    nodes: np.ndarray | None = None
    moved: int = 0
    kept_order: bool = False

    @property
    def reordered(self) -> bool:
        """Whether a placement was applied (False for ``"none"`` and for the launcher's
        order kept by ``auto``)."""
        return self.mapping != "none" and not self.kept_order


def identity(size: int, n_ranks: int, reason: str, nodes=None) -> Reordering:
    """The launcher's order for the first ``n_ranks`` of ``size`` processes.

    Parameters
    ----------
    size : int
        Number of processes of the communicator.
    n_ranks : int
        Number of ranks the pattern uses; processes from ``n_ranks`` on get -1 (unused).
    reason : str
        Why the ranks are not reordered (shown in the warning and the outputs).
    nodes : numpy.ndarray, optional
        Machine node of every process, when known.

    Returns
    -------
    Reordering
        Mapping ``"none"``: process p keeps rank p.
    """
    new = np.arange(size, dtype=np.int64)
    new[n_ranks:] = -1
    return Reordering(new, "none", reason, nodes)


def _machine(machine):
    from ..machines import parse_machine  # root only: keeps the other processes' start-up light
    if machine is None:
        spec = os.environ.get(MACHINE_ENV, "").strip()
        if not spec:
            return None
        machine = spec
    return parse_machine(machine)


def _plan(labels, pattern, machine, mapping, seed) -> Reordering:
    size = len(labels)
    m = _machine(machine)
    if m is None:
        return identity(size, pattern.n_ranks,
                        f"no machine description: give one (--machine; machine= in Python) "
                        f"or set ${MACHINE_ENV}")
    from .placement import assign_ranks
    nodes, reason = resolve_node_labels(labels, m, host_nodes(os.environ.get(HOST_NODES_ENV)))
    if nodes is None:
        return identity(size, pattern.n_ranks, f"{reason}; set ${NODE_ENV} to the node id")
    a = assign_ranks(pattern, m, nodes, mapping, seed)
    if a.kept_order:
        return Reordering(a.new_rank, a.mapping, _kept_reason(a.mapping), nodes, a.moved,
                          kept_order=True)
    return Reordering(a.new_rank, a.mapping, "", nodes, a.moved)


def _kept_reason(mapping: str) -> str:
    """Why ``auto`` kept the launcher's order, from :func:`~rankmap.mpi.placement.
    assign_ranks`' mapping text (``the launcher's order (auto (TXY) predicted no faster)``)."""
    inner = mapping.partition("(")[2].rpartition(")")[0]
    return (f"{inner} than the launcher's order" if inner
            else "the placement was predicted no faster than the launcher's order")


def reorder_ranks(comm, pattern, machine=None, mapping: str = "auto", seed: int = 0,
                  root: int = 0) -> Reordering:
    """Collectively compute new ranks for ``pattern`` (Pattern or callable run on the root).

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        Communicator whose processes all call this function.
    pattern : Pattern or callable
        The communication pattern, or a zero-argument callable returning it, so that only the
        root builds a big pattern.
    machine : str or Machine, optional
        Machine spec or object; default ``$RANKMAP_MACHINE``.
    mapping : str, optional
        Name of the placement to apply (``auto`` picks the best candidate).
    seed : int, optional
        Seed of the randomised placements.
    root : int, optional
        Rank of ``comm`` that computes the placement.

    Returns
    -------
    Reordering
        The same on every process; the launcher's order (with a ``ReorderWarning`` on the root)
        when a node is unknown or no machine is described.

    Raises
    ------
    RankmapError
        On every process, when a node label or the pattern/placement request is bad.
    RuntimeError
        On every process, when the root failed unexpectedly (a bug).
    """
    try:
        # a list in $RANKMAP_NODE has one entry per MPI_COMM_WORLD rank, as for the C library
        label = local_node_label(_processor_name(), *_world_rank_size())
    except RankmapError as exc:
        label = exc
    labels = comm.gather(label, root=root)
    result = None
    if comm.Get_rank() == root:
        try:
            bad = [lb for lb in labels if isinstance(lb, RankmapError)]
            if bad:
                raise bad[0]
            pat = pattern() if callable(pattern) else pattern
            result = ("ok", _plan(labels, pat, machine, mapping, seed))
        except RankmapError as exc:
            result = ("error", str(exc))
        except Exception as exc:  # a bug: still tell the other processes, never leave them waiting
            result = ("crash", f"{type(exc).__name__}: {exc}")
    wait_for_all(comm)     # asleep while the root computes the placement, not spinning
    status, payload = comm.bcast(result, root=root)
    if status == "error":
        raise RankmapError(payload)
    if status == "crash":
        raise RuntimeError(f"rankmap reordering failed on rank {root}: {payload}")
    if payload.mapping == "none" and comm.Get_rank() == root:   # not auto's choice: a warning
        warnings.warn(f"rankmap: ranks not reordered: {payload.reason}", ReorderWarning,
                      stacklevel=3)
    return payload


def _world_rank_size() -> tuple[int, int]:
    from mpi4py import MPI
    return MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()


def _processor_name() -> str:
    from mpi4py import MPI
    return MPI.Get_processor_name()


def split_by_new_rank(comm, reordering: Reordering):
    """Sub-communicator of the used processes, ranked by their new rank.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        Communicator whose processes all call this function (collective ``Split``).
    reordering : Reordering
        New rank of every process of ``comm`` (-1: not used).

    Returns
    -------
    mpi4py.MPI.Comm
        The sub-communicator, or ``MPI.COMM_NULL`` on unused processes.
    """
    from mpi4py import MPI
    new = int(reordering.new_rank[comm.Get_rank()])
    return comm.Split(0 if new >= 0 else MPI.UNDEFINED, max(new, 0))
