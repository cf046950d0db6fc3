"""Link-load maps: torus panels put each link's load in the right cell (max/sum over the
hidden dimensions), dragonfly group and router matrices, matching CSV rows to machine links,
and ``rankmap links`` end to end."""

import json

import numpy as np
import pytest

from rankmap.cli import main
from rankmap.counters import read_counters
from rankmap.counters.links import align_to_machine
from rankmap.errors import RankmapError
from rankmap.machines import parse_machine
from rankmap.plots.linkmap import dragonfly_arrays, plot_link_map, torus_panels


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def loads_on(machine, entries):
    v = np.zeros(machine.n_links)
    for coords, dim, direction, load in entries:
        node = int(machine.node_ids(np.array(coords)))
        v[machine.link_index(node, dim, direction)] = load
    return v


def panel(panels, dim, direction):
    return next(p for p in panels if p["dim"] == dim and p["dir"] == direction)


def test_torus_3d_projects_onto_the_other_dimensions():
    m = parse_machine("torus:4x3x2")
    v = loads_on(m, [((1, 2, 0), 0, 1, 5.0), ((3, 2, 0), 0, 1, 7.0), ((0, 0, 1), 2, -1, 9.0)])
    pm = torus_panels(m, v, "max")
    assert len(pm) == 6
    xp = panel(pm, 0, 1)
    assert xp["axes"] == [1, 2] and xp["reduced"] == [0]
    assert xp["grid"].shape == (2, 3)                  # rows = Z, columns = Y
    assert xp["grid"][0, 2] == 7 and xp["grid"].sum() == 7
    assert xp["hot_coords"] == [3, 2, 0] and xp["hot_load"] == 7
    xs = panel(torus_panels(m, v, "sum"), 0, 1)
    assert xs["grid"][0, 2] == 12 and xs["grid"].sum() == 12
    zm = panel(pm, 2, -1)
    assert zm["axes"] == [0, 1] and zm["grid"][0, 0] == 9   # Z- links shown over X (cols), Y


def test_torus_2d_shows_every_link_and_mesh_edges_are_empty():
    m = parse_machine("mesh:4x3")
    v = loads_on(m, [((2, 1), 0, 1, 3.0)])
    xp = panel(torus_panels(m, v), 0, 1)
    assert xp["axes"] == [0, 1] and xp["reduced"] == []
    assert xp["grid"].shape == (3, 4) and xp["grid"][1, 2] == 3
    assert np.isnan(xp["grid"][:, 3]).all()            # no X+ link leaves the mesh edge
    assert np.nansum(xp["grid"]) == 3
    with pytest.raises(RankmapError, match="bad reduction"):
        torus_panels(m, v, "mean")


