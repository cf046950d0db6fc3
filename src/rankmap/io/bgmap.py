"""Blue Gene mapfiles: one line per rank, ``x y z t`` (node coordinates, then the core).

Blue Gene/L and /P read this through ``mpirun -mapfile`` (BG/Q uses ``A B C D E T``: same
layout with five coordinates). Lines are in rank order; ``#`` starts a comment; blank lines are
ignored. The reader is strict: every rank exactly once, coordinates inside the machine and
the allocation, core below cores-per-node, no two ranks on one core.
"""

from __future__ import annotations

import os

import numpy as np

from ..allocation import Allocation
from ..errors import RankmapError
from ..machines import GridMachine
from ..mappers.base import Placement, validate_mapping

__all__ = ["check_bgp_machine", "format_mapfile", "format_bgp_mapfile", "read_mapfile"]


def _require_grid(machine) -> None:
    """Blue Gene mapfiles name nodes by torus/mesh coordinates: refuse other machines."""
    if not isinstance(machine, GridMachine):
        raise RankmapError(f"a Blue Gene mapfile needs a torus or mesh, not a {machine.kind}; "
                           "use a host-based format (slurm, openmpi, mpich, hostfile)")


def format_mapfile(mapping: Placement, machine, allocation: Allocation) -> str:
    """Text of a Blue Gene mapfile for ``mapping`` (coordinates then core, one rank a line).

    Parameters
    ----------
    mapping : Placement
        The placement written.
    machine : Machine
        The machine (coordinates, default host names).
    allocation : Allocation
        The allocation the placement refers to.

    Returns
    -------
    str
        The file's text, one line per rank (``x y z t``).
    """
    _require_grid(machine)
    nodes = mapping.nodes(allocation)
    coords = machine.coords(nodes)
    slots = mapping.slots(allocation)
    table = np.column_stack([coords, slots])
    header = (f"# rankmap {mapping.name}: {len(nodes)} ranks, one line per rank: "
              f"{' '.join(machine.letters.lower())} t\n")
    body = "\n".join(" ".join(map(str, row)) for row in table.tolist())
    return header + body + "\n"


def format_bgp_mapfile(mapping: Placement, machine, allocation: Allocation) -> str:
    """Text of a Blue Gene/L or /P mapfile (``x y z t``): :func:`format_mapfile` on a 3-D
    torus or mesh only, the machines those read it on.

    Parameters
    ----------
    mapping : Placement
        The placement written.
    machine : Machine
        The machine: a 3-D torus or mesh.
    allocation : Allocation
        The allocation the placement refers to.

    Returns
    -------
    str
        The file's text, one line per rank.

    Raises
    ------
    RankmapError
        On any other machine (a 2-D torus got 'x y t' lines no Blue Gene reads).
    """
    check_bgp_machine(machine)
    return format_mapfile(mapping, machine, allocation)


def check_bgp_machine(machine) -> None:
    """Refuse a machine the bgp format cannot describe (before any search is run for it).

    Parameters
    ----------
    machine : Machine
        The machine: it must be a 3-D torus or mesh.

    Raises
    ------
    RankmapError
        On any other machine.
    """
    _require_grid(machine)
    if machine.ndim != 3:
        raise RankmapError(f"the bgp format needs a 3-D torus or mesh (x y z t, as Blue Gene/L "
                           f"and /P read it), machine {machine.spec!r} has {machine.ndim} "
                           "dimensions: use bgq for a 5-D torus, or a host-based format "
                           "(slurm, openmpi, mpich, hostfile)")


def read_mapfile(path: str, machine, allocation: Allocation, n_ranks: int) -> Placement:
    """Read a Blue Gene mapfile into a validated Placement (errors name file and line).

    Parameters
    ----------
    path : str
        The file.
    machine : Machine
        The machine whose nodes the file names.
    allocation : Allocation
        The allocation; every rank must land on one of its cores.
    n_ranks : int
        Ranks the pattern has (the file must place exactly these).

    Returns
    -------
    Placement
        The validated placement.

    Raises
    ------
    RankmapError
        A malformed line, coordinates outside the machine, a node outside the allocation, a
        core used twice (naming the file and line).
    """
    from ..validate import check_input_file, read_lines, show
    check_input_file(path, "mapfile", repr)
    _require_grid(machine)
    ndim = len(machine.letters)
    rows, linenos = [], []
    for lineno, line in enumerate(read_lines(path, "mapfile"), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        fields = text.split()
        if len(fields) != ndim + 1:
            raise RankmapError(f"{path}: line {lineno}: expected {ndim + 1} numbers "
                               f"({' '.join(machine.letters.lower())} t), got {show(text)}")
        # ASCII digits only: str.isdigit takes '١' (a launcher would not read it as 1)
        if not all(f.isascii() and f.lstrip("-").isdigit() and len(f) <= 12 for f in fields):
            raise RankmapError(f"{path}: line {lineno}: not integers (or too large): "
                               f"{show(text)}")
        rows.append([int(f) for f in fields])
        linenos.append(lineno)
    if not rows:
        raise RankmapError(f"mapfile {path!r} places no ranks")
    if len(rows) != n_ranks:
        raise RankmapError(f"mapfile {path!r} places {len(rows)} ranks, the pattern has "
                           f"{n_ranks}")
    table = np.array(rows, dtype=np.int64)
    coords, slots = table[:, :ndim], table[:, ndim]
    upper = machine.dims if isinstance(machine, GridMachine) else coords.max(0) + 1
    out = (coords < 0) | (coords >= np.asarray(upper))
    if out.any():
        i = int(np.nonzero(out.any(axis=1))[0][0])
        raise RankmapError(f"{path}: line {linenos[i]}: coordinates "
                           f"{tuple(int(v) for v in coords[i])} are outside the machine")
    bad_slot = (slots < 0) | (slots >= allocation.cores_per_node)
    if bad_slot.any():
        i = int(np.nonzero(bad_slot)[0][0])
        raise RankmapError(f"{path}: line {linenos[i]}: core {int(slots[i])} is not in 0-"
                           f"{allocation.cores_per_node - 1}")
    nodes = machine.node_ids(coords)
    pos = allocation.position_of_node(nodes)
    if (pos < 0).any():
        i = int(np.nonzero(pos < 0)[0][0])
        raise RankmapError(f"{path}: line {linenos[i]}: node {tuple(int(v) for v in coords[i])} "
                           "is not in the allocation")
    cores = pos * allocation.cores_per_node + slots
    uniq, first, counts = np.unique(cores, return_index=True, return_counts=True)
    if (counts > 1).any():
        dup = uniq[counts > 1][0]
        lines = [linenos[i] for i in np.nonzero(cores == dup)[0][:2]]
        raise RankmapError(f"{path}: lines {lines[0]} and {lines[1]} put two ranks on the same core")
    return validate_mapping(os.path.basename(path), cores, n_ranks, allocation)
