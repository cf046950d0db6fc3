"""The bisection-bandwidth model of seed 004 (section 4) for all-to-all phases.

For a phase made of independent all-to-all groups (``fft2d`` patterns) on a machine with a
Cartesian box of nodes, every machine dimension i of size n_i gets an effective length m_i:

* 0 when no group spreads along i (every group sits in one plane normal to i);
* n_i / f_i when every group fits between two of f_i evenly spaced planes normal to i (one
  set of planes for all groups, spacing n_i / f_i, f_i >= 2 dividing n_i), with the largest
  such f_i; on a torus the planes may sit at any offset, on a mesh they start at 0;
* n_i / g_t otherwise, g_t = 2 on a torus (wrapped dimension), 1 on a mesh.

The phase's lower-bound time is ``bisection_time_s = max_i m_i * D_T / (4 N B_l)`` with D_T the
bytes the ranks hold (seed 004's D_r summed over rows: g blocks a rank in groups of g, the one it
keeps included, so g / (g - 1) times the bytes the phase moves), N the nodes the ranks run
on (the paper's P = A_i n_i, the cross-section's nodes times the length: with several ranks a
node, nodes, not ranks) and B_l the link bandwidth (bytes/s). The metric
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
    """Seed 004's effective lengths m_i of all-to-all groups on a grid machine.

    Parameters
    ----------
    coords : numpy.ndarray
        int coordinates of every group member's node, shape (groups, members, ndim).
    dims : sequence of int
        Machine size per dimension (nodes).
    wrap : sequence of bool
        Whether each dimension wraps (torus) or not (mesh).

    Returns
    -------
    list of float
        m_i per dimension (nodes): 0 when no group spreads along i; n_i / f_i for the
        largest f_i such that every group lies between two of f_i evenly spaced planes; else
        n_i / g_t (g_t = 2 wrapped, 1 mesh).
    """
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
    """The all-to-all groups of an fft2d phase.

    Parameters
    ----------
    pattern : Pattern
        The pattern.
    phase : Phase
        One of its phases.

    Returns
    -------
    numpy.ndarray or None
        int64 member ranks, shape (groups, members); None unless ``pattern`` is an fft2d with
        a grid and the phase is ``dim0`` or ``dim1``.
    """
    if pattern.kind != "fft2d" or pattern.grid is None:
        return None
    if phase.name not in ("dim0", "dim1"):
        return None
    return alltoall_groups(tuple(pattern.grid), int(phase.name[-1]))


def bisection_metrics(pattern, phase, node_of_rank: np.ndarray, machine) -> dict:
    """Seed 004's bisection model of one fft2d phase.

    Parameters
    ----------
    pattern : Pattern
        The pattern (an fft2d with a grid).
    phase : Phase
        One of its phases (``dim0`` or ``dim1``).
    node_of_rank : numpy.ndarray
        int64 machine node of every rank.
    machine : Machine
        The machine (a grid machine).

    Returns
    -------
    dict
        ``bisection_m`` (list of m_i, nodes) and ``bisection_time_s`` = max_i m_i x D_T /
        (4 N B_l) in seconds (D_T the bytes the ranks hold: each of g blocks of a group of g,
        the one kept included; N the nodes the ranks run on, the paper's A_i n_i; B_l the median
        link bandwidth in bytes/s); empty when the model does not apply.
    """
    groups = phase_groups(pattern, phase)
    if not isinstance(machine, GridMachine) or groups is None:
        return {}
    coords = machine.coords(node_of_rank[groups])
    m = effective_lengths(coords, machine.dims, machine.wrap)
    bw = float(np.median(machine.link_bandwidth)) if machine.n_links else 0.0
    # seed 004, eq. 7: A_i n_i = P, the cross-section's nodes A_i times the length n_i, so
    # P counts the job's nodes (one rank a node on the paper's BG/L); with k ranks a node the
    # ranks' count would make the bound k times too small, and the machine's nodes would
    # shrink it by the part of the machine the job leaves idle
    nodes = int(np.count_nonzero(np.bincount(node_of_rank)))   # O(ranks), no sort
    g = groups.shape[1]
    # D_T is the data the ranks hold (seed 004, eq. 6: a row's data D_r, half of which
    # crosses the bisection, a quarter each way), g blocks a rank: the phase sends g - 1
    data = phase.total_bytes * g / (g - 1) if g > 1 else 0.0
    t = max(m) * data / (4.0 * nodes * bw) if bw > 0 else float("inf")
    return {"bisection_m": m, "bisection_time_s": float(t)}


def applies(machine, pattern) -> bool:
    """Whether the bisection model applies.

    Parameters
    ----------
    machine : Machine
        The machine.
    pattern : Pattern
        The pattern.

    Returns
    -------
    bool
        True for an fft2d pattern on a grid machine (torus or mesh).
    """

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
