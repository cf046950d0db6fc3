"""Recognise a Cartesian stencil in a gridless graph.

A graph read from a file (or recorded) has no process grid, so the Cartesian mappers cannot
use it. :func:`detect_stencil_grid` looks for a grid (ranks numbered as MPI_Cart_create numbers
them: row-major, last dimension fastest) and a per-dimension wrap under which the graph is
*exactly* a stencil: one set of offsets, applied from every rank that has the neighbour, gives
every communicating pair of the graph and no other (directions and sizes are not compared:
``to=lower``, per-class sizes and zero-byte classes are all stencils).

Search: every ordered factorisation of the rank count into 1-6 factors of at least 2 is a
candidate grid. On a fixed sample of the graph's pairs, each candidate's distinct offsets are
counted (vectorised over candidates); the candidates with the fewest, more dimensions first,
are verified on the whole graph by regenerating the stencil (the first that regenerates it is
kept unless one with fewer offsets follows: a sample can miss the pairs that make a grid's
description long, and a 48x48x48 star read as a 3x16x48x48 14-offset stencil), at most
:data:`MAX_VERIFICATIONS` of them and :data:`VERIFY_WORK` array elements in all (the search
is bounded by work, so the answer depends on the graph only). A grid is only reported when regeneration gives exactly
the graph's pairs, so a random graph is never called a stencil.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .stencil import stencil_flows_indexed, stencil_offsets, diagonal_offsets

__all__ = ["StencilMatch", "detect_stencil_grid", "match_on_grid", "grid_factorisations",
           "undirected_keys",
           "MAX_VERIFICATIONS"]

#: candidates verified on the whole graph, fewest-offset first, at most
MAX_VERIFICATIONS = 64
#: and at most this much work over all verifications (pairs x dimensions + regenerated flows)
VERIFY_WORK = 60_000_000
#: pairs sampled to rank candidate grids
SAMPLE_PAIRS = 256
#: most candidate grids considered
MAX_CANDIDATES = 40_000
#: most flows a verification may regenerate (ranks x offsets)
MAX_REGENERATED = 60_000_000


@dataclass(frozen=True)
class StencilMatch:
    """A grid under which a graph is a stencil.

    ``offsets`` holds one of each +-pair of offsets (the first non-zero coordinate positive).
    """

    grid: tuple[int, ...]
    periodic: tuple[bool, ...]
    offsets: np.ndarray

    @property
    def shape_name(self) -> str:
        """``box``, ``box of radius R``, ``star``, ``star of radius R``, ``diagonal`` or
        ``N-offset``."""
        nd = len(self.grid)
        have = {tuple(o) for o in _symmetric(self.offsets)}
        r = int(np.abs(self.offsets).max())
        for box in (False, True):
            # the offsets' count first: a star or box of radius r has 2 nd r or
            # (2r + 1)^nd - 1 of them, and building one as large as r (a graph's lone flow
            # 0 -> 100000 has r = 100000) would take the whole memory
            count = (2 * r + 1) ** nd - 1 if box else 2 * nd * r
            if count == len(have) and have == {tuple(o) for o in stencil_offsets(nd, box, r)}:
                word = "box" if box else "star"
                return word if r == 1 else f"{word} of radius {r}"
        if nd >= 2 and min(self.grid) >= 2 and \
                have == {tuple(o) for o in diagonal_offsets(self.grid)}:
            return "diagonal"
        return f"{len(have)}-offset"

    def describe(self) -> str:
        """Human-readable description of the match.

        Returns
        -------
        str
            E.g. ``6x6x6 box stencil (non-periodic)``, ``8-rank star stencil of radius 2
            (periodic)``.
        """
        grid = "x".join(map(str, self.grid))
        if all(self.periodic):
            wrap = "periodic"
        elif not any(self.periodic):
            wrap = "non-periodic"
        else:
            wrap = "periodic in dimension " + ",".join(
                str(d) for d, p in enumerate(self.periodic) if p)
        if len(self.grid) == 1:
            grid += "-rank"
        shape, radius = (self.shape_name.split(" of ", 1) + [""])[:2]
        return f"{grid} {shape} stencil{' of ' + radius if radius else ''} ({wrap})"


def _symmetric(offsets: np.ndarray) -> np.ndarray:
    return np.concatenate([offsets, -offsets]) if len(offsets) else offsets


def grid_factorisations(n: int, max_dims: int = 6, limit: int = MAX_CANDIDATES) -> list[tuple]:
    """Ordered factorisations of ``n`` into 1..``max_dims`` factors >= 2 (at most ``limit``).

    Parameters
    ----------
    n : int
        The rank count to factor.
    max_dims : int, optional
        Most factors (grid dimensions).
    limit : int, optional
        Most factorisations returned (the search stops there).

    Returns
    -------
    list of tuple of int
        Candidate grids, fewer dimensions first, each count in lexicographic order of the
        factors: when ``limit`` cuts the list, it cuts grids of many dimensions (a count with
        many divisors, 110,592 = 48^3, has more than 40,000 ordered factorisations, and in
        lexicographic order alone 48x48x48 was cut).
    """
    divisors = [d for d in range(2, n + 1) if n % d == 0] if n <= 1 << 16 else \
        _divisors(n)
    out: list[tuple] = []

    def rec(rest, prefix, dims):
        if len(out) >= limit:
            return
        if len(prefix) == dims - 1:
            if rest >= 2:
                out.append(tuple(prefix + [rest]))
            return
        for d in divisors:
            if d > rest:
                break
            if rest % d == 0 and rest // d >= 2:
                rec(rest // d, prefix + [d], dims)

    for dims in range(1, max_dims + 1):
        rec(n, [], dims)
    return out


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(n ** 0.5) + 1) if n % d == 0]
    return sorted({d for d in small + [n // d for d in small] if d >= 2})


def _unique(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sort-based: numpy's hash-based unique is slower here)."""
    a = np.sort(a, kind="stable" if a.dtype.kind != "i" else None)
    if len(a) == 0:
        return a
    return a[np.concatenate(([True], a[1:] != a[:-1]))]


