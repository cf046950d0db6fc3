"""``swap:<mapping>``: another mapper's placement polished on the real objective, bounded by work.

The placement of ``<mapping>`` is improved rank by rank (:mod:`rankmap.mappers.swap_refine`):
vectorised hop-bytes swap passes, then swaps aimed at the busiest link, evaluated exactly on
the link loads under the machine's routing. Of the start and the polished placements the one
with the lowest (busiest link bytes, hop-bytes) is returned, so the result is never worse than
the start on that key. Deterministic for a seed; work bounded by :data:`PASSES` and
:data:`PROPOSALS`, never by seconds.

``--mappings all`` (and so ``auto``) tries ``swap:fold`` (or ``swap:greedy`` where no fold
applies) on 2-D grids on a 3-D machine, up to :data:`ALL_RANK_LIMIT` ranks: there the fold
and greedy's walk have few hop-bytes but some hot links, which the polish removes.
"""

from __future__ import annotations

import numpy as np

from ..errors import RankmapError
from .geometry import check_seed
from .graph_multilevel import _key, _routing, _unit_phases
from .graph_partition import communication_graph
from .registry import MapperFamily, MapperInfo, build_mapping, register_family, resolve
from .swap_refine import UnitPlacement, hop_swap_passes, link_swaps

__all__ = ["polish_cores", "PASSES", "PROPOSALS", "ALL_RANK_LIMIT"]

#: hop-bytes swap passes
PASSES = 4
#: busiest-link swap proposals
PROPOSALS = 1000
#: ``--mappings all`` offers ``swap:`` candidates up to this many ranks
ALL_RANK_LIMIT = 8192


def polish_cores(start: np.ndarray, pattern, machine, allocation, seed: int = 0,
                 passes: int = PASSES, proposals: int = PROPOSALS) -> np.ndarray:
    """Polished copy of placement ``start`` (module docstring); never worse on
    (busiest link bytes, hop-bytes).

    Parameters
    ----------
    start : numpy.ndarray
        Allocation core of every rank.
    pattern, machine, allocation
        The problem.
    seed : int
        Seed of the proposal choices.
    passes, proposals : int
        Work bounds.

    Returns
    -------
    numpy.ndarray
        int64 allocation core of every rank.
    """
    seed = check_seed(seed)
    start = np.asarray(start, dtype=np.int64)
    g = communication_graph(pattern)
    if g.nnz == 0:
        return start
    from .greedy import _neighbour_csr
    nbrs = _neighbour_csr(machine, allocation)
    routing = _routing(machine)
    place = UnitPlacement(start, allocation.n_cores, allocation.cores_per_node, allocation)
    if passes:
        hop_swap_passes(g, place, machine, nbrs, seed, passes)
    after_hops = place.pos_of.copy()
    n = pattern.n_ranks
    if proposals:
        link_swaps(_unit_phases(pattern, np.arange(n, dtype=np.int64), n), place, machine,
                   routing, nbrs, seed, proposals, n_units=n)
    cands = [start, after_hops, place.pos_of]
    keys = [_key(c, pattern, machine, allocation, routing) for c in cands]
    return cands[min(range(3), key=lambda i: (keys[i], -i))]


def _parse_swap(name: str, machine):
    key = name.strip()
    if not key.lower().startswith("swap:"):
        return None
    inner = key.split(":", 1)[1].strip()
    if not inner:
        raise RankmapError(f"bad mapping {name!r}: say what to polish, e.g. swap:greedy")
    info = resolve(inner, machine)

    def fn(pattern, machine, allocation, seed, _inner=info.name):
        start = build_mapping(_inner, pattern, machine, allocation, seed).core_of_rank
        return polish_cores(start, pattern, machine, allocation, seed)

    return MapperInfo(f"swap:{info.name}", fn, f"{info.name} polished by swaps on link loads",
                      info.applies, in_all=False)


def _mismatched_2d(pattern, machine, allocation) -> bool:
    """A 2-D grid on a 3-D machine (the shapes cannot match)."""
    dims = getattr(machine, "dims", None)
    return (pattern.grid is not None and len(pattern.grid) == 2 and dims is not None
            and len(dims) == 3)


def _all_names(pattern, machine, allocation) -> list[str]:
    if pattern.n_ranks > ALL_RANK_LIMIT or not _mismatched_2d(pattern, machine, allocation):
        return []
    from .folding import fold_layout
    if not isinstance(fold_layout(pattern, machine, allocation), str):
        return ["swap:fold"]
    return ["swap:greedy"]


register_family(MapperFamily(prefix="swap:<mapping>", parse=_parse_swap,
                             description="another mapping polished by swaps on link loads "
                                         "(work-bounded, never worse than its start)",
                             all_names=_all_names))
