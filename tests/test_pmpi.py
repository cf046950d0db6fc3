"""The PMPI library under a real mpirun (Open MPI; MPICH too when installed): reordering of
MPI_Cart_create / MPI_Graph_create / MPI_Dist_graph_create(_adjacent) from C and Fortran with
every MPI promise checked, the fallbacks, and the recorded communication matrix.

The C/Fortran test programs live in tests/pmpi_programs and are compiled once per session.
Skipped, with what to install, when mpicc/mpirun are missing, unless RANKMAP_REQUIRE_MPI=1.
"""

from __future__ import annotations

import collections
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from rankmap.cli import main as cli_main
from rankmap.patterns import parse_pattern

PROGRAMS = Path(__file__).parent / "pmpi_programs"
TIMEOUT = 240
RANKMAP_DIR = str(Path(sys.executable).parent)  # the engine the library runs


def _need(tools):
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        message = (f"PMPI tests need {', '.join(missing)} (apt-get install openmpi-bin "
                   "libopenmpi-dev gfortran)")
        if os.environ.get("RANKMAP_REQUIRE_MPI") == "1":
            pytest.fail(message + " (RANKMAP_REQUIRE_MPI=1)")
        pytest.skip(message)


#: programs built from another's source with preprocessor flags: name -> (source, flags)
VARIANTS = {"collectives_f08": ("collectives", ["-cpp", "-DUSE_F08"]),
            "collectives": ("collectives", ["-cpp"])}


def compile_program(name: str, cc: str, out: Path) -> str:
    """Compile test program ``name`` of PROGRAMS (or its VARIANTS entry) with ``cc`` into
    ``out``; the executable's path."""
    source, flags = VARIANTS.get(name, (name, []))
    exe = out / name
    subprocess.run([cc, "-O1", *flags, "-o", str(exe), str(next(PROGRAMS.glob(f"{source}.*")))],
                   check=True, timeout=120)
    return str(exe)


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """The library and the compiled test programs (Open MPI)."""
    _need(["mpicc", "mpirun", "mpif90"])
    from rankmap.pmpi.build import library_path
    out = tmp_path_factory.mktemp("pmpi")
    progs = {}
    for name, cc in (("topo_check", "mpicc"), ("record_known", "mpicc"),
                     ("edge_cases", "mpicc"), ("cart_shift", "mpif90"),
                     ("graph_check", "mpif90"), ("collectives", "mpif90"),
                     ("collectives_f08", "mpif90"), ("cart_f08", "mpif90"),
                     ("inplace_f08", "mpif90"), ("persist_f08", "mpif90")):
        progs[name] = compile_program(name, cc, out)
    return {"lib": library_path(), "dir": out, **progs}


def _clean_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("RANKMAP_") and k != "LD_PRELOAD"}
    env["PATH"] = RANKMAP_DIR + os.pathsep + env.get("PATH", "")
    return env


def mpirun(n, argv, lib=None, env=None, launcher="mpirun"):
    """Run ``argv`` on ``n`` processes with the library preloaded and ``env`` exported."""
    full = _clean_env()
    full.update(env or {})
    names = [k for k in full if k.startswith("RANKMAP_")] + ["PATH"]
    if lib:
        full["LD_PRELOAD"] = lib
        names.append("LD_PRELOAD")
    cmd = [launcher]
    if launcher == "mpirun":
        cmd += ["--oversubscribe", "--bind-to", "none"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        for k in names:
            cmd += ["-x", k]
    cmd += ["-n", str(n), *argv]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=full)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def result(proc):
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")][-1]
    out = dict(kv.split("=") for kv in line.split()[1:])
    out = {k: (v if k == "ranks" else int(v)) for k, v in out.items()}
    if "ranks" in out:
        out["ranks"] = [int(x) for x in out["ranks"].split(",")]
    return out


def warnings_of(proc):
    return [ln for ln in proc.stderr.splitlines() if ln.startswith("rankmap:")]


def nodes(n, n_nodes):
    """RANKMAP_NODE list putting process p on node p mod n_nodes (a round-robin launch)."""
    return ",".join(str(p % n_nodes) for p in range(n))


# ---- reordering ----------------------------------------------------------------------------

def test_cart_create_reorders_with_auto(built):
    """4x4 grid (periodic in dim 0) on 18 processes round-robin over 9 nodes of a 3x3 torus:
    the auto placement moves ranks; every promise holds; the 2 spare processes get COMM_NULL."""
    proc = mpirun(18, [built["topo_check"], "cart", "4x4", "10"], built["lib"],
                  {"RANKMAP_MACHINE": "torus:3x3:cores=2", "RANKMAP_NODE": nodes(18, 9),
                   "RANKMAP_VERBOSE": "1"})
    r = result(proc)
    assert r["errors"] == 0, proc.stderr
    assert r["null"] == 2 and r["moved"] > 0
    assert sorted(x for x in r["ranks"] if x >= 0) == list(range(16))
    assert len(warnings_of(proc)) == 1 and "reordered by placement" in proc.stderr
    # processes left out are not counted as having changed rank
    assert (f"({r['moved']} of them changed rank; 2 of 18 processes left out)"
            in proc.stderr), proc.stderr
    # the candidate auto applied, named as evaluate names it ('auto_(TYX)' before)
    assert re.search(r"reordered by placement 'auto \([^)_]+\)'", proc.stderr), proc.stderr


