"""Communication patterns: parse a spec string or TOML file into a :class:`Pattern`.

Spec strings (sizes accept ``64``, ``8KiB``, ``1MiB``, ``1MB``; GRID is ``8x8x8``; without a
grid, patterns that take one fill the allocation on a balanced grid, as MPI_Dims_create):

* ``stencil:GRID[:box][:periodic][:radius=R][:offsets=+1,0;-1,0@64KiB;...][:bytes=1MiB]
  [:face=..][:edge=..][:corner=..][:classK=..][:to=lower|higher]`` — neighbour exchange
  (:mod:`rankmap.patterns.stencil`); without a grid ``stencil[:dims=3]``;
* ``diagonal:GRID`` — every rank with the ranks on its diagonals (ray tracing);
* ``alltoall|allreduce|bcast|allgather[:P|:GRID[:dims=0,2]][:bytes=][:algo=][:root=]`` —
  collectives as phases (:mod:`rankmap.patterns.collectives`);
* ``fft2d:P0xP1``, ``fft3d:PxQ`` — phases of row and column all-to-alls;
* ``minighost``, ``minimd``, ``lulesh[:GRID][:s=30]`` — mini-apps and proxy apps
  (:mod:`rankmap.patterns.miniapps`);
* ``pairs:random[:seed=N][:ranks=N][:bytes=...]`` — random pairwise exchange;
* ``graph:FILE[:bytes=...][:ranks=N][:grid=GRID]`` — a weighted graph (CSV, Matrix Market,
  Scotch, METIS); without ``grid=`` a graph that is exactly a Cartesian stencil gets that grid
  (:mod:`rankmap.patterns.grid_detect`) and a note saying so;
* any of these ``:times=K`` — K repetitions folded into one: every flow carries K times its
  bytes (:func:`repeated`);
* ``A + B + C`` — the phases of A, then B, then C (:mod:`rankmap.patterns.compose`);
* a ``.toml`` file with several ``[[phase]]`` tables (see :mod:`rankmap.patterns.toml_file`).

Other pattern kinds register a parser in :data:`PATTERN_KINDS`.
"""

from __future__ import annotations

import dataclasses
import re
from types import MappingProxyType
from typing import Callable

import numpy as np

from ..errors import RankmapError
from ..specs import Spec, parse_int, parse_shape, split_spec
from ..units import parse_size
from ..validate import as_int, check_limit, is_digits, show
from .base import Pattern, Phase, byte_count_text
from .collectives import COLLECTIVE_ALGORITHMS, make_collective
from .compose import compose, split_composition
from .fft import make_fft2d, make_fft3d
from .graph_files import make_graph_pattern
from .pairs import make_random_pairs
from .stencil import CLASS_NAMES, DIRECTIONS, MAX_STENCIL_DIMS, make_diagonal, make_stencil

__all__ = ["Pattern", "Phase", "parse_pattern", "PATTERN_KINDS", "detect_grid_note", "with_grid",
           "repeated", "check_flow_sizes", "check_moves_something", "MAX_TIMES", "MAX_OFFSET",
           "MAX_GRID_DIMS"]

DEFAULT_BYTES = 1 << 20
#: options whose value is a comma-separated list
LIST_OPTIONS = ("dims", "offsets")


def _size_value(spec: Spec, key: str, value: str, allow_zero: bool = False) -> int:
    try:
        return parse_size(value, f"{key} size", allow_zero=allow_zero)
    except RankmapError as exc:
        raise RankmapError(f"bad {key}={show(value, 40)} in {show(spec.text)}: "
                           f"{str(exc).split(': ', 1)[-1]}") from None


def _bytes_option(spec: Spec, default=DEFAULT_BYTES, allow_zero: bool = False):
    value = spec.pop_option("bytes")
    if value is None:
        return default
    return _size_value(spec, "bytes", value, allow_zero)


#: most dimensions of a process grid (a box stencil has 3^d - 1 neighbours).
MAX_GRID_DIMS = 8
#: largest offset coordinate read (no grid is this long: the rank limit is 2^22)
MAX_OFFSET = 1 << 40


