"""The Python API refuses bad values where they enter, with one RankmapError naming them,
instead of crashing deep in numpy or numba, truncating silently or computing nonsense; and
what a machine, an allocation or a placement holds cannot be changed behind its back."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rankmap.allocation import Allocation, whole_machine
from rankmap.errors import RankmapError
from rankmap.evaluation import Evaluator
from rankmap.machines import Dragonfly, FatTree, Torus, parse_machine
from rankmap.mappers import Placement, build_mapping, validate_mapping
from rankmap.patterns import Pattern, Phase, parse_pattern
from rankmap.routing import router_for
from rankmap.timing import TimeOptions
from rankmap.validate import id_array


@pytest.mark.parametrize("make, needle", [
    (lambda: Allocation(np.array([0, 1, 1]), 1), "node 1 is listed twice"),
    (lambda: Allocation(np.array([0, -3]), 1), "-3 is negative"),
    (lambda: Allocation(np.array([0.0, 1.5]), 1), "1.5 is not a whole number"),
    (lambda: Allocation(np.array([0, 1]), 0), "cores per node"),
    (lambda: Allocation(np.array([0, 1]), 2.5), "cores per node"),
    (lambda: Placement("x", np.array([3, 3])), "puts ranks 0 and 1 on the same core"),
    (lambda: Placement("x", np.zeros((2, 2), int)), "shape"),
    (lambda: Phase("p", [0.9, 1.9], [1, 0], [1, 1]), "0.9 is not a whole number"),
    (lambda: Phase("p", [np.nan], [1], [1]), "not a whole number"),
    (lambda: Phase("p", [0, 1], [1], [1, 1]), "differ in length"),
    (lambda: Pattern("p", "x", 2.5, []), "not an integer"),
    (lambda: Pattern("p", "x", 4, [Phase("h", [0], [1], [1])], grid=(3, 3)),
     "grid \\(3, 3\\) has 9 ranks"),
    (lambda: TimeOptions(overhead_s=math.inf), "must be a finite number"),
    (lambda: TimeOptions(hop_latency_s=math.inf), "must be a finite number"),
    (lambda: TimeOptions(mem_bw="10GB/s"), "mem_bw"),
    (lambda: TimeOptions(enabled="no"), "True or False"),
    (lambda: TimeOptions(overhead_s="1e-6"), "finite number"),
    (lambda: TimeOptions(tolerance="0.5"), "finite number"),
    (lambda: TimeOptions(nic_bw=10**400), "a bandwidth of 1 to"),
    (lambda: TimeOptions(mem_bw=1e-320), "a bandwidth of 1 to"),   # made times NaN
    (lambda: TimeOptions(hop_latency_s=1e308), "0 to 3600 s"),     # made times inf
    (lambda: Allocation(np.array([5, 10**12, 5]), 4), "node 5 is listed twice"),
    (lambda: Placement("p", [0, 10**11, 10**11]), "ranks 1 and 2 on the same core"),
    (lambda: Torus((4.5, 4)), "not an integer"),
    (lambda: Torus((8,), bandwidth=float("nan")), "not a finite number"),
    (lambda: Torus((8,), bandwidth=0), "must be at least 1"),
    (lambda: Torus((8,), bandwidth=1e-320), "must be at least 1"),   # made times NaN
    (lambda: Torus((8,), hop_latency_s=-1.0), "at least 0"),
    (lambda: Torus((4, 4), cores_per_node=2.5), "not an integer"),
    (lambda: FatTree(2.5, 2), "not an integer"),
    (lambda: FatTree(4, 2, bandwidth=float("nan")), "not a finite number"),
    (lambda: FatTree(2, 10**9), "hosts"),
    (lambda: Dragonfly(2, 1, 2, 1, 1, bandwidth={"foo": 1}), "unknown dragonfly link class"),
    (lambda: Dragonfly(2, 1, 2, 1, 1, bandwidth={"row": -1.0}), "must be at least 1"),
])
def test_bad_values_are_refused_where_they_enter(make, needle):
    with pytest.raises(RankmapError, match=needle):
        make()


@pytest.mark.parametrize("machine", ["fattree:k=4:levels=2", "torus:4x4x4",
                                     "dragonfly:groups=3,rows=2,cols=2,nodes=2,cores=1"])
def test_router_checks_its_flows(machine):
    m = parse_machine(machine)
    r = router_for(m)
    one = np.array([1.0])
    for src, dst, nb, needle in (([0], [-1], one, "-1 is negative"),
                                 ([0], [m.n_nodes], one, "beyond the last"),
                                 ([0, 1], [2], one, "differ in length"),
                                 ([0], [2], np.array([-4.0]), "negative or not finite"),
                                 ([0.5], [2], one, "not a whole number")):
        with pytest.raises(RankmapError, match=needle):
            r.loads(np.array(src), np.array(dst), nb)
    ok = r.loads(np.array([0]), np.array([m.n_nodes - 1]), one)   # and a good flow routes
    assert ok.bytes.sum() > 0


def test_the_evaluator_checks_allocation_and_placement():
    m = parse_machine("fattree:k=4:levels=2")        # negative ids here crashed the process
    p = parse_pattern("stencil:4")
    with pytest.raises(RankmapError, match="node 16 is not a node of"):
        Evaluator(m, Allocation(np.array([0, 1, 2, 16]), 1), p)
    torus = parse_machine("torus:4x4x4:cores=2")
    a = whole_machine(torus)
    ev = Evaluator(torus, a, parse_pattern("stencil:8x4x4"))
    with pytest.raises(RankmapError, match="places 3 ranks, the pattern has 128"):
        ev.evaluate(Placement("short", np.arange(3)))
    with pytest.raises(RankmapError, match="core 200, outside the allocation's 128 cores"):
        ev.evaluate(Placement("far", np.r_[np.arange(127), 200]))
    with pytest.raises(RankmapError, match="shape"):
        validate_mapping("two-d", np.zeros((2, 64), int), 128, a)


def test_a_machine_allocation_or_placement_cannot_be_changed_behind_its_back():
    m = parse_machine("torus:4x4x4:cores=2")
    a = whole_machine(m)
    p = parse_pattern("stencil:8x4x4")
    pl = build_mapping("TXYZ", p, m, a)
    before = Evaluator(m, a, p).evaluate(pl).metrics
    for arr in (m.link_bandwidth, m.link_src, m.link_dst, m.dims, a.nodes, pl.core_of_rank,
                p.phases[0].src):
        with pytest.raises(ValueError):
            arr[0] = 1
    assert Evaluator(m, a, p).evaluate(pl).metrics == before


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(-5, 20), st.floats(-5, 20), st.just(float("nan"))),
                min_size=1, max_size=8))
def test_id_array_takes_exactly_the_whole_numbers_in_range(values):
    whole = all(not (isinstance(v, float) and (math.isnan(v) or v != int(v))) for v in values)
    ok = whole and all(0 <= v < 16 for v in values)
    if ok:
        out = id_array(values, "ids", 16)
        assert out.dtype == np.int64 and out.tolist() == [int(v) for v in values]
        assert not out.flags.writeable
    else:
        with pytest.raises(RankmapError, match="ids"):
            id_array(values, "ids", 16)


@pytest.mark.parametrize("make, needle", [
    (lambda m, a, p: build_mapping("random", p, m, a, seed=-1), "bad seed -1"),
    (lambda m, a, p: build_mapping("random", p, m, a, seed=1.5), "bad seed 1.5"),
    (lambda m, a, p: __import__("rankmap.allocation").allocation.parse_allocation(5, m),
     "bad allocation 5"),
    (lambda m, a, p: parse_pattern("pairs:random", default_ranks=2.5), "default rank count"),
    (lambda m, a, p: parse_pattern(5), "bad pattern 5"),
    (lambda m, a, p: Pattern("p", "graph", 4, []), "has no phases"),
])
def test_entry_points_name_bad_arguments(make, needle):
    m = parse_machine("torus:4x4x4:cores=2")
    with pytest.raises(RankmapError, match=needle):
        make(m, whole_machine(m), parse_pattern("stencil:8x4x4"))


def test_counter_analysis_refuses_what_it_cannot_analyse():
    from rankmap.counters.analysis import MAX_BINS, empirical_pdf, phase_stats
    from rankmap.counters.correlation import correlate
    for bins in (0, MAX_BINS + 1, np.array([3.0, 1.0]), np.array([0.0, np.inf])):
        with pytest.raises(RankmapError, match="bin"):
            empirical_pdf([1.0, 2.0], bins=bins)
    with pytest.raises(RankmapError, match="non-finite"):
        empirical_pdf([1.0, np.nan])
    edges, frac = empirical_pdf([1, 2, 3, 100], bins=np.array([0.0, 2.0, 5.0]))
    assert frac.tolist() == [0.25, 0.5]          # of all links: 100 is in no bin
    with pytest.raises(RankmapError, match="percentile"):
        phase_stats([1.0, 2.0], percentiles=[150])
    with pytest.raises(RankmapError, match="non-finite"):
        phase_stats([1.0, np.nan, 3.0])
    with pytest.raises(RankmapError, match="one time each"):
        correlate([1.0, 2.0, 3.0], [1.0, 2.0])


def test_links_csv_quotes_phase_names_and_keeps_every_digit(tmp_path):
    """A phase called 'a,b' and adaptive routing's fractional loads read back exactly."""
    from rankmap.counters.reader import read_counters
    from rankmap.io.links_csv import format_links_csv
    m = parse_machine("torus:3x3")
    a = whole_machine(m)
    p = Pattern("two", "flows", 9, [Phase("a,b", [0, 4], [4, 8], [1.0 / 3.0, 3.0]),
                                   Phase('say "hi"', [1], [5], [7.0])])
    ev = Evaluator(m, a, p, "adaptive").evaluate(build_mapping("inorder", p, m, a))
    f = tmp_path / "links.csv"
    f.write_text(format_links_csv(m, ev.phases))
    run = read_counters(str(f))
    assert set(run.phases) == {"a,b", 'say "hi"'}
    for ph in ev.phases:
        assert np.array_equal(run.phases[ph.name].values, ph.link_bytes)


