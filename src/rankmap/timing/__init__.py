"""Predicted time per phase: flow-level max-min bandwidth sharing plus latency terms.

Importing this package registers :func:`~rankmap.timing.hook.predicted_time_hook` in
:data:`rankmap.evaluation.PHASE_METRIC_HOOKS`, so every evaluation gets ``predicted_time_s``
per phase (and its sum per candidate), and ``best`` becomes the lowest predicted time.
"""

from ..evaluation import PHASE_METRIC_HOOKS
from .hook import options_of, predicted_time_hook, set_time_options
from .maxmin import completion_times, maxmin_rates
from .model import (DEFAULT_MEM_BW, DEFAULT_OVERHEAD_S, TimeOptions, flow_times,
                    parse_time_options, phase_time, resource_incidence, unique_flows)

if predicted_time_hook not in PHASE_METRIC_HOOKS:
    PHASE_METRIC_HOOKS.append(predicted_time_hook)

__all__ = ["TimeOptions", "parse_time_options", "phase_time", "flow_times",
           "resource_incidence", "unique_flows", "completion_times", "maxmin_rates", "options_of",
           "set_time_options", "predicted_time_hook", "DEFAULT_MEM_BW", "DEFAULT_OVERHEAD_S"]
