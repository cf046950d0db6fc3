"""Recordings of five application skeletons against the programs themselves in SimGrid.

For each C program of ``benchmarks/apps`` (a CG solver's halo and dot product, a molecular-
dynamics ghost exchange in three dependent stages, a KBA transport sweep, a pseudo-spectral
halo and transpose, a multigrid V-cycle; see each file's header): build it with ``mpicc``
and with ``smpicc`` and ``rankmap simgrid shim``'s file, record it under Open MPI's ``mpirun``
(``rankmap record``) once as it is (one phase) and once with ``PC=1`` (``MPI_Pcontrol``
between its steps), and run ``rankmap validate --mappings all -- ./prog.smpi ARGS`` with both
recordings and with the pattern one would state for it (bytes computed from the arguments),
on tori with odd sides (SimGrid routes them as rankmap does; the route check is reported).
A few programs run once more with other arguments, to show what limits their prediction.
Reported per (program, pattern): placements simulated, the pattern's phases, Spearman and
Pearson, predicted / simulated time (range), and SimGrid's time of rankmap's pick over
SimGrid's best. Deterministic: SimGrid's simulated times do not depend on the host.

Writes benchmarks/RESULTS_recorded_apps.md (above its earlier runs). Needs Open MPI and
SimGrid (``apt-get install openmpi-bin libopenmpi-dev simgrid libsimgrid-dev``).

Run: ``make bench ONLY=recorded_apps``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_own_program import _record, write_shim  # noqa: E402
from timing_util import write_results  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
APPS_DIR = os.path.join(HERE, "apps")


def _cg2d(px, py, b, it):
    return (f"stencil:{px}x{py}:periodic:bytes={b // 8 * 8 * it} + "
            f"allreduce:{px * py}:bytes={8 * it}:algo=ring")


def _md3d(px, py, pz, f, it):
    grid = f"stencil:{px}x{py}x{pz}:periodic"
    return (f"{grid}:offsets=+1,0,0;-1,0,0:bytes={f * it} + "
            f"{grid}:offsets=0,+1,0;0,-1,0:bytes={(f + f // 2) * it} + "
            f"{grid}:offsets=0,0,+1;0,0,-1:bytes={2 * f * it}")


def _sweep(px, py, b, it, nblk):
    # each directed neighbour pair carries NBLK messages in two of the four sweeps
    return f"stencil:{px}x{py}:bytes={2 * nblk * (b // 8 * 8) * it}"


def _spectral(px, py, halo, blk, it):
    return (f"stencil:{px}x{py}:periodic:bytes={halo * it} + "
            f"alltoall:{px}x{py}:dims=1:bytes={blk * it}")


def _mg(px, py, b, levels, it):
    parts = []
    for lv in range(levels):
        d = 1 << lv
        times = 1 if lv == levels - 1 else 2   # down and up the V, the coarsest level once
        parts.append(f"stencil:{px}x{py}:periodic:offsets=+{d},0;-{d},0;0,+{d};0,-{d}:"
                     f"bytes={times * (b >> lv) * it}")
    return " + ".join(parts + [f"allreduce:{px * py}:bytes={8 * it}:algo=ring"])


@dataclass
class App:
    name: str
    ranks: int
    machine: str
    args: list[str]
    stated: object                 # args (ints) -> pattern spec
    #: (label, arguments, PC): recorded and simulated once more, to show what limits
    extra: list = field(default_factory=list)


APPS = [
    App("cg2d", 36, "torus:3x3:cores=4", ["6", "6", "512", "300"], _cg2d,
        [("recorded, PC=1, BYTES=16384", ["6", "6", "16384", "300"], "1")]),
    App("md3d", 64, "torus:3x3x3:cores=3", ["4", "4", "4", "16384", "30"], _md3d,
        [("recorded, PC=2", ["4", "4", "4", "16384", "30"], "2")]),
    App("sweep", 36, "torus:3x3:cores=4", ["6", "6", "8192", "10", "4"], _sweep,
        [("recorded, PC=1, NBLK=32", ["6", "6", "8192", "2", "32"], "1")]),
    App("spectral", 36, "torus:3x3:cores=4", ["6", "6", "32768", "16384", "20"], _spectral),
    App("mg", 64, "torus:5x5:cores=3", ["8", "8", "32768", "3", "20"], _mg),
]


def _validate(machine_spec: str, spec: str, command: list[str]):
    """(Validation, pattern) of ``validate --mappings all`` with ``command`` in SimGrid."""
    from rankmap.allocation import parse_allocation
    from rankmap.machines import parse_machine
    from rankmap.patterns import parse_pattern
    from rankmap.selection import expand_names
    from rankmap.simgrid.validation import validate

    m = parse_machine(machine_spec)
    a = parse_allocation(None, m)
    p = parse_pattern(spec)
    names = expand_names("all", p, m, a)
    return validate(m, a, p, names, timeout=600, command=command), p


def _sig(x: float) -> float:
    """``x`` to 4 significant digits (``Validation.correlations``' ties)."""
    return float(f"{x:.4g}")


def _misorder(done) -> float:
    """Largest relative difference in simulated time between two placements that rankmap
    orders the other way round (0 when no pair is misordered)."""
    worst = 0.0
    for a in done:
        for b in done:
            if _sig(a.predicted_s) < _sig(b.predicted_s) and _sig(a.simulated_s) > _sig(
                    b.simulated_s):
                worst = max(worst, a.simulated_s / b.simulated_s - 1.0)
    return worst


def _summary(val, pattern) -> dict:
    sp, pe = val.correlations()
    done = val.done
    ratios = [r.ratio for r in done]
    sims = [r.simulated_s for r in done]
    bp, bs = val.best_predicted(), val.best_simulated()
    return {"placements": len(done), "phases": len(pattern.phases), "spearman": sp,
            "pearson": pe, "lo": min(ratios), "hi": max(ratios), "pick": bp.mapping,
            "best": bs.mapping, "gap": bp.simulated_s / bs.simulated_s,
            "same": _sig(bp.simulated_s) == _sig(bs.simulated_s),
            "spread": max(sims) / min(sims), "misorder": _misorder(done),
            "routes": val.routes.describe() if val.routes else "not checked",
            "identical": bool(val.routes and val.routes.identical)}


def _fmt(x) -> str:
    return "-" if x is None else f"{x:.3f}"


def _row(app: App, source: str, s: dict) -> str:
    best = "yes" if s["same"] else f"no (`{s['best']}`)"
    return (f"| {app.name} | {source} | {app.ranks} | `{app.machine}` | {s['placements']} | "
            f"{s['phases']} | {_fmt(s['spearman'])} | {_fmt(s['pearson'])} | "
            f"{s['lo']:.3f}-{s['hi']:.3f} | {s['spread']:.2f} | "
            f"{s['misorder'] * 100:.1f} % | `{s['pick']}` {best} | {s['gap']:.3f} |")


def _rng(s: dict) -> str:
    return f"{s['lo']:.2f}-{s['hi']:.2f}"


def _sp(s: dict) -> str:
    return f"Spearman {_fmt(s['spearman'])}"


def _stated(r: dict) -> str:
    """What the stated pattern gave, next to the recording that gave the same."""
    st = r["stated"]
    for label in ("recorded", "recorded, PC=1"):
        if all(st[k] == r[label][k] for k in ("spearman", "pearson")) and \
                _rng(st) == _rng(r[label]):
            return f" The stated pattern gives what the \"{label}\" row gives."
    return f" The stated pattern gives {_rng(st)}, {_sp(st)}."


def _notes(res: dict, apps: dict) -> list[str]:
    """One paragraph per program, from the measured numbers and the programs' structure."""
    out = []
    arg = {name: [int(x) for x in app.args] for name, app in apps.items()}
    c = res.get("cg2d")
    if c:
        r, p, x = c["recorded"], c["recorded, PC=1"], c["recorded, PC=1, BYTES=16384"]
        out.append(
            f"**cg2d** ({arg['cg2d'][2]}-byte halos, then an allreduce of one double, every "
            f"iteration). Predicted / simulated {_rng(r)} recorded as one phase, {_rng(p)} "
            f"with a phase per step. The allreduce is a chain of dependent messages of a few "
            f"bytes in every iteration, which the recording adds up into one small flow per "
            f"pair (`record` counts it as a ring of 2(P-1) = {2 * (apps['cg2d'].ranks - 1)} "
            f"messages per process); with 16 KiB halos and the allreduce unchanged the same "
            f"program is predicted at {_rng(x)}. Spearman {_fmt(r['spearman'])} and "
            f"{_fmt(x['spearman'])}, Pearson {_fmt(r['pearson'])} and {_fmt(x['pearson'])}: "
            f"placements it orders the wrong way round differ by at most "
            f"{max(r['misorder'], x['misorder']) * 100:.1f} % in SimGrid." + _stated(c))
    m = res.get("md3d")
    if m:
        r, p, x = m["recorded"], m["recorded, PC=1"], m["recorded, PC=2"]
        pick = ("" if x["same"] else f"; its pick `{x['pick']}` takes {x['gap']:.2f}x "
                f"SimGrid's best (`{x['best']}`)")
        out.append(
            f"**md3d** (three dependent stages x, y, z per step, each forwarding the ghosts "
            f"of the one before). Recorded as one phase, the stages' flows are predicted as "
            f"if they ran at once: predicted / simulated {_rng(r)}, {_sp(r)}. A phase per "
            f"stage (PC=1) gives {_rng(p)}, {_sp(p)}; a phase per `MPI_Sendrecv` (PC=2) "
            f"{_rng(x)}, {_sp(x)}{pick}. SimGrid's times of the {r['placements']} placements "
            f"span {r['spread']:.2f}x on this machine; misordered placements differ by "
            f"up to {r['misorder'] * 100:.0f} % (one phase), {p['misorder'] * 100:.0f} % "
            f"(PC=1)." + _stated(m))
    w = res.get("sweep")
    if w:
        r, p, x = w["recorded"], w["recorded, PC=1"], w["recorded, PC=1, NBLK=32"]
        px, py, _, _, nblk = arg["sweep"]
        fill = px + py - 2
        out.append(
            f"**sweep** (four corner-to-corner wavefronts of NBLK={nblk} k-blocks on a "
            f"{px}x{py} grid: a sweep takes NBLK + {fill} pipeline steps, the first and last "
            f"{fill} with part of the grid idle). A process's messages wait for its upstream neighbours; rankmap runs "
            f"a phase's bytes at once and predicts {_rng(r)} of SimGrid's time as one phase "
            f"({_sp(r)}), {_rng(p)} with a phase per sweep ({_sp(p)}). With NBLK=32 the fill "
            f"and drain are a smaller share of a sweep: {_rng(x)}, {_sp(x)}." + _stated(w))
    s = res.get("spectral")
    if s:
        r, p = s["recorded"], s["recorded, PC=1"]
        out.append(
            f"**spectral** (halo, then an all-to-all along each grid row, no barrier between "
            f"them). Recorded as one phase: predicted / simulated {_rng(r)}, {_sp(r)}. Split "
            f"by `MPI_Pcontrol`, rankmap runs the two phases one after the other, while in "
            f"the program a process starts its all-to-all when its own halo is done: "
            f"{_rng(p)}, {_sp(p)}." + _stated(s))
    g = res.get("mg")
    if g:
        r, p = g["recorded"], g["recorded, PC=1"]
        out.append(
            f"**mg** (halos at distance 1, 2, 4 down and up a V-cycle, then an 8-byte "
            f"allreduce; no barrier between levels). Recorded as one phase {_rng(r)} "
            f"({_sp(r)}); with a phase per level {_rng(p)} ({_sp(p)}); misordered placements "
            f"differ by up to {r['misorder'] * 100:.1f} % and {p['misorder'] * 100:.1f} % in "
            f"SimGrid." + _stated(g))
    return out


def main() -> int:
    """Run the programs and write the results document; 1 when a tool is missing."""
    missing = [t for t in ("mpicc", "mpirun", "smpicc", "smpirun") if shutil.which(t) is None]
    if missing:
        print(f"bench_recorded_apps needs {', '.join(missing)}", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    rows, res, routes, stated = [], {}, {}, []
    with tempfile.TemporaryDirectory(prefix="rankmap-bench-apps-") as tmp:
        stub = write_shim(tmp)
        for app in APPS:
            src = os.path.join(APPS_DIR, app.name + ".c")
            exe, smpi = (os.path.join(tmp, app.name + s) for s in ("", ".smpi"))
            subprocess.run(["mpicc", "-O2", "-Wall", "-o", exe, src], check=True)
            subprocess.run(["smpicc", "-O2", "-o", smpi, src, stub], check=True,
                           capture_output=True)
            runs = [("recorded", app.args, None), ("recorded, PC=1", app.args, "1"),
                    *app.extra]
            res[app.name] = {}
            for label, args, pc in runs:
                rec = os.path.join(tmp, f"{app.name}-{len(res[app.name])}.csv")
                _record(exe, app.ranks, args + ([pc] if pc else []), rec)
                val, pat = _validate(app.machine, f"graph:{rec}", [smpi, *args])
                res[app.name][label] = s = _summary(val, pat)
                routes[app.machine] = s["routes"]
                rows.append(_row(app, label, s))
                if label == "recorded, PC=1":   # the stated pattern, after both recordings
                    spec = app.stated(*map(int, app.args))
                    val, pat = _validate(app.machine, spec, [smpi, *app.args])
                    res[app.name]["stated"] = s = _summary(val, pat)
                    rows.append(_row(app, "stated", s))
                    stated.append(f"- {app.name}: `{spec}`")
    wall = time.perf_counter() - t0
    args = "; ".join(f"`{a.name} {' '.join(a.args)}`" for a in APPS)
    picks = [r for rs in res.values() for r in rs.values()]
    text = "\n".join([
        "# Recorded application skeletons against the programs in SimGrid",
        "",
        "Measured by `benchmarks/bench_recorded_apps.py`: the five programs of "
        "`benchmarks/apps` (see their headers), each recorded under Open MPI "
        "(`rankmap record`) without `MPI_Pcontrol` (one phase) and with `PC=1` "
        "(`MPI_Pcontrol` between its steps), and its smpicc build (with `rankmap simgrid "
        "shim`'s file) simulated under every placement of `--mappings all` (`rankmap "
        "validate -- PROGRAM`) against both recordings and the pattern one would state for "
        "it (below; bytes from the arguments). Arguments: " + args + "; rows with other "
        "arguments name them. \"phases\": the pattern's phases as rankmap reads it; "
        "\"SimGrid worst / best\": how much the placement matters; \"misordered\": the "
        "largest difference in SimGrid's time between two placements rankmap orders the "
        "other way round; \"pick\": rankmap's first-ranked placement and whether it is "
        "SimGrid's best (equal to 4 significant digits); \"pick / best\": SimGrid's time of "
        "the pick over SimGrid's best. Simulated times are SimGrid's and do not depend on "
        "the host.",
        "",
        "| program | pattern | ranks | machine | placements | phases | Spearman | Pearson | "
        "predicted / simulated | SimGrid worst / best | misordered | pick | pick / best |",
        "|---|---|---:|---|---:|---:|---:|---:|---|---:|---:|---|---:|",
        *rows,
        "",
        "Stated patterns:",
        "",
        *stated,
        "",
        f"rankmap's pick is SimGrid's best in {sum(r['same'] for r in picks)} of "
        f"{len(picks)} rows. Route check (SimGrid against rankmap, sampled host pairs): "
        + "; ".join(f"`{m}` {d}" for m, d in routes.items()) + ".",
        "",
        *[p + "\n" for p in _notes(res, {a.name: a for a in APPS})],
        f"Whole benchmark: {wall:.0f} s on this machine ({os.cpu_count()} cores).",
    ])
    write_results("RESULTS_recorded_apps.md", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
