"""Pattern inputs that were read wrongly or refused unclearly: a one-sided Scotch arc read
as a one-way flow, a composed part that moves nothing reported as an all-zero phase, over-
sized messages named by a float-rounded count and not by the spec's value, a TOML 0-byte
flow refused where a graph's is dropped, and a CSV's ``+1`` on line 1 taken for a header."""

import numpy as np
import pytest

from rankmap.cli import main
from rankmap.errors import RankmapError
from rankmap.patterns import Phase, check_moves_something, parse_pattern

PIB = 1 << 50


def graph(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return f"graph:{path}"


def flows(pattern):
    return [(p.name, p.src.tolist(), p.dst.tolist(), p.bytes.tolist()) for p in pattern.phases]


# 1. Scotch graphs are symmetric, as METIS graphs are


def test_a_one_sided_scotch_arc_is_refused_as_in_metis(tmp_path, capsys):
    spec = graph(tmp_path, "asym.grf", "0\n3 2\n0 000\n1 1\n1 2\n0\n")
    with pytest.raises(RankmapError, match=r"asym.grf: vertex 0 lists 1, which does not list "
                                           r"it back \(Scotch lists every edge from both ends\)"):
        parse_pattern(spec)
    assert main(["evaluate", "-m", "torus:3", "-p", spec, "--mapping", "inorder"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "does not list it back" in err
    # labels are named as the file writes them (vertex 20 lists 30, 30 lists nobody)
    with pytest.raises(RankmapError, match="vertex 20 lists 30, which does not list it back"):
        parse_pattern(graph(tmp_path, "lab.grf", "0\n3 3\n0 100\n10 1 20\n20 2 10 30\n"
                                                 "30 0\n"))
    # the graph made symmetric reads as its METIS twin
    grf = parse_pattern(graph(tmp_path, "ok.grf", "0\n3 4\n1 000\n1 2\n2 1 3\n1 2\n"))
    metis = parse_pattern(graph(tmp_path, "ok.graph", "3 2\n2\n1 3\n2\n"))
    assert flows(grf) == flows(metis)
    assert sorted(zip(*flows(grf)[0][1:3])) == [(0, 1), (1, 0), (1, 2), (2, 1)]


# 2. a part of a composition that moves nothing


@pytest.mark.parametrize("spec", ["stencil:4x4 + stencil:4x4:offsets=+1,0:to=lower",
                                  "stencil:4x4:offsets=+1,0:to=lower:times=2 + allreduce"])
def test_a_composed_part_that_moves_nothing_is_refused(spec, capsys):
    """Refused as the part alone is (not an all-zero phase); to=higher moves, and stays."""
    with pytest.raises(RankmapError, match=r"part 'stencil:4x4:offsets=\+1,0:to=lower"
                                           r"(:times=2)?' moves nothing"):
        check_moves_something(parse_pattern(spec))
    assert main(["evaluate", "-m", "torus:4x4", "-p", spec, "--mapping", "inorder",
                 "--format", "csv"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and "moves nothing" in out.err and "to=lower" in out.err
    moving = parse_pattern(spec.replace("to=lower", "to=higher"))
    check_moves_something(moving)
    assert all(ph.n_flows for ph in moving.phases)


def test_a_toml_phase_that_moves_nothing_is_refused(tmp_path):
    toml = tmp_path / "c.toml"
    toml.write_text('[[phase]]\npattern = "stencil:4x4"\n'
                    '[[phase]]\npattern = "stencil:4x4:offsets=+1,0:to=lower"\n')
    for spec in (str(toml), f"{toml} + allreduce"):
        with pytest.raises(RankmapError, match="offsets=\\+1,0:to=lower' moves nothing"):
            check_moves_something(parse_pattern(spec))


# 3. oversized messages: the spec's value named, the count exact


def test_lulesh_s_too_large_names_s_and_the_exact_size():
    with pytest.raises(RankmapError) as exc:
        parse_pattern("lulesh:2x2x2:s=100000000")
    text = str(exc.value)
    assert "s=100000000" in text and "'lulesh:2x2x2:s=100000000'" in text
    assert f"{24 * 100000001 ** 2:,} bytes" in text      # 240,000,004,800,000,024, not ...032


def test_lulesh_s_just_below_the_limit_is_taken():
    s = 4843164                       # 48 (s+1)^2 bytes of a posvel face: just under 1 PiB
    assert 48 * (s + 1) ** 2 <= PIB < 48 * (s + 2) ** 2
    p = parse_pattern(f"lulesh:2x2x2:s={s}")
    assert max(float(ph.bytes.max()) for ph in p.phases) == 48 * (s + 1) ** 2
    with pytest.raises(RankmapError, match=f"s={s + 1}.*phase 'posvel'"):
        parse_pattern(f"lulesh:2x2x2:s={s + 1}")


@pytest.mark.parametrize("spec,exact", [
    ("allgather:3:bytes=600TiB", 2 * 600 * 2 ** 40),
    ("allgather:64:bytes=1125899906842623", 63 * (PIB - 1)),     # not a float: rounded
    ("allgather:16:algo=bruck:bytes=1125899906842623", 2 * (PIB - 1)),   # round r1 first
])
def test_collective_too_large_names_bytes_and_the_exact_size(spec, exact):
    with pytest.raises(RankmapError) as exc:
        parse_pattern(spec)
    text = str(exc.value)
    assert f"bad {spec.split(':')[-1]} in '{spec}'" in text
    assert f"carry {exact:,} bytes" in text


def test_times_too_large_gives_the_exact_product():
    with pytest.raises(RankmapError, match=f"would carry {(PIB - 1) * 1000:,} bytes"):
        parse_pattern(f"allreduce:2:bytes={PIB - 1}:times=1000")


def test_a_pair_over_the_limit_gives_its_exact_sum(tmp_path):
    spec = graph(tmp_path, "rep.csv", "src,dst,bytes\n" + f"0,1,{PIB - 1}\n" * 9)
    with pytest.raises(RankmapError, match=f"would carry {9 * (PIB - 1):,} bytes together"):
        parse_pattern(spec)


def test_a_float_size_past_2_53_is_not_printed_as_exact():
    with pytest.raises(RankmapError, match=r"a message of about [0-9,]+ bytes"):
        Phase("p", [0], [1], [float(24 * 100000001 ** 2)])


# 4. a TOML flow of 0 bytes is no flow, as a graph's 0-byte row


def test_toml_zero_byte_flows_are_dropped_as_in_a_graph(tmp_path):
    toml = tmp_path / "z.toml"
    toml.write_text("[[phase]]\nflows = [[0, 1, 0], [1, 0, 5]]\n")
    csv = graph(tmp_path, "z.csv", "src,dst,bytes\n0,1,0\n1,0,5\n")
    assert [f[1:] for f in flows(parse_pattern(str(toml)))] == \
        [f[1:] for f in flows(parse_pattern(csv))] == [([1], [0], [5.0])]


def test_toml_phase_of_zero_byte_flows_is_left_out_with_a_note(tmp_path):
    toml = tmp_path / "z.toml"
    toml.write_text('[[phase]]\nname = "a"\nflows = [[0, 1, 7]]\n'
                    '[[phase]]\nname = "idle"\nflows = [[1, 0, "0KiB"], [2, 2, 4]]\n')
    p = parse_pattern(str(toml))
    assert [ph.name for ph in p.phases] == ["a"]
    assert any("phase idle moves nothing" in n and "0 bytes" in n for n in p.notes), p.notes
    toml.write_text("[[phase]]\nflows = [[0, 1, 0]]\n")
    with pytest.raises(RankmapError, match="moves nothing: every flow has 0 bytes"):
        parse_pattern(str(toml))
    toml.write_text("[[phase]]\nflows = [[0, 1, -1]]\n")      # negative: still refused
    with pytest.raises(RankmapError, match="flow 1: bytes"):
        parse_pattern(str(toml))


# 5. +1 is a rank on line 1 as on any other line


@pytest.mark.parametrize("text", ["+1,0,5\n0,1,5\n", "+1,0,5,a\n0,+1,5,b\n",
                                  "# ranks 2\n+1,0,5\n0,1,5\n"])
def test_a_leading_plus_on_line_1_is_a_number(tmp_path, text):
    plain = parse_pattern(graph(tmp_path, "plain.csv", text.replace("+", "")))
    plus = parse_pattern(graph(tmp_path, "plus.csv", text))
    assert flows(plus) == flows(plain)
    assert sorted(zip(np.concatenate([p.src for p in plus.phases]).tolist(),
                      np.concatenate([p.dst for p in plus.phases]).tolist())) == [(0, 1), (1, 0)]
    # a header is still one, and a bad one still refused
    ok = parse_pattern(graph(tmp_path, "h.csv", "src,dst,bytes\n+1,0,5\n0,1,5\n"))
    assert ok.phases[0].n_flows == 2
    with pytest.raises(RankmapError, match="line 1: expected header"):
        parse_pattern(graph(tmp_path, "b.csv", "from,to,bytes\n1,0,5\n"))
