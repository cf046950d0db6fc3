"""``rankmap launch``: job environments, launcher commands, dry runs and real exec."""

import os
import stat
import subprocess
import sys

import numpy as np
import pytest

from rankmap.cli import main
from rankmap.errors import RankmapError
from rankmap.io.openmpi import read_rankfile
from rankmap.io.slurm import read_slurm_hostfile
from rankmap.launch import (command_for, expand_slurm_counts, job_allocation, job_hosts,
                            launcher_format, launcher_ranks, program_index)
from rankmap.machines import parse_machine
from rankmap.mappers import build_mapping
from rankmap.patterns import parse_pattern

JOB_VARS = ("SLURM_JOB_NODELIST", "SLURM_NODELIST", "SLURM_TASKS_PER_NODE",
            "SLURM_JOB_CPUS_PER_NODE", "SLURM_JOB_ID", "PBS_NODEFILE", "PBS_JOBID",
            "OMPI_MCA_orte_default_hostfile", "PRTE_MCA_prte_default_hostfile", "RANKMAP_MACHINE",
            "RANKMAP_MAPPING", "RANKMAP_SEED", "RANKMAP_NODE")


@pytest.fixture
def no_job(monkeypatch, tmp_path):
    for var in JOB_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


@pytest.fixture
def slurm_job(no_job):
    no_job.setenv("SLURM_JOB_ID", "4242")
    # torus 4x4 names are node<x>-<y>: node0-[0-3] are x = 0, y = 0..3 = ids 0, 4, 8, 12
    no_job.setenv("SLURM_JOB_NODELIST", "node0-[0-3]")
    no_job.setenv("SLURM_TASKS_PER_NODE", "4(x4)")
    return no_job


def test_slurm_counts_and_hosts(slurm_job):
    assert expand_slurm_counts("4(x3),2", "x") == [4, 4, 4, 2]
    with pytest.raises(RankmapError, match="bad SLURM_TASKS_PER_NODE '4x3'"):
        expand_slurm_counts("4x3", "SLURM_TASKS_PER_NODE")
    job = job_hosts()
    assert job.hosts == ["node0-0", "node0-1", "node0-2", "node0-3"]
    assert job.slots == [4, 4, 4, 4] and job.job_id == "4242"
    alloc = job_allocation(job, parse_machine("torus:4x4:cores=8"))
    assert alloc.nodes.tolist() == [0, 4, 8, 12] and alloc.cores_per_node == 4
    slurm_job.setenv("SLURM_TASKS_PER_NODE", "4(x3)")
    with pytest.raises(RankmapError, match="4 nodes .* but 3 task counts"):
        job_hosts()


def test_pbs_and_hostfile(no_job, tmp_path):
    nodefile = tmp_path / "pbs"
    nodefile.write_text("node0-0\nnode0-0\nnode1-0\nnode1-0\n")
    no_job.setenv("PBS_NODEFILE", str(nodefile))
    job = job_hosts()
    assert job.hosts == ["node0-0", "node1-0"] and job.slots == [2, 2]
    hf = tmp_path / "hf"
    hf.write_text("node2-0 slots=3\nnode3-0 slots=3 # comment\n")
    job = job_hosts(hostfile=str(hf))
    assert job.hosts == ["node2-0", "node3-0"] and job.slots == [3, 3]
    hf.write_text("node2-0 cpus=3\n")
    with pytest.raises(RankmapError, match="unknown field 'cpus=3'"):
        job_hosts(hostfile=str(hf))


def test_outside_a_job(no_job):
    with pytest.raises(RankmapError, match="not inside a Slurm or PBS job"):
        job_hosts()


def test_launcher_parsing():
    assert launcher_ranks(["srun", "-n", "16", "./a"]) == 16
    assert launcher_ranks(["srun", "--ntasks=8", "./a"]) == 8
    assert launcher_ranks(["mpirun", "-np", "4", "./a"]) == 4
    assert launcher_ranks(["mpirun", "-n12", "./a"]) == 12
    assert launcher_ranks(["srun", "./a"]) is None
    with pytest.raises(RankmapError, match="bad process count 'x'"):
        launcher_ranks(["srun", "-n", "x"])
    assert launcher_format(["/usr/bin/srun"]) == "slurm"
    assert launcher_format(["mpiexec.hydra"]) == "mpich"
    assert launcher_format(["mpirun"], "mpich") == "mpich"
    with pytest.raises(RankmapError, match="unknown launcher 'qsub'"):
        launcher_format(["qsub"])
    plan = command_for("openmpi", ["mpirun", "-n", "4", "a"], "rf")
    assert plan.argv == ["mpirun", "--rankfile", "rf", "-n", "4", "a"]
    assert command_for("mpich", ["mpiexec", "a"], "m").argv == ["mpiexec", "-f", "m", "a"]
    assert command_for("hostfile", ["smpirun", "a"], "h").argv[:3] == ["smpirun", "-hostfile", "h"]
    assert command_for("cray", ["aprun", "a"], "M").env == {"MPICH_RANK_REORDER_METHOD": "3"}
    # a missing process count is added, an existing one kept
    assert command_for("hostfile", ["smpirun", "a"], "h", 8).argv == ["smpirun", "-hostfile", "h",
                                                                     "-np", "8", "a"]
    assert command_for("slurm", ["srun", "-n", "8", "a"], "h", 8).argv == [
        "srun", "--distribution=arbitrary", "-n", "8", "a"]
    assert command_for("cray", ["aprun", "a"], "M", 4).argv == ["aprun", "-n", "4", "a"]
    with pytest.raises(RankmapError, match="remove --distribution"):
        command_for("slurm", ["srun", "--distribution=block", "a"], "h")
    # the launcher's own placing options would fight the placement file: refused by name,
    # whether given apart or with '='; the program's own options are its business
    for fmt, argv, word in [("openmpi", ["mpirun", "--map-by", "node", "a"], "--map-by"),
                            ("openmpi", ["mpirun", "--rankfile=r", "a"], "--rankfile=r"),
                            ("openmpi", ["mpiexec", "-npernode", "2", "a"], "-npernode"),
                            ("mpich", ["mpiexec.hydra", "-f", "hosts", "a"], "-f"),
                            ("mpich", ["mpiexec.hydra", "-ppn", "2", "a"], "-ppn"),
                            ("hostfile", ["smpirun", "-hostfile", "h2", "a"], "-hostfile"),
                            ("mpich", ["mpiexec.hydra", "--ppn", "1", "a"], "--ppn"),
                            ("mpich", ["mpiexec.hydra", "--hosts", "x,y", "a"], "--hosts"),
                            ("openmpi", ["mpirun", "-ppr", "2:node", "a"], "-ppr"),
                            ("openmpi", ["mpirun", "--bynode", "a"], "--bynode")]:
        with pytest.raises(RankmapError, match=f"remove {word} from the {argv[0]} command"):
            command_for(fmt, argv, "p")
    assert command_for("openmpi", ["mpirun", "./a", "--map-by", "x"], "rf").argv == [
        "mpirun", "--rankfile", "rf", "./a", "--map-by", "x"]
    # a program not built yet is still the program: its own options are not the launcher's
    assert command_for("mpich", ["mpiexec.hydra", "-verbose", "./notbuilt", "-f", "in.dat"],
                       "m").argv == ["mpiexec.hydra", "-f", "m", "-verbose", "./notbuilt", "-f",
                                     "in.dat"]
    assert command_for("openmpi", ["mpirun", "--display-allocation", "./notbuilt", "--map-by",
                                   "x"], "rf").argv[-3:] == ["./notbuilt", "--map-by", "x"]
    # an option's value that looks like a path is not the program: what follows is checked
    for argv, word in ((["mpiexec.hydra", "-outfile-pattern", "./out.%r", "-ppn", "2", "./a"],
                        "-ppn"),
                       (["mpirun", "--report-pid", "./pid.txt", "--map-by", "node", "./a"],
                        "--map-by"),
                       (["mpirun", "-rf", "mine.txt", "./a"], "-rf")):
        fmt = "mpich" if argv[0] == "mpiexec.hydra" else "openmpi"
        with pytest.raises(RankmapError, match=f"remove {word} "):
            command_for(fmt, argv, "p")


