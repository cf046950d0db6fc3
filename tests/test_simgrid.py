"""SimGrid SMPI referee: platform XML, hostfile, flow file, and one small validation."""

import numpy as np
import pytest

from rankmap.allocation import parse_allocation
from rankmap.cli import main
from rankmap.errors import RankmapError
from rankmap.machines import parse_machine
from rankmap.patterns import parse_pattern
from rankmap.patterns.base import Pattern, Phase
from rankmap.simgrid import INSTALL_HINT, hostfile, platform_xml, smpi_available
from rankmap.simgrid.flowfile import MAGIC, flow_file_bytes

needs_smpi = pytest.mark.skipif(not smpi_available(), reason=INSTALL_HINT)


def test_platform_xml_torus():
    xml = platform_xml(parse_machine("torus:2x3x4:cores=2:bw=1GB/s:lat=50ns"), mem_bw=5e9)
    assert 'topology="TORUS"' in xml and 'topo_parameters="2,3,4"' in xml
    assert 'radical="0-23"' in xml and 'core="2"' in xml and 'bw="1000000000Bps"' in xml
    assert 'lat="5e-08s"' in xml and 'sharing_policy="SPLITDUPLEX"' in xml
    assert 'loopback_bw="5000000000Bps"' in xml
    assert 'lat="0s"' in platform_xml(parse_machine("torus:4x4"), link_latency=0.0)
    # free intra-node messages still get a loopback link (SimGrid needs a host-to-self route)
    assert 'loopback_bw="1e+15Bps"' in platform_xml(parse_machine("torus:4x4"))


DF = ("dragonfly:groups=4,rows=1,cols=4,nodes=2,cores=2,global=1,layout=absolute,"
      "bw_inject=5GB/s,bw_row=10GB/s,bw_col=5GB/s,bw_global=15GB/s")


def test_platform_xml_fat_tree_and_dragonfly():
    xml = platform_xml(parse_machine("fattree:k=4:levels=3:cores=2:bw=2GB/s"))
    assert 'topology="FAT_TREE"' in xml and 'topo_parameters="3;4,4,4;1,4,4;1,1,1"' in xml
    assert 'radical="0-63"' in xml and 'bw="2000000000Bps"' in xml
    xml = platform_xml(parse_machine(DF))
    # a cluster of 2 nodes per router (node links at bw_inject), row and global router links
    assert xml.count("<cluster ") == 16 and 'radical="30-31"' in xml and 'core="2"' in xml
    assert 'bw="5000000000Bps"' in xml and xml.count("<zoneRoute ") == 16 * 15
    assert '<link id="row-0-1" bandwidth="1e+10Bps"' in xml
    assert '<link id="global-1-4" bandwidth="1.5e+10Bps"' in xml


@pytest.mark.parametrize("spec, routing, message", [
    ("mesh:4x4", "dor", "torus, k-ary fat-tree and dragonfly"),
    ("torus:4x4:wrap=x", "dor", "always wraps"),
    ("torus:4x4", "adaptive", "dimension order"),
    ("fattree:k=4:levels=2:taper=2", "dmodk", "taper=2"),
    ("fattree:k=4:levels=2", "ecmp", "d-mod-k"),
    (DF.replace("layout=absolute", "layout=spread"), "minimal", "layout=absolute"),
    (DF.replace("groups=4", "groups=5").replace("layout=", "gports=2,layout="), "minimal",
     "groups <= cols"),
    (DF.replace("rows=1", "rows=2"), "minimal", "rows=1"),
    (DF, "valiant", "minimally"),
    (DF.replace("bw_row=10GB/s", "bw_row=7GB/s"), "minimal", "bw_row=7e\\+09"),
])
def test_unsupported_machines_are_refused(spec, routing, message):
    from rankmap.simgrid.platform import check_supported

    with pytest.raises(RankmapError, match=message):
        check_supported(parse_machine(spec), routing)


def test_hostfile_line_r_is_host_of_rank_r():
    assert hostfile([5, 0, 5]) == "node-5\nnode-0\nnode-5\n"


def test_flow_file_layout():
    ph = Phase("a", [0, 2, 0], [1, 0, 1], [10, 20, 30])
    raw = np.frombuffer(flow_file_bytes(Pattern("t", "phases", 3, [ph])), dtype="<i8")
    assert list(raw[:3]) == [MAGIC, 3, 1]
    send_index, recv_index = raw[3:7], raw[7:11]
    assert list(send_index) == [0, 2, 2, 3]  # rank 0 sends 2, rank 2 sends 1
    assert list(recv_index) == [0, 1, 3, 3]
    sends = raw[11:17].reshape(-1, 2)
    assert sends.tolist() == [[1, 10], [1, 30], [0, 20]]  # flow order kept per pair


