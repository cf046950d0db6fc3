"""The bisection-bandwidth model of seed 004 (section 4) for all-to-all phases.

For a phase made of independent all-to-all groups (``fft2d`` patterns) on a machine with a
Cartesian box of nodes, every machine dimension i of size n_i gets an effective length m_i:

* 0 when no group spreads along i (every group sits in one plane normal to i);
* n_i / f_i when every group fits between two of f_i evenly spaced planes normal to i (one
  set of planes for all groups, spacing n_i / f_i, f_i >= 2 dividing n_i), with the largest
  such f_i; on a torus the planes may sit at any offset, on a mesh they start at 0;
* n_i / g_t otherwise, g_t = 2 on a torus (wrapped dimension), 1 on a mesh.

The phase's lower-bound time is ``bisection_time_s = max_i m_i * D_T / (4 P B_l)`` with D_T the
bytes the phase moves, P the number of ranks and B_l the link bandwidth (bytes/s). The metric
:class:`Bisection` adds ``bisection_m`` (list, one per dimension) and ``bisection_time_s`` to
every phase of an fft2d pattern on a grid machine (:func:`applies`).
"""

from __future__ import annotations

import numpy as np

from ..machines import GridMachine
from ..patterns.fft import alltoall_groups
from .routed import PhaseMetric, RoutedPhase

__all__ = ["Bisection", "applies", "bisection_metrics", "effective_lengths", "phase_groups"]


def effective_lengths(coords: np.ndarray, dims, wrap) -> list[float]:
    """m_i for groups whose members sit at ``coords`` (shape groups x members x ndim)."""
    out = []
    for i, n in enumerate(int(v) for v in dims):
        c = coords[:, :, i]
        if (c == c[:, :1]).all():
            out.append(0.0)
            continue
        found = None
        for f in range(n - 1, 1, -1):
            if n % f:
                continue
            w = n // f
            offsets = range(w) if wrap[i] else range(1)
            for o in offsets:
                slab = ((c - o) % n) // w
                if (slab == slab[:, :1]).all():
                    found = f
                    break
            if found:
                break
        if found:
            out.append(n / found)
        else:
            out.append(n / (2.0 if wrap[i] else 1.0))
    return out


def phase_groups(pattern, phase) -> np.ndarray | None:
    """Member ranks (groups x members) of the all-to-all groups of an fft2d phase."""
    if pattern.kind != "fft2d" or pattern.grid is None:
        return None
    if phase.name not in ("dim0", "dim1"):
        return None
    return alltoall_groups(tuple(pattern.grid), int(phase.name[-1]))


def bisection_metrics(pattern, phase, node_of_rank: np.ndarray, machine) -> dict:
    """``bisection_m`` and ``bisection_time_s`` of one phase (empty when not applicable)."""
    groups = phase_groups(pattern, phase)
    if not isinstance(machine, GridMachine) or groups is None:
        return {}
    coords = machine.coords(node_of_rank[groups])
    m = effective_lengths(coords, machine.dims, machine.wrap)
    bw = float(np.median(machine.link_bandwidth)) if machine.n_links else 0.0
    p = pattern.n_ranks
    t = max(m) * phase.total_bytes / (4.0 * p * bw) if bw > 0 else float("inf")
    return {"bisection_m": m, "bisection_time_s": float(t)}


def applies(machine, pattern) -> bool:
    """Whether the bisection model applies: an fft2d pattern on a grid machine."""
    return isinstance(machine, GridMachine) and pattern.kind == "fft2d"


class Bisection(PhaseMetric):
    """``bisection_m`` and ``bisection_time_s`` of every phase of ``pattern`` (an fft2d)."""

    def __init__(self, pattern):
        self.pattern = pattern

    def __call__(self, routed: RoutedPhase) -> dict:
        """Bisection metrics of one routed phase (empty when not applicable)."""
        if self.pattern.kind != "fft2d":
            return {}
        return bisection_metrics(self.pattern, routed.phase, routed.node_of_rank,
                                 routed.machine)