def _need_grid(spec: Spec, example: str) -> tuple[int, ...]:
    if not spec.words:
        raise RankmapError(f"bad pattern {show(spec.text)}: give a process grid, e.g. {example}")
    return parse_shape(spec.words.pop(0), "process grid", max_dims=MAX_GRID_DIMS, cap="ranks",
                       subject=spec.text)


def _add_flows(text: str, total: int, sub) -> int:
    """The flows of the parts of a composition ``A + B + ...`` built so far, ``sub`` (a part,
    or None) added; refused as soon as they pass the flow cap together (each part was checked
    alone: ten alltoall:4096 took 7 GB). A running total: summing every part again after
    each one took 0.8 s for 2,000 parts."""
    if sub is not None:
        total += sum(ph.n_flows for ph in sub.phases)
        check_limit(total, "flows", f"the parts together of {text}")
    return total


def _check_flows(spec: Spec, flows: int) -> None:
    """Refuse a pattern of more than the flow cap before any array is built."""
    check_limit(flows, "flows", spec.text)


def _grid_or_fill(spec: Spec, default_ranks: int | None, ndim: int) -> tuple[int, ...]:
    """The spec's grid, or (no grid given) a balanced ``ndim``-D grid filling the allocation."""
    from .miniapps import fill_grid
    if spec.words and is_digits(spec.words[0][:1]):
        return _need_grid(spec, "")
    if default_ranks is not None:
        check_limit(default_ranks, "ranks", spec.text)
    return fill_grid(spec.text, default_ranks, ndim)


def _ranks(grid) -> int:
    n = 1
    for g in grid:
        n *= int(g)
    return n


def _parse_class_bytes(spec: Spec, ndim: int, box: bool, explicit: bool) -> dict[int, int]:
    """Pop ``face=``, ``edge=``, ``corner=`` and ``classK=`` options: bytes by class K.

    Refuses a class the grid cannot have (K > dimensions), a class a star stencil has not
    (K > 1), a class given twice, and negative or malformed sizes; 0 is allowed (leaves the
    class out).
    """
    out: dict[int, int] = {}
    aliases = {name: k for k, name in CLASS_NAMES.items()}
    for key in list(spec.options):
        if key in aliases:
            k = aliases[key]
        elif key.startswith("class"):
            tail = key[5:]
            # ASCII digits only ('²' is a digit to str.isdigit, not to int()), and short
            if not (tail.isascii() and tail.isdigit()) or len(tail) > 3 or int(tail) < 1:
                raise RankmapError(f"unknown neighbour class {show(key)} in {show(spec.text)}: use "
                                   "face, edge, corner or classK with K = 1..dimensions")
            k = int(tail)
        else:
            continue
        value = spec.pop_option(key)
        if k in out:
            raise RankmapError(f"bad pattern {show(spec.text)}: class {k} "
                               f"({CLASS_NAMES.get(k, f'class{k}')}) given twice")
        if k > ndim:
            raise RankmapError(f"unknown neighbour class {key!r} in {show(spec.text)}: a {ndim}-D "
                               f"grid has classes 1-{ndim} (neighbours differing in up to "
                               f"{ndim} coordinates)")
        if k > 1 and not box and not explicit:
            raise RankmapError(f"bad {key}= in {show(spec.text)}: a star stencil has only face "
                               "neighbours; add :box or give :offsets=")
        out[k] = _size_value(spec, key, value, allow_zero=True)
    return out


#: one coordinate of an offset: an optional sign and ASCII digits
_OFFSET_CELL = re.compile(r"[+-]?[0-9]+", re.ASCII)


def _parse_offsets(spec: Spec, text: str, ndim: int) -> tuple[np.ndarray, list[int | None]]:
    """Parse ``offsets=+1,0,0;-1,0,0@64KiB;...``: offsets and optional per-offset sizes."""
    offs, sizes = [], []
    for item in text.split(";"):
        item = item.strip()
        if not item:
            raise RankmapError(f"bad offsets={text} in {show(spec.text)}: empty offset")
        coords, at, size = item.partition("@")
        cells = [c.strip() for c in coords.split(",")]
        # ASCII digits only: int() would also read '٣' as 3 and '1_0' as 10
        if not all(_OFFSET_CELL.fullmatch(c) for c in cells):
            raise RankmapError(f"bad offset {show(item)} in {show(spec.text)}: expected "
                               "integers separated by commas, e.g. +1,0,-1")
        o = [int(c) if len(c) <= 20 else None for c in cells]
        if any(c is None or abs(c) > MAX_OFFSET for c in o):
            raise RankmapError(f"bad offset {show(item)} in {show(spec.text)}: larger than any "
                               "grid")
        if len(o) != ndim:
            raise RankmapError(f"bad offset {show(item)} in {show(spec.text)}: {len(o)} "
                               f"coordinates for a {ndim}-D grid")
        offs.append(o)
        sizes.append(_size_value(spec, f"offset {coords.strip()}", size, allow_zero=True)
                     if at else None)
    return np.array(offs, dtype=np.int64), sizes