@needs_smpi
def test_simgrid_torus_numbers_hosts_first_dimension_fastest():
    """1-byte messages with 1 ms links: simulated time counts the hops SimGrid routes."""
    from rankmap.simgrid import simulate

    m = parse_machine("torus:2x3x5")
    targets = [1, 2, 4, 6, 12, 18]
    phases = [Phase(f"to{t}", [0], [t], [1]) for t in range(1, len(targets) + 1)]
    pat = Pattern("hops", "phases", len(targets) + 1, phases)
    res = simulate(m, pat, [0] + targets, link_latency=1e-3, timeout=120)
    # the measured span also holds the barrier's exit skew (one more path latency), so
    # compare proportions: rankmap's ids (first dimension fastest) give hops 1,1,1,1,2,2
    t = np.array(res.phase_times)
    expected = m.hop_distance(np.zeros(6, int), np.array(targets))
    np.testing.assert_allclose(t / t.min(), expected / expected.min(), rtol=0.02)


@needs_smpi
@pytest.mark.parametrize("spec, identical", [
    ("torus:3x5x3", True), ("torus:4x4x4", False), ("fattree:k=4:levels=3", True),
    ("fattree:k=3:levels=2", True), (DF, True)])
def test_simgrid_routes_equal_rankmaps_up_to_link_names(spec, identical):
    """All host pairs (or 4,000 of them): the same links carry the same pairs. Even tori
    differ by SimGrid's n/2 tie rule (see rankmap.simgrid.platform)."""
    from rankmap.simgrid.routes import compare_routes, sample_pairs

    m = parse_machine(spec)
    agreement = compare_routes(m, sample_pairs(m.n_nodes))
    assert agreement.identical == identical, agreement.describe()
    assert agreement.matched > 0


@needs_smpi
@pytest.mark.parametrize("spec, pattern, names", [
    ("fattree:k=4:levels=2:cores=4", "stencil:8x8:periodic", "inorder,rcb,random"),
    (DF, "fft2d:8x8", "inorder,greedy,random"),
])
def test_small_validation_on_fat_tree_and_dragonfly(spec, pattern, names):
    """SMPI and rankmap give the same times (within 2 %) on the other two topologies."""
    from rankmap.simgrid.validation import validate

    m = parse_machine(spec)
    val = validate(m, parse_allocation(None, m), parse_pattern(pattern), names, timeout=120)
    assert len(val.done) == 3 and val.routes.identical
    assert all(abs(r.ratio - 1) < 0.02 for r in val.rows), [(r.mapping, r.ratio) for r in val.rows]
    assert val.best_gap() == pytest.approx(0.0, abs=0.01)


@needs_smpi
def test_free_memory_bandwidth_simulates_intra_node_messages():
    from rankmap.simgrid import simulate

    m = parse_machine("torus:3x3:cores=2")
    pat = Pattern("pair", "phases", 2, [Phase("p", [0, 1], [1, 0], [1e6, 1e6])])
    free = simulate(m, pat, [4, 4], mem_bw=None, timeout=60)
    slow = simulate(m, pat, [4, 4], mem_bw=1e9, timeout=60)
    assert free.total_s < 1e-6 < slow.total_s == pytest.approx(1e-3, rel=0.01)


@needs_smpi
def test_small_validation_agrees_on_ranking():
    """64 ranks, 3 placements: SMPI and rankmap rank them the same, times within 2 %."""
    from rankmap.simgrid.validation import validate

    m = parse_machine("torus:4x4x4")
    val = validate(m, parse_allocation(None, m), parse_pattern("stencil:8x8:periodic"),
                   "XYZT,ZYXT,random", timeout=120)
    assert len(val.done) == 3
    order_p = [r.mapping for r in sorted(val.rows, key=lambda r: r.predicted_s)]
    order_s = [r.mapping for r in sorted(val.rows, key=lambda r: r.simulated_s)]
    assert order_p == order_s
    assert val.correlations()[0] == pytest.approx(1.0)
    assert all(abs(r.ratio - 1) < 0.02 for r in val.rows)


def test_validate_cli_errors(capsys):
    assert main(["validate", "-m", "mesh:4x4", "-p", "stencil:4x4", "--mappings", "XYT"]) == 2
    assert "not mesh" in capsys.readouterr().err
    for value, said in (("0", "'0': must be positive"), ("1e400", "'1e400': not a finite"),
                        ("100000", "'100000': must be at most 86400")):   # echoed as given
        assert main(["validate", "-m", "torus:4x4", "-p", "stencil:4x4", "--timeout",
                     value]) == 2
        assert f"argument --timeout: {said}" in capsys.readouterr().err
    assert main(["validate", "-m", "torus:4x4", "-p", "stencil:4x4", "--routing",
                 "adaptive"]) == 2
    assert "dimension order" in capsys.readouterr().err


