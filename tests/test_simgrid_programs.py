"""Pattern-specific SMPI programs (halo.c, fft2d.c, pairs.c) send exactly the flow replay's
traffic."""

import numpy as np
import pytest

from rankmap.errors import RankmapError
from rankmap.machines import parse_machine
from rankmap.patterns import parse_pattern
from rankmap.patterns.base import Phase
from rankmap.simgrid import INSTALL_HINT, smpi_available
from rankmap.simgrid.runner import choose_program, simulate

needs_smpi = pytest.mark.skipif(not smpi_available(), reason=INSTALL_HINT)
MEM_BW = 5e9  # bytes/s of the loopback link, so ranks sharing a node can talk


def _node_of_rank(machine, n_ranks, placement):
    """Rank order (cores of a node first) or a seeded random permutation of the cores."""
    cores = np.arange(machine.n_nodes * machine.cores_per_node)
    if placement == "random":
        cores = np.random.default_rng(7).permutation(cores)
    return cores[:n_ranks] // machine.cores_per_node


@needs_smpi
@pytest.mark.parametrize("placement", ["order", "random"])
@pytest.mark.parametrize("machine, pattern, program", [
    ("torus:4x4x2", "stencil:8x4:periodic:bytes=256KiB", "halo"),
    ("torus:4x4x2:cores=2", "stencil:2x4x8:box:bytes=64KiB", "halo"),
    ("torus:4x4x2", "fft2d:4x8:bytes=768KiB", "fft2d"),  # SMPI default: pair
    ("torus:3x3x3", "pairs:random:ranks=27:bytes=256KiB", "pairs"),  # odd: one sits out
])
def test_pattern_program_times_equal_flow_replay(machine, pattern, program, placement):
    """Same phase times under both programs, so the pattern's program sends the same flows."""
    m = parse_machine(machine)
    pat = parse_pattern(pattern)
    nodes = _node_of_rank(m, pat.n_ranks, placement)
    own = simulate(m, pat, nodes, mem_bw=MEM_BW, timeout=60)
    replay = simulate(m, pat, nodes, mem_bw=MEM_BW, timeout=60, program="flows")
    assert (own.program, replay.program) == (program, "flows")
    assert len(own.phase_times) == len(pat.phases) and min(own.phase_times) > 0
    np.testing.assert_allclose(own.phase_times, replay.phase_times, rtol=1e-6)


@needs_smpi
def test_halo_edge_cases_periodic_sizes_one_and_two():
    """Periodic dimensions of size 2 (both sides the same rank, two messages) and of size 1
    (self neighbour dropped, diagonals kept) match the replay."""
    m = parse_machine("torus:2x2x2")
    pat = parse_pattern("stencil:2x1x4:box:periodic:bytes=64KiB")
    nodes = _node_of_rank(m, pat.n_ranks, "random")
    own = simulate(m, pat, nodes, mem_bw=MEM_BW, timeout=60)
    assert own.program == "halo"
    replay = simulate(m, pat, nodes, mem_bw=MEM_BW, timeout=60, program="flows")
    np.testing.assert_allclose(own.phase_times, replay.phase_times, rtol=1e-6)


@needs_smpi
def test_graph_pattern_runs_the_flow_replay(tmp_path):
    m = parse_machine("torus:2x2x2")
    csv = tmp_path / "g.csv"
    csv.write_text("0,1,65536\n1,2,65536\n2,0,32768\n")
    res = simulate(m, parse_pattern(f"graph:{csv}"), np.arange(3), mem_bw=MEM_BW, timeout=60)
    assert res.program == "flows" and len(res.phase_times) == 1


def test_program_choice():
    """Program and arguments per pattern kind; altered phases fall back to the replay."""
    halo = choose_program(parse_pattern("stencil:8x8x4:box:periodic:bytes=1KiB"))
    assert (halo.name, halo.args) == ("halo", ["8x8x4", "111", "box", "1024"])
    assert choose_program(parse_pattern("stencil:32x32")).args == ["32x32", "00", "star",
                                                                   "1048576"]
    fft = choose_program(parse_pattern("fft2d:4x8:bytes=2KiB"))
    assert (fft.name, fft.args) == ("fft2d", ["4x8", "2048"])
    forced = choose_program(parse_pattern("stencil:4x4"), "flows")
    assert forced.name == "flows" and set(forced.files) == {"flows.bin"}
    pairs = choose_program(parse_pattern("pairs:random:ranks=5:bytes=1KiB"))
    partner = [int(v) for v in pairs.files["partners.txt"].split()]
    assert pairs.name == "pairs" and pairs.args == ["partners.txt", "1024"]
    assert sorted(partner).count(-1) == 1 and all(partner[p] == r for r, p in
                                                  enumerate(partner) if p >= 0)
    assert choose_program(parse_pattern("minighost:4x4x4")).name == "flows"
    edited = parse_pattern("stencil:4x4:periodic")
    ph = edited.phases[0]
    edited.phases[0] = Phase(ph.name, ph.src, ph.dst, ph.bytes * 2)
    assert choose_program(edited).name == "flows"
    with pytest.raises(RankmapError, match="'halo'"):
        choose_program(edited, "halo")


@needs_smpi
def test_validate_cli_passes_program_through(monkeypatch, capsys):
    """``rankmap validate --program flows`` reaches simulate(); the default is auto."""
    from rankmap.cli import main
    from rankmap.simgrid import validation

    seen = []

    def recording_simulate(*args, program="auto", **kwargs):
        seen.append(program)
        return simulate(*args, program=program, **kwargs)

    monkeypatch.setattr(validation, "simulate", recording_simulate)
    base = ["validate", "-m", "torus:2x2x2", "-p", "stencil:2x4:periodic:bytes=64KiB",
            "--mappings", "XYZT", "--timeout", "60"]
    assert main(base + ["--program", "flows"]) == 0
    assert main(base) == 0
    assert seen == ["flows", "auto"]
    assert "Spearman" in capsys.readouterr().out