def _parse_direction(spec: Spec) -> str:
    """Pop ``to=``: ``lower``, ``higher`` or ``both`` (default)."""
    to = spec.pop_option("to", "both").lower()
    if to not in DIRECTIONS:
        raise RankmapError(f"bad to={to} in {show(spec.text)}: choose lower, higher or both")
    return to


def _parse_stencil(spec: Spec, default_ranks: int | None) -> Pattern:
    if spec.words and is_digits(spec.words[0][:1]):
        grid = _need_grid(spec, "stencil:64x64")
    else:  # no grid: fill the allocation on a balanced grid of dims=D (default 3) dimensions
        ndim = parse_int(spec.pop_option("dims", "3"), "stencil dims", minimum=1,
                         maximum=MAX_STENCIL_DIMS)
        grid = _grid_or_fill(spec, default_ranks, ndim)
    box = spec.pop_flag("box")
    star = spec.pop_flag("star")
    if box and star:
        raise RankmapError(f"bad pattern {show(spec.text)}: choose star or box, not both")
    periodic = spec.pop_flag("periodic")
    radius_text = spec.pop_option("radius")
    offsets_text = spec.pop_option("offsets")
    offsets = offset_bytes = None
    if offsets_text is not None:
        if box or star or radius_text is not None:
            raise RankmapError(f"bad pattern {show(spec.text)}: offsets= replaces box, star and "
                               "radius=; give one or the other")
        offsets, offset_bytes = _parse_offsets(spec, offsets_text, len(grid))
    radius = 1 if radius_text is None else parse_int(radius_text, "radius", minimum=1)
    nbytes = _bytes_option(spec, allow_zero=True)
    classes = _parse_class_bytes(spec, len(grid), box, offsets is not None)
    to = _parse_direction(spec)
    spec.reject_leftovers("stencil")
    nd = len(grid)
    n_offsets = len(offsets) if offsets is not None else \
        ((2 * radius + 1) ** nd - 1 if box else 2 * nd * radius)
    _check_flows(spec, _ranks(grid) * n_offsets)
    return make_stencil(spec.text, grid, box=box, periodic=periodic, nbytes=nbytes,
                        radius=radius, offsets=offsets, offset_bytes=offset_bytes,
                        class_bytes=classes, to=to)


def _parse_diagonal(spec: Spec, default_ranks: int | None) -> Pattern:
    grid = _grid_or_fill(spec, default_ranks, 2)
    nbytes = _bytes_option(spec)
    spec.reject_leftovers("diagonal")
    _check_flows(spec, _ranks(grid) * (2 ** len(grid)) * max(1, min(grid) - 1))
    return make_diagonal(spec.text, grid, nbytes)


def _parse_dims_list(spec: Spec, ndim: int) -> tuple[int, ...] | None:
    """Pop ``dims=0,2``: distinct grid dimensions 0..ndim-1 (None when absent)."""
    text = spec.pop_option("dims")
    if text is None:
        return None
    out = []
    for item in text.split(","):
        d = parse_int(item, "dims entry", minimum=0)
        if d >= ndim:
            raise RankmapError(f"bad dims={text} in {show(spec.text)}: dimension {d} does not "
                               f"exist on a {ndim}-D grid (0-{ndim - 1})")
        if d in out:
            raise RankmapError(f"bad dims={text} in {show(spec.text)}: dimension {d} twice")
        out.append(d)
    return tuple(sorted(out))


