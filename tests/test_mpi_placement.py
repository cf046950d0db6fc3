"""The MPI reordering logic that needs no MPI: node labels, rank assignment, graph checks."""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from rankmap.cli.bench import parse_sizes
from rankmap.errors import RankmapError
from rankmap.machines import parse_machine
from rankmap.mpi.bench import BenchConfig, check_config
from rankmap.mpi.cart import check_cart_args
from rankmap.mpi.graph import graph_pattern, source_weights, weights_as_bytes
from rankmap.mpi.nodes import local_node_label, resolve_node_labels
from rankmap.mpi.placement import assign_ranks
from rankmap.patterns import parse_pattern


def test_auto_reorder_names_its_pick():
    """In-job reordering (bench, mpi4py, the PMPI library) with auto says which candidate it
    applied, as evaluate does, and applies exactly auto's placement."""
    from rankmap.allocation import whole_machine
    from rankmap.selection import auto_select
    machine = parse_machine("torus:4:cores=2")
    pattern = parse_pattern("stencil:2x4")
    a = assign_ranks(pattern, machine, np.arange(8) // 2, "auto")
    best = auto_select(pattern, machine, whole_machine(machine)).best
    assert a.mapping == f"auto ({best.name})"
    node_of_new = np.empty(8, dtype=np.int64)
    node_of_new[a.new_rank] = np.arange(8) // 2
    assert np.array_equal(node_of_new, best.mapping.nodes(a.allocation))


@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 2**31 - 1),
       st.sampled_from(["TX", "XT", "random", "inorder"]))
def test_uniform_nodes_follow_the_placement_exactly(n_nodes, per_node, seed, name):
    """Every node has the same number of processes: new rank r lands on the placed node, or
    the launcher's order stays when the placement is predicted no faster."""
    assume(n_nodes * per_node > 1)      # one rank sends to nobody: no pattern
    machine = parse_machine(f"torus:{n_nodes}:cores={per_node}")
    rng = np.random.default_rng(seed)
    proc_nodes = rng.permutation(np.repeat(np.arange(n_nodes), per_node))
    pattern = parse_pattern(f"stencil:{n_nodes * per_node}")
    a = assign_ranks(pattern, machine, proc_nodes, name, seed)
    assert sorted(a.new_rank.tolist()) == list(range(len(proc_nodes)))
    assert a.moved == 0
    if a.kept_order:
        assert a.new_rank.tolist() == list(range(len(proc_nodes)))
        return
    from rankmap.mappers import build_mapping
    placed = build_mapping(name, pattern, machine, a.allocation, seed)
    node_of_new = np.empty(len(proc_nodes), dtype=np.int64)
    node_of_new[a.new_rank] = proc_nodes
    assert np.array_equal(node_of_new, placed.nodes(a.allocation))


@given(st.lists(st.integers(0, 5), min_size=2, max_size=24), st.integers(1, 24))
def test_uneven_nodes_still_give_a_permutation(proc_nodes, n_ranks):
    machine = parse_machine("torus:6:cores=24")
    n_ranks = max(2, min(n_ranks, len(proc_nodes)))
    a = assign_ranks(parse_pattern(f"stencil:{n_ranks}"), machine, np.array(proc_nodes), "TX")
    used = a.new_rank[a.new_rank >= 0]
    assert sorted(used.tolist()) == list(range(n_ranks))
    assert (a.new_rank == -1).sum() == len(proc_nodes) - n_ranks


def test_a_reorder_is_never_predicted_slower_than_the_launchers_order():
    """14 processes on nodes of 4, 3, 4, 3: the placement made for 4 a node and fixed up put
    rank 7 on the last node, between nodes 1 and 2 (3 streams on the busiest link, 3x the
    launcher's predicted time); the launcher's order is kept and said."""
    from rankmap.allocation import Allocation
    from rankmap.evaluation import Evaluator
    from rankmap.mappers import Placement
    machine = parse_machine("torus:4x4x4:cores=4")
    nodes = np.array([0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3])
    pattern = parse_pattern("stencil:14")
    a = assign_ranks(pattern, machine, nodes)
    assert a.kept_order and a.new_rank.tolist() == list(range(14))
    assert a.mapping.startswith("the launcher's order (auto (") and a.moved == 0
    for name in ("auto", "AUTO"):
        b = assign_ranks(pattern, machine, nodes, name)
        alloc = Allocation(np.arange(4), 4)
        ev = Evaluator(machine, alloc, pattern)

        def time(new_rank):
            core = np.array([0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14])
            core_of_rank = np.empty(14, dtype=np.int64)
            core_of_rank[new_rank] = core
            return ev.evaluate(Placement("x", core_of_rank)).metrics["predicted_time_s"]

        assert time(b.new_rank) <= time(np.arange(14))
    # a named placement is applied as asked, fixed up for the uneven nodes
    named = assign_ranks(pattern, machine, nodes, "TXYZ")
    assert not named.kept_order and named.mapping == "TXYZ" and named.moved > 0