def test_the_kind_tables_are_read_only():
    """Like MAPPERS and EMITTERS: no import can register a kind into them behind the CLI."""
    from rankmap.machines import MACHINE_KINDS
    from rankmap.patterns import PATTERN_KINDS
    for table in (MACHINE_KINDS, PATTERN_KINDS):
        with pytest.raises(TypeError):
            table["mine"] = None


def test_numbers_of_numpy_and_huge_ids_are_fine():
    """numpy scalars are numbers; a huge id costs no memory (no count array that long)."""
    t = TimeOptions(nic_bw=np.int64(10**10), overhead_s=np.float32(1e-6), enabled=np.bool_(True))
    assert t.nic_bw == 10**10
    assert Allocation(np.array([0, 10**12]), 4).n_nodes == 2
    assert Placement("p", [0, 10**11]).core_of_rank.tolist() == [0, 10**11]


def test_a_lone_far_flow_is_named_without_building_its_stencil(monkeypatch):
    """A graph of one flow 0 -> 100000 looks like a 1-D stencil of 'radius' 100000: its name
    is found from the offsets' count, never by building every offset of that radius (that
    took 8 GB)."""
    from rankmap.patterns import grid_detect
    real = grid_detect.stencil_offsets

    def small_only(nd, box, r):
        assert r <= 1000, f"built a stencil of radius {r}"
        return real(nd, box, r)

    monkeypatch.setattr(grid_detect, "stencil_offsets", small_only)
    far = grid_detect.StencilMatch((100001,), (False,), np.array([[100000]]))
    assert far.shape_name == "2-offset"                   # +100000 and -100000
    near = grid_detect.StencilMatch((8, 8), (True, True), np.array([[1, 0], [0, 1]]))
    assert near.shape_name == "star"


