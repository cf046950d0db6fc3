"""A translation-invariant phase on a torus is solved on one cell's flows
(rankmap.timing.symmetry): the same finish times as on every flow, and as the exact
event-by-event simulation."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import rankmap.timing.model as model
from rankmap.machines import parse_machine
from rankmap.routing import router_for
from rankmap.routing.groups import flow_groups
from rankmap.timing import TimeOptions
from rankmap.timing.model import flow_times
from rankmap.timing.symmetry import translation_classes

from test_timing_exact import exact_phase


def invariant_flows(machine, period, n_offsets, seed, mixed=True):
    """Flows of a phase invariant under translations by ``period``: every node sends to
    random offsets with random sizes and multiplicities, chosen per cell node."""
    rng = np.random.default_rng(seed)
    dims = machine.dims
    coords = machine.coords(np.arange(machine.n_nodes))
    cell = tuple(int(p) for p in period)
    choice = {}
    src, dst, nbytes = [], [], []
    for n in range(machine.n_nodes):
        key = tuple(int(c) % p for c, p in zip(coords[n], cell))
        if key not in choice:
            offs = rng.integers(0, dims, size=(n_offsets, len(dims)))
            offs = offs[np.any(offs != 0, axis=1)]
            offs = np.unique(offs, axis=0)
            sizes = (rng.choice([1024.0, 65536.0, 2.0**20], len(offs)) if mixed
                     else np.full(len(offs), 2.0**20))
            reps = rng.integers(1, 3, len(offs))
            choice[key] = (offs, sizes, reps)
        offs, sizes, reps = choice[key]
        for o, b, r in zip(offs, sizes, reps):
            t = ((coords[n] + o) % dims * machine.strides).sum()
            src += [n] * r
            dst += [int(t)] * r
            nbytes += [b] * r
    return np.array(src), np.array(dst), np.array(nbytes)



def _invariant_phase(case, seed, mixed):
    """Machine, router, flows (sources, destinations, bytes) and their groups of a random
    phase invariant under the case's period, four offsets per cell node."""
    spec, routing, period, _opts = case
    machine = parse_machine(spec)
    s, d, b = invariant_flows(machine, period, 4, seed, mixed)
    return machine, router_for(machine, routing), (s, d, b), flow_groups(s, d, b)

CASES = [("torus:4x4", "dor", (1, 1), {}), ("torus:4x4x2:cores=2", "adaptive", (2, 1, 1), {}),
         ("torus:6x8", "dor", (3, 2), {"nic_bw": 3e8}), ("torus:4x3x2", "adaptive", (1, 1, 2), {}),
         ("torus:16", "adaptive", (2,), {"nic_bw": 1e9}), ("torus:6x6", "dor", (2, 3), {})]


@pytest.mark.parametrize("spec,routing,period,opts", CASES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_symmetric_phase_matches_exact_simulation(spec, routing, period, opts, seed):
    machine = parse_machine(spec)
    options = TimeOptions(overhead_s=0.0, **opts)
    s, d, b = invariant_flows(machine, period, 3, seed)
    g = flow_groups(s, d, b)
    classes = translation_classes(machine, router_for(machine, routing), g.src, g.dst,
                                  g.nbytes, g.count.astype(np.float64))
    assert classes is not None                       # the symmetric path is taken
    assert np.all(np.asarray(classes.period) <= np.asarray(period))
    predicted = flow_times(machine, s, d, b, routing, options, flow_hops=np.zeros(len(s)))
    exact = exact_phase(machine, s, d, b, routing, options)
    np.testing.assert_allclose(predicted, exact, rtol=0.01)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(CASES), st.integers(0, 10**6), st.booleans())
def test_symmetric_path_equals_the_path_over_every_flow(case, seed, mixed):
    spec, routing, period, opts = case
    machine = parse_machine(spec)
    options = TimeOptions(**opts)
    s, d, b = invariant_flows(machine, period, 4, seed, mixed)
    fast = flow_times(machine, s, d, b, routing, options)
    real = model.translation_classes
    try:
        model.translation_classes = lambda *a, **k: None
        full = flow_times(machine, s, d, b, routing, options)
    finally:
        model.translation_classes = real
    np.testing.assert_allclose(fast, full, rtol=1e-12)