@needs_smpi
def test_validate_cli_table_plot_json(tmp_path, capsys):
    import json

    png, js = tmp_path / "v.png", tmp_path / "v.json"
    assert main(["validate", "-m", "torus:4x4x4", "-p", "stencil:4x4x4:periodic",
                 "--mappings", "XYZT,ZYXT,random", "--plot", str(png), "--json", str(js),
                 "--timeout", "120"]) == 0
    out = capsys.readouterr().out
    assert "Spearman" in out and "rankmap ranks first" in out
    assert png.read_bytes()[:4] == b"\x89PNG"
    doc = json.loads(js.read_text())
    assert {c["mapping"] for c in doc["candidates"]} == {"XYZT", "ZYXT", "random"}
    assert doc["best_predicted"] == doc["best_simulated"]
    # refuses to overwrite without --force
    assert main(["validate", "-m", "torus:4x4x4", "-p", "stencil:4x4x4:periodic",
                 "--mappings", "XYZT", "--plot", str(png)]) == 2
    assert "--force" in capsys.readouterr().err
    # SVG as every other picture; another extension is refused before anything runs
    svg = tmp_path / "v.svg"
    assert main(["validate", "-m", "torus:2x2", "-p", "stencil:2x2", "--mappings", "XYT",
                 "--plot", str(svg), "--timeout", "120"]) == 0
    assert svg.read_text().lstrip().startswith("<?xml") and "<svg" in svg.read_text()
    assert main(["validate", "-m", "torus:2x2", "-p", "stencil:2x2", "--mappings", "XYT",
                 "--plot", str(tmp_path / "v.jpg")]) == 2
    assert "expected a .png or .svg name" in capsys.readouterr().err


def test_validate_says_when_the_pick_was_a_tie(capsys):
    """Placements predicted the same time as the pick (to 9 digits) are named as a tie, with
    the spread of their simulated times; rows that differ in the 9th digit are not."""
    from rankmap.cli.validate import print_table
    from rankmap.simgrid.validation import Validation, ValidationRow
    rows = [ValidationRow("TZXY", 7.71e-3, 17.6e-3), ValidationRow("XYZT", 7.71e-3, 34.7e-3),
            ValidationRow("hilbert", 7.7100001e-3, 20.0e-3),
            ValidationRow("random", 9.0e-3, 40.0e-3), ValidationRow("rcb", 7.71e-3, None)]
    val = Validation("s", rows)
    assert [r.mapping for r in val.tied_with_pick()] == ["TZXY", "XYZT"]
    assert val.to_json()["tied_with_pick"] == ["TZXY", "XYZT"]
    print_table(val)
    out = " ".join(capsys.readouterr().out.split())
    assert "2 placements, the pick among them, are predicted the same time (7.710 ms)" in out
    assert "busiest link, hop-bytes, then the order given) chose" in out
    assert "SMPI gives them 17.600 ms to 34.700 ms" in out
    print_table(Validation("s", rows[2:4]))
    assert "predicted the same time" not in capsys.readouterr().out


FAKE_SMPICC = """#!/bin/sh
# a stand-in for smpicc: '-show' says what it is; a compile writes a script as the binary
if [ "$1" = "-show" ]; then echo "fake-cc -lsimgrid"; exit 0; fi
echo compiled >> "$LOG"
case "$MODE" in
  fail) echo "halo.c:1:10: fatal error: mpi.h: No such file or directory" >&2; exit 1;;
  quiet) exit 1;;
  slow) sleep 30;;
esac
while [ $# -gt 0 ]; do
  if [ "$1" = "-o" ]; then printf '#!/bin/sh\\necho ok\\n' > "$2"; chmod +x "$2"; fi
  shift
done
"""