def test_phase_columns_group_in_one_pass_in_first_appearance_order(tmp_path, monkeypatch):
    from rankmap.counters.reader import read_counters
    f = tmp_path / "g.csv"
    f.write_text("src,dst,bytes,phase\n0,1,8,b\n1,2,9,a\n2,3,10,b\n3,0,11,c\n")
    p = parse_pattern(f"graph:{f}")
    assert [ph.name for ph in p.phases] == ["b", "a", "c"]
    assert p.phases[0].bytes.tolist() == [8.0, 10.0] and p.phases[0].src.tolist() == [0, 2]
    c = tmp_path / "c.csv"
    c.write_text("link,bytes,phase\nx,1,z\nx,2,y\ny,3,z\ny,4,y\n")
    run = read_counters(str(c))
    assert list(run.phases) == ["z", "y"] and run.phases["y"].values.tolist() == [2.0, 4.0]
    monkeypatch.setenv("RANKMAP_MAX_PHASES", "2")
    with pytest.raises(RankmapError, match="has 3 phases; the limit is 2"):
        parse_pattern(f"graph:{f}")
    t = tmp_path / "p.toml"
    t.write_text('[[phase]]\npattern = "stencil:2x2"\n' * 3)
    with pytest.raises(RankmapError, match="phases; the limit is 2"):
        parse_pattern(str(t))



