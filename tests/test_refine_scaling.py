"""``refine`` on a huge machine: a proposed move costs what the moved ranks' routes cost, not
the machine's size (a 4-rank auto on torus:8x100000 used to take minutes, two link-sized
arrays and a full maximum per move)."""

import tracemalloc

import numpy as np

from rankmap.allocation import parse_allocation
from rankmap.machines import parse_machine
from rankmap.mappers import build_mapping
from rankmap.mappers.refine import _State
from rankmap.patterns import parse_pattern


def _inputs(machine, nodes=None, pattern="stencil:2x2"):
    m = parse_machine(machine)
    a = parse_allocation(nodes, m)
    return m, a, parse_pattern(pattern, default_ranks=a.n_cores)


def test_moves_allocate_nothing_of_machine_size():
    m, a, p = _inputs("torus:8x20000", "0-63")
    start = build_mapping("inorder", p, m, a, 0).core_of_rank
    st = _State(p, m, a, None, start)
    machine_array = 8 * m.n_links                     # one float per link: 1 MiB here
    cpn = a.cores_per_node
    rng = np.random.default_rng(0)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        for _ in range(60):
            r = int(rng.integers(p.n_ranks))
            c = int(rng.integers(a.n_cores))
            if c == st.cores[r]:
                continue
            b = int(st.rank_of_core[c])
            st.try_move({r: c} if b < 0 else {r: c, b: int(st.cores[r])})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < machine_array / 8, peak
    # the incremental state is the state routed from scratch
    again = _State(p, m, a, None, st.cores)
    assert again.max == st.max and np.isclose(again.hb, st.hb)
    for mine, fresh in zip(st.loads, again.loads):
        assert np.allclose(mine, fresh)



def test_link_swap_loads_stay_equal_to_a_fresh_routing():
    """The unit swaps of ``graph`` route all phases' moved flows together (one routing call
    per proposal) and touch only the changed links: after many proposals the loads, their
    maxima and the sum of squares equal those of the placement routed afresh."""
    from rankmap.mappers.swap_refine import UnitPlacement, _Loads, unit_phases
    for machine, pattern, routing in (("xc:groups=2", "minimd", None),
                                      ("torus:4x4x4", "stencil:4x4x4:box", None),
                                      ("xc:groups=3", "fft2d:8x8", "ugal")):
        m, a, p = _inputs(machine, None, pattern)
        unit_of_rank = np.arange(p.n_ranks) // a.cores_per_node
        n_units = int(unit_of_rank.max()) + 1
        phases = unit_phases(p, unit_of_rank, n_units)
        rng = np.random.default_rng(1)
        place = UnitPlacement(rng.permutation(a.n_nodes)[:n_units], a.n_nodes, 1, a)
        st = _Loads(phases, place, m, routing, n_units)
        kept = 0
        for _ in range(200):
            kept += st.try_swap(int(rng.integers(n_units)), int(rng.integers(a.n_nodes)))
        fresh = _Loads(phases, place, m, routing, n_units)
        assert kept > 0, machine
        for cur, ref in zip(st.loads, fresh.loads):
            np.testing.assert_allclose(cur, ref, rtol=0, atol=1e-6 * max(ref.max(), 1.0))
        assert np.isclose(st.max, fresh.max) and np.isclose(st.sq, fresh.sq, rtol=1e-9)
        assert np.allclose(st.top, fresh.top)


def test_refine_moves_keep_loads_equal_to_a_fresh_routing():
    """``refine``'s rank moves route all phases' moved flows in one call (or, under UGAL,
    each changed phase afresh) and keep per-phase busiest links: after many proposals the
    loads, busiest links and hop-bytes equal those of the cores routed afresh."""
    for machine, pattern, routing in (("xc:groups=2", "minimd", None),
                                      ("torus:4x4x4:cores=2", "stencil:8x4x4:box", None),
                                      ("xc:groups=3", "fft2d:8x8", "ugal")):
        m, a, p = _inputs(machine, None, pattern)
        rng = np.random.default_rng(2)
        cores = rng.permutation(a.n_cores)[:p.n_ranks]
        st = _State(p, m, a, routing, cores)
        kept = 0
        for _ in range(150):
            r = int(rng.integers(p.n_ranks))
            c = int(rng.integers(a.n_cores))
            holder = int(st.rank_of_core[c])
            moves = {r: c} if holder < 0 else {r: c, holder: int(st.cores[r])}
            if holder != r:
                kept += st.try_move(moves)
        fresh = _State(p, m, a, routing, st.cores)
        assert kept > 0, machine
        for cur, ref in zip(st.loads, fresh.loads):
            np.testing.assert_allclose(cur, ref, rtol=0, atol=1e-6 * max(ref.max(), 1.0))
        assert np.isclose(st.max, fresh.max) and np.isclose(st.hb, fresh.hb, rtol=1e-9)
        assert np.allclose(st.top, fresh.top)
        assert st.at_max == fresh.at_max, machine       # links at the busiest value


def test_target_gains_equal_both_ranks_side_gains():
    """refine's move targets are ranked by hop-bytes saved, computed from one hop-distance
    call: equal to swap_refine.side_gain of the mover and of the rank it swaps with."""
    from rankmap.mappers.refine import _target_gains
    from rankmap.mappers.swap_refine import side_gain, symmetric_bytes
    for machine, nodes, pattern in (("torus:4x4x4:cores=2", "0-40", "stencil:8x5x2:box"),
                                    ("xc:groups=2", None, "stencil:8x8"),
                                    ("mesh:6x5:cores=3", None, "graph-free")):
        m = parse_machine(machine)
        a = parse_allocation(nodes, m)
        p = parse_pattern("pairs:random:seed=3" if pattern == "graph-free" else pattern,
                          default_ranks=a.n_cores)
        rng = np.random.default_rng(1)
        cores = rng.permutation(a.n_cores)[:p.n_ranks]
        st = _State(p, m, a, None, cores)
        w = symmetric_bytes([(ph.src, ph.dst, ph.bytes) for ph in st.phases], p.n_ranks)

        class View:
            pos_of, node = st.cores, st.node_of
        for _ in range(20):
            mover = int(rng.integers(p.n_ranks))
            targets = rng.choice(a.n_cores, size=7, replace=False).astype(np.int64)
            mv = np.full(len(targets), mover)
            v = st.rank_of_core[targets]
            here = np.full(len(targets), int(st.cores[mover]))
            ref = (side_gain(w, mv, v, here, targets, View, m)
                   + side_gain(w, v, mv, targets, here, View, m))
            np.testing.assert_allclose(_target_gains(mover, targets, st, w), ref, rtol=1e-12)
