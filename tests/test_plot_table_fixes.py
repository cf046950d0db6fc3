"""Tables and plots that read wrong: numbers broken across lines on an 80-column terminal,
labels cut to the same text, both scatter series on one x axis, CDFs squashed by one busy
link, identical curves taking the legend's slots, a correlation that cannot be computed shown
as empty axes and a fit of rounding noise, a fat tree's links report refused, the counters
help promising files that are not written, and legends over the curves."""

import io
import json
import re

import numpy as np
import pytest

from rankmap.cli import main
from test_counters import links_csv, run, write


def _small_comparison(names=("inorder", "greedy", "refine:random")):
    from rankmap.allocation import whole_machine
    from rankmap.machines import parse_machine
    from rankmap.patterns import parse_pattern
    from rankmap.selection import compare

    m = parse_machine("torus:4x4x4")
    return compare(m, whole_machine(m), parse_pattern("stencil:8x8"), list(names))


def _printed(renderable, width):
    from rich.console import Console

    buf = io.StringIO()
    Console(file=buf, width=width, color_system=None).print(renderable)
    return buf.getvalue()


def _cells(text):
    """The table's body cells, row by row (lines between the box's vertical bars)."""
    return [[c.strip() for c in line.rstrip()[1:-1].split("│")]
            for line in text.splitlines() if line.startswith("│")]


# ---- 1: numbers are never broken in a narrow table -------------------------------------

@pytest.mark.parametrize("width", [80, 60])
def test_compare_table_keeps_every_number_whole_on_a_narrow_terminal(width):
    """At 80 columns '12.337 ms' printed as '12.33' over '7 ms', '4.19e+08' as '4.19e+' over
    '08' and 'greedy' as 'greed' over 'y'. Now every number shown is whole on one line, the
    names whole or broken after ':', and the columns left out are named under the table."""
    from rankmap.report import render

    comp = _small_comparison()
    text = _printed(render.table(comp, title="t"), width)
    assert max(len(line) for line in text.splitlines()) <= width
    rows = _cells(text)
    names = [e.name for e in comp.candidates]
    # the first line of each candidate's row holds all its numbers, whole
    firsts = [r for r in rows if r[1] in names or r[1] in ("refine:",)]
    assert len(firsts) == len(comp.candidates)
    for e, row in zip(comp.candidates, firsts):
        assert render.format_seconds(e.metrics["predicted_time_s"]) in row
        assert render.format_bytes(e.metrics["max_link_bytes"]) in row
    # continuation lines carry no number (only the rest of a name)
    for row in rows:
        if row not in firsts:
            assert all(c == "" for i, c in enumerate(row) if i != 1), row
    assert "greedy" in text and "greed\n" not in text
    assert "not shown at this width" in text
    # wide enough: every column, and no note
    text = _printed(render.table(comp, title="t"), 160)
    assert "not shown" not in text
    for head in ("streams", "plateau", "mean", "avg", "hop-", "predicted", "vs inorder"):
        assert head in text


# ---- 2: labels stay distinguishable -----------------------------------------------------

def test_counters_labels_are_wrapped_never_cut_to_the_same_text(tmp_path, capsys):
    """Piped, both labels printed as 'experiment_2024_torus_8x8x8_ti…' (and a long phase
    name as 'a_really_long_phase_n…')."""
    phase = "a_really_long_phase_name_for_the_halo_exchange_of_the_ocean_model_timestep"
    a = write(tmp_path / "a.csv", links_csv([1, 2, 3, 4], phase))
    b = write(tmp_path / "b.csv", links_csv([4, 3, 2, 9], phase))
    long = "experiment_2024_torus_8x8x8_tilted_zigzag_run0"
    code, out, err = run(capsys, "counters", a, b, "--labels", f"{long}1,{long}2")
    assert code == 0, err
    assert "…" not in out
    groups = _row_groups(out)
    assert ["".join(r[0] for r in rows) for rows in groups] == [f"{long}1", f"{long}2"]
    assert ["".join(r[1] for r in rows) for rows in groups] == [phase, phase]


def _row_groups(text):
    """The table's rows, each the list of its lines' cells (a row starts where the links
    column has a number)."""
    groups = []
    for row in _cells(text):
        if len(row) > 2 and row[2]:
            groups.append([row])
        elif groups:
            groups[-1].append(row)
    return groups