def test_dry_run_in_fake_slurm_job(slurm_job, tmp_path, capsys):
    rc = main(["launch", "--machine", "torus:4x4:cores=4", "--pattern", "stencil:4x4",
               "--mapping", "XYT", "--dry-run", "--", "srun", "-n", "16", "./app"])
    assert rc == 0
    out = capsys.readouterr().out.strip()
    path = tmp_path / "rankmap-4242.slurm"
    assert out == f"SLURM_HOSTFILE={path} srun --distribution=arbitrary -n 16 ./app"
    machine = parse_machine("torus:4x4:cores=4")
    alloc = job_allocation(job_hosts(), machine)
    back = read_slurm_hostfile(str(path), machine, alloc, 16)
    want = build_mapping("XYT", parse_pattern("stencil:4x4"), machine, alloc)
    assert np.array_equal(back.nodes(alloc), want.nodes(alloc))
    # XYT on 4 nodes: consecutive ranks on consecutive nodes
    assert path.read_text().splitlines()[:5] == ["node0-0", "node0-1", "node0-2", "node0-3",
                                                 "node0-0"]


def test_dry_run_openmpi_with_nodes_and_env_machine(slurm_job, tmp_path, capsys):
    slurm_job.setenv("SLURM_JOB_NODELIST", "cn[1-4]")
    slurm_job.setenv("RANKMAP_MACHINE", "torus:4x4:cores=4")
    rc = main(["launch", "-p", "stencil:4x4", "--mapping", "TXY", "--nodes", "0,1,4,5",
               "--dry-run", "-o", "rf", "--", "mpirun", "-n", "16", "./app"])
    assert rc == 0
    assert capsys.readouterr().out.strip() == "mpirun --rankfile rf -n 16 ./app"
    text = (tmp_path / "rf").read_text().splitlines()
    assert text[0] == "rank 0=cn1 slot=0" and text[4] == "rank 4=cn2 slot=0"
    machine = parse_machine("torus:4x4:cores=4")
    job = job_hosts()
    alloc = job_allocation(job, machine, "0,1,4,5")
    assert read_rankfile(str(tmp_path / "rf"), machine, alloc, 16).core_of_rank.tolist() == \
        list(range(16))


def test_threads_bind_each_rank_of_the_job_to_its_cores(slurm_job, tmp_path, capsys):
    """--threads T: the job's 2 slots per node stay its ranks per node, and the rankfile
    gives each rank T cores; more than the node's cores is refused."""
    slurm_job.setenv("SLURM_TASKS_PER_NODE", "2(x4)")
    rc = main(["launch", "-m", "torus:4x4:cores=4", "-p", "stencil:2x4", "--mapping", "TXY",
               "--threads", "2", "--dry-run", "-o", "rf", "--", "mpirun", "-n", "8", "./app"])
    assert rc == 0
    text = (tmp_path / "rf").read_text().splitlines()
    assert text[:3] == ["rank 0=node0-0 slot=0-1", "rank 1=node0-0 slot=2-3",
                        "rank 2=node0-1 slot=0-1"]
    capsys.readouterr()
    rc = main(["launch", "-m", "torus:4x4:cores=4", "-p", "stencil:2x4", "--threads", "4",
               "--dry-run", "-o", "rf2", "--", "mpirun", "-n", "8", "./app"])
    assert rc == 2
    assert "bad --threads 4: 2 ranks per node need 8 cores, the machine's nodes have 4" in \
        capsys.readouterr().err


@pytest.mark.parametrize("argv,message", [
    (["-p", "stencil:8x8", "--", "srun", "./app"], "allocation too small (Slurm): 64 ranks"),
    (["-p", "stencil:4x4", "--", "srun", "-n", "8", "./app"],
     "launcher starts 8 processes, pattern 'stencil:4x4' has 16"),
    (["-p", "stencil:4x4", "--", "qsub", "./app"], "unknown launcher 'qsub'"),
    (["-p", "stencil:4x4"], "no launcher command"),
    (["-p", "stencil:4x4", "--nodes", "0-2", "--", "srun", "./app"],
     "--nodes gives 3 nodes, the job has 4"),
    (["-p", "stencil:4x4", "--format", "cray", "-o", "x", "--", "srun", "./app"],
     "reads the file MPICH_RANK_ORDER"),
])
def test_launch_errors(slurm_job, capsys, argv, message):
    rc = main(["launch", "--machine", "torus:4x4:cores=4", "--mapping", "TXY", "--dry-run",
               *argv])
    assert rc == 2
    assert message in capsys.readouterr().err