def test_dragonfly_group_and_router_matrices():
    m = parse_machine("dragonfly:groups=3,rows=2,cols=2,nodes=1")
    cols = m.link_columns()
    v = np.zeros(m.n_links)
    glob = np.nonzero(cols["class"] == "global")[0]
    g_of = cols["src_router"] // 4
    h_of = cols["dst_router"] // 4
    k = glob[(g_of[glob] == 2) & (h_of[glob] == 0)][0]
    v[k] = 11.0
    row = np.nonzero(cols["class"] == "row")[0][0]
    v[row] = 4.0
    v[np.nonzero(cols["class"] == "inject")[0][0]] = 100.0   # injection is not a router link
    arr = dragonfly_arrays(m, v, "sum")
    assert arr["groups"][2, 0] == 11 and np.nansum(arr["groups"]) == 11
    assert np.isnan(np.diag(arr["groups"])).all()
    r = arr["routers"]
    assert r.shape == (3, 2, 2) and r.sum() == 15
    u = cols["src_router"][k]
    assert r[u // 4, (u % 4) // 2, u % 2] >= 11


def test_align_rows_to_links_and_errors(tmp_path):
    m = parse_machine("torus:4x4")
    p = tmp_path / "c.csv"
    p.write_text("src,dim,dir,dst,bytes\n5,1,-1,1,42\n0,0,1,1,7\n")
    v = align_to_machine(m, read_counters(str(p)).phases["all"], str(p))
    assert v[m.link_index(5, 1, -1)] == 42 and v[m.link_index(0, 0, 1)] == 7 and v.sum() == 49
    p.write_text("src,dim,dir,dst,bytes\n0,0,1,1,7\n0,0,1,2,7\n")
    with pytest.raises(RankmapError, match=r"c.csv:3: link src=0,dim=0,dir=1,dst=2 is not a link"):
        align_to_machine(m, read_counters(str(p)).phases["all"], str(p))
    p.write_text("src,dim,dir,dst,bytes\n0,0,1,1,7\n0,0,1,1,8\n")
    with pytest.raises(RankmapError, match=r"c.csv:3: link src=0,dim=0,dir=1,dst=1 is listed "
                                           r"twice in phase all \(line 2 too\)"):
        read_counters(str(p))            # counters and links alike: never counted twice
    # rows told apart only by a column the machine does not use: the same link twice
    p.write_text("src,dim,dir,dst,port,bytes\n0,0,1,1,a,7\n0,0,1,1,b,8\n")
    with pytest.raises(RankmapError, match=r"c.csv:3: .* appears twice"):
        align_to_machine(m, read_counters(str(p)).phases["all"], str(p))
    p.write_text("link,bytes\na,1\n")
    with pytest.raises(RankmapError, match="columns src,dim,dir,dst are needed"):
        align_to_machine(m, read_counters(str(p)).phases["all"], str(p))


def test_links_command_torus(tmp_path, capsys):
    links = tmp_path / "l.csv"
    assert run(capsys, "evaluate", "-m", "torus:4x4x2", "-p", "fft2d:4x8", "--mapping",
               "YXZT", "--links-out", links)[0] == 0
    code, out, err = run(capsys, "links", links, "-m", "torus:4x4x2", "--top", "2",
                         "--format", "json", "--plot", tmp_path / "map.png")
    assert code == 0, err
    doc = json.loads(out)
    assert [p["phase"] for p in doc["phases"]] == ["dim0", "dim1"]
    r = read_counters(str(links))
    for ph in doc["phases"]:
        vals = r.phases[ph["phase"]].values
        assert ph["max"] == vals.max() and [h["load"] for h in ph["hottest"]] == \
            sorted(vals, reverse=True)[:2]
    for ph in ("dim0", "dim1"):   # several phases: one map per phase
        assert (tmp_path / f"map-{ph}.png").read_bytes()[:4] == b"\x89PNG"
    code, _o, err = run(capsys, "links", links, "-m", "torus:4x4x2", "--phase", "dim1",
                        "--plot", tmp_path / "one.svg", "--reduce", "sum")
    assert code == 0, err
    svg = (tmp_path / "one.svg").read_text()
    assert "sum over" in svg and "largest sum" in svg
    # a summed map's colour scale reaches the largest sum, not the largest single link
    m = parse_machine("torus:4x4x2")
    v = align_to_machine(m, read_counters(str(links)).phases["dim1"])
    sums = max(np.nanmax(p["grid"]) for p in torus_panels(m, v, "sum"))
    assert sums > v.max()
    code, _o, err = run(capsys, "links", links, "-m", "torus:4x4x4")
    assert code == 2 and "is not a link of torus:4x4x4" in err and "l.csv:" in err


def test_links_command_dragonfly(tmp_path, capsys):
    spec = "dragonfly:groups=4,rows=2,cols=3,nodes=2"
    links = tmp_path / "d.csv"
    assert run(capsys, "evaluate", "-m", spec, "-p", "stencil:6x8", "--mapping", "random",
               "--links-out", links)[0] == 0
    code, out, err = run(capsys, "links", links, "-m", spec, "--plot", tmp_path / "d.svg")
    assert code == 0, err
    svg = (tmp_path / "d.svg").read_text()
    assert "global links between groups" in svg and "routers of every group" in svg
    assert "busiest" in out or "global" in out


def test_link_map_figure_labels():
    m = parse_machine("torus:4x4x4")
    v = np.random.default_rng(1).uniform(0, 2**21, m.n_links)
    fig = plot_link_map(m, v, "bytes", "max")
    axes = [a for a in fig.axes if a.get_label() != "<colorbar>" and a.get_xlabel()]
    assert len(axes) == 6
    for a in axes:
        assert "coordinate" in a.get_xlabel() and "coordinate" in a.get_ylabel()
        # the star's meaning is in the title (a legend covered cells or the axis label)
        assert a.get_legend() is None and "star: busiest, at (" in a.get_title()
        assert " MiB" in a.get_title()
    cbars = [a for a in fig.axes if "MiB" in a.get_ylabel()]
    assert len(cbars) == 1 and "max over the hidden dimension (X / Y / Z)" in cbars[0].get_ylabel()


def test_parallel_dragonfly_links_read_back_and_the_node_link_note(tmp_path, capsys):
    """xc:groups=4 has several global links between the same two routers: the links CSV
    gives each its lane, reads back link for link (a file without lanes too, by row order),
    and the map says when the busiest link is a node's, which it does not draw."""
    import matplotlib.figure
    from rankmap.counters.links import align_to_machine
    from rankmap.counters.reader import read_counters
    m = parse_machine("xc:groups=4")
    cols = m.link_columns()
    keys = list(zip(*[np.asarray(v).tolist() for c, v in cols.items() if c != "lane"]))
    assert len(set(keys)) < len(keys)                     # parallel links share those
    f = tmp_path / "xc.csv"
    assert main(["evaluate", "-m", "xc:groups=4", "--nodes", "random:64:seed=3", "-p",
                 "stencil:16x16x8", "--mapping", "random", "--links-out", str(f)]) == 0
    capsys.readouterr()
    run = read_counters(str(f))
    ph = run.phases["all"]
    loads = align_to_machine(m, ph, str(f))
    assert loads.sum() == ph.values.sum() and loads.max() == ph.values.max()
    text = f.read_text().splitlines()
    header = text[0].split(",")
    lane = header.index("lane")
    old = tmp_path / "old.csv"                            # the same file without lanes
    old.write_text("\n".join(",".join(r.split(",")[:lane] + r.split(",")[lane + 1:])
                             for r in text) + "\n")
    assert np.array_equal(align_to_machine(m, read_counters(str(old)).phases["all"]),
                          loads)                          # no lane: told apart by row order
    seen = []
    real = matplotlib.figure.Figure.savefig

    def capture(fig, *a, **k):
        seen.append(fig._suptitle.get_text())
        return real(fig, *a, **k)

    import unittest.mock
    with unittest.mock.patch.object(matplotlib.figure.Figure, "savefig", capture):
        assert main(["links", str(f), "--machine", "xc:groups=4", "--plot",
                     str(tmp_path / "m.png")]) == 0
    assert "the busiest link is a node's" in seen[0] and "node links are not drawn" in seen[0]


def test_links_from_switches_have_no_node_coordinates(tmp_path, capsys):
    """links on a Slurm topology.conf tree crashed (a switch's id given to coords), and on a
    k-ary tree printed a switch's link with a host's coordinates."""
    from rankmap.cli import main
    (tmp_path / "topo.conf").write_text("SwitchName=s1 Nodes=n[1-2]\nSwitchName=s2 "
                                        "Nodes=n[3-4]\nSwitchName=s0 Switches=s[1-2]\n")
    (tmp_path / "g.csv").write_text("0,2,1000000\n")
    m = f"fattree:topology={tmp_path / 'topo.conf'}"
    links = str(tmp_path / "l.csv")
    assert main(["evaluate", "-m", m, "-p", f"graph:{tmp_path / 'g.csv'}", "--mapping",
                 "inorder", "--links-out", links]) == 0
    capsys.readouterr()
    assert main(["links", links, "-m", m, "--top", "3", "--format", "csv"]) == 0
    rows = [ln.split(",") for ln in capsys.readouterr().out.strip().splitlines()[1:]]
    coords = {(r[1], r[2]): r[5] for r in rows}     # src, dst -> src_coords
    assert coords[("0", "4")] == "0 0" and coords[("5", "2")] == "" and coords[("4", "6")] == ""


def test_links_csv_header_names_the_link_columns_with_no_link_listed(tmp_path, capsys):
    """--top 0 printed the header 'phase,load,unit'; --phase on a one-phase file said only
    'phases: all'."""
    from rankmap.cli import main
    links = tmp_path / "l.csv"
    assert main(["evaluate", "-m", "torus:4x4x4", "-p", "stencil:8x8", "--mapping", "inorder",
                 "--links-out", str(links)]) == 0
    capsys.readouterr()
    assert main(["links", str(links), "-m", "torus:4x4x4", "--top", "0", "--format", "csv"]) == 0
    assert capsys.readouterr().out.strip() == "phase,src,dim,dir,dst,src_coords,load,unit"
    assert main(["links", str(links), "-m", "torus:4x4x4", "--phase", "halo"]) == 2
    assert "the file has no phase column" in capsys.readouterr().err


def test_with_sum_the_star_marks_the_brightest_cell():
    """--reduce sum colours cells by sums; the star marked the busiest single link, on a
    dimmer cell. It marks the largest sum, and the title says so."""
    import numpy as np
    from rankmap.machines import parse_machine
    from rankmap.plots.linkmap import plot_link_map
    m = parse_machine("torus:4x4x4x2")
    loads = np.random.default_rng(5).integers(0, 1000, m.n_links).astype(float)
    fig = plot_link_map(m, loads, reduce="sum")
    for ax in fig.axes:
        stars = [ln for ln in ax.get_lines() if ln.get_marker() == "*"]
        if not stars:
            continue
        grid = ax.get_images()[0].get_array()
        iy, ix = np.unravel_index(int(np.nanargmax(grid)), grid.shape)
        assert (stars[0].get_xdata()[0], stars[0].get_ydata()[0]) == (ix, iy)
        assert "largest sum" in ax.get_title()


def test_reduce_without_a_map_is_refused(tmp_path, capsys):
    """--reduce folds the maps of --plot or --report: without either it changed nothing."""
    from rankmap.cli import main
    links = tmp_path / "l.csv"
    assert main(["evaluate", "-m", "torus:4x4x4", "-p", "stencil:8x8", "--mapping", "inorder",
                 "--links-out", str(links)]) == 0
    capsys.readouterr()
    assert main(["links", str(links), "-m", "torus:4x4x4", "--reduce", "sum"]) == 2
    assert "--reduce sum: applies to the maps of --plot or --report" in capsys.readouterr().err
