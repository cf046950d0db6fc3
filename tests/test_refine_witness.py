"""The Python refinement step refuses, unrouted, a move that surely adds hop-bytes while a link
at the busiest value is on none of its flows' old routes: the same decisions, the same work
counted, the same placement; and the router facts it rests on (route entries, crossings,
shortest hops) hold on every machine."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankmap.mappers.refine as refine
from rankmap.allocation import parse_allocation, whole_machine
from rankmap.kernels.fattree import ktree_hops
from rankmap.machines import parse_machine
from rankmap.mappers import build_mapping
from rankmap.patterns import parse_pattern
from rankmap.routing import Router, router_for, routing_names

CONF = """SwitchName=s0 Nodes=tux[0-3]
SwitchName=s1 Nodes=tux[4-7]
SwitchName=s2 Nodes=tux[8-9]
SwitchName=top Switches=s[0-2]
"""

MACHINES = ["torus:4x6x3", "mesh:5x4", "torus:6x4:wrap=x", "fattree:k=4:levels=3",
            "fattree:k=6:levels=2:taper=2", "fattree:k=3:levels=3",
            "dragonfly:groups=5,rows=2,cols=3,nodes=2,cores=1", "xc:groups=3"]


@pytest.fixture(scope="module")
def tree_spec(tmp_path_factory):
    path = tmp_path_factory.mktemp("tree") / "topology.conf"
    path.write_text(CONF)
    return f"fattree:topology={path}"


def _routers(spec):
    m = parse_machine(spec)
    return m, [router_for(m, name) for name in routing_names(m)]


def _flows(m, seed, n=120):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, m.n_nodes, n)
    d = rng.integers(0, m.n_nodes, n)
    d[:5] = s[:5]                                  # flows inside a node: empty routes
    return s, d


@pytest.mark.parametrize("spec", MACHINES + ["TREE"])
@given(seed=st.integers(0, 2**31 - 1))
@settings(max_examples=15, deadline=None)
def test_router_facts(spec, seed, tree_spec):
    m, routers = _routers(tree_spec if spec == "TREE" else spec)
    s, d = _flows(m, seed)
    for r in routers:
        fixed = r.for_phase(s, d, np.ones(len(s)))
        part = np.zeros(len(s), dtype=np.int64)
        _k, _sums, hops, entries = fixed.link_sums_by_part(s, d, np.ones(len(s)), part, 1)
        # the entries the search counts as work, without summing anything
        np.testing.assert_array_equal(fixed.route_entries(s, d), entries)
        if r.minimal:
            # a shortest route's hops are the machine's hop distance (split shares too)
            np.testing.assert_allclose(hops, m.hop_distance(s, d), rtol=0, atol=1e-9)
        link = int(np.random.default_rng(seed).integers(0, m.n_links))
        np.testing.assert_array_equal(fixed.crosses(s, d, link),
                                      Router._crosses(fixed, s, d, link))   # the generic


def test_which_routers_are_minimal(tree_spec):
    """Every share of a shortest route: tori, meshes and trees; not a dragonfly's routes (a
    minimal route may reach another router's global link), which this catches."""
    for spec in MACHINES + [tree_spec]:
        m, routers = _routers(spec)
        for r in routers:
            assert r.minimal == (m.kind != "dragonfly"), (spec, r.name)
    m, (minimal, *_rest) = _routers("xc:groups=3")
    s, d = _flows(m, 3, 400)
    hops = minimal.loads(s, d, np.ones(len(s))).flow_hops
    assert np.abs(hops - m.hop_distance(s, d)).max() > 0.5


@given(k=st.integers(2, 7), levels=st.integers(1, 4), seed=st.integers(0, 2**31 - 1))
@settings(max_examples=40, deadline=None)
def test_ktree_hops_count_the_levels_below_the_common_switch(k, levels, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, k ** levels, 50)
    b = np.where(rng.random(50) < 0.2, a, rng.integers(0, k ** levels, 50))
    m = sum(((a // k ** (lv - 1)) != (b // k ** (lv - 1))).astype(int)
            for lv in range(1, levels + 1))
    np.testing.assert_array_equal(ktree_hops(a, b, k), 2 * m)


CASES = [
    ("fattree:k=4:levels=3:cores=2", None, "stencil:8x16:box", "random", "ecmp"),
    ("fattree:k=4:levels=3:cores=2", None, "stencil:8x16:box", "random", "dmodk"),
    ("fattree:k=3:levels=3:cores=2", "random:20:seed=4", "fft2d:8x5", "inorder", "ecmp"),
    ("fattree:k=4:levels=3:cores=4", None, "stencil:16x16:periodic", "morton", "ecmp"),
    # dimension order on a torus, in the Python step (compiled=False below)
    ("torus:4x4x4", None, "stencil:4x4x4:box:face=1000:edge=333:corner=7", "random", "dor"),
]


def _run(monkeypatch, witness, case, budget=3000):
    spec, alloc, pat, start, routing = case
    monkeypatch.setattr(refine, "WITNESS_REFUSALS", witness)
    m = parse_machine(spec)
    a = parse_allocation(alloc, m) if alloc else whole_machine(m)
    p = parse_pattern(pat, default_ranks=a.n_cores)
    cores = build_mapping(start, p, m, a, 0).core_of_rank
    refused = []
    original = refine._State._refused_by_witness

    def counted(self, moves, idx):
        out = original(self, moves, idx)
        refused.append(out)
        return out

    monkeypatch.setattr(refine._State, "_refused_by_witness", counted)
    run = refine.refine_search(cores, p, m, a, 5, budget, routing, compiled=False)
    return run, sum(refused), len(refused)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[2]}-{c[4]}")
def test_witness_refusals_change_nothing_but_the_time(monkeypatch, case):
    fast, refused, looked = _run(monkeypatch, True, case)
    slow, _, never = _run(monkeypatch, False, case)
    assert never == 0 and looked > 0
    assert refused > 0.2 * fast.proposals       # the shortcut is taken
    np.testing.assert_array_equal(fast.cores, slow.cores)
    assert (fast.proposals, fast.accepted, fast.windows, fast.stop) == \
        (slow.proposals, slow.accepted, slow.windows, slow.stop)


def test_refused_moves_count_their_routing_work(monkeypatch):
    """The work bound stops the search at the same proposal with and without the
    shortcut: a refused move counts the route entries it would have summed."""
    monkeypatch.setattr(refine, "REFINE_WORK", 20000)
    case = ("fattree:k=4:levels=3:cores=2", None, "stencil:8x16:box", "random", "ecmp")
    fast, refused, _ = _run(monkeypatch, True, case, budget=50000)
    slow, _, _ = _run(monkeypatch, False, case, budget=50000)
    assert fast.stop == slow.stop == "work" and refused > 0
    assert fast.proposals == slow.proposals
    np.testing.assert_array_equal(fast.cores, slow.cores)