def test_links_table_keeps_numbers_and_coordinates_whole_when_narrow(tmp_path, capsys,
                                                                      monkeypatch):
    """A 4-D torus's coordinates were cut to '(1,0,2,…' and numbers folded on a narrow
    output; now numbers are whole and a column that does not fit is named below."""
    import rankmap.cli.common as common

    f = write(tmp_path / "l.csv", "src,dim,dir,dst,bytes\n95976,0,1,95977,67108864\n"
              "104913,0,1,104914,66060288\n")
    monkeypatch.setattr(common, "PIPE_WIDTH", 40)
    code, out, err = run(capsys, "links", f, "--machine", "torus:40x30x20x12", "--top", "2")
    assert code == 0, err
    assert "…" not in out
    rows = _cells(out)
    assert [r[0] for r in rows] == ["95976", "104913"]
    assert "64.0 MiB" in out and "63.0 MiB" in out
    assert "not shown at this width" in out and "src_coords" in out
    monkeypatch.setattr(common, "PIPE_WIDTH", 120)
    code, out, err = run(capsys, "links", f, "--machine", "torus:40x30x20x12", "--top", "2")
    assert "(16,29,19,3)" in out and "not shown" not in out


# ---- 3, 6: the scatter: a panel per series; no fit of equal times -----------------------

def _four_runs(tmp_path):
    """Four runs: 99 % of links under 1 KiB, one busy link of 100-400 KiB."""
    rng = np.random.default_rng(5)
    paths = []
    for k in range(4):
        vals = np.concatenate([rng.integers(1, 1000, 199), [(k + 1) * 100 * 1024]])
        paths.append(write(tmp_path / f"run{k + 1}.csv", links_csv(vals.tolist())))
    return paths


def test_scatter_gives_each_series_its_own_axes_and_unit(tmp_path):
    """Busiest link and plateau y shared one MiB axis: the plateau points sat at x = 0 and
    their fit read '6.82e+06 ms per MiB'."""
    from rankmap.counters import read_runs, read_times
    from rankmap.counters.summary import analyse
    from rankmap.plots.correlation import plot_time_vs_plateau

    runs = read_runs(_four_runs(tmp_path), None)
    times = read_times(write(tmp_path / "t.csv", "label,phase,seconds\nrun1,all,0.1\n"
                             "run2,all,0.2\nrun3,all,0.35\nrun4,all,0.4\n"))
    doc = analyse(runs, 0.99, (50,), None, False, times, np.arange(0.6, 0.96, 0.05), "pearson")
    corr = doc["_corr"]["all"]
    assert corr["best"]["y"] != 1.0
    fig = plot_time_vs_plateau(doc["_corr"], "bytes")
    axes = [a for a in fig.axes if a.get_visible() and a.axison]
    assert len(axes) == 2
    for ax in axes:
        assert len(ax.collections) == 1          # one series per panel
        xs = ax.collections[0].get_offsets()[:, 0]
        lo, hi = ax.get_xlim()
        assert np.ptp(xs) > 0.5 * (hi - lo)      # its points spread over its own axis
        assert re.search(r"\((B|KiB|MiB)\)", ax.get_xlabel())
    units = [re.search(r"\((B|KiB|MiB)\)", a.get_xlabel()).group(1) for a in axes]
    assert units[0] != units[1]                  # 100s of KiB vs under 1 KiB


def test_equal_times_warn_say_so_on_the_plots_and_fit_no_line(tmp_path, capsys):
    """All times equal: the table said n/a, the JSON had no warning, the correlation plot
    was empty axes -0.04..0.04 with a legend of curves not drawn, and the scatter had a fit
    'fit: -1.61e-12 ms per MiB' (rounding noise)."""
    from rankmap.counters import read_runs, read_times
    from rankmap.counters.summary import analyse
    from rankmap.plots.correlation import plot_correlation_vs_y, plot_time_vs_plateau

    paths = _four_runs(tmp_path)
    tfile = write(tmp_path / "t.csv", "label,phase,seconds\n" +
                  "".join(f"run{k},all,0.5\n" for k in range(1, 5)))
    code, out, err = run(capsys, "counters", *paths, "--times", tfile, "--format", "json")
    assert code == 0, err
    assert "phase all: times are all equal: no correlation" in json.loads(out)["warnings"]
    assert "times are all equal" in err

    doc = analyse(read_runs(paths, None), 0.99, (50,), None, False, read_times(tfile),
                  np.round(np.arange(0.6, 1.001, 0.05), 2), "pearson")
    fig = plot_correlation_vs_y(doc["_corr"])
    ax = fig.axes[0]
    assert ax.get_legend() is None               # no entry for a curve not drawn
    assert any("times are all equal" in t.get_text() for t in ax.texts)
    lo, hi = ax.get_xlim()
    assert lo < 0.61 and hi > 0.99               # the y swept, not -0.04..0.04
    fig = plot_time_vs_plateau(doc["_corr"], "bytes")
    for a in fig.axes:
        labels = [t.get_text() for t in a.get_legend().get_texts()] if a.get_legend() else []
        assert not any(t.startswith("fit") for t in labels)
        assert len(a.get_lines()) == 0           # no fitted line
    assert any("times are all equal" in t.get_text() for a in fig.axes for t in a.texts)


