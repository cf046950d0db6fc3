"""Fat trees: k-ary n-tree routes (dmodk, ecmp) checked as vertex paths, conservation, taper,
Slurm topology.conf trees, CLI."""

import json

import numpy as np
import pytest

from rankmap.allocation import parse_allocation
from rankmap.cli import main
from rankmap.errors import RankmapError
from rankmap.machines import parse_machine
from rankmap.routing import router_for

CONF = """# two leaf switches under one top switch
SwitchName=s0 Nodes=tux[0-3] LinkSpeed=100
SwitchName=s1 Nodes=tux[4-7]
SwitchName=top Switches=s[0-1]
"""


def vertex_path(m, loads):
    """Loaded links as {(src vertex, dst vertex): bytes}."""
    c = m.link_columns()
    return {(int(c["src"][i]), int(c["dst"][i])): float(loads.bytes[i])
            for i in np.nonzero(loads.bytes)[0]}


def test_dmodk_route_hand_computed():
    # k=2, 3 levels: hosts 0..7, switches: level l index w -> vertex 8 + (l-1)*4 + w.
    m = parse_machine("fattree:k=2:levels=3")
    loads = router_for(m, "dmodk").loads(np.array([0]), np.array([7]), np.array([1.0]))
    # host 0 -> leaf (1,0) -> (2, rep = digit0(7) = 1) = (2,1) -> top (3, rep = 7 mod 4 = 3)
    # -> (2, prefix 1, rep 1) = (2,3) -> leaf (1,3) -> host 7
    assert vertex_path(m, loads) == {(0, 8): 1.0, (8, 13): 1.0, (13, 19): 1.0,
                                     (19, 15): 1.0, (15, 11): 1.0, (11, 7): 1.0}
    assert loads.flow_hops[0] == 6 and m.hop_distance(np.array([0]), np.array([7]))[0] == 6
    # same leaf switch: 2 hops
    loads = router_for(m, "dmodk").loads(np.array([2]), np.array([3]), np.array([1.0]))
    assert vertex_path(m, loads) == {(2, 9): 1.0, (9, 3): 1.0}


def test_ecmp_splits_over_every_top_switch():
    m = parse_machine("fattree:k=2:levels=3")
    loads = router_for(m, "ecmp").loads(np.array([0]), np.array([7]), np.array([4.0]))
    paths = vertex_path(m, loads)
    into_top = {dst: b for (src, dst), b in paths.items() if dst >= 16}
    assert into_top == {16: 1.0, 17: 1.0, 18: 1.0, 19: 1.0}
    assert paths[(8, 12)] == 2.0 and paths[(8, 13)] == 2.0
    assert paths[(0, 8)] == 4.0 and paths[(11, 7)] == 4.0
    assert loads.flow_hops[0] == pytest.approx(6.0)


@pytest.mark.parametrize("routing", ["dmodk", "ecmp"])
def test_conservation_and_paths_agree(routing):
    m = parse_machine("fattree:k=3:levels=3:cores=2")
    rng = np.random.default_rng(3)
    src, dst = rng.integers(0, 27, 400), rng.integers(0, 27, 400)
    b = rng.random(400)
    loads = router_for(m, routing).loads(src, dst, b)
    np.testing.assert_allclose(loads.flow_hops, m.hop_distance(src, dst))
    assert loads.bytes.sum() == pytest.approx(float(b @ loads.flow_hops))
    cls = m.link_columns()["class"]
    off = src != dst
    assert loads.bytes[cls == "host-up"].sum() == pytest.approx(b[off].sum())
    P = router_for(m, routing).paths(src, dst)
    np.testing.assert_allclose(P.T @ b, loads.bytes)
    assert ((P != 0).sum(axis=0).A1 == loads.streams).all()


def test_dmodk_spreads_destinations_over_top_switches():
    """D-mod-k: all hosts of one leaf sending to the k hosts of a far leaf use k different
    top switches, so no upward switch link carries two flows."""
    m = parse_machine("fattree:k=4:levels=2")
    src = np.arange(4)
    dst = np.arange(12, 16)
    loads = router_for(m, "dmodk").loads(src, dst, np.ones(4))
    assert loads.streams.max() == 1


def test_taper_and_describe():
    m = parse_machine("fattree:k=4:levels=3:taper=2:bw=10GB/s")
    cls = m.link_columns()["class"]
    assert set(m.link_bandwidth[np.isin(cls, ["up", "down"])]) == {5e9}
    assert set(m.link_bandwidth[cls == "host-up"]) == {10e9}
    assert m.describe()["taper"] == 2.0 and m.n_nodes == 64


@pytest.mark.parametrize("bad,msg", [("fattree:k=1:levels=2", "k '1'"),
                                     ("fattree:k=4", "give k= and levels="),
                                     ("fattree:k=4:levels=2:taper=0.5", "taper"),
                                     ("fattree:k=4:levels=2:taper=x", "taper 'x'"),
                                     ("fattree:topology=/nonexistent.conf", "not found")])
