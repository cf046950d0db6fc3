"""The compiled greedy walk on tori, meshes and k-ary n-trees is the Python walk, core for
core."""

import numpy as np
from hypothesis import given, settings, strategies as st

from rankmap.allocation import parse_allocation, whole_machine
from rankmap.machines import parse_machine
from rankmap.mappers.greedy import greedy_walk, partner_csr
from rankmap.patterns import parse_pattern

CASES = [
    ("torus:4x4x4", None, "stencil:8x8"),
    ("torus:4x4x4:cores=2", None, "stencil:4x4x8:box"),
    ("mesh:6x5", None, "stencil:5x6"),
    ("torus:6x4:wrap=x:cores=3", None, "fft2d:8x9"),
    ("torus:8x8x8", "random:40:seed={seed}", "stencil:5x8:box:periodic"),
    ("torus:4x6x5:cores=2", "random:30:seed={seed}", "stencil:4x5x3:box:face=3KB,edge=1000,corner=7"),
    ("mesh:7x7:cores=4", "random:20:seed={seed}", "stencil:9x9:box"),
    ("torus:16", None, "stencil:15"),
    ("fattree:k=4:levels=3:cores=2", None, "stencil:8x8:box"),
    ("fattree:k=3:levels=3", "random:20:seed={seed}", "stencil:4x5:periodic"),
    ("fattree:k=8:levels=2:cores=4", None, "fft2d:8x16"),
    ("fattree:k=2:levels=5:taper=2", None, "stencil:4x4x2"),
    # hosts in an order unlike the tree's: the nearest core by number is not the nearest host
    ("fattree:k=4:levels=3", "23,57,63,41,62,34,33,11,60,26,56,18,0,55,35,40,39,42,1,13,8,47,"
     "16,50,61,27,24,19,21,38", "stencil:5x6"),
]


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(CASES), st.integers(0, 1000), st.booleans(), st.integers(0, 7))
def test_compiled_walk_equals_python_walk(case, seed, with_partners, start_node):
    spec, alloc, pat = case
    machine = parse_machine(spec)
    allocation = (whole_machine(machine) if alloc is None
                  else parse_allocation(alloc.format(seed=seed), machine))
    pattern = parse_pattern(pat)
    grid = tuple(pattern.grid)
    if allocation.n_cores < pattern.n_ranks:
        return
    partners = partner_csr(pattern) if with_partners else None
    start = (start_node % allocation.n_nodes) * allocation.cores_per_node
    compiled = greedy_walk(grid, machine, allocation, start, partners)
    python = greedy_walk(grid, machine, allocation, start, partners, compiled=False)
    assert np.array_equal(compiled, python)
    assert len(np.unique(compiled)) == pattern.n_ranks        # a bijection onto cores


def test_compiled_walk_on_fat_trees_equals_python_walk():
    """Every fat-tree case, both rules: the tree's hop counts come from the hosts' digits."""
    for spec, alloc, pat in [c for c in CASES if c[0].startswith("fattree")]:
        machine = parse_machine(spec)
        allocation = (whole_machine(machine) if alloc is None
                      else parse_allocation(alloc.format(seed=3), machine))
        pattern = parse_pattern(pat)
        for partners in (None, partner_csr(pattern)):
            compiled = greedy_walk(tuple(pattern.grid), machine, allocation, 0, partners)
            python = greedy_walk(tuple(pattern.grid), machine, allocation, 0, partners,
                                 compiled=False)
            assert np.array_equal(compiled, python), (spec, partners is not None)