def _make_collective_parser(kind: str):
    def parse(spec: Spec, default_ranks: int | None) -> Pattern:
        if spec.words and is_digits(spec.words[0][:1]):
            grid = _need_grid(spec, f"{kind}:64")
        else:
            if default_ranks is not None:
                check_limit(default_ranks, "ranks", spec.text)
            if default_ranks is None:
                raise RankmapError(f"pattern {show(spec.text)} has no rank count and no allocation "
                                   f"to fill: give one, e.g. {kind}:64")
            grid = (int(default_ranks),)
        dims = _parse_dims_list(spec, len(grid))
        given = spec.options.get("bytes")
        nbytes = _bytes_option(spec)
        algo = spec.pop_option("algo")
        if algo is not None and algo.lower() not in COLLECTIVE_ALGORITHMS[kind]:
            raise RankmapError(f"bad algo={algo} in {show(spec.text)}: {kind} algorithms are "
                               f"{', '.join(COLLECTIVE_ALGORITHMS[kind])}")
        root = parse_int(spec.pop_option("root", "0"), "root", minimum=0) if kind == "bcast" \
            else 0
        spec.reject_leftovers(kind)
        return make_collective(spec.text, kind, grid, dims, nbytes,
                               algo.lower() if algo else None, root, keep_grid=len(grid) > 1,
                               size_text=f"bytes={given}" if given is not None else None)
    parse.__name__ = f"_parse_{kind}"
    return parse


def _parse_fft2d(spec: Spec, default_ranks: int | None) -> Pattern:
    grid = _grid_or_fill(spec, default_ranks, 2)     # no grid: a balanced one, as fft3d
    if len(grid) != 2:
        raise RankmapError(f"bad pattern {show(spec.text)}: fft2d takes a P0xP1 grid")
    nbytes = _bytes_option(spec)
    spec.reject_leftovers("fft2d")
    _check_flows(spec, _ranks(grid) * (grid[0] + grid[1] - 2))
    return make_fft2d(spec.text, grid, nbytes=nbytes)


def _parse_fft3d(spec: Spec, default_ranks: int | None) -> Pattern:
    grid = _grid_or_fill(spec, default_ranks, 2)
    if len(grid) != 2:
        raise RankmapError(f"bad pattern {show(spec.text)}: fft3d takes a PxQ grid of pencils")
    nbytes = _bytes_option(spec)
    spec.reject_leftovers("fft3d")
    _check_flows(spec, _ranks(grid) * (grid[0] + grid[1] - 2))
    return make_fft3d(spec.text, grid, nbytes=nbytes)


def _parse_pairs(spec: Spec, default_ranks: int | None) -> Pattern:
    if not spec.pop_flag("random"):
        raise RankmapError(f"bad pattern {show(spec.text)}: the only pairing is pairs:random")
    seed = parse_int(spec.pop_option("seed", "0"), "pairs seed")
    ranks = spec.pop_option("ranks")
    n = parse_int(ranks, "ranks", minimum=2) if ranks is not None else default_ranks
    if n is None:
        raise RankmapError(f"pattern {show(spec.text)} needs ranks=N (no allocation to fill)")
    check_limit(n, "ranks", spec.text)
    nbytes = _bytes_option(spec)
    spec.reject_leftovers("pairs")
    return make_random_pairs(spec.text, n, seed=seed, nbytes=nbytes)


def _parse_graph(spec: Spec, default_ranks: int | None) -> Pattern:
    # the path may itself contain ':' (rare) - take everything up to the first option
    if not spec.words:
        raise RankmapError(f"bad pattern {show(spec.text)}: give a file, e.g. graph:comm.csv")
    path = spec.words.pop(0)
    nbytes = _bytes_option(spec, default=None)
    ranks = spec.pop_option("ranks")
    n = parse_int(ranks, "ranks", minimum=1) if ranks is not None else None
    if n is not None:
        check_limit(n, "ranks", spec.text)
    grid_text = spec.pop_option("grid")
    grid = parse_shape(grid_text, "graph grid", max_dims=6) if grid_text is not None else None
    spec.reject_leftovers("graph")
    pattern = make_graph_pattern(spec.text, path, nbytes=nbytes, n_ranks=n)
    if grid is not None:
        return with_grid(pattern, grid, f"grid={grid_text}")
    return pattern


