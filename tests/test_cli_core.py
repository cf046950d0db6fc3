"""The compare / evaluate / map / demo commands end to end, and their bad-input errors."""

import csv
import io
import json
import os

import pytest

from rankmap.cli import main


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_json_matches_design(capsys):
    code, out, _ = run(capsys, "compare", "--machine", "torus:4x4x4:cores=2", "--pattern",
                       "stencil:8x16:box", "--mappings", "TXYZ,TZXY,XYZT", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["routing"] == "dor" and len(doc["candidates"]) == 3
    assert doc["best"] == doc["candidates"][0]["mapping"]
    for c in doc["candidates"]:
        assert set(c["metrics"]) >= {"max_link_streams", "max_link_bytes", "mean_link_bytes",
                                     "avg_hops", "hop_bytes", "plateau_bytes"}
        assert c["phases"][0]["name"] == "halo"
    keys = [(c["metrics"]["max_link_bytes"], c["metrics"]["hop_bytes"]) for c in doc["candidates"]]
    assert keys == sorted(keys)


def test_compare_table_and_csv(capsys):
    code, out, _ = run(capsys, "compare", "-m", "torus:4x4", "-p", "fft2d:4x4",
                       "--mappings", "all", "--routing", "adaptive")
    assert code == 0 and "best:" in out and "TXY" in out
    code, out, _ = run(capsys, "compare", "-m", "torus:4x4", "-p", "fft2d:4x4", "--mappings",
                       "TXY,YXT", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {r["phase"] for r in rows} == {"all", "dim0", "dim1"} and len(rows) == 6


def test_compare_plots(capsys, tmp_path):
    d = tmp_path / "plots"
    code, _, err = run(capsys, "compare", "-m", "torus:4x4", "-p", "fft2d:4x4",
                       "--mappings", "TXY,inorder", "--plot-dir", str(d))
    assert code == 0
    for name in ("cdf-dim0.png", "cdf-dim1.png"):
        assert (d / name).stat().st_size > 5000
    code, _, err = run(capsys, "compare", "-m", "torus:4x4", "-p", "fft2d:4x4",
                       "--mappings", "TXY", "--plot-dir", str(d))
    assert code == 2 and "--force" in err


def test_map_then_evaluate_round_trip(capsys, tmp_path):
    mf = tmp_path / "map.txt"
    links = tmp_path / "links.csv"
    code, out, _ = run(capsys, "map", "-m", "torus:8x8x8:cores=2", "-p", "fft2d:32x32",
                       "--mapping", "ZYXT", "--emit", "bgp", "-o", str(mf))
    assert code == 0 and "mapfile" in out
    code, out, _ = run(capsys, "evaluate", "-m", "torus:8x8x8:cores=2", "-p", "fft2d:32x32",
                       "--mapfile", str(mf), "--links-out", str(links))
    assert code == 0
    via_file = json.loads(out)["candidates"][0]
    code, out, _ = run(capsys, "evaluate", "-m", "torus:8x8x8:cores=2", "-p", "fft2d:32x32",
                       "--mapping", "ZYXT")
    assert json.loads(out)["candidates"][0]["metrics"] == via_file["metrics"]
    rows = list(csv.reader(open(links)))
    assert rows[0] == ["phase", "src", "dim", "dir", "dst", "bytes", "streams"]
    assert len(rows) == 1 + 2 * 512 * 6
    total = sum(float(r[5]) for r in rows[1:])
    assert total == pytest.approx(via_file["metrics"]["hop_bytes"])
    # refuse to overwrite without --force
    code, _, err = run(capsys, "map", "-m", "torus:8x8x8:cores=2", "-p", "fft2d:32x32",
                       "--mapping", "ZYXT", "--emit", "bgp", "-o", str(mf))
    assert code == 2 and "exists" in err and "--force" in err
    assert run(capsys, "map", "-m", "torus:8x8x8:cores=2", "-p", "fft2d:32x32", "--mapping",
               "TXYZ", "--emit", "bgp", "-o", str(mf), "--force")[0] == 0


def test_single_phase_links_csv_header(capsys, tmp_path):
    links = tmp_path / "l.csv"
    code, _out, err = run(capsys, "evaluate", "-m", "torus:4", "-p", "stencil:4", "--mapping",
                          "TX", "--links-out", str(links))
    assert code == 0 and f"wrote {links}" in err       # as every other file written
    rows = list(csv.reader(open(links)))
    assert rows[0] == ["src", "dim", "dir", "dst", "bytes", "streams"]
    assert rows[1] == ["0", "0", "1", "1", str(1 << 20), "1"]


MAPFILE_CASES = [
    ("0 0\n1 0 0\n", "line 1: expected 3 numbers"),
    ("0 0 x\n1 0 0\n", "not integers"),
    ("0 0 0\n", "places 1 ranks, the pattern has 2"),
    ("0 0 0\n0 0 0\n", "lines 1 and 2"),
    ("0 0 0\n9 0 0\n", "line 2: coordinates \\(9, 0\\)"),
    ("0 0 0\n0 0 5\n", "core 5"),
    ("# only a comment\n", "places no ranks"),
]


@pytest.mark.parametrize("text,needle", MAPFILE_CASES)
def test_bad_mapfiles(capsys, tmp_path, text, needle):
    f = tmp_path / "m.map"
    f.write_text(text)
    code, _, err = run(capsys, "evaluate", "-m", "torus:4x4:cores=2", "-p", "stencil:2",
                       "--mapfile", str(f))
    assert code == 2 and "Traceback" not in err
    import re
    assert re.search(needle, err), err


def test_mapfile_outside_allocation(capsys, tmp_path):
    f = tmp_path / "m.map"
    f.write_text("0 0 0\n3 3 0\n")
    code, _, err = run(capsys, "evaluate", "-m", "torus:4x4", "--nodes", "0-3", "-p",
                       "stencil:2", "--mapfile", str(f))
    assert code == 2 and "not in the allocation" in err


BAD_ARGS = [
    (["compare", "-m", "torus:8x8", "-p", "stencil:8x8:bytes=0"], "bytes=0"),
    (["compare", "-m", "torus:8x8", "-p", "stencil:64x64"], "4096 ranks do not fit"),
    (["compare", "-m", "torus:8x8", "-p", "stencil:8x8", "--routing", "valiant"], "valiant"),
    (["compare", "-m", "torus:8x8", "-p", "stencil:8x8", "--mappings", "TXYZ"], "TXYZ"),
    (["compare", "-m", "torus:8x8", "-p", "graph:missing.csv"], "missing.csv"),
    (["compare", "-m", "torus:8x8", "-p", "stencil:8x8", "--nodes", "0-99"], "99"),
    (["compare", "-m", "torus:8x8", "-p", "stencil:8x8", "--y", "1.5"], "1.5"),
    (["compare", "-m", "tourus:8x8", "-p", "stencil:8x8"], "tourus"),
    (["map", "-m", "torus:8x8", "-p", "stencil:8x8", "--mapping", "TXY", "--emit", "pdf",
      "-o", "x"], "pdf"),
    (["evaluate", "-m", "torus:8x8", "-p", "stencil:8x8", "--mapfile", "/nope.map"], "/nope.map"),
]


@pytest.mark.parametrize("args,needle", BAD_ARGS)
def test_bad_input_is_one_line_exit_2(capsys, args, needle):
    code, out, err = run(capsys, *args)
    assert code == 2
    assert needle in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_demo_writes_plot_and_json(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "demo")
    assert code == 0
    assert "best: TZYX" in out and "TXYZ" in out
    assert (tmp_path / "rankmap-demo" / "cdf-halo.png").stat().st_size > 10000
    doc = json.load(open(tmp_path / "rankmap-demo" / "compare.json"))
    assert len(doc["candidates"]) == 26 and doc["best"] == "TZYX"
    # a second demo replaces these files, and only while they are what it wrote: a file the
    # user changed since (the plot was replaced without a word) is kept, and named
    from rankmap.cli.demo import _check_own_outputs
    from rankmap.errors import RankmapError
    _check_own_outputs(False)
    for name in ("cdf-halo.png", "compare.json"):
        path = tmp_path / "rankmap-demo" / name
        before = path.read_bytes()
        path.write_bytes(before + b" ")
        try:
            _check_own_outputs(False)
            raise AssertionError(f"a changed {name} would be replaced")
        except RankmapError as exc:
            assert f"rankmap-demo/{name} exists" in str(exc)
        _check_own_outputs(True)
        path.write_bytes(before)


def test_bgp_mapfile_needs_a_torus(capsys, tmp_path):
    code, _, err = run(capsys, "map", "-m", "dragonfly:groups=4,rows=2,cols=3,nodes=2,cores=4",
                       "-p", "stencil:4x4", "--mapping", "inorder", "--emit", "bgp",
                       "-o", str(tmp_path / "m.map"))
    assert code == 2 and "needs a torus or mesh" in err
    assert not (tmp_path / "m.map").exists()


def test_plot_dir_never_replaces_one_phase_s_plot_with_another_s(tmp_path, capsys):
    """Phases 'a/b' and 'a_b' would both be cdf-a_b.png: the second is cdf-a_b-2.png."""
    toml = tmp_path / "q.toml"
    toml.write_text('[[phase]]\nname = "a/b"\npattern = "stencil:4x4"\n'
                    '[[phase]]\nname = "a_b"\npattern = "stencil:4x4:periodic"\n')
    assert main(["compare", "-m", "torus:4x4", "-p", str(toml), "--mappings", "TXY,XYT",
                 "--plot-dir", str(tmp_path / "pq"), "--time-model", "off"]) == 0
    assert sorted(p.name for p in (tmp_path / "pq").iterdir()) == ["cdf-a_b-2.png",
                                                                   "cdf-a_b.png"]
    from rankmap.io.file_names import distinct_paths
    assert distinct_paths(["x.png", "x.png", "x-2.png", "x.png"]) == \
        ["x.png", "x-3.png", "x-2.png", "x-4.png"]


def test_cdf_axis_reads_in_the_unit_of_the_loads():
    from rankmap.plots.cdf import byte_unit
    assert byte_unit(320.0) == ("B", 1.0)
    assert byte_unit(3 * 2.0 ** 20) == ("MiB", 2.0 ** 20)
    assert byte_unit(0.0) == ("B", 1.0)
    assert byte_unit(2.0 ** 41) == ("TiB", 2.0 ** 40)


@pytest.mark.parametrize("argv", [["compare", "--report", ""], ["compare", "--plot-dir", " "],
                                  ["evaluate", "--mapping", "TXY", "--links-out", ""],
                                  ["map", "--mapping", "TXY", "--emit", "bgp", "-o", ""]])
def test_an_empty_output_name_is_an_error(capsys, argv):
    code = main([argv[0], "-m", "torus:4x4", "-p", "stencil:4x4", *argv[1:]])
    err = capsys.readouterr().err
    assert code == 2 and "an empty file name" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, said", [
    (["validate", "--json", "same.png", "--plot", "same.png"],
     "--plot and --json both name 'same.png'"),
    (["compare", "--report", "r.html", "--plot-dir", "./r.html"],
     "--report and --plot-dir ('r.html' and './r.html') name the same file"),
    (["evaluate", "--mapfile", ""], "--mapfile '': an empty file name"),
    (["compare", "--mapping", "rcb"], "unrecognized arguments: --mapping rcb; did you mean "
     "--mappings?"),
    (["compare", "--time", "off"], "did you mean --time-model?"),
    (["validate", "--json", ""], "--json '': an empty file name"),
    (["validate", "--json", "a\0b"], "a file name holds no NUL byte"),
    (["map", "--mapping", "TXY", "--emit", "bgp", "-o", "-"], "-o -: rankmap writes a file"),
    (["map", "--mapping", "TXY", "--emit", "hostfile", "-o", "h", "--names", ""],
     "--names '': an empty value"),
    (["compare", "--plot", "cdf.png"],
     "rankmap compare: error: unrecognized arguments: --plot cdf.png; rankmap compare has "
     "--plot-dir DIR"),
    (["compare", "--plot-d", "d"], "unrecognized arguments: --plot-d d"),
    (["evaluate", "--mapping", "TXY", "--json", "x"], "rankmap evaluate has --format json"),
])
def test_output_names_are_checked_before_any_work(capsys, tmp_path, monkeypatch, argv, said):
    """Two outputs on one path (the second overwrote the first after the simulations), an
    empty --json (no file, exit 0), '-o -' (a file named '-'), and an abbreviated option
    (`--plot` was --plot-dir and made a folder cdf.png) are one line, exit 2, nothing
    written; an unknown option names the command."""
    monkeypatch.chdir(tmp_path)
    code = main([argv[0], "-m", "torus:4x4", "-p", "stencil:4x4", *argv[1:]])
    err = capsys.readouterr().err
    assert code == 2 and said in err and len(err.strip().splitlines()) == 1, err
    assert os.listdir(tmp_path) == []


