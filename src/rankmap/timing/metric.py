"""The time model as a phase metric: ``predicted_time_s`` of every routed phase."""

from __future__ import annotations

from ..metrics.routed import PhaseMetric, RoutedPhase
from .model import TimeOptions, phase_time

__all__ = ["TimeModel"]


class TimeModel(PhaseMetric):
    """``{"predicted_time_s": seconds}`` of a phase under :class:`TimeOptions` ``options``.

    It routes nothing itself: it takes the paths of the phase's own router (choices fixed for
    the phase) and the hops of its loads, so it sees the routes the link metrics see.
    """

    def __init__(self, options: TimeOptions | None = None):
        self.options = options if options is not None else TimeOptions()

    def __call__(self, routed: RoutedPhase) -> dict:
        """Predicted time (s) of one routed phase; empty when the model is switched off."""
        if not self.options.enabled:
            return {}
        cores = routed.core_in_node
        src_core = None if cores is None else cores[routed.phase.src]
        dst_core = None if cores is None else cores[routed.phase.dst]
        return {"predicted_time_s": phase_time(routed.machine, routed.src_node, routed.dst_node,
                                               routed.nbytes, routed.router, self.options,
                                               routed.loads.flow_hops, src_core, dst_core,
                                               routed.groups, routed.symmetry)}