def test_bad_specs(bad, msg):
    with pytest.raises(RankmapError, match=msg):
        parse_machine(bad)


def test_slurm_topology_tree(tmp_path):
    conf = tmp_path / "topology.conf"
    conf.write_text(CONF)
    m = parse_machine(f"fattree:topology={conf}:cores=4")
    assert m.n_nodes == 8 and m.node_name(5) == "tux5"
    assert m.hop_distance(np.array([0, 0, 0]), np.array([0, 3, 4])).tolist() == [0, 2, 4]
    loads = router_for(m, "ecmp").loads(np.array([1]), np.array([6]), np.array([2.0]))
    c = m.link_columns()
    used = {(str(c["src_name"][i]), str(c["dst_name"][i])) for i in np.nonzero(loads.bytes)[0]}
    assert used == {("tux1", "s0"), ("s0", "top"), ("top", "s1"), ("s1", "tux6")}
    alloc = parse_allocation("tux[6-7,0]", m)
    assert alloc.nodes.tolist() == [6, 7, 0] and alloc.names == ["tux6", "tux7", "tux0"]


@pytest.mark.parametrize("text,msg", [
    ("SwitchName=a Nodes=n[0-1]\nSwitchName=b Nodes=n[2-3]\n", "several top-level switches"),
    ("SwitchName=a Nodes=n[0-1]\nSwitchName=b Nodes=n[1-3]\nSwitchName=c Switches=a,b\n",
     "under two switches"),
    ("SwitchName=a Nodes=n[0-1]\nSwitchName=c Switches=a,zz\n", "unknown switch 'zz'"),
    ("Nodes=n[0-1]\n", "expected SwitchName"),
    ("SwitchName=a Nodes=n[0-1\n", "bad host list"),
])
def test_bad_topology_conf(tmp_path, text, msg):
    conf = tmp_path / "t.conf"
    conf.write_text(text)
    with pytest.raises(RankmapError, match=msg):
        parse_machine(f"fattree:topology={conf}")


def test_compare_cli_on_fat_tree(capsys):
    assert main(["compare", "--machine", "fattree:k=4:levels=2:cores=2", "--pattern",
                 "fft2d:4x8", "--routing", "ecmp", "--mappings", "inorder,random",
                 "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["routing"] == "ecmp" and doc["machine"]["kind"] == "fattree"
    assert {c["mapping"] for c in doc["candidates"]} == {"inorder", "random"}


@pytest.mark.parametrize("mapper", ["inorder", "random", "rcb", "greedy", "graph"])
def test_mappers_work_on_a_fat_tree(mapper):
    from rankmap.selection import compare
    from rankmap.patterns import parse_pattern

    m = parse_machine("fattree:k=4:levels=2:cores=2")
    alloc = parse_allocation("random:8:seed=1", m)
    pat = parse_pattern("stencil:dims=2", default_ranks=alloc.n_cores)
    comp = compare(m, alloc, pat, [mapper])
    assert comp.best.metrics["flows"] == pat.phases[0].n_flows
    assert comp.best.metrics["avg_hops"] <= 4.0


def test_a_fat_tree_over_its_fixed_host_limit_says_the_variable_does_not_raise_it(monkeypatch):
    monkeypatch.setenv("RANKMAP_MAX_NODES", "20000000")
    with pytest.raises(RankmapError, match="at most 4194304, a fixed limit.*does not raise"):
        parse_machine("fattree:k=2:levels=23")
    monkeypatch.delenv("RANKMAP_MAX_NODES")
    with pytest.raises(RankmapError, match="a fixed limit"):   # said before the nodes cap
        parse_machine("fattree:k=2:levels=23")


@pytest.mark.parametrize("text, key", [
    ("SwitchName=s0 Nodes=a,b Nodes=c\n", "Nodes"),
    ("SwitchName=s0 Nodes=a,b\nSwitchName=s1 Nodes=c,d\nSwitchName=top Switches=s0 Switches=s1\n",
     "Switches"),
    ("SwitchName=s0 SwitchName=s1 Nodes=a,b\n", "SwitchName"),
])
def test_topology_conf_refuses_a_key_twice_on_a_line(tmp_path, text, key):
    """The second Nodes= used to replace the first: hosts a and b vanished without a word."""
    f = tmp_path / "topology.conf"
    f.write_text(text)
    line = text.count("\n")
    with pytest.raises(RankmapError, match=rf"line {line}: {key}= given twice on one line"):
        parse_machine(f"fattree:topology={f}")


def test_fattree_shape_and_topology_file_are_one_or_the_other(tmp_path):
    f = tmp_path / "topology.conf"
    f.write_text("SwitchName=s0 Nodes=a,b\n")
    assert parse_machine(f"fattree:topology={f}").n_nodes == 2
    with pytest.raises(RankmapError, match="k= describes a k-ary tree, topology= reads"):
        parse_machine(f"fattree:k=4:levels=2:topology={f}")
