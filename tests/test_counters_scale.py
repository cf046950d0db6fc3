"""Big counters files: ``counters`` and ``links`` read them in a few times their size of
memory (they took 35 bytes per byte: a 237 MiB file ran out of memory at 8 GB), the vectorised
reading gives what the csv module gives (quotes, CRLF, blank rows, line numbers), slow steps
show progress, and an interrupted run leaves none of the outputs it had written."""

import tracemalloc

import numpy as np
import pytest

from rankmap.cli import main
from rankmap.counters import read_counters
from rankmap.errors import RankmapError


def torus_file(path, n_links=60_000, phases=("halo", "allreduce.r0")):
    """A counters file as ``evaluate --links-out`` writes it: phase,src,dim,dir,dst,bytes,..."""
    src = np.arange(n_links) // 6
    dim = (np.arange(n_links) // 2) % 3
    direc = np.where(np.arange(n_links) % 2 == 0, 1, -1)
    rows = []
    for k, ph in enumerate(phases):
        b = (np.arange(n_links) * 7919 + k) % 100_003 * 1024
        cols = [np.full(n_links, ph), src, dim, direc, src + 1, b, b % 17]
        rows.append("\n".join(",".join(r) for r in zip(*[np.asarray(c).astype(str).tolist()
                                                          for c in cols])))
    path.write_text("phase,src,dim,dir,dst,bytes,streams\n" + "\n".join(rows) + "\n")
    return str(path)


def test_reading_a_big_file_takes_a_few_times_its_size(tmp_path):
    """Python lists of strings, then a fixed-width unicode table, took ~35 bytes a byte."""
    path = torus_file(tmp_path / "big.csv")
    size = (tmp_path / "big.csv").stat().st_size
    assert size > 3_000_000
    tracemalloc.start()
    try:
        run = read_counters(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert list(run.phases) == ["halo", "allreduce.r0"]
    assert len(run.phases["halo"].values) == 60_000
    assert run.phases["allreduce.r0"].values[1] == (7919 + 1) % 100_003 * 1024
    assert run.phases["halo"].lines[0] == 2 and run.phases["allreduce.r0"].lines[0] == 60_002
    assert peak < 6 * size, f"peak {peak / size:.1f} x the file's size"


def test_chunked_reading_is_the_csv_modules(tmp_path, monkeypatch):
    """Rows across chunk boundaries, quoted phase names (a comma, a quote, a line break),
    CRLF, blank rows and spaces read as the csv module reads them; lines are the file's."""
    from rankmap.counters import csvscan
    monkeypatch.setattr(csvscan, "CHUNK_BYTES", 16)
    text = ('phase,link,bytes\r\n"a,b",x,1\r\n"a,b", y ,2\r\n\r\n , \r\n'
            '"say ""hi""",x,3\r\n"say ""hi""",y,4.5\r\n"two\r\nlines",x,5\r\n'
            '"two\r\nlines",y,6\r\n')
    p = tmp_path / "q.csv"
    p.write_bytes(text.encode())
    run = read_counters(str(p))
    assert list(run.phases) == ["a,b", 'say "hi"', "two\r\nlines"]
    assert run.phases["a,b"].columns["link"].tolist() == ["x", "y"]
    assert run.phases['say "hi"'].values.tolist() == [3.0, 4.5]
    assert run.phases["a,b"].lines.tolist() == [2, 3]
    assert run.phases["two\r\nlines"].lines.tolist() == [8, 10]
    bad = tmp_path / "bad.csv"
    bad.write_text("link,bytes\n" + "".join(f"L{i},{i}\n" for i in range(50)) + "L50,x\n"
                   + "L51,-1\n")
    with pytest.raises(RankmapError, match=r"bad\.csv:52: bad bytes value 'x'"):
        read_counters(str(bad))
    bad.write_text("link,bytes\n" + "".join(f"L{i},{i}\n" for i in range(50)) + "L50,-1\n"
                   "L51,1,2\n")
    with pytest.raises(RankmapError, match=r"bad\.csv:53: 3 fields, the header has 2"):
        read_counters(str(bad))


def two_phase_links(tmp_path, capsys):
    f = tmp_path / "l.csv"
    assert main(["evaluate", "-m", "torus:4x4", "-p", "stencil:4x4 + stencil:4x4:box",
                 "--mapping", "inorder", "--time-model", "off", "--links-out", str(f),
                 "--format", "csv"]) == 0
    capsys.readouterr()
    return f


def test_interrupted_links_leaves_no_output_of_its_own(tmp_path, capsys, monkeypatch):
    """Ctrl-C after the first map left m.html and one map of two: the rerun was refused."""
    from rankmap.report import figures
    f = two_phase_links(tmp_path, capsys)
    before = tmp_path / "m-halo.png"        # a file of an earlier run, replaced by --force
    real, calls = figures.save_figure, []

    def save_then_stop(fig, path, force=False):
        calls.append(path)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(fig, path, force)

    monkeypatch.setattr(figures, "save_figure", save_then_stop)
    args = ["links", str(f), "-m", "torus:4x4", "--plot", str(tmp_path / "m.png"),
            "--report", str(tmp_path / "m.html"), "--top", "2"]
    assert main(args) == 130
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.csv"]
    before.write_bytes(b"old")
    calls.clear()
    assert main(args + ["--force"]) == 130
    # the file that was there stays (replaced by --force), the run's own are gone
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.csv", "m-halo.png"]
    before.unlink()
    monkeypatch.setattr(figures, "save_figure", real)
    assert main(args) == 0
    assert {p.name for p in tmp_path.iterdir()} == {"l.csv", "m.html", "m-halo.png",
                                                   "m-halo.2.png"}


def test_failed_counters_report_removes_the_plots(tmp_path, capsys, monkeypatch):
    from rankmap.report.html import Report
    f = two_phase_links(tmp_path, capsys)

    def fail(self, path, force=False):
        raise RankmapError("disk full")

    monkeypatch.setattr(Report, "write", fail)
    code = main(["counters", str(f), "--plot", str(tmp_path / "c.png"),
                 "--report", str(tmp_path / "c.html")])
    assert code == 2 and "disk full" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.csv"]


def test_out_of_memory_names_the_counters_file(tmp_path, capsys, monkeypatch):
    """It said 'use a smaller machine, pattern or allocation', which counters has none of."""
    import rankmap.counters as counters
    f = two_phase_links(tmp_path, capsys)

    def no_memory(*a, **k):
        raise MemoryError

    monkeypatch.setattr(counters, "read_counters", no_memory)
    monkeypatch.setattr(counters, "read_runs", no_memory)
    for args in (["counters", str(f)], ["links", str(f), "-m", "torus:4x4"]):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert "out of memory" in err and str(f) in err and "pattern" not in err


def test_reports_say_each_plot_is_done(tmp_path, capsys):
    """The reports' plots took seconds in silence: each one advances a progress bar."""
    from rankmap.counters import read_runs
    from rankmap.counters.summary import analyse
    from rankmap.report.counters_report import counters_report
    from rankmap.report.links_report import links_report
    f = two_phase_links(tmp_path, capsys)
    runs = read_runs([str(f)])
    doc = analyse(runs, 0.99, (50,), None, False, None, None, "pearson")
    doc.pop("_corr", None)
    seen = []
    counters_report(runs, doc, None, progress=seen.append)
    assert seen == ["phase halo", "phase halo.2"]
    seen.clear()
    ldoc = {"file": "l.csv", "machine": "torus:4x4", "unit": "bytes",
            "phases": [{"phase": "a", "hottest": []}, {"phase": "b", "hottest": []}]}
    links_report(ldoc, "max", lambda name: _figure(), progress=seen.append)
    assert seen == ["phase a", "phase b"]


def _figure():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(1, 1))
    ax.plot([0, 1])
    return fig
