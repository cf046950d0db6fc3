"""Units as written: bytes (B) and bits (b), times with their unit."""

import re

import pytest
from hypothesis import given, strategies as st

from rankmap.cli import main
from rankmap.errors import RankmapError
from rankmap.units import parse_bandwidth, parse_size, parse_time


def test_a_lower_case_b_is_bits_in_a_bandwidth():
    assert parse_bandwidth("10Gb/s") == 1.25e9
    assert parse_bandwidth("10GB/s") == 1e10
    assert parse_bandwidth("100gb/s") == 1.25e10
    assert parse_bandwidth("8Kib/s") == 1024.0
    assert parse_bandwidth("1GiB/s") == 1024.0 ** 3
    assert parse_bandwidth(4.25e8) == 4.25e8              # a number (TOML): bytes/s
    for unsure in ("425000000", "10G", "10g", "2k"):       # text must say B or b
        with pytest.raises(RankmapError, match=f"bad bandwidth '{unsure}': say bytes \\(B\\) "
                                               "or bits \\(b\\)"):
            parse_bandwidth(unsure)


def test_a_size_in_bits_is_refused_not_read_as_bytes():
    assert parse_size("8kB") == parse_size("8KB") == 8000
    assert parse_size("64B") == parse_size("64") == 64
    for bits in ("8kb", "1Mb", "64b", "2Gib"):
        with pytest.raises(RankmapError, match=f"bad size '{bits}': a lower-case b is bits"):
            parse_size(bits)


def test_a_time_as_text_needs_its_unit():
    assert parse_time("100ns") == pytest.approx(1e-7)
    assert parse_time("0") == 0.0
    assert parse_time(1e-7) == 1e-7                         # a number (TOML): seconds
    with pytest.raises(RankmapError, match=r"bad time '100': give its unit, e\.g\. 100ns, "
                                           r"100us or 100s"):
        parse_time("100")


@given(st.sampled_from(["", "k", "K", "M", "G", "Ki", "Mi", "Gi"]),
       st.integers(8, 10 ** 5))
def test_bits_are_an_eighth_of_bytes(prefix, n):
    assert parse_bandwidth(f"{n}{prefix}b/s") * 8 == pytest.approx(
        parse_bandwidth(f"{n}{prefix}B/s"), rel=1e-15)


@pytest.mark.parametrize("argv,message", [
    (["-m", "torus:4x4:lat=100"], "bad per-hop latency '100': give its unit"),
    (["-m", "torus:4x4", "--msg-overhead", "5"],
     "bad per-message overhead (--msg-overhead) '5': give its unit"),
    (["-m", "torus:4x4", "-p", "stencil:4x4:bytes=8kb"], "a lower-case b is bits"),
])
def test_cli_refuses_values_without_units(capsys, argv, message):
    if "-p" not in argv:
        argv = argv + ["-p", "stencil:4x4"]
    assert main(["compare", *argv, "--mappings", "TXY"]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_cli_link_bandwidth_in_bits(capsys):
    import json
    assert main(["compare", "-m", "torus:4x4:bw=10Gb/s", "-p", "stencil:4x4", "--mappings",
                 "TXY", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["machine"]["link_bandwidth_Bps"] == 1.25e9


def test_times_keep_their_digits():
    from rankmap.units import format_seconds
    assert format_seconds(0.029608) == "29.608 ms"
    assert format_seconds(6.65e-4) == "0.665 ms"
    assert format_seconds(2.3456e-6) == "2.346 us"          # not 0.002 ms
    assert format_seconds(4e-10) == "0.400 ns"
    assert format_seconds(2.5e-13) == "0.00025 ns"          # not 0.000 ns
    assert format_seconds(-3e-15) == "-3e-06 ns"
    assert format_seconds(0.0) == "0.000 ms"
    assert format_seconds(9.9994) == "9999.400 ms"
    assert format_seconds(12.5) == "12.500 s"                 # not 12500.000 ms
    assert format_seconds(2649176.251396) == "735.882 h"      # a month, not 2649176251 ms


def test_a_bad_bandwidth_is_echoed_as_written():
    for bad in ("-1GB/s", "1e400GB/s"):
        with pytest.raises(RankmapError, match=f"bad bandwidth '{re.escape(bad)}'"):
            parse_bandwidth(bad)


@pytest.mark.parametrize("parse, text", [(parse_time, "1e-400s"), (parse_time, "1e-400"),
                                         (parse_time, "1e-310ms"), (parse_size, "1e-400KB"),
                                         (parse_bandwidth, "1e-400GB/s")])
def test_a_value_too_small_for_a_float_is_refused_not_read_as_zero(parse, text):
    """1e-400s was read as a latency of 0 without a word (bandwidths and --y refused it)."""
    with pytest.raises(RankmapError):
        parse(text)
    assert parse_time("0s") == 0.0 and parse_time("1e-300s") == 1e-300


def test_a_byte_count_against_a_limit_keeps_every_digit():
    """'1.13e+15 bytes, more than 1.13e+15' hid by how much the 1 PiB cap was passed."""
    from rankmap.units import exact_bytes
    assert exact_bytes(2 ** 50 + 1) == "1,125,899,906,842,625"
    assert exact_bytes(2.5) == "2.500" and exact_bytes(1e300) == "1e+300"
    assert "1,125,899,906,842,625 bytes together, more than 1,125,899,906,842,624" in \
        _error(["compare", "-m", "torus:4", "-p", "graph:G", "--mappings", "inorder"],
               "src,dst,bytes\n0,1,1PiB\n0,1,1\n")


def _error(argv, graph_text):
    import os
    import subprocess
    import sys
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "g.csv")
        with open(path, "w") as fh:
            fh.write(graph_text)
        argv = [a.replace("graph:G", f"graph:{path}") for a in argv]
        proc = subprocess.run([sys.executable, "-c", "import sys; from rankmap.cli import main; "
                               "sys.exit(main())", *argv], capture_output=True, text=True)
    assert proc.returncode == 2
    return proc.stderr


def test_format_bytes_keeps_fractions_of_a_byte():
    """An adaptive route's half of a 1-byte message is 0.5 B, not "0 B"."""
    from rankmap.units import format_bytes
    assert format_bytes(512) == "512 B"
    assert format_bytes(0) == "0 B"
    assert format_bytes(0.5) == "0.5 B"
    assert format_bytes(10.666666) == "10.67 B"
    assert format_bytes(1.25e-4) == "0.000125 B"
    assert format_bytes(1023.5) == "1023.5 B"
    assert format_bytes(12 * 2**20) == "12.0 MiB"
