"""Fixes to validate, the SimGrid platform and bench: undefined correlations, Pearson on raw
times, the progress bar's step in progress, dragonfly node links without latency, benchmarks
that send nothing, a program name not found on PATH, and the socket bandwidth not reported."""

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from rankmap.cli import main
from rankmap.errors import RankmapError
from rankmap.machines import parse_machine
from rankmap.simgrid import platform_xml, smpi_available
from rankmap.simgrid.validation import Validation, ValidationRow

needs_smpi = pytest.mark.skipif(not smpi_available(), reason="SimGrid SMPI not installed")

#: the candidates of `validate --machine torus:4x4x4:cores=2 --pattern stencil:8x16:periodic`
TIMES = [("greedy", 0.004934475294117647, 0.00493697),
         ("XYZT", 0.004934475294117647, 0.00493697),
         ("graph", 0.009868950588235293, 0.009871520588),
         ("hilbert", 0.012336188235294117, 0.01233879588),
         ("rcb", 0.014803425882352943, 0.01480607118),
         ("inorder", 0.02220513882352941, 0.02220669235),
         ("TXYZ", 0.02220513882352941, 0.02220669235),
         ("random", 0.032074089411764706, 0.02714124294)]


def _val(rows):
    return Validation("s", [ValidationRow(n, p, s) for n, p, s in rows])


def test_constant_times_have_no_correlation(capsys):
    """All placements predicted alike and simulated alike: no ranking to correlate, so
    Spearman and Pearson are n/a (JSON null) with the reason, not 1.000."""
    from rankmap.cli.validate import print_table

    val = _val([(n, 3.3554432e-4, 3.3557864e-4) for n in ("inorder", "rcb", "graph", "random")])
    assert val.correlations() == (None, None)
    doc = val.to_json()
    assert doc["spearman"] is None and doc["pearson"] is None
    assert "predicted the same time and simulated the same time" in doc["correlation_note"]
    print_table(val)
    out = capsys.readouterr().out
    assert "Spearman n/a" in out and "Pearson n/a" in out and "1.000" not in out.split(
        "Spearman")[1].splitlines()[0]
    # one side constant: undefined too, and said which side
    one = _val([("a", 1e-3, 1e-3), ("b", 1e-3, 2e-3), ("c", 1e-3, 3e-3)])
    assert one.correlations() == (None, None)
    assert "predicted the same time" in one.correlation_note()
    # defined correlations have no note
    assert _val(TIMES).correlation_note() is None and _val(TIMES).to_json()[
        "correlation_note"] is None


def test_pearson_is_computed_from_the_raw_times():
    """Pearson of the times as they are (scipy on the JSON's numbers), not of times rounded to
    4 significant digits; Spearman still counts times equal to 4 digits as ties."""
    from scipy.stats import pearsonr, spearmanr

    val = _val(TIMES)
    sp, pe = val.correlations()
    p = np.array([t[1] for t in TIMES])
    s = np.array([t[2] for t in TIMES])
    assert pe == pytest.approx(float(pearsonr(p, s).statistic), rel=1e-12, abs=0)
    assert pe == pytest.approx(0.98907138, abs=1e-8)
    doc = val.to_json()
    got = [(c["predicted_s"], c["simulated_s"]) for c in doc["candidates"]]
    assert doc["pearson"] == pytest.approx(float(pearsonr(*zip(*got)).statistic), rel=1e-12)
    rounded = [[float(f"{v:.4g}") for v in x] for x in (p, s)]
    assert sp == pytest.approx(float(spearmanr(*rounded).statistic))


