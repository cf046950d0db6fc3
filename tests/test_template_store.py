"""The compiled searches' store of minimal-adaptive templates (kernels/template_store.py), and
the adaptive router's hops in a search's link sums."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rankmap.kernels.template_store import (MAX_TEMPLATE_CODES, stored_entries, stored_template,
                                            template_store)
from rankmap.kernels.torus import adaptive_code, adaptive_template, adaptive_templates
from rankmap.machines import parse_machine
from rankmap.routing.torus import Adaptive

SPECS = ["torus:4x4", "mesh:5x3", "torus:4x3x2", "torus:6x4:wrap=x", "torus:8", "mesh:3x3x3",
         "torus:6x6x4"]


def _geometry(spec):
    m = parse_machine(spec)
    return (m, np.asarray(m.dims, dtype=np.int64), np.asarray(m.strides, dtype=np.int64),
            np.asarray(m.wrap, dtype=np.bool_))


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(SPECS), st.integers(0, 2 ** 32 - 1), st.sampled_from([0, 5, 60, 1 << 20]))
def test_stored_templates_are_the_computed_ones(spec, seed, room):
    """Whatever the store holds (nothing, a few templates, all), every flow gets the template
    its computation gives, value for value, its minimal hop count and its number of entries;
    the store keeps templates up to its room and indexes each by the code of its offsets."""
    m, dims, strides, wrap = _geometry(spec)
    store = template_store(dims, strides, room)
    rng = np.random.default_rng(seed)
    pairs = rng.integers(0, m.n_nodes, (80, 2))
    for _round in range(2):
        for s, t in pairs:
            rel, slots, shares, hops = stored_template(s, t, dims, strides, wrap, *store)
            want = adaptive_template(s, t, dims, strides, wrap)
            for got, exp in zip((rel, slots, shares), want):
                assert got.dtype == exp.dtype and np.array_equal(got, exp)
            assert hops == m.hop_distance(np.array([s]), np.array([t]))[0]
            assert stored_entries(s, t, dims, strides, wrap, *store) == len(want[1])
    start, length, _rel, _slots, _shares, used, _coords = store
    assert used[0] <= room
    kept = np.flatnonzero(start >= 0)
    assert length[kept].sum() == used[0]
    xy = store[6]
    codes = {adaptive_code(xy[s], xy[t], dims, wrap)[0] for s, t in pairs}
    assert set(kept.tolist()) <= codes
    if room == 1 << 20:
        assert set(kept.tolist()) == codes                 # room for all: all kept


@pytest.mark.parametrize("spec", SPECS)
def test_codes_are_the_routers_codes(spec):
    """Equal codes, equal templates: the code of every pair is the one the router groups
    flows by (one template per distinct code) and lies below prod(2 * dims)."""
    m, dims, strides, wrap = _geometry(spec)
    n = m.n_nodes
    src = np.repeat(np.arange(n), n)
    dst = np.tile(np.arange(n), n)
    tid, ptr, _rel, _slots, _shares, hops = adaptive_templates(src, dst, dims, strides, wrap)
    xy = template_store(dims, strides, 0)[6]
    codes = np.array([adaptive_code(xy[s], xy[t], dims, wrap)[0] for s, t in zip(src, dst)])
    assert codes.min() >= 0 and codes.max() < np.prod(2 * dims)
    # the same partition of the pairs: equal codes exactly where equal templates
    _u, by_code = np.unique(codes, return_inverse=True)
    assert np.array_equal(by_code.reshape(-1), tid)
    assert np.array_equal([adaptive_code(xy[s], xy[t], dims, wrap)[1]
                           for s, t in zip(src, dst)], hops)


def test_a_store_too_large_is_refused():
    with pytest.raises(ValueError, match="offset codes"):
        template_store(np.array([2048, 1024]), np.array([1, 2048]))
    assert np.prod(2 * np.array([64, 64, 64])) <= MAX_TEMPLATE_CODES


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(SPECS), st.integers(0, 2 ** 32 - 1))
def test_adaptive_link_sums_count_minimal_hops(spec, seed):
    """A search's link sums under adaptive routing: the same sums as every router's (shares
    added in flow and route order), and every flow's hops the minimal hop count, a whole
    number, as the router's loads count them (the shares summed miss it by a rounding)."""
    from rankmap.routing.base import Router

    m = parse_machine(spec)
    router = Adaptive(m)
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 40))
    src = rng.integers(0, m.n_nodes, k)
    dst = rng.integers(0, m.n_nodes, k)
    weight = rng.choice([-3.0, 1.0, 1024.0, -65536.0], k)
    part = np.sort(rng.integers(0, 3, k))
    keys, sums, hops, entries = router.link_sums_by_part(src, dst, weight, part, 3)
    keys0, sums0, _shares, entries0 = Router._link_sums_by_part(router, src, dst, weight, part, 3)
    assert np.array_equal(keys, keys0) and np.array_equal(sums, sums0)
    assert np.array_equal(entries, entries0)
    assert np.array_equal(hops, m.hop_distance(src, dst).astype(np.float64))
    assert np.array_equal(hops, router.loads(src, dst, np.ones(k)).flow_hops)


