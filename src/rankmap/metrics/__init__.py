"""Metrics computed from link-load arrays (see design.md, "Metric definitions").

Per phase: ``max_link_streams``, ``max_link_bytes``, ``mean_link_bytes`` (over every directed
link of the machine, idle ones included), ``avg_hops``, ``hop_bytes`` and ``plateau_bytes``
(seed 000's plateau point). A candidate's metrics combine its phases with :func:`combine`.
"""

from .link_metrics import (DEFAULT_PLATEAU_Y, combine, phase_metrics, plateau_point,
                           ranking_key)

__all__ = ["DEFAULT_PLATEAU_Y", "combine", "phase_metrics", "plateau_point", "ranking_key"]
