"""``--in-node place|keep``: the in-node placement step switched on the command line of every
command that places ranks (compare, map, evaluate, launch, study)."""

import json

import pytest

import rankmap.study
from rankmap.cli import main

NODE_MACHINE = "torus:4x4:cores=8:node=pack:2,core:4"
FLAT_MACHINE = "torus:4x4:cores=8"
PATTERN = "stencil:16x8:box"


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def evaluate_json(capsys, machine, mode, mapping="random"):
    code, out, err = run(capsys, "evaluate", "-m", machine, "-p", PATTERN, "--mapping", mapping,
                         "--in-node", mode, "--format", "json", "--jobs", "1")
    assert code == 0, err
    return json.loads(out)["candidates"][0]["metrics"]


def test_evaluate_place_lowers_socket_bytes_keep_does_not(capsys):
    place = evaluate_json(capsys, NODE_MACHINE, "place")
    keep = evaluate_json(capsys, NODE_MACHINE, "keep")
    default = json.loads(run(capsys, "evaluate", "-m", NODE_MACHINE, "-p", PATTERN, "--mapping",
                             "random", "--format", "json", "--jobs", "1")[1])
    assert default["candidates"][0]["metrics"] == place
    assert place["inter_socket_bytes"] < keep["inter_socket_bytes"]
    # the step only moves ranks inside their node: the network sees the same traffic
    assert place["max_link_bytes"] == keep["max_link_bytes"]


def test_evaluate_without_node_structure_is_unchanged(capsys):
    assert evaluate_json(capsys, FLAT_MACHINE, "place") == \
        evaluate_json(capsys, FLAT_MACHINE, "keep")


def map_file(capsys, tmp_path, machine, mode, mapping="random"):
    out = tmp_path / f"{mode}-{machine.count(':')}.rankfile"
    code, _, err = run(capsys, "map", "-m", machine, "-p", PATTERN, "--mapping", mapping,
                       "--in-node", mode, "--emit", "openmpi", "-o", str(out), "--jobs", "1")
    assert code == 0, err
    return out.read_text()


def test_map_writes_different_rankfiles_only_with_node_structure(capsys, tmp_path):
    place = map_file(capsys, tmp_path, NODE_MACHINE, "place")
    keep = map_file(capsys, tmp_path, NODE_MACHINE, "keep")
    assert place != keep
    # same node for every rank, only the slots inside the nodes differ
    hosts = [[line.split()[1].split("=")[1] for line in text.splitlines()
              if line.startswith("rank")] for text in (place, keep)]
    assert hosts[0] == hosts[1]
    assert map_file(capsys, tmp_path, FLAT_MACHINE, "place") == \
        map_file(capsys, tmp_path, FLAT_MACHINE, "keep")


def test_compare_and_auto(capsys):
    def metrics(mode, names):
        code, out, err = run(capsys, "compare", "-m", NODE_MACHINE, "-p", PATTERN,
                             "--mappings", names, "--in-node", mode, "--format", "json",
                             "--jobs", "1", "--budget", "50")
        assert code == 0, err
        return {c["mapping"]: c["metrics"] for c in json.loads(out)["candidates"]}

    place, keep = metrics("place", "random,TXY"), metrics("keep", "random,TXY")
    assert place["random"]["inter_socket_bytes"] < keep["random"]["inter_socket_bytes"]
    # auto runs its candidates with the same switch: with keep, no candidate was re-dealt
    auto_keep = metrics("keep", "auto,random")
    assert auto_keep["random"] == keep["random"]


