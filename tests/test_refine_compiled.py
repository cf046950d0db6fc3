"""The compiled refinement step is the Python step, proposal for proposal.

``refine_search`` judges proposals in one compiled call
(:mod:`rankmap.kernels.refine_grid`) where that gives the same results: dimension-order or
minimal adaptive routing on a torus or mesh, or d-mod-k on a k-ary n-tree, and whole-number
bytes (every hop-bytes sum exact; adaptive link sums added in the Python step's order).
Elsewhere it keeps the Python step.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rankmap.allocation import parse_allocation, whole_machine
from rankmap.machines import parse_machine
from rankmap.mappers.refine import refine_search
from rankmap.patterns import parse_pattern
from rankmap.patterns.base import Pattern, Phase

MACHINES = ["torus:4x4:cores=2", "mesh:5x3:cores=3", "torus:4x3x2", "torus:6x4:wrap=x:cores=2",
            "torus:8", "mesh:3x3x3:cores=2", "fattree:k=4:levels=2:cores=2", "fattree:k=3:levels=3",
            "fattree:k=2:levels=4:cores=2:taper=2"]


def _pattern(n, seed, phases, sizes):
    """A random weighted graph in ``phases`` phases with whole-number (or fractional) sizes."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(phases):
        m = int(rng.integers(n, 4 * n))
        src = rng.integers(0, n, m)
        dst = (src + rng.integers(1, n, m)) % n          # no flow to itself
        nbytes = rng.choice(np.asarray(sizes, dtype=np.float64), m)
        out.append(Phase(f"p{k}", src.astype(np.int64), dst.astype(np.int64), nbytes))
    return Pattern("random", "graph", n, out)


def _symmetric_bytes(pattern):
    """Bytes between ranks in both directions, all phases (CSR, sorted indices)."""
    from scipy.sparse import csr_matrix

    n = pattern.n_ranks
    src = np.concatenate([p.src for p in pattern.phases])
    dst = np.concatenate([p.dst for p in pattern.phases])
    w = np.concatenate([p.bytes for p in pattern.phases])
    wsym = csr_matrix((np.concatenate([w, w]), (np.concatenate([src, dst]),
                                                np.concatenate([dst, src]))), shape=(n, n))
    wsym.sum_duplicates()
    wsym.sort_indices()
    return wsym


def _random_grid_state(spec, pat, seed, spare=0):
    """The compiled refinement's state of ``pat`` on the whole of ``spec`` from a random
    placement (``spare`` cores left free): machine, allocation, pattern, symmetric bytes,
    the generator (drawn from once) and the state."""
    from rankmap.mappers.refine import _GridState, _State

    machine = parse_machine(spec)
    allocation = whole_machine(machine)
    pattern = (parse_pattern(pat, default_ranks=allocation.n_cores - spare) if spare
               else parse_pattern(pat))
    wsym = _symmetric_bytes(pattern)
    rng = np.random.default_rng(seed)
    st = _State(pattern, machine, allocation, None,
                rng.permutation(allocation.n_cores)[:pattern.n_ranks])
    return machine, allocation, pattern, wsym, rng, _GridState(st, pattern, wsym)


def _scattered_problem(spec, pat, seed):
    """Machine, whole allocation, pattern (one rank per core by default), symmetric bytes and
    a random start placement (seeded) of one test problem."""
    machine = parse_machine(spec)
    allocation = whole_machine(machine)
    pattern = parse_pattern(pat, default_ranks=allocation.n_cores)
    wsym = _symmetric_bytes(pattern)
    start = np.random.default_rng(seed).permutation(allocation.n_cores)[:pattern.n_ranks]
    return machine, allocation, pattern, wsym, start