def test_the_api_refuses_what_would_be_silently_wrong(tmp_path):
    """A library user's slips that gave an answer anyway: an allocation with more cores a
    node than the machine's (128 ranks on 16 two-core nodes were evaluated), node ids outside
    the machine (placed by build_mapping), two nodes under one host name (merged in launcher
    files), a message of 1e308 bytes (infinite hop-bytes, JSON that is not JSON), complex
    bytes (the imaginary part dropped), force="no" (a true string: the file was replaced)."""
    import numpy as np
    import pytest
    from rankmap.allocation import Allocation
    from rankmap.errors import RankmapError
    from rankmap.evaluation import Evaluator
    from rankmap.io.atomic import write_atomic
    from rankmap.machines import parse_machine
    from rankmap.mappers import build_mapping
    from rankmap.patterns import Phase, parse_pattern
    m = parse_machine("torus:4x4x4:cores=2")
    p = parse_pattern("stencil:8x16:periodic")
    with pytest.raises(RankmapError, match="8 cores a node, the nodes of 'torus:4x4x4"):
        Evaluator(m, Allocation(np.arange(16), 8), p)
    with pytest.raises(RankmapError, match="allocation node 123 is not a node"):
        build_mapping("XYZT", p, m, Allocation(np.arange(60, 124), 2))
    with pytest.raises(RankmapError, match="host name 'x' is given to two nodes"):
        Allocation([3, 1], 2, names=["x", "x"])
    with pytest.raises(RankmapError, match="more than .* \\(1 PiB\\)"):
        Phase("a", [0], [1], [1e308])
    with pytest.raises(RankmapError, match="complex"):
        Phase("a", [0], [1], [1 + 2j])
    out = tmp_path / "keep"
    out.write_text("keep")
    with pytest.raises(RankmapError, match="force='no' is not True or False"):
        write_atomic(str(out), "new", force="no")
    assert out.read_text() == "keep"
    write_atomic(str(out), "new", force=np.bool_(True))
    assert out.read_text() == "new"


def test_writers_and_the_plateau_refuse_what_is_not_theirs():
    """A placement written against another allocation: an IndexError, or a shorter cray
    file; a NaN among link loads gave a NaN plateau (or 3.0, by where it sorted)."""
    import numpy as np
    import pytest
    from rankmap.allocation import parse_allocation
    from rankmap.errors import RankmapError
    from rankmap.io.emit import EMITTERS
    from rankmap.machines import parse_machine
    from rankmap.mappers import build_mapping
    from rankmap.metrics import plateau_point
    from rankmap.patterns import parse_pattern
    m = parse_machine("torus:4x4x4:cores=2")
    placed = build_mapping("XYZT", parse_pattern("stencil:4x6"), m, parse_allocation("8-23", m))
    for fmt in ("bgp", "cray", "slurm", "openmpi", "mpich", "hostfile"):
        with pytest.raises(RankmapError, match="made for another allocation"):
            EMITTERS[fmt].write(placed, m, parse_allocation("8-11", m))
    for y in (0.5, 1.0):
        with pytest.raises(RankmapError, match="NaN"):
            plateau_point([1.0, np.nan, 3.0], y)
