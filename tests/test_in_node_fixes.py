"""The in-node step never makes the predicted time worse (a node keeps its new order only where
the time model predicts it no slower), ``auto`` and ``compare`` judge it alike; the node's
synthetic description is given whatever the order of its levels; the 'do not fit' message
under ``--threads`` counts ranks, not cores."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from rankmap.allocation import whole_machine
from rankmap.errors import RankmapError
from rankmap.evaluation import Evaluator
from rankmap.machines import parse_machine
from rankmap.machines.hwloc_xml import node_structure_from_xml
from rankmap.machines.node_structure import NodeStructure, parse_synthetic
from rankmap.mappers import build_mapping
from rankmap.mappers.domain_placement import place_in_domains
from rankmap.patterns import Pattern, Phase, parse_pattern
from rankmap.selection import auto_select, build_placement, compare
from rankmap.timing import TimeOptions

MIB = 1 << 20


def _pairs_pattern():
    """One node of 2 sockets x 2 cores: ranks 0-2 exchange 10 MiB each way, 0-1 and 2-3
    2 MiB. Cutting the sockets' bytes (0 with 2) puts 28 MiB on one domain's memory."""
    src = np.array([0, 2, 0, 1, 2, 3])
    dst = np.array([2, 0, 1, 0, 3, 2])
    nbytes = np.array([10, 10, 2, 2, 2, 2], dtype=float) * MIB
    return Pattern("pairs", "graph", 4, [Phase("g", src, dst, nbytes)])


def _time(ev, placement):
    return ev.evaluate(placement).metrics["predicted_time_s"]


def test_step_keeps_the_mappers_cores_where_it_would_be_slower():
    m = parse_machine("torus:1:node=pack:2,numa:1,core:2")
    a = whole_machine(m)
    p = _pairs_pattern()
    ev = Evaluator(m, a, p)
    keep = build_placement("TX", p, m, a, evaluator=ev, in_node=False)
    step = build_placement("TX", p, m, a, evaluator=ev)
    assert _time(ev, step) <= _time(ev, keep)          # was 2.937 ms against 2.518 ms
    assert np.array_equal(step.core_of_rank, keep.core_of_rank)
    # the time model off: the byte rule (fewer bytes between sockets) as before
    off = TimeOptions(enabled=False)
    bytes_rule = build_placement("TX", p, m, a, time_options=off)
    assert np.array_equal(bytes_rule.core_of_rank,
                          place_in_domains(keep.core_of_rank, p, a, m.node_structure))
    ev_off = Evaluator(m, a, p, time_options=off)
    assert ev_off.evaluate(bytes_rule).metrics["inter_socket_bytes"] == 8 * MIB
    # a time model that prices nothing inside a node ties every order: the byte rule decides
    free = TimeOptions(mem_bw=None, socket_bw=None)
    assert np.array_equal(build_placement("TX", p, m, a, time_options=free).core_of_rank,
                          bytes_rule.core_of_rank)


@pytest.mark.parametrize("spec,pat,seed,names", [
    ("torus:2x2:bw=20GB/s:node=pack:4,numa:1,core:4", "minighost:4x4x4", 0, ["rcb", "graph"]),
    ("mesh:2x2:bw=40GB/s:node=pack:3,numa:1,core:4", "lulesh:4x4x3:s=16", 3,
     ["rcb", "graph", "random"]),
])
def test_compare_and_auto_never_slower_with_the_step(spec, pat, seed, names):
    m = parse_machine(spec)
    a = whole_machine(m)
    p = parse_pattern(pat, default_ranks=a.n_cores)
    step = compare(m, a, p, names + ["auto"], seed=seed)
    keep = compare(m, a, p, names, seed=seed, in_node=False)
    t_keep = {e.name: e.metrics["predicted_time_s"] for e in keep.candidates}
    by_name = {e.name: e for e in step.candidates}
    for name in names:
        assert by_name[name].metrics["predicted_time_s"] <= t_keep[name] * (1 + 1e-12), name
    # auto judges its candidates by the same rule: its own rows are compare's
    comp = auto_select(p, m, a, seed)
    for e in comp.candidates:
        if e.name in by_name:
            assert np.array_equal(e.mapping.core_of_rank, by_name[e.name].mapping.core_of_rank)
    assert np.array_equal(by_name["auto"].mapping.core_of_rank, comp.best.mapping.core_of_rank)
    # a mapper that places its own start (refine:, swap:) steps it under the same rule:
    # refine:rcb with no moves is compare's rcb, as auto's refinement starts from it
    ev = Evaluator(m, a, p)
    start = build_placement("refine:rcb", p, m, a, seed, budget=0, evaluator=ev)
    assert np.array_equal(start.core_of_rank, by_name["rcb"].mapping.core_of_rank)


def _cli_json(*args):
    out = subprocess.run([sys.executable, "-m", "rankmap", *args, "--format", "json"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_cli_compare_same_with_one_and_two_jobs_and_no_slower():
    args = ["compare", "-m", "torus:2x2:bw=20GB/s:node=pack:4,numa:1,core:4",
            "-p", "minighost:4x4x4", "--mappings", "rcb,graph,auto"]
    one = _cli_json(*args, "--jobs", "1")
    two = _cli_json(*args, "--jobs", "2")
    keep = _cli_json(*args, "--in-node", "keep")

    def rows(doc):
        return {c["mapping"]: c["metrics"] for c in doc["candidates"]}

    assert rows(one) == rows(two)
    for name in ("rcb", "graph"):
        assert rows(one)[name]["predicted_time_s"] <= rows(keep)[name]["predicted_time_s"]
        assert rows(one)[name]["predicted_time_s"] == pytest.approx(4.615e-3, rel=1e-3)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), spec=st.sampled_from(
    ["torus:2:node=pack:2,numa:2,core:2", "torus:3:node=pack:2,core:3",
     "torus:2x2:node=pack:2,numa:2,core:4", "mesh:2:node=pack:3,core:2"]),
       mem=st.sampled_from([None, 1e8, 1e9, 1e10]), sock=st.sampled_from([None, 5e8, 5e9]),
       shared=st.booleans(), threads=st.sampled_from([1, 2]))
# two cases the byte rule made slower (fewer bytes between sockets, one domain's memory busier)
@example(seed=5, spec="torus:2x2:node=pack:2,numa:2,core:4", mem=1e8, sock=5e9, shared=True,
         threads=1)
@example(seed=0, spec="mesh:2:node=pack:3,core:2", mem=None, sock=5e8, shared=True, threads=1)
def test_step_never_slower_property(seed, spec, mem, sock, shared, threads):
    """Sparse random graphs of heavy and light pairs, random starts, any memory and socket
    bandwidths: with the exact time model (tolerance 0) every phase, hence the predicted
    time, is no slower with the step, and the step is deterministic."""
    m = parse_machine(spec)
    a = whole_machine(m)
    if threads > 1:
        if m.cores_per_node % threads:
            return
        a = a.with_threads(threads)
    rng = np.random.default_rng(seed)
    n = a.n_cores
    phases = []
    for k in range(2):
        src, dst = rng.integers(0, n, max(2, n // 2)), rng.integers(0, n, max(2, n // 2))
        ok = src != dst
        s, d, b = src[ok], dst[ok], 2.0 ** rng.integers(16, 25, ok.sum())
        phases.append(Phase(f"p{k}", np.concatenate([s, d]), np.concatenate([d, s]),
                            np.concatenate([b, b])))
    p = Pattern("random", "graph", n, phases)
    opts = TimeOptions(mem_bw=mem, socket_bw=sock, mem_shared=shared, tolerance=0.0)
    ev = Evaluator(m, a, p, time_options=opts)
    keep = build_placement("random", p, m, a, seed, evaluator=ev, in_node=False)
    step = build_placement("random", p, m, a, seed, evaluator=ev)
    again = build_placement("random", p, m, a, seed, evaluator=ev)
    assert np.array_equal(step.core_of_rank, again.core_of_rank)
    assert (step.nodes(a) == keep.nodes(a)).all()
    e0, e1 = ev.evaluate(keep), ev.evaluate(step)
    for p0, p1 in zip(e0.phases, e1.phases):
        assert p1.metrics["predicted_time_s"] <= p0.metrics["predicted_time_s"] * (1 + 1e-12)


# ---- machine.node.synthetic ------------------------------------------------------------------

NUMA_ABOVE_PACK_XML = """<?xml version="1.0" encoding="UTF-8"?>
<topology>
 <object type="Machine" os_index="0" cpuset="0x000000ff">
  <object type="NUMANode" os_index="0" cpuset="0x0000000f" local_memory="1">
   <object type="Package" os_index="0" cpuset="0x00000003">
    <object type="Core" os_index="0" cpuset="0x00000001"/>
    <object type="Core" os_index="1" cpuset="0x00000002"/>
   </object>
   <object type="Package" os_index="1" cpuset="0x0000000c">
    <object type="Core" os_index="2" cpuset="0x00000004"/>
    <object type="Core" os_index="3" cpuset="0x00000008"/>
   </object>
  </object>
  <object type="NUMANode" os_index="1" cpuset="0x000000f0" local_memory="1">
   <object type="Package" os_index="2" cpuset="0x00000030">
    <object type="Core" os_index="4" cpuset="0x00000010"/>
    <object type="Core" os_index="5" cpuset="0x00000020"/>
   </object>
   <object type="Package" os_index="3" cpuset="0x000000c0">
    <object type="Core" os_index="6" cpuset="0x00000040"/>
    <object type="Core" os_index="7" cpuset="0x00000080"/>
   </object>
  </object>
 </object>