@pytest.fixture
def fake_smpicc(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "smpicc").write_text(FAKE_SMPICC)
    (bin_dir / "smpicc").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("RANKMAP_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("LOG", str(tmp_path / "log"))
    monkeypatch.setenv("MODE", "ok")
    return tmp_path / "log"


def test_a_cached_program_whose_bytes_changed_is_built_again(fake_smpicc):
    """A binary cut short in the cache was run for ever after ('smpirun failed (exit 134)')."""
    from rankmap.simgrid.build import compiled_program
    exe = compiled_program("flows")
    assert compiled_program("flows") == exe and fake_smpicc.read_text().count("compiled") == 1
    with open(exe, "w") as fh:
        fh.write("garbage")
    assert compiled_program("flows") == exe and fake_smpicc.read_text().count("compiled") == 2
    assert open(exe).read().startswith("#!/bin/sh")


@pytest.mark.parametrize("mode, said", [
    ("fail", "smpicc failed on flows.c: halo.c:1:10: fatal error: mpi.h: No such file"),
    ("quiet", "smpicc failed on flows.c: exit status 1, no message"),
    ("slow", "smpicc did not finish flows.c in 1 s")])
def test_a_failing_compile_is_one_plain_line(fake_smpicc, monkeypatch, mode, said):
    """The message was a Python list (['fatal error: ...'], or []); a compiler that hung
    hung validate whatever its --timeout."""
    from rankmap.simgrid import build
    monkeypatch.setenv("MODE", mode)
    monkeypatch.setattr(build, "COMPILE_TIMEOUT_S", 1)
    with pytest.raises(RankmapError) as info:
        build.compiled_program("flows")
    assert str(info.value) == said or str(info.value).startswith(said), str(info.value)


def test_a_program_cached_before_digests_is_used_and_sealed(fake_smpicc):
    """A cache filled by an earlier version (no .sha256) is used as it is, not rebuilt (a
    read-only shared cache would fail the rebuild), and sealed from then on."""
    import os
    from rankmap.simgrid.build import compiled_program
    exe = compiled_program("flows")
    os.remove(exe + ".sha256")
    assert compiled_program("flows") == exe and fake_smpicc.read_text().count("compiled") == 1
    assert os.path.exists(exe + ".sha256")


def test_the_compiler_line_that_says_why_is_shown():
    from rankmap.io.sealed import first_error_line
    err = ("/usr/bin/ld: cannot open output file x.so: Operation not permitted\n"
           "collect2: error: ld returned 1 exit status\n")
    assert first_error_line(err).startswith("/usr/bin/ld: cannot open output file")
    assert first_error_line("warning: x\nlast words\n") == "last words"
    assert first_error_line("") is None


def test_simulated_times_a_hair_apart_are_a_tie_with_the_pick():
    """12.33676 against 12.33669 ms (6e-6 apart, SimGrid's event order) named another SMPI
    winner, 'rankmap's pick is 0.0% slower'; beyond SIM_TIE the faster one wins."""
    from rankmap.simgrid.validation import SIM_TIE, Validation, ValidationRow
    rows = [ValidationRow("inorder", 0.01, 0.01233676), ValidationRow("greedy", 0.011,
                                                                       0.01233669)]
    val = Validation("s", rows)
    assert val.best_simulated().mapping == "inorder" and val.best_gap() == 0.0
    rows[1].simulated_s = 0.01233676 * (1 - 2 * SIM_TIE)
    assert val.best_simulated().mapping == "greedy" and val.best_gap() > SIM_TIE


def test_a_failed_run_is_named_by_its_cause_not_by_the_shells_aborted():
    """'smpirun failed (exit 134): Aborted' named no cause: SimGrid's own 'Failed to allocate
    stack.' or the program's last line is the one said."""
    from rankmap.simgrid.runner import _failure_cause, _program_lines
    err = ("[0.000000] [xbt_cfg/INFO] Configuration change: Set 'smpi/x' to '1'\n"
           "[node-3:12:(13) 0.000000] [ker_context/CRITICAL] Failed to allocate stack.\n"
           "rank 1 on node-0: refusing\n"
           "/usr/bin/smpirun: line 634: 4242 Aborted                 (core dumped) ./a\n"
           "Aborted\n")
    assert _failure_cause(err) == "Failed to allocate stack."
    assert _program_lines(err) == ["rank 1 on node-0: refusing"]
    assert _failure_cause("rank 1: no\nAborted (core dumped)\n") is None


def test_a_platform_is_refused_for_what_validate_refuses(tmp_path, capsys):
    """simgrid platform wrote core="4" for a machine with 2 sockets a node, which validate
    refuses: the two agree now."""
    out = tmp_path / "p.xml"
    assert main(["simgrid", "platform", "-m", "torus:4x4:node=pack:2,core:2", "-o",
                 str(out)]) == 2
    assert "2 socket(s)" in capsys.readouterr().err and not out.exists()
    assert main(["simgrid", "platform", "-m", "mesh:4x4", "-o", str(out)]) == 2
    assert "SimGrid platforms are written for" in capsys.readouterr().err


def test_validates_help_says_what_its_mem_bw_is(capsys):
    """validate predicts like SimGrid's platform (a loopback link per message): its --mem-bw
    help spoke of NUMA domains of node= machines, which validate refuses."""
    assert main(["validate", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "bandwidth of the loopback link each intra-node message takes" in text
    assert "per NUMA domain" not in text