def test_launch_dry_run(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    hostfile = tmp_path / "hosts"
    hostfile.write_text("".join(f"node{i} slots=8\n" for i in range(16)))
    files = {}
    for mode in ("place", "keep"):
        out = tmp_path / f"{mode}.rankfile"
        code, _, err = run(capsys, "launch", "-m", NODE_MACHINE, "-p", PATTERN, "--mapping",
                           "random", "--hostfile", str(hostfile), "--nodes", "0-15",
                           "--in-node", mode,
                           "--dry-run", "-o", str(out), "--jobs", "1", "--", "mpirun",
                           "-n", "128", "./app")
        assert code == 0, err
        files[mode] = out.read_text()
    assert files["place"] != files["keep"]


def test_study_passes_the_switch(capsys, monkeypatch):
    seen = []
    real = rankmap.study.build_placement

    def spy(*args, **kwargs):
        seen.append(kwargs.get("in_node"))
        return real(*args, **kwargs)

    monkeypatch.setattr(rankmap.study, "build_placement", spy)
    code, out, err = run(capsys, "study", "-m", NODE_MACHINE, "-p", "stencil:4x4",
                         "--nodes-sweep", "2", "--threads", "1", "--allocs", "1",
                         "--in-node", "keep", "--format", "json", "--jobs", "1")
    assert code == 0, err
    assert seen and set(seen) == {False}
    assert json.loads(out)["params"]["in_node"] is False


@pytest.mark.parametrize("args, needle", [
    (["evaluate", "-m", NODE_MACHINE, "-p", PATTERN, "--mapfile", "x.map", "--in-node", "keep"],
     "--in-node keep: applies to --mapping, not to a --mapfile"),
    (["launch", "-m", NODE_MACHINE, "--reorder", "--in-node", "keep", "--dry-run", "--",
      "mpirun", "./app"], "--in-node keep: applies to the placement file of --pattern"),
    (["map", "-m", NODE_MACHINE, "-p", PATTERN, "--mapping", "TXY", "--in-node", "pack",
      "--emit", "openmpi", "-o", "x"], "invalid choice: 'pack'"),
])
def test_errors(capsys, tmp_path, monkeypatch, args, needle):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, *args)
    assert code == 2
    assert needle in err
    assert "Traceback" not in err


def test_launch_search_job_gets_the_switch():
    from types import SimpleNamespace

    from rankmap.allocation import parse_allocation
    from rankmap.cli.launch import search_command
    from rankmap.machines import parse_machine

    alloc = parse_allocation("0-3", parse_machine(NODE_MACHINE))
    args = SimpleNamespace(search_procs=4, search_launcher=None, pattern="stencil:4x8",
                           mapping="auto", seed=0, jobs=None, in_node="keep")
    cmd = search_command(args, NODE_MACHINE, ["mpirun", "-n", "32", "./app"], "openmpi", "h",
                         alloc, "out")
    inner = cmd[:cmd.index("--")]
    assert inner[inner.index("--in-node") + 1] == "keep"
    assert "--threads" not in inner
    args.in_node = None
    assert "--in-node" not in search_command(args, NODE_MACHINE, ["mpirun", "./app"],
                                             "openmpi", "h", alloc, "out")
    # the search job binds ranks as the program's placement file will
    args.threads = 2
    inner = search_command(args, NODE_MACHINE, ["mpirun", "./app"], "openmpi", "h", alloc, "out")
    assert inner[inner.index("--threads") + 1] == "2"


def test_search_job_failure_says_why_and_keeps_the_launcher_s_oversubscribe():
    from types import SimpleNamespace

    from rankmap.allocation import parse_allocation
    from rankmap.cli.launch import failure_line, search_command
    from rankmap.machines import parse_machine

    banner = ("-" * 74 + "\nThere are not enough slots available in the system to satisfy "
              "the 4\nslots that were requested by the application:\n\n  python3\n\n"
              "Either request fewer slots for your application, or make more slots\n"
              "available for use.\n" + "-" * 74 + "\n")
    assert failure_line(banner).startswith("There are not enough slots available")
    assert failure_line("rankmap launch: error: bad --threads 3\n") == "bad --threads 3"
    assert failure_line("-----\n\n") == "no message"
    alloc = parse_allocation("0-3", parse_machine(NODE_MACHINE))
    args = SimpleNamespace(search_procs=4, search_launcher=None, pattern="stencil:4x8",
                           mapping="auto", seed=0, jobs=None, in_node=None)
    cmd = search_command(args, NODE_MACHINE, ["mpirun", "--oversubscribe", "-n", "32", "./app",
                                              "--allow-run-as-root"], "openmpi", "h", alloc,
                         "out")
    # the launcher's --oversubscribe, not the program's argument that looks like one
    assert cmd[:4] == ["mpirun", "--oversubscribe", "-n", "4"]


def test_threads_that_split_a_rank_over_two_sockets_are_noted(capsys):
    """pack:2,core:3 at 2 threads gives the middle rank cores 0:2 and 1:0 (the rankfile then
    binds it over two sockets) without a word."""
    from rankmap.cli import main
    assert main(["compare", "-m", "torus:2:node=pack:2,core:3", "-p", "stencil:3x1",
                 "--threads", "2", "--mappings", "inorder"]) == 0
    assert "1 rank slot of each node spans two sockets" in capsys.readouterr().err
    assert main(["compare", "-m", "torus:2:node=pack:2,core:4", "-p", "stencil:4x1",
                 "--threads", "2", "--mappings", "inorder"]) == 0
    assert "two sockets" not in capsys.readouterr().err
