"""launch and map with launcher files: Cray rank orders on the job's first nodes, the SimGrid
platform hint, host names launchers misread, auto's pick named, errors naming their variable,
node counts as placed, and rank orders read back on the nodes they were written for."""

from types import SimpleNamespace

import numpy as np
import pytest

from rankmap.allocation import parse_allocation
from rankmap.cli import main
from rankmap.errors import RankmapError
from rankmap.io import cray
from rankmap.machines import parse_machine
from rankmap.mappers import validate_mapping

JOB_VARS = ("SLURM_JOB_NODELIST", "SLURM_NODELIST", "SLURM_TASKS_PER_NODE",
            "SLURM_JOB_CPUS_PER_NODE", "SLURM_JOB_ID", "SLURM_CPUS_PER_TASK", "PBS_NODEFILE",
            "PBS_JOBID", "OMPI_MCA_orte_default_hostfile", "PRTE_MCA_prte_default_hostfile",
            "RANKMAP_MACHINE", "RANKMAP_MAPPING", "RANKMAP_SEED", "RANKMAP_NODE")


@pytest.fixture
def job(monkeypatch, tmp_path):
    """A Slurm job (set its hosts with ``job(nodelist, tasks)``) in a fresh folder."""
    for var in JOB_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)

    def make(nodelist, tasks):
        monkeypatch.setenv("SLURM_JOB_NODELIST", nodelist)
        monkeypatch.setenv("SLURM_TASKS_PER_NODE", tasks)
        return monkeypatch
    return make


def _order_lines(path):
    return [ln for ln in open(path).read().splitlines() if not ln.startswith("#")]


# 1. a Cray rank order: the job's first nodes, the last may hold fewer

