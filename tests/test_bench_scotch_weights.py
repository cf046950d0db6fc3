"""The Scotch peer of the benchmarks gets a graph it can sum: edge weights under 2**30 in all
(Debian's Scotch sums them in 32 bits; past 2**31 it crashed or hung on most large problems)."""

import os
import sys

import numpy as np
from hypothesis import given, settings, strategies as st

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "benchmarks"))
from scotch_util import SCOTCH_WEIGHT_SUM, scotch_weights  # noqa: E402


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(1.0, 2.0**40), min_size=1, max_size=2000), st.integers(1, 10**6))
def test_weights_fit_and_keep_their_order(data, copies):
    data = np.tile(np.array(data), copies if len(data) * copies <= 10**6 else 1)
    w = scotch_weights(data)
    assert w.dtype == np.int64 and w.min() >= 1 and w.max() <= 10**6
    assert int(w.sum()) <= SCOTCH_WEIGHT_SUM + len(w)   # rounding up to 1 adds at most 1 each
    order = np.argsort(data, kind="stable")
    assert np.all(np.diff(w[order]) >= 0)               # heavier edges never weigh less


def test_uniform_stencil_of_16k_ranks_sums_under_two_to_the_31():
    # the 16,384-rank random geometric graph of bench_quality: 117,614 edge entries
    w = scotch_weights(np.full(117614, 2.0**20))
    assert int(w.sum()) < 2**31 and len(set(w.tolist())) == 1
