"""Collectives as phases of logical transfers, by named algorithm.

``allreduce``, ``bcast``, ``allgather`` and ``alltoall`` run either over all P ranks
(``allreduce:P``) or inside every sub-grid group of a Cartesian grid (``alltoall:8x8x8:dims=0,2``:
the ranks that share their coordinates outside dimensions 0 and 2; ``dims`` defaults to every
dimension). ``bytes=`` is the collective's message size m: the buffer reduced or broadcast,
each rank's contribution to an allgather, each rank's block for every other rank of an
alltoall. Inside a group, members are numbered 0..g-1 in rank order; ``root`` (bcast) is a
member number.

Rounds that depend on each other are **separate phases**: rankmap's time model runs a phase's
flows at the same time and adds phase times, so a round that cannot start before the previous
one finishes must be a phase of its own (putting log2 P rounds of a recursive doubling in one
phase would let them overlap and predict the time of the slowest round instead of the sum).
Rounds that are exactly the same set of transfers (the P-1 steps of a ring) are merged into one
phase carrying the sum of their bytes: under max-min sharing a phase whose every flow is scaled
by k takes k times as long, so the bandwidth term is exact and only the per-message latency
(overhead + hops x per-hop latency) is counted once instead of k times.

Algorithms (g = group size, m = bytes; "r0, r1, ..." are phases named ``KIND.r0`` ...):

allreduce
    ``recursive-doubling`` (default): with p2 the largest power of two <= g, members
    p2..g-1 first send m to member - p2 (phase ``pre``), then rounds k = 0..log2(p2)-1:
    member i exchanges m with i XOR 2^k; then member - p2 sends the result back (``post``).
    ``ring``: reduce-scatter then allgather around the ring, 2(g-1) steps of m/g from i to
    i+1 mod g, merged into one phase ``ring`` of 2(g-1)m/g per flow.
    ``binomial``: binomial-tree reduce to member 0 (rounds ``reduce0``.. where member i with
    i mod 2^(k+1) = 2^k sends m to i - 2^k), then binomial bcast (``bcast0``.., the reverse).
bcast
    ``binomial`` (default): round k, member i < 2^k sends m to i + 2^k (relative to root).
    ``linear``: the root sends m to every other member at once (one phase).
allgather
    ``ring`` (default): g-1 steps of m from i to i+1, one phase of (g-1)m per flow.
    ``recursive-doubling``: round k, member i exchanges 2^k m with i XOR 2^k (g a power of
    two). ``bruck``: round k, member i sends min(2^k, g-2^k) m to i - 2^k mod g.
    ``linear``: every member sends m to every other at once (one phase): what ``rankmap
    record`` counts for ``MPI_Allgather`` and SMPI's ``spreading_simple`` sends.
alltoall
    ``linear`` (default, as SMPI's basic_linear and ``fft2d``): every member sends m to every
    other at once, one phase. ``pairwise``: rounds k = 1..g-1, member i sends m to i+k mod g.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..errors import RankmapError
from ..units import MAX_SIZE
from ..validate import check_limit, show
from .base import Pattern, Phase, byte_count_text

__all__ = ["COLLECTIVE_ALGORITHMS", "group_members", "collective_phases", "make_collective",
           "alltoall_pairs", "check_collective_size"]

#: collective -> its algorithms, the default first
COLLECTIVE_ALGORITHMS: dict[str, tuple[str, ...]] = {
    "allreduce": ("recursive-doubling", "ring", "binomial"),
    "bcast": ("binomial", "linear"),
    "allgather": ("ring", "recursive-doubling", "bruck", "linear"),
    "alltoall": ("linear", "pairwise"),
}

def group_members(grid: tuple[int, ...], dims: tuple[int, ...]) -> np.ndarray:
    """Ranks of every sub-grid group: shape (groups, group size).

    Parameters
    ----------
    grid : tuple of int
        Process grid (ranks numbered last dimension fastest).
    dims : tuple of int
        The dimensions a group spans; its members share every other coordinate.

    Returns
    -------
    numpy.ndarray
        Row q lists group q's ranks in increasing rank order.
    """
    nd = len(grid)
    ranks = np.arange(int(np.prod(grid)), dtype=np.int64).reshape(grid)
    rest = [d for d in range(nd) if d not in dims]
    order = rest + sorted(dims)
    size = int(np.prod([grid[d] for d in dims])) if dims else 1
    return np.ascontiguousarray(ranks.transpose(order).reshape(-1, size))


def alltoall_pairs(g: int) -> tuple[np.ndarray, np.ndarray]:
    """Every ordered pair (a, b), a != b, of members 0..g-1, a-major.

    Parameters
    ----------
    g : int
        Members of the group.

    Returns
    -------
    tuple of numpy.ndarray
        int64 (a, b) of every ordered pair, a != b, a-major: g (g - 1) pairs.
    """
    a, b = np.nonzero(~np.eye(g, dtype=bool))
    return a.astype(np.int64), b.astype(np.int64)


# The rounds of each collective: (name, senders, receivers, (p, q)), members sending p/q
# times m (kept as two integers: the bytes are checked exactly, and computed in floats in
# the order the formula reads)


def _rounds_allreduce(g: int, algo: str):
    i = np.arange(g, dtype=np.int64)
    out = []
    if algo == "recursive-doubling":
        p2 = 1 << (g.bit_length() - 1)
        extra = i[p2:]
        if len(extra):
            out.append(("pre", extra, extra - p2, (1, 1)))
        k = 1
        r = 0
        while k < p2:
            low = i[:p2]
            out.append((f"r{r}", low, low ^ k, (1, 1)))
            k <<= 1
            r += 1
        if len(extra):
            out.append(("post", extra - p2, extra, (1, 1)))
    elif algo == "ring":
        if g > 1:
            out.append(("ring", i, (i + 1) % g, (2 * (g - 1), g)))
    elif algo == "binomial":
        rounds = (g - 1).bit_length()
        for k in range(rounds):
            step = 1 << k
            snd = i[(i % (2 * step) == step)]
            out.append((f"reduce{k}", snd, snd - step, (1, 1)))
        for k in reversed(range(rounds)):
            step = 1 << k
            snd = i[(i % (2 * step) == 0) & (i + step < g)]
            out.append((f"bcast{rounds - 1 - k}", snd, snd + step, (1, 1)))
    return out


def _rounds_bcast(g: int, algo: str, root: int):
    i = np.arange(g, dtype=np.int64)
    out = []
    if algo == "binomial":
        k, r = 1, 0
        while k < g:
            rel = i[(i < k) & (i + k < g)]
            out.append((f"r{r}", (rel + root) % g, (rel + k + root) % g, (1, 1)))
            k <<= 1
            r += 1
    elif algo == "linear":
        others = i[i != root]
        if len(others):
            out.append(("linear", np.full(len(others), root, dtype=np.int64), others,
                        (1, 1)))
    return out


def _rounds_allgather(g: int, algo: str, spec_text: str):
    i = np.arange(g, dtype=np.int64)
    out = []
    if algo == "ring":
        if g > 1:
            out.append(("ring", i, (i + 1) % g, (g - 1, 1)))
    elif algo == "recursive-doubling":
        if g & (g - 1):
            raise RankmapError(f"bad pattern {spec_text!r}: algo=recursive-doubling allgather "
                               f"needs a power-of-two group, not {g} (use ring or bruck)")
        k, r = 1, 0
        while k < g:
            out.append((f"r{r}", i, i ^ k, (k, 1)))
            k <<= 1
            r += 1
    elif algo == "bruck":
        k, r = 1, 0
        while k < g:
            out.append((f"r{r}", i, (i - k) % g, (min(k, g - k), 1)))
            k <<= 1
            r += 1
    elif algo == "linear" and g > 1:
        a, b = alltoall_pairs(g)
        out.append(("linear", a, b, (1, 1)))
    return out


def _rounds_alltoall(g: int, algo: str):
    out = []
    if g < 2:
        return out
    if algo == "linear":
        a, b = alltoall_pairs(g)
        out.append(("linear", a, b, (1, 1)))
    elif algo == "pairwise":
        i = np.arange(g, dtype=np.int64)
        for k in range(1, g):
            out.append((f"r{k - 1}", i, (i + k) % g, (1, 1)))
    return out


def check_collective_size(spec_text: str, n_groups: int, group_size: int, kind: str,
                          algo: str) -> None:
    """Refuse a collective whose flow list would exceed the flow cap (``rankmap.validate``).

    Parameters
    ----------
    spec_text : str
        The pattern spec, for the message.
    n_groups : int
        Groups the collective runs in.
    group_size : int
        Ranks per group.
    kind : str
        ``allreduce``, ``bcast``, ``allgather`` or ``alltoall``.
    algo : str
        The algorithm (it fixes the flows per round).

    Raises
    ------
    RankmapError
        More flows than ``RANKMAP_MAX_FLOWS``.
    """
    g = group_size
    rounds = (g - 1).bit_length()  # ceil(log2 g)
    if kind == "alltoall" or kind == "allgather" and algo == "linear":
        per_group = g * (g - 1)
    elif kind == "allreduce" and algo == "recursive-doubling":
        p2 = 1 << (g.bit_length() - 1)
        per_group = p2 * (p2.bit_length() - 1) + 2 * (g - p2)
    elif kind == "allreduce" and algo == "binomial" or kind == "bcast":
        per_group = 2 * (g - 1)
    elif kind == "allgather" and algo != "ring":
        per_group = g * rounds
    else:  # rings
        per_group = g
    check_limit(n_groups * per_group, "flows", spec_text)


def collective_phases(kind: str, groups: np.ndarray, nbytes: float, algo: str | None = None,
                      root: int = 0, spec_text: str = "",
                      size_text: str | None = None) -> list[Phase]:
    """The phases of collective ``kind`` run inside every row of ``groups``.

    Parameters
    ----------
    kind : {"allreduce", "bcast", "allgather", "alltoall"}
        The collective.
    groups : numpy.ndarray, shape (groups, group size)
        Member ranks of every group (see :func:`group_members`).
    nbytes : float
        Message size m in bytes (see module docstring).
    algo : str, optional
        Algorithm name; default the first of :data:`COLLECTIVE_ALGORITHMS`.
    root : int
        Bcast root, a member number.
    spec_text : str
        Named in errors.
    size_text : str, optional
        How the spec gives m (``bytes=600TiB``), named when a flow would be too large.

    Returns
    -------
    list of Phase
        One phase per dependent round, named ``KIND.ROUND``; all groups run their round in
        the same phase.

    Raises
    ------
    RankmapError
        When the algorithm, root or flow count is bad, or a flow would carry more than
        :data:`rankmap.units.MAX_SIZE` bytes (reckoned exactly, in integers).
    """
    if kind not in COLLECTIVE_ALGORITHMS:
        raise RankmapError(f"unknown collective {kind!r}")
    algo = algo or COLLECTIVE_ALGORITHMS[kind][0]
    if algo not in COLLECTIVE_ALGORITHMS[kind]:
        raise RankmapError(f"bad algo={algo} in {spec_text!r}: {kind} algorithms are "
                           f"{', '.join(COLLECTIVE_ALGORITHMS[kind])}")
    g = groups.shape[1]
    if kind == "bcast" and not 0 <= root < g:
        raise RankmapError(f"bad root={root} in {spec_text!r}: groups have {g} ranks "
                           f"(root 0-{g - 1})")
    check_collective_size(spec_text, groups.shape[0], g, kind, algo)
    m = float(nbytes)
    if kind == "allreduce":
        rounds = _rounds_allreduce(g, algo)
    elif kind == "bcast":
        rounds = _rounds_bcast(g, algo, root)
    elif kind == "allgather":
        rounds = _rounds_allgather(g, algo, spec_text)
    else:
        rounds = _rounds_alltoall(g, algo)
    # exactly (floats round past 2^53); a size that is no finite number: Phase refuses it
    try:
        exact_m = Fraction(nbytes)
    except (TypeError, ValueError, OverflowError):
        exact_m = Fraction(0)
    for name, _a, _b, (p, q) in rounds:
        if exact_m * p / q > MAX_SIZE:
            where = f"bad {size_text} in {show(spec_text)}" if size_text \
                else f"bad pattern {show(spec_text)}"
            times = f"{p} x {byte_count_text(exact_m)}" + (f" / {q}" if q != 1 else "")
            raise RankmapError(f"{where}: a flow of phase {show(f'{kind}.{name}')} would carry "
                               f"{byte_count_text(exact_m * p / q)} bytes ({times}), more "
                               f"than {MAX_SIZE:,} (1 PiB)")
    phases = []
    for name, a, b, (p, q) in rounds:
        size = float(p) * m / q if q != 1 else float(p) * m   # as 2 (g - 1) m / g reads
        phases.append(Phase(f"{kind}.{name}", groups[:, a].reshape(-1), groups[:, b].reshape(-1),
                            size))
    return phases


def make_collective(spec_text: str, kind: str, grid: tuple[int, ...],
                    dims: tuple[int, ...] | None = None, nbytes: int = 8,
                    algo: str | None = None, root: int = 0, keep_grid: bool = True,
                    size_text: str | None = None) -> Pattern:
    """A collective (or one per sub-grid group) as a pattern.

    Parameters
    ----------
    spec_text : str
        The spec, kept on the pattern.
    kind : str
        ``allreduce``, ``bcast``, ``allgather`` or ``alltoall``.
    grid : tuple of int
        Process grid; ``(P,)`` for a collective over P ranks.
    dims : tuple of int, optional
        Dimensions a group spans (default: all, one group of every rank).
    nbytes : int
        Message size in bytes (see module docstring).
    algo : str, optional
        Algorithm (see module docstring).
    root : int
        Bcast root (member number).
    keep_grid : bool
        Whether the pattern keeps ``grid`` as its Cartesian grid.
    size_text : str, optional
        How the spec gives ``nbytes`` (``bytes=600TiB``), named when a flow would carry more
        than 1 PiB.

    Returns
    -------
    Pattern
        Kind ``kind``; phases as :func:`collective_phases`.

    Raises
    ------
    RankmapError
        As :func:`collective_phases`, or when every group has one rank (nothing moves).
    """
    nd = len(grid)
    dims = tuple(range(nd)) if dims is None else tuple(dims)
    groups = group_members(grid, dims)
    phases = collective_phases(kind, groups, nbytes, algo, root, spec_text, size_text)
    if not phases:
        raise RankmapError(f"pattern {spec_text!r} moves nothing: its groups have one rank")
    return Pattern(spec=spec_text, kind=kind, n_ranks=int(np.prod(grid)), phases=phases,
                   grid=tuple(grid) if keep_grid else None,
                   periodic=(False,) * nd if keep_grid else None,
                   params={"bytes": nbytes, "dims": dims,
                           "algo": algo or COLLECTIVE_ALGORITHMS[kind][0]})
