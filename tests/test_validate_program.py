"""``rankmap validate -- PROGRAM``: the user's own smpicc-built program simulated under every
placement, against the prediction of a stated or recorded pattern."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from rankmap.cli import main
from rankmap.simgrid import INSTALL_HINT, smpi_available

needs_smpi = pytest.mark.skipif(not smpi_available(), reason=INSTALL_HINT)

SOURCE = Path(__file__).parent / "smpi_programs" / "halo_phases.c"


def write_shim(folder: Path) -> Path:
    """The README's recipe: ``rankmap simgrid shim -o shim.c`` (a do-nothing MPI_Pcontrol,
    on which SimGrid 3.32 aborts, and Open MPI's MPI_Dims_create), to link into SMPI builds."""
    shim = folder / "shim.c"
    if not shim.exists():
        assert main(["simgrid", "shim", "-o", str(shim)]) == 0
    return shim


@pytest.fixture(scope="module")
def smpi_program(tmp_path_factory):
    """halo_phases.c built with smpicc and the shim."""
    if not smpi_available():
        pytest.skip(INSTALL_HINT)
    out = tmp_path_factory.mktemp("smpi_prog")
    stub = write_shim(out)
    exe = out / "halo_phases.smpi"
    subprocess.run(["smpicc", "-O1", "-o", str(exe), str(SOURCE), str(stub)],
                   check=True, timeout=180, capture_output=True)
    return str(exe)


