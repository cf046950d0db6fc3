"""Multi-phase patterns from a TOML file.

Example::

    # halo then transpose, 1,024 ranks
    grid = "32x32"                # optional: the process grid (ranks numbered last dim fastest)

    [[phase]]
    pattern = "stencil:32x32:periodic:bytes=256KiB"
    name = "halo"                 # optional: defaults to the sub-pattern's phase name(s)

    [[phase]]
    pattern = "fft2d:32x32"       # two phases: dim0 and dim1 (any spec, ``A + B`` too)

    [[phase]]
    name = "exchange"
    flows = [[0, 1, "1MiB"], [1, 0, "1MiB"]]   # explicit (src, dst, bytes) triples

Every ``pattern`` phase must have the same number of ranks (``ranks = N`` at top level may set
it); a phase without a count of its own (a bare ``allreduce``) takes the others', wherever it
stands, and explicit flows may use fewer. The phases run in order, exactly as the one-line spec
``A + B + C`` of the same patterns (:mod:`rankmap.patterns.compose`): same phase names, and the
grid of the first phase that has one, unless a top-level ``grid`` line gives it. A file whose
phases have no grid at all is searched for a Cartesian stencil like a graph file.

As in a graph file, an explicit flow of a rank to itself or of 0 bytes is no flow; a phase
left without flows is left out, with a note (a file left without any is refused).
"""

from __future__ import annotations

import os
import tomllib

import numpy as np

from ..errors import RankmapError
from ..specs import files_beside, parse_shape
from ..units import parse_size
from ..validate import as_int, check_input_file, check_limit, limit, read_text, show
from .base import Pattern, Phase
from .compose import compose

__all__ = ["pattern_from_toml"]

#: pattern files being read (real paths), to refuse a file that includes itself.
_READING: list[str] = []
#: how deeply pattern files may include other pattern files.
MAX_NESTING = 8


def _explicit_flows(path: str, k: int, flows) -> np.ndarray:
    if not isinstance(flows, list) or not flows:
        raise RankmapError(f"pattern file {show(path)}: phase {k}: flows must be a list of "
                           "[src, dst, bytes]")
    check_limit(len(flows), "flows", f"pattern file {path}")
    rmax = limit("ranks") - 1
    arr = []
    for j, f in enumerate(flows, 1):
        where = f"pattern file {show(path)}: phase {k}: flow {j}"
        if not isinstance(f, list) or len(f) != 3:
            raise RankmapError(f"{where}: each flow is [src, dst, bytes], got {show(f, 40)}")
        arr.append((as_int(f[0], f"{where}: src", 0, rmax),
                    as_int(f[1], f"{where}: dst", 0, rmax),
                    parse_size(f[2], f"{where}: bytes", allow_zero=True)))   # 0: no flow
    return np.array(arr, dtype=np.int64)


def pattern_from_toml(path: str, default_ranks: int | None = None, parse_pattern=None,
                      with_grid=None) -> Pattern:
    """Read a multi-phase pattern from ``path`` (see module docstring).

    Parameters
    ----------
    path : str
        The ``.toml`` file.
    default_ranks : int, optional
        Ranks of sub-patterns that fill the allocation.
    parse_pattern, with_grid : callable
        :func:`rankmap.patterns.parse_pattern` and :func:`rankmap.patterns.with_grid`, passed
        in by that package (this module sits below it: no import back).

    Returns
    -------
    Pattern
        Kind ``phases``.
    """
    if parse_pattern is None or with_grid is None:
        raise RankmapError("pattern_from_toml needs parse_pattern and with_grid "
                           "(call rankmap.patterns.parse_pattern)")
    check_input_file(path, "pattern file")
    real = os.path.realpath(path)
    if real in _READING:
        raise RankmapError(f"pattern file {show(path)} includes itself (through "
                           f"{' -> '.join(os.path.basename(p) for p in _READING)})")
    if len(_READING) >= MAX_NESTING:
        raise RankmapError(f"pattern file {show(path)}: pattern files nest more than "
                           f"{MAX_NESTING} deep")
    _READING.append(real)
    try:
        return _read(path, default_ranks, parse_pattern, with_grid)
    finally:
        _READING.pop()


def _mismatch(path: str, k: int, sub: Pattern, n_ranks: int, counted: str | None) -> None:
    """Raise: phase ``k`` has another rank count than the file's."""
    where = counted or f"another phase has {n_ranks}"
    hint = (f" (a graph's ranks are its largest rank + 1: give {sub.spec.split(':', 2)[0]}:"
            f"FILE:ranks={n_ranks})" if sub.kind == "graph" and sub.n_ranks < n_ranks else "")
    raise RankmapError(f"pattern file {show(path)}: phase {k} has {sub.n_ranks} ranks, "
                       f"{where}{hint}")