def test_a_failing_candidate_is_named(capsys, monkeypatch):
    """One of several named candidates over a size limit: the error line names it."""
    monkeypatch.setenv("RANKMAP_MAX_ROUTE_ENTRIES", "20000")
    code = main(["compare", "--machine", "torus:8x8x8", "--pattern", "stencil:8x8x8",
                 "--mappings", "TXYZ,random", "--routing", "adaptive"])
    err = capsys.readouterr().err
    assert code == 2 and "error: evaluating random: minimal adaptive routing" in err


class _FakeLive:
    """Records start/stop like a rich Progress or Status."""

    def __init__(self):
        import threading
        self.calls, self.started = [], threading.Event()

    def start(self):
        self.calls.append("start")
        self.started.set()

    def stop(self):
        self.calls.append("stop")


def test_a_bar_shows_only_once_its_work_has_taken_the_delay():
    from rankmap.cli.common import _shown_after

    quick = _FakeLive()
    with _shown_after(quick, delay=60.0):
        pass
    assert quick.calls == []                # work shorter than the delay: nothing flashes
    slow = _FakeLive()
    with _shown_after(slow, delay=0.0):
        assert slow.started.wait(30)        # the work outlasts the delay: the bar appears
    assert slow.calls == ["start", "stop"]  # and is cleared at the end


