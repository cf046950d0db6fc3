"""Inputs of the pattern language that were taken wrongly: decimal sizes refused, huge or
unicode numbers raising a traceback, flows over the 1 PiB limit let through by some forms,
and graph files whose mistakes were read as something else."""

import decimal

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rankmap.errors import RankmapError
from rankmap.patterns import parse_pattern
from rankmap.units import parse_size

UNITS = {"KB": 10 ** 3, "MB": 10 ** 6, "GB": 10 ** 9, "TB": 10 ** 12}


@settings(max_examples=200, deadline=None)
@given(tenths=st.integers(1, 999), unit=st.sampled_from(sorted(UNITS)))
def test_decimal_sizes_are_exact(tenths, unit):
    """4.1MB is 4,100,000 bytes: the decimal text times the unit, not a binary float product
    (4.1 * 1e6 = 4099999.9999999995 was refused as 'not a whole number of bytes')."""
    text = f"{tenths // 10}.{tenths % 10}{unit}"
    assert parse_size(text) == tenths * UNITS[unit] // 10


def test_sizes_that_are_not_whole_bytes_are_refused_not_rounded():
    for text in ("100.0000000000000001", "1.5", "0.0001KB", "0.3KiB",
                 "1.00000000000000000000000000000000001"):   # past 28 digits too
        with pytest.raises(RankmapError, match="not a whole number of bytes"):
            parse_size(text)
    assert parse_size("0.5KiB") == 512 and parse_size("1e-3KB") == 1


@pytest.mark.parametrize("spec,said", [
    ("stencil:4x4:offsets=99999999999999999999,0", "larger than any grid"),
    ("stencil:3x3:periodic:offsets=-9223372036854775808,0", "larger than any grid"),
    ("stencil:4x4:offsets=-4,0", "larger than the grid 4x4"),
    ("stencil:4x4:box:class\u00b2=1", "unknown neighbour class"),
    ("stencil:4x4:box:class" + "9" * 5000 + "=1", "unknown neighbour class"),
    ("stencil:dims=7", "must be at most 6"),
    ("lulesh:2x2x2:s=100000000", "more than 1,125,899,906,842,624 (1 PiB)"),
    ("allgather:64:bytes=1000TiB", "more than 1,125,899,906,842,624 (1 PiB)"),
    ("allgather:64:bytes=1TiB:times=1000", "more than 1,125,899,906,842,624 (1 PiB)"),
])
def test_bad_numbers_are_one_error(spec, said):
    """Each was a traceback (an int64 overflow, int('²'), a 5,000-digit int) or went through
    (an offset of -2^63 read as a step of the grid; a flow of 63 PiB from an allgather or of
    213 PiB from LULESH's s=, which times= and bytes= refuse)."""
    with pytest.raises(RankmapError, match=said.replace("(", r"\(").replace(")", r"\)")
                       .replace("+", r"\+")):
        parse_pattern(spec, default_ranks=64)


def test_a_flow_of_one_pib_is_the_limit():
    top = max(float(ph.bytes.max()) for ph in parse_pattern("allgather:2:bytes=1PiB").phases)
    assert top == 2 ** 50


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return f"graph:{path}"


def test_an_empty_phase_cell_is_refused(tmp_path):
    """A trailing comma made a fourth, empty column: a phase named '' and twice the time."""
    for text, line, why in (("0,1,100\n2,3,100,\n", 2, "3 columns.*a trailing comma"),
                            ("src,dst,bytes,phase\n0,1,100,a\n2,3,100,\n", 3,
                             "empty phase name")):
        with pytest.raises(RankmapError, match=f"line {line}: .*{why}"):
            parse_pattern(write(tmp_path, "g.csv", text))


def test_rows_of_a_headerless_csv_all_have_the_first_rows_columns(tmp_path):
    """A row with a phase among rows without one was a phase of its own: twice the time.
    Without a header four columns are src,dst,bytes,phase, as with one."""
    with pytest.raises(RankmapError, match="line 2: expected 3 columns as in the first row"):
        parse_pattern(write(tmp_path, "g.csv", "0,1,1000000\n2,3,1000000,x\n"))
    rows = "0,1,1048576,p1\n2,3,1048576,p2\n"
    bare = parse_pattern(write(tmp_path, "h0.csv", rows))
    named = parse_pattern(write(tmp_path, "h1.csv", "src,dst,bytes,phase\n" + rows))
    assert [ph.name for ph in bare.phases] == [ph.name for ph in named.phases] == ["p1", "p2"]


def test_a_csv_header_may_follow_comments_and_zero_byte_rows_are_no_flows(tmp_path):
    p = parse_pattern(write(tmp_path, "g.csv", "# generated\n\nsrc,dst,bytes\n0,1,5\n"
                            "1,2,0\n2,1,7\n"))
    (ph,) = p.phases
    assert list(zip(ph.src.tolist(), ph.dst.tolist(), ph.bytes.tolist())) == [(0, 1, 5), (2, 1, 7)]
    with pytest.raises(RankmapError, match="moves nothing.*0 bytes"):
        parse_pattern(write(tmp_path, "z.csv", "0,1,0\n"))


