"""The Python refinement step (ECMP, and adaptive routing or dimension order with
``compiled=False``) picks a move's target with the compiled hop-bytes gains where every sum is
exact: the same target as its numpy gains, so the same proposals, kept moves, stop and
placement; elsewhere (fractional bytes, a machine without grid or tree geometry) it keeps the
numpy gains."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankmap.mappers.refine as refine
from rankmap.allocation import parse_allocation, whole_machine
from rankmap.machines import parse_machine
from rankmap.mappers import build_mapping
from rankmap.patterns import parse_pattern

#: (machine, allocation or None, pattern, routing, compiled)
CASES = [
    ("torus:4x4x4", None, "stencil:8x8:box", "adaptive", False),
    ("torus:4x4x2:cores=2", "random:12:seed=2", "lulesh:4x3x2", "adaptive", False),
    ("mesh:4x3x2:cores=4", None, "fft2d:8x12", "adaptive", False),
    ("fattree:k=4:levels=3:cores=2", None, "stencil:8x8:box", "ecmp", None),
    ("fattree:k=4:levels=2", None, "pairs:random", "ecmp", None),
    ("torus:6x4:wrap=x:cores=2", None, "stencil:6x8:box", "dor", False),
    ("fattree:k=4:levels=3", None, "stencil:4x4x2", "dmodk", False),
]


def _problem(spec, alloc, pat):
    m = parse_machine(spec)
    a = parse_allocation(alloc, m) if alloc else whole_machine(m)
    p = parse_pattern(pat, default_ranks=a.n_cores)
    return m, a, p


def _search(flag, m, a, p, start, seed, routing, compiled, budget=1000):
    """The search with the compiled targets allowed (``flag``) or not, and whether its state
    took them."""
    used = []
    real = refine._State.use_compiled_targets

    def spy(self, wsym):
        used.append(real(self, wsym))
        return used[-1]

    saved = refine.COMPILED_TARGETS
    refine.COMPILED_TARGETS = flag
    refine._State.use_compiled_targets = spy
    try:
        run = refine.refine_search(start, p, m, a, seed, budget, routing, compiled=compiled)
    finally:
        refine.COMPILED_TARGETS = saved
        refine._State.use_compiled_targets = real
    return run, used


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[3]}" for c in CASES])
@given(seed=st.integers(0, 2**31 - 1), start_seed=st.integers(0, 2**31 - 1))
@settings(max_examples=4, deadline=None)
def test_compiled_targets_change_nothing_but_the_time(case, seed, start_seed):
    spec, alloc, pat, routing, compiled = case
    m, a, p = _problem(spec, alloc, pat)
    start = np.random.default_rng(start_seed).permutation(a.n_cores)[:p.n_ranks]
    fast, used = _search(True, m, a, p, start, seed, routing, compiled)
    slow, unused = _search(False, m, a, p, start, seed, routing, compiled)
    assert used == [True] and unused == [False]
    assert np.array_equal(fast.cores, slow.cores)
    assert (fast.proposals, fast.accepted, fast.windows, fast.stop) == \
        (slow.proposals, slow.accepted, slow.windows, slow.stop)


def test_the_kept_hop_bytes_follow_the_moves(monkeypatch):
    """After a long search with many kept moves, the hop-bytes the compiled targets kept up
    to date equal every rank's hop-bytes summed afresh."""
    from rankmap.kernels.refine_grid import rank_hop_bytes

    m, a, p = _problem("torus:4x4x4", None, "stencil:8x8:box")
    start = build_mapping("random", p, m, a).core_of_rank
    seen = {}
    real_propose = refine._State.propose

    def propose(self, *args):
        seen["state"] = self
        return real_propose(self, *args)

    monkeypatch.setattr(refine._State, "propose", propose)
    run = refine.refine_search(start, p, m, a, 1, 3000, "adaptive", compiled=False)
    st_ = seen["state"]
    t = st_.targets
    assert run.accepted > 50
    assert np.array_equal(t.w_hb, rank_hop_bytes(st_.cores, t.cpn, *t.w, t.pcoords, t.dims,
                                                 t.wrap))


@pytest.mark.parametrize("spec, pat, routing", [
    # odd sizes near 2**50: a phase's hop-bytes pass 2**53, where sums may round
    ("torus:4x4", "stencil:4x4:box:bytes=1125899906842623", "adaptive"),
    ("dragonfly:groups=3,rows=1,cols=2,nodes=2,cores=1", "stencil:3x4", "minimal"),
])
def test_the_numpy_gains_stay_where_sums_may_round_or_no_geometry(spec, pat, routing):
    m, a, p = _problem(spec, None, pat)
    start = build_mapping("random", p, m, a).core_of_rank
    _run, used = _search(True, m, a, p, start, 0, routing, None, budget=200)
    assert used == [False]