def _read(path: str, default_ranks: int | None, parse_pattern, with_grid) -> Pattern:
    try:
        data = tomllib.loads(read_text(path, "pattern file"))
    except tomllib.TOMLDecodeError as exc:
        raise RankmapError(f"pattern file {show(path)} is not valid TOML: {exc}") from None
    except RecursionError:
        raise RankmapError(f"pattern file {show(path)} nests too deeply") from None
    unknown = set(data) - {"phase", "ranks", "grid"}
    if unknown:
        raise RankmapError(f"pattern file {show(path)}: unknown top-level key {sorted(unknown)[0]!r}")
    tables = data.get("phase")
    if not isinstance(tables, list) or not tables:
        raise RankmapError(f"pattern file {show(path)} has no [[phase]] tables")
    check_limit(len(tables), "phases", f"pattern file {path}")
    n_ranks = data.get("ranks")
    if n_ranks is not None:
        n_ranks = as_int(n_ranks, f"ranks in pattern file {show(path)}", minimum=1)
        check_limit(n_ranks, "ranks", f"pattern file {path}")
    grid = None
    if "grid" in data:
        grid = parse_shape(str(data["grid"]), f"grid of pattern file {show(path)}", max_dims=6,
                           cap="ranks", subject=path)
        g_ranks = int(np.prod(grid))
        if n_ranks is not None and n_ranks != g_ranks:
            raise RankmapError(f"pattern file {show(path)}: grid {data['grid']} has {g_ranks} "
                               f"ranks, ranks = {n_ranks}")
        n_ranks = g_ranks
    # where the count came from, for the message when a phase has another
    counted = (f"the file says ranks = {n_ranks}" if "grid" not in data and n_ranks is not None
               else f"the file's grid has {n_ranks}" if n_ranks is not None else None)
    parts: list = []
    names: list = []
    for k, table in enumerate(tables, 1):
        if not isinstance(table, dict):
            raise RankmapError(f"pattern file {show(path)}: phase {k} is not a table")
        unknown = set(table) - {"pattern", "name", "flows"}
        if unknown:
            raise RankmapError(f"pattern file {show(path)}: phase {k}: unknown key {sorted(unknown)[0]!r}")
        if ("pattern" in table) == ("flows" in table):
            raise RankmapError(f"pattern file {show(path)}: phase {k} needs exactly one of pattern or flows")
        name = table.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip()
                                 or len(name) > 200):
            raise RankmapError(f"pattern file {show(path)}: phase {k}: name must be a short "
                               f"string, got {show(name, 40)}")
        names.append(name)
        if "pattern" in table:
            if not isinstance(table["pattern"], str):
                raise RankmapError(f"pattern file {show(path)}: phase {k}: pattern must be a "
                                   f"string, got {show(table['pattern'], 40)}")
            # graph:FILE and other.toml are beside this file, whatever the working directory
            text = files_beside(table["pattern"], os.path.dirname(path))
            sub = None
            try:
                sub = parse_pattern(text, n_ranks, detect_grid=False)
            except RankmapError:
                if n_ranks is not None:
                    raise
            if sub is None:
                parts.append((k, text))      # needs a rank count (or is bad: said below)
                continue
            if n_ranks is None:
                n_ranks = sub.n_ranks
            elif sub.n_ranks != n_ranks:
                _mismatch(path, k, sub, n_ranks, counted)
            parts.append(sub)
        else:
            parts.append((k, _explicit_flows(path, k, table["flows"])))
    # phases that fix their own ranks (stencil:8x8, graph:FILE) set the file's count; the
    # others (a bare allreduce) take that count, else the allocation's, whatever their order
    filled = n_ranks or default_ranks
    for j, part in enumerate(parts):
        if isinstance(part, tuple) and isinstance(part[1], str):
            sub = parse_pattern(part[1], filled, detect_grid=False)
            if n_ranks is None:
                n_ranks = sub.n_ranks
            elif sub.n_ranks != n_ranks:
                _mismatch(path, part[0], sub, n_ranks, counted)
            parts[j] = sub
    if n_ranks is None:
        n_ranks = max(int(a[:, :2].max()) + 1 for _, a in parts)
    built, kept, left_out = [], [], []
    dropped = [False, False]        # some flow was a self-send, some flow of 0 bytes
    for part, name in zip(parts, names):
        if isinstance(part, tuple):
            k, a = part
            if int(a[:, :2].max()) >= n_ranks:
                raise RankmapError(f"pattern file {show(path)}: phase {k} uses rank "
                                   f"{int(a[:, :2].max())}, beyond {n_ranks} ranks")
            # a rank's sends to itself and 0-byte entries are no flows (as in graphs)
            self_send, empty = a[:, 0] == a[:, 1], a[:, 2] == 0
            a = a[~(self_send | empty)]
            if not len(a):      # a phase of no flows then: left out, as in graphs
                left_out.append(name or f"phase{k}")
                dropped[0] |= bool(self_send.any())
                dropped[1] |= bool(empty.any())
                continue
            part = Pattern(spec=f"{path} phase {k}", kind="flows", n_ranks=n_ranks,
                           phases=[Phase(name or f"phase{k}", a[:, 0], a[:, 1],
                                         a[:, 2].astype(float))])
        built.append(part)
        kept.append(name)
    # why the phases left out move nothing, for the note and for the error if none is left
    why, every_flow = {(True, False): ("a rank to itself", "is a rank to itself"),
                       (False, True): ("of 0 bytes", "has 0 bytes")}.get(
        tuple(dropped), ("a rank to itself or of 0 bytes", "is a rank to itself or has 0 bytes"))
    if not built:
        raise RankmapError(f"pattern file {show(path)} moves nothing: every flow {every_flow}")
    out = compose(path, built, kept, n_ranks=n_ranks)
    if left_out:
        import dataclasses
        out = dataclasses.replace(out, notes=out.notes + [
            f"note: {path}: phase {', '.join(left_out)} moves nothing (every flow {why}): "
            "left out"])
    if grid is not None:
        out = with_grid(out, grid, "grid")
    return out
