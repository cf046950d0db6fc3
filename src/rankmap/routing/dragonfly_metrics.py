"""Per-phase hop counts by link class on a dragonfly, for the JSON report.

Registered in :data:`rankmap.evaluation.PHASE_METRIC_HOOKS`; adds to every phase evaluated on a
:class:`~rankmap.machines.dragonfly.Dragonfly`:

* ``avg_row_hops``, ``avg_col_hops``, ``avg_global_hops`` — mean number of row, column and
  global links a flow crosses (expected value under a routing that splits; flows inside one
  node count with 0), so they add up to ``avg_hops``;
* ``hop_bytes_row``, ``hop_bytes_col``, ``hop_bytes_global`` — bytes x links of that class
  (the bytes carried by all links of the class).
"""

from __future__ import annotations

import numpy as np


def dragonfly_hops_hook(evaluator, phase, node_src, node_dst, loads) -> dict:
    """Hop counts and hop-bytes by link class for one phase (nothing on other machines)."""
    from ..machines.dragonfly import Dragonfly

    machine = evaluator.machine
    if not isinstance(machine, Dragonfly):
        return {}
    hops = machine.class_hops(node_src, node_dst, evaluator.routing, nbytes=phase.bytes)
    mean = hops.mean(axis=0) if len(hops) else np.zeros(3)
    cls = machine.link_class
    out = {}
    for i, name in enumerate(("row", "col", "global")):
        out[f"avg_{name}_hops"] = float(mean[i])
        out[f"hop_bytes_{name}"] = float(loads.bytes[cls == i + 2].sum())
    return out
