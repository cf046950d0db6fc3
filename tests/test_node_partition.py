"""Node-sized parts of a communication graph: one-level and two-level KaHIP cuts, exact sizes."""

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from rankmap.mappers import node_partition
from rankmap.mappers.graph_partition import communication_graph
from rankmap.mappers.node_partition import kway_parts, node_parts, two_level_parts
from rankmap.patterns import parse_pattern


def _cut_bytes(g, part):
    c = g.tocoo()
    return float(c.data[part[c.row] != part[c.col]].sum()) / 2


@st.composite
def graphs(draw):
    n = draw(st.integers(min_value=2, max_value=60))
    m = draw(st.integers(min_value=0, max_value=4 * n))
    src = np.array(draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m)), dtype=np.int64)
    dst = np.array(draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m)), dtype=np.int64)
    w = np.array(draw(st.lists(st.integers(1, 10 ** 6), min_size=m, max_size=m)), dtype=float)
    keep = src != dst
    g = sp.coo_matrix((w[keep], (src[keep], dst[keep])), shape=(n, n)).tocsr()
    g = (g + g.T).tocsr()
    g.sum_duplicates()
    g.sort_indices()
    return g


@settings(max_examples=60, deadline=None)
@given(graphs(), st.integers(min_value=1, max_value=5), st.integers(min_value=2, max_value=4),
       st.integers(min_value=0, max_value=3), st.integers(min_value=0, max_value=3))
def test_two_level_parts_respect_capacity_and_fill_exactly(g, cap, blocks, spare, seed):
    n = g.shape[0]
    k = max(-(-n // cap) + spare, blocks)
    part = two_level_parts(g, k, cap, seed, blocks=blocks)
    assert part.shape == (n,) and part.min() >= 0 and part.max() < k
    size = np.bincount(part, minlength=k)
    assert size.max() <= cap
    if n == k * cap:
        assert (size == cap).all()
    assert np.array_equal(part, two_level_parts(g, k, cap, seed, blocks=blocks))


def test_blocks_of_a_two_level_cut_hold_whole_parts_numbered_in_order():
    # 10 parts over 4 blocks: 3, 3, 2, 2 parts; the parts of a block are numbered together,
    # after those of the blocks before it, and together hold the block's ranks
    g = communication_graph(parse_pattern("stencil:8x5:box"))
    part = two_level_parts(g, 10, 4, 0, blocks=4)
    assert (np.bincount(part, minlength=10) == 4).all()
    parts_in = np.array([3, 3, 2, 2])
    block = node_partition._fix_balance(g, kway_parts(g, 4, 0), 4, parts_in * 4)
    assert np.array_equal(np.repeat(np.arange(4), parts_in)[part], block)


def test_two_level_cut_of_fft2d_cuts_as_few_bytes_as_one_level():
    g = communication_graph(parse_pattern("fft2d:32x32"))
    one = node_partition._fix_balance(g, kway_parts(g, 256, 0), 256, 4)
    two = two_level_parts(g, 256, 4, 0)
    assert (np.bincount(two, minlength=256) == 4).all()
    assert _cut_bytes(g, two) <= 1.01 * _cut_bytes(g, one)


def test_node_parts_cuts_in_two_levels_only_above_the_entry_threshold(monkeypatch):
    g = communication_graph(parse_pattern("fft2d:16x16"))
    one = node_parts(g, 4, 0)
    assert g.nnz <= node_partition.TWO_LEVEL_MIN_ENTRIES
    assert np.array_equal(one, node_partition._fix_balance(g, kway_parts(g, 64, 0), 64, 4))
    monkeypatch.setattr(node_partition, "TWO_LEVEL_MIN_ENTRIES", g.nnz - 1)
    assert np.array_equal(node_parts(g, 4, 0), two_level_parts(g, 64, 4, 0))


@settings(max_examples=60, deadline=None)
@given(graphs(), st.integers(min_value=2, max_value=6), st.data())
def test_fix_balance_with_a_capacity_per_part_moves_only_the_excess(g, k, data):
    n = g.shape[0]
    part = np.array(data.draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)),
                    dtype=np.int64)
    caps = np.array(data.draw(st.lists(st.integers(0, n), min_size=k, max_size=k)),
                    dtype=np.int64)
    if caps.sum() < n:
        caps[0] += n - caps.sum()
    fixed = node_partition._fix_balance(g, part, k, caps)
    size_before = np.bincount(part, minlength=k)
    assert (np.bincount(fixed, minlength=k) <= caps).all()
    assert int((fixed != part).sum()) == int(np.maximum(size_before - caps, 0).sum())
    # only vertices of overfull parts move
    moved = fixed != part
    assert (size_before[part[moved]] > caps[part[moved]]).all()


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["torus:4x4:cores=4", "torus:4x4x2:cores=2", "mesh:6x3:cores=3",
                        "torus:4x4:cores=8"]),
       st.sampled_from(["fft2d:8x8", "stencil:8x8:box", "alltoall:6x6", "stencil:5x7:periodic"]),
       st.integers(min_value=2, max_value=3), st.booleans(), st.integers(0, 50))
def test_graph_places_every_rank_on_its_own_core_with_two_level_cuts(spec, pat, blocks,
                                                                      scattered, seed):
    """The whole ``graph`` mapper with the two-level cut forced on small problems (any
    number of blocks, scattered nodes, ranks that do not fill the nodes): a valid
    placement, the same for the same seed."""
    from rankmap.allocation import parse_allocation, whole_machine
    from rankmap.machines import parse_machine
    from rankmap.mappers.graph_multilevel import graph

    machine = parse_machine(spec)
    allocation = whole_machine(machine)
    pattern = parse_pattern(pat)
    if scattered:
        need = -(-pattern.n_ranks // allocation.cores_per_node)
        if need + 1 < allocation.n_nodes:
            allocation = parse_allocation(f"random:{need + 1}:seed={seed}", machine)
    if pattern.n_ranks > allocation.n_cores:
        return
    saved = (node_partition.TWO_LEVEL_MIN_ENTRIES, node_partition.TWO_LEVEL_BLOCKS)
    try:
        node_partition.TWO_LEVEL_MIN_ENTRIES, node_partition.TWO_LEVEL_BLOCKS = -1, blocks
        cores = graph(pattern, machine, allocation, seed)
        again = graph(pattern, machine, allocation, seed)
    finally:
        node_partition.TWO_LEVEL_MIN_ENTRIES, node_partition.TWO_LEVEL_BLOCKS = saved
    assert cores.shape == (pattern.n_ranks,)
    assert len(np.unique(cores)) == pattern.n_ranks
    assert cores.min() >= 0 and cores.max() < allocation.n_cores
    assert np.array_equal(cores, again)
