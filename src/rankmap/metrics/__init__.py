"""Metrics of routed phases (see design.md, "Metric definitions").

Per phase: ``max_link_streams``, ``max_link_bytes``, ``mean_link_bytes`` (over every directed
link of the machine, idle ones included), ``avg_hops``, ``hop_bytes`` and ``plateau_bytes``
(seed 000's plateau point) from :class:`LinkMetrics`; the seed 004 bisection model
(:class:`~rankmap.metrics.bisection.Bisection`), dragonfly class hops
(:class:`~rankmap.metrics.dragonfly_hops.DragonflyClassHops`) and the time model
(:class:`rankmap.timing.TimeModel`) are further :class:`PhaseMetric` objects. A candidate's
metrics combine its phases with :func:`combine`.
"""

from .link_metrics import (DEFAULT_PLATEAU_Y, LinkMetrics, combine, phase_metrics,
                           plateau_point, ranking_key)
from .ranking import NEAR_TIE, best_first_order, near_tie_band, primary
from .routed import PhaseMetric, RoutedPhase

__all__ = ["DEFAULT_PLATEAU_Y", "LinkMetrics", "PhaseMetric", "RoutedPhase", "combine",
           "phase_metrics", "plateau_point", "ranking_key", "NEAR_TIE", "best_first_order",
           "near_tie_band", "primary"]
