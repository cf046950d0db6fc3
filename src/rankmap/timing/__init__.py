"""Predicted time per phase: flow-level max-min bandwidth sharing plus latency terms.

:class:`TimeModel` is the phase metric (``predicted_time_s``) an
:class:`~rankmap.evaluation.Evaluator` gets among its metrics (see
:func:`rankmap.evaluation.default_metrics`); :class:`TimeOptions` holds its settings.
"""

from .maxmin import completion_times, maxmin_rates
from .metric import TimeModel
from .model import (DEFAULT_MEM_BW, DEFAULT_OVERHEAD_S, TimeOptions, flow_times,
                    parse_time_options, phase_time, resource_incidence, shared_memory_times,
                    unique_flows)

__all__ = ["TimeModel", "TimeOptions", "parse_time_options", "phase_time", "flow_times",
           "resource_incidence", "shared_memory_times", "unique_flows", "completion_times", "maxmin_rates",
           "DEFAULT_MEM_BW", "DEFAULT_OVERHEAD_S"]