</topology>
"""


def test_synthetic_when_numa_sits_above_packages(tmp_path):
    s = parse_synthetic("numa:2 pack:2 core:2")
    assert s.synthetic == "numa:2 pack:2 core:2"
    assert parse_synthetic("group:2,numa:2,pack:2,core:2").synthetic == "numa:4 pack:2 core:2"
    x = node_structure_from_xml(NUMA_ABOVE_PACK_XML, "numa.xml")
    assert x.n_packages == 4 and x.n_domains == 2
    assert x.describe()["synthetic"] == "numa:2 pack:2 core:2"
    path = tmp_path / "numa.xml"
    path.write_text(NUMA_ABOVE_PACK_XML)
    for spec in ("torus:2:node=numa:2 pack:2 core:2", f"torus:2:node={path}"):
        doc = _cli_json("compare", "-m", spec, "-p", "stencil:2x2")
        assert doc["machine"]["node"]["synthetic"] == "numa:2 pack:2 core:2"
    # an irregular node (a domain across two packages): the key is there, null
    odd = NodeStructure((0, 0, 0, 1, 1, 1), (0, 0, 1, 1, 2, 2), 1, "odd")
    assert "synthetic" in odd.describe() and odd.describe()["synthetic"] is None


@settings(max_examples=60, deadline=None)
@given(levels=st.permutations(["pack", "numa", "group", "l3"]),
       counts=st.lists(st.integers(1, 3), min_size=4, max_size=4),
       cores=st.integers(1, 3), pus=st.integers(1, 2))
def test_synthetic_round_trips_whatever_the_levels_order(levels, counts, cores, pus):
    text = " ".join(f"{k}:{n}" for k, n in zip(levels, counts)) + f" core:{cores} pu:{pus}"
    s = parse_synthetic(text)
    assert s.synthetic is not None, text
    back = parse_synthetic(s.synthetic)
    assert back.package_of_core == s.package_of_core and back.numa_of_core == s.numa_of_core
    assert back.pus_per_core == s.pus_per_core


# ---- the 'do not fit' message under --threads -------------------------------------------------

def test_do_not_fit_counts_ranks_under_threads(capsys):
    m = parse_machine("torus:2:node=pack:2,core:2")
    a = whole_machine(m).with_threads(2)
    p = parse_pattern("stencil:4x4")
    msg = ("16 ranks do not fit on 2 nodes x 2 ranks (4 cores, 2 threads a rank) = 4 ranks")
    with pytest.raises(RankmapError) as err:
        build_mapping("rcb", p, m, a)
    assert str(err.value) == msg
    out = subprocess.run([sys.executable, "-m", "rankmap", "evaluate", "-m",
                          "torus:2:node=pack:2,core:2", "-p", "stencil:4x4", "--threads", "2",
                          "--mapping", "rcb"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and msg in out.stderr
    # without threads the message counts cores, as before
    with pytest.raises(RankmapError, match=r"^16 ranks do not fit on 2 nodes x 4 cores = 8 "
                                           r"cores$"):
        build_mapping("rcb", p, m, whole_machine(m))
