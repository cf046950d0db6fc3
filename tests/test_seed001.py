"""Seed 001, section 3.2: rank orders of a 128x128 box halo on an 8x16x32 BG/P partition."""

import pytest

from rankmap.allocation import parse_allocation
from rankmap.selection import compare
from rankmap.machines import parse_machine
from rankmap.mappers.rank_order import rank_order_names
from rankmap.patterns import parse_pattern


@pytest.fixture(scope="module")
def comparison():
    m = parse_machine("torus:8x16x32:cores=4")
    return compare(m, parse_allocation(None, m), parse_pattern("stencil:128x128:box"),
                   rank_order_names(m) + ["inorder"], routing="dor")


def test_txyz_busiest_link_about_four_times_tzxy(comparison):
    txyz, tzxy = comparison.find("TXYZ").metrics, comparison.find("TZXY").metrics
    # the paper counts 24 vs 6 bidirectional streams; per directed link we get 49 vs 12
    assert txyz["max_link_streams"] / tzxy["max_link_streams"] == pytest.approx(4, rel=0.05)
    assert txyz["max_link_bytes"] / tzxy["max_link_bytes"] == pytest.approx(4, rel=0.05)


def test_tzxy_best_of_the_papers_orders_and_xyzt_between(comparison):
    paper = {n: comparison.find(n).metrics for n in ("TXYZ", "TZXY", "XYZT")}
    key = lambda n: (paper[n]["max_link_bytes"], paper[n]["hop_bytes"])
    assert min(paper, key=key) == "TZXY"
    assert paper["TZXY"]["mean_link_bytes"] < paper["XYZT"]["mean_link_bytes"] < \
        paper["TXYZ"]["mean_link_bytes"]
    # and no rank order at all has a lighter busiest link than TZXY
    best_busiest = min(c.metrics["max_link_bytes"] for c in comparison.candidates)
    assert paper["TZXY"]["max_link_bytes"] == best_busiest


def test_inorder_is_txyz_on_a_whole_torus(comparison):
    assert comparison.find("inorder").metrics == comparison.find("TXYZ").metrics
