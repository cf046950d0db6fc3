"""``graph``'s compiled link swaps decide as the Python swaps do, swap for swap.

On a torus or mesh under dimension order, or a k-ary n-tree under d-mod-k, with sizes whose
sums are exact
(:mod:`rankmap.mappers.exact_grid`), ``_Loads.try_swap`` runs
:func:`rankmap.kernels.refine_grid.swap_step`; elsewhere the Python step.
"""

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from rankmap.allocation import parse_allocation, whole_machine
from rankmap.machines import parse_machine
from rankmap.mappers import swap_refine
from rankmap.mappers.exact_grid import EXACT_LIMIT, longest_route, whole_sums_exact
from rankmap.mappers.geometry import neighbour_csr
from rankmap.mappers.swap_refine import UnitPlacement, link_swaps

MACHINES = ["torus:4x4:cores=2", "mesh:5x3:cores=3", "torus:4x3x2", "torus:6x4:wrap=x:cores=2",
            "torus:8", "mesh:3x3x3:cores=2", "fattree:k=4:levels=2:cores=2", "fattree:k=3:levels=3",
            "fattree:k=2:levels=4:cores=2:taper=2"]


def _routing(spec):
    """The routing the compiled swaps follow on the machine: d-mod-k on trees."""
    return "dmodk" if spec.startswith("fattree") else "dor"


def _python_swaps_only(mp):
    """Keep the Python swaps (neither compiled routing applies)."""
    mp.setattr(swap_refine, "grid_steps_apply", lambda router, machine: False)
    mp.setattr(swap_refine, "tree_steps_apply", lambda router, machine: False)


def _phases(n, seed, n_phases, sizes):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_phases):
        m = int(rng.integers(n, 4 * n))
        s = rng.integers(0, n, m)
        d = (s + rng.integers(1, n, m)) % n
        out.append((s.astype(np.int64), d.astype(np.int64),
                    rng.choice(np.asarray(sizes, dtype=np.float64), m)))
    return out


def _problem(spec, seed, n_phases, scattered, sizes):
    """A machine, its whole (or, when ``scattered``, a random) allocation, positions per
    node (cores or whole nodes, by the seed), the positions, the units on them (a few
    positions left free) and the units' flows."""
    machine = parse_machine(spec)
    allocation = whole_machine(machine)
    if scattered and allocation.n_nodes > 4:
        allocation = parse_allocation(f"random:{allocation.n_nodes - 2}:seed={seed % 89}",
                                      machine)
    slots = allocation.cores_per_node if seed % 2 else 1
    n_pos = allocation.n_nodes * slots
    n = n_pos - (seed % 3)
    return machine, allocation, slots, n_pos, n, _phases(n, seed, n_phases, sizes)


def _swap_alike(machine, allocation, slots, n_pos, n, phases, spec, seed, exact=False):
    """Offer the same 150 random swaps to the compiled and the Python step and check they
    decide alike, with the same objective, busiest links and loads after each (``exact``:
    the sum of squares is also the whole-number sum of the loads' squares)."""
    pos = np.random.default_rng(seed).permutation(n_pos)[:n]
    a_place = UnitPlacement(pos, n_pos, slots, allocation)
    b_place = UnitPlacement(pos, n_pos, slots, allocation)
    compiled = swap_refine._Loads(phases, a_place, machine, _routing(spec), n)
    with pytest.MonkeyPatch.context() as mp:
        _python_swaps_only(mp)
        python = swap_refine._Loads(phases, b_place, machine, _routing(spec), n)
    assert compiled.grid is not None and python.grid is None
    rng = np.random.default_rng(seed + 1)
    kept = 0
    for _ in range(150):
        u, p = int(rng.integers(n)), int(rng.integers(n_pos))
        if a_place.pos_of[u] == p:
            continue
        got, want = compiled.try_swap(u, p), python.try_swap(u, p)
        assert got == want
        kept += got
        assert (compiled.max, compiled.sq) == (python.max, python.sq)
        assert compiled.top == python.top
        # the count of links at each phase's busiest value is the count over the loads
        g = compiled.grid
        assert np.array_equal(g.n_top, (g.loads >= g.top[:, None]).sum(axis=1))
        if exact and got:
            whole = [int(x) for ld in python.loads for x in ld]
            assert python.sq == sum(x * x for x in whole)
    assert np.array_equal(a_place.pos_of, b_place.pos_of)
    assert np.array_equal(a_place.unit_at, b_place.unit_at)
    for x, y in zip(compiled.loads, python.loads):
        assert np.array_equal(x, y)
    return kept


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MACHINES), st.integers(0, 10 ** 6), st.integers(1, 3), st.booleans(),
       st.sampled_from([[1, 2, 5], [1 << 20, 3 << 20], [64, 4096, 1 << 16]]))
def test_compiled_swap_decides_as_python(spec, seed, n_phases, scattered, sizes):
    machine, allocation, slots, n_pos, n, phases = _problem(spec, seed, n_phases, scattered,
                                                            sizes)
    assert whole_sums_exact(np.concatenate([b for _s, _d, b in phases]), machine, squares=True)
    _swap_alike(machine, allocation, slots, n_pos, n, phases, spec, seed)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MACHINES), st.integers(0, 10 ** 6), st.integers(1, 3), st.booleans())
