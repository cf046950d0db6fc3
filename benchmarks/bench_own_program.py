"""Recorded patterns against the programs themselves in SimGrid (``validate -- PROGRAM``).

For each program of ``tests/smpi_programs`` (C sources with ``MPI_Pcontrol`` between their
phases): build it with ``mpicc`` and record it under Open MPI's ``mpirun`` (``rankmap
record``), build it with ``smpicc`` and ``rankmap simgrid shim``'s file, then run
``rankmap validate --mappings all -- ./prog.smpi ARGS`` on a torus with odd sides (SimGrid
routes it exactly as rankmap). Reported: placements simulated, Spearman and Pearson,
predicted / simulated time (range), and rankmap's pick against SimGrid's best. The
collectives program runs a second time under SMPI's default collective algorithms
(``SMPI_COMMAND_CONFIG`` without the ones chosen to send what ``record`` counts) to show what
that choice is worth. Deterministic: SimGrid's simulated times do not depend on the host.

Writes benchmarks/RESULTS_own_program.md (above its earlier runs). Needs Open MPI and
SimGrid (``apt-get install openmpi-bin libopenmpi-dev simgrid libsimgrid-dev``).

Run: ``make bench ONLY=own_program``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing_util import write_results  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(os.path.dirname(HERE), "tests", "smpi_programs")
#: (label, source, ranks, machine, program arguments)
CASES = [
    ("6x6 halo + row all-to-all", "halo_phases.c", 36, "torus:3x3:cores=4",
     ["6", "6", "32768", "1", "16384"]),
    ("eight 1 MiB collectives", "collectives.c", 18, "torus:3x3:cores=2", ["131072"]),
]


def write_shim(folder: str) -> str:
    """``rankmap simgrid shim``'s file (a do-nothing MPI_Pcontrol, Open MPI's MPI_Dims_create)
    written into ``folder``, for the SMPI builds; its path."""
    from rankmap.simgrid.shim import shim_source

    path = os.path.join(folder, "shim.c")
    with open(path, "w") as fh:
        fh.write(shim_source("openmpi"))
    return path


def _record(exe: str, n: int, args: list[str], out: str) -> None:
    from rankmap.cli import main as cli

    launcher = ["mpirun", "--oversubscribe", "--bind-to", "none"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        launcher.append("--allow-run-as-root")
    if cli(["record", "-o", out, "--force", "--", *launcher, "-n", str(n), exe, *args]):
        raise RuntimeError(f"record of {exe} failed")


def _validate(machine_spec: str, rec: str, command: list[str]):
    from rankmap.allocation import parse_allocation
    from rankmap.machines import parse_machine
    from rankmap.patterns import parse_pattern
    from rankmap.selection import expand_names
    from rankmap.simgrid.validation import validate

    m = parse_machine(machine_spec)
    a = parse_allocation(None, m)
    p = parse_pattern(f"graph:{rec}")
    names = expand_names("all", p, m, a)
    return validate(m, a, p, names, timeout=600, command=command)


def _row(label: str, machine: str, val) -> str:
    sp, pe = val.correlations()
    ratios = [r.ratio for r in val.done]
    gap = val.best_gap()
    bp, bs = val.best_predicted(), val.best_simulated()
    return (f"| {label} | `{machine}` | {len(val.done)} | {sp:.3f} | {pe:.3f} | "
            f"{min(ratios):.3f}-{max(ratios):.3f} | `{bp.mapping}` "
            f"{bp.simulated_s * 1e3:.3f} ms | `{bs.mapping}` {bs.simulated_s * 1e3:.3f} ms"
            f" | {'+0.0' if not gap else f'+{gap * 100:.1f}'} % |")


def main() -> int:
    """Run the cases and write the results document; 1 when a tool is missing."""
    missing = [t for t in ("mpicc", "mpirun", "smpicc", "smpirun") if shutil.which(t) is None]
    if missing:
        print(f"bench_own_program needs {', '.join(missing)}", file=sys.stderr)
        return 1
    import rankmap.simgrid.runner as runner

    rows = []
    with tempfile.TemporaryDirectory(prefix="rankmap-bench-own-") as tmp:
        stub = write_shim(tmp)
        for label, source, n, machine, args in CASES:
            src = os.path.join(PROGRAMS, source)
            exe, smpi = (os.path.join(tmp, source[:-2] + s) for s in ("", ".smpi"))
            subprocess.run(["mpicc", "-O2", "-o", exe, src], check=True)
            subprocess.run(["smpicc", "-O2", "-o", smpi, src, stub], check=True,
                           capture_output=True)
            rec = os.path.join(tmp, source[:-2] + ".csv")
            _record(exe, n, args, rec)
            rows.append(_row(label, machine, _validate(machine, rec, [smpi, *args])))
            if source == "collectives.c":
                chosen = list(runner.SMPI_COMMAND_CONFIG)
                runner.SMPI_COMMAND_CONFIG[:] = [c for c in chosen if not c.startswith(
                    ("--cfg=smpi/allreduce", "--cfg=smpi/bcast", "--cfg=smpi/reduce_scatter"))]
                try:
                    val = _validate(machine, rec, [smpi, *args])
                finally:
                    runner.SMPI_COMMAND_CONFIG[:] = chosen
                rows.append(_row(label + ", SMPI's default collectives", machine, val))
    text = "\n".join([
        "# Recorded patterns against the programs in SimGrid (`validate -- PROGRAM`)",
        "",
        "Measured by `benchmarks/bench_own_program.py`: each program of `tests/smpi_programs` "
        "recorded under Open MPI (`rankmap record`, phases at `MPI_Pcontrol`), its smpicc "
        "build (with `rankmap simgrid shim`'s file) simulated under every placement of "
        "`--mappings all` (`rankmap validate -- PROGRAM`). Simulated times are SimGrid's and "
        "do not depend on the host.",
        "",
        "| program | machine | placements | Spearman | Pearson | predicted / simulated | "
        "rankmap's pick in SMPI | SMPI's best | pick vs best |",
        "|---|---|---:|---:|---:|---|---|---|---:|",
        *rows,
    ])
    write_results("RESULTS_own_program.md", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
