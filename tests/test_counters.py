"""Counters: CSV reading (with file:line errors), plateau/percentiles on hand-made counters,
the y-sweep correlation with known answers, and ``rankmap counters`` end to end, including
the round trip of ``rankmap evaluate --links-out`` through the real CLI."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankmap.cli import main
from rankmap.counters import (correlate, parse_sweep, phase_stats, read_counters, read_runs,
                              read_times, sweep_phase)
from rankmap.counters.analysis import empirical_cdf, empirical_pdf
from rankmap.errors import RankmapError


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def write(path, text):
    path.write_text(text)
    return str(path)


def links_csv(values, phase=None):
    head = ("phase," if phase else "") + "link,bytes\n"
    return head + "".join(f"{phase + ',' if phase else ''}L{i},{v}\n" for i, v in enumerate(values))


# ---- reading ---------------------------------------------------------------------------

def test_read_torus_and_free_link_ids(tmp_path):
    p = write(tmp_path / "a.csv", "src,dim,dir,dst,bytes,streams\n0,0,1,1,100,2\n1,0,-1,0,50,1\n")
    r = read_counters(p)
    assert r.label == "a" and r.unit == "bytes" and list(r.phases) == ["all"]
    assert r.phases["all"].values.tolist() == [100.0, 50.0]
    assert r.phases["all"].columns["dir"].tolist() == [1, -1]
    q = write(tmp_path / "b.csv", "link,packets,phase\nx,3,p1\ny,4,p1\nx,5,p2\ny,6,p2\n")
    r = read_counters(q, "B")
    assert r.label == "B" and r.unit == "packets" and list(r.phases) == ["p1", "p2"]
    assert r.phases["p2"].values.tolist() == [5.0, 6.0]
    agg = r.aggregated()
    assert agg.name == "all" and sorted(agg.values.tolist()) == [8.0, 10.0]


@pytest.mark.parametrize("text, where, what", [
    ("src,dim,dir,dst,bytes\n0,0,1,1,10\n0,0,1,2,abc\n", ":3:", "bad bytes value 'abc'"),
    ("src,dim,dir,dst,bytes\n0,0,1,1,10\n\n0,0,1\n", ":4:", "3 fields"),
    ("src,dim,dir,dst,bytes\n0,0,2,1,10\n", ":2:", "bad dir value '2'"),
    ("src,dim,dir,dst,bytes\n0,0,1,1,-5\n", ":2:", "'-5'"),
    ("src,dim,dir,dst,bytes\n0,x,1,1,5\n", ":2:", "bad dim value 'x'"),
    ("link,bytes,phase\na,1,\n", ":2:", "empty phase"),
    ("src,dst,weight\n0,1,5\n", ":1:", "no 'bytes' or 'packets'"),
    ("node,bytes\n0,1\n", ":1:", "names no link"),
    ("link,bytes\na,9007199254740993\n", ":2:", "to 2^53 (counts above it would be rounded)"),
])
def test_malformed_rows_name_file_and_line(tmp_path, text, where, what):
    p = write(tmp_path / "bad.csv", text)
    with pytest.raises(RankmapError) as ei:
        read_counters(p)
    assert str(tmp_path / "bad.csv") + where in str(ei.value) and what in str(ei.value)


def test_malformed_row_through_cli(tmp_path, capsys):
    p = write(tmp_path / "bad.csv", "link,bytes\na,1\nb,one\n")
    code, _out, err = run(capsys, "counters", p)
    assert code == 2 and f"{p}:3: bad bytes value 'one'" in err and "Traceback" not in err


def test_run_level_errors(tmp_path):
    a = write(tmp_path / "a.csv", links_csv([1, 2]))
    b = write(tmp_path / "b.csv", "link,packets\nL0,1\n")
    with pytest.raises(RankmapError, match="mix bytes and packets"):
        read_runs([a, b])
    with pytest.raises(RankmapError, match="label 'x' is used for both"):
        read_runs([a, a], ["x", "x"])
    with pytest.raises(RankmapError, match="gives 1 labels for 2 files"):
        read_runs([a, a], ["x"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10**12), min_size=1, max_size=50),
       st.sampled_from([None, "halo", "x-1"]))
def test_read_back_what_was_written(tmp_path_factory, values, phase):
    p = tmp_path_factory.mktemp("rt") / "c.csv"
    p.write_text(links_csv(values, phase))
    r = read_counters(str(p))
    assert list(r.phases) == [phase or "all"]
    assert r.phases[phase or "all"].values.tolist() == [float(v) for v in values]


# ---- statistics --------------------------------------------------------------------------

def test_plateau_and_percentiles_known_answers():
    v = np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 100], dtype=float)   # one hot link
    s = phase_stats(v, y=0.9, percentiles=(50, 100))
    assert s["links"] == 10 and s["max"] == 100 and s["mean"] == pytest.approx(13.6)
    assert s["plateau"] == {"y": 0.9, "x": 8.0}           # 9 of 10 links carry <= 8
    # a link's own count (5 of 10 links carry at most 4), never 4.5, a count no link has
    assert s["percentiles"] == {"p50": 4.0, "p100": 100.0}
    ones = np.arange(1.0, 101.0)            # n * q in floating point put p7 on 8 (numpy)
    assert phase_stats(ones, percentiles=(7, 0))["percentiles"] == {"p7": 7.0, "p0": 1.0}
    for y in (0.5, 0.9, 0.95, 0.99):        # the plateau point's rule, whatever the counts
        w = np.random.default_rng(int(y * 100)).integers(0, 1 << 20, 137).astype(float)
        t = phase_stats(w, y=y, percentiles=(100 * y,))
        assert t["percentiles"][f"p{100 * y:g}"] == t["plateau"]["x"] and t["plateau"]["x"] in w
    assert phase_stats(v, y=1.0)["plateau"]["x"] == 100   # y = 1: the busiest link
    assert phase_stats(v, y=0.5)["plateau"]["x"] == 4     # 5 of 10 carry <= 4
    assert phase_stats(np.arange(200.0), y=0.99)["plateau"]["x"] == 197  # ceil(198)-th value


def test_pdf_and_cdf():
    v = np.array([0, 0, 1, 3], dtype=float)
    edges, frac = empirical_pdf(v, bins=3)
    assert frac.sum() == pytest.approx(1.0) and frac.tolist() == [0.5, 0.25, 0.25]
    x, f = empirical_cdf(v)
    assert x.tolist() == [0, 0, 1, 3] and f.tolist() == [0.25, 0.5, 0.75, 1.0]


# ---- correlation -------------------------------------------------------------------------

def test_parse_sweep():
    ys = parse_sweep("0.6:1.0")
    assert len(ys) == 41 and ys[0] == 0.6 and ys[-1] == 1.0 and 0.99 in ys.tolist()
    assert parse_sweep("0.5:0.9:0.2").tolist() == [0.5, 0.7, 0.9]
    assert parse_sweep("0.5:0.8:0.2").tolist() == [0.5, 0.7, 0.8]
    for bad in ("0.6", "0:1", "0.9:0.5", "a:b", "0.5:1.2", "0.5:1:0"):
        with pytest.raises(RankmapError, match="sweep-y"):
            parse_sweep(bad)


def test_correlate_known_values():
    r, rho = correlate([1, 2, 3, 4], [2, 4, 6, 8])
    assert r == pytest.approx(1.0) and rho == pytest.approx(1.0)
    r, rho = correlate([1, 2, 3, 4], [1, 4, 9, 100])   # monotone, not linear
    assert rho == pytest.approx(1.0) and r < 0.95
    assert correlate([1, 1, 1], [1, 2, 3]) == (None, None)   # constant x: undefined


def test_sweep_finds_the_y_where_the_bulk_predicts_time():
    """Four placements of 100 links. Their bulk (99th value) grows 10, 20, 30, 40 and their
    times are 1, 2, 3, 4 s; the hottest link is a decoy that shrinks. So y = 0.99 has r = 1,
    y = 1 (busiest) is perfectly anti-correlated, and the median (all zero) is undefined."""
    series = []
    for k in range(4):
        v = np.zeros(100)
        v[60:99] = 10 * (k + 1)
        v[99] = 1000 - 100 * k
        series.append(v)
    res = sweep_phase(series, np.array([1.0, 2.0, 3.0, 4.0]), [0.5, 0.9, 0.99])
    by_y = {e["y"]: e for e in res["sweep"]}
    assert by_y[0.5]["pearson"] is None
    assert by_y[0.99]["pearson"] == pytest.approx(1.0)
    assert by_y[1.0]["pearson"] == pytest.approx(-1.0) and by_y[1.0]["spearman"] == pytest.approx(-1.0)
    assert res["best"]["y"] == 0.99 and res["busiest"]["y"] == 1.0
    assert res["x"][0.99] == [10, 20, 30, 40]


def test_read_times_errors(tmp_path):
    good = write(tmp_path / "t.csv", "label,phase,seconds\na,all,1.5\n")
    assert read_times(good) == {("a", "all"): 1.5}
    for text, msg in [("label,seconds\na,1\n", ":1: header"),
                      ("label,phase,seconds\na,all,x\n", ":2: bad seconds value 'x'"),
                      ("label,phase,seconds\na,all,1\na,all,2\n", ":3: second time"),
                      ("label,phase,seconds\na,all\n", ":2: 2 fields")]:
        p = write(tmp_path / "bad.csv", text)
        with pytest.raises(RankmapError, match=msg):
            read_times(p)


# ---- the command ---------------------------------------------------------------------------

def _four_runs(tmp_path, phases=("all",)):
    paths = []
    for k in range(4):
        rows = ["phase,link,bytes"]
        for ph in phases:
            for i in range(100):
                rows.append(f"{ph},L{i},{(k + 1) * (i + 1) if i < 99 else 5000 - k * 1000}")
        paths.append(write(tmp_path / f"m{k}.csv", "\n".join(rows) + "\n"))
    return paths


def test_counters_json_per_file_and_phase(tmp_path, capsys):
    paths = _four_runs(tmp_path, phases=("a", "b"))
    code, out, err = run(capsys, "counters", *paths, "--labels", "M0,M1,M2,M3", "--y", "0.9",
                         "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    rows = doc["counters"]
    assert [(r["label"], r["phase"]) for r in rows][:3] == [("M0", "a"), ("M0", "b"), ("M1", "a")]
    for r in rows:
        assert set(r) >= {"label", "phase", "links", "max", "mean", "plateau"}
        assert r["links"] == 100 and r["plateau"]["y"] == 0.9
    assert rows[0]["plateau"]["x"] == 90 and rows[2]["plateau"]["x"] == 180
    assert doc["warnings"] == [] and "correlation" not in doc


def test_counters_times_sweep_json(tmp_path, capsys):
    paths = _four_runs(tmp_path)
    times = write(tmp_path / "times.csv", "label,phase,seconds\n" +
                  "".join(f"m{k},all,{k + 1}\n" for k in range(4)))
    code, out, err = run(capsys, "counters", *paths, "--times", times, "--sweep-y",
                         "0.6:1.0:0.1", "--format", "json")
    assert code == 0, err
    corr = json.loads(out)["correlation"]["all"]
    assert corr["labels"] == ["m0", "m1", "m2", "m3"] and corr["seconds"] == [1, 2, 3, 4]
    assert corr["best"]["pearson"] == pytest.approx(1.0) and corr["best"]["y"] <= 0.99
    assert corr["busiest"]["y"] == 1.0 and corr["busiest"]["pearson"] == pytest.approx(-1.0)
    assert [e["y"] for e in corr["sweep"]] == [0.6, 0.7, 0.8, 0.9, 1.0]
    code, out, _ = run(capsys, "counters", *paths, "--times", times)
    assert code == 0 and "best y" in out and "busiest link" in out


def test_counters_warns_when_counters_span_phases(tmp_path, capsys):
    paths = _four_runs(tmp_path, phases=("a", "b"))
    times = write(tmp_path / "times.csv", "label,phase,seconds\n" +
                  "".join(f"m{k},all,{k + 1}\n" for k in range(4)))
    code, out, err = run(capsys, "counters", *paths, "--times", times, "--format", "json")
    assert code == 0
    assert "warning" in err and "several phases" in err
    doc = json.loads(out)
    assert any("several phases" in w for w in doc["warnings"])
    code, out, err = run(capsys, "counters", *paths, "--aggregate", "--format", "json")
    assert code == 0 and "several phases" in err
    assert {r["phase"] for r in json.loads(out)["counters"]} == {"all"}


def test_counters_bad_options(tmp_path, capsys):
    paths = _four_runs(tmp_path)
    for args, msg in [(["--y", "1.5"], "argument --y: '1.5': must be at most 1"),
                      # options of the correlation, without --times: refused, not ignored
                      (["--sweep-y", "2:3"], "--sweep-y 2:3: applies with --times"),
                      (["--by", "spearman"], "--by spearman: applies with --times"),
                      (["--percentiles", "50,abc"], "bad percentile 'abc'"),
                      (["--plot", str(tmp_path / "x.gif")], "expected a .png or .svg"),
                      (["--scatter", str(tmp_path / "x.png")], "--scatter needs --times"),
                      (["--phase", "nope"], "no phase 'nope'")]:
        code, _o, err = run(capsys, "counters", *paths, *args)
        assert code == 2 and msg in err, (args, err)


def test_evaluate_links_out_reads_back_unchanged(tmp_path, capsys):
    """The CSV of ``rankmap evaluate --links-out`` (here a two-phase pattern, so with a leading
    phase column) reads back with the evaluated per-link bytes, phase by phase."""
    out = tmp_path / "links.csv"
    code, js, err = run(capsys, "evaluate", "--machine", "torus:4x4x2:cores=2", "--pattern",
                        "fft2d:4x8", "--mapping", "XYZT", "--links-out", out)
    assert code == 0, err
    ev = json.loads(js)["candidates"][0]
    r = read_counters(str(out))
    assert r.has_phase_column and list(r.phases) == [p["name"] for p in ev["phases"]]
    from rankmap.allocation import parse_allocation
    from rankmap.evaluation import Evaluator
    from rankmap.machines import parse_machine
    from rankmap.mappers import build_mapping
    from rankmap.patterns import parse_pattern
    from rankmap.counters.links import align_to_machine

    m = parse_machine("torus:4x4x2:cores=2")
    a = parse_allocation(None, m)
    p = parse_pattern("fft2d:4x8", default_ranks=a.n_cores)
    e = Evaluator(m, a, p).evaluate(build_mapping("XYZT", p, m, a, 0))
    for ph in e.phases:
        got = r.phases[ph.name]
        assert np.array_equal(got.values, ph.link_bytes)
        assert np.array_equal(got.columns["streams"], ph.link_streams)
        assert np.array_equal(align_to_machine(m, got), ph.link_bytes)
    code, js2, _ = run(capsys, "counters", out, "--format", "json")
    doc = json.loads(js2)
    for row, ph in zip(doc["counters"], ev["phases"]):
        assert row["max"] == ph["metrics"]["max_link_bytes"]
        assert row["plateau"]["x"] == ph["metrics"]["plateau_bytes"]
        assert math.isclose(row["mean"], ph["metrics"]["mean_link_bytes"])


def test_counters_writes_plots(tmp_path, capsys):
    paths = _four_runs(tmp_path, phases=("a", "b"))
    code, _o, err = run(capsys, "counters", *paths, "--plot", tmp_path / "cdf.svg")
    assert code == 0, err
    for ph in ("a", "b"):
        svg = (tmp_path / f"cdf-{ph}.svg").read_text()
        assert svg.lstrip().startswith("<?xml") and "plateau" in svg
    code, out, err = run(capsys, "counters", *paths, "--plot", tmp_path / "cdf.svg")
    assert code == 2 and "exists" in err
    assert out == ""            # a refused plot file stops the command before it prints


def test_histogram_of_counts_too_close_for_float64_has_fewer_bins():
    """Counts 2 apart at 1e16 made numpy raise 'Too many bins for data range'."""
    from rankmap.counters.analysis import empirical_pdf
    for values in ([1e16, 1e16 + 2], [0.0, 5e-324], [1.0, 1.0 + 2 ** -52], [1e16],
                   [-1e308, 1e308]):
        edges, frac = empirical_pdf(values, 40)
        assert (np.diff(edges) > 0).all() and np.isfinite(edges).all()
        assert edges[0] <= min(values) and max(values) <= edges[-1] and frac.sum() == 1.0
    # ordinary counts keep numpy's bins
    edges, frac = empirical_pdf([0, 1, 2, 3, 10], 40)
    want, want_edges = np.histogram([0, 1, 2, 3, 10], bins=40)
    assert np.array_equal(edges, want_edges) and np.array_equal(frac, want / 5)


def test_report_names_runs_tied_on_the_plateau_point_and_runs_without_time(tmp_path, capsys):
    """The report crowned one 'winner' of runs tied on both plateau point and busiest link;
    a run without a time was dropped from the correlation without a word."""
    from rankmap.cli import main
    for name, text in (("ta", "a,1\nb,2\nc,2\n"), ("tb", "a,1\nb,2\nc,2\n"),
                       ("tc", "a,5\nb,5\nc,5\n"), ("td", "a,1\nb,2\nc,9\n")):
        (tmp_path / f"{name}.csv").write_text("link,bytes\n" + text)
    (tmp_path / "t.csv").write_text("label,phase,seconds\nta,all,1\ntb,all,1\ntc,all,2\n")
    report = tmp_path / "r.html"
    files = [str(tmp_path / f"{n}.csv") for n in ("ta", "tb", "tc", "td")]
    assert main(["counters", *files, "--y", "0.6", "--times", str(tmp_path / "t.csv"),
                 "--report", str(report)]) == 0
    err = capsys.readouterr().err
    assert "no time for td: left out of the correlation" in err
    html = report.read_text()
    assert "ta, tb, td tie with the lowest plateau point" in html
    assert "the lightest busiest link (2 B) is shared by ta, tb" in html


def test_report_names_the_run_of_a_tie_with_the_lightest_busiest_link(tmp_path):
    """'ta, tb tie ...; it also has the lightest busiest link' did not say which."""
    from rankmap.cli import main
    (tmp_path / "ta.csv").write_text("link,bytes\na,1\nb,2\nc,2\n")
    (tmp_path / "tb.csv").write_text("link,bytes\na,1\nb,2\nc,5\n")
    report = tmp_path / "r.html"
    assert main(["counters", str(tmp_path / "ta.csv"), str(tmp_path / "tb.csv"), "--y", "0.6",
                 "--report", str(report)]) == 0
    assert "ta, tb tie with the lowest plateau point" in report.read_text()
    assert "; ta also has the lightest busiest link." in report.read_text()


def test_a_repeated_label_is_refused_before_any_file_is_read(tmp_path, monkeypatch):
    """Eight copies of one big file were all read (52 s) before the repeat was said."""
    from rankmap.counters import reader
    path = tmp_path / "a.csv"
    path.write_text("link,bytes\nx,1\n")
    monkeypatch.setattr(reader, "read_counters", lambda *a: pytest.fail("a file was read"))
    with pytest.raises(RankmapError, match="label 'a' is used for both"):
        reader.read_runs([str(path), str(path)])


# ---- --phase with --times, CSV of an 'all' correlation, --sweep-y and y = 1 ----------------

def _phase_times(tmp_path, phases):
    """Times per phase, each phase ordering the four runs differently."""
    rows = ["label,phase,seconds"]
    for j, ph in enumerate(phases):
        rows += [f"m{k},{ph},{(k + 1) if j == 0 else (4 - k) * 10}" for k in range(4)]
    return write(tmp_path / "times.csv", "\n".join(rows) + "\n")


def test_phase_with_times_uses_that_phases_times_only(tmp_path, capsys):
    """--phase a with times for a and b failed: 'times give phase 'b' for 'm0' but m0.csv has
    phases a' (untrue: --phase had filtered b away)."""
    paths = _four_runs(tmp_path, phases=("a", "b"))
    times = _phase_times(tmp_path, ("a", "b"))
    for ph, secs in (("a", [1, 2, 3, 4]), ("b", [40, 30, 20, 10])):
        code, out, err = run(capsys, "counters", *paths, "--times", times, "--phase", ph,
                             "--format", "json")
        assert code == 0, err
        doc = json.loads(out)
        assert list(doc["correlation"]) == [ph] and doc["correlation"][ph]["seconds"] == secs
        assert {r["phase"] for r in doc["counters"]} == {ph}
    # without --phase both phases are correlated, each with its own times
    code, out, err = run(capsys, "counters", *paths, "--times", times, "--format", "json")
    assert code == 0 and list(json.loads(out)["correlation"]) == ["a", "b"]
    # times of no analysed phase: one line saying which phases the times give
    code, _o, err = run(capsys, "counters", *paths, "--times", times, "--aggregate")
    assert code == 2 and "no time for phase all, which --aggregate analyses" in err
    assert "they give phase a, b" in err and len(err.strip().splitlines()) == 1


