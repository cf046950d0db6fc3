"""The compiled greedy walk on tori and meshes is the Python walk, core for core."""

import numpy as np
from hypothesis import given, settings, strategies as st

from rankmap.allocation import parse_allocation, whole_machine
from rankmap.machines import parse_machine
from rankmap.mappers import greedy as greedy_module
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
]


class _NotAGrid:
    """Stands in for GridMachine so that isinstance fails: the Python walk runs."""


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
    real = greedy_module.GridMachine
    try:
        greedy_module.GridMachine = _NotAGrid
        python = greedy_walk(grid, machine, allocation, start, partners)
    finally:
        greedy_module.GridMachine = real
    assert np.array_equal(compiled, python)
    assert len(np.unique(compiled)) == pattern.n_ranks        # a bijection onto cores