def test_swaps_exact_below_the_busiest_link_bound(spec, seed, n_phases, scattered):
    """Sizes scaled by an odd factor so that the bytes times the longest route, B, are about
    2**27 in units of 1: (B / g)**2 passes 2**53, but 2 x busiest x B stays below it. The
    compiled step is used there, decides as the Python step does, and both keep the sum of
    squares exact."""
    machine, allocation, slots, n_pos, n, phases = _problem(spec, seed, n_phases, scattered,
                                                            [1, 2, 5])
    total = sum(float(b.sum()) for _s, _d, b in phases)
    factor = int(2 ** 27 / (total * (longest_route(machine) + 1))) | 1
    phases = [(s, d, b * factor) for s, d, b in phases]
    nbytes = np.concatenate([b for _s, _d, b in phases])
    assert not whole_sums_exact(nbytes, machine, squares=True)
    place = UnitPlacement(np.random.default_rng(seed).permutation(n_pos)[:n], n_pos, slots,
                          allocation)
    busiest = swap_refine._Loads(phases, place, machine, _routing(spec), n).max
    assume(whole_sums_exact(nbytes, machine, squares=True, busiest=busiest))
    _swap_alike(machine, allocation, slots, n_pos, n, phases, spec, seed, exact=True)


def test_the_busiest_link_bound():
    """2 x busiest x B against 2**53, with B below 2**53; no usable busiest value keeps
    the (B / g)**2 bound."""
    machine = parse_machine("torus:8")              # longest route 8: B = 9 x total bytes
    sizes = np.full(4, 2.0 ** 22 + 1)               # g = 1, B about 2**27.2
    b = 9 * float(sizes.sum())
    assert not whole_sums_exact(sizes, machine, squares=True)
    below = float(int(EXACT_LIMIT / (2 * b)))
    assert whole_sums_exact(sizes, machine, squares=True, busiest=below)
    assert not whole_sums_exact(sizes, machine, squares=True, busiest=below + 2)
    for odd in (-1.0, float("nan"), 2 * b):      # not a link's bytes under these flows
        assert not whole_sums_exact(sizes, machine, squares=True, busiest=odd)
    assert whole_sums_exact(np.full(4, 2.0 ** 20), machine, squares=True, busiest=2.0 ** 22)


@pytest.mark.parametrize("spec", ["torus:4x4x4:cores=2", "mesh:6x5", "fattree:k=4:levels=3"])
def test_link_swaps_same_placement_compiled_or_not(monkeypatch, spec):
    machine = parse_machine(spec)
    allocation = whole_machine(machine)
    n = allocation.n_nodes
    phases = _phases(n, 11, 2, [1 << 20, 2 << 20])
    pos = np.random.default_rng(3).permutation(n)
    runs = []
    for compiled in (True, False):
        place = UnitPlacement(pos, n, 1, allocation)
        with monkeypatch.context() as mp:
            if not compiled:
                _python_swaps_only(mp)
            kept = link_swaps(phases, place, machine, _routing(spec),
                              neighbour_csr(machine, allocation), seed=5, max_proposals=400)
        runs.append((kept, place.pos_of.copy()))
    assert runs[0][0] == runs[1][0] and runs[0][0] > 0
    assert np.array_equal(runs[0][1], runs[1][1])


def test_sums_not_exact_keep_the_python_swap():
    machine = parse_machine("torus:4x4")
    assert not whole_sums_exact(np.array([1.5, 2.0]), machine)            # fractional
    assert not whole_sums_exact(np.array([-1.0, 2.0]), machine)           # negative
    odd = np.full(10, 2.0 ** 30 + 1)                  # g = 1: squares far past 2**53
    assert whole_sums_exact(odd, machine) and not whole_sums_exact(odd, machine, squares=True)
    assert whole_sums_exact(np.full(10, 2.0 ** 40), machine, squares=True)  # g = 2**40


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(MACHINES), st.integers(0, 10 ** 6), st.integers(1, 3), st.booleans(),
       st.sampled_from([[1, 2, 5], [1 << 20, 3 << 20], [64, 4096, 1 << 16]]),
       st.integers(1, 300))
def test_compiled_attack_takes_the_python_loops_swaps(spec, seed, n_phases, scattered, sizes,
                                                      max_proposals):
    """The compiled inner loop (targets, gains, draws, exact tries) keeps the swaps the
    Python loop keeps, in the same order, up to the same proposal count."""
    machine, allocation, slots, n_pos, n, phases = _problem(spec, seed, n_phases, scattered,
                                                            sizes)
    pos = np.random.default_rng(seed).permutation(n_pos)[:n]
    nb = neighbour_csr(machine, allocation)
    runs = []
    for compiled in (True, False):
        place = UnitPlacement(pos, n_pos, slots, allocation)
        kept = link_swaps(phases, place, machine, _routing(spec), nb, seed=seed % 7,
                          max_proposals=max_proposals, compiled=compiled)
        runs.append((kept, place.pos_of.copy(), place.unit_at.copy()))
    assert runs[0][0] == runs[1][0]
    assert np.array_equal(runs[0][1], runs[1][1])
    assert np.array_equal(runs[0][2], runs[1][2])


def test_compiled_attack_refused_where_the_swap_step_does_not_apply():
    machine = parse_machine("torus:4x4")
    allocation = whole_machine(machine)
    phases = [(np.array([0, 1], dtype=np.int64), np.array([5, 9], dtype=np.int64),
               np.array([1.5, 2.0]))]             # fractional sizes: sums not exact
    place = UnitPlacement(np.arange(16), 16, 1, allocation)
    with pytest.raises(ValueError, match="compiled link swaps"):
        link_swaps(phases, place, machine, "dor", neighbour_csr(machine, allocation), seed=0,
                   compiled=True)