@pytest.mark.parametrize("spec", SPECS + ["torus:5x3", "mesh:4", "torus:2x2x2"])
def test_largest_template_bounds_every_template(spec):
    """The bound at the farthest offset (the one the router checks against the limits) is
    at least every template's entries, and is the longest template where no ring has a
    half-way tie (the bound counts both ways round there)."""
    from rankmap.mappers.exact_grid import largest_template

    m, dims, strides, wrap = _geometry(spec)
    n = m.n_nodes
    src = np.zeros(n, dtype=np.int64)
    dst = np.arange(n, dtype=np.int64)
    if not all(m.wrap):
        src = np.repeat(np.arange(n), n)
        dst = np.tile(np.arange(n), n)
    _tid, ptr, _rel, _slots, _shares, _hops = adaptive_templates(src, dst, dims, strides, wrap)
    ties = any(w and n % 2 == 0 for n, w in zip(m.dims, m.wrap))
    assert largest_template(m) >= np.diff(ptr).max()
    assert ties or largest_template(m) == np.diff(ptr).max()


def test_compiled_adaptive_step_keeps_clear_of_the_route_entry_limit(monkeypatch):
    """Where a proposal's routes could pass the route-entry limit (which the Python step
    checks, with a clean error), the search keeps the Python step."""
    from rankmap.allocation import whole_machine
    from rankmap.mappers.exact_grid import largest_template
    from rankmap.mappers.refine import refine_search
    from rankmap.patterns import parse_pattern

    machine = parse_machine("torus:6x6")
    allocation = whole_machine(machine)
    pattern = parse_pattern("stencil:6x6:box")
    start = np.random.default_rng(1).permutation(36)
    # two ranks' 16 flow ends (8 neighbours, both ways), old and new routes
    bound = int(2 * 32 * largest_template(machine))
    monkeypatch.setenv("RANKMAP_MAX_ROUTE_ENTRIES", str(bound))
    compiled = refine_search(start, pattern, machine, allocation, 0, 400, "adaptive")
    monkeypatch.setenv("RANKMAP_MAX_ROUTE_ENTRIES", str(bound - 1))
    with pytest.raises(ValueError, match="compiled refinement step"):
        refine_search(start, pattern, machine, allocation, 0, 400, "adaptive", compiled=True)
    python = refine_search(start, pattern, machine, allocation, 0, 400, "adaptive")
    assert np.array_equal(python.cores, compiled.cores)
    assert (python.proposals, python.accepted) == (compiled.proposals, compiled.accepted)


@pytest.mark.parametrize("spec", ["torus:4x4", "torus:4x3x2", "mesh:3x3x2", "torus:6x4:wrap=x",
                                  "torus:2x2x2", "torus:5x3", "torus:8", "mesh:4"])
def test_the_crossing_test_names_exactly_the_templates_links(spec):
    """adaptive_takes_slot, in O(ndim), is True for exactly the links of the template placed
    at the source, for every pair of nodes and every link (ties half way round included)."""
    from rankmap.kernels.torus import adaptive_takes_slot

    m, dims, strides, wrap = _geometry(spec)
    nd = len(dims)
    n_slots = m.n_nodes * 2 * nd
    for s in range(m.n_nodes):
        sc = (s // strides) % dims
        for t in range(m.n_nodes):
            rel, slots, _shares = adaptive_template(s, t, dims, strides, wrap)
            placed = ((sc[None, :] + rel) % dims[None, :]) @ strides * 2 * nd + slots
            want = np.zeros(n_slots, dtype=bool)
            want[placed] = True
            got = np.array([adaptive_takes_slot(s, t, q, dims, strides, wrap)
                            for q in range(n_slots)])
            assert np.array_equal(got, want), (s, t)
