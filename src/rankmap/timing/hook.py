"""The evaluation hook that adds ``predicted_time_s`` to every phase's metrics.

The options come from, in order: ``evaluator.time_options``, ``machine.time_options`` (the
CLI sets this from ``--nic-bw``, ``--mem-bw``, ``--msg-overhead``, ``--time-model``), else the
defaults of :class:`~rankmap.timing.model.TimeOptions`. Machines without
:meth:`~rankmap.machines.Machine.route_paths` get no predicted time (ranking then falls back
to the busiest link, design.md).
"""

from __future__ import annotations

from .model import TimeOptions, phase_time

DEFAULT_OPTIONS = TimeOptions()


def options_of(evaluator) -> TimeOptions:
    """The time options that apply to ``evaluator`` (see the module docstring)."""
    opts = getattr(evaluator, "time_options", None)
    if opts is None:
        opts = getattr(evaluator.machine, "time_options", None)
    return opts if opts is not None else DEFAULT_OPTIONS


def set_time_options(machine, options: TimeOptions | None) -> None:
    """Attach time-model options to a machine (None restores the defaults)."""
    machine.time_options = options


def predicted_time_hook(evaluator, phase, src_node, dst_node, loads) -> dict:
    """``{"predicted_time_s": seconds}`` for one phase, or ``{}`` when the model is off or
    the machine has no path model."""
    opts = options_of(evaluator)
    machine = evaluator.machine
    if not opts.enabled or not getattr(machine, "has_route_paths", False):
        return {}
    return {"predicted_time_s": phase_time(machine, src_node, dst_node, phase.bytes,
                                           evaluator.routing, opts, loads.flow_hops)}
