"""The adaptive router's template cache: routes from it equal routes computed afresh, bit
for bit, whatever the cache holds (empty, warm, full, unpickled)."""

import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rankmap.kernels import torus as tk
from rankmap.kernels.template_cache import TemplateCache
from rankmap.machines import parse_machine
from rankmap.routing import router_for

MACHINES = ["torus:4x4x4", "torus:6x5", "mesh:4x3x2", "torus:8", "torus:4x4x2:wrap=x"]


def _fresh(m, src, dst):
    return tk.adaptive_paths(src, dst, m.dims, m.strides, m.wrap,
                             link_of_slot=m.link_of_dense_slot)


def _same(a, b):
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and np.array_equal(x, y)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MACHINES), st.integers(0, 2**32 - 1),
       st.sampled_from([0, 1, 40, 400, 1 << 20]))
def test_cached_routes_are_the_computed_ones(spec, seed, bound):
    """Three batches of random node pairs through one cache (of room for ``bound`` entries:
    none, a few templates, all): every batch's paths equal those computed without a cache,
    and the cache never holds more than its bound."""
    m = parse_machine(spec)
    rng = np.random.default_rng(seed)
    cache = TemplateCache(bound)
    for _ in range(3):
        n = int(rng.integers(1, 60))
        src = rng.integers(0, m.n_nodes, n)
        dst = rng.integers(0, m.n_nodes, n)
        got = tk.adaptive_paths(src, dst, m.dims, m.strides, m.wrap,
                                link_of_slot=m.link_of_dense_slot, cache=cache)
        _same(got, _fresh(m, src, dst))
        assert cache.entries <= bound


def test_the_router_reuses_its_templates_and_its_results_do_not_change():
    m = parse_machine("torus:4x4x4")
    router = router_for(m, "adaptive")
    src = np.array([0, 5, 9, 0, 63])
    dst = np.array([21, 42, 9, 21, 1])
    first = router.path_arrays(src, dst)
    held = len(router.templates)
    assert held == 4                    # distinct offsets: three, and a flow inside a node
    again = router.path_arrays(src[::-1].copy(), dst[::-1].copy())
    assert len(router.templates) == held
    _same(again, _fresh(m, src[::-1].copy(), dst[::-1].copy()))
    _same(first, _fresh(m, src, dst))
    # what the caller gets can be written; the cached arrays cannot
    first[2][:] = 0.0
    _same(router.path_arrays(src, dst), _fresh(m, src, dst))


def test_a_full_cache_keeps_what_it_has():
    cache = TemplateCache(5)
    rel, slots, shares = np.zeros((3, 2), np.int64), np.arange(3), np.ones(3) / 3
    cache.put(7, (rel, slots, shares))
    cache.put(8, (rel.copy(), slots.copy(), shares.copy()))      # 6 > 5: not kept
    assert len(cache) == 1 and cache.entries == 3 and cache.get(8) is None
    assert cache.get(7)[1] is slots and not slots.flags.writeable


def test_pickling_keeps_the_bound_not_the_templates():
    m = parse_machine("torus:4x4")
    router = router_for(m, "adaptive")
    router.path_arrays(np.array([0, 1]), np.array([5, 10]))
    assert len(router.templates) == 2
    copy = pickle.loads(pickle.dumps(router))
    assert len(copy.templates) == 0
    assert copy.templates.max_entries == router.templates.max_entries
    _same(copy.path_arrays(np.array([0, 1]), np.array([5, 10])),
          router.path_arrays(np.array([0, 1]), np.array([5, 10])))


@pytest.mark.parametrize("spec", ["torus:4x4x4", "mesh:4x3x2"])
def test_refine_under_adaptive_routing_is_the_same_with_the_cache(spec):
    """A whole refinement under adaptive routing by the Python step (the compiled step keeps
    its own store: kernels/template_store.py) gives the same placement with the cache as
    with none."""
    from rankmap.allocation import whole_machine
    from rankmap.mappers.refine import refine_search
    from rankmap.patterns import parse_pattern
    from rankmap.routing.torus import Adaptive

    m = parse_machine(spec)
    a = whole_machine(m)
    p = parse_pattern("stencil:8x8:box" if spec.startswith("torus") else "stencil:6x4:box",
                      default_ranks=a.n_cores)
    start = np.random.default_rng(3).permutation(a.n_cores)
    cached = router_for(m, "adaptive")
    with_cache = refine_search(start, p, m, a, 5, 3000, cached, compiled=False).cores
    none = Adaptive(m, template_entries=0)
    without = refine_search(start, p, m, a, 5, 3000, none, compiled=False).cores
    assert len(cached.templates) > 0
    assert len(none.templates) == 0
    assert np.array_equal(with_cache, without)
    assert not np.array_equal(with_cache, start)          # the search did move ranks