def with_grid(pattern: Pattern, grid: tuple[int, ...], where: str) -> Pattern:
    """``pattern`` with a Cartesian grid given by the user (ranks must match).

    The wrap is that of the stencil the graph is, if it is one on this grid, else unknown.

    Parameters
    ----------
    pattern : Pattern
        A pattern without a grid (a graph).
    grid : tuple of int
        The process grid (ranks numbered row-major, last dimension fastest).
    where : str
        Where the grid was given (``grid=`` option, a TOML ``grid`` line), for the message.

    Returns
    -------
    Pattern
        A copy with the grid, and its periodicity when the graph is a stencil on it.

    Raises
    ------
    RankmapError
        The grid has another number of ranks than the pattern.
    """
    from .grid_detect import match_on_grid, undirected_keys

    if int(np.prod(grid)) != pattern.n_ranks:
        raise RankmapError(f"bad {where} for {pattern.spec!r}: {int(np.prod(grid)):,} ranks, "
                           f"the graph has {pattern.n_ranks:,}")
    src = np.concatenate([p.src for p in pattern.phases])
    dst = np.concatenate([p.dst for p in pattern.phases])
    n = pattern.n_ranks
    keys = undirected_keys(src, dst, n)
    match = match_on_grid(keys, n, tuple(grid)) if len(keys) else None
    return dataclasses.replace(pattern, grid=tuple(int(g) for g in grid),
                               periodic=match.periodic if match is not None else None)


def detect_grid_note(pattern: Pattern) -> Pattern:
    """A gridless ``pattern`` with the grid of the Cartesian stencil it is, if it is one.

    Adds the note ``pattern: graph of N flows; looks like a 6x6x6 box stencil
    (non-periodic)`` (or ``...; no Cartesian grid found``) to ``pattern.notes``. Light pairs
    (:data:`LIGHT_PAIR`, :data:`LIGHT_SHARE`) are set aside when the others make a stencil of
    another grid or wrap (or the whole graph none); the note counts them.

    Parameters
    ----------
    pattern : Pattern
        A pattern (not changed).

    Returns
    -------
    Pattern
        ``pattern`` itself when it has a grid, else a copy with the grid found (if any) and
        the note.
    """
    from .grid_detect import detect_stencil_grid

    if pattern.grid is not None or not pattern.phases:
        return pattern
    src = np.concatenate([p.src for p in pattern.phases])
    dst = np.concatenate([p.dst for p in pattern.phases])
    match = detect_stencil_grid(pattern.n_ranks, src, dst)
    described = None if match is None else match.describe()
    heavy = _stencil_of_heavy_pairs(pattern, src, dst, match)
    if heavy is not None:
        match, light_pairs, share = heavy
        described = (f"{match.describe()} plus {light_pairs:,} light pair"
                     f"{'s' if light_pairs > 1 else ''} carrying {100 * share:.2g} % of the bytes")
    flows = f"graph of {len(src):,} flows"
    if match is None:
        return dataclasses.replace(pattern, notes=pattern.notes + [
            f"pattern: {flows}; no Cartesian grid found (give one with :grid=PxQxR)"])
    return dataclasses.replace(pattern, grid=match.grid, periodic=match.periodic,
                               params={**pattern.params, "detected_grid": described},
                               notes=pattern.notes + [f"pattern: {flows}; looks like "
                                                      f"{_article(described)}"])


#: a pair (both directions, all phases) is light when it carries less than this fraction of
#: the median pair's bytes
LIGHT_PAIR = 1 / 8
#: and light pairs are set aside in grid detection only when they carry at most this share
#: of all bytes
LIGHT_SHARE = 0.01


