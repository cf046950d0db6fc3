"""Per-phase hop counts by link class on a dragonfly, for the JSON report.

:class:`DragonflyClassHops` adds to every phase evaluated on a
:class:`~rankmap.machines.dragonfly.Dragonfly`:

* ``avg_row_hops``, ``avg_col_hops``, ``avg_global_hops`` — mean number of row, column and
  global links a flow crosses (expected value under a routing that splits; flows inside one
  node count with 0), so they add up to ``avg_hops``;
* ``hop_bytes_row``, ``hop_bytes_col``, ``hop_bytes_global`` — bytes x links of that class
  (the bytes carried by all links of the class).

Both come from the phase's one routing (the router's ``loads`` gives the class hops).
"""

from __future__ import annotations

import numpy as np

from .routed import PhaseMetric, RoutedPhase

__all__ = ["DragonflyClassHops"]


class DragonflyClassHops(PhaseMetric):
    """Hop counts and hop-bytes by dragonfly link class (module docstring)."""

    def __call__(self, routed: RoutedPhase) -> dict:
        """The six class metrics of one routed phase on a dragonfly."""
        hops = routed.loads.class_hops
        if hops is None:
            return {}
        mean = hops.mean(axis=0) if len(hops) else np.zeros(3)
        cls = routed.machine.link_class
        out = {}
        for i, name in enumerate(("row", "col", "global")):
            out[f"avg_{name}_hops"] = float(mean[i])
            out[f"hop_bytes_{name}"] = float(routed.loads.bytes[cls == i + 2].sum())
        return out
