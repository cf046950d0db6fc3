"""Nodes with packages, NUMA domains and cores: spec option, hwloc XML, time model, in-node
placement, metrics and the Open MPI ``socket:core`` rankfile."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rankmap.allocation import whole_machine
from rankmap.errors import RankmapError
from rankmap.evaluation import Evaluator
from rankmap.io.openmpi import format_rankfile, read_rankfile
from rankmap.machines import parse_machine
from rankmap.machines.hwloc_xml import node_structure_from_xml, parse_cpuset
from rankmap.machines.node_structure import parse_synthetic
from rankmap.mappers import build_mapping
from rankmap.mappers.base import Placement
from rankmap.mappers.domain_placement import place_in_domains
from rankmap.metrics.node_domains import domain_bytes
from rankmap.patterns import parse_pattern
from rankmap.patterns.base import Pattern, Phase
from rankmap.timing import TimeOptions, flow_times


# ---- the node model ----------------------------------------------------------------------

def test_synthetic_levels():
    s = parse_synthetic("pack:2 numa:2 core:4")
    assert (s.n_packages, s.n_domains, s.n_cores) == (2, 4, 16)
    assert s.package_of_core == (0,) * 8 + (1,) * 8
    assert s.numa_of_core == (0,) * 4 + (1,) * 4 + (2,) * 4 + (3,) * 4
    assert s.core_in_package.tolist() == list(range(8)) * 2
    assert s.synthetic == "pack:2 numa:2 core:4"
    # hwloc's own export: NUMA nodes attached to packages, caches multiply, PUs per core
    h = parse_synthetic("Package:2 [NUMANode(memory=1073741824)] L3Cache:1(size=33554432) "
                        "L2Cache:4(size=524288) Core:1 PU:2")
    assert (h.n_packages, h.n_domains, h.n_cores, h.pus_per_core) == (2, 2, 8, 2)
    # no NUMA level: one domain for the node (hwloc's convention), PUs as cores without core
    assert parse_synthetic("pack:2,core:3").n_domains == 1
    assert parse_synthetic("pack:2 pu:4").n_cores == 8


@pytest.mark.parametrize("text, message", [
    ("pack:2 foo:3", "unknown node structure level 'foo'"),
    ("pack:2 core:0", "bad count '0' of core"),
    ("core:4 pack:2", "only pu may come below core"),
    ("pack:2 pack:2 core:1", "pack given twice"),
    ("pack:2", "give core:N"),
    ("pack=2", "expected TYPE:COUNT"),
    ("core:99999999", "bad count"),
    ("pack:2.5 core:1", "bad count '2.5' of pack"),
    ("pack:2 core:-4", "bad count '-4' of core"),
])
def test_synthetic_errors(text, message):
    with pytest.raises(RankmapError, match=message):
        parse_synthetic(text)


def test_machine_spec_option():
    m = parse_machine("torus:4x4:node=pack:2,numa:2,core:4")
    assert m.cores_per_node == 16 and m.node_structure.n_domains == 4
    assert m.describe()["node"]["synthetic"] == "pack:2 numa:2 core:4"
    # the lstopo spelling with spaces, other options after it, cores= agreeing
    m2 = parse_machine("torus:4x4:cores=16:node=pack:2 numa:2 core:4:bw=1GB/s")
    assert m2.node_structure == m.node_structure and m2.bandwidth == 1e9
    assert parse_machine("dragonfly:groups=2,rows=1,cols=2:node=pack:2,core:4").cores_per_node == 8
    assert parse_machine("xc:groups=2:node=pack:2,numa:2,core:8").cores_per_node == 32
    assert parse_machine("torus:4x4:cores=4").node_structure is None
    with pytest.raises(RankmapError, match="cores=8 disagrees with node='pack:2 core:8'"):
        parse_machine("torus:4x4:cores=8:node=pack:2,core:8")
    # a count that is not a whole number is named, in the machine spec as on its own
    with pytest.raises(RankmapError, match=r"bad count '2\.5' of pack in 'pack:2\.5'"):
        parse_machine("torus:4x4:node=pack:2.5")
    with pytest.raises(RankmapError, match="option 'node' given twice"):
        parse_machine("torus:4:node=pack:1,core:2:node=pack:1,core:2")


HWLOC2_XML = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
 <object type="Machine" os_index="0" cpuset="0x000000ff">
  <object type="Package" os_index="0" cpuset="0x0000000f">
   <object type="NUMANode" os_index="0" cpuset="0x0000000f" local_memory="1"/>
   <object type="L3Cache" cpuset="0x0000000f" cache_size="1" depth="3">
    <object type="Core" os_index="0" cpuset="0x00000003">
     <object type="PU" os_index="0" cpuset="0x00000001"/>
     <object type="PU" os_index="1" cpuset="0x00000002"/>
    </object>
    <object type="Core" os_index="1" cpuset="0x0000000c">
     <object type="PU" os_index="2" cpuset="0x00000004"/>
     <object type="PU" os_index="3" cpuset="0x00000008"/>
    </object>
   </object>
  </object>
  <object type="Package" os_index="1" cpuset="0x000000f0">
   <object type="NUMANode" os_index="1" cpuset="0x000000f0" local_memory="1"/>
   <object type="Core" os_index="2" cpuset="0x00000030">
    <object type="PU" os_index="4" cpuset="0x00000010"/>
    <object type="PU" os_index="5" cpuset="0x00000020"/>
   </object>
   <object type="Core" os_index="3" cpuset="0x000000c0">
    <object type="PU" os_index="6" cpuset="0x00000040"/>
    <object type="PU" os_index="7" cpuset="0x00000080"/>
   </object>
  </object>
 </object>
</topology>
"""


