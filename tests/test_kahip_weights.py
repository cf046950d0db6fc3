"""KaHIP's edge weights are 32-bit integers it adds up: the weights rankmap hands it sum to
at most KAHIP_WEIGHT_TOTAL, so its cuts are made on the real graph, not wrapped-around sums."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rankmap.mappers.graph_partition import communication_graph
from rankmap.mappers.node_partition import (KAHIP_IMBALANCE, KAHIP_MAX_WEIGHT,
                                            KAHIP_WEIGHT_TOTAL, int_weights, kway_parts)
from rankmap.patterns import parse_pattern


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=1.0, max_value=2.0 ** 40), min_size=1, max_size=300),
       st.integers(min_value=1, max_value=5000))
def test_weights_are_positive_ordered_and_sum_within_32_bits(values, repeat):
    data = np.repeat(np.array(values), repeat)
    w = int_weights(data)
    assert w.dtype == np.int32 and w.min() >= 1
    assert int(w.astype(np.int64).sum()) <= KAHIP_WEIGHT_TOTAL
    order = np.argsort(data, kind="stable")
    assert (np.diff(w[order].astype(np.int64)) >= 0).all()          # larger bytes, not less
    if float((data / data.max()).sum()) * KAHIP_MAX_WEIGHT + data.size <= KAHIP_WEIGHT_TOTAL:
        # room for the full scale: the weights are those of the plain 10**6 scaling
        assert np.array_equal(w, np.maximum(1, np.rint(data / data.max() * 1e6)))


def test_bisection_of_a_27_point_stencil_cuts_as_with_unit_weights():
    # 93,240 equal weights: at 10**6 each they summed past 2**31 and KaHIP's bisection cut
    # 2.6x the edges it cuts on the same graph with weights of 1
    g = communication_graph(parse_pattern("stencil:16x16x16:box"))
    coo = g.tocoo()
    import kahip

    cuts = []
    for w in (int_weights(g.data), np.ones(g.nnz, dtype=np.int32)):
        _c, part = kahip.kaffpa(np.ones(g.shape[0], dtype=np.int32),
                                g.indptr.astype(np.int32), w, g.indices.astype(np.int32), 2,
                                KAHIP_IMBALANCE, True, 0, 0)
        part = np.asarray(part)
        cuts.append(int((part[coo.row] != part[coo.col]).sum()))
    assert cuts[0] <= 1.05 * cuts[1]
    parts = kway_parts(g, 8, 0)
    assert np.bincount(parts).max() <= 1.03 * g.shape[0] / 8 + 1
