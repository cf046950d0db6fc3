"""Seed 002 mini-app patterns, MPI_Dims_create-like grids, stencils that fill the allocation."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

from rankmap.errors import RankmapError
from rankmap.patterns import parse_pattern
from rankmap.patterns.miniapps import allreduce_flows, dims_create


@given(st.integers(1, 5000), st.integers(1, 4))
def test_dims_create_is_a_balanced_factorisation(n, ndim):
    dims = dims_create(n, ndim)
    assert len(dims) == ndim and int(np.prod(dims)) == n
    assert list(dims) == sorted(dims, reverse=True)
    # no other factorisation into ndim factors has a smaller largest factor by more than the
    # greedy rule allows: compare with brute force over divisors
    if ndim <= 3:
        best = min(max(c) for c in _factorisations(n, ndim))
        assert max(dims) <= 2 * best


def _factorisations(n, ndim):
    """Every ordered tuple of ndim positive integers whose product is n."""
    if ndim == 1:
        yield (n,)
        return
    for a in range(1, n + 1):
        if n % a == 0:
            for rest in _factorisations(n // a, ndim - 1):
                yield (a,) + rest


def test_dims_create_matches_mpi_examples():
    assert dims_create(6, 2) == (3, 2)
    assert dims_create(7, 2) == (7, 1)
    assert dims_create(12, 3) == (3, 2, 2)
    assert dims_create(64, 3) == (4, 4, 4)
    assert dims_create(128, 3) == (8, 4, 4)


def test_minighost_is_a_7_point_stencil_with_large_messages():
    p = parse_pattern("minighost:4x3x2")
    assert p.n_ranks == 24 and p.grid == (4, 3, 2)
    ph = p.phases[0]
    # non-periodic 6-neighbour count: sum over dims of 2*(n_d - 1)*prod(other dims)
    assert ph.n_flows == 2 * (3 * 3 * 2 + 2 * 4 * 2 + 1 * 4 * 3)
    assert set(ph.bytes.tolist()) == {2.0 * 1024 * 1024}
    c = p.grid_coords()
    assert (np.abs(c[ph.src] - c[ph.dst]).sum(axis=1) == 1).all()


def test_minimd_neighbours_within_two_steps_plus_allreduce():
    p = parse_pattern("minimd:6x6x6:bytes=1KiB:allreduce=64")
    halo, *rounds = p.phases
    assert halo.name == "halo"
    # 216 ranks: 128 in recursive doubling (7 rounds), 88 fold in before and out after
    assert [ph.name for ph in rounds] == (["allreduce.pre"] + [f"allreduce.r{k}" for k in range(7)]
                                          + ["allreduce.post"])
    c = p.grid_coords()
    d = (c[halo.dst] - c[halo.src]) % 6
    d = np.minimum(d, 6 - d)
    assert ((d > 0).sum(axis=1) == 1).all() and set(d.max(axis=1).tolist()) == {1, 2}
    assert halo.n_flows == 216 * 12
    assert {b for ph in rounds for b in ph.bytes.tolist()} == {64.0}


def test_allreduce_recursive_doubling():
    src, dst = allreduce_flows(8)
    assert len(src) == 8 * 3 and ((src ^ dst) & ((src ^ dst) - 1) == 0).all()
    src, dst = allreduce_flows(6)  # partners beyond the job are skipped
    assert dst.max() < 6 and (src != dst).all()


@pytest.mark.parametrize("spec,grid", [("stencil", (4, 4, 3)), ("stencil:dims=2", (8, 6)),
                                       ("stencil:dims=2:box", (8, 6)), ("minighost", (4, 4, 3)),
                                       ("minimd", (4, 4, 3))])
def test_patterns_fill_the_allocation(spec, grid):
    p = parse_pattern(spec, default_ranks=48)
    assert p.grid == grid and p.n_ranks == 48


def test_fill_needs_an_allocation():
    with pytest.raises(RankmapError, match="no grid and no allocation"):
        parse_pattern("minighost")
    with pytest.raises(RankmapError, match="minimd takes a 3-D grid"):
        parse_pattern("minimd:4x4")
    with pytest.raises(RankmapError, match="bad allreduce size"):
        parse_pattern("minimd:2x2x2:allreduce=lots")