def test_no_symmetry_found_where_there_is_none():
    rng = np.random.default_rng(0)
    torus = parse_machine("torus:4x4x4")
    s, d, b = invariant_flows(torus, (1, 1, 1), 3, 0)
    # a random relabelling of the nodes breaks the symmetry
    perm = rng.permutation(torus.n_nodes)
    g = flow_groups(perm[s], perm[d], b)
    mult = g.count.astype(np.float64)
    assert translation_classes(torus, router_for(torus, "dor"), g.src, g.dst, g.nbytes,
                               mult) is None
    # meshes, partly wrapped tori and other machines have no such symmetry to use
    for spec, routing in (("mesh:4x4x4", "dor"), ("torus:4x4x4:wrap=xy", "dor"),
                          ("dragonfly:groups=4,rows=1,cols=4,nodes=4", "minimal")):
        m = parse_machine(spec)
        s2, d2 = s % m.n_nodes, d % m.n_nodes
        keep = s2 != d2
        g = flow_groups(s2[keep], d2[keep], b[keep])
        assert translation_classes(m, router_for(m, routing), g.src, g.dst, g.nbytes,
                                   g.count.astype(np.float64)) is None
    # one node sending one more flow breaks it
    g = flow_groups(np.append(s, 0), np.append(d, 5), np.append(b, 7.0))
    assert translation_classes(torus, router_for(torus, "dor"), g.src, g.dst, g.nbytes,
                               g.count.astype(np.float64)) is None


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([c for c in CASES if c[1] == "adaptive"]
                       + [("torus:6x4x4:cores=2", "adaptive", (3, 1, 2), {})]),
       st.integers(0, 10**6), st.booleans())
def test_symmetric_adaptive_loads_equal_the_per_group_routing(case, seed, mixed):
    from rankmap.routing.symmetry import symmetric_loads

    machine, router, _flows, g = _invariant_phase(case, seed, mixed)
    sym = symmetric_loads(router, g.src, g.dst, g.nbytes, g.count)
    assert sym is not None
    full = router.loads(g.src, g.dst, g.nbytes, g.count)
    np.testing.assert_allclose(sym.bytes, full.bytes, rtol=0, atol=1e-12 * full.bytes.max())
    assert np.array_equal(sym.streams, full.streams)
    assert np.array_equal(sym.flow_hops, full.flow_hops)
    # dimension order never looks for the symmetry itself
    assert symmetric_loads(router_for(machine, "dor"), g.src, g.dst, g.nbytes,
                           g.count) is None


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([c for c in CASES if c[1] == "dor"]
                       + [("torus:2x2x8:cores=2", "dor", (1, 2, 2), {}),
                          ("torus:8x8", "dor", (4, 2), {})]),
       st.integers(0, 10**6), st.booleans(), st.sampled_from([1.0, 3.0, 0.5, 1 / 3]))
def test_symmetric_dor_loads_are_the_per_group_routing_bit_for_bit(case, seed, mixed, scale):
    """Under dimension order, the symmetry handed over gives the loads of routing every group
    bit for bit when every group's bytes x count is whole (any size mix, any multiplicity);
    otherwise it is not used (None: the caller routes every group)."""
    from rankmap.routing.symmetry import exact_integer_sums, phase_symmetry, symmetric_loads

    machine, router, _flows, g = _invariant_phase(case, seed, mixed)
    nbytes = g.nbytes * scale + (0.5 if scale == 0.5 else 0.0)
    sym = phase_symmetry(router, g.src, g.dst, nbytes, g.count)
    assert sym is not None and sym.paths is not None
    ld = symmetric_loads(router, g.src, g.dst, nbytes, g.count, sym)
    weight = nbytes * g.count
    whole = bool(np.all(weight == np.floor(weight)))
    assert exact_integer_sums(nbytes, g.count) == whole
    if not whole:
        assert ld is None
        return
    full = router.loads(g.src, g.dst, nbytes, g.count)
    assert np.array_equal(ld.bytes, full.bytes)
    assert np.array_equal(ld.streams, full.streams)
    assert np.array_equal(ld.flow_hops, full.flow_hops)


def test_exact_integer_sums_refuses_what_float_sums_could_round():
    from rankmap.routing.symmetry import exact_integer_sums

    assert exact_integer_sums(np.array([2.0**20, 7.0]), np.array([3, 1]))
    assert not exact_integer_sums(np.array([2.0**20, 7.5]), np.array([3, 1]))
    # whole but past 2**53 in total: partial sums may round
    assert not exact_integer_sums(np.array([2.0**52, 2.0**52]), np.array([1, 1]))
    assert exact_integer_sums(np.array([2.0**51, 2.0**51]), np.array([1, 1]))
    assert not exact_integer_sums(np.array([np.nan]), np.array([1]))
    assert not exact_integer_sums(np.array([np.inf]), np.array([1]))
    assert exact_integer_sums(np.array([], dtype=float), np.array([], dtype=np.int64))


