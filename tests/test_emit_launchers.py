"""Launcher placement formats: round trips through their readers, examples, and bad files."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankmap.allocation import Allocation, parse_allocation
from rankmap.cli import main
from rankmap.errors import RankmapError
from rankmap.io import bgmap, bgq, cray, hostfile, mpich, openmpi, slurm
from rankmap.io.emit import EMITTERS, get_emitter
from rankmap.io.hostnames import apply_name_template
from rankmap.machines import parse_machine
from rankmap.mappers import build_mapping, validate_mapping
from rankmap.patterns import parse_pattern

HOST_READERS = {"slurm": slurm.read_slurm_hostfile, "mpich": mpich.read_machinefile,
                "hostfile": hostfile.read_hostfile}


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@st.composite
def placements(draw, dims=(4, 3), exact_cray=False):
    """A machine, a scattered allocation with names, and a random valid mapping."""
    cpn = draw(st.integers(1, 4))
    machine = parse_machine(f"torus:{'x'.join(map(str, dims))}:cores={cpn}")
    n_nodes = draw(st.integers(1, machine.n_nodes))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    nodes = rng.permutation(machine.n_nodes)[:n_nodes]
    alloc = Allocation(nodes.astype(np.int64), cpn, names=[f"h{int(n)}x" for n in nodes])
    if exact_cray:
        m = draw(st.integers(1, n_nodes))
        k = draw(st.integers(1, cpn))
        cores = np.array([p * cpn + s for p in range(m) for s in range(k)])
        cores = rng.permutation(cores)
    else:
        n = draw(st.integers(1, alloc.n_cores))
        cores = rng.permutation(alloc.n_cores)[:n]
    return machine, alloc, validate_mapping("test", cores, len(cores), alloc)


def _canonical_slots(mapping, alloc):
    """Slots that host-only formats give back: ranks of a node in rank order take 0, 1, ..."""
    pos = mapping.core_of_rank // alloc.cores_per_node
    out = np.empty_like(pos)
    for p in np.unique(pos):
        ranks = np.nonzero(pos == p)[0]
        out[ranks] = np.arange(len(ranks))
    return out


@given(placements())
def test_host_formats_round_trip_nodes(tmp_path_factory, case):
    machine, alloc, mapping = case
    tmp = tmp_path_factory.mktemp("rt")
    for fmt, reader in HOST_READERS.items():
        path = _write(tmp, fmt, get_emitter(fmt).write(mapping, machine, alloc))
        back = reader(path, machine, alloc, len(mapping.core_of_rank))
        assert np.array_equal(back.nodes(alloc), mapping.nodes(alloc)), fmt
        assert np.array_equal(back.slots(alloc), _canonical_slots(mapping, alloc)), fmt


@given(placements())
def test_rankfile_round_trip_is_exact(tmp_path_factory, case):
    machine, alloc, mapping = case
    path = _write(tmp_path_factory.mktemp("rf"), "rankfile",
                  openmpi.format_rankfile(mapping, machine, alloc))
    back = openmpi.read_rankfile(path, machine, alloc, len(mapping.core_of_rank))
    assert np.array_equal(back.core_of_rank, mapping.core_of_rank)


@given(placements(exact_cray=True))
def test_cray_rank_order_round_trip(tmp_path_factory, case):
    machine, alloc, mapping = case
    text = cray.format_rank_order(mapping, machine, alloc)
    path = _write(tmp_path_factory.mktemp("cr"), "MPICH_RANK_ORDER", text)
    back = cray.read_rank_order(path, machine, alloc, len(mapping.core_of_rank))
    assert np.array_equal(back.core_of_rank, mapping.core_of_rank)


@given(placements(dims=(2, 2, 1, 2, 2)))
def test_bgq_round_trip(tmp_path_factory, case):
    machine, alloc, mapping = case
    text = bgq.format_bgq_mapfile(mapping, machine, alloc)
    assert len(text.splitlines()[1].split()) == 6  # a b c d e t
    path = _write(tmp_path_factory.mktemp("bq"), "map", text)
    back = bgq.read_bgq_mapfile(path, machine, alloc, len(mapping.core_of_rank))
    assert np.array_equal(back.core_of_rank, mapping.core_of_rank)


def test_every_format_documented_with_an_example():
    assert {"bgp", "bgq", "cray", "slurm", "openmpi", "mpich", "hostfile"} <= set(EMITTERS)
    for e in EMITTERS.values():
        assert "e.g." in e.description and e.usage, e.name


def _txy():
    machine = parse_machine("torus:4x4:cores=4")
    alloc = parse_allocation(None, machine)
    mapping = build_mapping("TXY", parse_pattern("stencil:8x8"), machine, alloc)
    return machine, alloc, mapping


def test_known_texts():
    machine, alloc, mapping = _txy()
    lines = mpich.format_machinefile(mapping, machine, alloc).splitlines()
    assert lines[:2] == ["node0-0:4", "node1-0:4"] and len(lines) == 16
    rf = openmpi.format_rankfile(mapping, machine, alloc).splitlines()
    assert rf[5] == "rank 5=node1-0 slot=1"
    cr = cray.format_rank_order(mapping, machine, alloc).splitlines()
    assert "ranks per node: 4" in cr[0] and cr[1] == "# rankmap nodes: 0-15"
    assert cr[2] == "0-3" and cr[3] == "4-7"
    # a scattered order: XYT puts consecutive ranks on different nodes
    xyt = build_mapping("XYT", parse_pattern("stencil:8x8"), machine, alloc)
    assert cray.format_rank_order(xyt, machine, alloc).splitlines()[2] == "0,16,32,48"
    assert slurm.format_slurm_hostfile(xyt, machine, alloc).splitlines()[:2] == ["node0-0",
                                                                                 "node1-0"]


def test_name_template():
    machine, alloc, mapping = _txy()
    named = apply_name_template(alloc, machine, "nid{id:05d}")
    assert hostfile.format_hostfile(mapping, machine, named).splitlines()[4] == "nid00001"
    named = apply_name_template(alloc, machine, "c{x}-{y}")
    assert named.names[5] == "c1-1"
    with pytest.raises(RankmapError, match="unknown field 'q'"):
        apply_name_template(alloc, machine, "n{q}")
    with pytest.raises(RankmapError, match="same name"):
        apply_name_template(alloc, machine, "n{x}")
    with pytest.raises(RankmapError, match="needs a field"):
        apply_name_template(alloc, machine, "node")


@pytest.mark.parametrize("text,message", [
    ("rank 0=node0-0 slot=0\nrank 2=node0-0 slot=1\n", "does not place rank 1"),
    ("rank 0=node0-0 slot=0\nrank 1=nowhere slot=1\n", "host 'nowhere' is not in the allocation"),
    ("rank 0=node0-0 slot=0\nrank 1=node0-0 slot=4\n", "slot 4 is not in 0-3"),
    ("rank 0=node0-0 slot=0\nrank 0=node0-0 slot=1\n", "both place rank 0"),
    ("rank 0=node0-0 slot=0\nrank 1=node0-0 slot=0\n", "same core"),
    ("rank 0 node0-0\n", "expected 'rank N=host slot=S'"),
])
def test_bad_rankfiles(tmp_path, text, message):
    machine, alloc, _ = _txy()
    path = _write(tmp_path, "rf", text)
    with pytest.raises(RankmapError, match=message):
        openmpi.read_rankfile(path, machine, alloc)


def test_rankfile_gives_a_rank_of_t_threads_its_t_cores(tmp_path):
    """Without a node structure a rank of T threads is bound to cores slot*T .. slot*T+T-1
    (``slot=A-B``), read back to the same placement; a range that is not a rank's cores is
    refused."""
    machine = parse_machine("torus:4x4:cores=4")
    alloc = parse_allocation(None, machine).with_threads(2)
    mapping = build_mapping("XYT", parse_pattern("stencil:4x8"), machine, alloc)
    lines = openmpi.format_rankfile(mapping, machine, alloc).splitlines()
    assert lines[0] == "rank 0=node0-0 slot=0-1" and lines[16] == "rank 16=node0-0 slot=2-3"
    path = _write(tmp_path, "rf", "\n".join(lines) + "\n")
    back = openmpi.read_rankfile(path, machine, alloc, 32)
    assert np.array_equal(back.core_of_rank, mapping.core_of_rank)
    # one core names the slot it starts
    one = _write(tmp_path, "one", "rank 0=node0-0 slot=2\nrank 1=node0-0 slot=0\n")
    assert openmpi.read_rankfile(one, machine, alloc).core_of_rank.tolist() == [1, 0]
    for bad in ("slot=1-2", "slot=0-2", "slot=1", "slot=2-1"):
        path = _write(tmp_path, "bad", f"rank 0=node0-0 {bad}\n")
        with pytest.raises(RankmapError, match=f"line 1: {bad} is not a rank's cores "
                                               r"\(2 threads per rank"):
            openmpi.read_rankfile(path, machine, alloc)
    plain = _write(tmp_path, "plain", "rank 0=node0-0 slot=0-1\n")
    with pytest.raises(RankmapError, match=r"slot=0-1 is not a rank's cores \(1 thread per"):
        openmpi.read_rankfile(plain, machine, parse_allocation(None, machine))


def test_bad_host_files(tmp_path):
    machine, alloc, _ = _txy()
    five = _write(tmp_path, "h", "node0-0\n" * 5)
    with pytest.raises(RankmapError, match="5 ranks on host 'node0-0', which has 4 cores"):
        hostfile.read_hostfile(five, machine, alloc)
    with pytest.raises(RankmapError, match="line 2: host 'nid7' is not in the allocation"):
        slurm.read_slurm_hostfile(_write(tmp_path, "s", "node0-0\nnid7\n"), machine, alloc)
    with pytest.raises(RankmapError, match="bad rank count 'x'"):
        mpich.read_machinefile(_write(tmp_path, "m", "node0-0:x\n"), machine, alloc)
    with pytest.raises(RankmapError, match="places 2 ranks, the pattern has 3"):
        mpich.read_machinefile(_write(tmp_path, "m2", "node0-0:2\n"), machine, alloc, 3)
    with pytest.raises(RankmapError, match="line 1: rank 1 is listed again"):
        cray.read_rank_order(_write(tmp_path, "c", "0,1,1\n"), machine, alloc)
    with pytest.raises(RankmapError, match="not found"):
        hostfile.read_hostfile(str(tmp_path / "missing"), machine, alloc)


def test_cray_refuses_uneven_or_gapped_placements():
    machine = parse_machine("torus:4:cores=2")
    alloc = parse_allocation(None, machine)
    # the last node may hold fewer (aprun -n 3 -N 2), not another one
    short_last = validate_mapping("s", np.array([0, 1, 2]), 3, alloc)
    assert cray.format_rank_order(short_last, machine, alloc).splitlines()[2:] == ["0,1", "2"]
    uneven = validate_mapping("u", np.array([0, 2, 3]), 3, alloc)
    with pytest.raises(RankmapError, match="same number of ranks on every node but the last"):
        cray.format_rank_order(uneven, machine, alloc)
    gap = validate_mapping("g", np.array([0, 4]), 2, alloc)
    with pytest.raises(RankmapError, match="cannot skip allocated node 1"):
        cray.format_rank_order(gap, machine, alloc)


def test_bgq_needs_five_dimensions():
    machine, alloc, mapping = _txy()
    with pytest.raises(RankmapError, match="needs a 5-D torus"):
        bgq.format_bgq_mapfile(mapping, machine, alloc)


def test_map_cli_slurm_prints_srun_line(tmp_path, capsys):
    out = tmp_path / "hosts"
    rc = main(["map", "--machine", "torus:4x4:cores=4", "--pattern", "stencil:8x8",
               "--mapping", "TXY", "--emit", "slurm", "-o", str(out), "--names", "nid{id:05d}"])
    assert rc == 0
    printed = capsys.readouterr().out
    assert f"SLURM_HOSTFILE={out} srun --distribution=arbitrary -n 64" in printed
    assert out.read_text().splitlines()[:5] == ["nid00000"] * 4 + ["nid00001"]


def test_map_cli_errors(tmp_path, capsys):
    rc = main(["map", "--machine", "torus:4x4", "--pattern", "stencil:4x4", "--mapping", "TXY",
               "--emit", "lsf", "-o", str(tmp_path / "x")])
    assert rc == 2 and "unknown --emit format 'lsf'" in capsys.readouterr().err
    rc = main(["map", "--machine", "torus:4x4", "--pattern", "stencil:4x4", "--mapping", "TXY",
               "--emit", "hostfile", "-o", str(tmp_path / "y"), "--names", "n{bad}"])
    assert rc == 2 and "unknown field 'bad'" in capsys.readouterr().err


@pytest.mark.parametrize("mapping", ["XYT", "TXY"])
@pytest.mark.parametrize("fmt", ["bgp", "cray", "slurm", "openmpi", "mpich", "hostfile"])
def test_evaluate_reads_back_every_launcher_format(tmp_path, capsys, fmt, mapping):
    """evaluate --mapfile takes any file map --emit writes (format told by its first line)
    and gives the metrics of the placement written (TXY: a Cray file of rank ranges)."""
    import json
    inputs = ["-m", "torus:4x4:cores=4", "-p", "stencil:8x8"]
    if fmt == "bgp":            # Blue Gene/L-P mapfiles: x y z t, a 3-D machine
        inputs[1], mapping = "torus:4x2x2:cores=4", mapping.replace("Y", "YZ")
    out = str(tmp_path / f"{fmt}.out")
    assert main(["map", *inputs, "--mapping", mapping, "--emit", fmt, "-o", out]) == 0
    capsys.readouterr()
    metrics = []
    for how in (["--mapfile", out], ["--mapfile", out, "--mapfile-format", fmt],
                ["--mapping", mapping]):
        assert main(["evaluate", *inputs, *how]) == 0
        metrics.append(json.loads(capsys.readouterr().out)["candidates"][0]["metrics"])
    assert metrics[0] == metrics[1] == metrics[2]


def test_placement_file_formats_are_told_by_their_first_line(tmp_path):
    from rankmap.io.read_placement import detect_format
    cases = {"# a comment\nrank 0=n1 slot=0\n": "openmpi", "0 0 0 1\n": "bgp",
             "0,1,16,17\n": "cray", "0-3,8\n": "cray", "7\n3,4\n": "cray",
             "# rankmap x: ranks per node: 1 (MPICH_RANK_REORDER_METHOD=3)\n7\n3\n": "cray",
             "nid00012:4\n": "mpich",
             "nid00012\n": "hostfile"}
    for i, (text, fmt) in enumerate(cases.items()):
        assert detect_format(_write(tmp_path, f"f{i}", text)) == fmt
    bad = _write(tmp_path, "bad", "a b = c\n")
    with pytest.raises(RankmapError, match="line 1: 'a b = c' is not a line of a placement "
                                           "file rankmap knows; name its format"):
        detect_format(bad)


def test_a_file_of_one_number_a_line_is_not_guessed(tmp_path, capsys):
    """A Slurm host file of hosts named by numbers was read as a Cray rank order, the
    inverse permutation: other metrics, exit 0."""
    from rankmap.io.read_placement import detect_format
    with pytest.raises(RankmapError, match="every line is one number.*--mapfile-format cray "
                                           "or hostfile"):
        detect_format(_write(tmp_path, "ones", "5\n0\n1\n"))
    out = str(tmp_path / "n.sl")
    inputs = ["-m", "torus:4x4x4:cores=1", "--nodes", "0-7", "-p", "stencil:8x1:periodic"]
    assert main(["map", *inputs, "--mapping", "random", "--seed", "1", "--names", "{id}",
                 "--emit", "slurm", "-o", out]) == 0
    assert main(["evaluate", *inputs, "--mapfile", out, "--names", "{id}"]) == 2
    assert "every line is one number" in capsys.readouterr().err
    assert main(["evaluate", *inputs, "--mapfile", out, "--names", "{id}",
                 "--mapfile-format", "slurm"]) == 0


def test_mapfile_format_needs_a_mapfile(capsys):
    assert main(["evaluate", "-m", "torus:4x4", "-p", "stencil:4x4", "--mapping", "XY" + "T",
                 "--mapfile-format", "bgp"]) == 2
    assert "--mapfile-format bgp: applies to --mapfile only" in capsys.readouterr().err


def test_the_mpich_command_printed_is_mpich_s(tmp_path, capsys):
    """Open MPI's mpiexec refuses -f: the printed command names MPICH's Hydra launcher."""
    out = tmp_path / "m.mpich"
    assert main(["map", "-m", "torus:4x4:cores=4", "-p", "stencil:4x4", "--mapping", "XYT",
                 "--emit", "mpich", "-o", str(out)]) == 0
    assert f"mpiexec.hydra -f {out} -n 16 ./app" in capsys.readouterr().out


def test_a_rank_out_of_range_is_named_with_its_line(tmp_path, capsys):
    """A Cray order with rank 16 of 16 said 'lists 17 ranks'; a rankfile's 'rank 16=' said
    'does not place rank 1'."""
    spec = ["-m", "torus:2x2x2:cores=2", "-p", "stencil:4x4"]
    for fmt, name, change in (("cray", "c", lambda t: t.replace("\n2,3\n", "\n2,3,16\n")),
                              ("openmpi", "o", lambda t: t.replace("rank 1=", "rank 16="))):
        path = tmp_path / name
        assert main(["map", *spec, "--mapping", "inorder", "--emit", fmt, "-o", str(path)]) == 0
        path.write_text(change(path.read_text()))
        capsys.readouterr()
        assert main(["evaluate", *spec, "--mapfile", str(path), "--mapfile-format", fmt]) == 2
        assert "rank 16 is outside 0-15 (16 ranks)" in capsys.readouterr().err


def test_a_mapfile_takes_ascii_digits_only(tmp_path):
    """'0 0 0 ١' (an Arabic-Indic one) was read as core 1 with exit 0, though '+1' is refused
    and no launcher would read it: evaluated, a placement that cannot run."""
    from rankmap.allocation import whole_machine
    from rankmap.errors import RankmapError
    from rankmap.io.bgmap import read_mapfile
    from rankmap.machines import parse_machine
    m = parse_machine("torus:2x1x1:cores=2")
    path = tmp_path / "m.map"
    path.write_text("0 0 0 0\n1 0 0 0\n0 0 0 1\n1 0 0 1\n")
    assert read_mapfile(str(path), m, whole_machine(m), 4).core_of_rank.tolist() == [0, 2, 1, 3]
    path.write_text("0 0 0 0\n1 0 0 0\n0 0 0 \u0661\n1 0 0 1\n")
    with pytest.raises(RankmapError, match="line 3: not integers"):
        read_mapfile(str(path), m, whole_machine(m), 4)


@pytest.mark.parametrize("machine, pattern, fmt, line", [
    ("bgp:512", "stencil:32x64", "bgp", "mpirun -mode VN -mapfile {f} -np 2048 ./app"),
    ("torus:4x4x4:cores=2", "stencil:16x8", "bgp", "mpirun -mode DUAL -mapfile {f} -np 128"),
    ("bgl:512", "stencil:32x32", "bgp", "mpirun -mode VN -mapfile {f} -np 1024 ./app"),
    ("torus:4x4x4", "stencil:16x4", "bgp", "mpirun -mapfile {f} -np 64 ./app"),
    ("torus:2x2x2x2x2:cores=16", "stencil:16x32", "bgq",
     "runjob --mapping {f} --np 512 --ranks-per-node 16 : ./app"),
    ("torus:2x2x2x2x2:cores=3", "stencil:8x12", "bgq",
     "runjob --mapping {f} --np 96 --ranks-per-node 4 : ./app"),
])
def test_blue_gene_usage_starts_every_rank_the_file_places(tmp_path, capsys, machine, pattern,
                                                           fmt, line):
    """Blue Gene starts one rank a node unless told: the printed command must say how many
    (mpirun -mode, runjob --ranks-per-node), or the file's t > 0 lines are never used."""
    f = str(tmp_path / "map")
    assert main(["map", "-m", machine, "-p", pattern, "--mapping", "inorder", "--emit", fmt,
                 "-o", f]) == 0
    out = capsys.readouterr()
    assert line.format(f=f) in out.out + out.err


@pytest.mark.parametrize("fmt", ["slurm", "mpich", "hostfile"])
def test_a_host_only_file_says_when_it_loses_the_cores(tmp_path, capsys, fmt):
    """On a node with sockets, a host-only file silently lost the in-node placement: read
    back, rcb's inter-domain bytes differed. The note says so; inorder loses nothing."""
    machine = "torus:4x4x2:node=pack:2,numa:2,core:8"
    args = ["map", "-m", machine, "-p", "stencil:32x32:box", "--emit", fmt]
    assert main(args + ["--mapping", "rcb", "-o", str(tmp_path / "a")]) == 0
    assert "gives each rank its node, not its core" in capsys.readouterr().err
    assert main(args + ["--mapping", "inorder", "-o", str(tmp_path / "b")]) == 0
    assert "not its core" not in capsys.readouterr().err