def _fake_validate(monkeypatch, events, names="XYT,YXT,random", staged=True):
    """validate() on torus:2x2 with SMPI and the route check replaced by stand-ins that log."""
    from rankmap.allocation import parse_allocation
    from rankmap.patterns import parse_pattern
    from rankmap.simgrid import validation as V
    from rankmap.simgrid.runner import SmpiResult

    def fake_simulate(machine, pattern, nodes, routing, **kw):
        events.append(("simulate", tuple(int(n) for n in nodes)))
        return SmpiResult([1e-3 * (1 + len(events))], 0.01, "halo")

    monkeypatch.setattr(V, "simulate", fake_simulate)
    monkeypatch.setattr(V, "compare_routes", lambda *a, **k: None)
    m = parse_machine("torus:2x2")
    stage = {"stage": lambda n, what: events.append(("stage", n, what))} if staged else {}
    return V.validate(m, parse_allocation(None, m), parse_pattern("stencil:2x2"), names,
                      progress=lambda n: events.append(("done", n)), **stage)


def test_progress_names_the_simulation_in_progress(monkeypatch):
    """Before each simulation the bar is told which candidate is being simulated (not the
    one that just finished), and each step is marked done once: 2 per candidate."""
    events = []
    val = _fake_validate(monkeypatch, events)
    sims = [i for i, e in enumerate(events) if e[0] == "simulate"]
    assert len(sims) == len(val.rows) == 3
    for row, i in zip(val.rows, sims):
        assert events[i - 1] == ("stage", row.mapping, "simulating")
        assert events[i + 1] == ("done", row.mapping)
    assert sum(e[0] == "done" for e in events) == 2 * len(val.rows)


def test_validate_options_have_no_socket_bandwidth(monkeypatch):
    """validate refuses --socket-bw and machines with sockets: the JSON does not record a
    socket bandwidth that took no part in the prediction."""
    val = _fake_validate(monkeypatch, [], staged=False)
    assert "socket_bw_Bps" in val.options and val.options["socket_bw_Bps"] is None
    assert val.to_json()["options"]["socket_bw_Bps"] is None


DF = ("dragonfly:groups=3,rows=1,cols=4,nodes=2,cores=1,global=1,layout=absolute,"
      "bw_row=10GB/s,bw_col=20GB/s,bw_global=30GB/s,lat=1us")


def test_dragonfly_node_links_have_no_latency():
    """Node (injection/ejection) links are no hops: latency 0; router links carry lat."""
    root = ET.fromstring(platform_xml(parse_machine(DF)).split("\n", 2)[2])
    clusters = root.findall(".//cluster")
    assert clusters and all(c.get("lat") == "0s" for c in clusters)
    hosts = []
    for c in clusters:
        lo, hi = map(int, c.get("radical").split("-"))
        hosts.extend(range(lo, hi + 1))
    assert sorted(hosts) == list(range(24))
    links = root.findall(".//link")
    assert links and all(ln.get("latency") == "1e-06s" for ln in links)
    # latency 0 asked for (validation's platforms): SimGrid's compact DRAGONFLY cluster,
    # every link 0, no routers^2 routes
    zero = ET.fromstring(platform_xml(parse_machine(DF), link_latency=0.0).split("\n", 2)[2])
    assert [c.get("topology") for c in zero.findall(".//cluster")] == ["DRAGONFLY"]
    assert zero.find(".//cluster").get("lat") == "0s" and not zero.findall(".//zoneRoute")