@pytest.mark.parametrize("routing", ["dor", "adaptive"])
@pytest.mark.parametrize("spec,pat,mapping,nic", [
    ("torus:8x8:cores=2", "stencil:16x8:box:periodic", "TXY", None),
    ("torus:8x8:cores=2", "stencil:16x8:box:periodic", "XYT", 1e9),
    # sides of 2 (both directions reach the same node) and of 1 (no links)
    ("torus:2x2x2:cores=2", "stencil:4x2x2:periodic", "TXYZ", None),
    ("torus:4x1x2", "stencil:4x2:box:periodic", "XYZT", 1e9),
    # a neighbour class of 0 bytes, mixed sizes
    ("torus:4x4x4", "stencil:4x4x4:box:periodic:face=3KB,edge=0,corner=7", "XYZT", None)])
def test_evaluator_hands_the_symmetry_to_the_loads_and_the_time_model(routing, spec, pat,
                                                                      mapping, nic,
                                                                      monkeypatch):
    """A rank order of a periodic stencil on a torus: the evaluator finds the symmetry once
    while routing (RoutedPhase.symmetry, for the loads and the time model), under adaptive
    routing and under dimension order with the exact time model; the metrics equal those of
    the computation without it, and under dimension order (whole byte counts) so do the
    loads, bit for bit. With a time model that retires flows in bulk, dimension order leaves
    the search to it, which then does not look (the metrics as handed the symmetry)."""
    import dataclasses

    import rankmap.routing.symmetry as rsym
    from rankmap.allocation import whole_machine
    from rankmap.evaluation import Evaluator
    from rankmap.mappers import build_mapping
    from rankmap.patterns import parse_pattern

    machine = parse_machine(spec)
    allocation = whole_machine(machine)
    pattern = parse_pattern(pat)
    placement = build_mapping(mapping, pattern, machine, allocation)
    ev = Evaluator(machine, allocation, pattern, routing, time_options=TimeOptions(nic_bw=nic))
    routed = ev.route(placement)
    assert all(r.symmetry for r in routed)
    if routing == "dor":
        bulk = Evaluator(machine, allocation, pattern, routing,
                         time_options=TimeOptions(nic_bw=nic, retire_fraction=0.05))
        left = bulk.route(placement)
        assert all(r.symmetry is None for r in left)
        handed = [dataclasses.replace(r, symmetry=s.symmetry) for r, s in zip(left, routed)]
        assert bulk.evaluate_routed(placement, handed).metrics == \
            bulk.evaluate_routed(placement, left).metrics
    fast = ev.evaluate(placement).metrics
    monkeypatch.setattr(rsym, "translation_classes", lambda *a, **k: None)
    monkeypatch.setattr(model, "translation_classes", lambda *a, **k: None)
    plain = ev.route(placement)
    assert not any(r.symmetry for r in plain)
    full = ev.evaluate(placement).metrics
    assert fast.keys() == full.keys()
    for key in fast:
        assert fast[key] == pytest.approx(full[key], rel=1e-12), key
    if routing == "dor":
        for r, q in zip(routed, plain):
            assert np.array_equal(r.loads.bytes, q.loads.bytes)
            assert np.array_equal(r.loads.streams, q.loads.streams)
            assert np.array_equal(r.loads.flow_hops, q.loads.flow_hops)
        assert {k: v for k, v in fast.items() if k != "predicted_time_s"} == \
            {k: v for k, v in full.items() if k != "predicted_time_s"}


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([c for c in CASES if c[1] == "adaptive"]
                       + [("torus:6x4x4:cores=2", "adaptive", (3, 1, 2), {}),
                          ("torus:2x2x4", "adaptive", (1, 1, 2), {})]),
       st.integers(0, 10**6), st.booleans(), st.sampled_from([None, 1e9]))
def test_adaptive_templates_sum_as_the_stored_routes(case, seed, mixed, nic):
    """Under minimal adaptive routing the cell's routes stay templates (no path arrays):
    the loads and the time model's classes summed from them row by row are bit for bit
    those of the stored routes (what phase_symmetry kept before), NIC ports or not."""
    import dataclasses

    from rankmap.routing.symmetry import phase_symmetry, symmetric_loads

    machine, router, (s, d, b), g = _invariant_phase(case, seed, mixed)
    sym = phase_symmetry(router, g.src, g.dst, g.nbytes, g.count)
    assert sym is not None and sym.paths is None and sym.templates is not None
    stored = dataclasses.replace(sym, templates=None, paths=router.path_arrays(
        g.src[sym.rows], g.dst[sym.rows]))
    a = symmetric_loads(router, g.src, g.dst, g.nbytes, g.count, sym)
    z = symmetric_loads(router, g.src, g.dst, g.nbytes, g.count, stored)
    assert np.array_equal(a.bytes, z.bytes) and np.array_equal(a.streams, z.streams)
    options = TimeOptions(overhead_s=0.0, nic_bw=nic)
    t_a = flow_times(machine, s, d, b, router, options, groups=g, symmetry=sym)
    t_z = flow_times(machine, s, d, b, router, options, groups=g, symmetry=stored)
    assert np.array_equal(t_a, t_z)