# ---- 4: a CDF squashed by one busy link reads in log x ----------------------------------

def test_pdf_cdf_uses_a_log_axis_when_one_busy_link_squashes_the_curves(tmp_path):
    """99 % of links under 1 KiB and the busiest at 100-400 KiB: on a linear MiB axis all
    curves sat at x = 0 and the plateau labels read '0.0009422 MiB'."""
    from rankmap.counters import read_runs
    from rankmap.plots.counters import plot_pdf_cdf

    runs = read_runs(_four_runs(tmp_path), None)
    series = {r.label: r.phases["all"].values for r in runs}
    fig = plot_pdf_cdf(series, "bytes", 0.99)
    bot = fig.axes[1]
    assert bot.get_xscale() == "log" and "log scale" in bot.get_xlabel()
    labels = [t.get_text() for t in bot.get_legend().get_texts()]
    plateau = [t for t in labels if "plateau x" in t]
    assert len(plateau) == 4
    for t in plateau:
        assert re.search(r"= \d{3} B$", t), t    # '998 B', not '0.0009518 MiB'
    # an even spread keeps its linear axis
    rng = np.random.default_rng(1)
    fig = plot_pdf_cdf({"a": rng.gamma(3.0, 2**20, 300)}, "bytes", 0.99)
    assert fig.axes[1].get_xscale() == "linear"


def _captured_cdf_figures(monkeypatch):
    import matplotlib.figure

    figs = []
    real = matplotlib.figure.Figure.savefig

    def capture(fig, *args, **kwargs):
        out = real(fig, *args, **kwargs)      # drawn: the legend has its place
        figs.append(fig)
        return out

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", capture)
    return figs


def test_compare_cdf_log_axis_when_the_worst_squashes_the_rest(tmp_path, monkeypatch):
    """On mesh:16 random's busiest link (11 MiB) is 11 times TX's plateau point (1 MiB): a
    log axis, labelled so; on torus:8x8 (8 times) the axis stays linear."""
    from rankmap.allocation import whole_machine
    from rankmap.machines import parse_machine
    from rankmap.patterns import parse_pattern
    from rankmap.plots.cdf import plot_link_cdfs
    from rankmap.selection import compare

    figs = _captured_cdf_figures(monkeypatch)
    for spec, pattern, names in (("mesh:16", "stencil:16", ["TX", "random"]),
                                 ("torus:8x8:cores=1", "stencil:8x8", ["TXY", "random"])):
        m = parse_machine(spec)
        comp = compare(m, whole_machine(m), parse_pattern(pattern), names)
        plot_link_cdfs(comp, str(tmp_path / spec.replace(":", "_")))
    log, lin = figs[0].axes[0], figs[1].axes[0]
    assert log.get_xscale() == "log" and "log scale" in log.get_xlabel()
    lo, hi = log.get_xlim()
    assert 0 < lo < 1 and hi > 11                # MiB: every curve's whole range shown
    assert lin.get_xscale() == "linear" and "log" not in lin.get_xlabel()


# ---- 5: identical curves are drawn once, the slots go to distinct ones -------------------

def test_identical_curves_are_drawn_once_and_the_freed_slots_go_to_distinct_ones(
        tmp_path, monkeypatch):
    """The legend listed 'TXZY (= TXYZ)', 'TYXZ (= TXYZ)', ... (one curve) and said '28 of 36
    not drawn', leaving out distinct curves."""
    from rankmap.allocation import whole_machine
    from rankmap.machines import parse_machine
    from rankmap.mappers.rank_order import rank_order_names
    from rankmap.patterns import parse_pattern
    from rankmap.plots.cdf import plot_link_cdfs
    from rankmap.selection import compare

    figs = _captured_cdf_figures(monkeypatch)
    m = parse_machine("torus:4x4x4:cores=2")
    names = rank_order_names(m) + ["inorder", "random", "hilbert", "morton", "fold"]
    comp = compare(m, whole_machine(m), parse_pattern("stencil:8x16:box"), names)
    plot_link_cdfs(comp, str(tmp_path), max_curves=8)
    ax = figs[0].axes[0]
    lines = [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]
    curves = [tuple(np.asarray(ln.get_xdata(), dtype=float)) for ln in lines]
    assert len(set(curves)) == len(curves)            # no curve drawn twice
    distinct = {tuple(np.sort(e.phases[0].link_bytes)) for e in comp.candidates}
    assert len(lines) == min(8, len(distinct))        # every slot used while curves remain
    assert any("identical" in ln.get_label() for ln in lines)
    # the names a drawn curve stands for and the legend's count add up to every candidate
    title = ax.get_legend().get_title().get_text()
    left = int(re.search(r"(\d+) of", title).group(1)) if "not drawn" in title else 0
    shown = sum(1 + int(re.search(r"\(\+(\d+) identical", ln.get_label()).group(1))
                if "identical" in ln.get_label() else 1 for ln in lines)
    assert shown + left == len(comp.candidates)