def _stencil_of_heavy_pairs(pattern: Pattern, src, dst, match):
    """The stencil of the pairs that carry nearly all the bytes, when the light ones (a
    small allreduce's ring r -> r+1 beside a halo exchange, recorded in one phase) made the
    whole graph a stencil of another grid or wrap, or none: (match, light pairs, their byte
    share), else None. The light pairs must carry at most :data:`LIGHT_SHARE` of the bytes;
    a star, box or diagonal ``match``, or one with the same grid and wraps, stands (a box
    stencil's light corners stay in it)."""
    from .grid_detect import detect_stencil_grid

    if match is not None and not match.shape_name.endswith("-offset"):
        return None                    # a star, box or diagonal stencil: the answer stands
    n = pattern.n_ranks
    nbytes = np.concatenate([p.bytes for p in pattern.phases])
    keep = src != dst
    if not keep.any():
        return None
    u, v = np.minimum(src[keep], dst[keep]), np.maximum(src[keep], dst[keep])
    keys, pair = np.unique(u * np.int64(n) + v, return_inverse=True)
    pair_bytes = np.bincount(pair.reshape(-1), weights=nbytes[keep], minlength=len(keys))
    total = float(pair_bytes.sum())
    light = pair_bytes < LIGHT_PAIR * float(np.median(pair_bytes))
    if not light.any() or light.all() or total <= 0:
        return None
    share = float(pair_bytes[light].sum()) / total
    if share > LIGHT_SHARE:
        return None
    heavy_keys = keys[~light]
    found = detect_stencil_grid(n, heavy_keys // n, heavy_keys % n)
    if found is None or (match is not None and (found.grid, found.periodic) ==
                         (match.grid, match.periodic)):
        return None                    # the same grid and wraps: the exact answer stands
    return found, int(light.sum()), share


def _article(text: str) -> str:
    """``text`` after ``a`` or ``an``, as it is read aloud (an 8x8, an 11x4, a 6x6)."""
    lead = text.split("x", 1)[0].split("-", 1)[0]
    # said in groups of three digits: eight..., eleven thousand, eighteen million
    an = lead.startswith("8") or (len(lead) % 3 == 2 and lead[:2] in ("11", "18"))
    return ("an " if an else "a ") + text


def _parse_minighost(spec: Spec, default_ranks: int | None) -> Pattern:
    from .miniapps import make_minighost
    grid = _grid_or_fill(spec, default_ranks, 3)
    nbytes = _bytes_option(spec, default=2 << 20)
    spec.reject_leftovers("minighost")
    _check_flows(spec, _ranks(grid) * 6)
    return make_minighost(spec.text, grid, nbytes)


def _parse_minimd(spec: Spec, default_ranks: int | None) -> Pattern:
    from .miniapps import make_minimd
    grid = _grid_or_fill(spec, default_ranks, 3)
    nbytes = _bytes_option(spec, default=64 << 10)
    value = spec.pop_option("allreduce", "8KiB")
    allreduce = parse_size(value, "allreduce size")
    spec.reject_leftovers("minimd")
    _check_flows(spec, _ranks(grid) * (12 + max(1, _ranks(grid)).bit_length()))
    return make_minimd(spec.text, grid, nbytes, allreduce)


def _parse_lulesh(spec: Spec, default_ranks: int | None) -> Pattern:
    from .miniapps import make_lulesh
    grid = _grid_or_fill(spec, default_ranks, 3)
    s = parse_int(spec.pop_option("s", "30"), "lulesh s (elements per rank edge)", minimum=1)
    spec.reject_leftovers("lulesh")
    _check_flows(spec, _ranks(grid) * (26 + 13 + 6))
    return make_lulesh(spec.text, grid, s)


#: pattern kind -> parser(spec, default_ranks); other modules add their kinds here.
PATTERN_KINDS: "MappingProxyType[str, Callable[[Spec, int | None], Pattern]]" = MappingProxyType({
    "stencil": _parse_stencil,
    "diagonal": _parse_diagonal,
    "fft2d": _parse_fft2d,
    "fft3d": _parse_fft3d,
    "pairs": _parse_pairs,
    "graph": _parse_graph,
    "minighost": _parse_minighost,
    "minimd": _parse_minimd,
    "lulesh": _parse_lulesh,
    **{kind: _make_collective_parser(kind) for kind in COLLECTIVE_ALGORITHMS},
})

#: kinds whose patterns may be a stencil without saying so (grid detection runs on them,
#: and on compositions and TOML files with such a part)
GRIDLESS_KINDS = ("graph", "flows")


def _may_hide_a_grid(pattern: Pattern) -> bool:
    kinds = [pattern.kind] + list(pattern.params.get("part_kinds", []))
    return any(k in GRIDLESS_KINDS for k in kinds)


#: the most repetitions ``times=`` takes
MAX_TIMES = 10 ** 9


def repeated(pattern: Pattern, times: int) -> Pattern:
    """``pattern`` run ``times`` times, folded as ``record`` folds identical phases: every
    flow carries ``times`` x its bytes (max-min times scale with the bytes, so the bandwidth
    sharing is exact; the per-message latency is counted once per phase).

    Parameters
    ----------
    pattern : Pattern
        One repetition (an iteration of a program's loop).
    times : int
        Repetitions, at least 1.

    Returns
    -------
    Pattern
        The same ranks, phases and grid, every flow's bytes times ``times``.

    Raises
    ------
    RankmapError
        When a flow would carry more than :data:`rankmap.units.MAX_SIZE` bytes.
    """
    from fractions import Fraction

    from ..units import MAX_SIZE

    times = as_int(times, "repetitions (times=)", minimum=1)
    if times == 1:
        return pattern
    top = max((float(ph.bytes.max()) for ph in pattern.phases if ph.n_flows), default=0.0)
    if Fraction(top) * times > MAX_SIZE:     # exactly: the float product rounds past 2^53
        raise RankmapError(f"bad times={times} in {show(pattern.spec)}: a flow of "
                           f"{byte_count_text(top)} bytes would carry "
                           f"{byte_count_text(Fraction(top) * times)} bytes, more than "
                           f"{MAX_SIZE:,} (1 PiB)")
    phases = [Phase(ph.name, ph.src, ph.dst, ph.bytes * times) for ph in pattern.phases]
    return dataclasses.replace(pattern, phases=phases, params={**pattern.params, "times": times})


def _parse_one(text: str, default_ranks: int | None) -> Pattern:
    if text.lower().endswith(".toml"):
        from .toml_file import pattern_from_toml
        pattern = pattern_from_toml(text, default_ranks, parse_pattern, with_grid)
        check_flow_sizes(pattern)
        return pattern
    spec = split_spec(text, "pattern", list_keys=LIST_OPTIONS)
    parser = PATTERN_KINDS.get(spec.kind)
    if parser is None and spec.kind.lower().endswith(".toml"):
        raise RankmapError(f"bad pattern {show(text)}: a .toml file takes no options (put "
                           "times= and the others on the patterns of its [[phase]] tables)")
    if parser is None:
        raise RankmapError(f"unknown pattern kind {show(spec.kind, 40)} in {show(text)}: choose from "
                           f"{', '.join(sorted(PATTERN_KINDS))} or a .toml file")
    times = spec.pop_option("times")
    if times is not None:
        times = parse_int(times, f"{spec.kind} repetitions (times=)", minimum=1,
                          maximum=MAX_TIMES)
    pattern = parser(spec, default_ranks)
    check_flow_sizes(pattern)
    if times is None:
        return pattern
    pattern = repeated(pattern, times)
    check_flow_sizes(pattern)     # a pair's flows together, times over
    return pattern


def check_moves_something(pattern: Pattern) -> None:
    """Refuse a pattern in which no rank sends to another: its metrics would all be zero, a
    spec's mistake (``stencil:1``, ``offsets=+1,0:to=lower``) passed off as an answer. A
    composition ``A + B`` (or a TOML file) with such a part is refused the same way, naming
    the part: its phases would be reported as all zero. The commands that report metrics
    call it; ``launch`` may start a one-rank job.

    Parameters
    ----------
    pattern : Pattern
        A parsed pattern.

    Raises
    ------
    RankmapError
        Naming the spec (or the part) and the rank count.
    """
    n = pattern.n_ranks
    ranks = f"{n} rank{'s' if n != 1 else ''}"
    if not any(ph.n_flows for ph in pattern.phases):
        raise RankmapError(f"pattern {show(pattern.spec)} moves nothing: no rank sends to "
                           f"another ({ranks})")
    empty = pattern.params.get("empty_parts")
    if empty:
        raise RankmapError(f"bad pattern {show(pattern.spec)}: its part {show(empty[0])} moves "
                           f"nothing: no rank sends to another ({ranks})")


def check_flow_sizes(pattern: Pattern) -> None:
    """Refuse a pattern with a flow of more than :data:`rankmap.units.MAX_SIZE` bytes (1 PiB):
    the limit ``bytes=`` puts on a message, applied to what a flow carries in a phase (a ring
    allgather's flow carries P - 1 messages; ``times=`` multiplies the bytes), so that every way
    of stating the same flows meets the same limit.

    Parameters
    ----------
    pattern : Pattern
        A parsed pattern.

    Raises
    ------
    RankmapError
        Naming the pattern, the phase and the flow's bytes.
    """
    from fractions import Fraction

    from ..units import MAX_SIZE

    for ph in pattern.phases:
        if ph.n_flows and float(ph.bytes.max()) > MAX_SIZE:
            raise RankmapError(f"bad pattern {show(pattern.spec)}: a flow of phase "
                               f"{show(ph.name, 40)} would carry "
                               f"{byte_count_text(ph.bytes.max())} bytes, more than "
                               f"{MAX_SIZE:,} (1 PiB)")
        if ph.n_flows > 1 and float(ph.bytes.sum()) > MAX_SIZE:
            # several flows of one pair (a graph's repeated rows, a 2-wide periodic
            # stencil's two neighbours that are one rank) are one flow of their sum
            key = ph.src.astype(np.int64) * max(pattern.n_ranks, 1) + ph.dst
            _pairs, first, inv = np.unique(key, return_index=True, return_inverse=True)
            sums = np.bincount(inv.reshape(-1), weights=ph.bytes)
            top = int(np.argmax(sums))
            # the pair's flows (each at most 1 PiB: exact floats) summed exactly
            together = sum(map(Fraction, ph.bytes[inv.reshape(-1) == top].tolist()),
                           Fraction(0)) if sums[top] > MAX_SIZE else 0
            if together > MAX_SIZE:
                i = int(first[top])
                raise RankmapError(f"bad pattern {show(pattern.spec)}: the flows from rank "
                                   f"{int(ph.src[i])} to rank {int(ph.dst[i])} of phase "
                                   f"{show(ph.name, 40)} would carry "
                                   f"{byte_count_text(together)} bytes together, more than "
                                   f"{MAX_SIZE:,} (1 PiB)")


def parse_pattern(text: str | Pattern, default_ranks: int | None = None,
                  detect_grid: bool = True) -> Pattern:
    """Build a :class:`Pattern` from a spec string, ``A + B + C`` or a ``.toml`` file.

    Parameters
    ----------
    text : str or Pattern
        The spec (a Pattern is returned unchanged).
    default_ranks : int, optional
        Ranks of patterns that fill the allocation (usually its core count), such as
        ``pairs:random`` without ``ranks=``.
    detect_grid : bool
        Look for a Cartesian stencil in gridless graphs (see :func:`detect_grid_note`).

    Returns
    -------
    Pattern
    """
    if isinstance(text, Pattern):
        return text
    if not isinstance(text, str) or not text.strip():
        raise RankmapError("empty pattern spec" if isinstance(text, str) or text is None
                           else f"bad pattern {show(text)}: give a spec such as 'stencil:8x8'")
    if default_ranks is not None:
        default_ranks = as_int(default_ranks, "default rank count", minimum=1)
    text = text.strip()
    parts = split_composition(text, PATTERN_KINDS)
    if len(parts) == 1:
        pattern = _parse_one(text, default_ranks)
    else:
        # parts that fix their own ranks (stencil:4x4, graph:FILE) set the composition's;
        # the others (a bare allreduce, stencil:dims=3) take that count, else the default
        subs: list = []
        total = 0
        for p in parts:
            try:
                subs.append(parse_pattern(p, None, detect_grid=False))
            except RankmapError:
                subs.append(None)            # needs a rank count (or is bad: said below)
            total = _add_flows(text, total, subs[-1])
        n = next((sub.n_ranks for sub in subs if sub is not None), default_ranks)
        for i, (p, sub) in enumerate(zip(parts, subs)):
            if sub is None:
                subs[i] = parse_pattern(p, n, detect_grid=False)
                total = _add_flows(text, total, subs[i])
        pattern = compose(text, subs)
    if detect_grid and pattern.grid is None and _may_hide_a_grid(pattern):
        pattern = detect_grid_note(pattern)
    return pattern
