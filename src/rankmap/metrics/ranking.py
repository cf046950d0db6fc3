"""The ranking rule of ``compare`` and ``auto``: fastest first (design.md's ``best``).

Every candidate has a *primary* figure: its predicted time when the time model filled it in,
else its busiest link bytes. By default (:data:`NEAR_TIE` = 0) candidates are ordered by
:func:`~rankmap.metrics.ranking_key`: primary figure, then busiest link, then hop-bytes, as
design.md defines ``best``. With a tolerance ``t > 0`` (the Python API's ``tolerance``), the
candidates whose primary figure is within ``t`` of the lowest one form a **near-tie band**;
the band comes first, ordered by hop-bytes (then by ``ranking_key``), and the others follow
in ``ranking_key`` order.

Why one may want a band: predicted times a few percent apart do not order real runs reliably (the model leaves
out other jobs' traffic and per-hop effects; against SimGrid it is exact on structured
placements but 4 % under to 12.5 % over on irregular ones on even tori, see
``benchmarks/fidelity/RESULTS.md``), whereas hop-bytes (bytes x links crossed) is the share
of the whole network a placement takes, which every other job on the machine pays for and
which a faster-by-noise placement may double. Outside the band the faster candidate always
wins. It is not the default because design.md's contract is the lowest predicted time.
"""

from __future__ import annotations

from ..errors import RankmapError

from .link_metrics import ranking_key

__all__ = ["NEAR_TIE", "primary", "best_first_order", "near_tie_band"]

#: default relative tolerance of the near-tie band: 0, design.md's rule (lowest predicted
#: time, then busiest link, then hop-bytes); 0.05 would mean "within 5 % of the fastest"
NEAR_TIE = 0.0


def primary(metrics: dict) -> float:
    """The figure candidates are ranked on first: predicted time (s) when present, else the
    busiest link's bytes.

    Parameters
    ----------
    metrics : dict
        A candidate's combined metrics.

    Returns
    -------
    float
        Predicted time in s when the time model ran, else the busiest link's bytes.
    """
    if "predicted_time_s" in metrics:
        return float(metrics["predicted_time_s"])
    return float(metrics["max_link_bytes"])


def near_tie_band(metrics_list: list[dict], tolerance: float = NEAR_TIE) -> list[int]:
    """Indices of the candidates within ``tolerance`` of the lowest primary figure.

    Parameters
    ----------
    metrics_list : list of dict
        Combined metrics of every candidate.
    tolerance : float
        Relative tolerance (0.05 = 5 %).

    Returns
    -------
    list of int
        Indices into ``metrics_list``, in input order.
    """
    if not metrics_list:
        return []
    lo = min(primary(m) for m in metrics_list)
    # the same 9-digit rounding as ranking_key, so float noise never splits a tie
    limit = float(f"{lo * (1.0 + tolerance):.9g}")
    return [i for i, m in enumerate(metrics_list) if float(f"{primary(m):.9g}") <= limit]


def best_first_order(metrics_list: list[dict], tolerance: float = NEAR_TIE) -> list[int]:
    """Candidate indices best first under the ranking rule (module docstring).

    Parameters
    ----------
    metrics_list : list of dict
        Combined metrics of every candidate (``max_link_bytes``, ``hop_bytes``, optionally
        ``predicted_time_s``).
    tolerance : float
        Relative tolerance of the near-tie band (0 gives plain ``ranking_key`` order).

    Returns
    -------
    list of int
        A permutation of ``range(len(metrics_list))``; equal keys keep their input order.

    Raises
    ------
    RankmapError
        A tolerance that is negative or not a number.
    """
    if not tolerance >= 0:
        raise RankmapError(f"bad tolerance {tolerance!r}: a relative band, 0 or more")
    if tolerance == 0:
        return sorted(range(len(metrics_list)), key=lambda i: (ranking_key(metrics_list[i]), i))
    band = set(near_tie_band(metrics_list, tolerance))
    inside = sorted(band, key=lambda i: (metrics_list[i]["hop_bytes"],
                                         ranking_key(metrics_list[i]), i))
    outside = sorted((i for i in range(len(metrics_list)) if i not in band),
                     key=lambda i: (ranking_key(metrics_list[i]), i))
    return inside + outside
