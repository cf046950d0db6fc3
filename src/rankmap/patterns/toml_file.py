"""Multi-phase patterns from a TOML file.

Example::

    # halo then transpose, 1,024 ranks
    [[phase]]
    pattern = "stencil:32x32:periodic:bytes=256KiB"
    name = "halo"                 # optional: defaults to the sub-pattern's phase name(s)

    [[phase]]
    pattern = "fft2d:32x32"       # two phases: dim0 and dim1

    [[phase]]
    name = "exchange"
    flows = [[0, 1, "1MiB"], [1, 0, "1MiB"]]   # explicit (src, dst, bytes) triples

Every phase must agree on the number of ranks (``ranks = N`` at top level may set it). The
pattern keeps the process grid of the first phase that has one, when all gridded phases agree.
"""

from __future__ import annotations

import os
import tomllib

import numpy as np

from ..errors import RankmapError
from ..units import parse_size
from ..validate import as_int, check_limit, limit, read_text, show
from .base import Pattern, Phase

#: pattern files being read (real paths), to refuse a file that includes itself.
_READING: list[str] = []
#: how deeply pattern files may include other pattern files.
MAX_NESTING = 8


def pattern_from_toml(path: str, default_ranks: int | None = None) -> Pattern:
    """Read a multi-phase pattern from ``path`` (see module docstring).

    Parameters
    ----------
    path : str
        The ``.toml`` file.
    default_ranks : int or None
        Ranks of the allocation, for sub-patterns that fill it.

    Returns
    -------
    Pattern
    """
    if not os.path.isfile(path):
        raise RankmapError(f"pattern file {show(path)} not found")
    real = os.path.realpath(path)
    if real in _READING:
        raise RankmapError(f"pattern file {show(path)} includes itself (through "
                           f"{' -> '.join(os.path.basename(p) for p in _READING)})")
    if len(_READING) >= MAX_NESTING:
        raise RankmapError(f"pattern file {show(path)}: pattern files nest more than "
                           f"{MAX_NESTING} deep")
    _READING.append(real)
    try:
        return _read(path, default_ranks)
    finally:
        _READING.pop()


def _read(path: str, default_ranks: int | None) -> Pattern:
    from . import parse_pattern

    try:
        data = tomllib.loads(read_text(path, "pattern file"))
    except tomllib.TOMLDecodeError as exc:
        raise RankmapError(f"pattern file {show(path)} is not valid TOML: {exc}") from None
    except RecursionError:
        raise RankmapError(f"pattern file {show(path)} nests too deeply") from None
    tables = data.get("phase")
    if not isinstance(tables, list) or not tables:
        raise RankmapError(f"pattern file {show(path)} has no [[phase]] tables")
    n_ranks = data.get("ranks")
    if n_ranks is not None:
        n_ranks = as_int(n_ranks, f"ranks in pattern file {show(path)}", minimum=1)
        check_limit(n_ranks, "ranks", f"pattern file {path}")
    phases: list[Phase] = []
    grids = []
    periodic = None
    for k, table in enumerate(tables, 1):
        if not isinstance(table, dict):
            raise RankmapError(f"pattern file {show(path)}: phase {k} is not a table")
        unknown = set(table) - {"pattern", "name", "flows"}
        if unknown:
            raise RankmapError(f"pattern file {show(path)}: phase {k}: unknown key {sorted(unknown)[0]!r}")
        name = table.get("name")
        if name is not None and (not isinstance(name, str) or not name.strip()
                                 or len(name) > 200):
            raise RankmapError(f"pattern file {show(path)}: phase {k}: name must be a short "
                               f"string, got {show(name, 40)}")
        if ("pattern" in table) == ("flows" in table):
            raise RankmapError(f"pattern file {show(path)}: phase {k} needs exactly one of pattern or flows")
        if "pattern" in table:
            if not isinstance(table["pattern"], str):
                raise RankmapError(f"pattern file {show(path)}: phase {k}: pattern must be a "
                                   f"string, got {show(table['pattern'], 40)}")
            sub = parse_pattern(table["pattern"], n_ranks or default_ranks)
            sub_n = sub.n_ranks
            if sub.grid is not None:
                grids.append(sub.grid)
                periodic = periodic or sub.periodic
            for ph in sub.phases:
                if name is None:
                    pname = ph.name
                elif len(sub.phases) == 1:
                    pname = str(name)
                else:
                    pname = f"{name}.{ph.name}"
                phases.append(Phase(pname, ph.src, ph.dst, ph.bytes))
        else:
            flows = table["flows"]
            if not isinstance(flows, list) or not flows:
                raise RankmapError(f"pattern file {show(path)}: phase {k}: flows must be a list of [src, dst, bytes]")
            check_limit(len(flows), "flows", f"pattern file {path}")
            rmax = limit("ranks") - 1
            arr = []
            for j, f in enumerate(flows, 1):
                where = f"pattern file {show(path)}: phase {k}: flow {j}"
                if not isinstance(f, list) or len(f) != 3:
                    raise RankmapError(f"{where}: each flow is [src, dst, bytes], got {show(f, 40)}")
                arr.append((as_int(f[0], f"{where}: src", 0, rmax),
                            as_int(f[1], f"{where}: dst", 0, rmax),
                            parse_size(f[2], f"{where}: bytes")))
            a = np.array(arr, dtype=np.int64)
            sub_n = int(a[:, :2].max()) + 1
            phases.append(Phase(str(name or f"phase{k}"), a[:, 0], a[:, 1], a[:, 2].astype(float)))
        if n_ranks is None:
            n_ranks = sub_n
        elif "pattern" in table and sub_n != n_ranks:
            raise RankmapError(f"pattern file {show(path)}: phase {k} has {sub_n} ranks, "
                               f"another has {n_ranks}")
        elif sub_n > n_ranks:
            raise RankmapError(f"pattern file {show(path)}: phase {k} uses rank {sub_n - 1}, "
                               f"beyond {n_ranks} ranks")
    grid = grids[0] if grids and all(g == grids[0] for g in grids) else None
    return Pattern(spec=path, kind="phases", n_ranks=int(n_ranks), phases=phases, grid=grid,
                   periodic=periodic if grid is not None else None)