def _unique_rows(rows: np.ndarray) -> np.ndarray:
    """Distinct rows of a small-valued integer array, in lexicographic order."""
    if len(rows) == 0:
        return rows
    lo = rows.min(axis=0)
    base = rows.max(axis=0) - lo + 1
    key = np.zeros(len(rows), dtype=np.int64)
    for d in range(rows.shape[1]):
        key = key * base[d] + (rows[:, d] - lo[d])
    _, first = np.unique(key, return_index=True) if len(key) < 4096 else \
        _first_of_each(key)
    return rows[first]


def _first_of_each(key: np.ndarray):
    order = np.argsort(key, kind="stable")
    k = key[order]
    start = np.concatenate(([True], k[1:] != k[:-1]))
    return k[start], order[start]


def undirected_keys(src, dst, n) -> np.ndarray:
    """Distinct communicating pairs as keys u*n + v (u < v), sorted; self-flows dropped.

    Parameters
    ----------
    src, dst : array_like of int
        Sending and receiving rank of every flow.
    n : int
        Rank count (the key base).

    Returns
    -------
    numpy.ndarray of int64
        Sorted distinct keys ``min(src, dst) * n + max(src, dst)``.
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    keep = src != dst
    u = np.minimum(src[keep], dst[keep])
    v = np.maximum(src[keep], dst[keep])
    return _unique(u * np.int64(n) + v)


_undirected_keys = undirected_keys


def _offsets_of(u, v, grid, periodic) -> np.ndarray:
    """Offset from rank u to rank v on ``grid`` (wrapped into [-g/2, g/2) on periodic
    dimensions), sign-normalised so the first non-zero coordinate is positive."""
    g = np.asarray(grid, dtype=np.int64)
    stride = np.ones(len(g), dtype=np.int64)
    for d in range(len(g) - 2, -1, -1):
        stride[d] = stride[d + 1] * g[d + 1]
    cu = (u[:, None] // stride) % g
    cv = (v[:, None] // stride) % g
    diff = cv - cu
    per = np.asarray(periodic, dtype=bool)
    if per.any():
        wrapped = (diff + g // 2) % g - g // 2
        diff = np.where(per[None, :], wrapped, diff)
    return _sign_normalise(diff)


def _sign_normalise(diff: np.ndarray) -> np.ndarray:
    nz = diff != 0
    first = np.argmax(nz, axis=-1)
    lead = np.take_along_axis(diff, first[..., None], axis=-1)
    return np.where(lead < 0, -diff, diff)


def _regenerates(keys, n, grid, periodic, offsets) -> bool:
    if len(offsets) * 2 * n > MAX_REGENERATED:
        return False
    src, dst, _ = stencil_flows_indexed(grid, periodic, _symmetric(offsets))
    got = _undirected_keys(src, dst, n)
    return len(got) == len(keys) and bool(np.array_equal(got, keys))


def match_on_grid(keys: np.ndarray, n: int, grid: tuple[int, ...]) -> StencilMatch | None:
    """Whether the undirected pairs ``keys`` (u*n + v, u < v) form a stencil on ``grid``.

    Tries each dimension wrapped where some pair's raw step exceeds half of it, then no wrap.

    Parameters
    ----------
    keys : numpy.ndarray of int64
        Sorted distinct pair keys from :func:`undirected_keys`.
    n : int
        Rank count (``prod(grid)``).
    grid : tuple of int
        Candidate grid, ranks numbered row-major (last dimension fastest).

    Returns
    -------
    StencilMatch or None
        The match when regenerating the stencil gives exactly ``keys``, else None.
    """
    u, v = keys // n, keys % n
    g = np.asarray(grid, dtype=np.int64)
    stride = np.ones(len(g), dtype=np.int64)
    for d in range(len(g) - 2, -1, -1):
        stride[d] = stride[d + 1] * g[d + 1]
    raw = np.abs((v[:, None] // stride) % g - (u[:, None] // stride) % g)
    guess = tuple(bool(x) for x in (raw.max(axis=0) * 2 > g))
    tries = [guess] + ([(False,) * len(grid)] if any(guess) else [])
    for periodic in tries:
        offs = _unique_rows(_offsets_of(u, v, grid, periodic))
        # ranks that have each offset's neighbour: prod over dimensions of g (wrapped) or
        # g - |o| (not wrapped); on a mesh each gives that many distinct pairs, and with
        # wraps at least half as many (a pair comes from one +-offset only, at most twice),
        # so more than twice the graph's pairs cannot regenerate it (a random graph's
        # thousands of offsets would regenerate millions of flows to learn that)
        per = np.asarray(periodic, dtype=bool)
        pairs = int(np.prod(np.where(per[None, :], g[None, :], g[None, :] - np.abs(offs)),
                            axis=1).sum())
        if pairs != len(keys) if not any(periodic) else pairs > 2 * len(keys):
            continue
        if _regenerates(keys, n, grid, periodic, offs):
            return StencilMatch(tuple(int(x) for x in grid), periodic, offs)
    return None


def _sample_scores(sample_u, sample_v, grids: np.ndarray) -> np.ndarray:
    """Distinct sign-normalised offsets of the sampled pairs under every grid (rows)."""
    c, nd = grids.shape
    stride = np.ones((c, nd), dtype=np.int64)
    for d in range(nd - 2, -1, -1):
        stride[:, d] = stride[:, d + 1] * grids[:, d + 1]
    g = grids[:, None, :]
    cu = (sample_u[None, :, None] // stride[:, None, :]) % g
    cv = (sample_v[None, :, None] // stride[:, None, :]) % g
    diff = cv - cu
    per = (np.abs(diff).max(axis=1, keepdims=True) * 2) > g
    wrapped = (diff + g // 2) % g - g // 2
    diff = _sign_normalise(np.where(per, wrapped, diff))
    base = 2 * g - 1
    key = np.zeros(diff.shape[:2], dtype=np.int64)
    for d in range(nd):
        key = key * base[:, :, d] + (diff[:, :, d] + g[:, :, d] - 1)
    key.sort(axis=1)
    return 1 + (np.diff(key, axis=1) != 0).sum(axis=1)


def detect_stencil_grid(n_ranks: int, src: np.ndarray, dst: np.ndarray,
                        max_dims: int = 6) -> StencilMatch | None:
    """Find a grid under which the flows ``src -> dst`` are exactly a Cartesian stencil.

    Parameters
    ----------
    n_ranks : int
        Ranks of the graph (the grid has exactly this many).
    src, dst : numpy.ndarray
        Flows of every phase (directions and repeats are ignored).
    max_dims : int
        Most grid dimensions tried (dimensions of size 1 are never reported).

    Returns
    -------
    StencilMatch or None
        The match with the fewest offsets (more dimensions first on a tie), or None.
    """
    n = int(n_ranks)
    if n < 2 or len(src) == 0:
        return None
    keys = _undirected_keys(np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64), n)
    if len(keys) == 0:
        return None
    rng = np.random.default_rng(0)
    pick = keys if len(keys) <= SAMPLE_PAIRS else keys[rng.choice(len(keys), SAMPLE_PAIRS,
                                                                  replace=False)]
    su, sv = pick // n, pick % n
    ranked = []
    cands = grid_factorisations(n, max_dims)
    by_dims: dict[int, list] = {}
    for grid in cands:
        by_dims.setdefault(len(grid), []).append(grid)
    for nd, grids in by_dims.items():
        arr = np.array(grids, dtype=np.int64)
        for lo in range(0, len(arr), 512):
            chunk = arr[lo:lo + 512]
            scores = _sample_scores(su, sv, chunk)
            for grid, s in zip(chunk, scores):
                ranked.append((int(s), -nd, tuple(int(x) for x in grid)))
    ranked.sort()
    work = 0
    best = None
    for score, _, grid in ranked[:MAX_VERIFICATIONS]:
        # a sample's distinct offsets are at most the graph's: a grid whose sample already
        # has as many as the best match cannot describe the graph with fewer
        if best is not None and score >= len(best.offsets):
            break
        work += len(keys) * len(grid) * 2 + min(score, len(keys)) * 2 * n
        if work > VERIFY_WORK:
            break
        match = match_on_grid(keys, n, grid)
        if match is not None and (best is None or len(match.offsets) < len(best.offsets)):
            best = match
    return best
