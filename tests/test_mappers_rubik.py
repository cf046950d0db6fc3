"""The rubik placement algebra: tiles, div, mod, tilt, zigzag, transpose, presets, errors."""

import json

import numpy as np
import pytest

from rankmap.allocation import parse_allocation
from rankmap.cli import main
from rankmap.errors import RankmapError
from rankmap.machines import parse_machine
from rankmap.mappers import build_mapping
from rankmap.patterns import parse_pattern


def _run(spec, machine="torus:4x4x2", pattern="stencil:2x4x4"):
    m = parse_machine(machine)
    a = parse_allocation(None, m)
    p = parse_pattern(pattern)
    return m, a, p, build_mapping(spec, p, m, a).core_of_rank


def test_empty_spec_is_xyzt():
    m, a, p, cores = _run("rubik:")
    assert np.array_equal(cores, build_mapping("XYZT", p, m, a).core_of_rank)


def test_tile_pairs_app_tiles_with_net_tiles():
    # app 2x4x4 in tiles 1x4x4 (16 ranks) -> net 4x4x2 in tiles 4x4x1 (z planes)
    m, a, p, cores = _run("rubik: app tile 1,4,4; net tile 4,4,1")
    z = m.coords(a.nodes[cores])[:, 2]
    first = p.grid_coords()[:, 0]
    assert np.array_equal(z, first)          # app plane i on network plane z = i


def test_div_equals_tile_of_quotient():
    _, _, _, t = _run("rubik: app tile 1,4,4; net tile 4,4,1")
    _, _, _, d = _run("rubik: app div 2,1,1; net div 1,1,2")
    assert np.array_equal(t, d)


def test_mod_interleaves():
    m, a, p, cores = _run("rubik: app mod 2,1,1; net mod 1,1,2")
    z = m.coords(a.nodes[cores])[:, 2]
    assert np.array_equal(z, p.grid_coords()[:, 0] % 2)


def test_tilt_shifts_planes_by_slope():
    m, a, p, base = _run("rubik:")
    _, _, _, tilted = _run("rubik: tilt z x 1")
    cb, ct = m.coords(a.nodes[base]), m.coords(a.nodes[tilted])
    # the rank on box position (x, y, z) now sits at x + z (mod 4)... so x differs by z
    assert np.array_equal((cb[:, 0] + cb[:, 2]) % 4, ct[:, 0]) or \
        np.array_equal((ct[:, 0] + ct[:, 2]) % 4, cb[:, 0])
    assert np.array_equal(cb[:, 1:], ct[:, 1:])


def test_zigzag_shifts_odd_planes_only():
    m, a, p, base = _run("rubik:")
    _, _, _, zz = _run("rubik: zigzag z x 1")
    cb, cz = m.coords(a.nodes[base]), m.coords(a.nodes[zz])
    even = cb[:, 2] == 0
    assert np.array_equal(cb[even], cz[even])
    assert (cb[~even, 0] != cz[~even, 0]).all()


def test_transpose_swaps_axes():
    m, a, p, base = _run("rubik:", machine="torus:4x4x2")
    _, _, _, tr = _run("rubik: transpose x y", machine="torus:4x4x2")
    cb, ct = m.coords(a.nodes[base]), m.coords(a.nodes[tr])
    assert np.array_equal(cb[:, [1, 0, 2]], ct)


def test_issue_example_and_presets():
    m = parse_machine("torus:8x8x32")
    a = parse_allocation(None, m)
    p = parse_pattern("stencil:16x8x16")
    cores = build_mapping("rubik: app tile 1,8,16; net tile 8,8,2; tilt z x 1", p, m, a)
    assert len(set(cores.core_of_rank.tolist())) == 2048
    for name in ["rubik-txyz", "rubik-xyzt", "rubik-tile", "rubik-tile2", "rubik-tilt-zx",
                 "rubik-tilt-xz", "rubik-zig-xz"]:
        assert len(set(build_mapping(name, p, m, a).core_of_rank.tolist())) == 2048


def test_txyz_preset_equals_rank_order_with_cores():
    m = parse_machine("torus:4x4x4:cores=4")
    a = parse_allocation(None, m)
    p = parse_pattern("stencil:8x4x8")
    assert np.array_equal(build_mapping("rubik-txyz", p, m, a).core_of_rank,
                          build_mapping("TXYZ", p, m, a).core_of_rank)


def test_incompatible_shapes_name_the_shapes():
    with pytest.raises(RankmapError, match="16x8x16.*32 leaves.*8x8x32x1.*16 leaves"):
        _run("rubik: app tile 1,8,8; net tile 8,8,2", machine="torus:8x8x32",
             pattern="stencil:16x8x16")
    with pytest.raises(RankmapError, match="3,3,1.*does not divide 4x4x2"):
        _run("rubik: net tile 3,3,1")


def test_cli_bad_statement_exit_2(capsys, tmp_path):
    rc = main(["map", "--machine", "torus:4x4x2", "--pattern", "stencil:2x4x4",
               "--mapping", "rubik: app spin 2", "--emit", "bgp", "-o", str(tmp_path / "m")])
    err = capsys.readouterr().err
    assert rc == 2 and "app spin 2" in err
    rc = main(["map", "--machine", "torus:4x4x2", "--pattern", "stencil:2x4x4",
               "--mapping", "rubik: tilt q x 1", "--emit", "bgp", "-o", str(tmp_path / "m")])
    assert rc == 2 and "bad axis 'q'" in capsys.readouterr().err


def test_a_mapping_list_keeps_a_rubik_spec_s_commas(capsys):
    """--mappings splits at commas, but a rubik: spec's sizes stay whole (compare and
    study, as map and evaluate take the spec)."""
    from rankmap.selection import split_names
    spec = "rubik: app tile 1,8,16; net tile 8,8,2; tilt z x 1"
    assert split_names(f"inorder, {spec},rcb") == ["inorder", spec, "rcb"]
    assert split_names(f"refine:{spec}") == [f"refine:{spec}"]
    # an empty item is refused, as --nodes refuses one (it was dropped)
    with pytest.raises(RankmapError, match="an empty item"):
        split_names("TXYZ,,XYZT")
    from rankmap.mappers.rubik import parse_rubik
    for bad, said in (("rubik: app tile 4,4,,4", "an empty size"),    # was read as 4,4,4
                      ("rubik: app tile ,8", "an empty size"),
                      ("rubik: app tile 4,16; app tile 2,8", "two 'app' statements")):
        with pytest.raises(RankmapError, match=said):
            parse_rubik(split_names(bad)[0])
    code = main(["compare", "-m", "torus:4x4x4", "-p", "stencil:4x4x4", "--mappings",
                 "rubik: transpose x x"])
    assert code == 2 and "the two axes must differ" in capsys.readouterr().err
    assert main(["compare", "-m", "torus:8x8x32", "-p", "stencil:16x8x16", "--mappings",
                 f"inorder,{spec}", "--time-model", "off", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(c["mapping"] for c in doc["candidates"]) == sorted(["inorder", spec])