def test_hwloc_xml_small_file(tmp_path):
    s = node_structure_from_xml(HWLOC2_XML, "two.xml")
    assert s.package_of_core == (0, 0, 1, 1) and s.numa_of_core == (0, 0, 1, 1)
    assert s.pus_per_core == 2 and s.synthetic == "pack:2 numa:1 core:2 pu:2"
    path = tmp_path / "node.xml"
    path.write_text(HWLOC2_XML)
    m = parse_machine(f"torus:2x2:node={path}")
    assert m.cores_per_node == 4 and m.node_structure.source == "node.xml"
    assert parse_cpuset("0x00000001,0x00000000", "x") == 1 << 32
    for bad, msg in (("<topology><object type='Core' cpuset='0xZZ'/></topology>", "bad cpuset"),
                     ("<topo/>", "not an hwloc XML topology"), ("<topology", "not valid XML"),
                     ("<topology><object type='Machine'/></topology>", "no Core or PU")):
        with pytest.raises(RankmapError, match=msg):
            node_structure_from_xml(bad, "bad.xml")


def _lstopo(required: bool = False):
    exe = shutil.which("lstopo-no-graphics") or shutil.which("lstopo")
    if exe is None:
        message = "needs hwloc's lstopo (apt-get install hwloc-nox)"
        if required and os.environ.get("RANKMAP_REQUIRE_MPI") == "1":
            pytest.fail(message + " (RANKMAP_REQUIRE_MPI=1)")
        pytest.skip(message)
    return exe


@pytest.mark.parametrize("synthetic", ["pack:2 numa:2 core:4 pu:2", "pack:2 core:3 pu:1",
                                       "pack:4 l3:2 core:2 pu:1"])
def test_hwloc_xml_from_lstopo_matches_synthetic(synthetic):
    """lstopo writes the XML of a synthetic topology; reading it gives the same node."""
    out = subprocess.run([_lstopo(), "-i", synthetic, "--of", "xml"], capture_output=True,
                         text=True, check=True, timeout=60).stdout
    assert node_structure_from_xml(out, "x.xml").package_of_core == \
        parse_synthetic(synthetic).package_of_core
    assert node_structure_from_xml(out, "x.xml").numa_of_core == \
        parse_synthetic(synthetic).numa_of_core