PINGPONG = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  int r; char b = 0; MPI_Init(&argc, &argv); MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  if (r == 0) { MPI_Send(&b, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(&b, 1, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
  else { MPI_Recv(&b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
         MPI_Send(&b, 1, MPI_CHAR, 0, 0, MPI_COMM_WORLD); }
  if (r == 0) printf("rtt %.9e\n", MPI_Wtime() - t0);
  MPI_Finalize(); return 0;
}
"""


@needs_smpi
def test_dragonfly_ping_pong_pays_latency_per_router_hop_only(tmp_path):
    """1-byte ping-pong: two nodes of one router pay no link latency; one router hop costs
    what one torus hop costs at the same lat."""
    from rankmap.simgrid.runner import SMPI_CONFIG

    (tmp_path / "pp.c").write_text(PINGPONG)
    subprocess.run([shutil.which("smpicc"), "-O1", "-o", "pp", "pp.c"], cwd=tmp_path,
                   check=True, capture_output=True)

    def rtt(spec, a, b):
        (tmp_path / "p.xml").write_text(platform_xml(parse_machine(spec)))
        (tmp_path / "hosts").write_text(f"node-{a}\nnode-{b}\n")
        out = subprocess.run([shutil.which("smpirun"), "-np", "2", "-platform", "p.xml",
                              "-hostfile", "hosts", *SMPI_CONFIG, "./pp"], cwd=tmp_path,
                             capture_output=True, text=True, timeout=120).stdout
        return float(re.search(r"rtt (\S+)", out).group(1))

    same_router, one_hop = rtt(DF, 0, 1), rtt(DF, 0, 2)
    torus_hop = rtt("torus:2x3:bw=10GB/s:lat=1us", 0, 1)
    assert same_router < 0.05 * one_hop
    assert one_hop == pytest.approx(torus_hop, rel=0.02)


@pytest.mark.parametrize("kind, dims", [("halo", (1, 1)), ("fft", (1, 1)), ("cart", (1,)),
                                        ("halo", (1, 1, 1))])
def test_benchmarks_that_send_nothing_are_refused(kind, dims):
    """A grid of one process sends no bytes: refused as pairs refuses one process."""
    from rankmap.mpi.bench import check_config
    from rankmap.mpi.bench_config import BenchConfig

    with pytest.raises(RankmapError, match="sends no bytes"):
        check_config(BenchConfig(kind, dims, [1024]), 4)
    check_config(BenchConfig(kind, (2,) + dims[1:], [1024]), 4)   # 2 processes: accepted


def test_bench_halo_of_one_process_exits_2():
    pytest.importorskip("mpi4py")
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    proc = subprocess.run([sys.executable, "-m", "rankmap", "bench", "halo", "--dims", "1x1",
                           "--sizes", "1KiB"], capture_output=True, text=True, timeout=120,
                          env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "1x1" in proc.stderr and "sends no bytes" in proc.stderr
    assert "MB/s" not in proc.stdout


def test_program_in_the_current_folder_without_dot_slash(tmp_path, monkeypatch, capsys):
    """A bare name is looked up on PATH, as a shell does: said, with './NAME' suggested when
    the current folder holds that file."""
    exe = tmp_path / "app.smpi"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    base = ["validate", "-m", "torus:2x2", "-p", "stencil:2x2", "--mappings", "XYT", "--"]
    assert main([*base, "app.smpi"]) == 2
    err = capsys.readouterr().err
    assert "'app.smpi' not found on PATH" in err and "'./app.smpi'" in err
    assert len(err.strip().splitlines()) == 1
    assert main([*base, "nothere.smpi"]) == 2
    err = capsys.readouterr().err
    assert "not found on PATH" in err and "./" not in err


def test_validate_takes_the_refinements_budget(monkeypatch, capsys):
    """validate accepted refine:NAME and auto with no way to bound them; --budget is
    compare's option and reaches the refinement (0 = no refinement: refine:random is random)."""
    from rankmap.simgrid import validation as V
    real = V.compare
    seen = []

    def spy(*args, **kw):
        seen.append(kw.get("budget"))
        return real(*args, **kw)

    monkeypatch.setattr(V, "compare", spy)
    val = _fake_validate(monkeypatch, [], names="refine:random,random")
    assert seen == [None]
    from rankmap.allocation import parse_allocation
    from rankmap.patterns import parse_pattern
    m = parse_machine("torus:4x4")
    val = V.validate(m, parse_allocation(None, m), parse_pattern("stencil:4x4"),
                     "refine:random,random", budget=0)
    assert seen[-1] == 0
    core = {r.mapping: r.predicted_s for r in val.rows}
    assert core["refine:random"] == core["random"]
    assert main(["validate", "--help"]) == 0
    assert "--budget MOVES" in capsys.readouterr().out
