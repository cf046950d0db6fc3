"""Pattern specs: stencils, FFT phases, random pairs, graph files, TOML phases."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from rankmap.errors import RankmapError
from rankmap.patterns import parse_pattern


def flows(pattern, phase=0):
    ph = pattern.phases[phase]
    return sorted(zip(ph.src.tolist(), ph.dst.tolist()))


def test_star_stencil_neighbours_row_major_last_fastest():
    p = parse_pattern("stencil:3x4")
    # rank 5 = (1, 1): neighbours (0,1)=1, (2,1)=9, (1,0)=4, (1,2)=6
    assert sorted(d for s, d in flows(p) if s == 5) == [1, 4, 6, 9]
    assert p.phases[0].bytes[0] == 1 << 20


@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.booleans(), st.booleans())
def test_stencil_flow_counts(grid, box, periodic):
    spec = ("stencil:" + "x".join(map(str, grid)) + (":box" if box else "")
            + (":periodic" if periodic else ""))
    n = int(np.prod(grid))
    p = parse_pattern(spec)
    if n == 1:      # one rank sends to nobody (the commands refuse it: all-zero metrics)
        assert p.phases[0].n_flows == 0
        return
    ph = p.phases[0]
    assert p.n_ranks == n and (ph.src != ph.dst).all()
    if periodic and min(grid) >= 3:
        per_rank = 3 ** len(grid) - 1 if box else 2 * len(grid)
        assert ph.n_flows == n * per_rank
    if not periodic:  # symmetric: every flow has its reverse
        assert sorted(zip(ph.src, ph.dst)) == sorted(zip(ph.dst, ph.src))


def test_fft2d_groups():
    p = parse_pattern("fft2d:2x3:bytes=4KiB")
    assert [ph.name for ph in p.phases] == ["dim0", "dim1"]
    # dim0: groups of P0=2 ranks sharing j: {0,3}, {1,4}, {2,5}
    assert flows(p, 0) == [(0, 3), (1, 4), (2, 5), (3, 0), (4, 1), (5, 2)]
    # dim1: groups of P1=3 consecutive ranks
    assert set(flows(p, 1)) == {(a, b) for g in ((0, 1, 2), (3, 4, 5)) for a in g for b in g if a != b}
    assert p.phases[0].bytes[0] == 4096


def test_random_pairs_is_a_matching_both_ways():
    p = parse_pattern("pairs:random:seed=3", default_ranks=10)
    ph = p.phases[0]
    assert ph.n_flows == 10 and sorted(ph.src.tolist()) == list(range(10))
    partner = dict(zip(ph.src.tolist(), ph.dst.tolist()))
    assert all(partner[partner[r]] == r and partner[r] != r for r in partner)
    assert flows(p) != flows(parse_pattern("pairs:random:seed=4", default_ranks=10))
    assert parse_pattern("pairs:random:ranks=7").phases[0].n_flows == 6


def test_graph_csv_with_phases(tmp_path):
    f = tmp_path / "g.csv"
    f.write_text("src,dst,bytes,phase\n0,1,1KiB,a\n1,0,2048,a\n2,3,10,b\n3,3,5,b\n")
    p = parse_pattern(f"graph:{f}")
    assert p.n_ranks == 4 and [ph.name for ph in p.phases] == ["a", "b"]
    assert p.phases[0].bytes.tolist() == [1024, 2048] and p.phases[1].n_flows == 1  # self-loop dropped


def test_graph_metis_scotch_mtx_agree(tmp_path):
    # triangle 0-1-2 plus edge 2-3, weights 5 on every edge
    (tmp_path / "g.graph").write_text("% comment\n4 4 001\n2 5 3 5\n1 5 3 5\n1 5 2 5 4 5\n3 5\n")
    (tmp_path / "g.grf").write_text("0\n4 8\n0 010\n2 5 1 5 2\n2 5 0 5 2\n3 5 0 5 1 5 3\n1 5 2\n")
    (tmp_path / "g.mtx").write_text("%%MatrixMarket matrix coordinate integer symmetric\n"
                                    "4 4 4\n2 1 5\n3 1 5\n3 2 5\n4 3 5\n")
    results = [flows(parse_pattern(f"graph:{tmp_path / n}")) for n in ("g.graph", "g.grf", "g.mtx")]
    assert results[0] == results[1] == results[2]
    assert len(results[0]) == 8
    p = parse_pattern(f"graph:{tmp_path / 'g.graph'}:bytes=1KiB")
    assert set(p.phases[0].bytes) == {5 * 1024}


def test_a_graph_that_moves_nothing_is_refused(tmp_path):
    """Only self-loops (or only zero weights between ranks) is an error, not an empty
    pattern whose every placement scores 0."""
    (tmp_path / "loops.csv").write_text("src,dst,bytes\n0,0,100\n3,3,5\n")
    with pytest.raises(RankmapError, match="moves nothing: every edge is a self-loop"):
        parse_pattern(f"graph:{tmp_path / 'loops.csv'}")
    (tmp_path / "zero.mtx").write_text("%%MatrixMarket matrix coordinate real general\n"
                                       "3 3 2\n1 2 0\n2 2 4\n")
    with pytest.raises(RankmapError, match="moves nothing: every edge between two ranks has 0"):
        parse_pattern(f"graph:{tmp_path / 'zero.mtx'}")
    (tmp_path / "one.csv").write_text("src,dst,bytes\n0,0,100\n0,1,5\n")
    assert parse_pattern(f"graph:{tmp_path / 'one.csv'}").phases[0].n_flows == 1


def test_graph_sizes_and_edge_counts_are_checked(tmp_path):
    """bytes= times a weight above 1 PiB is refused (as a stencil's bytes= is), and a METIS
    header whose edge count the vertex lines do not match."""
    (tmp_path / "big.csv").write_text("src,dst,bytes\n0,1,1MiB\n")
    with pytest.raises(RankmapError, match="at most 1PiB a message"):
        parse_pattern(f"graph:{tmp_path / 'big.csv'}:bytes=1PiB")
    assert parse_pattern(f"graph:{tmp_path / 'big.csv'}:bytes=1KiB").phases[0].bytes[0] == 2 ** 30
    (tmp_path / "g.graph").write_text("3 3\n2\n1 3\n2\n")          # 2 edges, header says 3
    with pytest.raises(RankmapError, match="header says 3 edges, the vertex lines list 4 "
                                           "neighbours"):
        parse_pattern(f"graph:{tmp_path / 'g.graph'}")
    (tmp_path / "g.graph").write_text("3 2\n2\n1 3\n2\n")
    assert parse_pattern(f"graph:{tmp_path / 'g.graph'}").phases[0].n_flows == 4


def test_no_phase_may_be_called_all(tmp_path):
    """'all' names the whole pattern's row of compare's CSV (and counter files): a phase of
    that name would be a second, indistinguishable row."""
    (tmp_path / "p.toml").write_text('[[phase]]\nname = "all"\npattern = "stencil:4x4"\n')
    with pytest.raises(RankmapError, match="a phase may not be called 'all'"):
        parse_pattern(str(tmp_path / "p.toml"))
    (tmp_path / "g.csv").write_text("src,dst,bytes,phase\n0,1,8,all\n1,0,8,x\n")
    with pytest.raises(RankmapError, match="a phase may not be called 'all'"):
        parse_pattern(f"graph:{tmp_path / 'g.csv'}")


def test_files_named_in_a_pattern_toml_are_beside_it(tmp_path, monkeypatch):
    """graph:FILE and nested TOML files in a [[phase]] are read beside the TOML file, in
    every part of 'A + B', whatever the working directory."""
    from rankmap.specs import files_beside
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "only.csv").write_text("src,dst,bytes\n0,1,1MiB\n1,0,1MiB\n")
    (sub / "inner.toml").write_text('[[phase]]\npattern = "graph:only.csv"\nname = "g"\n')
    (sub / "outer.toml").write_text('[[phase]]\npattern = "inner.toml"\n[[phase]]\n'
                                    'pattern = "stencil:2 + graph:only.csv"\nname = "h"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    p = parse_pattern(str(sub / "outer.toml"))
    assert p.n_ranks == 2 and sum(ph.bytes.sum() for ph in p.phases) > 0
    assert files_beside("graph:/abs/g.csv:bytes=1KiB", "d") == "graph:/abs/g.csv:bytes=1KiB"
    assert files_beside("stencil:4 + graph:g.csv", "d") == "stencil:4 + graph:d/g.csv"
    assert files_beside("fattree:topology=t.conf:cores=2", "d") == \
        "fattree:topology=d/t.conf:cores=2"
    assert files_beside("torus:2:node=pack:2,core:4", "d") == "torus:2:node=pack:2,core:4"


def test_a_part_without_ranks_takes_the_composition_s():
    """'stencil:4x4 + allreduce' on 32 cores: the allreduce has the stencil's 16 ranks, in
    either order; parts that fix different counts still disagree."""
    for spec in ("stencil:4x4 + allreduce", "allreduce + stencil:4x4"):
        p = parse_pattern(spec, default_ranks=32)
        assert p.n_ranks == 16
        assert any(ph.name.startswith("allreduce") for ph in p.phases)
    assert parse_pattern("allreduce + alltoall", default_ranks=8).n_ranks == 8
    with pytest.raises(RankmapError, match="part 2 .* has 4 ranks, part 1 has 16"):
        parse_pattern("stencil:4x4 + stencil:2x2", default_ranks=32)


def test_toml_phases(tmp_path):
    f = tmp_path / "app.toml"
    f.write_text('[[phase]]\npattern = "stencil:4x4:periodic"\nname = "halo"\n'
                 '[[phase]]\npattern = "fft2d:4x4"\n'
                 '[[phase]]\nname = "x"\nflows = [[0, 15, "1KiB"]]\n')
    p = parse_pattern(str(f))
    assert [ph.name for ph in p.phases] == ["halo", "dim0", "dim1", "x"]
    assert p.n_ranks == 16 and p.grid == (4, 4)


@pytest.mark.parametrize("spec,needle", [
    ("stencil:4x0", "positive"), ("stencil:4x4:bytes=0", "positive"),
    ("stencil:4x4:bytes=-1KiB", "-1KiB"), ("stencil:4x4:bytes=lots", "lots"),
    ("stencil:4x4:diagonal", "diagonal"), ("fft2d:4x4x4", "P0xP1"), ("pairs:sorted", "random"),
    ("graph:/no/such.csv", "not found"), ("wave:8", "wave"), ("stencil:4x4:star:box", "both"),
])
def test_bad_pattern_specs(spec, needle):
    with pytest.raises(RankmapError, match=needle):
        parse_pattern(spec, default_ranks=16)


def test_stencil_without_grid_needs_an_allocation():
    with pytest.raises(RankmapError, match="no grid"):
        parse_pattern("stencil")


@pytest.mark.parametrize("text,needle", [
    ("src,dst,bytes\n0,1\n", "line 2"), ("0,x,5\n", "line 1"), ("0,1,5KiBB\n", "line 1"),
    ("from,to,size\n0,1,5\n", "header"),
])
def test_bad_graph_csv_names_line(tmp_path, text, needle):
    f = tmp_path / "bad.csv"
    f.write_text(text)
    with pytest.raises(RankmapError, match=needle):
        parse_pattern(f"graph:{f}")


@given(st.lists(st.integers(1, 5), min_size=1, max_size=3).flatmap(
    lambda g: st.tuples(st.just(g), st.lists(st.booleans(), min_size=len(g), max_size=len(g)),
                        st.lists(st.lists(st.integers(-2, 2), min_size=len(g),
                                          max_size=len(g)), min_size=1, max_size=6),
                        st.lists(st.floats(0.5, 1e6), min_size=6, max_size=6))))
def test_sized_stencil_flows_are_the_indexed_flows_with_their_offsets_sizes(case):
    """The flows built with their sizes, and the indexed ones, are those of a plain loop over
    ranks (row-major) and offsets: wrapped or dropped at the edges, no flow to itself."""
    import itertools

    from rankmap.patterns.stencil import stencil_flows_indexed, stencil_flows_sized
    grid, periodic, offsets, sizes = case
    sizes = np.asarray(sizes[:len(offsets)])
    want = []
    for r, coords in enumerate(itertools.product(*(range(g) for g in grid))):
        for o, off in enumerate(offsets):
            x = [c + d for c, d in zip(coords, off)]
            if any(not p and not 0 <= xi < g for xi, g, p in zip(x, grid, periodic)):
                continue
            t = int(np.ravel_multi_index([xi % g for xi, g in zip(x, grid)], grid))
            if t != r:
                want.append((r, t, o))
    want = np.array(want, dtype=np.int64).reshape(-1, 3)
    src, dst, oidx = stencil_flows_indexed(grid, periodic, offsets)
    s2, d2, b2 = stencil_flows_sized(grid, periodic, offsets, sizes)
    assert np.array_equal(np.stack([src, dst, oidx], axis=1), want)
    assert np.array_equal(s2, want[:, 0]) and np.array_equal(d2, want[:, 1])
    assert b2.dtype == np.float64 and np.array_equal(b2, sizes[want[:, 2]])


def test_times_repeats_a_pattern_as_record_folds_iterations():
    """times=K: the same flows, phases and grid, every flow's bytes K times; a composition's
    parts repeat on their own; the predicted time of K folded repetitions is K times one
    (max-min times scale with the bytes); bad values are refused."""
    from rankmap.cli import main as cli_main
    from rankmap.errors import RankmapError
    one = parse_pattern("stencil:6x6:periodic:bytes=512 + allreduce:36:bytes=8:algo=ring")
    many = parse_pattern("stencil:6x6:periodic:bytes=512:times=500 + "
                         "allreduce:36:bytes=8:algo=ring:times=500")
    assert [p.name for p in many.phases] == [p.name for p in one.phases]
    assert many.grid == one.grid == (6, 6) and many.periodic == one.periodic
    for a, b in zip(one.phases, many.phases):
        assert np.array_equal(a.src, b.src) and np.array_equal(a.dst, b.dst)
        assert np.array_equal(b.bytes, 500 * a.bytes)
    mixed = parse_pattern("stencil:6x6:bytes=512:times=3 + allreduce:36:bytes=8")
    plain = parse_pattern("stencil:6x6:bytes=512 + allreduce:36:bytes=8")
    assert mixed.phases[0].bytes.max() == 1536
    assert all(np.array_equal(a.bytes, b.bytes) for a, b in zip(mixed.phases[1:], plain.phases[1:]))
    from rankmap.allocation import whole_machine
    from rankmap.machines import parse_machine
    from rankmap.selection import compare
    from rankmap.timing import TimeOptions
    m = parse_machine("torus:3x3:cores=4")
    times = []
    for k in (1, 7):
        pat = parse_pattern(f"stencil:6x6:periodic:bytes=4096:times={k}")
        res = compare(m, whole_machine(m), pat, ["random"],
                      time_options=TimeOptions(overhead_s=0.0, hop_latency_s=0.0))
        times.append(res.candidates[0].metrics["predicted_time_s"])
    assert times[1] == pytest.approx(7 * times[0], rel=1e-9)
    for bad in ("0", "-2", "x", "1e3", "2000000000"):
        with pytest.raises(RankmapError, match="times"):
            parse_pattern(f"stencil:6x6:times={bad}")
    with pytest.raises(RankmapError, match="times=2"):
        parse_pattern("stencil:6x6:bytes=1PiB:times=2")
    with pytest.raises(RankmapError, match=r"\.toml file takes no options"):
        parse_pattern("phases.toml:times=2")
    assert cli_main(["compare", "-m", "torus:3x3", "-p", "stencil:3x3:times=0",
                     "--mappings", "XYT"]) == 2
