"""Machine specs, presets, node numbering and link naming."""

import numpy as np
import pytest

from rankmap.errors import RankmapError
from rankmap.machines import parse_machine
from rankmap.machines.presets import BGP_SHAPES


def test_node_ids_first_dimension_fastest():
    m = parse_machine("torus:4x3x2")
    assert m.node_ids(np.array([[1, 2, 1]]))[0] == 1 + 4 * (2 + 3 * 1)
    assert m.coords(np.array([23])).tolist() == [[3, 2, 1]]


@pytest.mark.parametrize("n,shape", sorted(BGP_SHAPES.items()))
def test_bgp_presets_follow_table1(n, shape):
    m = parse_machine(f"bgp:{n}")
    assert tuple(m.dims) == shape and m.cores_per_node == 4 and m.n_nodes == n
    assert m.link_bandwidth[0] == pytest.approx(425e6)


def test_bgl_presets_and_options():
    assert tuple(parse_machine("bgl:1024").dims) == (8, 8, 16)
    assert parse_machine("bgl:512").cores_per_node == 2
    # BG/L torus links: 2 bits a cycle at 700 MHz (seed 004: 167 MiB/s), not BG/P's 425 MB/s
    assert parse_machine("bgl:512").bandwidth == 175e6
    assert parse_machine("bgp:512").bandwidth == 425e6
    m = parse_machine("torus:8x8:cores=2:bw=1GB/s:lat=50ns")
    assert m.cores_per_node == 2 and m.bandwidth == 1e9 and m.hop_latency_s == pytest.approx(5e-8)


def test_links_of_torus_mesh_and_partial_wrap():
    assert parse_machine("torus:4x4").n_links == 16 * 4
    assert parse_machine("mesh:4x4").n_links == 2 * 2 * 4 * 3
    m = parse_machine("mesh:4x4:wrap=y")
    assert list(m.wrap) == [False, True] and m.n_links == 2 * 4 * 3 + 16 * 2
    assert parse_machine("torus:4x1").n_links == 4 * 2  # no links along a size-1 dimension
    assert parse_machine("torus:2x2x2x2x2x2").letters == "ABCDEF"


def test_link_index_names_a_directed_link():
    m = parse_machine("torus:4x4")
    li = m.link_index(5, 1, -1)
    assert m.link_src[li] == 5 and m.link_dim[li] == 1 and m.link_dir[li] == -1
    assert m.link_dst[li] == 1


@pytest.mark.parametrize("spec,needle", [
    ("torus", "give a shape"), ("torus:8xx8", "8xx8"), ("torus:0x8", "positive"),
    ("torus:8x8:cores=0", "cores"), ("torus:8x8:bw=fast", "fast"), ("bgp:1000", "1000"),
    ("hypercube:8", "hypercube"), ("torus:8x8:colour=red", "colour"), ("mesh:8:wrap=q", "q"),
    ("torus:2x2x2x2x2x2x2", "6"), ("", "empty"), ("nofile.toml", "nofile.toml"),
])
def test_bad_machine_specs_name_the_value(spec, needle):
    with pytest.raises(RankmapError, match=needle):
        parse_machine(spec)


def test_machine_from_toml(tmp_path):
    p = tmp_path / "site.toml"
    p.write_text('machine = "torus:4x4:cores=8"\n')
    assert parse_machine(str(p)).cores_per_node == 8
    p.write_text("machine = [1\n")
    with pytest.raises(RankmapError, match="TOML"):
        parse_machine(str(p))


def test_a_wrap_letter_named_twice_is_an_error():
    with pytest.raises(RankmapError, match="bad wrap 'xx' in 'torus:4x4:wrap=xx': X is named "
                                           "twice"):
        parse_machine("torus:4x4:wrap=xx")
    assert parse_machine("torus:4x4:wrap=x").wrap.tolist() == [True, False]


def test_a_torus_built_in_python_takes_only_true_or_false_wrap_flags():
    from rankmap.machines.torus import Torus
    assert Torus((2, 3), wrap=(True, np.bool_(False))).wrap.tolist() == [True, False]
    assert Torus((2, 3), wrap=[1, 0]).wrap.tolist() == [True, False]
    # "no" is a true string: it used to make a wrapped dimension
    for bad in (("no", "no"), (2, 0), (None, True), (0.5, 1)):
        with pytest.raises(RankmapError, match="bad wrap flag"):
            Torus((2, 3), wrap=bad)


@pytest.mark.parametrize("spec, message", [
    ("torus:4x4:bw=10GB/s:node=pack:2,core:",
     r"bad machine 'torus:4x4:bw=10GB/s:node=pack:2,core:': node= 'pack:2,core:': expected "
     "levels"),
    ("torus:2:node=pack:2;core:2",
     r"bad machine 'torus:2:node=pack:2;core:2': node= 'pack:2;core' is neither levels"),
])
def test_a_bad_node_value_is_shown_as_typed(spec, message):
    """The message echoed 'torus:4x4:bw=10GB/s,core:', a spec nobody typed (node=pack:2 cut
    out of it), or called 'pack' the whole node structure."""
    with pytest.raises(RankmapError, match=message):
        parse_machine(spec)