# ---- 7: a fat tree's links report ---------------------------------------------------------

def test_links_report_on_a_fat_tree_is_written_without_the_map(tmp_path, capsys):
    """'error: no link-load map for fattree:k=4:levels=2 (fattree)', exit 2, after the
    table was printed."""
    f = tmp_path / "F.csv"
    code, _out, err = run(capsys, "evaluate", "--machine", "fattree:k=4:levels=2", "--pattern",
                          "stencil:4x4", "--mapping", "inorder", "--links-out", f,
                          "--format", "json")
    assert code == 0, err
    html = tmp_path / "F.html"
    code, out, err = run(capsys, "links", f, "--machine", "fattree:k=4:levels=2", "--report",
                         html)
    assert code == 0, err
    text = html.read_text()
    assert "Busiest links" in text and "host-up" in text
    assert "no link-load map is drawn for fattree:k=4:levels=2" in text
    assert "<img" not in text
    # --plot is still refused (one line, exit 2), before anything is printed
    code, out, err = run(capsys, "links", f, "--machine", "fattree:k=4:levels=2", "--plot",
                         tmp_path / "m.png")
    assert code == 2 and out == "" and "no link-load map" in err


# ---- 8: the help says what --plot writes with --times ----------------------------------

def test_counters_help_says_one_correlation_figure_and_one_is_written(tmp_path, capsys):
    halo = [write(tmp_path / f"r{k}.csv", links_csv([k + 1, 2 * k + 1, 3], "halo") +
                  "".join(f"fft,L{i},{v}\n" for i, v in enumerate([5 - k, k * k, 2])))
            for k in range(4)]
    times = write(tmp_path / "t.csv", "label,phase,seconds\n" + "".join(
        f"r{k},halo,{0.1 * (k + 1)}\nr{k},fft,{0.3 - 0.05 * k}\n" for k in range(4)))
    plot = tmp_path / "corr.png"
    code, _out, err = run(capsys, "counters", *halo, "--times", times, "--plot", plot)
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.glob("corr*")) == ["corr.png"]
    try:
        main(["counters", "--help"])
    except SystemExit:
        pass
    helptext = " ".join(capsys.readouterr().out.split())
    assert "with --times: the correlation vs y of every phase, in one figure" in helptext
    assert "(one file per phase when there are several, named FILE-PHASE.png); with" \
        in helptext


# ---- 9: legends outside the data ---------------------------------------------------------

def _overlaps(a, b):
    return not (a.x1 <= b.x0 or b.x1 <= a.x0 or a.y1 <= b.y0 or b.y1 <= a.y0)


def test_correlation_and_cdf_legends_do_not_cover_the_axes(tmp_path, monkeypatch):
    """The correlation legend (lower left) covered the fft phase's curves."""
    from rankmap.counters import sweep_phase
    from rankmap.plots.correlation import plot_correlation_vs_y

    rng = np.random.default_rng(3)
    series = [rng.gamma(2.0 + k, 2**20, 300) for k in range(5)]
    res = {}
    for ph, t in (("halo", [1.0, 1.3, 1.2, 2.0, 2.2]), ("fft", [0.5, 0.4, 0.45, 0.3, 0.2])):
        r = sweep_phase(series, np.array(t), np.round(np.arange(0.6, 1.001, 0.05), 2))
        r["labels"], r["seconds"] = [f"m{k}" for k in range(5)], t
        res[ph] = r
    fig = plot_correlation_vs_y(res)
    fig.canvas.draw()
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    assert not _overlaps(ax.get_legend().get_window_extent(renderer),
                         ax.get_window_extent(renderer))
    # and inside the figure (not cut off)
    fb = fig.bbox
    lb = ax.get_legend().get_window_extent(renderer)
    assert lb.x1 <= fb.x1 + 1 and lb.x0 >= fb.x0 - 1
    # the CDF legend too (it sat lower right, over the curves of a log axis)
    from rankmap.allocation import whole_machine
    from rankmap.machines import parse_machine
    from rankmap.patterns import parse_pattern
    from rankmap.plots.cdf import plot_link_cdfs
    from rankmap.selection import compare

    figs = _captured_cdf_figures(monkeypatch)
    m = parse_machine("mesh:16")
    plot_link_cdfs(compare(m, whole_machine(m), parse_pattern("stencil:16"), ["TX", "random"]),
                   str(tmp_path))
    ax = figs[0].axes[0]
    lb = ax.get_legend().get_window_extent()
    assert not _overlaps(lb, ax.get_window_extent())
    assert lb.x1 <= figs[0].bbox.x1 + 1
