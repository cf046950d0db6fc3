"""The README's own command lines run: every self-contained `rankmap compare`, `map`,
`evaluate` and `nodes` example (no input files, no MPI launcher, no shell substitution) exits 0.

A README example once stopped working when an input limit came in (the time model's route
entries on a fat tree) and nothing noticed; this keeps the examples true. The slowest one,
`compare --mappings all` on bgp:4096 + fft2d:128x128 (about 30 s), is timed by
`benchmarks/bench_targets.py` instead.
"""

import os
import re
import shlex

import pytest

from rankmap.cli import main

README = os.path.join(os.path.dirname(__file__), os.pardir, "README.md")
#: examples measured by a benchmark instead (seconds each)
SLOW = {"rankmap compare --machine bgp:4096 --pattern fft2d:128x128 --mappings all"}
#: what makes an example depend on something a test does not have
NEEDS = re.compile(r"\$\(|graph:|--mapfile|--nodes alloc|\.toml|\.xml|\.csv|mpirun|srun|\\$")


def _examples() -> list[str]:
    with open(README, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    out = []
    for line in lines:
        cmd = line.strip().removeprefix("$ ").split("  #")[0].strip()
        if not re.match(r"rankmap (compare|map|evaluate|nodes) ", cmd):
            continue
        if NEEDS.search(cmd) or cmd in SLOW or cmd in out:
            continue
        out.append(cmd)
    return out


EXAMPLES = _examples()


def test_the_readme_has_examples_to_run():
    assert len(EXAMPLES) >= 10, EXAMPLES


@pytest.mark.parametrize("cmd", EXAMPLES)
def test_readme_example_runs(cmd, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    args = shlex.split(cmd)[1:]
    if args[0] in ("compare", "map"):
        args += ["--jobs", "1"]
    assert main(args) == 0, capsys.readouterr().err