def test_cart_placement_is_the_engines(built):
    """With TX on a 3-node ring of 2 cores, new rank k must run on node k // 2."""
    proc = mpirun(6, [built["topo_check"], "cart", "3x2", "10"], built["lib"],
                  {"RANKMAP_MACHINE": "torus:3:cores=2", "RANKMAP_NODE": nodes(6, 3),
                   "RANKMAP_MAPPING": "TX", "RANKMAP_VERBOSE": "false"})   # a "no" word
    r = result(proc)
    assert r["errors"] == 0
    assert [k // 2 for k in r["ranks"]] == [p % 3 for p in range(6)]
    assert r["moved"] > 0 and not warnings_of(proc)


@pytest.mark.parametrize("kind,nulls", [("graph", 1), ("adjacent", 0), ("dist", 0)])
def test_graph_topologies_reorder(built, kind, nulls):
    """Graph_create (7 of 8 processes), Dist_graph_create_adjacent, Dist_graph_create: the
    process with new rank v plays vertex v; neighbour lists, weights in the given order and all
    neighbourhood collectives are checked by the program."""
    proc = mpirun(8, [built["topo_check"], kind], built["lib"],
                  {"RANKMAP_MACHINE": "torus:4:cores=2", "RANKMAP_NODE": nodes(8, 4),
                   "RANKMAP_MAPPING": "TX"})
    r = result(proc)
    assert r["errors"] == 0, proc.stderr
    assert r["null"] == nulls and r["moved"] > 0
    used = [k for k in r["ranks"] if k >= 0]
    assert sorted(used) == list(range(8 - nulls))


def test_cart_create_64_processes_bgp(built):
    """The bigger case: 8x8 periodic grid, 64 processes on 16 fake nodes of bgp:512."""
    proc = mpirun(64, [built["topo_check"], "cart", "8x8", "11"], built["lib"],
                  {"RANKMAP_MACHINE": "bgp:512", "RANKMAP_NODE": nodes(64, 16)})
    r = result(proc)
    assert r["errors"] == 0 and r["moved"] > 0 and sorted(r["ranks"]) == list(range(64))


def test_fortran_cart_create_and_shift(built):
    proc = mpirun(9, [built["cart_shift"], "3", "3"], built["lib"],
                  {"RANKMAP_MACHINE": "torus:3:cores=3", "RANKMAP_NODE": nodes(9, 3),
                   "RANKMAP_MAPPING": "TX"})
    r = result(proc)
    assert r["errors"] == 0 and r["moved"] > 0


@pytest.mark.parametrize("kind,nulls", [("graph", 1), ("adjacent", 0), ("unweighted", 0),
                                         ("dist", 0)])
def test_fortran_graph_topologies_reorder(built, kind, nulls):
    """gfortran: MPI_GRAPH_CREATE, MPI_DIST_GRAPH_CREATE_ADJACENT (weighted and with the
    MPI_UNWEIGHTED sentinel) and MPI_DIST_GRAPH_CREATE with reorder = .true.: the placement is
    the engine's (TX on a 4-node ring of 2 cores: new rank k runs on node k // 2, while the
    launch put process p on node p mod 4), and the program checks the topology queries, the
    weights in the order given and that MPI_NEIGHBOR_ALLGATHER / MPI_NEIGHBOR_ALLTOALL deliver
    what the neighbour lists say."""
    proc = mpirun(8, [built["graph_check"], kind], built["lib"],
                  {"RANKMAP_MACHINE": "torus:4:cores=2", "RANKMAP_NODE": nodes(8, 4),
                   "RANKMAP_MAPPING": "TX", "RANKMAP_VERBOSE": "1"})
    r = result(proc)
    assert r["errors"] == 0, proc.stderr
    assert r["null"] == nulls and r["moved"] > 0
    placed = [(p, k) for p, k in enumerate(r["ranks"]) if k >= 0]
    assert sorted(k for _, k in placed) == list(range(8 - nulls))
    assert all(k // 2 == p % 4 for p, k in placed), r["ranks"]
    lines = warnings_of(proc)
    assert len(lines) == 1 and "reordered by placement" in lines[0], proc.stderr


def _slow_engine(tmp: Path) -> str:
    script = tmp / "slow-rankmap"
    script.write_text("#!/bin/sh\nsleep 60\n")
    script.chmod(0o755)
    return str(script)


@pytest.mark.parametrize("case", ["no machine", "bad machine", "engine missing", "timeout 0",
                                  "unknown node", "engine slow", "bad node list",
                                  "empty node entry"])
def test_fallback_keeps_a_valid_communicator(built, case):
    """Anything wrong: the MPI library's own order, exactly one warning line, no hang."""
    env = {"RANKMAP_MACHINE": "torus:3:cores=2", "RANKMAP_NODE": nodes(6, 3)}
    if case == "no machine":
        del env["RANKMAP_MACHINE"]
    elif case == "bad machine":
        env["RANKMAP_MACHINE"] = "nosuch:3"
    elif case == "engine missing":
        env["RANKMAP_BIN"] = "/nonexistent/rankmap"
    elif case == "timeout 0":
        env["RANKMAP_TIMEOUT"] = "0"
    elif case == "unknown node":
        env["RANKMAP_NODE"] = "0,1,2,0,1,99"
    elif case == "engine slow":
        env["RANKMAP_BIN"] = _slow_engine(built["dir"])
        env["RANKMAP_TIMEOUT"] = "1"
    elif case == "bad node list":
        env["RANKMAP_NODE"] = "0,1,2"
    elif case == "empty node entry":
        env["RANKMAP_NODE"] = "0,1,2,, 1,2"
    t0 = time.monotonic()
    proc = mpirun(6, [built["topo_check"], "cart", "3x2", "10"], built["lib"], env)
    r = result(proc)
    assert r["errors"] == 0 and r["moved"] == 0 and r["ranks"] == list(range(6))
    lines = warnings_of(proc)
    assert len(lines) == 1 and "not reordered" in lines[0], proc.stderr
    expected = {"no machine": "RANKMAP_MACHINE", "bad machine": "nosuch",
                "engine missing": "/nonexistent/rankmap", "timeout 0": "RANKMAP_TIMEOUT=0",
                "unknown node": "99", "engine slow": "longer than RANKMAP_TIMEOUT=1",
                "bad node list": "3 entries",
                "empty node entry": "process 3 of the communicator could not name its node"}[case]
    assert expected in lines[0]
    if case == "engine slow":
        assert time.monotonic() - t0 < 40


@pytest.mark.parametrize("n,dims", [(1, "1x1"), (3, "1x1")])
def test_one_process_or_one_cell_runs_no_engine(built, n, dims):
    """Nothing to reorder (one process, or a grid of one cell): the MPI library's own call, no
    engine started (N single-process communicators started N of them, a second or more each),
    so an engine that cannot run gives no warning."""
    # not periodic: Open MPI's own neighbour alltoall mixes up a periodic extent-1 dimension's
    # two self-neighbours
    proc = mpirun(n, [built["topo_check"], "cart", dims, "00"], built["lib"],
                  {"RANKMAP_MACHINE": "torus:3:cores=2", "RANKMAP_NODE": nodes(n, 3),
                   "RANKMAP_BIN": "/nonexistent/rankmap", "RANKMAP_VERBOSE": "1"})
    r = result(proc)
    assert r["errors"] == 0 and r["null"] == n - 1
    assert not warnings_of(proc), proc.stderr


def test_reorder_false_is_untouched(built):
    """The known program creates its Cartesian communicator with reorder = 0: no request."""
    proc = mpirun(6, [built["record_known"], "halo", "3", "2", "8"], built["lib"],
                  {"RANKMAP_MACHINE": "nosuch:3"})
    assert not warnings_of(proc)


def test_fortran_f08_cart_create_reorders(built):
    """`use mpi_f08` (its own entry points, mpi_cart_create_f08_, and no ierror argument):
    reordered like `use mpi`, and the verbose line says so."""
    proc = mpirun(8, [built["cart_f08"]], built["lib"],
                  {"RANKMAP_MACHINE": "torus:4:cores=2", "RANKMAP_NODE": nodes(8, 4),
                   "RANKMAP_MAPPING": "TX", "RANKMAP_VERBOSE": "1"})
    ranks = result(proc)["ranks"]
    assert ranks != list(range(8)) and all(k // 2 == p % 4 for p, k in enumerate(ranks))
    assert any("reordered by placement" in ln for ln in warnings_of(proc)), proc.stderr


def test_attribute_copy_callbacks_are_not_run(built):
    """The library's own communicator is no MPI_Comm_dup: a copy callback that refuses (and
    counts) is never called by MPI_Cart_create, with or without a machine to reorder on."""
    for env in ({"RANKMAP_MACHINE": "torus:4:cores=2", "RANKMAP_NODE": nodes(8, 4),
                 "RANKMAP_MAPPING": "TX"}, {}):
        proc = mpirun(8, [built["edge_cases"], "attr"], built["lib"], env)
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")]
        assert len(lines) == 8 and all("errors=0 copies=0" in ln for ln in lines), proc.stdout
        ranks = sorted(int(ln.rsplit("=", 1)[1]) for ln in lines)
        assert ranks == list(range(8))


def test_a_program_that_ignores_sigchld_is_still_reordered(built):
    """With SIGCHLD ignored the kernel reaped the engine and waitpid failed (ECHILD): the
    library said it 'cannot run the rankmap engine' and kept the order. The default
    disposition is set while the engine runs, and the program's restored."""
    env = {"RANKMAP_MACHINE": "torus:4:cores=2", "RANKMAP_NODE": nodes(8, 4),
           "RANKMAP_MAPPING": "TX"}
    proc = mpirun(8, [built["edge_cases"], "sigchld"], built["lib"], env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")]
    assert len(lines) == 8 and all("errors=0" in ln and "ignored=1" in ln for ln in lines)
    ranks = [int(ln.split("rank=")[1].split()[0]) for ln in lines]
    assert sorted(ranks) == list(range(8)) and not warnings_of(proc), proc.stderr


# ---- recording -----------------------------------------------------------------------------

def expected_known(p: int) -> dict:
    """(phase, src, dst) -> [bytes, messages] of record_known.c's 'known' mode."""
    exp = collections.defaultdict(lambda: [0, 0])

    def add(phase, s, d, nbytes):
        if s != d:
            exp[(phase, s, d)][0] += nbytes
            exp[(phase, s, d)][1] += 1

    cols = p // 3
    for r in range(p):
        add(0, r, (r + 1) % p, 1000)               # ring Isend
        add(0, r, (r - 1) % p, 500)                # reverse ring Sendrecv
        for _ in range(2):
            add(0, r, (r - 1) % p, 256)            # persistent, reversed communicator
        add(0, r, (r + 2) % p, 64)                 # Ssend of 8 doubles
        i, j = divmod(r, cols)                     # 3 x cols periodic halo, row-major
        for d, n in ((0, 100), (1, 200)):
            for s in (1, -1):
                ii, jj = (i + s) % 3, j
                if d == 1:
                    ii, jj = i, (j + s) % cols
                add(0, r, ii * cols + jj, n)
        for q in range(p):
            add(1, r, q, 32)                       # Alltoall 8 ints
            add(2, r, q, 64)                       # Alltoall 16 ints
    return exp


def read_csv(path):
    rows = {}
    lines = Path(path).read_text().splitlines()
    assert lines[0] == "src,dst,bytes,messages,phase"
    for ln in lines[1:]:
        if ln.startswith("#"):
            continue
        s, d, b, m, ph = map(int, ln.split(","))
        rows[(ph, s, d)] = [b, m]
    return rows, lines


def _churn_recorded_exactly(proc, out, n):
    printed = {}
    for ln in proc.stdout.splitlines():
        if ln.startswith("RESULT"):
            fields = dict(kv.split("=") for kv in ln.split()[1:])
            printed[len(printed)] = (int(fields["bytes"]), int(fields["msgs"]))
    assert len(printed) == n
    rows, _ = read_csv(out)
    sent = {}
    for (_ph, s, d), (b, m) in rows.items():
        assert d == (s + 1) % n
        sent[s] = (sent.get(s, (0, 0))[0] + b, sent.get(s, (0, 0))[1] + m)
    assert sorted(sent.values()) == sorted(printed.values())


def test_persistent_sends_recorded_through_frees_and_rehashes(built, tmp_path):
    """3,000 persistent sends alive on each rank, half freed and re-created with other
    sizes every round: the recording library's request table grows, reuses removed slots
    and rehashes, and every started byte is counted once (MPICH's int handles below)."""
    out = tmp_path / "churn.csv"
    proc = mpirun(2, [built["edge_cases"], "churn", "3000", "6"], built["lib"],
                  {"RANKMAP_RECORD": str(out)})
    _churn_recorded_exactly(proc, out, 2)


def test_recorded_matrix_is_exact(built, tmp_path):
    """Ring, reverse ring, persistent sends on another communicator, Ssend, a halo, then
    Alltoall in two MPI_Pcontrol phases: every (phase, src, dst) byte and message count."""
    out = tmp_path / "known.csv"
    mpirun(6, [built["record_known"], "known"], built["lib"], {"RANKMAP_RECORD": str(out)})
    rows, lines = read_csv(out)
    assert rows == dict(expected_known(6))
    assert lines[-1] == "# ranks 6"
    pat = parse_pattern(f"graph:{out}")
    assert [ph.name for ph in pat.phases] == ["0", "1", "2"] and pat.n_ranks == 6
    assert pat.phases[1].bytes.sum() == 6 * 5 * 32


def test_identical_phases_are_folded(built, tmp_path):
    """An iteration's steps between MPI_Pcontrol calls: the phases of equal rows fold into
    the first of them (bytes and messages times the iterations), a phase of the same pairs
    with other bytes stays apart, and the summary says how many phases the program made."""
    out = tmp_path / "steps.csv"
    mpirun(5, [built["record_known"], "steps", "3"], built["lib"], {"RANKMAP_RECORD": str(out)})
    rows, lines = read_csv(out)
    exp = {}
    for r in range(5):
        exp[(1, r, (r + 1) % 5)] = [300, 3]
        exp[(7, r, (r + 1) % 5)] = [101, 1]
        for q in range(5):
            if q != r:
                exp[(2, r, q)] = [48, 3]
    assert rows == exp
    assert lines[-2:] == ["# ranks 5", "# recorded phases 7"]
    pat = parse_pattern(f"graph:{out}")
    assert [ph.name for ph in pat.phases] == ["1", "2", "7"] and pat.n_ranks == 5
    from rankmap.pmpi.recording import summarize_recording
    line = summarize_recording(str(out)).lines()[1]
    assert line == ("phases: 3 (1: 1.5 KiB, 2: 960 B, 7: 505 B; 7 recorded, identical ones "
                    "folded into one with their bytes added up)")


def test_record_variables_take_yes_no_words_and_report_unknown_values(built, tmp_path):
    """RANKMAP_RECORD_COLLECTIVES=no leaves the collectives out, as 0 does; a value the
    library does not know is said once (rank 0) and the recording is still written."""
    out = tmp_path / "p2p.csv"
    proc = mpirun(6, [built["record_known"], "known"], built["lib"],
                  {"RANKMAP_RECORD": str(out), "RANKMAP_RECORD_COLLECTIVES": "no"})
    rows, _ = read_csv(out)
    assert rows == {k: v for k, v in expected_known(6).items() if k[0] == 0}
    assert "RANKMAP_RECORD" not in proc.stderr
    out = tmp_path / "odd.csv"
    proc = mpirun(6, [built["record_known"], "known"], built["lib"],
                  {"RANKMAP_RECORD": str(out), "RANKMAP_RECORD_FORMAT": "xml",
                   "RANKMAP_RECORD_COLLECTIVES": "maybe"})
    rows, _ = read_csv(out)
    assert rows == dict(expected_known(6))
    assert proc.stderr.count("RANKMAP_RECORD_FORMAT='xml' is not csv or mat") == 1
    assert proc.stderr.count("RANKMAP_RECORD_COLLECTIVES='maybe' is not 0 or 1") == 1


def test_reorder_off_leaves_topologies_to_the_mpi_library_silently(built):
    """RANKMAP_REORDER=0 (what record sets): a reorder=1 call is the MPI library's own, with
    a machine set and verbose on, and no line on stderr."""
    proc = mpirun(6, [built["topo_check"], "cart", "3x2", "10"], built["lib"],
                  {"RANKMAP_MACHINE": "torus:3:cores=2", "RANKMAP_NODE": nodes(6, 3),
                   "RANKMAP_MAPPING": "TX", "RANKMAP_VERBOSE": "1", "RANKMAP_REORDER": "0"})
    r = result(proc)
    assert r["errors"] == 0 and r["moved"] == 0 and r["ranks"] == list(range(6))
    assert not warnings_of(proc), proc.stderr


def test_record_runs_the_program_with_reordering_off(monkeypatch, tmp_path):
    """record only records: RANKMAP_REORDER=0 goes to the processes (it reordered the
    recorded program when RANKMAP_MACHINE was set, and warned when it was not), unless
    RANKMAP_REORDER=1 asks for both."""
    from rankmap.cli import record as record_cli
    seen = []

    class Launcher:                   # the launcher record starts: its environment is kept
        returncode = 0

        def __init__(self, cmd, env):
            seen.append(env)

        def wait(self, timeout=None):
            return 0

    monkeypatch.setattr(record_cli, "library_path", lambda mpicc=None: "/lib.so")
    monkeypatch.setattr(record_cli.subprocess, "Popen", Launcher)
    for given, want in ((None, "0"), ("1", "1")):
        if given is None:
            monkeypatch.delenv("RANKMAP_REORDER", raising=False)
        else:
            monkeypatch.setenv("RANKMAP_REORDER", given)
        record_cli._run_recording(["mpirun", "./app"], "/lib.so", str(tmp_path / "r.csv"),
                                  "csv", False)
        assert seen[-1]["RANKMAP_REORDER"] == want


def test_record_command_mat_and_summary(built, tmp_path, capsys, monkeypatch):
    """rankmap record --format mat: the dense matrix is the CSV summed over phases."""
    out = tmp_path / "known.mat"
    launcher = ["mpirun", "--oversubscribe", "--bind-to", "none", "-n", "6"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        launcher.append("--allow-run-as-root")
    monkeypatch.setenv("PATH", RANKMAP_DIR + os.pathsep + os.environ["PATH"])
    code = cli_main(["record", "-o", str(out), "--format", "mat", "--",
                     *launcher, built["record_known"], "known"])
    assert code == 0
    text = capsys.readouterr().out
    assert "ranks: 6" in text and "heaviest pairs" in text
    m = np.loadtxt(out)
    dense = np.zeros((6, 6))
    for (_, s, d), (b, _) in expected_known(6).items():
        dense[s, d] += b
    assert np.array_equal(m, dense)
    assert cli_main(["record", "-o", str(out), "--", *launcher, built["record_known"]]) == 2
    # an upper-case .MAT is a matrix too, as graph: reads it
    upper = tmp_path / "known.MAT"
    assert cli_main(["record", "-o", str(upper), "--", *launcher, built["record_known"],
                     "known"]) == 0
    assert np.array_equal(np.loadtxt(upper), dense)
    assert parse_pattern(f"graph:{upper}").phases[0].bytes.sum() == dense.sum()


def test_graph_of_recording_equals_stencil(built, tmp_path, capsys):
    """A recorded 4x4 periodic star halo gives the metrics of stencil:4x4:periodic."""
    out = tmp_path / "halo.csv"
    mpirun(16, [built["record_known"], "halo", "4", "4", "4096"], built["lib"],
           {"RANKMAP_RECORD": str(out)})
    results = []
    for spec in (f"graph:{out}", "stencil:4x4:periodic:bytes=4096"):
        assert cli_main(["compare", "--machine", "torus:4x4:cores=1", "--pattern", spec,
                         "--mappings", "XYT,random", "--format", "json"]) == 0
        data = json.loads(capsys.readouterr().out)
        results.append({c["mapping"]: c["metrics"] for c in data["candidates"]})
    assert results[0] == results[1]


def expected_collectives(p: int) -> dict:
    """(phase, src, dst) -> [bytes, messages] of collectives.f90 (4-byte integers)."""
    exp = collections.defaultdict(lambda: [0, 0])

    def add(phase, s, d, nbytes, msgs=1):
        exp[(phase, s, d)][0] += nbytes
        exp[(phase, s, d)][1] += msgs

    add(0, 0, 1, 40)
    add(0, 1, 2, 20)
    for r in range(p):
        if r + 1 < p:
            add(1, r, r + 1, 4)                                   # scan
            add(1, r, r + 1, 4)     # exscan: phase 6 has scan's rows, so it folds into 1
        add(2, r, (r + 1) % p, round(2 * (p - 1) * 16 / p), 2 * (p - 1))  # ring allreduce
        for q in range(p):
            if q != r:
                add(3, r, q, 4)                                   # reduce_scatter_block
                add(7, r, q, 12)                                  # allgatherv
        for q in ((r - 1) % p, (r + 1) % p):
            add(4, r, q, 4)                                       # neighbor_alltoall
        if r:
            add(5, 0, r, 8)                                       # ibcast from 0
    return exp


@pytest.mark.parametrize("program", ["collectives", "collectives_f08"])
def test_fortran_collectives_are_recorded(built, tmp_path, program):
    """Open MPI's Fortran layer calls PMPI_ directly: the library's own Fortran entry points
    record scan, exscan, iallreduce, reduce_scatter_block, neighbor_alltoall, ibcast and
    allgatherv, one MPI_PCONTROL phase each, from `use mpi` and from `use mpi_f08` (whose
    MPI_FINALIZE, too, was not seen: nothing was written)."""
    out = tmp_path / "f.csv"
    mpirun(4, [built[program]], built["lib"], {"RANKMAP_RECORD": str(out)})
    rows, _ = read_csv(out)
    assert rows == dict(expected_collectives(4))


def test_empty_messages_are_not_flows(built, tmp_path, capsys):
    """A count-0 send and the zero blocks of a sparse Alltoallv move no bytes: a pair that
    only had empty messages (0 -> 2) has no row, so the recording reads as a pattern; on a
    pair that moved bytes the empty message still counts as a message."""
    out = tmp_path / "z.csv"
    mpirun(4, [built["edge_cases"], "zero"], built["lib"], {"RANKMAP_RECORD": str(out)})
    rows, _ = read_csv(out)
    assert rows == {(0, r, (r + 1) % 4): [16, 2] for r in range(4)}
    assert parse_pattern(f"graph:{out}").phases[0].bytes.tolist() == [16.0] * 4


def test_sends_mpi_refuses_are_not_recorded(built, tmp_path):
    """Under MPI_ERRORS_RETURN a send to a rank past the communicator (on MPI_COMM_WORLD and
    on MPI_COMM_SELF, where translating it crashed the program) and one with a bad tag return
    MPI's error and move nothing: the recording holds the 8-byte ring only, and the program
    sees the same error codes as without the library."""
    out = tmp_path / "refused.csv"
    proc = mpirun(3, [built["edge_cases"], "refused"], built["lib"], {"RANKMAP_RECORD": str(out)})
    assert proc.stdout.count("RESULT refused=4") == 3
    rows, lines = read_csv(out)
    assert rows == {(0, r, (r + 1) % 3): [8, 1] for r in range(3)}
    assert lines[-1] == "# ranks 3"


def test_allreduce_shares_are_rounded_once(built, tmp_path):
    """100 dot products (MPI_Allreduce of 8 bytes) on 7 processes: each sends 2(7-1)/7 x 8 =
    13.71 bytes a call to the next process, 1371 in all; rounding every call gave 1400."""
    out = tmp_path / "d.csv"
    mpirun(7, [built["edge_cases"], "dots", "100"], built["lib"], {"RANKMAP_RECORD": str(out)})
    rows, _ = read_csv(out)
    assert rows == {(0, r, (r + 1) % 7): [1371, 1200] for r in range(7)}
    # a phase a call (MPI_Pcontrol): the 100 identical phases fold and are rounded once, not
    # each (each phase's 13.71 rounded to 14 made 1400; before the fold to 13, 1300)
    mpirun(7, [built["edge_cases"], "pdots", "100"], built["lib"],
           {"RANKMAP_RECORD": str(tmp_path / "p.csv")})
    rows, _ = read_csv(tmp_path / "p.csv")
    assert rows == {(1, r, (r + 1) % 7): [1371, 1200] for r in range(7)}


def test_a_file_that_appears_during_the_run_is_not_replaced(built, tmp_path, capsys,
                                                           monkeypatch):
    """The program creates the output while it runs: neither `record` nor the library alone
    replaces it; both say where the recording is kept instead."""
    launcher = ["mpirun", "--oversubscribe", "--bind-to", "none", "-n", "2"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        launcher.append("--allow-run-as-root")
    monkeypatch.setenv("PATH", RANKMAP_DIR + os.pathsep + os.environ["PATH"])
    out = tmp_path / "r.csv"
    code = cli_main(["record", "-o", str(out), "--", *launcher, built["edge_cases"], "appear",
                     str(out)])
    err = capsys.readouterr().err
    assert code == 2 and out.read_text() == "precious\n"
    kept = re.search(r"the recording is kept in (\S+)", err).group(1)
    assert read_csv(kept)[0] == {(0, 0, 1): [8, 1], (0, 1, 0): [8, 1]}
    direct = tmp_path / "d.csv"
    proc = mpirun(2, [built["edge_cases"], "appear", str(direct)], built["lib"],
                  {"RANKMAP_RECORD": str(direct)})
    assert direct.read_text() == "precious\n"
    kept = re.search(r"the recording is in (\S+)", proc.stderr).group(1)
    assert read_csv(kept)[0] == {(0, 0, 1): [8, 1], (0, 1, 0): [8, 1]}
    # with --force the program's file is replaced by the recording, as asked
    assert cli_main(["record", "--force", "-o", str(out), "--", *launcher,
                     built["edge_cases"], "appear", str(out)]) == 0
    assert read_csv(out)[0] == {(0, 0, 1): [8, 1], (0, 1, 0): [8, 1]}


def test_record_summary_of_a_program_that_sends_nothing(built, tmp_path, capsys, monkeypatch):
    """Nothing sent: the summary still gives the processes' count from the file."""
    launcher = ["mpirun", "--oversubscribe", "--bind-to", "none", "-n", "3"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        launcher.append("--allow-run-as-root")
    monkeypatch.setenv("PATH", RANKMAP_DIR + os.pathsep + os.environ["PATH"])
    for name in ("n.csv", "n.mat"):
        assert cli_main(["record", "-o", str(tmp_path / name), "--", *launcher,
                         built["edge_cases"], "none"]) == 0
        out = capsys.readouterr().out
        assert "ranks: 3" in out and "total: 0 B" in out


def test_record_reads_rank_count_and_messages(tmp_path):
    """graph: reads the recorded CSV header, message column and '# ranks N' line."""
    f = tmp_path / "r.csv"
    f.write_text("src,dst,bytes,messages,phase\n0,1,10,2,0\n1,0,5,1,3\n# ranks 4\n")
    pat = parse_pattern(f"graph:{f}")
    assert pat.n_ranks == 4 and [p.name for p in pat.phases] == ["0", "3"]
    m = tmp_path / "r.mat"
    m.write_text("0 10 0\n5 0 0\n0 0 0\n")
    pat = parse_pattern(f"graph:{m}")
    assert pat.n_ranks == 3 and sorted(pat.phases[0].bytes.tolist()) == [5.0, 10.0]
    (tmp_path / "bad.mat").write_text("0 1\n1 0 2\n")
    with pytest.raises(Exception, match="3 values"):
        parse_pattern(f"graph:{tmp_path / 'bad.mat'}")


def test_record_summary_of_many_phases(tmp_path):
    """Per-phase bytes in order of first appearance (rows sorted by source, as the library
    writes them, interleave the phases), and a summary line that lists 8 phases and counts
    the others, not one line of every phase."""
    from rankmap.pmpi.recording import SHOWN_PHASES, summarize_recording
    f = tmp_path / "many.csv"
    rows = [f"{r},{(r + 1) % 3},{10 * (p + 1)},1,{p + 1}" for r in range(3) for p in range(20)]
    f.write_text("src,dst,bytes,messages,phase\n" + "\n".join(rows) + "\n")
    summary = summarize_recording(str(f))
    assert summary.phases == [(str(p + 1), 30.0 * (p + 1)) for p in range(20)]
    line = summary.lines()[1]
    assert line.startswith("phases: 20 (1: 30 B, 2: 60 B,")
    assert line.endswith(f"... {20 - SHOWN_PHASES} more)") and line.count(":") == 1 + SHOWN_PHASES
    assert summary.total_bytes == 3 * 10 * sum(range(1, 21)) and summary.total_messages == 60


# ---- MPICH ---------------------------------------------------------------------------------

MPICH_TOOLS = ("mpicc.mpich", "mpif90.mpich", "mpirun.mpich")


@pytest.fixture(scope="session")
def mpich(tmp_path_factory):
    """The library built with Debian's MPICH (beside Open MPI) and the test programs."""
    missing = [t for t in MPICH_TOOLS if shutil.which(t) is None]
    if missing:
        message = (f"MPICH tests need {', '.join(missing)} (apt-get install mpich: Debian's "
                   "MPICH installs beside Open MPI)")
        if os.environ.get("RANKMAP_REQUIRE_MPI") == "1":
            pytest.fail(message + " (RANKMAP_REQUIRE_MPI=1)")
        pytest.skip(message)
    from rankmap.pmpi.build import library_path
    out = tmp_path_factory.mktemp("pmpi-mpich")
    progs = {}
    for name, cc in (("topo_check", "mpicc.mpich"), ("record_known", "mpicc.mpich"),
                     ("graph_check", "mpif90.mpich"), ("collectives", "mpif90.mpich"),
                     ("collectives_f08", "mpif90.mpich"), ("inplace_f08", "mpif90.mpich"),
                     ("persist_f08", "mpif90.mpich"),
                     ("cart_f08", "mpif90.mpich"), ("edge_cases", "mpicc.mpich")):
        progs[name] = compile_program(name, cc, out)
    return {"lib": library_path("mpicc.mpich"), **progs}


def mpich_run(n, argv, lib, env):
    """Run under MPICH's hydra (it passes the whole environment to the processes)."""
    full = _clean_env()
    full.update(env, LD_PRELOAD=lib)
    proc = subprocess.run(["mpirun.mpich", "-n", str(n), *argv], capture_output=True,
                          text=True, timeout=TIMEOUT, env=full)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_mpich_persistent_sends_recorded_through_frees_and_rehashes(mpich, tmp_path):
    out = tmp_path / "churn.csv"
    proc = mpich_run(2, [mpich["edge_cases"], "churn", "3000", "6"], mpich["lib"],
                     {"RANKMAP_RECORD": str(out)})
    _churn_recorded_exactly(proc, out, 2)


def test_mpich_reorder(mpich, built):
    """The library built with mpicc.mpich (its own cache entry) reorders MPI_Cart_create."""
    assert mpich["lib"] != built["lib"]
    proc = mpich_run(6, [mpich["topo_check"], "cart", "3x2", "10"], mpich["lib"],
                     {"RANKMAP_MACHINE": "torus:3:cores=2", "RANKMAP_NODE": nodes(6, 3),
                      "RANKMAP_MAPPING": "TX"})
    r = result(proc)
    assert r["errors"] == 0 and [k // 2 for k in r["ranks"]] == [p % 3 for p in range(6)]


def test_mpich_recorded_matrix_is_exact(mpich, tmp_path):
    """The known program's matrix under MPICH equals the expected one (and so Open MPI's)."""
    out = tmp_path / "known.csv"
    mpich_run(6, [mpich["record_known"], "known"], mpich["lib"], {"RANKMAP_RECORD": str(out)})
    rows, lines = read_csv(out)
    assert rows == dict(expected_known(6))
    assert lines[-1] == "# ranks 6"


@pytest.mark.parametrize("program", ["collectives", "collectives_f08"])
def test_mpich_fortran_collectives_and_phases(mpich, tmp_path, program):
    """Under MPICH the Fortran collectives give Open MPI's matrix, and each MPI_PCONTROL
    starts one phase (its Fortran routine calls the C MPI_Pcontrol, which must not count
    again); `use mpi_f08` (mpi_*_f08ts_ entry points, which call the C functions) too."""
    out = tmp_path / "f.csv"
    mpich_run(4, [mpich[program]], mpich["lib"], {"RANKMAP_RECORD": str(out)})
    rows, _ = read_csv(out)
    assert rows == dict(expected_collectives(4))


def test_f08_alltoallv_in_place_under_both_libraries(built, mpich, tmp_path):
    """MPI_IN_PLACE in a `use mpi_f08` MPI_ALLTOALLV is recognised (the receive counts are
    recorded, not the ignored send counts) under Open MPI, which passes its address, and
    MPICH, which passes a C descriptor of it."""
    exp = {(0, s, d): [8, 1] for s in range(3) for d in range(3) if s != d}
    out = tmp_path / "o.csv"
    mpirun(3, [built["inplace_f08"]], built["lib"], {"RANKMAP_RECORD": str(out)})
    assert read_csv(out)[0] == exp
    out = tmp_path / "m.csv"
    mpich_run(3, [mpich["inplace_f08"]], mpich["lib"], {"RANKMAP_RECORD": str(out)})
    assert read_csv(out)[0] == exp


def test_f08_persistent_sends_without_ierror(built, mpich, tmp_path):
    """`use mpi_f08` MPI_Send_init without its optional ierror (NULL in the call): no crash
    (every rank died of a NULL read), and both starts are counted, under both libraries."""
    exp = {(0, r, (r + 1) % 4): [48, 2] for r in range(4)}
    out = tmp_path / "o.csv"
    mpirun(4, [built["persist_f08"]], built["lib"], {"RANKMAP_RECORD": str(out)})
    assert read_csv(out)[0] == exp
    out = tmp_path / "m.csv"
    mpich_run(4, [mpich["persist_f08"]], mpich["lib"], {"RANKMAP_RECORD": str(out)})
    assert read_csv(out)[0] == exp


def test_recording_under_thread_multiple_is_exact(built, mpich, tmp_path):
    """Four threads of each process send 2,000 messages each at once (MPI_THREAD_MULTIPLE):
    every byte and message is counted (without the recording's lock, MPICH runs lost some
    and one aborted in the communicator cache), under both libraries."""
    exp = {(0, r, (r + 1) % 3): [4 * 2000 * 8, 4 * 2000] for r in range(3)}
    for run, lib, prog, name in ((mpirun, built["lib"], built["record_known"], "o.csv"),
                                 (mpich_run, mpich["lib"], mpich["record_known"], "m.csv")):
        out = tmp_path / name
        proc = run(3, [prog, "threads", "4", "2000"], lib, {"RANKMAP_RECORD": str(out)})
        if "NOMULTI" in proc.stdout:
            continue
        assert read_csv(out)[0] == exp, name


def test_mpich_f08_cart_and_attributes(mpich):
    """MPICH: `use mpi_f08` reorders, and a refusing copy callback is never called."""
    env = {"RANKMAP_MACHINE": "torus:4:cores=2", "RANKMAP_NODE": nodes(8, 4),
           "RANKMAP_MAPPING": "TX"}
    ranks = result(mpich_run(8, [mpich["cart_f08"]], mpich["lib"], env))["ranks"]
    assert ranks != list(range(8)) and all(k // 2 == p % 4 for p, k in enumerate(ranks))
    proc = mpich_run(8, [mpich["edge_cases"], "attr"], mpich["lib"], env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")]
    assert len(lines) == 8 and all("errors=0 copies=0" in ln for ln in lines), proc.stdout


@pytest.mark.parametrize("kind", ["adjacent", "unweighted"])
def test_mpich_fortran_dist_graph(mpich, kind):
    """MPICH's Fortran sentinels (MPI_UNWEIGHTED) are found: the Fortran call reorders."""
    proc = mpich_run(8, [mpich["graph_check"], kind], mpich["lib"],
                     {"RANKMAP_MACHINE": "torus:4:cores=2", "RANKMAP_NODE": nodes(8, 4),
                      "RANKMAP_MAPPING": "TX"})
    r = result(proc)
    assert r["errors"] == 0, proc.stderr
    assert r["moved"] > 0 and all(k // 2 == p % 4 for p, k in enumerate(r["ranks"]))


def test_record_under_mpich_builds_the_library_for_mpich(mpich, tmp_path, capsys,
                                                          monkeypatch):
    """rankmap record -- mpirun.mpich ...: the library is built with mpicc.mpich (mpicc is
    Open MPI's here), so the MPICH program records instead of failing in its first call."""
    from rankmap.pmpi.environment import mpicc_for_launcher
    monkeypatch.delenv("RANKMAP_MPICC", raising=False)
    assert mpicc_for_launcher("mpirun.mpich") == "mpicc.mpich"
    assert mpicc_for_launcher("mpirun.mpich", "mpicc") == "mpicc"      # --mpicc wins
    monkeypatch.setenv("RANKMAP_MPICC", "mpicc")
    assert mpicc_for_launcher("mpirun.mpich") is None                   # so does the variable
    monkeypatch.delenv("RANKMAP_MPICC")
    monkeypatch.setenv("PATH", RANKMAP_DIR + os.pathsep + os.environ["PATH"])
    out = tmp_path / "known.csv"
    assert cli_main(["record", "-o", str(out), "--", "mpirun.mpich", "-n", "6",
                     mpich["record_known"], "known"]) == 0
    rows, _lines = read_csv(out)
    assert rows == dict(expected_known(6))


def test_launch_reorder_under_mpich_preloads_the_mpich_build(mpich, capsys, monkeypatch):
    monkeypatch.delenv("RANKMAP_MPICC", raising=False)
    assert cli_main(["launch", "--reorder", "-m", "torus:3:cores=2", "--dry-run", "--",
                     "mpirun.mpich", "-n", "6", mpich["topo_check"]]) == 0
    line = capsys.readouterr().out
    assert f"LD_PRELOAD={mpich['lib']}" in line and "-genvlist" in line


# ---- command line (no MPI run) -------------------------------------------------------------

def test_place_request_errors_are_one_line(tmp_path, capsys):
    req = tmp_path / "req.txt"
    req.write_text("rankmap-pmpi-request 1\ncall MPI_Cart_create\nmachine torus:3:cores=2\n"
                   "mapping TX\nstencil diamond\nseed 0\nprocesses 2\nranks 2\ndims 2\n"
                   "periods 0\nlabels\n0\n1\n")
    assert cli_main(["pmpi", "place", str(req), "-o", str(tmp_path / "res")]) == 2
    err = capsys.readouterr().err
    assert "RANKMAP_STENCIL='diamond'" in err and len(err.strip().splitlines()) == 1
    graph = tmp_path / "graph.txt"      # a weight past 64 bits: one line, not a traceback
    graph.write_text("rankmap-pmpi-request 1\ncall MPI_Graph_create\nmachine torus:3:cores=2\n"
                     "mapping TX\nseed 0\nprocesses 2\nranks 2\nlabels\n0\n1\nedges 1\n"
                     "0 1 99999999999999999999\n")
    assert cli_main(["pmpi", "place", str(graph), "-o", str(tmp_path / "res")]) == 2
    err = capsys.readouterr().err
    assert "bad edge list" in err and len(err.strip().splitlines()) == 1
    req.write_text(req.read_text().replace("diamond", "box"))
    assert cli_main(["pmpi", "place", str(req), "-o", str(tmp_path / "res")]) == 0
    text = (tmp_path / "res").read_text().split()
    assert text[:4] == ["rankmap-pmpi-result", "1", "mapping", "TX"]
    assert sorted(map(int, text[5:])) == [0, 1]
    # an existing file is kept without --force, as every other output
    assert cli_main(["pmpi", "place", str(req), "-o", str(tmp_path / "res")]) == 2
    assert "exists" in capsys.readouterr().err
    assert cli_main(["pmpi", "place", str(req), "-o", str(tmp_path / "res"), "--force"]) == 0


def test_launch_reorder_exports_the_library(monkeypatch, capsys, tmp_path):
    _need(["mpicc"])
    monkeypatch.setenv("RANKMAP_STENCIL", "box")
    code = cli_main(["launch", "--reorder", "--machine", "torus:4:cores=2", "--dry-run", "--",
                     "mpirun.openmpi", "-n", "8", "./app"])
    assert code == 0
    line = capsys.readouterr().out.strip()
    assert re.search(r"LD_PRELOAD=\S*librankmap_pmpi\.so", line)
    assert "RANKMAP_MACHINE=torus:4:cores=2" in line and "RANKMAP_STENCIL=box" in line
    assert "-x LD_PRELOAD" in line and "-x RANKMAP_MACHINE" in line and "-x RANKMAP_BIN" in line


def test_one_build_per_compiler(built):
    """mpicc and mpicc.openmpi are one compiler: launch --reorder and pmpi path share a build."""
    from rankmap.pmpi.build import library_path
    if shutil.which("mpicc.openmpi") is None:
        pytest.skip("no mpicc.openmpi on PATH")
    assert library_path("mpicc.openmpi") == built["lib"]


def test_the_launcher_is_found_past_wrappers_and_hydras_own_env_option_kept():
    """record and launch --reorder put their variables on the launcher's command line: past
    env/timeout/nice (the wrapper's name picked Open MPI's library for an MPICH program,
    which failed in its first MPI call), and merged with a -genvall/-genvlist/-genvnone of
    the user's (hydra refuses a second one: 'error parsing parameters')."""
    from rankmap.pmpi.environment import launcher_env_args, launcher_index
    assert launcher_index(["env", "OMP_NUM_THREADS=1", "mpirun.mpich", "-n", "3"]) == 2
    assert launcher_index(["env", "-u", "X", "A=1", "srun", "./a"]) == 4
    assert launcher_index(["timeout", "-s", "9", "100", "mpirun.mpich", "./a"]) == 4
    assert launcher_index(["nice", "-n", "5", "srun", "./a"]) == 3
    assert launcher_index(["mpirun", "./a"]) == 0
    names = ["A", "B"]
    assert launcher_env_args(["mpirun.mpich", "-genvall", "-n", "2", "./a"], names) == \
        ["mpirun.mpich", "-genvall", "-n", "2", "./a"]
    assert launcher_env_args(["mpirun.mpich", "-genvlist", "PATH", "-n", "2", "./a"], names) \
        == ["mpirun.mpich", "-genvlist", "PATH,A,B", "-n", "2", "./a"]
    assert launcher_env_args(["mpirun.mpich", "-genvnone", "-n", "2", "./a"], names) == \
        ["mpirun.mpich", "-genvlist", "A,B", "-n", "2", "./a"]
    # the program's own -genvall is the program's
    assert launcher_env_args(["env", "X=1", "mpirun.mpich", "-n", "2", "./a", "-genvall"],
                             ["A"]) == ["env", "X=1", "mpirun.mpich", "-genvlist", "A", "-n",
                                        "2", "./a", "-genvall"]
    assert launcher_env_args(["timeout", "100", "mpirun.openmpi", "-n", "2", "./a"], ["A"]) \
        == ["timeout", "100", "mpirun.openmpi", "-x", "A", "-n", "2", "./a"]


# ---- invalid arguments, unknown settings, grids with dimensions of width 1 -----------------

#: the job the tester's reproductions ran: 8 processes on a 2x2x2 torus, nodes shuffled
SHUFFLED = {"RANKMAP_MACHINE": "torus:2x2x2:cores=1", "RANKMAP_NODE": "0,5,3,6,1,7,2,4"}


@pytest.fixture(scope="session")
def bad_args(built):
    """The bad_args program (Open MPI)."""
    return compile_program("bad_args", "mpicc", built["dir"])


def _result_lines(proc):
    return sorted(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT"))


def test_a_null_output_pointer_is_the_mpi_librarys_error(built, bad_args):
    """MPI_Cart_create(..., NULL) on 8 processes of a 2x2 grid: the 4 processes outside it
    crashed writing MPI_COMM_NULL through the pointer. The creators now answer as the MPI
    library does without rankmap (an error class on every process), with the engine not
    run, the distributed graphs too (MPI_Graph_create is left out: Open MPI's own crashes)."""
    env = dict(SHUFFLED, RANKMAP_VERBOSE="1")
    plain = mpirun(8, [bad_args, "nullout"], None, env)
    proc = mpirun(8, [bad_args, "nullout"], built["lib"], env)
    lines = _result_lines(proc)
    assert len(lines) == 8 and lines == _result_lines(plain), proc.stdout + proc.stderr
    assert all(" cart=0" not in ln and " adjacent=0" not in ln for ln in lines), lines
    assert not warnings_of(proc), proc.stderr


def test_a_negative_source_weight_is_left_to_the_mpi_library(built, bad_args):
    """A negative source weight (destination weights valid): the engine ran and the ranks
    were reordered before the MPI library refused the call. Now the answer is the MPI
    library's own, and nothing was reordered."""
    env = dict(SHUFFLED, RANKMAP_VERBOSE="1")
    plain = mpirun(8, [bad_args, "negweight"], None, env)
    proc = mpirun(8, [bad_args, "negweight"], built["lib"], env)
    assert _result_lines(proc) == _result_lines(plain), proc.stdout + proc.stderr
    assert "reordered by placement" not in proc.stderr, proc.stderr


def test_mpich_negative_source_weight_and_freed_communicator(mpich, tmp_path):
    """MPICH takes a negative source weight: the library reordered such a graph; now it keeps
    the MPI library's order (one line says why). A freed communicator: MPICH's error named
    internal_Comm_test_inter (the library's own check ran first), now MPI_Cart_create."""
    exe = compile_program("bad_args", "mpicc.mpich", tmp_path)
    env = dict(SHUFFLED, RANKMAP_VERBOSE="1")
    proc = mpich_run(8, [exe, "negweight"], mpich["lib"], env)
    lines = _result_lines(proc)
    assert lines == sorted(f"RESULT rank={r} rc=0 newrank={r}" for r in range(8)), proc.stdout
    assert "reordered by placement" not in proc.stderr
    assert "invalid arguments are left to the MPI library" in proc.stderr, proc.stderr
    full = _clean_env()
    full.update(env, LD_PRELOAD=mpich["lib"])
    freed = subprocess.run(["mpirun.mpich", "-n", "2", exe, "freed"], capture_output=True,
                           text=True, timeout=TIMEOUT, env=full)
    out = freed.stdout + freed.stderr
    assert freed.returncode != 0 and "accepted" not in out
    assert "Cart_create" in out and "Comm_test_inter" not in out, out


def test_unknown_reorder_and_verbose_values_are_said_once_and_read_safely(built):
    """RANKMAP_REORDER=disabled reordered, silently: now one line names it and the launcher's
    ranks are kept. RANKMAP_VERBOSE=maybe printed verbose lines: now one line names it and it
    is off. A level (RANKMAP_VERBOSE=2) is on."""
    env = {"RANKMAP_MACHINE": "torus:3:cores=2", "RANKMAP_NODE": nodes(6, 3),
           "RANKMAP_MAPPING": "TX"}
    argv = [built["topo_check"], "cart", "3x2", "10"]
    proc = mpirun(6, argv, built["lib"], dict(env, RANKMAP_REORDER="disabled"))
    r = result(proc)
    assert r["errors"] == 0 and r["moved"] == 0 and r["ranks"] == list(range(6))
    assert warnings_of(proc) == ["rankmap: RANKMAP_REORDER='disabled' is not 0 or 1: ranks "
                                 "are not reordered"], proc.stderr
    proc = mpirun(6, argv, built["lib"], dict(env, RANKMAP_VERBOSE="maybe"))
    r = result(proc)
    assert r["errors"] == 0 and r["moved"] > 0
    assert warnings_of(proc) == ["rankmap: RANKMAP_VERBOSE='maybe' is not 0 or 1: no verbose "
                                 "lines"], proc.stderr
    proc = mpirun(6, argv, built["lib"], dict(env, RANKMAP_VERBOSE="2"))
    lines = warnings_of(proc)
    assert len(lines) == 1 and "reordered by placement" in lines[0], proc.stderr
    # launch --reorder refuses what the library would only warn about
    from rankmap.errors import RankmapError
    from rankmap.pmpi.environment import check_reorder_variables
    check_reorder_variables({"RANKMAP_VERBOSE": "2"})
    with pytest.raises(RankmapError, match="RANKMAP_VERBOSE='maybe'"):
        check_reorder_variables({"RANKMAP_VERBOSE": "maybe"})


def test_grid_of_seven_dimensions_with_width_one_is_reordered(built):
    """MPI_Dims_create(8, 7) gives 2x2x2x1x1x1x1: the engine refused it (1 to 6 dimensions)
    and nothing was reordered. The dimensions of width 1 hold no neighbour: the engine places
    the 2x2x2 grid, and every coordinate, shift and halo exchange of the program's 7-D grid
    is right (topo_check checks them against MPI_Cart_coords)."""
    # not periodic: Open MPI's own neighbour collectives mix up the two neighbours of a
    # periodic dimension of width 1 or 2 (the same process twice)
    proc = mpirun(8, [built["topo_check"], "cart", "2x2x2x1x1x1x1", "0000000"], built["lib"],
                  dict(SHUFFLED, RANKMAP_VERBOSE="1"))
    r = result(proc)
    assert r["errors"] == 0 and r["null"] == 0 and r["moved"] > 0, proc.stderr
    assert sorted(r["ranks"]) == list(range(8))
    lines = warnings_of(proc)
    assert len(lines) == 1 and "8 ranks reordered by placement" in lines[0], proc.stderr


def _request(tmp_path, dims, periods, ranks, procs=None):
    procs = procs or ranks
    path = tmp_path / "request.txt"
    path.write_text("rankmap-pmpi-request 1\ncall MPI_Cart_create\nmachine torus:2x2x2:cores=1\n"
                    f"mapping auto\nstencil star\nseed 0\nprocesses {procs}\nranks {ranks}\n"
                    f"dims {dims}\nperiods {periods}\nlabels\n"
                    + "".join(f"{p % 8}\n" for p in range(procs)))
    return path


def test_place_drops_width_one_dimensions_and_names_bad_dims(tmp_path, capsys):
    """The engine sees the grid without its dimensions of width 1 (the same flows, so the same
    placement); more than 6 wider than 1 is said plainly; a bad width is named."""
    from rankmap.pmpi.place import place_request, read_request, request_pattern
    wide = read_request(str(_request(tmp_path, "2 1 2 1 2 1 1", "1 1 0 1 1 1 1", 8)))
    narrow = read_request(str(_request(tmp_path, "2 2 2", "1 0 1", 8)))
    a, b = request_pattern(wide), request_pattern(narrow)
    assert a.grid == (2, 2, 2) and a.periodic == b.periodic
    assert sorted(zip(a.phases[0].src, a.phases[0].dst)) == \
        sorted(zip(b.phases[0].src, b.phases[0].dst))
    assert list(place_request(wide)[0]) == list(place_request(narrow)[0])
    req = _request(tmp_path, " ".join(["2"] * 7), " ".join(["0"] * 7), 128)
    assert cli_main(["pmpi", "place", str(req), "-o", str(tmp_path / "res")]) == 2
    err = capsys.readouterr().err.strip()
    assert "7 dimensions wider than 1; rankmap places grids of up to 6" in err
    assert len(err.splitlines()) == 1
    req = _request(tmp_path, "2 -2", "1 1", 4)
    assert cli_main(["pmpi", "place", str(req), "-o", str(tmp_path / "res")]) == 2
    err = capsys.readouterr().err.strip()
    assert "-2" in err and len(err.splitlines()) == 1, err


def test_pmpi_path_refuses_an_empty_mpicc_and_names_the_cache_setting(monkeypatch, capsys,
                                                                       tmp_path):
    """--mpicc '' built with the default mpicc; a RANKMAP_CACHE that cannot be a folder gave
    "'/dev/null/x': Not a directory" without naming the setting."""
    for action in ("path", "build"):
        assert cli_main(["pmpi", action, "--mpicc", ""]) == 2
        err = capsys.readouterr().err.strip()
        assert "--mpicc ''" in err and len(err.splitlines()) == 1, err
    _need(["mpicc"])
    monkeypatch.setenv("RANKMAP_CACHE", "/dev/null/x")
    assert cli_main(["pmpi", "path"]) == 2
    err = capsys.readouterr().err.strip()
    assert "RANKMAP_CACHE='/dev/null/x'" in err and "Not a directory" in err, err
    assert len(err.splitlines()) == 1
