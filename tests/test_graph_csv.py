"""The graph CSV reader's vectorised pass (plain files) gives exactly what the row-by-row
reader gives, and leaves every other file, and every refusal, to it."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rankmap.errors import RankmapError
from rankmap.patterns.graph_files import (_csv_row_by_row, _plain_csv, _plain_ints,
                                          read_csv_graph)
from rankmap.validate import read_csv_rows, read_text

_TOKENS = st.one_of(st.integers(0, 40).map(str), st.integers(1, 5000).map(str),
                    st.sampled_from(["0", "007", "-1", "+3", " 4 ", "1.5", "2e3", "64KiB",
                                     "x", "", "1125899906842625", "٣", "999999999999999999"]))
_HEADERS = ["", "src,dst,bytes\n", "src,dst,bytes,phase\n", "src,dst,bytes,messages\n",
            "src,dst,bytes,messages,phase\n", "SRC,DST,BYTES\n", "from,to,bytes\n"]


@st.composite
def graph_csv(draw):
    header = draw(st.sampled_from(_HEADERS))
    width = len(header.split(",")) if header else draw(st.sampled_from([3, 3, 4]))
    plain = draw(st.booleans())             # mostly plain rows, or anything
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["row"] * 8 + ["comment", "blank", "short"]))
        if kind == "comment":
            lines.append(draw(st.sampled_from(["# ranks 64", "# ranks 9", "# hello",
                                               "# ranks x", "#ranks 50"])))
        elif kind == "blank":
            lines.append(draw(st.sampled_from(["", " ", ",,"])))
        elif kind == "short":
            lines.append(draw(st.sampled_from(["1,2", "1,2,3,4", "1,2,3,4,5,6", "1,2,3,",
                                               " 1,2,3", "1, 2,3", "\"1\",2,3"])))
        else:
            cells = [str(draw(st.integers(0, 40))) if plain else draw(_TOKENS)
                     for _ in range(min(width, 4) if width != 5 else 4)]
            if width in (4, 5) and header.endswith("phase\n"):
                cells = cells[:width - 1] + [draw(st.sampled_from(["a", "dim0", " b ", "7"]))]
            elif width == 4 and not header:
                cells = cells[:3] + [draw(st.sampled_from(["a", "dim1"]))]
            if plain and len(cells) > 2:
                cells[2] = str(draw(st.integers(1, 10 ** 6)))
            lines.append(",".join(cells))
    return header + "\n".join(lines) + ("\n" if lines else "")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(graph_csv())
def test_plain_pass_equals_row_by_row(tmp_path, text):
    path = tmp_path / "g.csv"
    path.write_text(text)
    rows = read_csv_rows(str(path), "graph file")
    text = read_text(str(path), "graph file")
    try:
        want = _csv_row_by_row(rows, str(path))
    except RankmapError:
        assert _plain_csv(text, str(path)) is None   # refusals come from the row reader
        with pytest.raises(RankmapError):
            read_csv_graph(str(path))
        return
    got = _plain_csv(text, str(path))
    if got is None:
        return
    for g, w in zip(got[:3], want[:3]):
        assert g.dtype == w.dtype and np.array_equal(g, w)
    assert got[3:] == want[3:]


def test_a_recorded_file_takes_the_plain_pass(tmp_path):
    """What ``rankmap record`` writes (header, digit rows with a numeric phase, a trailing
    ``# ranks N``) is read in the vectorised pass, with the rank count and phases."""
    path = tmp_path / "rec.csv"
    path.write_text("src,dst,bytes,messages,phase\n0,1,4096,2,0\n1,0,4096,2,0\n2,3,8,1,1\n"
                    "# ranks 6\n")
    got = _plain_csv(read_text(str(path), "graph file"), str(path))
    assert got is not None
    src, dst, nb, phases, n = got
    assert src.tolist() == [0, 1, 2] and dst.tolist() == [1, 0, 3]
    assert nb.tolist() == [4096.0, 4096.0, 8.0] and phases == ["0", "0", "1"] and n == 6


@pytest.mark.parametrize("text", ["src,dst,bytes\n1,2\n1,2,3,4\n",    # widths that add up
                                  "1,2,3\n4,5\n6,7,8,9\n",
                                  "src,dst,bytes\n1,2,x\n",            # not a size
                                  "src,dst,bytes\n1,2,1125899906842625\n"])   # over 1 PiB
def test_files_the_row_reader_refuses_are_left_to_it(tmp_path, text):
    path = tmp_path / "g.csv"
    path.write_text(text)
    assert _plain_csv(read_text(str(path), "graph file"), str(path)) is None
    with pytest.raises(RankmapError, match="line 2|line 3"):
        read_csv_graph(str(path))


@given(st.lists(st.text("0123456789", min_size=1, max_size=18), min_size=1, max_size=50))
def test_digit_tokens_convert_to_their_integers(cells):
    """Each token's digits times powers of ten, summed per token, is int(token): leading
    zeros, 18-digit tokens and one-digit ones alike."""
    got = _plain_ints(cells)
    assert got.dtype == np.int64 and got.tolist() == [int(c) for c in cells]


def test_tokens_that_are_not_plain_digits_are_left():
    for cells in (["1", ""], ["12", "1x"], ["1" * 19], ["٣"], ["+1"], [" 1"]):
        assert _plain_ints(cells) is None, cells
