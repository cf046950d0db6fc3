"""``rankmap study``: sweeps, resuming, summary, plot, and seed 002's qualitative results."""

import json

import pytest

from rankmap.cli import main
from rankmap.errors import RankmapError
from rankmap.study import StudyParams, parse_sweep, run_study

TINY = "dragonfly:groups=4,rows=2,cols=3,nodes=2,cores=4"
# 6 groups of 2x4 routers, 2 nodes per router, 8 cores per node (96 nodes, 768 cores)
SEED002 = "dragonfly:groups=6,rows=2,cols=4,nodes=2,cores=8"


def test_parse_sweep():
    assert parse_sweep("1,2,4,...,64", "x") == [1, 2, 4, 8, 16, 32, 64]
    assert parse_sweep("32,1,8", "x") == [1, 8, 32]
    assert parse_sweep("1,3,...,27", "x") == [1, 3, 9, 27]
    for dup in ("2,2,4", "1,2,4,...,8,8"):      # as bench --sizes: a slip, not a wish
        with pytest.raises(RankmapError, match="is given twice"):
            parse_sweep(dup, "--nodes-sweep")
    for bad, msg in [("1,...,8", "needs two values"), ("1,2,4,...,10", "10 is not in"),
                     ("1,0", "'0' is not a positive"), ("a", "'a' is not"), ("", "no values")]:
        with pytest.raises(RankmapError, match=msg):
            parse_sweep(bad, "x")


def params(**kw):
    base = dict(machine=TINY, pattern="minimd", nodes=[2, 4], threads=[1, 2],
                mappings=["inorder", "random"], allocs=2)
    base.update(kw)
    return StudyParams(**base)


def test_study_summary_is_normalised_to_inorder():
    st = run_study(params())
    assert len(st.points) == 2 * 2 * 2 * 2
    rows = st.summary()
    assert {(r["nodes"], r["threads"]) for r in rows} == {(2, 1), (2, 2), (4, 1), (4, 2)}
    for r in rows:
        assert r["ranks"] == r["nodes"] * 4 // r["threads"] and r["allocations"] == 2
        if r["mapping"] == "inorder":
            assert r["time_vs_inorder"] == 1.0 and r["bytes_vs_inorder"] == 1.0


def test_busiest_link_time_switches_the_model_off():
    st = run_study(params(nodes=[4], threads=[1], time="busiest-link"))
    assert {p["time_source"] for p in st.points} == {"busiest-link"}
    assert all(p["time_s"] > 0 for p in st.points)
    assert {p["time_source"] for p in run_study(params(nodes=[4], threads=[1])).points} == \
        {"model"}


def test_study_resumes(tmp_path):
    out = tmp_path / "st"
    first = run_study(params(nodes=[2]), str(out))
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == len(first.points) == 8
    calls = []
    second = run_study(params(nodes=[2]), str(out), progress=calls.append)
    assert second.points == first.points and len(calls) == 4
    # an interrupted run: the last point lost a mapper and its line was cut in the middle
    (out / "results.jsonl").write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:20])
    third = run_study(params(nodes=[2]), str(out))
    key = lambda p: (p["nodes"], p["threads"], p["alloc"], p["mapping"])  # noqa: E731
    assert sorted(third.points, key=key) == sorted(first.points, key=key)
    assert len((out / "results.jsonl").read_text().splitlines()) == 8
    with pytest.raises(RankmapError, match="different study .*nodes.*never replaced"):
        run_study(params(nodes=[2, 4]), str(out))
    assert len((out / "results.jsonl").read_text().splitlines()) == 8   # kept


def test_study_out_folder_is_checked_before_any_work(tmp_path, capsys, monkeypatch):
    """A summary.csv of no study was replaced without --force; missing parent folders were
    made (no other output makes its folder's parents)."""
    monkeypatch.chdir(tmp_path)
    argv = ["study", "-m", "torus:2x2x2", "-p", "stencil", "--nodes-sweep", "4", "--allocs",
            "1", "--threads", "1", "--jobs", "1"]
    (tmp_path / "so").mkdir()
    (tmp_path / "so" / "summary.csv").write_text("precious\n")
    assert main(argv + ["--out", "so"]) == 2
    assert "summary.csv of no study" in capsys.readouterr().err
    assert (tmp_path / "so" / "summary.csv").read_text() == "precious\n"
    assert main(argv + ["--out", "so", "--force"]) == 0
    assert (tmp_path / "so" / "summary.csv").read_text().startswith("nodes,")
    capsys.readouterr()
    assert main(argv + ["--out", "a/b"]) == 2
    assert "folder" in capsys.readouterr().err and not (tmp_path / "a").exists()
    assert main(["compare", "-m", "torus:2x2x2", "-p", "stencil", "--plot-dir", "c/d"]) == 2
    assert "does not exist" in capsys.readouterr().err and not (tmp_path / "c").exists()