def test_hwloc_xml_of_this_machine(tmp_path):
    out = subprocess.run([_lstopo(), "--of", "xml"], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    s = node_structure_from_xml(out, "this.xml")
    n_pu = out.count('type="PU"')
    assert s.n_cores * s.pus_per_core == n_pu and s.n_packages >= 1


# ---- the time model ----------------------------------------------------------------------

def _times(spec, src_core, dst_core, nbytes, **opts):
    m = parse_machine(spec)
    n = len(nbytes)
    options = TimeOptions(overhead_s=0, tolerance=0, **opts)
    return flow_times(m, np.zeros(n, np.int64), np.zeros(n, np.int64), np.array(nbytes, float),
                      "dor", options, np.zeros(n), np.array(src_core), np.array(dst_core))


SPEC = "torus:2:node=pack:2,numa:1,core:2"   # cores 0,1: socket 0 / domain 0; 2,3: socket 1


def test_time_model_by_domain_hand_computed():
    # a: 0->1 (domain 0), b: 2->3 (domain 1), c: 0->2 (both domains and the 0->1 socket link)
    # socket link 2 GB/s: c runs at 2, a and b at 10-2 = 8 GB/s: a, b end at 1/8 s; c at 2/2
    t = _times(SPEC, [0, 2, 0], [1, 3, 2], [1e9, 1e9, 2e9], mem_bw=10e9, socket_bw=2e9)
    assert t == pytest.approx([0.125, 0.125, 1.0])
    # unlimited socket link: every domain shared by two flows (5 GB/s each) until a and b end
    # at 0.2 s; c has 1 GB left, alone at 10 GB/s: 0.1 s more
    t = _times(SPEC, [0, 2, 0], [1, 3, 2], [1e9, 1e9, 2e9], mem_bw=10e9, socket_bw=None)
    assert t == pytest.approx([0.2, 0.2, 0.3])
    # flows inside their own domains do not share: 0.1 s each (one node memory: 0.2 s)
    t = _times(SPEC, [0, 2], [1, 3], [1e9, 1e9], mem_bw=10e9)
    assert t == pytest.approx([0.1, 0.1])
    t_node = _times("torus:2:cores=4", [0, 2], [1, 3], [1e9, 1e9], mem_bw=10e9)
    assert t_node == pytest.approx([0.2, 0.2])
    # per-flow bandwidth (--mem-sharing flow): the slowest resource each
    t = _times(SPEC, [0, 2, 0], [1, 3, 2], [1e9, 1e9, 2e9], mem_bw=10e9, socket_bw=2e9,
               mem_shared=False)
    assert t == pytest.approx([0.1, 0.1, 1.0])
    # reverse direction uses the other link: two opposite 2 GB flows each get the full 2 GB/s
    t = _times(SPEC, [0, 2], [2, 0], [2e9, 2e9], mem_bw=None, socket_bw=2e9)
    assert t == pytest.approx([1.0, 1.0])


def test_one_domain_node_predicts_as_before():
    """A node of one package and one domain gives exactly the times of a plain node."""
    p = parse_pattern("stencil:8x8:box:periodic")
    out = []
    for spec in ("torus:4x4:cores=4", "torus:4x4:node=pack:1,core:4"):
        m = parse_machine(spec)
        a = whole_machine(m)
        ev = Evaluator(m, a, p)
        out.append([ev.evaluate(build_mapping(n, p, m, a)).metrics["predicted_time_s"]
                    for n in ("inorder", "XTY", "random")])
    assert out[0] == out[1]


def test_metrics_report_domain_bytes():
    m = parse_machine(SPEC)
    a = whole_machine(m)
    phase = Phase("x", np.array([0, 0, 1, 4]), np.array([1, 2, 5, 0]),
                  np.array([10.0, 20.0, 40.0, 80.0]))
    p = Pattern("hand", "graph", 8, [phase])
    e = Evaluator(m, a, p).evaluate(Placement("id", np.arange(8)))
    # 0->1 same domain, 0->2 across sockets, 1->5 between nodes, 4->0 between nodes
    assert e.metrics["intra_node_bytes"] == 30.0
    assert e.metrics["inter_domain_bytes"] == 20.0 and e.metrics["inter_socket_bytes"] == 20.0
    plain = parse_machine("torus:2:cores=4")
    assert "inter_domain_bytes" not in Evaluator(plain, whole_machine(plain), p).evaluate(
        Placement("id", np.arange(8))).metrics


# ---- the in-node placement step ------------------------------------------------------------

def _domain_cost(cores, pattern, machine, alloc):
    s = machine.node_structure
    node = cores // alloc.cores_per_node
    slot = cores % alloc.cores_per_node
    tot = np.zeros(3)
    for ph in pattern.phases:
        d = domain_bytes(s, node[ph.src], node[ph.dst], slot[ph.src], slot[ph.dst], ph.bytes)
        tot += [d["intra_node_bytes"], d["inter_domain_bytes"], d["inter_socket_bytes"]]
    return tot


def test_step_keeps_heavy_pairs_in_one_domain():
    m = parse_machine("torus:2:node=pack:2,core:4")
    a = whole_machine(m)
    # on node 0, rank i talks to rank i+4 (the other socket under the identity order)
    phase = Phase("x", np.array([0, 1, 2, 3]), np.array([4, 5, 6, 7]), np.full(4, 1e6))
    p = Pattern("pairs", "graph", 16, [phase])
    start = np.arange(16)
    assert _domain_cost(start, p, m, a)[2] == 4e6
    cores = place_in_domains(start, p, a, m.node_structure)
    assert _domain_cost(cores, p, m, a)[2] == 0
    assert sorted(cores.tolist()) == list(range(16))
    assert (cores // 8 == start // 8).all()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), spec=st.sampled_from(
    ["torus:2x2:node=pack:2,numa:2,core:2", "torus:3:node=pack:2,core:6",
     "torus:2:node=pack:2,numa:2,core:8", "torus:2x2:node=pack:3,core:2"]),
       threads=st.sampled_from([1, 2]), fill=st.floats(0.3, 1.0))