def test_aprun_with_auto_places_on_the_job_s_first_nodes(job, tmp_path, capsys):
    """8 ranks of 4 a node in a job of nid00001, nid00042, nid00043: auto put them on the
    machine's best nodes and failed ('cannot skip allocated node 1: pass --nodes', a --nodes
    the job then refused). Cray MPICH runs them on the job's first 2 nodes: they are placed
    there."""
    job("nid[00001,00042-00043]", "4(x3)")
    assert main(["launch", "-m", "torus:4x4x4:cores=4", "-p", "stencil:4x2", "--dry-run",
                 "--", "aprun", "-n", "8", "./app"]) == 0
    out, err = capsys.readouterr()
    assert out.strip().endswith("aprun -N 4 -n 8 ./app")
    text = (tmp_path / "MPICH_RANK_ORDER").read_text()
    assert "# rankmap nodes: 1,42\n" in text
    machine = parse_machine("torus:4x4x4:cores=4")       # read back on the job's nodes
    got = cray.read_rank_order(str(tmp_path / "MPICH_RANK_ORDER"), machine,
                               parse_allocation("1,42,43", machine), 8)
    assert np.bincount(got.core_of_rank // 4).tolist() == [4, 4]
    assert "placement of 8 ranks on 2 of the job's 3 nodes" in err


def test_a_rank_order_s_last_node_may_hold_fewer(job, tmp_path, capsys):
    """aprun -n 7 -N 4 puts 4 ranks on the first node, 3 on the second: inorder's placement
    of 7 ranks was refused ('node 0 has 4, node 1 has 3')."""
    job("nid[00001-00008]", "4(x8)")
    assert main(["launch", "-m", "torus:4x4x4:cores=4", "-p", "stencil:7x1", "--mapping",
                 "inorder", "--dry-run", "--", "aprun", "-n", "7", "./app"]) == 0
    assert _order_lines(tmp_path / "MPICH_RANK_ORDER") == ["0-3", "4-6"]
    assert "aprun -N 4 -n 7 ./app" in capsys.readouterr().out
    # read back: the same cores
    machine = parse_machine("torus:4x4x4:cores=4")
    alloc = parse_allocation("1-8", machine)
    got = cray.read_rank_order(str(tmp_path / "MPICH_RANK_ORDER"), machine, alloc, 7)
    assert got.core_of_rank.tolist() == [0, 1, 2, 3, 4, 5, 6]


def test_an_aprun_ranks_per_node_is_followed(job, tmp_path, capsys):
    """aprun -N 2 with 4 slots a node: the ranks go 2 a node on the job's first 3 nodes (it
    was refused: 'the placement file puts 4 ranks on a node')."""
    job("node0-[0-3]", "4(x4)")
    assert main(["launch", "-m", "torus:4x4:cores=4", "-p", "stencil:2x3", "--dry-run", "--",
                 "aprun", "-N", "2", "./app"]) == 0
    assert capsys.readouterr().out.strip().endswith("aprun -n 6 -N 2 ./app")
    text = (tmp_path / "MPICH_RANK_ORDER").read_text()
    assert "ranks per node: 2" in text and "# rankmap nodes: 0,4,8\n" in text
    assert [len(ln.split(",")) for ln in _order_lines(tmp_path / "MPICH_RANK_ORDER")] == \
        [2, 2, 2]


def test_map_auto_emit_cray_uses_the_allocation_s_first_nodes(tmp_path, capsys):
    """map --mapping auto --emit cray on 8 random nodes searched them all, then failed
    ('cannot skip allocated node 2') after the whole search."""
    out = tmp_path / "o.cray"
    assert main(["map", "-m", "torus:4x4x4:cores=4", "-p", "stencil:4x2", "--nodes",
                 "random:8:seed=1", "--mapping", "auto", "--emit", "cray", "-o",
                 str(out)]) == 0
    first = parse_allocation("random:8:seed=1", parse_machine("torus:4x4x4:cores=4"))
    want = cray.node_ranges(first.nodes[:2])
    assert f"# rankmap nodes: {want}\n" in out.read_text()
    assert "(2 nodes," in capsys.readouterr().out        # auto's table: the 2 nodes used


def test_auto_writes_the_best_candidate_a_rank_order_can_hold():
    machine = parse_machine("torus:4:cores=2")
    alloc = parse_allocation("0-1", machine)
    hole_first = validate_mapping("a", np.array([0, 2, 3]), 3, alloc)   # 1 then 2 ranks
    short_last = validate_mapping("b", np.array([1, 0, 2]), 3, alloc)   # 2 then 1
    cands = [SimpleNamespace(name=m.name, mapping=m) for m in (hole_first, short_last)]
    pick, problem = cray.rank_order_pick(cands, alloc)
    assert pick.name == "b" and "node 0 has 1, node 1 has 2" in problem
    assert cray.rank_order_pick(cands[1:], alloc) == (cands[1], None)
    # a launcher's ranks a node (aprun -N 1) that no candidate has: none
    assert cray.rank_order_pick(cands, alloc, per_node=1)[0] is None


# 2. the SimGrid platform line only where a platform can be written

@pytest.mark.parametrize("spec", ["mesh:4x4x2", "torus:4x4:wrap=x", "xc:groups=2",
                                  "fattree:k=4:levels=2:taper=2",
                                  "torus:4x4:cores=4:node=pack:2,core:2"])
def test_no_platform_command_for_a_machine_simgrid_cannot_model(tmp_path, capsys, spec):
    assert main(["map", "-m", spec, "-p", "stencil:2x2", "--mapping", "inorder", "--emit",
                 "hostfile", "-o", str(tmp_path / "h")]) == 0
    out = capsys.readouterr().out
    assert "rankmap simgrid platform" not in out
    assert "no SimGrid platform can be written for this machine (" in out
    assert len([ln for ln in out.splitlines() if "SimGrid platform" in ln]) == 1
    # where a platform can be written the line stays, and the command it gives works
    assert main(["map", "-m", "torus:4x4", "-p", "stencil:2x2", "--mapping", "inorder",
                 "--emit", "hostfile", "-o", str(tmp_path / "h"), "--force"]) == 0
    out = capsys.readouterr().out
    assert "rankmap simgrid platform --machine 'torus:4x4' -o platform.xml" in out
    assert main(["simgrid", "platform", "-m", "torus:4x4", "-o",
                 str(tmp_path / "p.xml")]) == 0


# 3. host names a launcher would misread

@pytest.mark.parametrize("fmt", ["openmpi", "slurm", "mpich", "hostfile"])
def test_host_names_launchers_misread_are_refused(tmp_path, capsys, fmt):
    site = tmp_path / "site3.csv"
    site.write_text('name,x,y\n"a,b",0,0\nn=1,1,0\n[x],0,1\n')
    out = tmp_path / "s3"
    base = ["map", "-m", "torus:2x2", "-p", "stencil:3x1", "--mapping", "inorder", "--emit",
            fmt, "-o", str(out)]
    assert main(base + ["--nodes", str(site)]) == 2
    err = capsys.readouterr().err
    assert "host name 'a,b' has ','" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
    for template, name, ch in (("n={id}", "n=0", "="), ("n,{id}", "n,0", ","),
                               ("[{id}]", "[0]", "[")):
        assert main(base + ["--names", template]) == 2
        assert f"host name '{name}' has '{ch}'" in capsys.readouterr().err
    assert main(base + ["--names", "n{id}"]) == 0


def test_open_mpi_reads_user_at_host(tmp_path, capsys):
    base = ["map", "-m", "torus:2x2", "-p", "stencil:3x1", "--mapping", "inorder", "-o",
            str(tmp_path / "x"), "--names", "u@{id}", "--force"]
    assert main(base + ["--emit", "openmpi"]) == 2
    assert "host name 'u@0' has '@'" in capsys.readouterr().err
    assert main(base + ["--emit", "mpich"]) == 0


# 4. launch names auto's pick

def test_launch_names_auto_s_pick(job, capsys):
    job("nid[00001-00008]", "4(x8)")
    assert main(["launch", "-m", "torus:4x4x4:cores=4", "-p", "stencil:8x4", "--dry-run",
                 "--", "srun", "./app"]) == 0
    err = capsys.readouterr().err
    line = next(ln for ln in err.splitlines() if "placement of 32 ranks" in ln)
    assert line.startswith("rankmap launch: auto (") and ") placement" in line
    pick = line.split("auto (", 1)[1].split(") placement", 1)[0]
    assert f"rankmap launch: why: {pick}: " in err


# 5. errors name the variable their value came from

def test_errors_name_the_environment_variable(job, capsys):
    mp = job("nid[00001-00005]", "0(x5)")
    args = ["launch", "-m", "torus:4x4x4:cores=4", "-p", "stencil:4x2", "--dry-run", "--",
            "srun", "./app"]
    assert main(args) == 2
    assert "SLURM_TASKS_PER_NODE '0(x5)'" in capsys.readouterr().err
    mp.setenv("SLURM_TASKS_PER_NODE", "4(x5)")
    mp.setenv("RANKMAP_MAPPING", "bogus")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "RANKMAP_MAPPING" in err and "unknown mapping 'bogus'" in err
    assert main(["launch", "--reorder", "-m", "torus:4x4x4:cores=4", "--dry-run", "--", "srun",
                 "./app"]) == 2
    assert "RANKMAP_MAPPING" in capsys.readouterr().err
    mp.delenv("RANKMAP_MAPPING")
    mp.setenv("RANKMAP_MACHINE", "bogus")
    assert main(args[:1] + args[3:]) == 2
    assert "RANKMAP_MACHINE" in capsys.readouterr().err


# 6. node counts as placed

def test_launch_reports_the_nodes_the_ranks_use(job, capsys):
    job("node0-[0-3]", "4(x4)")
    base = ["launch", "-m", "torus:4x4:cores=4", "--mapping", "inorder", "--dry-run",
            "--force"]
    assert main(base + ["-p", "stencil:2x4", "--", "aprun", "-n", "8", "./app"]) == 0
    out, err = capsys.readouterr()
    assert "aprun -N 4" in out and "placement of 8 ranks on 2 of the job's 4 nodes" in err
    assert main(base + ["-p", "stencil:1x1", "--", "srun", "./app"]) == 0
    err = capsys.readouterr().err
    assert "placement of 1 rank on 1 of the job's 4 nodes" in err and "1 nodes" not in err
    assert main(base + ["-p", "stencil:4x4", "--", "srun", "./app"]) == 0
    assert "placement of 16 ranks on 4 nodes (Slurm)" in capsys.readouterr().err


# 7. a rank order read back on the nodes it was written for

def test_a_rank_order_is_read_on_the_nodes_it_was_written_for(tmp_path, capsys):
    out = str(tmp_path / "rn.cray")
    m = ["-m", "torus:4x4x4:cores=2", "-p", "stencil:8x4"]
    assert main(["map", *m, "--nodes", "random:16:seed=3", "--mapping", "greedy", "--emit",
                 "cray", "-o", out]) == 0
    capsys.readouterr()
    nodes = parse_allocation("random:16:seed=3", parse_machine("torus:4x4x4:cores=2")).nodes
    assert main(["evaluate", *m, "--mapfile", out, "--format", "csv"]) == 2
    err = capsys.readouterr().err
    assert f"give --nodes {cray.node_ranges(nodes)}" in err and len(err.splitlines()) == 1
    assert main(["evaluate", *m, "--mapfile", out, "--format", "csv", "--nodes",
                 "random:16:seed=4"]) == 2
    capsys.readouterr()
    for given in ("random:16:seed=3", cray.node_ranges(nodes)):
        assert main(["evaluate", *m, "--mapfile", out, "--format", "csv", "--nodes",
                     given]) == 0
    with_nodes = capsys.readouterr().out
    # a file without the comment (written by hand, or before): read as before
    bare = tmp_path / "bare.cray"
    bare.write_text("".join(ln + "\n" for ln in open(out).read().splitlines()
                            if "rankmap nodes:" not in ln))
    assert main(["evaluate", *m, "--mapfile", str(bare), "--format", "csv"]) == 0
    assert with_nodes.splitlines()[1].split(",")[3:] != \
        capsys.readouterr().out.splitlines()[1].split(",")[3:]


def test_long_node_lists_are_split_over_comment_lines():
    machine = parse_machine("torus:16x16x16:cores=1")
    alloc = parse_allocation(",".join(str(i) for i in range(0, 4000, 2)), machine)
    mapping = validate_mapping("x", np.arange(2000), 2000, alloc)
    text = cray.format_rank_order(mapping, machine, alloc)
    comments = [ln for ln in text.splitlines() if ln.startswith("# rankmap nodes:")]
    assert len(comments) > 1 and all(len(ln) <= 110 for ln in comments)
    assert cray.file_nodes(text) == alloc.nodes.tolist()
    with pytest.raises(RankmapError, match="bad '# rankmap nodes:' comment"):
        cray.file_nodes("# rankmap nodes: 1,x\n0\n")