def test_study_cli(tmp_path, capsys):
    out, png = tmp_path / "st", tmp_path / "fig.png"
    argv = ["study", "--machine", TINY, "--pattern", "minighost", "--nodes-sweep", "2,4",
            "--threads", "1,4", "--allocs", "2", "--mappings", "random,rcb", "--out", str(out),
            "--plot", str(png), "--format", "json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {r["mapping"] for r in doc["summary"]} == {"inorder", "random", "rcb"}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "summary.csv").read_text().startswith("nodes,threads,ranks")
    assert main(argv) == 2  # the plot exists: refuse without --force
    assert "exists" in capsys.readouterr().err
    assert main(argv + ["--force"]) == 0


def test_study_time_model_option_and_full_precision_csv(tmp_path, capsys):
    """--time-model off is the busiest link's time (as the first spelling --time
    busiest-link), and the CSV gives every float as it reads back."""
    argv = ["study", "--machine", TINY, "--pattern", "minighost", "--nodes-sweep", "2",
            "--threads", "1", "--allocs", "1", "--mappings", "random", "--format", "json"]
    runs = {}
    for extra in (["--time-model", "off"], ["--time", "busiest-link"], ["--time-model", "on"]):
        assert main(argv + extra) == 0
        runs[extra[-1]] = json.loads(capsys.readouterr().out)
    assert runs["off"] == runs["busiest-link"]
    assert main(argv + ["--plot", str(tmp_path / "st.svg")]) == 0          # svg too
    capsys.readouterr()
    assert (tmp_path / "st.svg").read_text().lstrip().startswith("<?xml")
    assert runs["off"]["params"]["time"] == "busiest-link"
    assert runs["on"]["params"]["time"] == "model"
    assert main(argv + ["--time-model", "on", "--time", "busiest-link"]) == 2
    assert "disagree" in capsys.readouterr().err
    csv_argv = argv[:-1] + ["csv", "--out", str(tmp_path / "st")]
    assert main(csv_argv) == 0
    text = capsys.readouterr().out
    assert (tmp_path / "st" / "summary.csv").read_text() == text
    header, *rows = text.splitlines()
    cols = header.split(",")
    got = {(r.split(",")[cols.index("mapping")]): float(r.split(",")[cols.index("median_time_s")])
           for r in rows}
    assert main(argv) == 0
    want = {r["mapping"]: r["median_time_s"] for r in json.loads(capsys.readouterr().out)["summary"]}
    assert got == want


def test_study_takes_the_time_model_options(capsys):
    """--nic-bw and the other time-model options, as compare takes them: a slower NIC makes
    no point faster, and the options are part of the study's parameters."""
    argv = ["study", "--machine", TINY, "--pattern", "minighost", "--nodes-sweep", "2",
            "--threads", "1", "--allocs", "1", "--mappings", "random", "--format", "json"]
    assert main(argv) == 0
    base = json.loads(capsys.readouterr().out)
    assert "time_options" not in base["params"]
    assert main(argv + ["--nic-bw", "100MB/s", "--msg-overhead", "2us"]) == 0
    slow = json.loads(capsys.readouterr().out)
    assert slow["params"]["time_options"]["nic_bw"] == 1e8
    assert slow["params"]["time_options"]["overhead_s"] == pytest.approx(2e-6)
    for a, b in zip(base["summary"], slow["summary"]):
        assert b["median_time_s"] > a["median_time_s"]
    assert main(argv + ["--nic-bw", "fast"]) == 2
    assert "bad NIC bandwidth (--nic-bw) 'fast'" in capsys.readouterr().err


@pytest.mark.parametrize("argv,msg", [
    (["--nodes-sweep", "2,100"], "asks for 100 nodes"),
    (["--threads", "3"], "bad --threads 3"),
    (["--routing", "dor"], "unknown routing 'dor'"),
    (["--plot", "x.pdf"], "expected a .png or .svg"),
    (["--mappings", ""], "bad --mappings '': no values"),
    (["--seed", "9223372036854775807"], "bad --seed 9223372036854775807: at most"),
    (["--nodes-sweep", "2", "--threads", "1", "--pattern", "stencil:8x8"],
     "has 64 ranks; 2 nodes at 1 threads per rank hold"),
])
def test_study_cli_errors(argv, msg, capsys):
    assert main(["study", "--machine", TINY, "--pattern", "minimd"] + argv) == 2
    assert msg in capsys.readouterr().err


def test_study_default_sweep_fits_the_machine(capsys):
    """Without --nodes-sweep, the default sweep (4, 8, 16, 32) stops at the machine's size;
    given, a count beyond it is refused (above)."""
    assert main(["study", "--machine", "torus:2x2x2:cores=2", "--pattern", "stencil",
                 "--threads", "1", "--allocs", "1", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["params"]["nodes"] == [4, 8]


def _ratios(pattern, nodes, mapper):
    st = run_study(StudyParams(machine=SEED002, pattern=pattern, nodes=nodes, threads=[1],
                               mappings=["inorder", mapper], allocs=8))
    return {r["nodes"]: r["time_vs_inorder"] for r in st.summary() if r["mapping"] == mapper}


def test_seed002_minimd_random_is_worse_than_inorder_at_every_size():
    """Seed 002, Fig. 1(c): for MiniMD in-order beats random at every scale.

    Representative because the mechanism is scale-free: in-order keeps consecutive ranks (most
    of MiniMD's 12 neighbours and the low allreduce strides) on one node and scattered
    allocations are listed in node-id order, so neighbouring nodes share routers and groups;
    random sends nearly every message across the network. 6 groups x 8 routers x 2 nodes x
    8 cores is the smallest machine here with several groups at every size from 2 to 16 nodes.
    """
    ratios = _ratios("minimd", [2, 4, 8, 16], "random")
    assert all(r > 1.1 for r in ratios.values()), ratios


def test_seed002_minighost_rcb_ratio_changes_with_scale():
    """Seed 002, Fig. 1(a): the RCB / in-order ratio for MiniGhost depends on scale - RCB loses
    at small node counts and wins at larger ones.

    On 4 scattered nodes (32 ranks) RCB's cuts along (col, row, group) separate grid halves
    that in-order keeps on the same router, so RCB is slower; on 8 nodes spread over most of
    the 6 groups, grouping the grid by dragonfly group pays off and RCB is faster. Trinity
    shows the crossover at 256 nodes of 26 x 384; this machine is 100x smaller and the
    crossover moves down with it.
    """
    ratios = _ratios("minighost", [4, 8], "rcb")
    assert ratios[4] > 1.1 and ratios[8] < 0.85, ratios


def test_default_threads_end_at_all_cores_whatever_the_core_count():
    """--help: '1, a middle power of two, and all cores'; 12 cores gave 1, 2, 4."""
    from rankmap.cli.study import default_threads
    assert default_threads(32) == [1, 8, 32]
    assert default_threads(12) == [1, 2, 12]
    assert default_threads(48) == [1, 4, 48]
    assert default_threads(6) == [1, 2, 6]
    assert default_threads(1) == [1]


def test_summary_rows_follow_the_mappings_order(tmp_path, capsys):
    """Rows came out XYT, auto, greedy, inorder (by name): the reference, inorder, is first,
    then the mappings in the order given."""
    import csv
    import io
    from rankmap.cli import main
    assert main(["study", "-m", "torus:4x4:cores=4", "-p", "stencil", "--mappings",
                 "XYT,greedy,inorder", "--allocs", "1", "--nodes-sweep", "4", "--threads", "1",
                 "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["mapping"] for r in rows] == ["inorder", "XYT", "greedy"]


def test_study_spells_fixed_mapper_names_as_compare(capsys):
    """--mappings Rcb was kept as 'Rcb' (compare prints rcb), and a study saved with it
    was refused as 'a different study' when resumed with rcb."""
    import json
    from rankmap.cli import main
    assert main(["study", "-m", "torus:4x4:cores=4", "-p", "stencil", "--mappings",
                 "Rcb,INORDER", "--allocs", "1", "--nodes-sweep", "4", "--threads", "1",
                 "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["mapping"] for r in doc["summary"]] == ["inorder", "rcb"]


# ---- inputs checked before anything is written; damaged results; points moving nothing -----

SMALL = ["-m", "torus:2x2x2:cores=2", "-p", "stencil", "--threads", "1", "--allocs", "1",
         "--mappings", "inorder,random"]


def test_a_refused_study_writes_nothing_and_its_folder_can_start_afresh(tmp_path, capsys,
                                                                        monkeypatch):
    """A pattern too big for a point was refused only at that point, after study.json and an
    empty results.jsonl were written; the corrected rerun was then 'a different study'."""
    monkeypatch.chdir(tmp_path)
    argv = ["study", *SMALL, "--nodes-sweep", "2,4", "--format", "csv", "--out", "sd"]
    big = [a if a != "stencil" else "stencil:4x4" for a in argv]     # 16 ranks, 2 nodes hold 4
    assert main(big) == 2
    err = capsys.readouterr().err
    assert "stencil:4x4 has 16 ranks; 2 nodes" in err and "Traceback" not in err
    assert not (tmp_path / "sd").exists()
    (tmp_path / "sd").mkdir()
    bad_map = [a if a != "inorder,random" else "inorder,bogus" for a in argv]
    assert main(bad_map) == 2 and "unknown mapping 'bogus'" in capsys.readouterr().err
    assert list((tmp_path / "sd").iterdir()) == []
    # a folder left by an earlier version's refused study: parameters, no point
    (tmp_path / "sd" / "study.json").write_text(json.dumps({"machine": "x", "pattern": "y"}))
    (tmp_path / "sd" / "results.jsonl").write_text("")
    assert main(argv) == 0
    assert capsys.readouterr().out.count("\n") == 1 + 2 * 2
    assert json.loads((tmp_path / "sd" / "study.json").read_text())["pattern"] == "stencil"
    assert len((tmp_path / "sd" / "results.jsonl").read_text().splitlines()) == 4
    # with saved points, another study is still refused and the points kept
    other = [a if a != "2,4" else "2" for a in argv]
    assert main(other) == 2 and "holds a different study" in capsys.readouterr().err
    assert len((tmp_path / "sd" / "results.jsonl").read_text().splitlines()) == 4


@pytest.fixture(scope="module")
def finished_study(tmp_path_factory):
    out = tmp_path_factory.mktemp("done") / "s"
    assert main(["study", *SMALL, "--nodes-sweep", "2", "--out", str(out), "--format",
                 "json"]) == 0
    return out


@pytest.mark.parametrize("line,where,what", [
    ("{}", 3, "no 'nodes'"),
    ("[1, 2]", 3, "an array, expected a JSON object"),
    ("7", 3, "7, expected a JSON object"),
    ("null", 3, "null, expected a JSON object"),
    ("NODES-AS-TEXT", 3, "nodes \"2\" is not a positive whole number"),   # summary()'s TypeError
    ("{not json", 1, "not JSON"),                        # damage before the last line
])
def test_a_damaged_results_line_is_refused_naming_file_and_line(finished_study, tmp_path,
                                                                capsys, line, where, what):
    """'{}' appended to results.jsonl gave KeyError: 'nodes' (exit 1), a list a TypeError."""
    import shutil
    out = tmp_path / "s"
    shutil.copytree(finished_study, out)
    res = out / "results.jsonl"
    good = res.read_text().splitlines()
    assert len(good) == 2
    if line == "NODES-AS-TEXT":             # a whole point but for the type of one value
        line = json.dumps({**json.loads(good[0]), "nodes": "2"})
    lines = [line, *good] if where == 1 else [*good, line]
    res.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["study", *SMALL, "--nodes-sweep", "2", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"results.jsonl:{where}: {what}" in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert res.read_text().splitlines() == lines         # nothing rewritten


def test_every_field_of_a_saved_point_is_checked(finished_study, tmp_path):
    import re
    import shutil
    good = json.loads((finished_study / "results.jsonl").read_text().splitlines()[0])
    params = StudyParams(machine="torus:2x2x2:cores=2", pattern="stencil", nodes=[2],
                         threads=[1], mappings=["inorder", "random"], allocs=1)
    for k, (change, what) in enumerate([
                         ({"nodes": 4}, "nodes 4 is not in the study's --nodes-sweep 2"),
                         ({"threads": True}, "threads true is not a positive whole number"),
                         ({"alloc": 1}, "alloc 1 is not below the study's --allocs 1"),
                         ({"mapping": "rcb"}, "mapping \"rcb\" is not in the study's"),
                         ({"time_s": -1.0}, "time_s -1.0 is not a number >= 0"),
                         ({"time_s": float("nan")}, "time_s NaN is not a number >= 0"),
                         ({"hop_bytes": 10 ** 400}, "hop_bytes 1000000000000000000000000"),
                         ({"max_link_bytes": "1"}, "max_link_bytes \"1\" is not a number"),
                         ({"time_source": "guess"}, "time_source \"guess\" is neither")]):
        out = tmp_path / f"s{k}"
        shutil.copytree(finished_study, out)
        with open(out / "results.jsonl", "a") as fh:
            fh.write(json.dumps({**good, **change}) + "\n")
        with pytest.raises(RankmapError, match=re.escape(f"results.jsonl:3: {what}")):
            run_study(params, str(out))


def test_a_cut_last_line_is_still_redone(finished_study, tmp_path):
    import shutil
    out = tmp_path / "s"
    shutil.copytree(finished_study, out)
    res = out / "results.jsonl"
    good = res.read_text().splitlines()
    res.write_text(good[0] + "\n" + good[1][:25])
    params = StudyParams(machine="torus:2x2x2:cores=2", pattern="stencil", nodes=[2],
                         threads=[1], mappings=["inorder", "random"], allocs=1)
    st = run_study(params, str(out))
    assert len(st.points) == 2 and res.read_text().splitlines() == good


def test_a_ratio_to_an_inorder_that_moves_nothing_is_not_applicable(capsys):
    """A 1-node point moves no network bytes and a 1-rank point nothing at all: the ratios
    0/0 came out 1.0 in every format. They are null/empty/'-' with a note, the same in every
    format, while points that move bytes keep their ratios."""
    import csv
    import io
    argv = ["study", "-m", "torus:2x2x2:cores=2", "-p", "stencil", "--nodes-sweep", "1,2",
            "--threads", "1,2", "--allocs", "1", "--mappings", "inorder,random"]
    assert main(argv + ["--format", "json"]) == 0
    out, err = capsys.readouterr()
    doc = json.loads(out)
    by = {(r["nodes"], r["threads"], r["mapping"]): r for r in doc["summary"]}
    for m in ("inorder", "random"):
        assert by[(1, 1, m)]["median_max_link_bytes"] == 0 and by[(1, 1, m)]["ranks"] == 2
        assert by[(1, 1, m)]["bytes_vs_inorder"] is None
        assert by[(1, 1, m)]["median_time_s"] > 0 and by[(1, 1, m)]["time_vs_inorder"] > 0
        assert by[(1, 2, m)]["ranks"] == 1
        assert by[(1, 2, m)]["bytes_vs_inorder"] is None and by[(1, 2, m)]["time_vs_inorder"] \
            is None
        assert by[(2, 1, m)]["bytes_vs_inorder"] > 0
    assert by[(2, 1, "inorder")]["bytes_vs_inorder"] == 1.0
    assert len(doc["notes"]) == 2 and all(n in err for n in doc["notes"])
    assert "1 node x 2 threads per rank (1 rank)" in doc["notes"][1]
    assert main(argv + ["--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == len(doc["summary"])
    for r, j in zip(rows, doc["summary"]):
        for k in ("bytes_vs_inorder", "time_vs_inorder"):
            assert (r[k] == "") == (j[k] is None)
            assert r[k] == "" or float(r[k]) == j[k]
    assert main(argv) == 0
    table = capsys.readouterr().out
    one_rank = [line for line in table.splitlines() if line.split("│")[1:3] and
                [c.strip() for c in line.split("│")[1:4]] == ["1", "2", "1"]]
    assert len(one_rank) == 2 and all(line.count(" - ") == 2 for line in one_rank)


def test_summary_never_divides_by_an_inorder_of_zero():
    from rankmap.study import Study, summary_notes
    pts = [{"nodes": 2, "threads": 1, "alloc": 0, "ranks": 4, "mapping": m,
            "max_link_bytes": b, "hop_bytes": b, "time_s": t, "time_source": "model"}
           for m, b, t in (("inorder", 0.0, 0.0), ("random", 8.0, 1.0))]
    rows = Study(params(nodes=[2], threads=[1]), pts).summary()
    assert [(r["bytes_vs_inorder"], r["time_vs_inorder"]) for r in rows] == [(None, None)] * 2
    assert len(summary_notes(rows)) == 2


@pytest.mark.parametrize("argv,msg", [
    (["-m", "torus:2x2x2", "--nodes-sweep", "1"], "moves nothing at any point of the sweep"),
    (["-m", "torus:2x2x2:cores=2", "--nodes-sweep", "1", "--time-model", "off"],
     "every point is on one node"),
])
def test_a_sweep_that_measures_nothing_is_refused(argv, msg, capsys, tmp_path):
    assert main(["study", "-p", "stencil", "--threads", "1", "--allocs", "1", *argv,
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert msg in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()


def test_each_point_names_what_reproduces_it(tmp_path, capsys):
    """allocation k of --seed S is random:N:seed=1000*S+k with mapper seed S+k: a point said
    only 'alloc': 0, and evaluate with the study's seed gave another allocation."""
    out = tmp_path / "st"
    machine = "torus:4x4x4:cores=2"
    assert main(["study", "-m", machine, "-p", "stencil", "--nodes-sweep", "8", "--threads",
                 "1", "--allocs", "2", "--seed", "2", "--mappings", "inorder,random",
                 "--jobs", "1", "--out", str(out)]) == 0
    capsys.readouterr()
    points = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert {(p["alloc"], p["allocation"], p["seed"]) for p in points} == {
        (0, "random:8:seed=2000", 2), (1, "random:8:seed=2001", 3)}
    for p in points:
        assert main(["evaluate", "-m", machine, "-p", "stencil", "--nodes", p["allocation"],
                     "--mapping", p["mapping"], "--seed", str(p["seed"]),
                     "--format", "json"]) == 0
        metrics = json.loads(capsys.readouterr().out)["candidates"][0]["metrics"]
        assert metrics["max_link_bytes"] == p["max_link_bytes"]
        assert metrics["predicted_time_s"] == p["time_s"]
    # a point written by another --seed is refused when the study resumes
    lines = (out / "results.jsonl").read_text().splitlines()
    lines[0] = lines[0].replace('"seed": 2', '"seed": 7')
    (out / "results.jsonl").write_text("\n".join(lines) + "\n")
    assert main(["study", "-m", machine, "-p", "stencil", "--nodes-sweep", "8", "--threads",
                 "1", "--allocs", "2", "--seed", "2", "--mappings", "inorder,random",
                 "--jobs", "1", "--out", str(out)]) == 2
    assert "seed 7 is not this study's 2 (another --seed?)" in capsys.readouterr().err


def test_study_takes_the_refinements_budget(tmp_path, capsys):
    """study ran refine:NAME and auto with no way to bound them: --budget is the same option
    as compare's, and --budget 0 leaves refine:random where random puts the ranks."""
    def points(*extra):
        out = tmp_path / f"st{len(list(tmp_path.iterdir()))}"
        assert main(["study", "-m", "torus:4x4x4:cores=2", "-p", "stencil", "--nodes-sweep",
                     "4", "--threads", "1", "--allocs", "2", "--jobs", "1", "--out", str(out),
                     *extra]) == 0
        capsys.readouterr()
        rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
        return out, {(p["alloc"], p["mapping"]): p["max_link_bytes"] for p in rows}
    out, unrefined = points("--mappings", "refine:random,random", "--budget", "0")
    assert json.loads((out / "study.json").read_text())["budget"] == 0
    for alloc in (0, 1):
        assert unrefined[(alloc, "refine:random")] == unrefined[(alloc, "random")]
    _, refined = points("--mappings", "refine:random,random")
    assert any(refined[(a, "refine:random")] < refined[(a, "random")] for a in (0, 1))