def test_more_processes_on_a_node_than_it_has_cores_is_refused():
    """RANKMAP_NODE=0,0,...: 8 processes on a node of torus:2x2:cores=1 were placed as if it
    had 8 cores, silently; the library now keeps the MPI library's order and says why."""
    with pytest.raises(RankmapError, match="node 0 runs 8 processes, more than the 1 core"):
        assign_ranks(parse_pattern("stencil:8"), parse_machine("torus:2x2:cores=1"),
                     np.zeros(8, dtype=np.int64))


def test_known_assignment():
    machine = parse_machine("torus:4:cores=4")
    a = assign_ranks(parse_pattern("stencil:16"), machine, np.arange(16) % 4, "TX")
    assert a.new_rank.tolist() == [0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15]


def test_node_labels(monkeypatch):
    machine = parse_machine("torus:4x2:cores=2")
    ids, reason = resolve_node_labels(["3", "node1-1", "3"], machine)
    assert ids.tolist() == [3, 5, 3] and reason == ""
    ids, reason = resolve_node_labels(["3", "cn7"], machine)
    assert ids is None and "host 'cn7' is not a node" in reason
    ids, reason = resolve_node_labels(["9"], machine)
    assert ids is None and "outside the machine" in reason
    monkeypatch.setenv("RANKMAP_NODE", "5,6,7")
    assert local_node_label("h", rank=1, size=3) == "6"
    with pytest.raises(RankmapError, match="has 3 entries, MPI_COMM_WORLD has 4"):
        local_node_label("h", rank=1, size=4)
    monkeypatch.setenv("RANKMAP_NODE", "5,,7")   # the empty entry is named, for its process
    assert local_node_label("h", rank=2, size=3) == "7"
    with pytest.raises(RankmapError, match="entry 1 .* is empty"):
        local_node_label("h", rank=1, size=3)
    monkeypatch.setenv("RANKMAP_NODE", "12")
    assert local_node_label("h") == "12"
    monkeypatch.delenv("RANKMAP_NODE")
    assert local_node_label("h") == "h"


def test_graph_ranks_are_whole_numbers():
    """dist_graph_create_adjacent made source 3.9 rank 3 (and "1" rank 1) without a word."""
    from rankmap.mpi.graph import _ranks
    assert _ranks([0, np.int64(3)], 4, "sources") == [0, 3]
    for bad in ([3.9], ["1"], [True]):
        with pytest.raises(RankmapError, match="expected ranks"):
            _ranks(bad, 4, "sources")


def test_graph_checks():
    lists = [([1], [1, 1], [3, 4]), ([0, 0], [0], [2])]
    pattern = graph_pattern(lists)
    # weights 3, 4, 2 as ratios: the heaviest edge 1 MiB, the others in proportion
    assert pattern.n_ranks == 2
    assert pattern.phases[0].bytes.tolist() == [786432, 1048576, 524288]
    # no unit: uniform weights of any size are the unweighted graph, 1 MiB an edge
    for w in (1, 1000000, 0):
        assert weights_as_bytes([w, w, w]).tolist() == [1048576] * 3
    assert weights_as_bytes([0, 1 << 30]).tolist() == [1, 1048576]   # a zero weight: 1 byte
    assert source_weights(lists) == [[2], [3, 4]]
    with pytest.raises(RankmapError, match="inconsistent graph: edge 0->1"):
        graph_pattern([([], [1], [1]), ([], [], [])])


def test_cart_and_bench_arguments():
    # a message of 2 GiB or more overflows MPI's int count: one line, not mpi4py's traceback
    for text in ("2GiB", "1KiB..2GiB", "1MiB,3GiB"):
        with pytest.raises(RankmapError, match="more than an MPI message of bytes holds"):
            parse_sizes(text)
    assert parse_sizes("1GiB") == [1 << 30]
    assert check_cart_args(8, [2, 4], None) == ([2, 4], [False, False])
    with pytest.raises(RankmapError, match="dims 3x3 need 9 processes, the communicator has 8"):
        check_cart_args(8, [3, 3], None)
    with pytest.raises(RankmapError, match="periods .* has 1 entries"):
        check_cart_args(8, [2, 4], [True])
    with pytest.raises(RankmapError, match="bad dims"):
        check_cart_args(8, [2, 0], None)
    assert parse_sizes("1KiB..8KiB") == [1024, 2048, 4096, 8192]
    assert parse_sizes("64,1KiB") == [64, 1024]
    with pytest.raises(RankmapError, match="end is below the start"):
        parse_sizes("4MiB..1KiB")
    # an end the doubling does not reach, and a size given twice, are said, not dropped
    with pytest.raises(RankmapError, match="not a doubling of the start"):
        parse_sizes("1KiB..3KiB")
    with pytest.raises(RankmapError, match="1024 B is given twice"):
        parse_sizes("1KiB,64,1KiB")
    with pytest.raises(RankmapError, match="needs --dims"):
        check_config(BenchConfig("halo", None, [64]), 4)
    with pytest.raises(RankmapError, match="bad --dims 8 for fft: 2 dimensions"):
        check_config(BenchConfig("fft", (8,), [64]), 8)
    with pytest.raises(RankmapError, match="at least 2 processes"):
        check_config(BenchConfig("pairs", None, [64]), 1)