def test_a_ranks_comment_the_rows_contradict_is_refused(tmp_path):
    with pytest.raises(RankmapError, match="uses 4 ranks, more than its '# ranks 2'"):
        parse_pattern(write(tmp_path, "g.csv", "# ranks 2\n0,3,5\n"))
    assert parse_pattern(write(tmp_path, "h.csv", "# ranks 6\n0,3,5\n")).n_ranks == 6


@pytest.mark.parametrize("name, text, why", [
    ("p.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2 77\n",
     "line 3: expected 'i j' \\(a pattern matrix has no values\\)"),
    ("r.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 5 7\n",
     "line 3: expected 'i j value'"),
])
def test_matrix_files_say_what_they_would_drop(tmp_path, name, text, why):
    with pytest.raises(RankmapError, match=why):
        parse_pattern(write(tmp_path, name, text))


def test_a_real_matrix_keeps_its_weights_as_written(tmp_path):
    """A SuiteSparse 'real general' matrix (a mesh's couplings) is read as weights, 0.7 and
    all: refusing fractions refused the usual .mtx file."""
    text = "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 0.7\n2 3 20.5\n"
    assert parse_pattern(write(tmp_path, "r.mtx", text)).phases[0].bytes.tolist() == [0.7, 20.5]
    assert parse_pattern(write(tmp_path, "r.mtx", text) + ":bytes=2").phases[0].bytes.tolist() \
        == [1.4, 41.0]


def test_csv_ranks_are_capped_like_every_pattern(tmp_path, monkeypatch):
    monkeypatch.setenv("RANKMAP_MAX_RANKS", "100")
    parse_pattern(write(tmp_path, "ok.csv", "0,99,100\n"))
    with pytest.raises(RankmapError, match="ranks"):
        parse_pattern(write(tmp_path, "big.csv", "0,100,100\n"))


def test_self_sends_are_no_flow_in_every_form(tmp_path):
    """A TOML file's explicit [2, 2, 1000000] was a flow (75x the predicted time of the
    same graph as CSV, whose self-loop is dropped)."""
    toml = tmp_path / "self.toml"
    toml.write_text("[[phase]]\nflows = [[0, 1, 100], [2, 2, 1000000]]\n")
    a = parse_pattern(str(toml))
    b = parse_pattern(write(tmp_path, "self.csv", "src,dst,bytes\n0,1,100\n2,2,1000000\n"))
    assert [(p.src.tolist(), p.dst.tolist(), p.bytes.tolist()) for p in a.phases] == \
        [(p.src.tolist(), p.dst.tolist(), p.bytes.tolist()) for p in b.phases] == \
        [([0], [1], [100.0])]
    toml.write_text("[[phase]]\nflows = [[2, 2, 100]]\n")
    with pytest.raises(RankmapError, match="every flow is a rank to itself"):
        parse_pattern(str(toml))
    # a phase of self-sends only is left out, with a note (a CSV graph's such phase too)
    toml.write_text('[[phase]]\nname = "a"\nflows = [[0, 1, 100]]\n'
                    '[[phase]]\nname = "local"\nflows = [[2, 2, 100]]\n')
    t = parse_pattern(str(toml))
    assert [p.name for p in t.phases] == ["a"]
    assert any("phase local moves nothing" in n for n in t.notes), t.notes
    c = parse_pattern(write(tmp_path, "p.csv", "src,dst,bytes,phase\n0,1,100,a\n2,2,100,local\n"))
    assert [p.name for p in c.phases] == ["a"]


def test_metis_files_must_list_every_edge_from_both_ends(tmp_path):
    with pytest.raises(RankmapError, match="vertex 1 lists 2, which does not list it back"):
        parse_pattern(write(tmp_path, "a.graph", "3 1\n2 3\n\n\n"))
    with pytest.raises(RankmapError, match="'this is not metis' after the 3 vertex lines"):
        parse_pattern(write(tmp_path, "b.graph", "3 2\n2\n1 3\n2\nthis is not metis\n"))
    ok = parse_pattern(write(tmp_path, "c.graph", "3 2\n2\n1 3\n2\n\n"))
    assert ok.phases[0].n_flows == 4


MTX = "%%MatrixMarket matrix coordinate {field} general\n4 4 {n}\n"


def test_matrix_market_weights(tmp_path):
    """Magnitudes are bytes (documented); an integer matrix's 1.5 is refused (scipy cut it to
    1); an explicit 0 is no flow; an empty matrix says it has no edges."""
    neg = parse_pattern(write(tmp_path, "n.mtx", MTX.format(field="real", n=2) +
                              "1 2 -100\n2 3 100\n"))
    assert neg.phases[0].bytes.tolist() == [100.0, 100.0]
    with pytest.raises(RankmapError, match="weight '1.5' in an integer matrix"):
        parse_pattern(write(tmp_path, "i.mtx", MTX.format(field="integer", n=2) +
                            "1 2 1.5\n3 4 100\n"))
    zero = parse_pattern(write(tmp_path, "z.mtx", MTX.format(field="integer", n=2) +
                               "1 2 100\n3 4 0\n"))
    assert zero.phases[0].n_flows == 1 and np.all(zero.phases[0].bytes > 0)
    with pytest.raises(RankmapError, match="moves nothing: it has no edges"):
        parse_pattern(write(tmp_path, "e.mtx", MTX.format(field="integer", n=0)))


