"""Per-phase link metrics, the plateau point, and how phases combine."""

from __future__ import annotations

import math

import numpy as np

from ..defaults import DEFAULT_PLATEAU_Y
from ..errors import RankmapError
from .routed import PhaseMetric, RoutedPhase

__all__ = ["DEFAULT_PLATEAU_Y", "LinkMetrics", "plateau_point", "phase_metrics", "combine",
           "ranking_key"]



def plateau_point(values, y: float = DEFAULT_PLATEAU_Y) -> float:
    """Smallest x such that a fraction ``y`` of the values are <= x (seed 000's plateau point).

    With L values sorted ascending, that is the ceil(y*L)-th smallest value (1-based);
    y = 1 gives the maximum.

    Parameters
    ----------
    values : array_like of float
        Per-link loads (bytes, or any unit).
    y : float
        The fraction, in (0, 1].

    Returns
    -------
    float
        The plateau point, in the unit of ``values``; 0 for no values.

    Raises
    ------
    RankmapError
        ``y`` outside (0, 1], or values that hold NaN.
    """
    if not 0.0 < y <= 1.0:
        raise RankmapError(f"bad plateau fraction y={y}: must be in (0, 1]")
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size == 0:
        return 0.0
    if np.isnan(v).any():       # a NaN sorts anywhere: the plateau would be NaN, or a guess
        raise RankmapError("plateau point of values that hold NaN")
    k = max(1, math.ceil(y * v.size - 1e-9)) - 1
    return float(np.partition(v, k)[k])


def phase_metrics(link_bytes: np.ndarray, link_streams: np.ndarray, flow_hops: np.ndarray,
                  flow_bytes: np.ndarray, y: float = DEFAULT_PLATEAU_Y) -> dict:
    """Metrics of one phase from its link loads and per-flow hops and bytes.

    Parameters
    ----------
    link_bytes : numpy.ndarray
        Bytes on every directed link of the machine.
    link_streams : numpy.ndarray
        Flows crossing every link (a flow split over k routes counts on each).
    flow_hops : numpy.ndarray
        Links each flow crosses (mean over its routes).
    flow_bytes : numpy.ndarray
        Bytes of each flow.
    y : float
        Fraction of links of the plateau point, in (0, 1].

    Returns
    -------
    dict
        ``max_link_streams`` (flows), ``max_link_bytes``, ``mean_link_bytes`` and
        ``plateau_bytes`` (bytes), ``avg_hops`` (links), ``hop_bytes`` (bytes x links),
        ``flows`` and ``bytes`` (the phase's totals).
    """
    n_flows = len(flow_hops)
    return {
        "max_link_streams": int(link_streams.max()) if link_streams.size else 0,
        "max_link_bytes": float(link_bytes.max()) if link_bytes.size else 0.0,
        "mean_link_bytes": float(link_bytes.mean()) if link_bytes.size else 0.0,
        "avg_hops": float(flow_hops.mean()) if n_flows else 0.0,
        "hop_bytes": float(np.dot(flow_hops, flow_bytes)),
        "plateau_bytes": plateau_point(link_bytes, y),
        "flows": int(n_flows),
    }


class LinkMetrics(PhaseMetric):
    """The link metrics of design.md (:func:`phase_metrics`) with plateau fraction ``y``."""

    def __init__(self, plateau_y: float = DEFAULT_PLATEAU_Y):
        if not 0 < plateau_y <= 1:
            raise RankmapError(f"bad plateau fraction {plateau_y}: must be in (0, 1]")
        self.plateau_y = plateau_y

    def __call__(self, routed: RoutedPhase) -> dict:
        """``max_link_streams``, ``max_link_bytes``, ``mean_link_bytes``, ``avg_hops``,
        ``hop_bytes``, ``plateau_bytes``, ``flows`` of one routed phase."""
        ld = routed.loads
        return phase_metrics(ld.bytes, ld.streams, ld.flow_hops, routed.nbytes, self.plateau_y)


_MAX_KEYS = ("max_link_streams", "max_link_bytes", "plateau_bytes")
_SUM_KEYS = ("mean_link_bytes", "hop_bytes", "predicted_time_s", "intra_node_bytes",
             "inter_domain_bytes", "inter_socket_bytes")


def combine(phases: list[dict]) -> dict:
    """A candidate's metrics from its phases' metrics.

    Parameters
    ----------
    phases : list of dict
        Every phase's metrics (:func:`phase_metrics` plus any metric objects' keys).

    Returns
    -------
    dict
        The worst phase for maxima and the plateau point, sums for hop-bytes, mean link bytes
        and predicted time (s) and the in-node byte counts, the flow-weighted mean for
        ``avg_hops``; a key is combined
        only when every phase has it.
    """
    out: dict = {}
    for key in _MAX_KEYS:
        if all(key in p for p in phases):
            out[key] = max(p[key] for p in phases)
    if "max_link_streams" in out:
        out["max_link_streams"] = int(out["max_link_streams"])
    for key in _SUM_KEYS:
        if phases and all(key in p for p in phases):
            out[key] = float(sum(p[key] for p in phases))
    flows = sum(p["flows"] for p in phases)
    out["avg_hops"] = (sum(p["avg_hops"] * p["flows"] for p in phases) / flows) if flows else 0.0
    out["flows"] = int(flows)
    ordered = ["max_link_streams", "max_link_bytes", "mean_link_bytes", "avg_hops",
               "hop_bytes", "plateau_bytes", "predicted_time_s", "intra_node_bytes",
               "inter_domain_bytes", "inter_socket_bytes", "flows"]
    return {k: out[k] for k in ordered if k in out}


def ranking_key(metrics: dict) -> tuple:
    """Sort key for choosing the best candidate (lower is better).

    The lowest predicted time when a time model has filled it in; otherwise the lowest busiest
    link bytes, ties broken by hop-bytes (design.md).

    Parameters
    ----------
    metrics : dict
        A candidate's combined metrics (:func:`combine`).

    Returns
    -------
    tuple of float
        (predicted time in s to 9 significant digits, busiest link bytes, hop-bytes), or
        (busiest link bytes, hop-bytes) without a time model.
    """

    if "predicted_time_s" in metrics:
        # times equal to 9 significant digits are a tie (float noise from the time model)
        t = float(f"{metrics['predicted_time_s']:.9g}")
        if t != t:      # NaN (a machine built in Python with a bandwidth near 0) never wins
            t = float("inf")
        return (t, metrics["max_link_bytes"], metrics["hop_bytes"])
    return (metrics["max_link_bytes"], metrics["hop_bytes"])