def _random_proposals(seed, n, allocation, wsym, count):
    """``count`` proposals (arguments of ``propose``): a random rank onto a random core."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        a = int(rng.integers(n))
        c = int(rng.integers(allocation.n_cores))
        yield (a, c // allocation.cores_per_node, np.zeros(0, dtype=np.int64), c, wsym)


def _both(pattern, machine, allocation, start, seed, budget, **kw):
    runs = [refine_search(start, pattern, machine, allocation, seed, budget, compiled=c, **kw)
            for c in (False, True)]
    return runs


def _random_search_both_ways(spec, seed, phases, scattered, budget, min_gain, routing=None):
    """A random weighted graph on ``spec`` (scattered allocation or not) refined by the Python
    step and the compiled step: both runs."""
    machine = parse_machine(spec)
    allocation = whole_machine(machine)
    if scattered and allocation.n_nodes > 4:
        allocation = parse_allocation(f"random:{allocation.n_nodes - 2}:seed={seed % 97}",
                                      machine)
    n = allocation.n_cores - (seed % 3)
    pattern = _pattern(n, seed, phases, [1, 3, 1024, 65536, 1 << 20])
    start = np.random.default_rng(seed).permutation(allocation.n_cores)[:n]
    return _both(pattern, machine, allocation, start, seed, budget, routing=routing,
                 min_gain=min_gain, window=97)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(MACHINES), st.integers(0, 10 ** 6), st.integers(1, 3),
       st.booleans(), st.integers(50, 1500), st.sampled_from([0.0, 1e-3, 0.05]))
def test_compiled_step_equals_python_step(spec, seed, phases, scattered, budget, min_gain):
    py, comp = _random_search_both_ways(spec, seed, phases, scattered, budget, min_gain)
    assert np.array_equal(py.cores, comp.cores)
    assert (py.proposals, py.accepted, py.windows, py.stop) == \
        (comp.proposals, comp.accepted, comp.windows, comp.stop)
    assert sorted(comp.cores) == sorted(set(comp.cores))         # one rank per core


GRIDS = ["torus:4x4:cores=2", "mesh:5x3:cores=3", "torus:4x3x2", "torus:6x4:wrap=x:cores=2",
         "torus:8", "mesh:3x3x3:cores=2", "torus:4x4x4", "torus:6x6"]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(GRIDS), st.integers(0, 10 ** 6), st.integers(1, 3), st.booleans(),
       st.integers(50, 1500), st.sampled_from([0.0, 1e-3, 0.05]))
def test_compiled_adaptive_step_equals_python_step(spec, seed, phases, scattered, budget,
                                                   min_gain):
    """Under minimal adaptive routing (shares such as 1/3: link sums round) the compiled
    step adds every link's shares in the Python step's order: the same placement, proposals,
    kept moves, windows and stop."""
    py, comp = _random_search_both_ways(spec, seed, phases, scattered, budget, min_gain,
                                        "adaptive")
    assert np.array_equal(py.cores, comp.cores)
    assert (py.proposals, py.accepted, py.windows, py.stop) == \
        (comp.proposals, comp.accepted, comp.windows, comp.stop)


@pytest.mark.parametrize("spec,pat", [("torus:6x6", "stencil:6x6:box"),
                                      ("torus:4x4x4:cores=2", "stencil:8x4x4:box"),
                                      ("mesh:4x4x2:cores=2", "fft2d:8x4")])
def test_compiled_adaptive_loads_are_the_python_loads_bit_for_bit(spec, pat):
    """Given the same proposals, the compiled state's link loads, busiest values, hop-bytes
    and work equal the Python state's bit for bit after every one, though the loads are not
    whole numbers (split shares round): the sums are added in the same order."""
    from rankmap.kernels.refine_grid import flow_route_entries
    from rankmap.mappers.exact_grid import hop_geometry
    from rankmap.mappers.refine import _GridState, _State

    machine, allocation, pattern, wsym, start = _scattered_problem(spec, pat, 4)
    n = pattern.n_ranks
    py = _State(pattern, machine, allocation, "adaptive", start.copy())
    comp = _GridState(_State(pattern, machine, allocation, "adaptive", start.copy()), pattern,
                      wsym)
    assert len(comp.tpl[0]) > 0                          # the template store is in use
    kept = 0
    for args in _random_proposals(9, n, allocation, wsym, 300):
        got = py.propose(*args)
        assert comp.propose(*args) == got
        kept += max(got, 0)
        assert np.array_equal(py.cores, comp.cores)
        assert np.array_equal(py.loads_2d, comp.loads)
        assert (py.max, py.at_max, py.hb, py.work) == comp.progress() + (comp.work,)
    assert kept > 10
    # every flow's route entries, kept through the kept moves, are those of its route now
    entries = flow_route_entries(comp.cores, comp.cpn, comp.alloc_nodes, comp.f_src, comp.f_dst,
                                 *hop_geometry(machine), comp.tpl[:7])
    assert np.array_equal(comp.tpl[7], entries)
    # the same loads routed afresh, summed in another order: equal but for rounding
    fresh = _State(pattern, machine, allocation, "adaptive", comp.cores.copy()).loads_2d
    assert np.allclose(fresh, comp.loads, rtol=1e-12)
    assert not np.array_equal(fresh, comp.loads)         # so the order was the Python one


@pytest.mark.parametrize("pat,spec,alloc", [
    ("stencil:8x8:box", "torus:4x4:cores=4", None),
    ("stencil:6x6x2", "torus:4x4x4:cores=2", "random:36:seed=5"),
    ("fft2d:8x8", "mesh:4x4:cores=4", None),
    ("lulesh:4x4x4", "torus:4x4x4", None),
    ("stencil:8x8:box", "fattree:k=4:levels=3:cores=2", None),
    ("stencil:4x4x4", "fattree:k=4:levels=3:cores=2", "random:40:seed=3"),
])
def test_compiled_step_on_named_patterns(pat, spec, alloc):
    machine = parse_machine(spec)
    allocation = parse_allocation(alloc, machine) if alloc else whole_machine(machine)
    pattern = parse_pattern(pat)
    start = np.random.default_rng(1).permutation(allocation.n_cores)[:pattern.n_ranks]
    py, comp = _both(pattern, machine, allocation, start, 7, 4000)
    assert py.accepted > 0
    assert np.array_equal(py.cores, comp.cores)
    assert (py.proposals, py.accepted, py.stop) == (comp.proposals, comp.accepted, comp.stop)


@pytest.mark.parametrize("spec,routing,sizes", [
    ("torus:4x4:cores=2", "dor", [1.5, 1024]),               # fractional bytes
    ("torus:4x4:cores=2", "adaptive", [1.5, 1024]),          # fractional bytes
    ("dragonfly:groups=3,rows=1,cols=2,nodes=2", None, [1024]),  # not a torus
    ("fattree:k=4:levels=2:cores=2", "ecmp", [1024]),          # split routes
    ("fattree:k=4:levels=2:cores=2", "dmodk", [1.5, 1024]),    # fractional bytes
])
def test_python_step_where_compiled_would_differ(spec, routing, sizes):
    machine = parse_machine(spec)
    allocation = whole_machine(machine)
    n = allocation.n_cores
    pattern = _pattern(n, 3, 1, sizes)
    start = np.arange(n)
    with pytest.raises(ValueError, match="compiled refinement step"):
        refine_search(start, pattern, machine, allocation, 0, 100, routing, compiled=True)
    auto = refine_search(start, pattern, machine, allocation, 0, 300, routing)
    python = refine_search(start, pattern, machine, allocation, 0, 300, routing, compiled=False)
    assert np.array_equal(auto.cores, python.cores)


def test_one_draw_from_the_options_is_rng_choice():
    """The search draws ``opts[rng.integers(len(opts))]`` as ``rng.choice(opts)`` would."""
    for seed in range(20):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        for n in (1, 2, 3, 6, 7, 26, 1000):
            opts = np.arange(n) * 5 + 1
            assert a.choice(opts) == opts[b.integers(n)]
            assert a.random() == b.random()


@pytest.mark.parametrize("spec,routing", [("dragonfly:groups=3,rows=1,cols=2,nodes=2", None),
                                          ("torus:4x4:cores=2", "adaptive"),
                                          ("fattree:k=4:levels=3:cores=2", "ecmp")])
def test_kept_moves_keep_the_draw_weights_of_a_rebuild(spec, routing):
    """The Python step builds the draw weights once and updates the flows of kept moves:
    after many kept moves they equal, bit for bit, the weights built afresh."""
    from rankmap.mappers import refine as refine_module

    machine = parse_machine(spec)
    allocation = whole_machine(machine)
    n = allocation.n_cores
    pattern = _pattern(n, 5, 2, [1.5, 1024, 3 << 20])
    start = np.random.default_rng(5).permutation(n)
    st = refine_module._State(pattern, machine, allocation, routing, start)
    src = np.concatenate([p.src for p in st.phases])
    dst = np.concatenate([p.dst for p in st.phases])
    w = np.concatenate([p.bytes for p in st.phases])
    st.draw_table(src, dst, w)
    rng = np.random.default_rng(6)
    kept = 0
    for _ in range(400):
        a, c = int(rng.integers(n)), int(rng.integers(n))
        if st.cores[a] == c:
            continue
        b = int(st.rank_of_core[c])
        kept += st.try_move({a: c} if b < 0 else {a: c, b: int(st.cores[a])})
    assert kept > 0
    node = st.node_of(st.cores)
    fresh = machine.hop_distance(node[src], node[dst]).astype(np.float64) * w
    assert np.array_equal(st.weight, fresh)
    total, cdf = st.draw_table(src, dst, w)
    assert total == fresh.sum()


@pytest.mark.parametrize("spec,pat", [("torus:4x4:cores=2", "stencil:8x4:box"),
                                      ("torus:4x4x4", "stencil:4x4x4:periodic"),
                                      ("mesh:4x4:cores=4", "fft2d:8x8")])
def test_links_at_each_phase_top_are_counted_through_kept_moves(spec, pat):
    """The compiled step finds a phase's busiest link from the changed links alone while
    another link stays at it: its count of links at every phase's busiest value stays the
    count over the loads, and the busiest values stay the loads' maxima."""
    from rankmap.kernels.refine_grid import count_at_top

    machine, allocation, pattern, wsym, rng, gs = _random_grid_state(spec, pat, 4)
    n = pattern.n_ranks
    kept = 0
    for _ in range(400):
        a = int(rng.integers(n))
        c = int(rng.integers(allocation.n_cores))
        kept += max(gs.propose(a, c // allocation.cores_per_node,
                               np.zeros(0, dtype=np.int64), c, wsym), 0)
    assert kept > 0
    n_links = machine.n_links
    for i in range(gs.loads.shape[0]):
        assert gs.top[i] == gs.loads[i].max()
        assert gs.n_top[i] == (n_links if gs.top[i] <= 0 else
                               int((gs.loads[i] >= gs.top[i]).sum()))
        assert gs.n_top[i] == count_at_top(i, gs.loads, gs.members, gs.n_members, gs.top,
                                           n_links)


