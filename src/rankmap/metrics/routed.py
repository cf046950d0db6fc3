"""One routed phase: what every metric of a phase reads (routed once, read by all)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from ..routing import LinkLoads, Router
from ..routing.groups import FlowGroups
from ..routing.symmetry import SymmetricPhase

__all__ = ["RoutedPhase", "PhaseMetric"]


@dataclass(frozen=True)
class RoutedPhase:
    """A phase of a pattern under one placement, routed once.

    ``phase`` is the pattern's :class:`~rankmap.patterns.base.Phase` (ranks, bytes);
    ``node_of_rank`` the placement's node of every rank; ``src_node``/``dst_node`` the nodes
    of every flow; ``loads`` the link loads; ``router`` the router with its choices fixed for
    this phase (:meth:`rankmap.routing.Router.for_phase`), so a metric needing per-flow paths
    gets the same routes as ``loads``. ``core_in_node``: on a machine with a node structure,
    the core within its node (the structure's numbering; a rank of several threads: its first
    core) of every rank, else None. ``groups``: the phase's groups of identical flows (same
    nodes and size) when the evaluator routed them so, else None. ``symmetry``: the groups'
    translation symmetry with its cell's routes
    (:func:`rankmap.routing.symmetry.phase_symmetry`), False when the evaluator found none
    (or none it would use), None when nobody looked.
    """

    phase: object
    node_of_rank: np.ndarray
    src_node: np.ndarray
    dst_node: np.ndarray
    loads: LinkLoads
    router: Router
    core_in_node: np.ndarray | None = None
    groups: FlowGroups | None = None
    symmetry: SymmetricPhase | bool | None = None

    @property
    def machine(self):
        """The machine the phase is routed on."""
        return self.router.machine

    @property
    def nbytes(self) -> np.ndarray:
        """Bytes of every flow."""
        return self.phase.bytes


class PhaseMetric(ABC):
    """A metric of one routed phase: ``metric(routed) -> {name: value}``.

    Metrics are plain objects passed to :class:`rankmap.evaluation.Evaluator`; their dicts
    are merged in the order given.
    """

    @abstractmethod
    def __call__(self, routed: RoutedPhase) -> dict:
        """Values of this metric for one phase (an empty dict when it does not apply).

        Parameters
        ----------
        routed : RoutedPhase
            The phase, its placement and its one routing.

        Returns
        -------
        dict
            Metric name -> value (units in the name: ``_bytes``, ``_s``, hops).
        """
