"""The one registry of mappers: names parsed into mapper values.

Every mapper is called as ``mapper(pattern, machine, allocation, seed) -> core_of_rank`` (an
integer array, see :mod:`rankmap.mappers.base`) and is found here by name. Names are either
fixed (``inorder``, ``greedy``: :data:`MAPPERS`) or members of a *family* whose parser builds
a value (:data:`FAMILIES`): rank orders (``TXYZ`` -> ``RankOrder("TXYZ")``), ``rubik: ...``
(-> ``Rubik(spec)``), the presets ``rubik-tile`` ... (-> ``RubikPreset(name)``), ``swap:NAME``
(-> ``Swap(start)``) and ``refine:NAME`` (-> ``Refine(start, budget, router)``).

The tables are written out here, once: this module imports the mappers it lists (parsers
import the classes they build, never the reverse), and nothing adds to them later.

``build_mapping`` resolves a name, runs the mapper and validates the result.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import MappingProxyType
from typing import Callable

from ..errors import RankmapError
from ..validate import as_int
from .base import KEEPS_CORES, MapperInfo, Placement, check_fits, validate_mapping
from .cubes import cubes, cubes_applies, cubes_dim1
from .domain_placement import in_node_rule
from .folding import fold, fold_applies
from .geometry import needs_grid
from .graph_multilevel import graph
from .graph_partition import graph_bisect
from .greedy import greedy
from .kahip_cut import memoised_cuts
from .mueller_resch import mueller_resch
from .rank_order import inorder, parse_rank_order, random_mapping, rank_order_names
from .rcb import rcb, rcb_same_as
from .refine import Refine
from .rubik import PRESETS, Rubik, RubikPreset, applicable_presets
from .space_filling import hilbert, morton
from .swap_family import Swap, swap_candidates

__all__ = ["MAPPERS", "FAMILIES", "KEEPS_CORES", "MapperInfo", "MapperFamily", "resolve",
           "build_mapping", "all_candidate_names", "inapplicable_names", "same_placement_as"]


@dataclass(frozen=True)
class MapperFamily:
    """Parametrised mapper names.

    ``parse(name, machine)`` returns the :class:`MapperInfo` of ``name`` (its ``fn`` a value
    built from the name's parameters) or None when ``name`` is not of this family;
    ``all_names(pattern, machine, allocation)`` lists the members ``--mappings all`` tries.
    """

    prefix: str
    parse: Callable
    description: str
    all_names: Callable | None = None


_GRAPH = MapperInfo("graph", graph, "multilevel graph mapping: KaHIP node parts, network-guided "
                    "dual recursive bisection, swap refinement on link loads")

#: fixed-name mappers, in the order ``--mappings all`` lists them (read-only)
MAPPERS = MappingProxyType({info.name: info for info in (
    MapperInfo("inorder", inorder,
               "the allocation's own order, cores of a node first (Slurm block)"),
    MapperInfo("random", random_mapping, "a random placement on the allocation's cores (seeded)"),
    MapperInfo("greedy", greedy, "nearest-unused-core walk of the process grid (paper 003)",
               applies=needs_grid),
    MapperInfo("mueller-resch", mueller_resch,
               "best axis permutation of the node order by average hops (paper 003)"),
    MapperInfo("rcb", rcb,
               "recursive coordinate bisection of nodes and grid coordinates (paper 002)",
               same_as=rcb_same_as),
    MapperInfo("cubes", cubes,
               "fft2d: each dim0 group on a compact block, displaced copies (paper 004)",
               applies=cubes_applies(0), grid_machine_only=True),
    MapperInfo("cubes-dim1", cubes_dim1,
               "fft2d: each dim1 group on a compact block, displaced copies",
               applies=cubes_applies(1), grid_machine_only=True),
    MapperInfo("graph-bisect", graph_bisect, "KaHIP dual recursive bipartitioning of the "
               "communication graph (the earlier graph mapper)", in_all=False),
    _GRAPH,
    MapperInfo("fold", fold,
               "2-D grid folded (boustrophedon) into a 3-D box of nodes, low dilation",
               applies=fold_applies, grid_machine_only=True),
    MapperInfo("hilbert", hilbert,
               "node blocks of the grid along a Hilbert curve of the allocation",
               applies=needs_grid),
    MapperInfo("morton", morton,
               "node blocks of the grid along a Morton (Z-order) curve of the allocation",
               applies=needs_grid),
    MapperInfo("refine", Refine(_GRAPH),
               "graph placement improved by swap-based local search", in_all=False),
)})


def _parse_rank_order(name: str, machine) -> MapperInfo | None:
    order = parse_rank_order(name, machine)
    if order is None:
        return None
    return MapperInfo(order.order, order, f"rank order {order.order}: sorted by coordinates, "
                      f"{order.order[0]} fastest")


def _parse_rubik(name: str, machine) -> MapperInfo | None:
    key = name.strip()
    low = key.lower()
    if low in PRESETS:
        preset = RubikPreset(low)
        return MapperInfo(low, preset, f"rubik preset {low} (paper 000 pF3D mappings)",
                          preset.reason_not_applicable)
    if low.startswith("rubik:"):
        value = Rubik(key)                          # syntax errors surface at once
        return MapperInfo(value.name, value, "rubik placement algebra")
    return None


#: most ``swap:``/``refine:`` prefixes one name may stack (300 overflowed Python's stack)
MAX_NESTING = 8


def _nesting(key: str) -> int:
    """How many ``swap:``/``refine:`` prefixes ``key`` starts with."""
    depth = 0
    while True:
        head, sep, rest = key.partition(":")
        if not sep or head.strip().lower() not in ("swap", "refine"):
            return depth
        depth, key = depth + 1, rest


def _inner(name: str, prefix: str, example: str, machine) -> MapperInfo | None:
    """The mapper after ``prefix:`` in ``name``, or None when ``name`` has another prefix."""
    key = name.strip()
    if not key.lower().startswith(prefix + ":"):
        return None
    depth = _nesting(key)
    if depth > MAX_NESTING:
        from ..validate import show
        raise RankmapError(f"bad mapping {show(name)}: {depth} swap:/refine: prefixes, at most "
                           f"{MAX_NESTING}")
    inner = key.split(":", 1)[1].strip()
    if not inner:
        raise RankmapError(f"bad mapping {name!r}: say what to {example}")
    return resolve(inner, machine)


def _same_start(prefix: str, start: MapperInfo) -> Callable | None:
    """``same_as`` of ``prefix:<start>``: the same prefix on the mapper ``start`` equals."""
    if start.same_as is None:
        return None

    def same_as(pattern, machine, allocation):
        other = start.same_placement_as(pattern, machine, allocation)
        return None if other is None else f"{prefix}:{other}"
    return same_as


def _parse_swap(name: str, machine) -> MapperInfo | None:
    start = _inner(name, "swap", "polish, e.g. swap:greedy", machine)
    if start is None:
        return None
    value = Swap(start)
    return MapperInfo(value.name, value, f"{start.name} polished by swaps on link loads",
                      start.applies, in_all=False, same_as=_same_start("swap", start))


def _parse_refine(name: str, machine) -> MapperInfo | None:
    start = _inner(name, "refine", "refine, e.g. refine:greedy", machine)
    if start is None:
        return None
    value = Refine(start)
    return MapperInfo(value.name, value, f"swap refinement of {start.name}", start.applies,
                      in_all=False, same_as=_same_start("refine", start))


#: parametrised names, tried in this order after :data:`MAPPERS`
FAMILIES = (
    MapperFamily(
        prefix="rank orders (T plus the machine's letters, e.g. TXYZ)",
        parse=_parse_rank_order,
        description="permutations of T and the machine's letters, e.g. TXYZ, XYZT, TZXY",
        all_names=lambda pattern, machine, allocation: rank_order_names(machine)),
    MapperFamily(
        prefix="rubik: STATEMENTS | rubik-tile, rubik-tile2, rubik-tilt-zx, rubik-tilt-xz, "
               "rubik-zig-xz, rubik-txyz, rubik-xyzt",
        parse=_parse_rubik,
        description="Rubik-style algebra: app/net tile|div|mod, tilt, zigzag, transpose",
        all_names=applicable_presets),
    MapperFamily(
        prefix="swap:<mapping>", parse=_parse_swap,
        description="another mapping polished by swaps on link loads (work-bounded, never "
                    "worse than its start)",
        all_names=swap_candidates),
    MapperFamily(
        prefix="refine:<mapping>", parse=_parse_refine,
        description="swap-based local search started from another mapping"),
)


def resolve(name: str, machine, extra_known: tuple[str, ...] = ()) -> MapperInfo:
    """Find the mapper called ``name`` (fixed names first, then families).

    Parameters
    ----------
    name : str
        A mapper name (``greedy``, ``TXYZ``, ``refine:rcb``, ``rubik: ...``).
    machine : Machine
        The machine (families such as rank orders depend on its letters).
    extra_known : tuple of str
        Names a higher layer resolves itself (``auto``), listed in the error message.

    Returns
    -------
    MapperInfo
        The mapper; for a parametrised name its ``fn`` is the value built from the name.

    Raises
    ------
    RankmapError
        An unknown name (the message lists the known ones) or bad parameters.
    """
    key = name.strip()
    if key in MAPPERS:
        return MAPPERS[key]
    if key.lower() in MAPPERS:
        return MAPPERS[key.lower()]
    for family in FAMILIES:
        info = family.parse(key, machine)
        if info is not None:
            return info
    # rank orders and Rubik's algebra name a grid's letters, and fold and cubes need a box of
    # nodes: not offered on a dragonfly or a fat tree (the list said 'rank orders ... e.g.
    # TXYZ' there)
    grid = bool(machine.letters) if machine is not None else True
    known = sorted([*(n for n, info in MAPPERS.items() if grid or not info.grid_machine_only),
                    *extra_known]) + [
        f.prefix for f in FAMILIES if grid or not f.prefix.startswith(("rank", "rubik"))]
    raise RankmapError(f"unknown mapping {name!r}: choose from {', '.join(known)}")


def same_placement_as(name: str, pattern, machine, allocation) -> str | None:
    """The name of another mapper that places ``pattern`` exactly as ``name`` does here.

    ``rcb`` of a pattern without a grid is ``graph``, and so ``swap:rcb`` is ``swap:graph``
    and ``refine:rcb`` is ``refine:graph`` (:attr:`MapperInfo.same_as`): with the same seed
    the cores are the same, so only one of the two needs building.

    Parameters
    ----------
    name : str
        A mapper name; a name the registry does not know, or not spelled as the mapper names
        itself (``RCB``), gives None (built on its own, it gets its own name or error).
    pattern : Pattern
        The pattern.
    machine : Machine
        The machine.
    allocation : Allocation
        The allocation.

    Returns
    -------
    str or None
        The other mapper's name, or None.
    """
    try:
        info = resolve(name, machine)
    except RankmapError:
        return None
    if info.name != name:
        return None
    return info.same_placement_as(pattern, machine, allocation)


def all_candidate_names(pattern, machine, allocation) -> list[str]:
    """The names ``--mappings all`` evaluates here.

    Parameters
    ----------
    pattern : Pattern
        The pattern.
    machine : Machine
        The machine.
    allocation : Allocation
        The allocation.

    Returns
    -------
    list of str
        Every family's candidates (rank orders, rubik presets, ``swap:``), then every
        applicable fixed-name mapper with ``in_all``; no repeats.
    """
    names: list[str] = []
    for family in FAMILIES:
        if family.all_names is not None:
            names.extend(family.all_names(pattern, machine, allocation))
    for info in MAPPERS.values():
        if info.in_all and info.reason_not_applicable(pattern, machine, allocation) is None:
            names.append(info.name)
    return list(dict.fromkeys(names))


def inapplicable_names(pattern, machine, allocation) -> list[str]:
    """The fixed-name mappers ``--mappings all`` would evaluate were they applicable here
    (``greedy`` and the space-filling curves need a process grid, ...): ``compare`` lists
    them as skipped, with the reason, rather than leaving them out unsaid.

    Parameters
    ----------
    pattern : Pattern
        The pattern.
    machine : Machine
        The machine.
    allocation : Allocation
        The allocation.

    Returns
    -------
    list of str
        Their names, in registry order.
    """
    return [info.name for info in MAPPERS.values()
            if info.in_all and info.reason_not_applicable(pattern, machine, allocation)]


def build_mapping(name: str, pattern, machine, allocation, seed: int = 0, *, router=None,
                  budget: int | None = None, extra_known: tuple[str, ...] = (),
                  in_node: bool = True, in_node_accept=None) -> Placement:
    """Run the mapper called ``name`` and return its validated :class:`Placement`.

    Parameters
    ----------
    name : str
        Mapper name (see :func:`resolve`).
    pattern : Pattern
        The pattern whose ranks are placed.
    machine : Machine
        The machine.
    allocation : Allocation
        The allocated nodes; ranks go on their cores only.
    seed : int
        Seed of randomised mappers.
    router : Router or str, optional
        Routing that searching mappers (``refine``) optimise under (default: the machine's).
    budget : int, optional
        Work bound of searching mappers (``refine``: proposed moves; default
        :func:`rankmap.mappers.refine.default_budget`).
    extra_known : tuple of str
        Names listed in the unknown-name error besides the registry's.
    in_node : bool
        On a machine with a node structure, re-deal every node's ranks over its NUMA
        domains (:func:`~rankmap.mappers.domain_placement.in_node_step`); ``inorder``, the
        launcher's own order, is never changed. False keeps the mapper's cores.
    in_node_accept : callable, optional
        Which nodes keep the step's new deal (:data:`~rankmap.mappers.domain_placement.Accept`,
        e.g. :func:`rankmap.selection.in_node.time_accept`'s; default: the byte rule).

    Returns
    -------
    Placement
        The validated placement.

    Raises
    ------
    RankmapError
        Unknown name, ranks that do not fit, a mapper that does not apply here.
    """
    info = resolve(name, machine, extra_known)
    allocation.check_on(machine)      # node ids and cores of this machine, named if not
    check_fits(pattern.n_ranks, allocation)
    seed = as_int(seed, "seed", minimum=0, maximum=2**63 - 1)
    reason = info.reason_not_applicable(pattern, machine, allocation)
    if reason is not None:
        raise RankmapError(f"mapping {name!r} does not apply here: {reason}")
    mapper = info.fn
    if isinstance(mapper, Refine):
        mapper = dataclasses.replace(mapper, budget=budget, router=router)
    with memoised_cuts(), in_node_rule(in_node_accept if in_node else None):
        cores = mapper(pattern, machine, allocation, seed)
    if in_node:
        cores = info.in_node_step(cores, pattern, machine, allocation, seed, in_node_accept)
    return validate_mapping(info.name, cores, pattern.n_ranks, allocation)
