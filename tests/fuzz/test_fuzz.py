"""Fast profile of the fuzz suite (``make test``): a few hundred generated and mutated command
lines and files through ``rankmap.cli.main``, each checked against the contract (see
harness.py). ``make fuzz`` runs the long profile (tests/fuzz/run.py)."""

from __future__ import annotations

import os
import random
import tempfile

from hypothesis import HealthCheck, given, settings, strategies as st

from . import generators as gen
from .harness import describe, problems, run_cli

EXAMPLES = int(os.environ.get("RANKMAP_FUZZ_EXAMPLES", "120"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))


def _check(make, rng):
    with tempfile.TemporaryDirectory(prefix="rankmap-fuzz-") as folder:
        argv = make(rng, folder)
        res = run_cli(argv)
        issues = problems(res, folder)
        assert not issues, describe(res, issues)


@FUZZ
@given(st.randoms(use_true_random=False))
def test_generated_inputs_keep_the_contract(rng):
    _check(gen.generated, rng)


@FUZZ
@given(st.randoms(use_true_random=False))
def test_mutated_inputs_keep_the_contract(rng):
    _check(gen.mutated, rng)


def test_valid_inputs_succeed():
    """The mutation seeds are valid: each exits 0 with a valid result."""
    for argv in gen.VALID:
        with tempfile.TemporaryDirectory(prefix="rankmap-fuzz-") as folder:
            res = run_cli([a.replace("{out}", folder) for a in argv])
            assert res.code == 0 and not problems(res, folder), describe(res, problems(res))


def test_generators_are_deterministic():
    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        x = [gen.generated(random.Random(7), a) for _ in range(3)]
        y = [gen.generated(random.Random(7), b) for _ in range(3)]
    assert [[t.replace(a, "") for t in v] for v in x] == [[t.replace(b, "") for t in v] for v in y]
