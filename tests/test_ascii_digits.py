"""Numbers are written in ASCII digits: ``str.isdigit`` and the regex ``\\d`` also take other
scripts' digits (``int('٣') == 3``), which let a mistyped count through as a number."""

import pytest

from rankmap.errors import RankmapError
from rankmap.launch import expand_slurm_counts, launcher_ranks
from rankmap.patterns import parse_pattern
from rankmap.study import parse_sweep
from rankmap.validate import is_digits

ARABIC_THREE = "\u0663"      # ٣
DEVANAGARI_TWO = "\u0968"    # २
SUPERSCRIPT_TWO = "\u00b2"   # ²


def test_is_digits_takes_ascii_only():
    assert is_digits("0123456789")
    for text in ("", ARABIC_THREE, "1" + DEVANAGARI_TWO, SUPERSCRIPT_TWO, "-1", "1.0", " 1"):
        assert not is_digits(text), text


@pytest.mark.parametrize("text", [f"4(x{ARABIC_THREE})", f"{DEVANAGARI_TWO},2"])
def test_slurm_counts_refuse_other_digits(text):
    with pytest.raises(RankmapError, match="SLURM_TASKS_PER_NODE"):
        expand_slurm_counts(text, "SLURM_TASKS_PER_NODE")


def test_launcher_process_count_refuses_other_digits():
    with pytest.raises(RankmapError, match="bad process count"):
        launcher_ranks(["mpirun", "-n", ARABIC_THREE, "./a.out"])
    with pytest.raises(RankmapError, match="bad process count"):
        launcher_ranks(["srun", "--ntasks=" + DEVANAGARI_TWO, "./a.out"])
    assert launcher_ranks(["mpirun", "-n", "3", "./a.out"]) == 3


def test_study_sweep_refuses_other_digits():
    with pytest.raises(RankmapError):
        parse_sweep(f"1,{ARABIC_THREE}", "--nodes")
    assert parse_sweep("1,3", "--nodes") == [1, 3]


def test_graph_file_rank_comment_refuses_other_digits(tmp_path):
    f = tmp_path / "g.csv"
    f.write_text(f"# ranks {ARABIC_THREE}\n0,1,100\n")
    pattern = parse_pattern(f"graph:{f}")
    assert pattern.n_ranks == 2            # the comment is a comment, not a rank count
    f.write_text("# ranks 3\n0,1,100\n")
    assert parse_pattern(f"graph:{f}").n_ranks == 3


def test_machinefile_count_refuses_other_digits(tmp_path):
    from rankmap.allocation import parse_allocation
    from rankmap.io.mpich import read_machinefile
    from rankmap.machines import parse_machine
    machine = parse_machine("torus:2x2:cores=4")
    allocation = parse_allocation(None, machine)
    f = tmp_path / "hosts"
    f.write_text(f"node0:{ARABIC_THREE}\n")
    with pytest.raises(RankmapError, match="bad rank count"):
        read_machinefile(str(f), machine, allocation)
