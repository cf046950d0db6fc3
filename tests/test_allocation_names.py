"""Allocations from host lists, Cray names, topology CSVs, random:/contiguous:, and
``rankmap nodes``."""

import json

import numpy as np
import pytest
from hypothesis import given, strategies as st

from rankmap.allocation import parse_allocation
from rankmap.allocation_names import cname_to_coords, expand_host_list
from rankmap.cli import main
from rankmap.errors import RankmapError
from rankmap.machines import parse_machine

XC = parse_machine("xc:groups=26")
TINY = "dragonfly:groups=4,rows=2,cols=3,nodes=2,cores=4"


def test_cname_formula_hand_checked():
    # cabinet column 3, row 1 with 12 cabinets per row: group 1 + 1*6 = 7;
    # odd cabinet: router row = chassis 2 + 3 = 5; column = slot 9; node 3
    assert cname_to_coords("c3-1c2s9n3", 12) == (7, 5, 9, 3)
    assert cname_to_coords("c0-0c0s0n0", 12) == (0, 0, 0, 0)
    assert cname_to_coords("c3-1c2s9n3", 8) == (5, 5, 9, 3)  # 4 groups per cabinet row
    assert cname_to_coords("nid00012", 12) is None


@given(st.integers(0, XC.n_nodes - 1))
def test_cname_round_trip(node):
    name = XC.node_name(node)
    a = parse_allocation(name, XC)
    assert a.nodes.tolist() == [node] and a.names == [name]


@pytest.mark.parametrize("bad,msg", [("c0-0c3s0n0", "chassis is 0-2"),
                                     ("c0-0c0s16n0", "slot 0-15"),
                                     ("c0-0c0s0n4", "node 0-3"),
                                     ("c12-0c0s0n0", "cabinet_cols=12"),
                                     ("c0-5c0s0n0", "outside the dragonfly")])
def test_bad_cnames(bad, msg):
    with pytest.raises(RankmapError, match=msg):
        parse_allocation(bad, XC)


def test_cnames_need_an_xc_machine():
    with pytest.raises(RankmapError, match="needs an xc machine"):
        parse_allocation("c0-0c0s0n0", parse_machine(TINY))


def test_host_lists():
    assert expand_host_list("nid[00001-00003,00200]") == ["nid00001", "nid00002", "nid00003",
                                                          "nid00200"]
    a = parse_allocation("nid[00001-00128,00200]", XC)
    assert a.n_nodes == 129 and a.nodes[0] == 1 and a.nodes[-1] == 200
    a = parse_allocation("c0-0c0s[0-1]n[0-3]", XC)
    assert a.nodes.tolist() == [0, 1, 2, 3, 4, 5, 6, 7]
    # lists separated by whitespace (e.g. scontrol show hostnames output)
    a = parse_allocation("nid00005\nnid00002 c0-0c0s0n0", XC)
    assert a.nodes.tolist() == [5, 2, 0]


def test_missing_node_file_is_reported_as_missing():
    with pytest.raises(RankmapError, match="node file 'nodes.txt' not found"):
        parse_allocation("nodes.txt", XC)