def test_step_never_worse_and_deterministic(seed, spec, threads, fill):
    m = parse_machine(spec)
    a = whole_machine(m)
    if threads > 1:
        if m.cores_per_node % threads:
            return
        a = a.with_threads(threads)
    n = max(2, int(a.n_cores * fill))
    rng = np.random.default_rng(seed)
    k = 3 * n
    src, dst = rng.integers(0, n, k), rng.integers(0, n, k)
    keep = src != dst
    phase = Phase("g", src[keep], dst[keep], rng.integers(1, 100, keep.sum()).astype(float))
    p = Pattern("random", "graph", n, [phase])
    start = rng.permutation(a.n_cores)[:n]
    one = place_in_domains(start, p, a, m.node_structure, seed=1)
    two = place_in_domains(start, p, a, m.node_structure, seed=1)
    assert np.array_equal(one, two)
    assert len(set(one.tolist())) == n and (one // a.cores_per_node == start // a.cores_per_node).all()

    def cost(c):
        node, slot = c // a.cores_per_node, c % a.cores_per_node
        core = slot * threads
        return domain_bytes(m.node_structure, node[phase.src], node[phase.dst],
                            core[phase.src], core[phase.dst], phase.bytes)

    before, after = cost(start), cost(one)
    assert after["inter_domain_bytes"] <= before["inter_domain_bytes"]
    assert after["inter_socket_bytes"] <= before["inter_socket_bytes"]


def test_build_mapping_applies_the_step_but_not_to_inorder():
    m = parse_machine("torus:2x2:node=pack:2,numa:2,core:4")
    a = whole_machine(m)
    p = parse_pattern("stencil:4x4x4:box")   # a 4x4 plane per node: rows per domain cut more
    ev = Evaluator(m, a, p)
    raw = ev.evaluate(build_mapping("TXY", p, m, a, in_node=False)).metrics
    step = ev.evaluate(build_mapping("TXY", p, m, a)).metrics
    assert step["inter_domain_bytes"] < raw["inter_domain_bytes"]
    assert step["max_link_bytes"] == raw["max_link_bytes"]     # nodes unchanged
    assert step["predicted_time_s"] <= raw["predicted_time_s"]
    inorder = build_mapping("inorder", p, m, a)
    assert np.array_equal(inorder.core_of_rank, np.arange(p.n_ranks))


# ---- Open MPI rankfile ---------------------------------------------------------------------

def test_rankfile_socket_core(tmp_path):
    m = parse_machine("torus:2:node=pack:2,numa:2,core:2")
    a = whole_machine(m)
    mp = Placement("x", np.array([5, 0, 12, 3]))
    text = format_rankfile(mp, m, a)
    assert text.splitlines() == ["rank 0=node0 slot=1:1", "rank 1=node0 slot=0:0",
                                 "rank 2=node1 slot=1:0", "rank 3=node0 slot=0:3"]
    path = tmp_path / "rf"
    path.write_text(text)
    assert np.array_equal(read_rankfile(str(path), m, a, 4).core_of_rank, mp.core_of_rank)
    # two threads per rank: the rank's two cores
    a2 = a.with_threads(2)
    text2 = format_rankfile(Placement("y", np.array([3, 0])), m, a2)
    assert text2.splitlines() == ["rank 0=node0 slot=1:2-3", "rank 1=node0 slot=0:0-1"]
    path.write_text(text2)
    assert read_rankfile(str(path), m, a2, 2).core_of_rank.tolist() == [3, 0]
    path.write_text("rank 0=node0 slot=2:0\n")
    with pytest.raises(RankmapError, match="slot=2:0: no core 2:0 on a node of 2 sockets"):
        read_rankfile(str(path), m, a, 1)
    plain = parse_machine("torus:2:cores=8")
    path.write_text("rank 0=node0 slot=1:0\n")
    with pytest.raises(RankmapError, match="has no node structure"):
        read_rankfile(str(path), plain, whole_machine(plain), 1)


def test_socket_core_rankfile_binds_under_mpirun(tmp_path):
    """The real Open MPI honours ``slot=S:C``: each rank is bound to the core its line names."""
    if shutil.which("mpirun") is None:
        if os.environ.get("RANKMAP_REQUIRE_MPI") == "1":
            pytest.fail("needs mpirun (apt-get install openmpi-bin) (RANKMAP_REQUIRE_MPI=1)")
        pytest.skip("needs mpirun (apt-get install openmpi-bin libopenmpi-dev)")
    if not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 usable cores to check core binding")
    xml = subprocess.run([_lstopo(required=True), "--of", "xml"], capture_output=True,
                         text=True, check=True, timeout=60).stdout
    (tmp_path / "node.xml").write_text(xml)
    import socket
    host = socket.gethostname()
    (tmp_path / "hf").write_text(f"{host} slots=2\n")
    rankmap = shutil.which("rankmap") or str(Path(sys.executable).parent / "rankmap")
    # each rank writes its own file: on a shared stdout the two lines can interleave
    probe = ("import json, os; r = os.environ['OMPI_COMM_WORLD_RANK']; "
             f"p = os.path.join({str(tmp_path)!r}, 'bound-' + r); "
             "open(p + '.tmp', 'w').write(json.dumps(sorted(os.sched_getaffinity(0)))); "
             "os.replace(p + '.tmp', p)")
    structure = node_structure_from_xml(xml, "node.xml")
    cores = structure.n_cores
    argv = [rankmap, "launch", "-m", f"torus:1:node={tmp_path / 'node.xml'}", "-p",
            "pairs:random:ranks=2", "--mapping", "random", "--seed", "3", "--hostfile", "hf",
            "--nodes", "0", "-o", "rf", "--", "mpirun", "-n", "2", "--hostfile", "hf"]
    if os.geteuid() == 0:
        argv.append("--allow-run-as-root")
    proc = subprocess.run(argv + [sys.executable, "-c", probe], cwd=tmp_path,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = (tmp_path / "rf").read_text().splitlines()
    slots = {}
    for line in lines:
        rank, _, slot = line.removeprefix("rank ").partition(f"={host} slot=")
        sock, _, core = slot.partition(":")
        slots[int(rank)] = (int(sock), int(core))
    assert all(0 <= c < cores for _s, c in slots.values())
    bound = {int(f.name.split("-")[1]): json.loads(f.read_text())
             for f in tmp_path.glob("bound-*") if not f.name.endswith(".tmp")}
    assert sorted(bound) == [0, 1]
    assert not set(bound[0]) & set(bound[1]), bound
    by_slot = sorted(slots, key=slots.get)
    assert min(bound[by_slot[0]]) < min(bound[by_slot[1]]), (slots, bound)


# ---- command line ------------------------------------------------------------------------

def _cli(capsys, *args):
    from rankmap.cli import main
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_json_and_errors(capsys):
    code, out, _ = _cli(capsys, "compare", "-m", "torus:2x2:node=pack:2,numa:2,core:2", "-p",
                        "stencil:4x4:box", "--mappings", "inorder,TXY", "--format", "json",
                        "--socket-bw", "1GB/s")
    assert code == 0
    doc = json.loads(out)
    assert doc["machine"]["node"]["synthetic"] == "pack:2 numa:2 core:2"
    txy = next(c for c in doc["candidates"] if c["mapping"] == "TXY")["metrics"]
    assert txy["inter_domain_bytes"] <= txy["intra_node_bytes"]
    assert {"intra_node_bytes", "inter_socket_bytes"} <= set(txy)
    for args, message in (
            (["-m", "torus:2:node=pack:2,fish:2,core:2"], "unknown node structure level 'fish'"),
            (["-m", "torus:2:cores=3:node=pack:2,core:2"], "cores=3 disagrees"),
            (["-m", "torus:2:node=missing.xml"], "hwloc XML file 'missing.xml' not found"),
            (["-m", "torus:2:node=pack:2,core:2", "--socket-bw=0GB/s"], "inter-socket bandwidth"),
            # a setting with nothing to set is refused, not dropped
            (["-m", "torus:2", "--socket-bw=1GB/s"], "--socket-bw 1GB/s: the machine has no node"),
            (["-m", "torus:2:node=numa:2,core:2", "--socket-bw=1GB/s"], "1 package a node")):
        code, _out, err = _cli(capsys, "compare", *args, "-p", "stencil:2x2")
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


@settings(max_examples=40, deadline=None)
@given(levels=st.lists(st.tuples(st.sampled_from(["pack", "numa", "l3", "group"]),
                                 st.integers(1, 4)), max_size=3, unique_by=lambda t: t[0]),
       cores=st.integers(1, 6), pus=st.integers(1, 3))
def test_synthetic_property(levels, cores, pus):
    """Cores = product of the counts; packages and domains are contiguous equal blocks."""
    text = " ".join(f"{k}:{n}" for k, n in levels) + f" core:{cores} pu:{pus}"
    s = parse_synthetic(text)
    total = int(np.prod([n for _k, n in levels])) * cores
    assert s.n_cores == total and s.pus_per_core == pus
    counts = dict(levels)
    assert s.n_packages == (int(np.prod([n for k, n in levels[:[k for k, _ in levels].index(
        "pack") + 1]])) if "pack" in counts else 1)
    for ids in (s.package_of_core, s.numa_of_core):
        sizes = np.bincount(ids)
        assert (sizes == sizes[0]).all() and (np.diff(ids) >= 0).all()


def test_machine_toml_node_key(tmp_path, monkeypatch):
    (tmp_path / "node.xml").write_text(HWLOC2_XML)
    (tmp_path / "site.toml").write_text('machine = "torus:4x4"\nnode = "pack:2 numa:2 core:4"\n')
    assert parse_machine(str(tmp_path / "site.toml")).node_structure.n_domains == 4
    sub = tmp_path / "elsewhere"
    sub.mkdir()
    (sub / "m.toml").write_text('machine = "torus:2"\nnode = "../node.xml"\n')
    assert parse_machine(str(sub / "m.toml")).cores_per_node == 4
    # named by a relative path from another folder (its folder was joined on twice)
    monkeypatch.chdir(tmp_path)
    assert parse_machine("elsewhere/m.toml").cores_per_node == 4
    (sub / "here.toml").write_text('machine = "torus:2"\nnode = "node2.xml"\n')
    (sub / "node2.xml").write_text(HWLOC2_XML)
    assert parse_machine("./elsewhere/here.toml").cores_per_node == 4
    (sub / "bad.toml").write_text('machine = "torus:2:node=pack:1,core:1"\nnode = "pack:1 core:1"\n')
    with pytest.raises(RankmapError, match="option 'node' given twice"):
        parse_machine(str(sub / "bad.toml"))
    (sub / "bad2.toml").write_text('machine = "torus:2"\nnode = 4\n')
    with pytest.raises(RankmapError, match="node must be a string"):
        parse_machine(str(sub / "bad2.toml"))
    # a node=FILE.xml inside the machine spec is beside the machine file too, from any
    # working directory
    (sub / "xml.toml").write_text('machine = "torus:2:node=../node.xml"\n')
    assert parse_machine(str(sub / "xml.toml")).cores_per_node == 4
    # a misspelt key is an error, never a node structure silently dropped
    (sub / "typo.toml").write_text('machine = "torus:2"\nnod = "pack:2,core:4"\n')
    with pytest.raises(RankmapError, match="typo.toml': unknown key 'nod'"):
        parse_machine(str(sub / "typo.toml"))


def test_two_memories_of_one_package_are_one_domain_as_the_xml_reader_counts_them():
    # lstopo --of synthetic of a flat-mode HBM node: DDR and HBM NUMA nodes of each package
    text = ("Package:2 [NUMANode(memory=270582939648)] [NUMANode(memory=68719476736)] "
            "L3Cache:1(size=110100480) Core:56 PU:2")
    ns = parse_synthetic(text)
    assert ns.n_packages == 2 and ns.n_domains == 2 and len(ns.package_of_core) == 112
    assert ns.numa_of_core == ns.package_of_core
    with pytest.raises(RankmapError, match="NUMA domains given twice"):
        parse_synthetic("Package:2 [NUMANode] Core:2 [NUMANode]")   # at two levels


def test_core_limit_names_the_cores_per_node():
    """pack:100000,core:100000 has 10^10 cores a node, not the 100000 packages it was said."""
    with pytest.raises(RankmapError, match=r"has 10\^10 cores per node; the limit is"):
        parse_machine("torus:2x2:node=pack:100000,core:100000")
    with pytest.raises(RankmapError, match=r"has 80000 cores per node"):
        parse_machine("torus:2x2:node=pack:2,core:40000")


def test_size_past_int64_is_reported_against_the_node_cap():
    with pytest.raises(RankmapError, match=r"about 2\.0e\+20 nodes; the limit is"):
        parse_machine("torus:99999999999999999999x2")


@pytest.mark.parametrize("lines, threads, message", [
    # rank 0 holds cores 0:0 and 0:1, rank 1 core 0:1 too: a core used twice
    (["0=node0 slot=0:0-1", "1=node0 slot=0:1", "2=node1 slot=0:0", "3=node1 slot=0:1"], 1,
     r"slot=0:0-1 is not a rank's cores \(1 thread per rank: one core\)"),
    (["0=node0 slot=0:1-0", "1=node0 slot=1:1", "2=node1 slot=0:0", "3=node1 slot=0:1"], 1,
     "core range 1-0 ends before it starts"),
    (["0=node0 slot=0:0", "1=node0 slot=1:0"], 2,
     r"slot=0:0 is not a rank's cores \(2 threads per rank"),
])
def test_rankfile_socket_slots_name_every_core_of_the_rank(tmp_path, lines, threads, message):
    """Only a slot's first socket:core was read: a rank holding 0:0-1 next to one holding 0:1
    was accepted (a core used twice), as were a reversed range and one core for two threads."""
    m = parse_machine("torus:2:node=pack:2,core:2")
    a = whole_machine(m).with_threads(threads)
    path = tmp_path / "rf"
    path.write_text("".join(f"rank {ln}\n" for ln in lines))
    with pytest.raises(RankmapError, match=message):
        read_rankfile(str(path), m, a, len(lines))


def test_rankfile_reads_a_rank_over_two_sockets(tmp_path):
    """slot=0:0-1,1:0-1 (Open MPI's syntax for a rank on both sockets) was refused."""
    m = parse_machine("torus:2:node=pack:2,core:2")
    a = whole_machine(m).with_threads(4)
    path = tmp_path / "rf"
    path.write_text("rank 0=node1 slot=0:0-1,1:0-1\nrank 1=node0 slot=0:0,0:1,1:0,1:1\n")
    assert read_rankfile(str(path), m, a, 2).core_of_rank.tolist() == [1, 0]
