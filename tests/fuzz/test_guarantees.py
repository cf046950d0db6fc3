"""The guarantees of README "Limits and guarantees" that need a real process or files:
temporary files removed on SIGTERM, outputs checked before any work, SimGrid platform and
hostfile naming the same hosts, the same --format on every command that prints results."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

from .harness import problems, run_cli


def _writer(tmp_path, force: bool, named: bool, pause_in: str) -> subprocess.Popen:
    """A child process writing a 64 MiB output with write_atomic that says 'writing' and
    pauses in the middle of the data (``pause_in="data"``) or just before the final rename
    (``"rename"``); ``named`` forces the fallback (a named temporary file)."""
    script = (
        "import os, sys, time\n"
        "from rankmap.io import atomic\n"
        "atomic.install_signal_cleanup()\n"
        + ("atomic._open_unnamed = lambda folder: None\n" if named else "")
        + "real_write, real_replace = atomic._write_all, os.replace\n"
        "def pause():\n"
        "    print('writing', flush=True); time.sleep(60)\n"
        "def half(fd, data):\n"
        "    real_write(fd, data[:len(data) // 2])\n"
        + ("    pause()\n" if pause_in == "data" else "")
        + "    real_write(fd, data[len(data) // 2:])\n"
        "def rename(a, b):\n"
        + ("    pause()\n" if pause_in == "rename" else "")
        + "    real_replace(a, b)\n"
        "atomic._write_all, os.replace = half, rename\n"
        f"atomic.write_atomic({str(tmp_path / 'out.txt')!r}, b'x' * (64 << 20), force={force})\n")
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "writing"
    return p


def test_sigkill_during_a_write_leaves_nothing(tmp_path):
    """The data goes into an unnamed file (O_TMPFILE): killed mid-write, nothing remains."""
    from rankmap.io.atomic import _open_unnamed
    fd = _open_unnamed(str(tmp_path))
    if fd is None:
        import pytest
        pytest.skip("no O_TMPFILE on this system or filesystem (named temporary file used)")
    os.close(fd)
    for force in (False, True):
        p = _writer(tmp_path, force=force, named=False, pause_in="data")
        p.kill()
        assert p.wait(timeout=20) == -signal.SIGKILL
        assert os.listdir(tmp_path) == []


def test_sigterm_removes_the_temporary_file(tmp_path):
    """A named temporary file (the fallback, or the instant between link and rename of a
    forced write) is removed on SIGTERM."""
    for named, pause_in in ((True, "data"), (True, "rename"), (False, "rename")):
        p = _writer(tmp_path, force=True, named=named, pause_in=pause_in)
        assert [f for f in os.listdir(tmp_path) if f.startswith(".rankmap-")]
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=20) == 128 + signal.SIGTERM
        assert os.listdir(tmp_path) == []


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_write_atomic_without_o_tmpfile(tmp_path, monkeypatch):
    """The fallback keeps every promise: no clobbering without force, only regular files
    replaced, nothing left behind."""
    from rankmap.errors import RankmapError
    from rankmap.io import atomic
    monkeypatch.setattr(atomic, "_open_unnamed", lambda folder: None)
    out = str(tmp_path / "o.txt")
    atomic.write_atomic(out, "one")
    try:
        atomic.write_atomic(out, "two")
        raise AssertionError("replaced without force")
    except RankmapError as exc:
        assert "--force" in str(exc)
    atomic.write_atomic(out, b"three", force=True)
    assert open(out).read() == "three" and os.listdir(tmp_path) == ["o.txt"]
    assert oct(os.stat(out).st_mode & 0o777) == oct(0o666 & ~_umask())


def test_outputs_are_written_through_links_with_the_umask_or_their_own_mode(tmp_path):
    """An output that is a symbolic link is written through it, as a shell's ``>`` does: the
    link stays and its target gets the data (refused without --force when the target exists;
    a link to a missing file in a missing folder is refused before any work, where ``record``
    found it only after the program's run). A new file gets the umask's permissions, a
    replaced one keeps its own (a --force made private files world-readable)."""
    from rankmap.errors import RankmapError
    from rankmap.io import atomic
    target = tmp_path / "target.map"
    target.write_text("keep")
    link = tmp_path / "link.map"
    os.symlink(target, link)
    try:
        atomic.write_atomic(str(link), "new")
        raise AssertionError("replaced through a link without force")
    except RankmapError as exc:
        assert "link.map" in str(exc) and "--force" in str(exc)
    os.chmod(target, 0o640)
    atomic.write_atomic(str(link), "new", force=True)
    assert link.is_symlink() and target.read_text() == "new"
    assert oct(os.stat(target).st_mode & 0o777) == "0o640"
    dangling = tmp_path / "dangling.csv"
    os.symlink(tmp_path / "nowhere" / "t.csv", dangling)
    try:
        atomic.check_writable(str(dangling), True)
        raise AssertionError("a link into a missing folder was taken")
    except RankmapError as exc:
        assert "nowhere" in str(exc) and "does not exist" in str(exc)
    os.symlink(tmp_path / "later.csv", tmp_path / "ahead.csv")
    old = os.umask(0o077)
    try:
        atomic.write_atomic(str(tmp_path / "ahead.csv"), "x")
        atomic.write_atomic(str(tmp_path / "private.csv"), "y")
    finally:
        os.umask(old)
    assert (tmp_path / "later.csv").read_text() == "x" and (tmp_path / "ahead.csv").is_symlink()
    assert oct(os.stat(tmp_path / "private.csv").st_mode & 0o777) == "0o600"


def test_interrupt_is_one_line():
    """Ctrl-C once rankmap's code runs (imports included) is one line and status 130."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    exe = os.path.join(os.path.dirname(sys.executable), "rankmap")
    if not os.path.exists(exe):
        import pytest
        pytest.skip("the rankmap console script is not installed next to python")
    for delay in (0.0, 0.3):
        # SIGINT at its default, as under a terminal (a test run started in the background
        # inherits it ignored: the script would then finish and the check pass unexercised)
        p = subprocess.Popen([exe, "compare", "-m", "torus:8x8x8", "-p", "stencil:8x8x8"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             env=env, preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                                       signal.SIG_DFL))
        # wait until rankmap's code runs (its modules are loading numpy), not on a fixed clock:
        # a Ctrl-C inside the interpreter's own start-up is Python's, before any rankmap code
        deadline = time.monotonic() + 120
        while p.poll() is None and time.monotonic() < deadline:
            try:
                with open(f"/proc/{p.pid}/maps") as fh:
                    if "_multiarray_umath" in fh.read():
                        break
            except OSError:
                break
            time.sleep(0.01)
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
        if p.returncode == 0:
            continue  # finished before the signal
        assert p.returncode == 130 and err.strip() == "rankmap: interrupted", err


def test_outputs_refused_before_any_work(tmp_path):
    existing = tmp_path / "plot.png"
    existing.write_text("keep")
    res = run_cli(["compare", "-m", "torus:4x4", "-p", "stencil:4x4", "--plot-dir",
                   str(existing)])
    assert res.code == 2 and res.out == "" and "is a file" in res.err
    counters = tmp_path / "c.csv"
    counters.write_text("src,dim,dir,dst,bytes\n0,0,1,1,5\n1,0,1,0,7\n")
    for cmd in (["counters", str(counters)], ["links", str(counters), "-m", "torus:2"]):
        res = run_cli([*cmd, "--plot", str(existing)])
        assert res.code == 2 and res.out == "" and "exists" in res.err, res.err
    assert existing.read_text() == "keep"
    # a folder that takes no file or folder though os.access says yes to root (/proc)
    res = run_cli(["compare", "-m", "torus:4x4", "-p", "stencil:4x4", "--plot-dir",
                   "/proc/rankmap-nope"])
    assert res.code == 2 and res.out == "" and "--plot-dir" in res.err, res.err
    res = run_cli(["counters", str(counters), "--plot", "/proc/rankmap-x.png"])
    assert res.code == 2 and res.out == "" and "/proc" in res.err, res.err
    res = run_cli(["map", "-m", "torus:4x4", "-p", "stencil:4x4", "--mapping", "XYT",
                   "--emit", "slurm", "-o", str(tmp_path / "newdir") + "/"])
    assert res.code == 2 and "newdir/" in res.err and ".rankmap-" not in res.err


def test_an_output_is_never_an_input(tmp_path):
    """``-o`` naming a file the command reads is refused before any work, --force or not:
    the pattern file behind ``graph:``, a counters file, a mapfile."""
    graph = tmp_path / "g.csv"
    graph.write_text("0,1,100\n1,0,100\n")
    res = run_cli(["map", "-m", "torus:2", "-p", f"graph:{graph}", "--mapping", "inorder",
                   "--emit", "hostfile", "-o", str(graph), "--force"])
    assert res.code == 2 and "-o" in res.err and "--pattern" in res.err, res.err
    assert graph.read_text() == "0,1,100\n1,0,100\n"
    counters = tmp_path / "c.csv"
    counters.write_text("src,dim,dir,dst,bytes\n0,0,1,1,5\n1,0,1,0,7\n")
    res = run_cli(["counters", str(counters), "--plot", str(counters), "--force"])
    assert res.code == 2 and "FILE.csv" in res.err and res.out == "", res.err
    link = tmp_path / "via-link.csv"
    os.symlink(graph, link)
    res = run_cli(["evaluate", "-m", "torus:2", "-p", f"graph:{link}", "--mapping", "inorder",
                   "--links-out", str(graph), "--force"])
    assert res.code == 2 and "--links-out" in res.err, res.err


def test_simgrid_platform_and_hostfile_name_the_same_hosts(tmp_path):
    plat, hosts = str(tmp_path / "p.xml"), str(tmp_path / "hosts")
    res = run_cli(["simgrid", "platform", "-m", "torus:4x4x2", "-o", plat])
    assert res.code == 0, res.err
    res = run_cli(["map", "-m", "torus:4x4x2", "-p", "stencil:4x8", "--mapping", "XYZT",
                   "--emit", "hostfile", "-o", hosts])
    assert res.code == 0, res.err
    assert "rankmap simgrid platform" in res.out
    xml = open(plat).read()
    m = re.search(r'prefix="([^"]*)" suffix="([^"]*)" radical="0-(\d+)"', xml)
    platform_hosts = {f"{m.group(1)}{i}{m.group(2)}" for i in range(int(m.group(3)) + 1)}
    written = open(hosts).read().split()
    assert len(written) == 32 and set(written) <= platform_hosts
    again = run_cli(["simgrid", "platform", "-m", "torus:4x4x2", "-o", plat])
    assert again.code == 2 and "--force" in again.err


def test_evaluate_takes_the_same_format_option_as_compare():
    base = ["-m", "torus:4x4", "-p", "stencil:4x4"]
    for fmt in ("table", "json", "csv"):
        ev = run_cli(["evaluate", *base, "--mapping", "XYT", "--format", fmt])
        cmp_ = run_cli(["compare", *base, "--mappings", "XYT", "--format", fmt])
        assert ev.code == 0 and cmp_.code == 0 and not problems(ev) and not problems(cmp_)
        if fmt == "csv":
            assert ev.out == cmp_.out
        if fmt == "json":
            assert json.loads(ev.out)["candidates"][0]["mapping"] == "XYT"


def _csv(text):
    import csv
    import io
    rows = list(csv.reader(io.StringIO(text)))
    assert rows and all(len(r) == len(rows[0]) for r in rows), text
    return rows[0], rows[1:]


def _table_rows(text):
    """The body rows of a rich table printed without a terminal: cells split on the
    vertical rule."""
    return [[c.strip() for c in line.strip("│ ").split("│")] for line in text.splitlines()
            if line.startswith("│")]


def test_every_results_command_takes_the_same_format_option():
    from rankmap.cli import build_parser
    parser = build_parser("*")
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in ("compare", "evaluate", "counters", "links", "nodes", "study"):
        fmt = next(a for a in sub.choices[name]._actions if a.dest == "format")
        assert tuple(fmt.choices) == ("table", "json", "csv"), name


def test_nodes_csv_matches_the_table():
    argv = ["nodes", "-m", "torus:3x2x2", "-n", "0-5"]
    table, csv_, js = (run_cli([*argv, "--format", f]) for f in ("table", "csv", "json"))
    assert table.code == csv_.code == js.code == 0
    head, rows = _csv(csv_.out)
    assert head == ["name", "id", "coord0", "coord1", "coord2"]
    plain = [line.split() for line in table.out.splitlines()[1:]]
    assert [[r[0], r[1], *r[2:]] for r in rows] == plain
    assert [{"name": r[0], "id": int(r[1]), "coords": [int(v) for v in r[2:]]}
            for r in rows] == json.loads(js.out)


def _counters(tmp_path, n=1):
    paths = []
    for k in range(n):
        p = tmp_path / f"c{k}.csv"
        p.write_text("src,dim,dir,dst,bytes\n" + "".join(
            f"{i},0,{s},{(i + s) % 4},{(i + 1) * (k + 2) * (7 if s > 0 else 3)}\n"
            for i in range(4) for s in (1, -1)))
        paths.append(str(p))
    return paths


def test_links_csv_matches_the_table(tmp_path):
    from rankmap.counters.summary import fmt_count
    argv = ["links", _counters(tmp_path)[0], "-m", "torus:4", "--top", "5"]
    table, csv_, js = (run_cli([*argv, "--format", f]) for f in ("table", "csv", "json"))
    assert table.code == csv_.code == js.code == 0, csv_.err
    head, rows = _csv(csv_.out)
    assert head[0] == "phase" and head[-2:] == ["load", "unit"] and len(rows) == 5
    hot = json.loads(js.out)["phases"][0]["hottest"]
    assert [float(r[-2]) for r in rows] == [h["load"] for h in hot]
    shown = _table_rows(table.out)
    assert [s[-1] for s in shown] == [fmt_count(float(r[-2]), r[-1]) for r in rows]
    coords = [k.endswith("coords") for k in head[1:-2]]   # a list: "(x,y)" in the table
    assert [s[:-1] for s in shown] == [["(" + c.replace(" ", ",") + ")" if is_c else c
                                        for c, is_c in zip(r[1:-2], coords)] for r in rows]


def test_counters_csv_matches_the_table(tmp_path):
    from rankmap.counters.summary import fmt_count
    files = _counters(tmp_path, 3)
    times = tmp_path / "t.csv"
    times.write_text("label,phase,seconds\nc0,all,1\nc1,all,2\nc2,all,2.5\n")
    for extra in ([], ["--times", str(times)]):
        argv = ["counters", *files, *extra]
        table, csv_, js = (run_cli([*argv, "--format", f]) for f in ("table", "csv", "json"))
        assert table.code == csv_.code == js.code == 0, csv_.err
        head, rows = _csv(csv_.out)
        doc = json.loads(js.out)
        assert head[:5] == ["label", "phase", "links", "max", "mean"] and len(rows) == 3
        assert [float(r[3]) for r in rows] == [c["max"] for c in doc["counters"]]
        shown = _table_rows(table.out)[:3]
        unit = head.index("unit")
        assert [s[:3] for s in shown] == [r[:3] for r in rows]
        assert [s[3:] for s in shown] == [[fmt_count(float(v), r[unit]) for v in r[3:unit]]
                                          for r in rows]
        if extra:
            best = doc["correlation"]["all"]["best"]
            assert float(rows[0][head.index("best_pearson")]) == best["pearson"]
        else:
            assert "best_pearson" not in head


def test_a_host_named_inf_is_data_not_an_infinity(tmp_path):
    # fuzz input 179,212: a node list naming a host "inf" printed as JSON was taken for an
    # infinity by the output check
    from .harness import problems, run_cli

    (tmp_path / "in1.csv").write_text("name,id\ninf,0\n")
    res = run_cli(["nodes", "-m", "xc:groups=2", "-n", str(tmp_path / "in1.csv"),
                   "--format", "json"])
    assert res.code == 0 and '"name": "inf"' in res.out
    assert problems(res) == []