def _open_mpi_launcher() -> list[str]:
    """Open MPI's mpirun for the tests' processes; skip (fail under RANKMAP_REQUIRE_MPI=1)
    without its mpicc and mpirun."""
    for tool in ("mpicc", "mpirun"):
        if shutil.which(tool) is None:
            message = f"needs {tool} (apt-get install openmpi-bin libopenmpi-dev)"
            if os.environ.get("RANKMAP_REQUIRE_MPI") == "1":
                pytest.fail(message)
            pytest.skip(message)
    launcher = ["mpirun", "--oversubscribe", "--bind-to", "none"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        launcher.append("--allow-run-as-root")
    return launcher


def _validate(tmp_path, capsys, *args, timeout="120", status=0):
    js = tmp_path / "v.json"
    code = main(["validate", *args[:-1], "--json", str(js), "--force", "--timeout", timeout,
                 "--", *args[-1]])
    captured = capsys.readouterr()
    assert code == status, captured.err
    return json.loads(js.read_text()), captured.out + captured.err


@needs_smpi
def test_own_program_matches_the_stated_pattern(smpi_program, tmp_path, capsys):
    """36 ranks of a 6x6 periodic halo (64 KiB a neighbour) on a 3x3 torus of 4 cores (odd
    sides: SimGrid routes exactly like rankmap): the program's simulated time equals the
    stated stencil's prediction under every placement, and ITERS multiplies it."""
    doc, out = _validate(tmp_path, capsys, "-m", "torus:3x3:cores=4", "-p",
                         "stencil:6x6:periodic:bytes=64KiB", "--mappings",
                         "inorder,XYT,random,greedy", [smpi_program, "6", "6", "65536", "1"])
    assert "SMPI program: halo_phases.smpi" in out and "routes identical" in out
    # what reproduces the run is in the JSON: allocation, seed, the program's command
    assert doc["options"]["allocation"]["nodes"] == 9 and doc["options"]["seed"] == 0
    assert doc["options"]["command"][1:] == ["6", "6", "65536", "1"] and doc["skipped"] == {}
    rows = doc["candidates"]
    assert len(rows) == 4 and len({round(r["simulated_s"], 9) for r in rows}) > 1
    for r in rows:
        assert r["simulated_s"] == pytest.approx(r["predicted_s"], rel=0.02), r
        assert r["program"] == "halo_phases.smpi"
    # the program's arguments reach it: two iterations take twice as long
    doc2, _ = _validate(tmp_path, capsys, "-m", "torus:3x3:cores=4", "-p",
                        "stencil:6x6:periodic:bytes=64KiB", "--mappings", "random",
                        [smpi_program, "6", "6", "65536", "2"])
    one = next(r for r in rows if r["mapping"] == "random")
    assert doc2["candidates"][0]["simulated_s"] == pytest.approx(2 * one["simulated_s"],
                                                                 rel=0.01)


@needs_smpi
def test_a_timed_out_simulation_is_stopped(smpi_program, tmp_path, capsys):
    """--timeout stops SimGrid's smpimain too, not only the smpirun script that started it
    (it went on using a core after rankmap had moved on)."""
    import time

    doc, out = _validate(tmp_path, capsys, "-m", "torus:3x3:cores=4", "-p",
                         "stencil:6x6:periodic:bytes=64KiB", "--mappings", "XYT",
                         [smpi_program, "6", "6", "65536", "100000000"], timeout="1",
                         status=2)
    row = doc["candidates"][0]
    assert row["simulated_s"] is None and "timeout" in row["error"]
    # nothing simulated is no validation: the JSON says what happened, the status fails
    assert "no placement was simulated: all 1 timed out or failed (raise --timeout 1" in out
    deadline = time.monotonic() + 10
    while True:
        left = subprocess.run(["pgrep", "-f", smpi_program], capture_output=True, text=True)
        if not left.stdout.strip() or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert not left.stdout.strip(), "smpimain still running after the timeout"


@needs_smpi
def test_a_child_left_in_the_background_is_not_waited_for(tmp_path, capsys):
    """A program that leaves `sleep 60 &` behind: its run ends when the program does (the
    child held the output pipes open, and the run waited for it past --timeout)."""
    src = tmp_path / "bg.c"
    src.write_text("#include <mpi.h>\n#include <stdlib.h>\n"
                   "int main(int argc, char **argv) {\n  MPI_Init(&argc, &argv);\n  int r;\n"
                   "  MPI_Comm_rank(MPI_COMM_WORLD, &r);\n"
                   "  if (r == 0 && system(\"sleep 60 &\") != 0) return 1;\n"
                   "  MPI_Finalize();\n  return 0;\n}\n")
    exe = tmp_path / "bg.smpi"
    subprocess.run(["smpicc", "-O1", "-o", str(exe), str(src)], check=True, timeout=180,
                   capture_output=True)
    doc, text = _validate(tmp_path, capsys, "-m", "torus:2x2", "-p", "stencil:2x2",
                          "--mappings", "XYT", [str(exe)], timeout="20", status=2)
    row = doc["candidates"][0]
    assert row["simulated_s"] is not None and row["wall_s"] < 20, row
    # it sends nothing: a ranking of zero times is refused (after the JSON is written)
    assert row["simulated_s"] == 0 and "the program sent nothing in SMPI" in text


@needs_smpi
def test_recorded_pattern_predicts_the_program_in_simgrid(smpi_program, tmp_path, capsys,
                                                          monkeypatch):
    """The README's workflow end to end: record the program (built with mpicc, phases at
    MPI_Pcontrol) under mpirun, then simulate its smpicc build under every placement: each
    prediction within 3 % of SMPI's time (halo and row all-to-all phases), and both rank the
    same placement first."""
    launcher = _open_mpi_launcher()
    exe = tmp_path / "halo_phases"
    subprocess.run(["mpicc", "-O1", "-o", str(exe), str(SOURCE)], check=True, timeout=120)
    rec = tmp_path / "rec.csv"
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    # the grid from MPI_Dims_create: Open MPI's 6x6 in the recording, and in SimGrid too
    # thanks to the shim (SimGrid's own makes 9x4)
    args = ["0", "0", "32768", "1", "16384"]       # grid, halo bytes, iterations, all-to-all
    assert main(["record", "-o", str(rec), "--", *launcher, "-n", "36", str(exe), *args]) == 0
    assert "phases: 2" in capsys.readouterr().out
    doc, out = _validate(tmp_path, capsys, "-m", "torus:3x3:cores=4", "-p", f"graph:{rec}",
                         "--mappings", "inorder,XYT,random,greedy,graph",
                         [smpi_program, *args])
    for r in doc["candidates"]:
        assert r["simulated_s"] == pytest.approx(r["predicted_s"], rel=0.03), r
    assert doc["best_predicted"] == doc["best_simulated"]


@needs_smpi
def test_recorded_collectives_predict_the_program_in_simgrid(tmp_path, capsys):
    """Eight collectives of 1 MiB on 18 ranks, one phase each (three of them fold into one:
    the same transfers): SMPI runs the algorithms whose
    transfers `record` counts (ring allreduce, flat bcast; SMPI's defaults for the others), so
    every placement's prediction is within 1 % (the allreduce alone was 0.17-0.34 of SMPI's
    time under its default algorithm)."""
    launcher = _open_mpi_launcher()
    src = SOURCE.with_name("collectives.c")
    stub = write_shim(tmp_path)
    exe, smpi_exe = tmp_path / "collectives", tmp_path / "collectives.smpi"
    subprocess.run(["mpicc", "-O1", "-o", str(exe), str(src)], check=True, timeout=120)
    subprocess.run(["smpicc", "-O1", "-o", str(smpi_exe), str(src), str(stub)],
                   check=True, timeout=180, capture_output=True)
    rec = tmp_path / "rec.csv"
    assert main(["record", "-o", str(rec), "--", *launcher, "-n", "18", str(exe),
                 "131072"]) == 0
    out = capsys.readouterr().out    # Allgather, Alltoallv and Allgatherv have the same rows
    assert "phases: 6 (" in out and "; 8 recorded, identical ones folded" in out
    doc, _ = _validate(tmp_path, capsys, "-m", "torus:3x3:cores=2", "-p", f"graph:{rec}",
                       "--mappings", "inorder,XYT,random", [str(smpi_exe), "131072"])
    for r in doc["candidates"]:
        assert r["simulated_s"] == pytest.approx(r["predicted_s"], rel=0.01), r


def test_own_program_errors(tmp_path, capsys):
    """One line and status 2: a missing program, a folder, both --program and a program, an
    empty command after '--', and record under smpirun (which cannot preload)."""
    base = ["validate", "-m", "torus:2x2", "-p", "stencil:2x2", "--mappings", "XYT"]
    assert main([*base, "--", str(tmp_path / "nothere")]) == 2
    assert "not found" in capsys.readouterr().err
    assert main([*base, "--", str(tmp_path)]) == 2
    assert "not an executable file" in capsys.readouterr().err
    script = tmp_path / "app"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    assert main([*base, "--program", "flows", "--", str(script)]) == 2
    assert "give one" in capsys.readouterr().err
    assert main([*base, "--"]) == 2
    assert "no program after '--'" in capsys.readouterr().err
    # options the prediction cannot honour like SimGrid are refused, not dropped
    for opt in (["--nic-bw", "1GB/s"], ["--msg-overhead", "5us"], ["--mem-sharing", "node"],
                ["--socket-bw", "20MB/s"], ["--y", "0.5"]):
        assert main([*base, *opt, "--", str(script)]) == 2
        assert f"{opt[0]}" in capsys.readouterr().err
    # sockets: the prediction's link between them is not in SimGrid's platform (it predicted
    # 2x the simulated time, with no warning)
    assert main(["validate", "-m", "torus:3x3:node=pack:2,core:2", "-p",
                 "stencil:6x6:periodic", "--mappings", "inorder", "--", str(script)]) == 2
    assert "2 socket(s)" in capsys.readouterr().err
    import argparse
    from rankmap.cli import build_parser
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    shown = sub.choices["validate"].format_help()
    assert "--nic-bw" not in shown and "--time-model" not in shown and "--y" not in shown
    # smpirun passes arguments through a shell, unquoted; a launcher is not the program
    for bad in ("input file.txt", "*.c", "--cfg=smpi/bcast:binomial", "", "--version"):
        assert main([*base, "--", str(script), bad]) == 2
        assert "would not reach the program as given" in capsys.readouterr().err
    assert main([*base, "--", "mpirun", "-n", "4", str(script)]) == 2
    assert "not 'mpirun'" in capsys.readouterr().err
    # other shell characters arrive as given; a program named like a launcher, by its path, runs
    from rankmap.simgrid.runner import check_program_args
    check_program_args(["./prun", "a;b", "x>0", "(1,2)", "$HOME", "it's", "k=v", "-5", "@f"])
    # an unknown name given one by one stops the command, as in compare
    assert main(["validate", "-m", "torus:2x2", "-p", "stencil:2x2", "--mappings",
                 "XYT,bogus"]) == 2
    assert "unknown mapping 'bogus'" in capsys.readouterr().err
    assert main(["record", "-o", str(tmp_path / "r.csv"), "--", "smpirun", "-np", "4",
                 str(script)]) == 2
    err = capsys.readouterr().err
    assert "cannot run under smpirun" in err and "validate" in err
    assert not (tmp_path / "r.csv").exists()


@needs_smpi
def test_fortran_program_with_the_shim(tmp_path, capsys):
    """A Fortran program calling MPI_Pcontrol(1) (no error argument in Fortran), built with
    smpif90 and the shim: it runs, and a 9-rank ring of 64 KiB messages is predicted within
    2 % under every placement (a stub writing an error code segfaulted)."""
    if shutil.which("smpif90") is None or shutil.which("gfortran") is None:
        pytest.skip("needs smpif90 and gfortran (apt-get install simgrid gfortran)")
    stub = write_shim(tmp_path)
    subprocess.run(["smpicc", "-c", "-o", str(tmp_path / "shim.o"), str(stub)],
                   check=True, timeout=180, capture_output=True)
    exe = tmp_path / "ring.smpi"
    subprocess.run(["smpif90", "-O1", "-o", str(exe), str(SOURCE.with_name("ring_phases.f90")),
                    str(tmp_path / "shim.o")], check=True, timeout=180,
                   capture_output=True, cwd=tmp_path)
    ring = tmp_path / "ring.csv"
    ring.write_text("src,dst,bytes\n" + "".join(f"{r},{(r + 1) % 9},65536\n" for r in range(9)))
    doc, _ = _validate(tmp_path, capsys, "-m", "torus:3x3", "-p", f"graph:{ring}",
                       "--mappings", "inorder,XYT,random", [str(exe), "8192", "1"])
    for r in doc["candidates"]:
        assert r["simulated_s"] == pytest.approx(r["predicted_s"], rel=0.02), r


@needs_smpi
def test_failing_programs_are_errors_with_their_own_message(tmp_path, capsys):
    """SimGrid 3.32 ends a run that called MPI_Abort as a deadlock with exit status 0: an
    error, not a 0-second time; a program that exits 3 is named with its own last line, not
    SimGrid's summary; only the end of a flood of output is read."""
    src = tmp_path / "fail.c"
    src.write_text(
        "#include <mpi.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
        "int main(int argc, char **argv) {\n  MPI_Init(&argc, &argv);\n  int r;\n"
        "  MPI_Comm_rank(MPI_COMM_WORLD, &r);\n"
        "  if (strcmp(argv[1], \"abort\") == 0 && r == 0) {\n"
        "    fprintf(stderr, \"usage: fail MODE (from the program)\\n\");\n"
        "    MPI_Abort(MPI_COMM_WORLD, 2);\n  }\n"
        "  if (strcmp(argv[1], \"alone\") == 0) {\n"
        "    if (r == 1) {\n"
        "      fprintf(stderr, \"[rank 1] cannot open mesh.dat\\n\");\n"
        "      MPI_Abort(MPI_COMM_WORLD, 2);\n    }\n"
        "    MPI_Finalize();\n    return 0;\n  }\n"
        "  if (strcmp(argv[1], \"exit\") == 0) {\n"
        "    if (r == 0) {\n"
        "      for (int i = 0; i < 20000; i++) fprintf(stderr, \"noise %d\\n\", i);\n"
        "      fprintf(stderr, \"cannot open mesh.dat\\n\");\n    }\n    exit(3);\n  }\n"
        "  MPI_Barrier(MPI_COMM_WORLD);\n  MPI_Finalize();\n  return 0;\n}\n")
    exe = tmp_path / "fail.smpi"
    subprocess.run(["smpicc", "-O1", "-o", str(exe), str(src)], check=True, timeout=180,
                   capture_output=True)
    base = ["validate", "-m", "torus:2x2", "-p", "stencil:2x2", "--mappings", "XYT",
            "--timeout", "60", "--", str(exe)]
    assert main([*base, "abort"]) == 2
    err = capsys.readouterr().err
    assert "aborted (MPI_Abort) or deadlocked" in err and "usage: fail MODE" in err
    # the others reach MPI_Finalize: no deadlock, SimGrid's own warning tells
    assert main([*base, "alone"]) == 2
    err = capsys.readouterr().err
    assert "aborted (MPI_Abort)" in err and "[rank 1] cannot open mesh.dat" in err
    assert main([*base, "exit"]) == 2
    err = capsys.readouterr().err
    assert "exit 3" in err and err.strip().endswith("cannot open mesh.dat")


@needs_smpi
def test_program_not_built_with_smpicc_is_named(tmp_path, capsys):
    """A program SimGrid cannot load (built with gcc here, as one built with Open MPI's mpicc)
    is refused with the advice to build it with smpicc."""
    if shutil.which("cc") is None:
        pytest.skip("needs a C compiler (cc)")
    src = tmp_path / "plain.c"
    src.write_text("int main(void) { return 0; }\n")
    exe = tmp_path / "plain"
    subprocess.run(["cc", "-o", str(exe), str(src)], check=True, timeout=60)
    assert main(["validate", "-m", "torus:2x2", "-p", "stencil:2x2", "--mappings", "XYT",
                 "--timeout", "60", "--", str(exe)]) == 2
    assert "build it with SimGrid's smpicc" in capsys.readouterr().err


#: MPI_Dims_create's cases the shim is checked on: process counts in 1-4 dimensions (some
#: where Open MPI and MPICH differ, 72 in 2-D: 12x6 and 9x8), then with a fixed dimension
DIMS_PROGRAM = """#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    for (int nd = 1; nd <= 4; nd++)
        for (int n = 1; n <= 400; n++) {
            int dims[4] = {0, 0, 0, 0};
            MPI_Dims_create(n, nd, dims);
            printf("%d %d:", n, nd);
            for (int i = 0; i < nd; i++) printf(" %d", dims[i]);
            printf("\\n");
        }
    int fixed[3] = {0, 3, 0};
    MPI_Dims_create(72, 3, fixed);
    printf("72 fixed: %d %d %d\\n", fixed[0], fixed[1], fixed[2]);
    MPI_Pcontrol(1);
    MPI_Finalize();
    return 0;
}
"""


@needs_smpi
@pytest.mark.parametrize("like", ["openmpi", "mpich"])
def test_shim_gives_the_mpi_librarys_dims(like, tmp_path):
    """The same program built with smpicc and `rankmap simgrid shim --like LIB`, and with
    LIB's own mpicc: MPI_Dims_create gives the same dimensions in all 1,601 cases (SimGrid's
    own gives 9x4 for 36 processes), and MPI_Pcontrol does not abort."""
    tools = {"openmpi": ("mpicc", "mpirun"), "mpich": ("mpicc.mpich", "mpirun.mpich")}[like]
    if any(shutil.which(t) is None for t in tools):
        message = f"needs {' and '.join(tools)} (apt-get install " + \
            ("openmpi-bin libopenmpi-dev)" if like == "openmpi" else "mpich)")
        if os.environ.get("RANKMAP_REQUIRE_MPI") == "1":
            pytest.fail(message)
        pytest.skip(message)
    src = tmp_path / "dims.c"
    src.write_text(DIMS_PROGRAM)
    shim = tmp_path / "shim.c"
    assert main(["simgrid", "shim", "--like", like, "-o", str(shim)]) == 0
    subprocess.run(["smpicc", "-O1", "-o", str(tmp_path / "dims.smpi"), str(src), str(shim)],
                   check=True, timeout=180, capture_output=True)
    subprocess.run([tools[0], "-O1", "-o", str(tmp_path / "dims"), str(src)], check=True,
                   timeout=120, capture_output=True)
    assert main(["simgrid", "platform", "-m", "torus:2x2", "-o", str(tmp_path / "p.xml")]) == 0
    (tmp_path / "hosts").write_text("node-0\n")
    sim = subprocess.run(["smpirun", "-platform", str(tmp_path / "p.xml"), "-hostfile",
                          str(tmp_path / "hosts"), "-np", "1", str(tmp_path / "dims.smpi")],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    launcher = [tools[1], "-n", "1"]
    if like == "openmpi" and hasattr(os, "geteuid") and os.geteuid() == 0:
        launcher.append("--allow-run-as-root")
    real = subprocess.run([*launcher, str(tmp_path / "dims")], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert sim.returncode == 0 and real.returncode == 0, sim.stderr[-2000:] + real.stderr
    lines = sim.stdout.splitlines()
    assert len(lines) == 1601 and lines == real.stdout.splitlines()
    assert "36 2: 6 6" in lines
    assert ("72 2: 12 6" if like == "openmpi" else "72 2: 9 8") in lines


@needs_smpi
def test_shim_in_a_cxx_build_and_on_bad_dims(tmp_path):
    """The shim compiles into a C++ program (smpicxx takes shim.c as C++: C names kept), and
    fixed dimensions whose product does not divide the processes return MPI_ERR_DIMS
    (SimGrid's own returned dimensions of another product); ndims 0 is a success."""
    if shutil.which("smpicxx") is None:
        pytest.skip("needs smpicxx (apt-get install simgrid)")
    shim = write_shim(tmp_path)
    src = tmp_path / "dims.cpp"
    src.write_text("#include <mpi.h>\n#include <cstdio>\n"
                   "int main(int argc, char **argv) {\n  MPI_Init(&argc, &argv);\n"
                   "  int d[2] = {0, 0}, f[5] = {0, 4, 0, 0, 4};\n"
                   "  MPI_Dims_create(36, 2, d);\n"
                   "  int bad = MPI_Dims_create(97060, 5, f), none = MPI_Dims_create(5, 0, d);\n"
                   "  std::printf(\"%d %d %d %d\\n\", d[0], d[1], bad == MPI_ERR_DIMS,\n"
                   "              none == MPI_SUCCESS);\n"
                   "  MPI_Pcontrol(1);\n  MPI_Finalize();\n  return 0;\n}\n")
    exe = tmp_path / "dims.smpi"
    subprocess.run(["smpicxx", "-O1", "-o", str(exe), str(src), str(shim)], check=True,
                   timeout=180, capture_output=True)
    assert main(["simgrid", "platform", "-m", "torus:2x2", "-o", str(tmp_path / "p.xml")]) == 0
    (tmp_path / "hosts").write_text("node-0\n")
    sim = subprocess.run(["smpirun", "-platform", str(tmp_path / "p.xml"), "-hostfile",
                          str(tmp_path / "hosts"), "-np", "1", str(exe)],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert sim.returncode == 0 and sim.stdout.split() == ["6", "6", "1", "1"], sim.stderr


@needs_smpi
def test_a_program_without_the_shim_is_told_to_link_it(tmp_path, capsys):
    """A program calling MPI_Pcontrol built without the shim: SimGrid 3.32 aborts, and the one
    line says which file to link and how."""
    exe = tmp_path / "bare.smpi"
    subprocess.run(["smpicc", "-O1", "-o", str(exe), str(SOURCE)], check=True, timeout=180,
                   capture_output=True)
    code = main(["validate", "-m", "torus:3x3:cores=4", "-p", "stencil:6x6:periodic",
                 "--mappings", "XYT", "--", str(exe), "6", "6", "1024", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "aborts on MPI_Pcontrol" in err and "rankmap simgrid shim" in err
