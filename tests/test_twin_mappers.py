"""Mappers that give another mapper's placement are built once (``rcb`` of a gridless pattern
is ``graph``), and the result is the one of building both."""

import json

import numpy as np
import pytest

from rankmap.allocation import parse_allocation, whole_machine
from rankmap.errors import RankmapError
from rankmap.evaluation import Evaluator
from rankmap.machines import parse_machine
from rankmap.mappers import build_mapping, same_placement_as
from rankmap.patterns import parse_pattern
from rankmap.selection import auto_select, compare
from rankmap.selection.candidates import evaluate_candidates
from rankmap.selection.parallel import ForkExecutor


@pytest.fixture(scope="module")
def gridless(tmp_path_factory):
    path = tmp_path_factory.mktemp("twin") / "g.csv"
    rng = np.random.default_rng(4)
    lines = ["src,dst,bytes"]
    for _ in range(160):
        a, b = (int(v) for v in rng.integers(0, 48, 2))
        if a != b:
            lines.append(f"{a},{b},{int(rng.integers(1, 9)) * 4096}")
    path.write_text("\n".join(lines) + "\n")
    machine = parse_machine("torus:4x4:cores=4")
    allocation = parse_allocation("random:12:seed=2", machine)
    return machine, allocation, parse_pattern(f"graph:{path}", default_ranks=48)


def test_rcb_without_a_grid_names_graph_and_places_as_it(gridless):
    machine, allocation, pattern = gridless
    assert same_placement_as("rcb", pattern, machine, allocation) == "graph"
    assert same_placement_as("swap:rcb", pattern, machine, allocation) == "swap:graph"
    assert same_placement_as("refine:rcb", pattern, machine, allocation) == "refine:graph"
    for name in ("graph", "greedy", "TXY", "RCB", "no-such-mapper", "auto"):
        assert same_placement_as(name, pattern, machine, allocation) is None
    for seed in (0, 5):
        a = build_mapping("rcb", pattern, machine, allocation, seed)
        b = build_mapping("graph", pattern, machine, allocation, seed)
        assert np.array_equal(a.core_of_rank, b.core_of_rank)
        assert a.name == "rcb"


def test_rcb_with_a_grid_is_its_own_mapper():
    machine = parse_machine("torus:4x4x4")
    pattern = parse_pattern("stencil:4x4x4")
    assert same_placement_as("rcb", pattern, machine, whole_machine(machine)) is None


def _counting_build(pattern, machine, allocation, built):
    def build(name):
        built.append(name)
        return build_mapping(name, pattern, machine, allocation, 3)
    return build


@pytest.mark.parametrize("jobs", [1, 2])
def test_twins_are_built_once_with_the_same_evaluations(gridless, jobs):
    machine, allocation, pattern = gridless
    names = ["TXY", "rcb", "greedy", "graph", "swap:rcb", "swap:graph"]
    ev = Evaluator(machine, allocation, pattern)
    executor = ForkExecutor(jobs) if jobs > 1 else None
    built_all: list[str] = []
    plain, skipped_plain = evaluate_candidates(
        ev, names, _counting_build(pattern, machine, allocation, built_all), executor=executor)
    built_once: list[str] = []
    twins, skipped_twins = evaluate_candidates(
        ev, names, _counting_build(pattern, machine, allocation, built_once), executor=executor,
        same_as=lambda n: same_placement_as(n, pattern, machine, allocation))
    if jobs == 1:
        assert built_all == names                      # greedy fails: it needs a grid
        assert built_once == ["TXY", "greedy", "graph", "swap:graph"]
    assert skipped_plain == skipped_twins and "greedy" in skipped_twins
    assert [json.dumps(e.to_json()) for e in plain] == [json.dumps(e.to_json()) for e in twins]
    assert [e.name for e in twins] == ["TXY", "rcb", "graph", "swap:rcb", "swap:graph"]


def test_a_twin_whose_other_fails_builds_itself(gridless):
    machine, allocation, pattern = gridless
    ev = Evaluator(machine, allocation, pattern)

    def build(name):
        if name == "graph":
            raise RankmapError("no")
        return build_mapping(name, pattern, machine, allocation, 0)

    out, skipped = evaluate_candidates(
        ev, ["rcb", "graph"], build,
        same_as=lambda n: same_placement_as(n, pattern, machine, allocation))
    assert [e.name for e in out] == ["rcb"] and skipped == {"graph": "no"}


def test_auto_and_compare_report_both_names(gridless):
    machine, allocation, pattern = gridless
    comp = auto_select(pattern, machine, allocation, seed=1)
    names = [c.name for c in comp.candidates]
    assert "graph" in names and "rcb" in names
    assert comp.find("rcb").metrics == comp.find("graph").metrics
    cmp = compare(machine, allocation, pattern, ["rcb", "graph"], seed=1)
    assert cmp.find("rcb").metrics == cmp.find("graph").metrics
    assert np.array_equal(cmp.find("rcb").mapping.core_of_rank,
                          build_mapping("rcb", pattern, machine, allocation, 1).core_of_rank)