@pytest.mark.parametrize("blank", ["", " ", "\n"])
def test_blank_nodes_are_an_error_not_the_whole_machine(blank, capsys):
    """--nodes "$(cat nodes.txt)" of an empty file: one line, never every node."""
    machine = parse_machine("torus:4x4")
    with pytest.raises(RankmapError, match="lists no nodes"):
        parse_allocation(blank, machine)
    assert parse_allocation(None, machine).n_nodes == 16
    assert main(["compare", "-m", "torus:4x4", "-p", "stencil:2x2", "--nodes", blank,
                 "--mappings", "TXY"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("lists no nodes (leave --nodes out for the whole machine)")
    assert len(err.splitlines()) == 1


def test_host_list_file(tmp_path):
    f = tmp_path / "nodes.txt"
    f.write_text("# my job\nnid[00010-00011]\nnid00003\n")
    assert parse_allocation(str(f), XC).nodes.tolist() == [10, 11, 3]
    ids = tmp_path / "ids.txt"
    ids.write_text("4\n5-6\n")
    assert parse_allocation(str(ids), XC).nodes.tolist() == [4, 5, 6]


@pytest.mark.parametrize("bad,msg", [("nid[1-3", "bad host list"),
                                     ("foo[1-9]", "unknown node names in foo\\[1-9\\]: foo1, "
                                      "foo2, foo3, foo4, foo5 and 4 more"),
                                     ("nid99999", "outside the machine"),
                                     ("nid[1-2],nid1", "listed twice")])
def test_bad_host_lists(bad, msg):
    with pytest.raises(RankmapError, match=msg):
        parse_allocation(bad, XC)


def test_random_and_contiguous():
    m = parse_machine(TINY)
    a = parse_allocation("random:10:seed=4", m)
    assert a.n_nodes == 10 and len(set(a.nodes.tolist())) == 10
    assert (np.diff(a.nodes) > 0).all()
    assert parse_allocation("random:10:seed=4", m).nodes.tolist() == a.nodes.tolist()
    assert parse_allocation("random:10:seed=5", m).nodes.tolist() != a.nodes.tolist()
    assert parse_allocation("contiguous:3:start=5", m).nodes.tolist() == [5, 6, 7]
    for bad, msg in [("random:49", "machine has 48"), ("random:3:sed=1", "unknown field"),
                     ("contiguous:5:start=45", "past the last node"),
                     ("random:x", "not an integer")]:
        with pytest.raises(RankmapError, match=msg):
            parse_allocation(bad, m)


def test_topology_csv(tmp_path):
    m = parse_machine(TINY)
    f = tmp_path / "site.csv"
    f.write_text("name,group,row,col,node\nhostA,1,0,2,1\nhostB,0,0,0,0\nhostC,3,1,2,1\n")
    a = parse_allocation(str(f), m)
    assert a.nodes.tolist() == [m.node_ids([1, 0, 2, 1]), 0, 47] and a.names[0] == "hostA"
    a = parse_allocation(f"{f}:hostC,hostA", m)
    assert a.nodes.tolist() == [47, m.node_ids([1, 0, 2, 1])] and a.names == ["hostC", "hostA"]
    with pytest.raises(RankmapError, match="names not in topology file .*: hostZ"):
        parse_allocation(f"{f}:hostZ", m)
    torus = parse_machine("torus:4x4x4")
    g = tmp_path / "t.csv"
    g.write_text("name,x,y,z\nn1,1,2,3\nn2,0,0,1\n")
    assert parse_allocation(str(g), torus).nodes.tolist() == [1 + 4 * 2 + 16 * 3, 16]
    with pytest.raises(RankmapError, match="expected name,group,row,col,node"):
        parse_allocation(str(g), m)
    h = tmp_path / "bad.csv"
    h.write_text("name,group,row,col,node\nq,9,0,0,0\n")
    with pytest.raises(RankmapError, match="outside the dragonfly"):
        parse_allocation(str(h), m)
    with pytest.raises(RankmapError, match="not found"):
        parse_allocation(str(tmp_path / "missing.csv"), m)


def test_topology_csv_refuses_a_column_it_would_not_read(tmp_path):
    """name,x,y,z on a 2-D torus: z (which tells hA from hB) is refused, not dropped; so is a
    row with more fields than the header."""
    torus = parse_machine("torus:4x4")
    f = tmp_path / "site.csv"
    f.write_text("name,x,y,z\nhA,1,0,3\nhB,1,0,2\n")
    with pytest.raises(RankmapError, match="column 'z' is not read: a torus names its nodes by "
                                           "name,x,y"):
        parse_allocation(str(f), torus)
    f.write_text("name,x,y\nhA,1,0,3\n")
    with pytest.raises(RankmapError, match="line 2: expected 3 fields, got 4"):
        parse_allocation(str(f), torus)
    f.write_text("name,x,y\nhA,1,0\nhB,2,0\n")
    assert parse_allocation(str(f), torus).nodes.tolist() == [1, 2]


def test_nodes_command(capsys, tmp_path):
    assert main(["nodes", "--machine", "xc:groups=26", "--nodes", "c0-0c0s[0-1]n0,nid00384",
                 "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == [{"name": "c0-0c0s0n0", "id": 0, "coords": [0, 0, 0, 0]},
                   {"name": "c0-0c0s1n0", "id": 4, "coords": [0, 0, 1, 0]},
                   {"name": "nid00384", "id": 384, "coords": [1, 0, 0, 0]}]
    assert main(["nodes", "--machine", TINY, "--nodes", "random:3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["name", "id", "coords"] and len(out) == 4
    assert main(["nodes", "--machine", "xc:groups=2", "--nodes", "bogus[1-2]"]) == 2
    assert "unknown node names in bogus[1-2]: bogus1, bogus2" in capsys.readouterr().err


def test_names_reach_the_allocation_for_launchers():
    a = parse_allocation("c0-0c0s[0-1]n0", XC)
    assert a.host_names(XC) == ["c0-0c0s0n0", "c0-0c0s1n0"]


def test_threads_turn_cores_into_ranks(capsys):
    m = parse_machine(TINY)
    a = parse_allocation("random:4", m).with_threads(2)
    assert a.cores_per_node == 2 and a.n_cores == 8
    with pytest.raises(RankmapError, match="bad --threads 3"):
        parse_allocation(None, m).with_threads(3)
    assert main(["compare", "--machine", TINY, "--nodes", "random:4", "--pattern", "minimd",
                 "--threads", "2", "--mappings", "inorder", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["pattern"]["ranks"] == 8 and doc["allocation"]["threads_per_rank"] == 2
    assert main(["compare", "--machine", TINY, "--pattern", "minimd", "--threads", "3"]) == 2
    assert "bad --threads 3" in capsys.readouterr().err


@given(st.lists(st.integers(0, XC.n_nodes - 1), min_size=1, max_size=40, unique=True))
def test_compressed_host_lists_round_trip(ids):
    import hostlist

    text = hostlist.collect_hostlist([f"nid{i:05d}" for i in ids])
    a = parse_allocation(text, XC)
    assert sorted(a.nodes.tolist()) == sorted(ids)
    assert all(n == f"nid{i:05d}" for n, i in zip(a.names, a.nodes.tolist()))


@pytest.mark.parametrize("text", ["٣", "１", "0-٣", "nid٠٠١"])
def test_node_ids_are_ascii_digits(text):
    """int() reads the digits of every script; --nodes takes ids in ASCII digits only."""
    with pytest.raises(RankmapError):
        parse_allocation(text, parse_machine("torus:4"))


def test_topology_conf_nid_names_are_looked_up_by_name(tmp_path):
    """A Slurm topology.conf whose hosts are called nidNNNNN: nid001002 is the host of that
    name (the file's order gives ids), not node 1002."""
    from rankmap.allocation import parse_allocation
    f = tmp_path / "topo.conf"
    f.write_text("SwitchName=leaf1 Nodes=nid[001000-001003]\nSwitchName=leaf2 "
                 "Nodes=nid[001004-001007]\nSwitchName=leaf0 Nodes=nid[000000-000003]\n"
                 "SwitchName=top Switches=leaf[0-2]\n")
    m = parse_machine(f"fattree:topology={f}")
    a = parse_allocation("nid[001002-001005]", m)
    assert [m.node_name(i) for i in a.nodes] == [f"nid00100{k}" for k in range(2, 6)]
    b = parse_allocation("nid000000,nid000003", m)
    assert [m.node_name(i) for i in b.nodes] == ["nid000000", "nid000003"]
    # whatever the file's first host is called: nid000001 is the host of that name (node 2
    # here), never node id 1 (gpu2's place)
    f = tmp_path / "mixed.conf"
    f.write_text("SwitchName=top Switches=leaf[0-2]\nSwitchName=leaf0 Nodes=gpu[1-2]\n"
                 "SwitchName=leaf1 Nodes=nid[000001-000004]\n"
                 "SwitchName=leaf2 Nodes=nid[000005-000008]\n")
    m = parse_machine(f"fattree:topology={f}")
    assert parse_allocation("nid[000001-000004]", m).nodes.tolist() == [2, 3, 4, 5]
    assert parse_allocation("gpu2,nid000008.x.org", m).nodes.tolist() == [1, 9]
    with pytest.raises(RankmapError, match="unknown node names.*nid1"):
        parse_allocation("nid1", m)        # no host of that name in the file


def test_fully_qualified_names_are_their_short_names(tmp_path):
    """cn001.cluster.local is the machine's cn001 (hostname -f, some schedulers), unless the
    machine lists the full name itself; an unknown full name is named as given."""
    from rankmap.allocation import parse_allocation
    f = tmp_path / "topo.conf"
    f.write_text("SwitchName=leaf0 Nodes=cn[001-004]\nSwitchName=leaf1 Nodes=cn[005-008]\n"
                 "SwitchName=top Switches=leaf[0-1]\n")
    m = parse_machine(f"fattree:topology={f}")
    a = parse_allocation("cn006.cluster.local,cn002.cluster.local", m)
    assert [m.node_name(i) for i in a.nodes] == ["cn006", "cn002"]
    assert list(a.names) == ["cn006.cluster.local", "cn002.cluster.local"]
    with pytest.raises(RankmapError, match="unknown node names in .*: cn009.cluster.local"):
        parse_allocation("cn009.cluster.local", m)
    # only a host name with a domain is cut short: not cn001.cluster.local:2
    with pytest.raises(RankmapError, match="cn001.cluster.local:2"):
        parse_allocation("cn001.cluster.local:2", m)
    # a machine named in full is asked by name, nid names included (nid00001.x.org is the
    # host of that name, not node 1); underscores are host-name characters too
    h = tmp_path / "nidfull.conf"
    h.write_text("SwitchName=l0 Nodes=nid00001.x.org,nid00002.x.org\n"
                 "SwitchName=l1 Nodes=nid00003.x.org,cn_04.x.org\nSwitchName=t Switches=l[0-1]\n")
    named = parse_machine(f"fattree:topology={h}")
    got = parse_allocation("nid00001.x.org,nid00003.x.org,cn_04.x.org", named).nodes
    assert [named.node_name(i) for i in got] == ["nid00001.x.org", "nid00003.x.org",
                                                 "cn_04.x.org"]
    u = tmp_path / "under.conf"
    u.write_text("SwitchName=l0 Nodes=cn_01,cn_02\nSwitchName=l1 Nodes=cn_03,cn_04\n"
                 "SwitchName=t Switches=l[0-1]\n")
    short = parse_machine(f"fattree:topology={u}")
    assert [short.node_name(i) for i in parse_allocation("cn_02.cluster.local", short).nodes
            ] == ["cn_02"]
    # nid names with a domain are node ids on a machine without names of its own
    assert list(parse_allocation("nid00003.x.org,nid00001.x.org", parse_machine("torus:4x4")
                                 ).nodes) == [3, 1]
    g = tmp_path / "full.conf"
    g.write_text("SwitchName=leaf0 Nodes=a.x,a.y\nSwitchName=leaf1 Nodes=b.x,b.y\n"
                 "SwitchName=top Switches=leaf[0-1]\n")
    full = parse_machine(f"fattree:topology={g}")
    assert [full.node_name(i) for i in parse_allocation("a.y,b.x", full).nodes] == ["a.y", "b.x"]


def test_a_folder_and_a_cray_name_off_the_machine_are_named(tmp_path):
    """--nodes naming a folder says so (it said 'not found'); a Cray name whose cabinet row
    is past the machine names the Cray name, not only its coordinates."""
    from rankmap.allocation import parse_allocation
    with pytest.raises(RankmapError, match="is a folder; give a node file"):
        parse_allocation(str(tmp_path), parse_machine("torus:4x4"))
    with pytest.raises(RankmapError, match="Cray name 'c4-4c0s0n0'.*outside the dragonfly"):
        parse_allocation("c4-4c0s0n0", parse_machine("xc:groups=26"))


def test_id_text_is_ids_even_where_a_file_of_that_name_exists(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "3").write_text("10\n11\n")
    machine = parse_machine("torus:4x4")
    assert parse_allocation("3", machine).nodes.tolist() == [3]
    assert parse_allocation("./3", machine).nodes.tolist() == [10, 11]   # the file


def test_host_lists_past_python_hostlists_own_guard_expand_up_to_the_cap():
    # python-hostlist refuses more than 100,000 names by itself; rankmap's cap is 4 Mi
    names = expand_host_list("nid[000000-131071]")
    assert len(names) == 131072 and names[-1] == "nid131071"
    assert len(expand_host_list("a[1-400]b[1-400]")) == 160000


@pytest.mark.parametrize("text", ["nid00001,,nid00005", "nid00001,nid00005,", ",nid00001"])
def test_an_empty_name_in_a_host_list_is_refused(text):
    with pytest.raises(RankmapError, match="empty name between commas"):
        parse_allocation(text, XC)


def test_node_file_error_names_the_line(tmp_path):
    """A bad id in a node file is located: 'line 3', not just the file."""
    from rankmap.allocation import parse_allocation
    from rankmap.machines import parse_machine
    f = tmp_path / "ids.txt"
    f.write_text("0\n1-2  # two\n5-99\n")
    with pytest.raises(RankmapError, match=r"ids\.txt': line 3 is outside the machine"):
        parse_allocation(str(f), parse_machine("torus:4x4"))
    f.write_text("0\n\n3-1\n")
    with pytest.raises(RankmapError, match=r"line 3: end before start"):
        parse_allocation(str(f), parse_machine("torus:4x4"))
    f.write_text("0\n1-2  # two\n5\n")
    assert parse_allocation(str(f), parse_machine("torus:4x4")).nodes.tolist() == [0, 1, 2, 5]


@pytest.mark.parametrize("machine, text", [
    ("torus:4x4", "name,x,y,y\na,1,0,2\n"),
    ("xc:groups=2", "name,group,row,col,node,node\na,0,0,1,0,3\n"),
])
def test_topology_csv_refuses_a_column_named_twice(tmp_path, machine, text):
    """name,x,y,y used the first y and dropped the second without a word."""
    f = tmp_path / "site.csv"
    f.write_text(text)
    with pytest.raises(RankmapError, match="is named twice in the header"):
        parse_allocation(str(f), parse_machine(machine))