def test_csv_carries_the_all_correlation_of_files_with_phases(tmp_path, capsys):
    """Times for phase 'all' of files with phases: the table and JSON show the correlation,
    the CSV had per-phase rows only with the correlation columns empty."""
    import csv
    import io
    paths = _four_runs(tmp_path, phases=("a", "b"))
    times = write(tmp_path / "t.csv", "label,phase,seconds\n" +
                  "".join(f"m{k},all,{k + 1}\n" for k in range(4)))
    code, out, _e = run(capsys, "counters", *paths, "--times", times, "--format", "json")
    assert code == 0
    doc = json.loads(out)
    want = doc["correlation"]["all"]
    code, out, _e = run(capsys, "counters", *paths, "--times", times, "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    per_phase = [r for r in rows if r["phase"] != "all"]
    assert len(per_phase) == len(doc["counters"]) == 8
    assert all(r["best_y"] == "" for r in per_phase)          # no time for phases a and b
    summed = [r for r in rows if r["phase"] == "all"]
    assert [r["label"] for r in summed] == want["labels"] == ["m0", "m1", "m2", "m3"]
    for r in summed:
        assert float(r["best_y"]) == want["best"]["y"]
        assert float(r["best_pearson"]) == want["best"]["pearson"]
        assert float(r["busiest_pearson"]) == want["busiest"]["pearson"]
        assert r["links"] == r["plateau_x"] == "" and r["unit"] == "bytes"
    code, out, _e = run(capsys, "counters", *paths, "--times", times)
    assert f"{want['best']['pearson']:.3f}" in out and "phase all" in out


def test_sweep_y_outside_one_keeps_the_busiest_link_as_said_in_help(tmp_path, capsys):
    """y = 1.0 (the busiest link) is always correlated beside the sweep, as the reference; it
    is never the best y when outside START:STOP. The help says so."""
    paths = _four_runs(tmp_path)
    times = write(tmp_path / "times.csv", "label,phase,seconds\n" +
                  "".join(f"m{k},all,{4 - k}\n" for k in range(4)))    # busiest link: r = 1
    code, out, err = run(capsys, "counters", *paths, "--times", times, "--sweep-y",
                         "0.6:0.9:0.1", "--format", "json")
    assert code == 0, err
    corr = json.loads(out)["correlation"]["all"]
    assert [e["y"] for e in corr["sweep"]] == [0.6, 0.7, 0.8, 0.9, 1.0]
    assert corr["busiest"]["pearson"] == pytest.approx(1.0)
    assert corr["best"] is None or corr["best"]["y"] <= 0.9
    try:
        main(["counters", "--help"])
    except SystemExit:
        pass
    text = " ".join(capsys.readouterr().out.split())
    assert "y = 1.0, the busiest link, is always correlated" in text
    assert "never picked as the best y" in text


def test_every_percentile_asked_for_gets_its_own_exact_column():
    """--percentiles 50.00001,50.000049 gave one column 'p50' (labels rounded to 6 digits),
    holding neither; a percentile given twice is refused rather than dropped."""
    from rankmap.counters.analysis import parse_percentiles, percentile_label
    assert [percentile_label(p) for p in (50.0, 99.9, 0.0, 50.00001, 50.000049)] == [
        "p50", "p99.9", "p0", "p50.00001", "p50.000049"]
    with pytest.raises(RankmapError, match="50 is given twice"):
        parse_percentiles("50,90,50")