def test_messages_name_files_plainly(tmp_path, capsys):
    """A folder given as a placement file, and a missing input file, in one plain line."""
    assert main(["evaluate", "-m", "torus:4x4", "-p", "stencil:4x4", "--mapfile",
                 str(tmp_path)]) == 2
    assert f"placement file '{tmp_path}' is a folder" in capsys.readouterr().err
    missing = tmp_path / "none.csv"
    assert main(["counters", str(missing)]) == 2
    assert f"'{missing}': No such file or directory" in capsys.readouterr().err


def test_evaluate_auto_names_its_pick(capsys):
    assert main(["evaluate", "-m", "torus:4x4", "-p", "stencil:4x4", "--mapping", "auto",
                 "--format", "csv"]) == 0
    rows = capsys.readouterr().out.splitlines()[1:]
    assert rows and all(r.startswith("auto (") for r in rows)


def test_a_bar_that_fails_to_start_does_not_stop_the_work():
    from rankmap.cli.common import _shown_after

    class Broken(_FakeLive):
        def start(self):
            self.calls.append("start")
            self.started.set()
            raise RuntimeError("no terminal")

    live = Broken()
    with _shown_after(live, delay=0.0):
        assert live.started.wait(30)
    assert live.calls == ["start", "stop"]     # a half-started display is stopped too