def test_exact_product_is_what_decimal_says():
    assert parse_size("2.01GB") == int(decimal.Decimal("2.01") * 10 ** 9)


def test_odd_pairs_and_exact_phase_totals():
    """pairs:random on 5 ranks says which rank sits out (it did so silently, the README
    promising a perfect matching); a phase's bytes in JSON are summed exactly."""
    p = parse_pattern("pairs:random:ranks=5")
    assert p.phases[0].n_flows == 4 and len(p.notes) == 1 and "sends nothing" in p.notes[0]
    assert not parse_pattern("pairs:random:ranks=6").notes
    assert parse_pattern("allreduce:7:bytes=8:algo=ring").describe()["phases"][0]["bytes"] == 96


def test_a_plus_before_a_toml_file_splits_as_documented():
    from rankmap.patterns import PATTERN_KINDS
    from rankmap.patterns.compose import split_composition
    assert split_composition("stencil:8x8+sub/a.toml", PATTERN_KINDS) == \
        ["stencil:8x8", "sub/a.toml"]
    assert split_composition("stencil:4x4:offsets=+1,0", PATTERN_KINDS) == \
        ["stencil:4x4:offsets=+1,0"]
    assert split_composition("stencil:8x8:bytes=1e+6", PATTERN_KINDS) == \
        ["stencil:8x8:bytes=1e+6"]


def test_a_pattern_built_in_python_checks_its_grid():
    from rankmap.machines import parse_machine
    from rankmap.patterns import Pattern, Phase
    ph = [Phase("p", np.arange(7), np.arange(1, 8), np.ones(7))]
    for grid, periodic, said in (((-2, -4), None, "whole extents"), ((2.0, 4.0), None,
                                                                      "whole extents"),
                                 ((2, 4), (True,), "bad periodic flags"),
                                 ((2, 4), ("no", "x"), "bad periodic flags"),
                                 (8, None, "bad grid 8")):
        with pytest.raises(RankmapError, match=said):
            Pattern("c", "stencil", 8, ph, grid=grid, periodic=periodic)
    assert Pattern("c", "stencil", 8, ph, grid=(np.int64(2), 4)).grid == (2, 4)
    # a trailing space after node=... is no part of its levels
    assert parse_machine("torus:2:node=pack:2,core:2 ").cores_per_node == 4


@pytest.mark.parametrize("args, said", [
    (["nodes", "-m", "fattree:topology=/dev/null"], "'/dev/null' is not a regular file"),
    (["compare", "-m", "torus:4x4", "-p", "graph:/dev/zero"], "is not a regular file"),
    (["compare", "-m", "torus:4x4", "-p", "graph:{tmp}"], "is a folder, not a file"),
    (["nodes", "-m", "fattree:topology={tmp}/none.conf"], "none.conf' not found"),
    (["counters", "/dev/zero"], "counters file '/dev/zero' is not a regular file"),
    (["compare", "-m", "torus:4x4", "-p", "stencil:4x4", "--nodes", "/dev/zero"],
     "node file '/dev/zero' is not a regular file"),
])
def test_an_input_path_that_is_no_file_is_named_for_what_it_is(args, said, tmp_path, capsys):
    """/dev/null and folders were 'not found'; /dev/zero must not be read for ever."""
    from rankmap.cli import main
    assert main([a.format(tmp=tmp_path) for a in args]) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and len(err.splitlines()) == 1, err


def test_the_flow_cap_holds_for_the_parts_of_a_composition_together(monkeypatch):
    """Each part of A + B was checked alone: ten alltoall:4096 parts took 7 GB."""
    from rankmap.errors import RankmapError
    from rankmap.patterns import parse_pattern
    monkeypatch.setenv("RANKMAP_MAX_FLOWS", "100")
    assert sum(ph.n_flows for ph in parse_pattern("alltoall:10").phases) == 90
    with pytest.raises(RankmapError, match="the parts together of alltoall:10 \\+ "
                                           "alltoall:10 has 180 flows"):
        parse_pattern("alltoall:10 + alltoall:10")


@pytest.mark.parametrize("count", ["abc", "-3", "1.5", "1e3"])
def test_the_messages_column_of_a_recorded_csv_is_checked(tmp_path, count):
    with pytest.raises(RankmapError, match=f"messages in .*line 2: '{count}'"):
        parse_pattern(write(tmp_path, "r.csv",
                            f"src,dst,bytes,messages,phase\n0,1,100,{count},0\n"))
    assert parse_pattern(write(tmp_path, "s.csv", "src,dst,bytes,messages,phase\n0,1,100,7,0\n"
                               )).phases[0].bytes.tolist() == [100]
