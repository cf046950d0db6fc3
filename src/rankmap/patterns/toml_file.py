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
from .base import Pattern, Phase


def pattern_from_toml(path: str, default_ranks: int | None = None) -> Pattern:
    """Read a multi-phase pattern from ``path`` (see module docstring)."""
    from . import parse_pattern

    if not os.path.isfile(path):
        raise RankmapError(f"pattern file {path!r} not found")
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RankmapError(f"pattern file {path!r} is not valid TOML: {exc}") from None
    tables = data.get("phase")
    if not isinstance(tables, list) or not tables:
        raise RankmapError(f"pattern file {path!r} has no [[phase]] tables")
    n_ranks = data.get("ranks")
    if n_ranks is not None and (not isinstance(n_ranks, int) or n_ranks <= 0):
        raise RankmapError(f"pattern file {path!r}: ranks must be a positive integer")
    phases: list[Phase] = []
    grids = []
    periodic = None
    for k, table in enumerate(tables, 1):
        if not isinstance(table, dict):
            raise RankmapError(f"pattern file {path!r}: phase {k} is not a table")
        unknown = set(table) - {"pattern", "name", "flows"}
        if unknown:
            raise RankmapError(f"pattern file {path!r}: phase {k}: unknown key {sorted(unknown)[0]!r}")
        name = table.get("name")
        if ("pattern" in table) == ("flows" in table):
            raise RankmapError(f"pattern file {path!r}: phase {k} needs exactly one of pattern or flows")
        if "pattern" in table:
            sub = parse_pattern(str(table["pattern"]), n_ranks or default_ranks)
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
                raise RankmapError(f"pattern file {path!r}: phase {k}: flows must be a list of [src, dst, bytes]")
            try:
                arr = [(int(f[0]), int(f[1]), parse_size(f[2], "bytes")) for f in flows]
            except (TypeError, ValueError, IndexError):
                raise RankmapError(f"pattern file {path!r}: phase {k}: each flow is [src, dst, bytes]") from None
            a = np.array(arr, dtype=np.int64)
            sub_n = int(a[:, :2].max()) + 1
            phases.append(Phase(str(name or f"phase{k}"), a[:, 0], a[:, 1], a[:, 2].astype(float)))
        if n_ranks is None:
            n_ranks = sub_n
        elif "pattern" in table and sub_n != n_ranks:
            raise RankmapError(f"pattern file {path!r}: phase {k} has {sub_n} ranks, "
                               f"another has {n_ranks}")
        elif sub_n > n_ranks:
            raise RankmapError(f"pattern file {path!r}: phase {k} uses rank {sub_n - 1}, "
                               f"beyond {n_ranks} ranks")
    grid = grids[0] if grids and all(g == grids[0] for g in grids) else None
    return Pattern(spec=path, kind="phases", n_ranks=int(n_ranks), phases=phases, grid=grid,
                   periodic=periodic if grid is not None else None)