def test_outputs_that_cannot_be_made_are_refused_before_work(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    assert main(["links", "missing.csv", "--machine", "fattree:k=4:levels=2", "--plot",
                 str(tmp_path / "m.png")]) == 2
    assert "no link-load map for fattree" in capsys.readouterr().err
    assert main(["compare", "-m", "torus:4x4", "-p", "stencil:4x4", "--plot-dir",
                 str(tmp_path / "afile" / "sub")]) == 2
    cap = capsys.readouterr()
    assert "cannot make a folder in" in cap.err and cap.out == ""


def test_nested_refinement_names_are_capped_and_emit_is_checked_before_auto(capsys, tmp_path):
    """300 swap: prefixes died of RecursionError (exit 1, 1,889 lines); map --mapping auto
    ran its whole search (110 s) before saying the bgp format cannot describe the machine."""
    deep = "swap:" * 300 + "greedy"
    code = main(["compare", "-m", "torus:4x4x4", "-p", "stencil:8x8", "--mappings", deep,
                 "--jobs", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "300 swap:/refine: prefixes, at most 8" in err
    assert len(err.strip().splitlines()) == 1
    code, out, err = run(capsys, "map", "-m", "torus:4x4x2x2:cores=2", "-p", "stencil:8x16",
                         "--mapping", "auto", "--emit", "bgp", "-o", str(tmp_path / "m"))
    assert code == 2 and "the bgp format needs a 3-D torus" in err and out == ""


def test_names_differing_in_case_are_one_candidate_and_float_noise_is_no_margin(capsys):
    """rcb,RCB made two rows (the why line compared rcb with itself); adaptive routing's 1/3
    shares summed to 268435456.00000143 against 2^28 and read '5.3e-13% heavier'."""
    code, out, _ = run(capsys, "compare", "-m", "torus:4x4x4", "-p", "stencil:4x4x4",
                       "--mappings", "rcb,RCB,TXYZ,txyz", "--format", "json", "--jobs", "1")
    assert code == 0
    assert [c["mapping"] for c in json.loads(out)["candidates"]] in (["rcb", "TXYZ"],
                                                                    ["TXYZ", "rcb"])
    code, out, _ = run(capsys, "compare", "-m", "torus:8x8x8:cores=4", "--routing", "adaptive",
                       "-p", "fft2d:32x64", "--mappings", "cubes,inorder", "--jobs", "1")
    best = next(line for line in out.splitlines() if line.startswith("best:"))
    assert "the same busiest link as inorder" in best and "e-1" not in best


def test_an_unknown_option_before_any_command_is_one_line(capsys):
    """`rankmap --bogus` printed the whole help once options were parsed as known args."""
    assert main(["--bogus"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "rankmap: error: unrecognized arguments: --bogus"


def test_the_demo_keeps_files_an_earlier_demo_did_not_write(tmp_path, monkeypatch, capsys):
    """rankmap-demo/compare.json of the user's was replaced without a word: the demo replaces
    only its own outputs (a compare.json of its machine and pattern), else --force."""
    from rankmap.cli import main
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rankmap-demo").mkdir()
    mine = tmp_path / "rankmap-demo" / "compare.json"
    mine.write_text("my precious\n")
    assert main(["demo"]) == 2
    assert "compare.json exists and is not what an earlier demo wrote" in \
        capsys.readouterr().err
    assert mine.read_text() == "my precious\n"
    # a JSON of the demo's machine and pattern is still not the demo's own file
    mine.write_text('{"machine": {"spec": "bgp:4096"}, "pattern": {"spec": '
                    '"stencil:128x128:box"}}')
    assert main(["demo"]) == 2


@pytest.mark.parametrize("machine, pattern", [
    ("torus:4x4:node=pack:2,numa:2,core:2", "stencil:16x8:box"),
    ("dragonfly:groups=4,rows=2,cols=2,nodes=2,cores=2", "alltoall:8x8 + stencil:8x8"),
])
def test_csv_carries_every_metric_the_json_has(machine, pattern, capsys):
    """CSV left out intra_node_bytes, inter_socket_bytes, flows and a dragonfly phase's hops
    by link kind, which JSON has: one run gives the same fields, and values, in each."""
    import csv as csv_module
    args = ["evaluate", "-m", machine, "-p", pattern, "--mapping", "random"]
    assert main(args + ["--format", "json"]) == 0
    cand = json.loads(capsys.readouterr().out)["candidates"][0]
    assert main(args + ["--format", "csv"]) == 0
    rows = list(csv_module.DictReader(io.StringIO(capsys.readouterr().out)))
    by_phase = {r["phase"]: r for r in rows}
    for phase, metrics in [("all", cand["metrics"])] + [(p["name"], p["metrics"])
                                                         for p in cand["phases"]]:
        for key, value in metrics.items():
            assert float(by_phase[phase][key]) == value, (phase, key)
