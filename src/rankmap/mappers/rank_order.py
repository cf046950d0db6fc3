"""Rank-order mappings (seed 001): ``TXYZ``, ``XYZT``, ``TZXY``, ... and ``inorder``, ``random``.

A rank order is a permutation of the machine's coordinate letters plus ``T`` (core within the
node), read fastest varying first: ``TXYZ`` fills the cores of a node, then moves along X,
then Y, then Z. On any allocation the allocated cores are sorted by their coordinates with the
first letter fastest and rank r takes the r-th core; on a whole torus this is the classic
Blue Gene order (``TXYZ``: t = r mod T, x = (r div T) mod X, ...).
"""

from __future__ import annotations

import itertools

import numpy as np

from ..errors import RankmapError
from .registry import MapperFamily, MapperInfo, register, register_family


def rank_order_cores(order: str, machine, allocation) -> np.ndarray:
    """Allocation cores sorted by ``order`` (fastest letter first)."""
    cpn = allocation.cores_per_node
    n_cores = allocation.n_cores
    cores = np.arange(n_cores, dtype=np.int64)
    node_coords = machine.coords(allocation.nodes)          # (nodes, ndim)
    keys = []
    for letter in order:
        if letter == "T":
            keys.append(cores % cpn)
        else:
            d = machine.letters.index(letter)
            keys.append(np.repeat(node_coords[:, d], cpn))
    return cores[np.lexsort(keys)]


def _is_rank_order(name: str, machine) -> bool:
    letters = getattr(machine, "letters", "")
    return bool(letters) and len(name) == len(letters) + 1 and \
        sorted(name) == sorted(letters + "T")


def _parse_rank_order(name: str, machine) -> MapperInfo | None:
    order = name.upper()
    if not _is_rank_order(order, machine):
        letters = getattr(machine, "letters", "")
        if name.isupper() and "T" in name and set(name) <= set("TXYZABCDEF") and letters:
            raise RankmapError(f"rank order {name!r} does not fit this machine: use each of "
                               f"T{letters} once, e.g. T{letters}")
        return None

    def mapper(pattern, machine, allocation, seed, _order=order):
        return rank_order_cores(_order, machine, allocation)[:pattern.n_ranks]

    return MapperInfo(order, mapper, f"rank order {order}: sorted by coordinates, "
                      f"{order[0]} fastest")


def rank_order_names(machine) -> list[str]:
    """Every rank order of the machine (all permutations of its letters plus T)."""
    letters = getattr(machine, "letters", "")
    if not letters:
        return []
    return ["".join(p) for p in itertools.permutations("T" + letters)]


register_family(MapperFamily(
    prefix="rank orders (T plus the machine's letters, e.g. TXYZ)",
    parse=_parse_rank_order,
    description="permutations of T and the machine's letters, e.g. TXYZ, XYZT, TZXY",
    all_names=lambda pattern, machine, allocation: rank_order_names(machine),
))


@register("inorder", "the allocation's own order, cores of a node first (Slurm block)")
def inorder(pattern, machine, allocation, seed):
    """Rank r on allocation core r: the scheduler's node order, cores of a node first."""
    return np.arange(pattern.n_ranks, dtype=np.int64)


@register("random", "a random placement on the allocation's cores (seeded)")
def random_mapping(pattern, machine, allocation, seed):
    """A uniformly random choice of cores, reproducible for a given seed."""
    rng = np.random.default_rng(seed)
    return rng.permutation(allocation.n_cores)[:pattern.n_ranks].astype(np.int64)