@pytest.mark.parametrize("spec,pat", [("torus:4x4:cores=2", "stencil:8x4:box"),
                                      ("mesh:3x5:cores=2", "stencil:5x6:box"),
                                      ("fattree:k=4:levels=2:cores=2", "fft2d:4x8"),
                                      ("torus:6x4:wrap=x:cores=2", "pairs:random")])
def test_every_ranks_hop_bytes_are_kept_through_kept_moves(spec, pat):
    """The target choice reads every rank's hop-bytes from the state instead of summing its
    partners' hops where it stands: after hundreds of kept moves (swaps and moves to free
    cores) they equal, bit for bit, the sums taken afresh, and equal bytes x hops over the
    partners computed with numpy."""
    from rankmap.kernels.refine_grid import rank_hop_bytes
    from rankmap.mappers.exact_grid import hop_geometry
    from rankmap.mappers.geometry import neighbour_csr

    machine, allocation, pattern, wsym, rng, gs = _random_grid_state(spec, pat, 8, spare=3)
    n = pattern.n_ranks
    kept = 0
    cpn = allocation.cores_per_node
    nb_ptr, nb_pos = neighbour_csr(machine, allocation)
    for _ in range(600):
        a = int(rng.integers(n))
        c = int(rng.integers(allocation.n_cores))
        p = c // cpn
        kept += max(gs.propose(a, p, nb_pos[nb_ptr[p]:nb_ptr[p + 1]], c, wsym), 0)
    assert kept > 20
    w_hb = gs.w[3]
    dims, _strides, wrap = hop_geometry(machine)
    fresh = rank_hop_bytes(gs.cores, cpn, *gs.w[:3], gs.pcoords, dims, wrap)
    assert np.array_equal(w_hb, fresh)
    node = allocation.nodes[gs.cores // cpn]
    coo = wsym.tocoo()
    by_numpy = np.bincount(coo.row, weights=coo.data * machine.hop_distance(
        node[coo.row], node[coo.col]), minlength=n)
    assert np.array_equal(w_hb, by_numpy)


@pytest.mark.parametrize("spec,pat", [("torus:4x4:cores=2", "stencil:8x4:box"),
                                      ("torus:4x4x4", "stencil:4x4x4:periodic"),
                                      ("mesh:4x4:cores=4", "fft2d:8x8"),
                                      ("torus:6x4:wrap=x:cores=2", "pairs:random")])
def test_the_witness_link_only_speeds_refusals_up(spec, pat):
    """A move adding hop-bytes whose moved flows miss a link at the busiest value is refused
    before any walk. Two states given the same proposals, one with a witness link at the
    busiest value and one whose witness carries nothing (so every move is walked until a
    kept move repairs it), take the same decisions and count the same work, and the witness
    stays a link at the busiest value through kept moves."""
    from rankmap.mappers.refine import _GridState, _State

    machine, allocation, pattern, wsym, start = _scattered_problem(spec, pat, 2)
    n = pattern.n_ranks
    fast = _GridState(_State(pattern, machine, allocation, None, start.copy()), pattern, wsym)
    slow = _GridState(_State(pattern, machine, allocation, None, start.copy()), pattern, wsym)
    idle = np.flatnonzero(slow.loads[0] == 0)
    if len(idle):
        slow.wit[:] = [0, idle[0], machine.dense_slot_of_link[idle[0]]]
    kept = 0
    for args in _random_proposals(8, n, allocation, wsym, 600):
        got = fast.propose(*args)
        assert slow.propose(*args) == got
        kept += max(got, 0)
        assert np.array_equal(fast.cores, slow.cores)
        assert np.array_equal(fast.scal, slow.scal)          # work counted alike
        ph, link, slot = fast.wit
        assert fast.loads[ph, link] >= fast.scal[0] * (1 - 1e-9) - 1e-9
        assert slot == machine.dense_slot_of_link[link]
    assert kept > 0


def test_compiled_loop_rebuilds_the_draw_table_when_the_python_loop_does():
    """With many flows per move's work (a 4,096-rank 2-D stencil: 16K flows, a kept move
    looks at about a hundred route entries), the draw table is rebuilt only after enough work
    since the last build, not after every kept move: the compiled loop (every batch and build
    in one call) follows the Python loop's schedule, draw for draw."""
    machine = parse_machine("torus:8x8x8:cores=8")
    allocation = whole_machine(machine)
    pattern = parse_pattern("stencil:64x64")
    start = np.random.default_rng(3).permutation(allocation.n_cores)
    py, comp = _both(pattern, machine, allocation, start, 2, 1000)
    assert py.accepted > 20
    assert np.array_equal(py.cores, comp.cores)
    assert (py.proposals, py.accepted, py.windows, py.stop) == \
        (comp.proposals, comp.accepted, comp.windows, comp.stop)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0.0, 1.0, 3.0, 1024.0, 3 << 20, 7 << 30]), min_size=1,
                max_size=300), st.integers(0, 2 ** 32 - 1))
def test_draws_from_running_sums_are_the_tables_draws(weights, seed):
    """The compiled search draws a flow by a binary search over the running sums, dividing
    only the entries it looks at: the same flow numpy's searchsorted finds in the whole
    table (weights / total, summed, divided by the last sum), zero weights and ties
    included."""
    from rankmap.kernels.refine_grid import cumulative_weights, draw_from_sums, draw_table

    w = np.asarray(weights, dtype=np.float64)
    if not w.sum() > 0:
        w[0] = 1.0
    total = float(w.sum())
    table = (w / total).cumsum()
    table /= table[-1]
    assert np.array_equal(draw_table(w, total), table)
    sums = np.empty_like(w)
    last = cumulative_weights(w, total, sums)
    rs = np.random.default_rng(seed).random(200)
    rs = np.concatenate([rs, table[:5], np.nextafter(table[:5], 0), [0.0]])
    rs = rs[rs < 1.0]
    want = np.searchsorted(table, rs, side="right")
    got = np.array([draw_from_sums(sums, last, r) for r in rs])
    assert np.array_equal(got, want)