def test_unknown_host_and_no_machine(slurm_job, capsys):
    slurm_job.setenv("SLURM_JOB_NODELIST", "cn[1-4]")
    rc = main(["launch", "-m", "torus:4x4:cores=4", "-p", "stencil:4x4", "--dry-run", "--",
               "srun", "./app"])
    assert rc == 2 and "host 'cn1' is not a node of machine" in capsys.readouterr().err
    rc = main(["launch", "-p", "stencil:4x4", "--dry-run", "--", "srun", "./app"])
    assert rc == 2 and "no machine: pass --machine or set $RANKMAP_MACHINE" in \
        capsys.readouterr().err


def test_launch_execs_the_launcher(tmp_path):
    """Without --dry-run the launcher really runs, with the file and option in place."""
    fake = tmp_path / "bin" / "srun"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\necho "ARGS $*"\necho "FILE $SLURM_HOSTFILE"\n'
                    'head -n 1 "$SLURM_HOSTFILE"\n'
                    'echo "BLAS ${OPENBLAS_NUM_THREADS-unset} ${MKL_NUM_THREADS-unset}"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    env = {k: v for k, v in os.environ.items()
           if k not in JOB_VARS and k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    env.update(MKL_NUM_THREADS="3")   # the user's own setting reaches the program
    env.update(PATH=f"{fake.parent}{os.pathsep}{env.get('PATH', '')}", SLURM_JOB_ID="9",
               SLURM_JOB_NODELIST="node[0-1]-0", SLURM_TASKS_PER_NODE="2(x2)")
    proc = subprocess.run([sys.executable, "-c", "import sys; from rankmap.cli import main; "
                           "sys.exit(main())", "launch", "-m",
                           "torus:2x2:cores=2", "-p", "stencil:2x2", "--mapping", "XYT", "--",
                           "srun", "-n", "4", "./app"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "ARGS --distribution=arbitrary -n 4 ./app"
    assert lines[1] == f"FILE {tmp_path / 'rankmap-9.slurm'}"
    assert lines[2] == "node0-0"
    # rankmap ran with one BLAS thread; the program gets the user's environment back
    assert lines[3] == "BLAS unset 3"


def test_cray_node_names_from_slurm(slurm_job, tmp_path, capsys):
    """Cray nid names in the Slurm host list map to their node ids (nid00005 = node 5)."""
    slurm_job.setenv("SLURM_JOB_NODELIST", "nid[00005-00006,00009-00010]")
    job = job_hosts()
    alloc = job_allocation(job, parse_machine("torus:4x4:cores=4"))
    assert alloc.nodes.tolist() == [5, 6, 9, 10] and alloc.names[0] == "nid00005"
    rc = main(["launch", "-m", "torus:4x4:cores=4", "-p", "stencil:4x4", "--mapping", "TXY",
               "--dry-run", "--", "mpiexec.hydra", "-n", "16", "./app"])
    assert rc == 0
    assert capsys.readouterr().out.strip() == "mpiexec.hydra -f rankmap-4242.mpich -n 16 ./app"
    assert (tmp_path / "rankmap-4242.mpich").read_text().splitlines() == [
        "nid00005:4", "nid00006:4", "nid00009:4", "nid00010:4"]


@pytest.mark.parametrize("argv,index,ranks", [
    (["mpirun", "./app", "-n", "3"], 1, None),               # the program's own -n
    (["mpirun", "-n", "8", "./app", "-n", "3"], 3, 8),
    (["mpirun", "--oversubscribe", "-np", "4", "./app"], 4, 4),
    (["mpirun", "--mca", "btl", "self", "-n", "2", "./app", "-np", "9"], 6, 2),
    (["mpirun", "-x", "OMP_NUM_THREADS", "./app"], 3, None),
    (["srun", "--ntasks=6", "-p", "debug", "./app", "--ntasks=9"], 4, 6),
    (["mpiexec.hydra", "-genv", "A", "1", "-n", "4", "./app"], 6, 4),
    (["aprun", "-n", "16", "-N", "4", "-cc", "depth", "./app", "-n", "2"], 7, 16),
    (["mpirun", "-n", "2", "--", "./app", "-n", "5"], 4, 2),
    (["mpirun", "-n", "4"], 3, 4),
])
def test_only_the_launcher_s_own_options_count(argv, index, ranks):
    assert program_index(argv) == index
    assert launcher_ranks(argv) == ranks


def test_launch_leaves_the_program_s_arguments_alone(slurm_job, tmp_path, capsys):
    """'-- mpirun ./app -n 3': the 3 is the program's; launch adds the launcher's -n 16."""
    rc = main(["launch", "-m", "torus:4x4:cores=4", "-p", "stencil:4x4", "--mapping", "TXY",
               "--dry-run", "-o", "rf", "--", "mpirun", "./app", "-n", "3"])
    assert rc == 0
    assert capsys.readouterr().out.strip() == "mpirun --rankfile rf -n 16 ./app -n 3"
    rc = main(["launch", "-m", "torus:4x4:cores=4", "-p", "stencil:4x4", "--mapping", "TXY",
               "--dry-run", "--force", "-o", "h", "--", "srun", "./app", "-m", "model.bin"])
    assert rc == 0
    assert capsys.readouterr().out.strip().endswith("-n 16 ./app -m model.bin")


def test_more_slots_than_cores_is_an_error(slurm_job, capsys):
    """4 tasks per node on nodes of 2 cores: refused, as map refuses the same placement."""
    rc = main(["launch", "-m", "torus:4x4:cores=2", "-p", "stencil:4x4", "--mapping", "TXY",
               "--dry-run", "-o", "rf", "--", "mpirun", "-n", "16", "./app"])
    assert rc == 2
    assert "the job has 4 slots on every node (Slurm), the machine's nodes have 2 cores" in \
        capsys.readouterr().err


def test_launch_spells_the_file_format_emit_and_takes_the_search_s_options(slurm_job, tmp_path,
                                                                           capsys):
    """--emit names the placement file's format as map's does (--format, its first name,
    still works); --routing, --budget and the time model's options reach the search."""
    base = ["launch", "-m", "torus:4x4:cores=4", "-p", "stencil:4x4", "--mapping", "TXY",
            "--dry-run", "--force", "--", "mpirun.mpich", "-n", "16", "./app"]
    head, tail = base[:base.index("--dry-run")], base[base.index("--dry-run"):]
    assert main(head + ["--emit", "mpich", "-o", "a"] + tail) == 0
    assert main(head + ["--format", "mpich", "-o", "b"] + tail) == 0
    assert (tmp_path / "a").read_text() == (tmp_path / "b").read_text()
    capsys.readouterr()
    assert main(head + ["--emit", "mpich", "--format", "slurm", "-o", "c"] + tail) == 2
    assert "disagree" in capsys.readouterr().err
    assert main(head + ["--routing", "adaptive", "--nic-bw", "1GB/s", "--budget", "0",
                        "-o", "d"] + tail) == 0
    assert main(head + ["--routing", "nonsense", "-o", "e"] + tail) == 2
    assert "nonsense" in capsys.readouterr().err


def test_the_search_job_gets_the_search_s_options():
    from types import SimpleNamespace

    from rankmap.allocation import parse_allocation
    from rankmap.cli.launch import search_command
    machine = parse_machine("torus:4x4:cores=4")
    args = SimpleNamespace(search_procs=2, search_launcher=None, pattern="stencil:4x4",
                           mapping="auto", seed=0, jobs=None, in_node=None, routing="adaptive",
                           budget="500", nic_bw="1GB/s", mem_bw=None, socket_bw=None,
                           msg_overhead=None, time_model="off", mem_sharing="node")
    cmd = search_command(args, "torus:4x4:cores=4", ["mpirun", "./app"], "openmpi", "h",
                         parse_allocation("0-3", machine), "out")
    inner = cmd[:cmd.index("--")]
    for flag, value in (("--routing", "adaptive"), ("--budget", "500"), ("--nic-bw", "1GB/s"),
                        ("--time-model", "off"), ("--emit", "openmpi")):
        assert inner[inner.index(flag) + 1] == value
    assert "--mem-sharing" not in inner and "--format" not in inner


def test_uneven_slots_are_said_and_fit_the_smallest(slurm_job, tmp_path, capsys):
    """Slurm's 4,4,3 tasks: the placement uses 3 on every node, and launch says so."""
    slurm_job.setenv("SLURM_JOB_NODELIST", "node0-[0-2]")
    slurm_job.setenv("SLURM_TASKS_PER_NODE", "4(x2),3")
    args = ["launch", "-m", "torus:4x4:cores=4", "-p", "stencil", "--mapping", "inorder",
            "--dry-run", "--"]
    assert main(args + ["srun", "./app"]) == 0
    cap = capsys.readouterr()
    assert "-n 9 ./app" in cap.out
    assert "the job's nodes have 4,4,3 slots; the placement uses 3 on every node" in cap.err
    assert main(args[:-1] + ["--force", "--", "srun", "-n", "11", "./app"]) == 2
    assert "with uneven slots (4,4,3) every node gets 3" in capsys.readouterr().err


def test_nodes_by_name_must_be_the_job_s_hosts(slurm_job, tmp_path, capsys):
    (tmp_path / "site.csv").write_text("name,x,y\n" + "".join(
        f"cn00{i},{i % 4},{i // 4}\n" for i in range(1, 8)))
    slurm_job.setenv("SLURM_JOB_NODELIST", "cn[001-003]")
    slurm_job.setenv("SLURM_TASKS_PER_NODE", "1(x3)")
    args = ["launch", "-m", "torus:4x4", "-p", "stencil", "--mapping", "inorder", "--dry-run"]
    assert main(args + ["--nodes", "site.csv:cn[004-006]", "--", "srun", "./app"]) == 2
    assert "--nodes names 'cn004' where the job has 'cn001'" in capsys.readouterr().err
    assert main(args + ["--nodes", "site.csv:cn[001-003]", "--", "srun", "./app"]) == 0


def test_aprun_gets_the_rank_order_s_packing(no_job, tmp_path, capsys):
    """MPICH_RANK_ORDER assumes the ranks per node it says: aprun gets -N (and -d for
    threads) unless its command gives them."""
    (tmp_path / "pbs").write_text("".join(f"nid0000{n}\n" * 2 for n in range(8, 10)))
    no_job.setenv("PBS_NODEFILE", str(tmp_path / "pbs"))
    no_job.setenv("PBS_JOBID", "5")
    args = ["launch", "-m", "xc:groups=2", "-p", "stencil:2x2", "--mapping", "inorder",
            "--dry-run", "--force"]
    assert main(args + ["--threads", "2", "--", "aprun", "./app"]) == 0
    assert capsys.readouterr().out.strip().endswith("aprun -N 2 -d 2 -n 4 ./app")
    assert main(args + ["--", "aprun", "-N", "2", "./app"]) == 0
    assert capsys.readouterr().out.strip().endswith("aprun -n 4 -N 2 ./app")   # as given


def test_reorder_and_search_jobs_get_absolute_file_names(slurm_job, tmp_path):
    from rankmap.cli.launch import absolute_spec
    (tmp_path / "topo.conf").write_text("SwitchName=s1 Nodes=vm\n")
    assert absolute_spec("fattree:topology=topo.conf:cores=4") == \
        f"fattree:topology={tmp_path / 'topo.conf'}:cores=4"
    assert absolute_spec("graph:g.csv + allreduce") == f"graph:{tmp_path / 'g.csv'} + allreduce"
    assert absolute_spec("torus:4x4") == "torus:4x4"


def test_unknown_launcher_names_the_emit_option(slurm_job, capsys):
    assert main(["launch", "-m", "torus:4x4:cores=4", "-p", "stencil:4x4", "--dry-run", "--",
                 "mylauncher", "./app"]) == 2
    assert "pass --emit (one of" in capsys.readouterr().err


def test_threads_per_rank_come_from_slurm_cpus_per_task(slurm_job, tmp_path, capsys):
    """In a Slurm job with --cpus-per-task=2, each rank gets 2 cores of the rankfile unless
    --threads says otherwise; a bad value is one line."""
    slurm_job.setenv("SLURM_TASKS_PER_NODE", "2(x4)")
    slurm_job.setenv("SLURM_CPUS_PER_TASK", "2")
    args = ["launch", "-m", "torus:4x4:cores=4", "-p", "stencil:2x4", "--mapping", "inorder",
            "--dry-run", "--force", "-o", "rf"]
    assert main(args + ["--", "mpirun", "./app"]) == 0
    cap = capsys.readouterr()
    assert "2 threads per rank (SLURM_CPUS_PER_TASK)" in cap.err
    assert (tmp_path / "rf").read_text().splitlines()[0] == "rank 0=node0-0 slot=0-1"
    assert main(args + ["--threads", "1", "--", "mpirun", "./app"]) == 0
    assert (tmp_path / "rf").read_text().splitlines()[0] == "rank 0=node0-0 slot=0"
    capsys.readouterr()
    slurm_job.setenv("SLURM_CPUS_PER_TASK", "two")
    assert main(args + ["--", "mpirun", "./app"]) == 2
    assert "bad SLURM_CPUS_PER_TASK 'two'" in capsys.readouterr().err


def test_reorder_warms_the_engine_before_the_job(monkeypatch, capsys):
    """launch --reorder places a small stencil on the machine before it starts the job (the
    in-job engine's first run compiled the kernels for a minute and timed out); a dry run
    does not; a mapping that cannot be made on the warm-up's size is left to the job."""
    import rankmap.cli.launch as launch_cli
    calls, started = [], []
    real_warm = launch_cli.warm_engine
    monkeypatch.setattr(launch_cli, "warm_engine", lambda *a: calls.append(a) or 0.0)
    monkeypatch.setattr(launch_cli, "_exec", lambda argv, env, dry: started.append(dry) or 0)
    assert main(["launch", "--reorder", "-m", "torus:3x2x2:cores=2", "--", sys.executable,
                 "-c", "pass"]) == 0
    assert [(c[0].spec, *c[1:]) for c in calls] == [("torus:3x2x2:cores=2", "auto", 0)]
    assert started == [False]
    assert main(["launch", "--reorder", "--dry-run", "-m", "torus:3x2x2:cores=2", "--",
                 sys.executable, "-c", "pass"]) == 0
    assert len(calls) == 1
    # a mapping name the engine cannot resolve: one line before the job, not a warning in it
    assert main(["launch", "--reorder", "--mapping", "nosuch", "-m", "torus:3x2x2:cores=2",
                 "--", sys.executable, "-c", "pass"]) == 2
    assert "unknown mapping 'nosuch'" in capsys.readouterr().err and len(calls) == 1
    capsys.readouterr()
    import rankmap.mpi.placement as placement
    seen = []
    real_assign = placement.assign_ranks
    monkeypatch.setattr(placement, "assign_ranks",
                        lambda pat, m, nodes, mapping, seed: seen.append(
                            (pat.n_ranks, pat.grid, pat.periodic, nodes.tolist(), mapping))
                        or real_assign(pat, m, nodes, mapping, seed))
    from rankmap.machines import parse_machine
    real_warm(parse_machine("torus:3x2x2:cores=2"), "auto", 0)   # 4 of 12 nodes, 2 cores each
    assert seen == [(8, (2, 2, 2), (True, True, True), [0, 0, 1, 1, 2, 2, 3, 3], "auto")]
    real_warm(parse_machine("torus:3x2x2:cores=2"), "XYZQ", 0)   # not a mapping: left to the job
    assert len(seen) == 2
    assert real_warm(parse_machine("torus:1x1x1"), "auto", 0) == 0.0 and len(seen) == 2
    # kernels already compiled: no line (it said 'compiled' after any warm-up over 5 s)
    assert "compiled" not in capsys.readouterr().err


def test_engine_command_without_the_script(tmp_path, monkeypatch):
    """python -m rankmap with no rankmap script anywhere: the engine the PMPI library runs is a
    script in rankmap's cache that runs this Python with -m rankmap (it was __main__.py, which
    cannot be run, so nothing was reordered); the installed script is used when there is one."""
    from rankmap.pmpi.environment import engine_command
    assert os.path.basename(engine_command(None)).startswith("rankmap")    # the venv's script
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    python = fake_bin / "python3"
    python.symlink_to(sys.executable)
    monkeypatch.setattr(sys, "executable", str(python))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("RANKMAP_CACHE", str(tmp_path / "cache"))
    import rankmap
    main_py = os.path.join(os.path.dirname(rankmap.__file__), "__main__.py")
    path = engine_command(main_py)
    assert path.startswith(str(tmp_path / "cache" / "bin" / "rankmap-"))
    assert engine_command(main_py) == path                      # written once, reused
    out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=120,
                         env={"PATH": "/usr/bin:/bin"})
    assert out.returncode == 0 and out.stdout.startswith("rankmap "), out.stderr


def test_reorder_alone_refuses_the_placement_files_options(slurm_job, capsys):
    """--reorder without --pattern: the job's engine places the ranks, so options of the
    placement file and its search are refused by name rather than dropped; a bad RANKMAP_*
    value the library would refuse inside the job is refused here."""
    base = ["launch", "--reorder", "-m", "torus:4x4:cores=4", "--dry-run"]
    for extra, named in ((["--routing", "dor"], "--routing"), (["--threads", "2"], "--threads"),
                         (["--emit", "slurm"], "--emit"), (["-o", "f"], "--output"),
                         (["--time-model", "off"], "--time-model"), (["--jobs", "1"], "--jobs"),
                         (["--hostfile", "h"], "--hostfile h")):
        assert main(base + extra + ["--", "mpirun", "./app"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and f"error: {named}" in err, (extra, err)
    for name, value, said in (("RANKMAP_STENCIL", "diag", "choose star or box"),
                              ("RANKMAP_TIMEOUT", "abc", "bad RANKMAP_TIMEOUT='abc'"),
                              ("RANKMAP_TIMEOUT", "-1", "bad RANKMAP_TIMEOUT='-1'"),
                              ("RANKMAP_TIMEOUT", "1_0", "bad RANKMAP_TIMEOUT='1_0'"),
                              ("RANKMAP_RECORD_COLLECTIVES", "maybe",
                               "bad RANKMAP_RECORD_COLLECTIVES='maybe'"),
                              ("RANKMAP_HOST_NODES", "vm:3", "bad entry 'vm:3'")):
        slurm_job.setenv(name, value)
        assert main(base + ["--", "mpirun", "./app"]) == 2
        assert said in capsys.readouterr().err, (name, value)
        slurm_job.delenv(name)
    slurm_job.setenv("RANKMAP_TIMEOUT", "0")        # documented: turns reordering off
    slurm_job.setenv("RANKMAP_VERBOSE", "2")           # the library reads it as on
    assert main(base + ["--", "mpirun", "./app"]) == 0


def test_reorder_keeps_the_librarys_own_settings_and_checks_the_node_list(slurm_job,
                                                                           capsys):
    """$RANKMAP_MAPPING and $RANKMAP_SEED are launch's defaults, as $RANKMAP_MACHINE is: the
    job got RANKMAP_MAPPING=auto RANKMAP_SEED=0 in their place, without a word. A
    $RANKMAP_NODE outside the machine or of another length than the job is refused here
    (the engine would keep the MPI library's order)."""
    base = ["launch", "--reorder", "-m", "torus:4x4:cores=4", "--dry-run", "--"]
    slurm_job.setenv("RANKMAP_MAPPING", "TXY")
    slurm_job.setenv("RANKMAP_SEED", "7")
    assert main(base + ["mpirun", "-n", "8", "./app"]) == 0
    out = capsys.readouterr().out
    assert "RANKMAP_MAPPING=TXY " in out and "RANKMAP_SEED=7 " in out
    assert main(["launch", "--reorder", "-m", "torus:4x4:cores=4", "--mapping", "XYT",
                 "--seed", "3", "--dry-run", "--", "mpirun", "./app"]) == 0
    out = capsys.readouterr().out
    assert "RANKMAP_MAPPING=XYT " in out and "RANKMAP_SEED=3 " in out
    slurm_job.setenv("RANKMAP_SEED", "x")
    assert main(base + ["mpirun", "./app"]) == 2
    assert "bad RANKMAP_SEED 'x'" in capsys.readouterr().err
    slurm_job.delenv("RANKMAP_SEED")
    for value, said in (("999", "node 999 (from $RANKMAP_NODE) is outside the machine"),
                        ("1,2,3", "has 3 entries for 8 processes")):
        slurm_job.setenv("RANKMAP_NODE", value)
        assert main(base + ["mpirun", "-n", "8", "./app"]) == 2
        assert said in capsys.readouterr().err, value
    slurm_job.setenv("RANKMAP_NODE", "0,0,0,0,1,1,1,1")
    assert main(base + ["mpirun", "-n", "8", "./app"]) == 0
    slurm_job.setenv("RANKMAP_NODE", "0,1")      # the launcher behind a wrapper counts too
    assert main(base + ["timeout", "100", "mpirun", "-n", "8", "./app"]) == 2
    assert "has 2 entries for 8 processes" in capsys.readouterr().err


def test_reorder_alone_passes_the_nodes_of_the_jobs_hosts(slurm_job, capsys):
    """--reorder --nodes: the job's hosts (here Slurm's node0-[0-3]) get the node ids given, in
    job order, through RANKMAP_HOST_NODES, which the engine applies to the processes' host
    names (a fully qualified name by its first part)."""
    from rankmap.mpi.nodes import host_nodes, resolve_node_labels
    assert main(["launch", "--reorder", "-m", "torus:4x4:cores=4", "--nodes", "5,6,9,10",
                 "--dry-run", "--", "mpirun", "./app"]) == 0
    out = capsys.readouterr().out
    assert "RANKMAP_HOST_NODES=node0-0=5,node0-1=6,node0-2=9,node0-3=10" in out
    assert "-x RANKMAP_HOST_NODES" in out
    table = host_nodes("node0-0=5,node0-1=6,node0-2=9,node0-3=10")
    nodes, why = resolve_node_labels(["node0-1.cluster", "node0-3", "node0-1"],
                                     parse_machine("torus:4x4:cores=4"), table)
    assert nodes.tolist() == [6, 10, 6] and why == ""
    # a PBS node file's full names against MPI_Get_processor_name's short ones
    nodes, why = resolve_node_labels(["n0", "n1"], parse_machine("torus:4x4:cores=4"),
                                     host_nodes("n0.ib.cluster=3,n1.ib.cluster=7"))
    assert nodes.tolist() == [3, 7] and why == ""
    # with --pattern the job's topologies are reordered too: the same table
    assert main(["launch", "--reorder", "-m", "torus:4x4:cores=4", "--nodes", "5,6,9,10",
                 "-p", "stencil:4x4", "--mapping", "inorder", "--dry-run", "--force", "--",
                 "mpirun", "./app"]) == 0
    assert "RANKMAP_HOST_NODES=node0-0=5,node0-1=6,node0-2=9,node0-3=10" in \
        capsys.readouterr().out
    # the job has 4 hosts: 3 ids are refused before the job
    assert main(["launch", "--reorder", "-m", "torus:4x4:cores=4", "--nodes", "5,6,9",
                 "--dry-run", "--", "mpirun", "./app"]) == 2
    assert "--nodes gives 3 nodes, the job has 4" in capsys.readouterr().err


def test_launcher_options_that_contradict_the_file_are_refused(slurm_job, capsys):
    """aprun -N 1 beside a rank order file of 4 ranks a node put the ranks on 4 nodes where
    rankmap placed them on one; srun -c or --ntasks-per-node, Open MPI's -N (its -npernode)
    and a format the launcher cannot read are refused by name; the counts the file assumes
    are added when missing (srun under a Cray rank order, --cpus-per-task for --threads)."""
    # a plain mpirun/mpiexec of no family told (the installed one's is tested below)
    slurm_job.setattr("rankmap.pmpi.environment.launcher_kind", lambda program: "other")
    args = ["launch", "-m", "torus:4x4:cores=4", "-p", "stencil:4x2", "--mapping", "inorder",
            "--dry-run", "--force"]
    for cmd, said in ((["aprun", "-N", "1"], "-N 1 in the aprun command: the placement file "
                       "puts 4 ranks on a node"),
                      (["srun", "-c", "2"], "-c 2 in the srun command: the placement file "
                       "gives each rank 1 core; give --threads instead"),
                      (["srun", "--ntasks-per-node=1"], "remove --ntasks-per-node=1"),
                      (["mpirun", "-N", "2"], "remove -N from the mpirun command")):
        # (aprun -N: the file's ranks per node are known before the search when the
        # pattern fills the allocation, 16 ranks here)
        fill = ["-p", "stencil:4x4"] if cmd[1] == "-N2" else []
        assert main(args + fill + ["--", *cmd, "./app"]) == 2, cmd
        assert said in capsys.readouterr().err, cmd
    for fmt, cmd, said in (("slurm", "mpirun", "mpirun takes --emit openmpi or mpich"),
                           ("hostfile", "mpirun", "mpirun takes --emit openmpi or mpich"),
                           ("openmpi", "srun", "srun takes --emit slurm or cray"),
                           ("mpich", "aprun", "aprun takes --emit cray"),
                           ("openmpi", "mpirun.mpich", "mpirun.mpich takes --emit mpich")):
        assert main(args + ["--emit", fmt, "--", cmd, "./app"]) == 2, (fmt, cmd)
        assert said in capsys.readouterr().err
    assert main(args + ["--emit", "mpich", "--", "mpiexec", "./app"]) == 0   # MPICH's mpiexec
    assert main(args + ["--emit", "cray", "--", "srun", "./app"]) == 0
    assert "srun --ntasks-per-node=4 -n 8 ./app" in capsys.readouterr().out
    assert main(args + ["--", "aprun", "-N", "4", "./app"]) == 0    # agrees: kept as given
    assert capsys.readouterr().out.strip().endswith("aprun -n 8 -N 4 ./app")
    assert main(args + ["--", "aprun", "-N4", "./app"]) == 0        # joined: not added again
    assert capsys.readouterr().out.strip().endswith("aprun -n 8 -N4 ./app")
    # refused before the search and before any file is written; joined forms too
    for cmd, out in ((["srun", "-c2"], "rankmap-4242.slurm"), (["aprun", "-d", "2"],
                                                              "MPICH_RANK_ORDER"),
                     (["aprun", "-N2"], "MPICH_RANK_ORDER")):
        if os.path.exists(out):
            os.unlink(out)
        # (aprun -N: the file's ranks per node are known before the search when the
        # pattern fills the allocation, 16 ranks here)
        fill = ["-p", "stencil:4x4"] if cmd[1] == "-N2" else []
        assert main(args + fill + ["--", *cmd, "./app"]) == 2, cmd
        assert f"error: {cmd[1][:2]} " in capsys.readouterr().err
        assert not os.path.exists(out), cmd
    slurm_job.setenv("SLURM_TASKS_PER_NODE", "2(x4)")
    assert main(args + ["--threads", "2", "--", "srun", "./app"]) == 0
    assert "srun --cpus-per-task=2 --distribution=arbitrary -n 8 ./app" in \
        capsys.readouterr().out


@pytest.mark.parametrize("kind, reads", [("openmpi", "openmpi"), ("hydra", "mpich")])
def test_a_plain_mpirun_takes_the_file_of_its_own_mpi(slurm_job, capsys, kind, reads):
    """Open MPI's mpirun has no -f: --emit mpich was accepted, then the job failed with
    'unknown option -f'. The family is told by mpirun --version; MPICH's hydra installed as
    mpirun gets its machinefile by default."""
    slurm_job.setattr("rankmap.pmpi.environment.launcher_kind", lambda program: kind)
    args = ["launch", "-m", "torus:4x4:cores=4", "-p", "stencil:4x2", "--mapping", "inorder",
            "--dry-run", "--force"]
    other = "mpich" if reads == "openmpi" else "openmpi"
    assert main(args + ["--emit", other, "--", "mpirun", "./app"]) == 2
    assert f"mpirun takes --emit {reads}" in capsys.readouterr().err
    assert main(args + ["--", "mpirun", "./app"]) == 0
    assert (f"rankmap-4242.{reads}") in capsys.readouterr().err


def test_process_counts_as_the_launchers_read_them(slurm_job):
    """The sum over the parts of an MPMD command; the last count given; Open MPI's -c (not
    srun's, its CPUs per task); srun's flags before a program not yet built."""
    slurm_job.setattr("rankmap.pmpi.environment.launcher_kind", lambda program: "openmpi")
    assert launcher_ranks(["mpirun", "-n", "2", "./a", ":", "-n", "2", "./b"]) == 4
    assert launcher_ranks(["mpirun", "-c", "4", "--oversubscribe", "./x"]) == 4
    assert launcher_ranks(["mpirun", "-n", "2", "-n", "4", "./x"]) == 4
    assert launcher_ranks(["srun", "-c", "4", "./x"]) is None
    assert launcher_ranks(["srun", "--kill-on-bad-exit", "./notbuilt", "-n", "3"]) is None
    with pytest.raises(RankmapError, match="MPMD .* needs a process count in every part"):
        launcher_ranks(["mpirun", "-n", "2", "./a", ":", "./b"])


def test_a_second_launch_in_a_job_gets_a_file_of_its_own(slurm_job, tmp_path, capsys):
    args = ["launch", "-m", "torus:4x4:cores=4", "-p", "stencil:4x2", "--mapping", "inorder",
            "--dry-run", "--", "srun", "./app"]
    assert main(args) == 0 and main(args) == 0
    assert (tmp_path / "rankmap-4242.slurm").exists()
    assert (tmp_path / "rankmap-4242-2.slurm").exists()
    assert "SLURM_HOSTFILE=" + str(tmp_path / "rankmap-4242-2.slurm") in \
        capsys.readouterr().out.strip().splitlines()[-1]


def test_a_cray_rank_order_elsewhere_than_the_working_directory_is_refused(slurm_job, tmp_path,
                                                                           capsys):
    (tmp_path / "sub").mkdir()
    assert main(["launch", "-m", "torus:4x4:cores=4", "-p", "stencil:4x2", "--mapping",
                 "inorder", "--dry-run", "-o", str(tmp_path / "sub" / "MPICH_RANK_ORDER"),
                 "--", "aprun", "./app"]) == 2
    assert "reads the file MPICH_RANK_ORDER in the working directory" in capsys.readouterr().err
    # the working directory itself, reached through a symbolic link, is the working directory
    (tmp_path / "link").symlink_to(tmp_path)
    slurm_job.chdir(tmp_path / "link")
    assert main(["launch", "-m", "torus:4x4:cores=4", "-p", "stencil:4x2", "--mapping",
                 "inorder", "--dry-run", "-o", str(tmp_path / "link" / "MPICH_RANK_ORDER"),
                 "--", "aprun", "./app"]) == 0      # ($PWD/MPICH_RANK_ORDER, PWD the link)


def test_an_aprun_count_the_rank_order_contradicts_leaves_no_file(slurm_job, tmp_path,
                                                                   capsys):
    # 6 ranks on the job's first 2 nodes of 4 slots: the file's ranks per node are known only
    # once placed (XYT puts 3 on each)
    assert main(["launch", "-m", "torus:4x4:cores=4", "-p", "stencil:2x3", "--mapping", "XYT",
                 "--dry-run", "--", "aprun", "-N", "4", "./app"]) == 2
    assert "-N 4 in the aprun command" in capsys.readouterr().err
    assert not (tmp_path / "MPICH_RANK_ORDER").exists()


def test_map_prints_a_command_that_runs(tmp_path, monkeypatch, capsys):
    """The hint after map: the file's path quoted; no 'cp MPICH_RANK_ORDER MPICH_RANK_ORDER'
    (cp fails on the same file and && stops); --cpus-per-task for --threads; a note when a
    hostfile's names are not the SimGrid platform's."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my runs").mkdir()
    base = ["map", "-m", "torus:2x2:cores=4", "-p", "stencil:2x4", "--mapping", "XYT"]
    assert main(base + ["--emit", "cray", "-o", "MPICH_RANK_ORDER"]) == 0
    out = capsys.readouterr().out
    assert "cp " not in out and "MPICH_RANK_REORDER_METHOD=3 srun" in out
    assert main(base + ["--emit", "slurm", "-o", "my runs/hosts"]) == 0
    assert "SLURM_HOSTFILE='my runs/hosts' srun" in capsys.readouterr().out
    assert main(base + ["--emit", "slurm", "-o", "t", "--threads", "2"]) == 0
    assert "srun --cpus-per-task=2 --distribution=arbitrary" in capsys.readouterr().out
    assert main(base + ["--emit", "hostfile", "-o", "h", "--names", "nid{id:05d}"]) == 0
    assert "write it without names" in capsys.readouterr().out
    assert main(base + ["--emit", "hostfile", "-o", "h2"]) == 0
    assert "without names" not in capsys.readouterr().out
    assert main(["map", "-m", "torus:2x2:cores=2", "-p", "stencil:2x4", "--mapping", "XYT",
                 "--emit", "bgp", "-o", "b"]) == 2
    assert "the bgp format needs a 3-D torus or mesh" in capsys.readouterr().err
    # every printed hint is shell: notes are comment lines, not words after the command
    for fmt in ("bgp", "openmpi", "mpich", "cray", "slurm", "hostfile"):
        assert main(["map", "-m", "torus:2x2x2:cores=2", "-p", "stencil:4x4", "--mapping",
                     "XYZT", "--emit", fmt, "-o", f"x y.{fmt}"]) == 0
        hint = capsys.readouterr().out
        assert subprocess.run(["bash", "-n", "-c", hint]).returncode == 0, hint
        assert "..." not in hint and "   (" not in hint, hint


def test_a_machinefile_whose_host_holds_ranks_apart_says_what_hydra_does(tmp_path,
                                                                          monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    base = ["map", "-m", "torus:2:cores=2", "-p", "stencil:1x4", "--emit", "mpich"]
    assert main(base + ["--mapping", "XT", "-o", "apart"]) == 0
    assert (tmp_path / "apart").read_text() == "node0:1\nnode1:1\nnode0:1\nnode1:1\n"
    assert "host node0 holds ranks apart (lines 1 and 3)" in capsys.readouterr().err
    assert main(base + ["--mapping", "TX", "-o", "together"]) == 0
    assert "holds ranks apart" not in capsys.readouterr().err


def test_node_ids_may_be_separated_by_white_space():
    """--nodes "$(cat ids.txt)" with one id a line, as a node file or a list of names."""
    m = parse_machine("torus:4x4x4")
    from rankmap.allocation import parse_allocation
    assert parse_allocation("12\n13\n", m).nodes.tolist() == [12, 13]
    assert parse_allocation("12 13, 20 - 22", m).nodes.tolist() == [12, 13, 20, 21, 22]
    for text in ("0,,1", "0,1,"):      # an empty item is still refused
        with pytest.raises(RankmapError, match="bad node"):
            parse_allocation(text, m)


def test_names_with_a_format_that_names_no_hosts_is_refused(tmp_path, monkeypatch, capsys):
    """map --emit bgp --names ... wrote the same file as without them: the option changed
    nothing, and is refused for the formats that give coordinates or rank lists."""
    monkeypatch.chdir(tmp_path)
    for fmt, machine in (("bgp", "torus:2x2x2:cores=2"), ("cray", "torus:2x2x2:cores=2")):
        assert main(["map", "-m", machine, "-p", "stencil:4x4", "--mapping", "XYZT", "--emit",
                     fmt, "-o", f"f.{fmt}", "--names", "nid{id:05d}"]) == 2
        assert f"the {fmt} format names no hosts" in capsys.readouterr().err
    assert main(["map", "-m", "torus:2x2x2:cores=2", "-p", "stencil:4x4", "--mapping", "XYZT",
                 "--emit", "slurm", "-o", "f.slurm", "--names", "nid{id:05d}"]) == 0


def test_outside_a_job_the_default_file_name_depends_on_nothing_but_the_folder(no_job, tmp_path,
                                                                              capsys):
    """Outside a batch job the file was rankmap-<process id>.FORMAT: every run printed another
    name. It is rankmap.FORMAT, then rankmap-2.FORMAT while that exists."""
    no_job.chdir(tmp_path)
    (tmp_path / "hf").write_text("node0-0 slots=4\nnode0-1 slots=4\n")
    args = ["launch", "--hostfile", "hf", "-m", "torus:4x4:cores=4", "-p", "stencil:4x2",
            "--mapping", "inorder", "--dry-run", "--", "mpirun", "-n", "8", "./app"]
    assert main(args) == 0 and main(args) == 0
    out = capsys.readouterr().out.split()
    assert "rankmap.openmpi" in out and "rankmap-2.openmpi" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hf", "rankmap-2.openmpi",
                                                         "rankmap.openmpi"]


def test_default_name_taken_after_the_choice_moves_on(tmp_path, monkeypatch):
    """Job steps launched together chose one free default name, then all but the first were
    refused with 'exists; use --force': the name taken meanwhile moves on to the next."""
    import argparse
    from rankmap.cli.launch import _free_default_name, _write_placement_file
    monkeypatch.chdir(tmp_path)
    args = argparse.Namespace(output=None, force=False)
    path = _free_default_name(args, "slurm", "401")
    assert path == "rankmap-401.slurm"
    (tmp_path / path).write_text("another step's file\n")      # taken before our write
    written = _write_placement_file(args, "slurm", "401", path, "n0\n")
    assert written == "rankmap-401-2.slurm"
    assert (tmp_path / written).read_text() == "n0\n"
    assert (tmp_path / path).read_text() == "another step's file\n"
    args = argparse.Namespace(output="mine.slurm", force=False)   # a name the user gave: refused
    (tmp_path / "mine.slurm").write_text("x")
    with pytest.raises(RankmapError, match="exists; use --force"):
        _write_placement_file(args, "slurm", "401", "mine.slurm", "n0\n")
