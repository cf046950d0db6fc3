"""Routers: one class per routing; ``loads`` equals ``paths.T @ nbytes`` on every machine, a
phase is routed once and every metric reads that routing."""

import numpy as np
import pytest

from rankmap.allocation import parse_allocation
from rankmap.evaluation import Evaluator, default_metrics
from rankmap.machines import parse_machine
from rankmap.mappers import build_mapping
from rankmap.patterns import parse_pattern
from rankmap.routing import (DOR, ECMP, UGAL, Adaptive, DmodK, DragonflyMinimal, Router,
                             Valiant, router_for, routing_names)

CASES = [("torus:4x3x5", DOR), ("mesh:4x4", Adaptive), ("torus:6x4:wrap=x", Adaptive),
         ("dragonfly:groups=5,rows=2,cols=3,nodes=2,cores=1", DragonflyMinimal),
         ("dragonfly:groups=5,rows=2,cols=3,nodes=2,cores=1", Valiant),
         ("dragonfly:groups=5,rows=2,cols=3,nodes=2,cores=1", UGAL),
         ("fattree:k=4:levels=3", DmodK), ("fattree:k=4:levels=3", ECMP)]


@pytest.mark.parametrize("spec,cls", CASES)
def test_loads_equal_paths_times_bytes(spec, cls):
    m = parse_machine(spec)
    rng = np.random.default_rng(7)
    n = 300
    s = rng.integers(0, m.n_nodes, n)
    d = rng.integers(0, m.n_nodes, n)
    d[:10] = s[:10]  # flows inside a node load nothing
    b = rng.choice([1.0, 1024.0, 5e6], n)
    router = router_for(m, cls.name)
    assert type(router) is cls and isinstance(router, Router)
    fixed = router.for_phase(s, d, b)
    loads = fixed.loads(s, d, b)
    P = fixed.paths(s, d, b)
    assert P.shape == (n, m.n_links)
    np.testing.assert_allclose(P.T @ b, loads.bytes, rtol=1e-12, atol=1e-6)
    np.testing.assert_array_equal(np.asarray((P > 0).sum(axis=0)).ravel(), loads.streams)
    assert np.asarray(P[:10].sum(axis=1)).ravel().tolist() == [0.0] * 10
    # a subset of the phase's flows gets the same routes (UGAL's choice is fixed per phase)
    sub = np.arange(0, n, 3)
    np.testing.assert_allclose(fixed.paths(s[sub], d[sub]).toarray(), P[sub].toarray())


def test_slurm_tree_routers_agree(tmp_path):
    conf = tmp_path / "topology.conf"
    conf.write_text("SwitchName=s0 Nodes=tux[0-3]\nSwitchName=s1 Nodes=tux[4-7]\n"
                    "SwitchName=top Switches=s[0-1]\n")
    m = parse_machine(f"fattree:topology={conf}")
    s, d, b = np.array([0, 1, 5, 7]), np.array([5, 2, 0, 7]), np.array([1.0, 2.0, 3.0, 4.0])
    for name in routing_names(m):
        r = router_for(m, name)
        np.testing.assert_allclose(r.paths(s, d).T @ b, r.loads(s, d, b).bytes)


def test_each_phase_is_routed_once(monkeypatch):
    m = parse_machine("dragonfly:groups=4,rows=2,cols=2,nodes=2,cores=2")
    a = parse_allocation(None, m)
    p = parse_pattern("minimd", default_ranks=a.n_cores)
    calls = []
    orig = UGAL.for_phase

    def counting(self, *args):
        calls.append(1)
        return orig(self, *args)

    monkeypatch.setattr(UGAL, "for_phase", counting)
    ev = Evaluator(m, a, p, "ugal", metrics=default_metrics(m, p))
    e = ev.evaluate(build_mapping("inorder", p, m, a))
    assert len(calls) == len(p.phases)
    assert all("predicted_time_s" in ph.metrics and "avg_global_hops" in ph.metrics
               for ph in e.phases)


def test_router_of_another_machine_is_refused():
    from rankmap.errors import RankmapError
    a, b = parse_machine("torus:4x4"), parse_machine("torus:4x4")
    with pytest.raises(RankmapError):
        router_for(b, router_for(a, "dor"))


@pytest.mark.parametrize("spec,routing", [("dragonfly:groups=3,rows=2,cols=2,nodes=2,cores=2",
                                           "valiant"), ("fattree:k=4:levels=2", "dmodk"),
                                          ("torus:4x4x4", "dor"), ("torus:4x4", "adaptive")])
def test_every_public_route_query_checks_its_node_ids(spec, routing):
    """paths, path_arrays and crosses took any id: a dragonfly segfaulted on 10^6, a fat
    tree died of a floating-point exception on -1 and named links past its 64, a torus read
    memory outside its tables. Now each is the one error loads gives."""
    import numpy as np

    from rankmap.errors import RankmapError
    from rankmap.machines import parse_machine
    from rankmap.routing import router_for
    m = parse_machine(spec)
    r = router_for(m, routing)
    for src in ([0, m.n_nodes], [0, -1], [0, 10 ** 6]):
        for call in (lambda: r.paths(np.array(src), np.array([1, 2])),
                     lambda: r.path_arrays(np.array(src), np.array([1, 2])),
                     lambda: r.crosses(np.array(src), np.array([1, 2]), 0)):
            with pytest.raises(RankmapError, match="outside|node"):
                call()
    with pytest.raises(RankmapError, match="differ in length"):
        r.paths(np.array([0, 1]), np.array([1]))
    with pytest.raises(RankmapError, match="is not one of the machine's"):
        r.crosses(np.array([0]), np.array([1]), m.n_links)
    ok = r.crosses(np.array([0]), np.array([1]), 0)
    assert ok.shape == (1,)
    with pytest.raises(RankmapError, match="outside|node"):       # a fat tree's FPE too
        r.route_entries(np.array([0]), np.array([-1]))
    with pytest.raises(RankmapError, match="outside|node"):
        r.link_sums_by_part(np.array([0]), np.array([10 ** 6]), np.ones(1),
                            np.zeros(1, dtype=np.int64), 1)
    for link in (-1, m.n_links, 10 ** 9):
        with pytest.raises(RankmapError, match="is not one of the machine's"):
            r.ends_through(link)
