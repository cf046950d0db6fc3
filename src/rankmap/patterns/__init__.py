"""Communication patterns: parse a spec string or TOML file into a :class:`Pattern`.

Spec strings (sizes accept ``64``, ``8KiB``, ``1MiB``, ``1MB``):

* ``stencil:128x128[:box][:periodic][:bytes=1MiB]`` — halo exchange, star or box; without a
  grid (``stencil[:dims=3]``) it fills the allocation on a balanced grid (MPI_Dims_create);
* ``minighost[:16x16x8]``, ``minimd[:16x16x8]`` — seed 002's mini-apps (see
  :mod:`rankmap.patterns.miniapps`), filling the allocation when no grid is given;
* ``fft2d:P0xP1[:bytes=...]`` — phases ``dim0`` and ``dim1`` of all-to-alls;
* ``pairs:random[:seed=N][:ranks=N][:bytes=...]`` — random pairwise exchange (fills the
  allocation's cores unless ``ranks=`` is given);
* ``graph:FILE[:bytes=...][:ranks=N]`` — a weighted graph (CSV, Matrix Market, Scotch, METIS);
* a ``.toml`` file with several ``[[phase]]`` tables (see :mod:`rankmap.patterns.toml_file`).

Other pattern kinds register a parser in :data:`PATTERN_KINDS`.
"""

from __future__ import annotations

from typing import Callable

from ..errors import RankmapError
from ..specs import Spec, parse_int, parse_shape, split_spec
from ..units import parse_size
from ..validate import check_limit, show
from .base import Pattern, Phase
from .fft import make_fft2d
from .graph_files import make_graph_pattern
from .pairs import make_random_pairs
from .stencil import make_stencil

__all__ = ["Pattern", "Phase", "parse_pattern", "PATTERN_KINDS"]

DEFAULT_BYTES = 1 << 20


def _bytes_option(spec: Spec, default=DEFAULT_BYTES):
    value = spec.pop_option("bytes")
    if value is None:
        return default
    try:
        return parse_size(value, "message size")
    except RankmapError as exc:
        raise RankmapError(f"bad bytes={show(value, 40)} in {show(spec.text)}: "
                           f"{str(exc).split(': ', 1)[-1]}") from None


#: most dimensions of a process grid (a box stencil has 3^d - 1 neighbours).
MAX_GRID_DIMS = 8


def _need_grid(spec: Spec, example: str) -> tuple[int, ...]:
    if not spec.words:
        raise RankmapError(f"bad pattern {show(spec.text)}: give a process grid, e.g. {example}")
    return parse_shape(spec.words.pop(0), "process grid", max_dims=MAX_GRID_DIMS, cap="ranks",
                       subject=spec.text)


def _check_flows(spec: Spec, flows: int) -> None:
    """Refuse a pattern of more than the flow cap before any array is built."""
    check_limit(flows, "flows", spec.text)


def _grid_or_fill(spec: Spec, default_ranks: int | None, ndim: int) -> tuple[int, ...]:
    """The spec's grid, or (no grid given) a balanced ``ndim``-D grid filling the allocation."""
    from .miniapps import fill_grid
    if spec.words and spec.words[0][:1].isdigit():
        return _need_grid(spec, "")
    if default_ranks is not None:
        check_limit(default_ranks, "ranks", spec.text)
    return fill_grid(spec.text, default_ranks, ndim)


def _ranks(grid) -> int:
    n = 1
    for g in grid:
        n *= int(g)
    return n


def _parse_stencil(spec: Spec, default_ranks: int | None) -> Pattern:
    if spec.words and spec.words[0][:1].isdigit():
        grid = _need_grid(spec, "stencil:64x64")
    else:  # no grid: fill the allocation on a balanced grid of dims=D (default 3) dimensions
        ndim = parse_int(spec.pop_option("dims", "3"), "stencil dims", minimum=1,
                         maximum=MAX_GRID_DIMS)
        grid = _grid_or_fill(spec, default_ranks, ndim)
    box = spec.pop_flag("box")
    star = spec.pop_flag("star")
    if box and star:
        raise RankmapError(f"bad pattern {spec.text!r}: choose star or box, not both")
    periodic = spec.pop_flag("periodic")
    nbytes = _bytes_option(spec)
    spec.reject_leftovers("stencil")
    _check_flows(spec, _ranks(grid) * (3 ** len(grid) - 1 if box else 2 * len(grid)))
    return make_stencil(spec.text, grid, box=box, periodic=periodic, nbytes=nbytes)


def _parse_fft2d(spec: Spec, default_ranks: int | None) -> Pattern:
    grid = _need_grid(spec, "fft2d:8x64")
    if len(grid) != 2:
        raise RankmapError(f"bad pattern {show(spec.text)}: fft2d takes a P0xP1 grid")
    nbytes = _bytes_option(spec)
    spec.reject_leftovers("fft2d")
    _check_flows(spec, _ranks(grid) * (grid[0] + grid[1] - 2))
    return make_fft2d(spec.text, grid, nbytes=nbytes)


def _parse_pairs(spec: Spec, default_ranks: int | None) -> Pattern:
    if not spec.pop_flag("random"):
        raise RankmapError(f"bad pattern {spec.text!r}: the only pairing is pairs:random")
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
        raise RankmapError(f"bad pattern {spec.text!r}: give a file, e.g. graph:comm.csv")
    path = spec.words.pop(0)
    nbytes = _bytes_option(spec, default=None)
    ranks = spec.pop_option("ranks")
    n = parse_int(ranks, "ranks", minimum=1) if ranks is not None else None
    if n is not None:
        check_limit(n, "ranks", spec.text)
    spec.reject_leftovers("graph")
    return make_graph_pattern(spec.text, path, nbytes=nbytes, n_ranks=n)


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


#: pattern kind -> parser(spec, default_ranks); other modules add their kinds here.
PATTERN_KINDS: dict[str, Callable[[Spec, int | None], Pattern]] = {
    "stencil": _parse_stencil,
    "fft2d": _parse_fft2d,
    "pairs": _parse_pairs,
    "graph": _parse_graph,
    "minighost": _parse_minighost,
    "minimd": _parse_minimd,
}


def parse_pattern(text: str | Pattern, default_ranks: int | None = None) -> Pattern:
    """Build a :class:`Pattern` from a spec string or a ``.toml`` file.

    ``default_ranks`` (usually the allocation's core count) sizes patterns that fill the
    allocation, such as ``pairs:random`` without ``ranks=``.
    """
    if isinstance(text, Pattern):
        return text
    if not isinstance(text, str) or not text.strip():
        raise RankmapError("empty pattern spec")
    text = text.strip()
    if text.endswith(".toml"):
        from .toml_file import pattern_from_toml
        return pattern_from_toml(text, default_ranks)
    spec = split_spec(text, "pattern")
    parser = PATTERN_KINDS.get(spec.kind)
    if parser is None:
        raise RankmapError(f"unknown pattern kind {show(spec.kind, 40)} in {show(text)}: choose from "
                           f"{', '.join(sorted(PATTERN_KINDS))} or a .toml file")
    return parser(spec, default_ranks)
