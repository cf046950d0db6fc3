"""``rubik: ...``: a small placement algebra in the spirit of Rubik (seed 000, section VII-A).

A spec is a list of statements separated by ``;``::

    rubik: app tile 1,8,16; net tile 8,8,2; tilt z x 1

* ``app tile S`` / ``app div K`` / ``app mod K`` partition the application's process grid
  into tiles of shape S, into K[d] equal blocks per dimension, or into interleaved sets
  (element c goes to set c mod K). ``net ...`` does the same to the network box: the
  allocated box of nodes with the cores of a node as a last dimension T (shapes list X, Y,
  Z, ... and may add T; a missing T means all cores). Without a partition a side is one leaf.
* The leaves of both sides are taken in order and paired (they must be equally many and of
  equal size); the elements of paired leaves are paired in order. Application elements are
  numbered as MPI numbers ranks (last dimension fastest), network elements X fastest, T last,
  so ``rubik:`` with no statement is the rank order XYZT.
* ``tilt A B S`` shifts the plane at index k normal to axis A by S*k along axis B; ``zigzag A
  B S`` shifts every odd plane normal to A by S along B; ``transpose A B`` swaps axes A and B
  (both of the same length). These act on the network box before pairing: the core found at
  a box position after the operations is the one the paired rank gets. Axes are the
  machine's letters and T.

Presets on a 3-D torus, after seed 000's pF3D mappings (the application grid must have 3
dimensions; the tile sizes follow the grid and box, see :func:`preset_spec`):
``rubik-txyz``, ``rubik-xyzt``, ``rubik-tile``, ``rubik-tile2``, ``rubik-tilt-zx``,
``rubik-tilt-xz``, ``rubik-zig-xz``.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import numpy as np

from ..errors import RankmapError
from .geometry import allocation_box, box_core_array

__all__ = ["Rubik", "RubikPreset", "PRESETS", "parse_rubik", "rubik_cores", "preset_spec",
           "applicable_presets"]

#: names of the presets, after seed 000's pF3D mappings (see :func:`preset_spec`)
PRESETS = ("rubik-txyz", "rubik-xyzt", "rubik-tile", "rubik-tile2", "rubik-tilt-zx",
           "rubik-tilt-xz", "rubik-zig-xz")


def _shape(text: str, ndim: int, what: str) -> tuple[int, ...]:
    from ..validate import limit, parse_int_text, show
    items = re.split(r"[,x]", text.strip())
    if any(not v.strip() for v in items):      # '4,,4' was read as 4,4
        raise RankmapError(f"bad {what} {show(text, 40)}: an empty size")
    vals = tuple(parse_int_text(v, f"{what} {show(text, 40)}: size", maximum=limit("ranks"))
                 for v in items)
    if any(v <= 0 for v in vals):
        raise RankmapError(f"bad {what} {text!r}: sizes must be positive")
    return vals


def _leaves(shape: tuple[int, ...], op: tuple[str, tuple[int, ...]] | None,
            fastest_first: bool) -> np.ndarray:
    """Flat element indices (C order over ``shape``) grouped by leaf: (leaves, leaf size)."""
    nd = len(shape)
    if op is None:
        kind, part = "tile", shape
    else:
        kind, part = op
    if len(part) != nd:
        raise RankmapError(f"{kind} {','.join(map(str, part))} has {len(part)} sizes, the "
                           f"space {'x'.join(map(str, shape))} has {nd} dimensions")
    if any(s % p for s, p in zip(shape, part)):
        raise RankmapError(f"{kind} {','.join(map(str, part))} does not divide "
                           f"{'x'.join(map(str, shape))}")
    if kind == "div":
        kind, part = "tile", tuple(s // p for s, p in zip(shape, part))
    idx = np.indices(shape).reshape(nd, -1).T                 # C order
    if kind == "tile":
        leaf = idx // np.array(part)
        inner = idx % np.array(part)
        leaf_shape, inner_shape = tuple(s // p for s, p in zip(shape, part)), part
    else:  # mod
        leaf = idx % np.array(part)
        inner = idx // np.array(part)
        leaf_shape, inner_shape = part, tuple(s // p for s, p in zip(shape, part))

    def number(c, sh):
        if fastest_first:
            return np.ravel_multi_index(tuple(c.T[::-1]), tuple(sh)[::-1])
        return np.ravel_multi_index(tuple(c.T), tuple(sh))

    key_leaf, key_inner = number(leaf, leaf_shape), number(inner, inner_shape)
    flat = np.arange(len(idx))
    order = np.lexsort((key_inner, key_leaf))
    n_leaves = int(np.prod(leaf_shape))
    return flat[order].reshape(n_leaves, -1)


def _axis(letter: str, axes: str, spec: str) -> int:
    a = letter.strip().upper()
    if len(a) != 1 or a not in axes:
        raise RankmapError(f"bad axis {letter!r} in {spec!r}: choose from {', '.join(axes)}")
    return axes.index(a)


def _permute(box: np.ndarray, op: str, args: list[str], axes: str, spec: str) -> np.ndarray:
    """Apply tilt / zigzag / transpose to the core array ``box``."""
    if op == "transpose":
        if len(args) != 2:
            raise RankmapError(f"bad transpose in {spec!r}: expected two axes, e.g. transpose x y")
        a, b = (_axis(x, axes, spec) for x in args)
        if a == b:                                  # as tilt and zigzag say it
            raise RankmapError(f"bad transpose in {spec!r}: the two axes must differ")
        if box.shape[a] != box.shape[b]:
            raise RankmapError(f"transpose {args[0]} {args[1]} in {spec!r}: axes of different "
                               f"lengths {box.shape[a]} and {box.shape[b]}")
        return np.swapaxes(box, a, b)
    if len(args) != 3:
        raise RankmapError(f"bad {op} in {spec!r}: expected two axes and a shift, e.g. {op} z x 1")
    a, b = _axis(args[0], axes, spec), _axis(args[1], axes, spec)
    if a == b:
        raise RankmapError(f"bad {op} in {spec!r}: the two axes must differ")
    from ..validate import parse_int_text, show
    # the shift only matters modulo the axis length: bound it so int64 cannot overflow
    s = parse_int_text(args[2], f"shift in {show(spec, 60)}:", minimum=-(1 << 40),
                       maximum=1 << 40) % box.shape[b]
    idx = np.indices(box.shape)
    k = idx[a]
    shift = s * k if op == "tilt" else s * (k % 2)
    idx[b] = (idx[b] + shift) % box.shape[b]
    return box[tuple(idx)]


def parse_rubik(spec: str):
    """Parse a rubik spec into its partitions and box operations.

    Parameters
    ----------
    spec : str
        ``rubik: STATEMENT; STATEMENT; ...`` (see the module docstring).

    Returns
    -------
    app_op : tuple of (str, tuple of int) or None
        The application partition (``"tile"``, ``"div"`` or ``"mod"``, sizes), None for one leaf.
    net_op : tuple of (str, tuple of int) or None
        The network box partition, likewise.
    ops : list of (str, list of str)
        ``tilt`` / ``zigzag`` / ``transpose`` operations with their words, in order.

    Raises
    ------
    RankmapError
        An unknown statement or malformed sizes.
    """
    body = spec.split(":", 1)[1] if ":" in spec else ""
    app_op = net_op = None
    ops = []
    for stmt in [s.strip() for s in body.split(";") if s.strip()]:
        words = stmt.split()
        head = words[0].lower()
        if head in ("app", "net"):
            if len(words) != 3 or words[1].lower() not in ("tile", "div", "mod"):
                raise RankmapError(f"bad statement {stmt!r} in {spec!r}: expected "
                                   f"'{head} tile|div|mod SIZES'")
            op = (words[1].lower(), _shape(words[2], 0, f"{head} {words[1]} sizes"))
            if (app_op if head == "app" else net_op) is not None:   # the first was dropped
                raise RankmapError(f"bad spec {spec!r}: two '{head}' statements; give one "
                                   f"(the {'application' if head == 'app' else 'network'} "
                                   "partition)")
            if head == "app":
                app_op = op
            else:
                net_op = op
        elif head in ("tilt", "zigzag", "transpose"):
            ops.append((head, words[1:]))
        else:
            raise RankmapError(f"bad statement {stmt!r} in {spec!r}: use app/net tile|div|mod, "
                               "tilt, zigzag or transpose")
    return app_op, net_op, ops


def rubik_cores(spec: str, pattern, machine, allocation) -> np.ndarray:
    """Core of every rank under a rubik spec (see the module docstring).

    Parameters
    ----------
    spec : str
        The rubik statements.
    pattern : Pattern
        The pattern; it needs a Cartesian grid.
    machine : Machine
        The machine (its letters name the box axes).
    allocation : Allocation
        A box of nodes with as many cores as the grid has ranks.

    Returns
    -------
    numpy.ndarray
        int64 allocation core of every rank.

    Raises
    ------
    RankmapError
        No grid, no box, or shapes that do not pair (the message names both shapes).
    """
    app_op, net_op, ops = parse_rubik(spec)
    if pattern.grid is None:
        raise RankmapError(f"rubik needs a Cartesian process grid; {pattern.spec!r} has none")
    box = allocation_box(machine, allocation)
    if isinstance(box, str):
        raise RankmapError(f"rubik needs a box of nodes: {box}")
    origin, shape = box
    cores = box_core_array(machine, allocation, origin, shape)     # (*shape, T)
    axes = machine.letters + "T"
    for op, args in ops:
        cores = _permute(cores, op, args, axes, spec)
    nshape = cores.shape
    if net_op is not None and len(net_op[1]) == len(nshape) - 1:
        net_op = (net_op[0], net_op[1] + ((nshape[-1],) if net_op[0] == "tile" else (1,)))
    grid = tuple(pattern.grid)
    if pattern.n_ranks != int(np.prod(nshape)):
        raise RankmapError(f"rubik pairs every rank with a core: the grid "
                           f"{'x'.join(map(str, grid))} has {pattern.n_ranks} ranks, the "
                           f"network box {'x'.join(map(str, nshape))} has "
                           f"{int(np.prod(nshape))} cores")
    app = _leaves(grid, app_op, fastest_first=False)
    net = _leaves(tuple(nshape), net_op, fastest_first=True)
    if app.shape != net.shape:
        raise RankmapError(f"rubik: the application grid {'x'.join(map(str, grid))} gives "
                           f"{app.shape[0]} leaves of {app.shape[1]}, the network box "
                           f"{'x'.join(map(str, nshape))} gives {net.shape[0]} leaves of "
                           f"{net.shape[1]}")
    core_of_rank = np.empty(pattern.n_ranks, dtype=np.int64)
    core_of_rank[app.reshape(-1)] = cores.reshape(-1)[net.reshape(-1)]
    return core_of_rank


def _cube_tile(n: int, box: tuple[int, ...]) -> tuple[int, ...] | None:
    """The most cube-like tile of ``n`` elements whose sides divide ``box``."""
    best, key = None, None
    for shp in itertools.product(*[[d for d in range(1, b + 1) if b % d == 0] for b in box]):
        if int(np.prod(shp)) == n:
            k = (max(shp), sum(shp))
            if key is None or k < key:
                best, key = shp, k
    return best


def preset_spec(name: str, pattern, machine, allocation) -> str:
    """The rubik statements of a preset for this grid and box (or raise RankmapError).

    Tile: app tiles are the grid's planes normal to its first dimension (1 x g1 x g2), net
    tiles the most cube-like boxes (with all cores of a node) of the same size. Tile2: app
    tiles are lines along the last dimension (1 x 1 x g2). Tilt-ZX / Tilt-XZ / Zig-XZ: Tile
    followed by ``tilt z x 1`` / ``tilt x z 1`` / ``zigzag x z 1``. TXYZ: net transposed so
    that the cores of a node come first (``app mod 1,1,T; net mod 1,1,1,T``).

    Parameters
    ----------
    name : str
        A preset name from :data:`PRESETS`.
    pattern : Pattern
        The pattern (a 3-D grid).
    machine : Machine
        A 3-D machine.
    allocation : Allocation
        A box of nodes.

    Returns
    -------
    str
        The rubik spec (``rubik: app tile ...``).
    """
    grid = pattern.grid
    if grid is None or len(grid) != 3 or len(machine.letters) != 3:
        raise RankmapError(f"the rubik presets need a 3-D grid on a 3-D machine "
                           f"({pattern.spec!r} on {machine.spec!r})")
    box = allocation_box(machine, allocation)
    if isinstance(box, str):
        raise RankmapError(f"rubik needs a box of nodes: {box}")
    shape = tuple(int(v) for v in box[1])
    cpn = allocation.cores_per_node
    if name == "rubik-xyzt":
        return "rubik:"
    if name == "rubik-txyz":
        # leaves of one element per core line: T varies fastest
        if cpn == 1:
            return "rubik:"
        return f"rubik: app mod {','.join(map(str, _txyz_split(grid, cpn)))}; net mod 1,1,1,{cpn}"
    tile_app = (1, grid[1], grid[2]) if name != "rubik-tile2" else (1, 1, grid[2])
    n_tile = int(np.prod(tile_app))
    if n_tile % cpn:
        raise RankmapError(f"{name}: tile of {n_tile} ranks is not a multiple of {cpn} cores")
    net = _cube_tile(n_tile // cpn, shape)
    if net is None:
        raise RankmapError(f"{name}: no tile of {n_tile // cpn} nodes divides the box "
                           f"{'x'.join(map(str, shape))}")
    base = f"rubik: app tile {','.join(map(str, tile_app))}; net tile {','.join(map(str, net))}"
    extra = {"rubik-tile": "", "rubik-tile2": "", "rubik-tilt-zx": "; tilt z x 1",
             "rubik-tilt-xz": "; tilt x z 1", "rubik-zig-xz": "; zigzag x z 1"}[name]
    return base + extra


def _txyz_split(grid, cpn):
    """App interleave factors for TXYZ: the last grid index mod cpn picks the core, so the
    cpn consecutive ranks share a node."""
    if grid[2] % cpn:
        raise RankmapError(f"rubik-txyz needs the grid's last dimension ({grid[2]}) to be a "
                           f"multiple of {cpn} cores per node")
    return (1, 1, cpn)


@dataclass(frozen=True)
class Rubik:
    """A ``rubik: ...`` placement as a value: ``Rubik("rubik: app tile 1,8,16; tilt z x 1")``.

    The statements are checked when the value is built (a syntax error names the statement);
    shapes are checked against the grid and box when it is called.
    """

    spec: str

    def __post_init__(self):
        parse_rubik(self.spec)

    @property
    def name(self) -> str:
        """The spec with runs of white space made one space (the name tables show)."""
        return " ".join(self.spec.split())

    def __call__(self, pattern, machine, allocation, seed: int = 0) -> np.ndarray:
        """Core of every rank under the spec.

        Parameters
        ----------
        pattern : Pattern
            The pattern; it needs a Cartesian grid.
        machine : Machine
            The machine (its letters name the box axes).
        allocation : Allocation
            The allocation; it must be a box of nodes with as many cores as the grid has ranks.
        seed : int
            Unused (the placement is deterministic).

        Returns
        -------
        numpy.ndarray
            int64 allocation core of every rank.
        """
        return rubik_cores(self.spec, pattern, machine, allocation)


@dataclass(frozen=True)
class RubikPreset:
    """One of seed 000's pF3D mappings (:data:`PRESETS`) as a value: ``RubikPreset("rubik-tile")``.

    Its rubik statements depend on the grid and the box (:func:`preset_spec`).
    """

    name: str

    def __post_init__(self):
        if self.name not in PRESETS:
            raise RankmapError(f"unknown rubik preset {self.name!r}: choose from "
                               f"{', '.join(PRESETS)}")

    def rubik(self, pattern, machine, allocation) -> Rubik:
        """The preset's statements for this grid and box.

        Parameters
        ----------
        pattern : Pattern
            The pattern (a 3-D grid).
        machine : Machine
            A 3-D machine.
        allocation : Allocation
            A box of nodes.

        Returns
        -------
        Rubik
            The placement the preset stands for here.
        """
        return Rubik(preset_spec(self.name, pattern, machine, allocation))

    def __call__(self, pattern, machine, allocation, seed: int = 0) -> np.ndarray:
        """Core of every rank under the preset.

        Parameters
        ----------
        pattern : Pattern
            The pattern (a 3-D grid).
        machine : Machine
            A 3-D machine.
        allocation : Allocation
            A box of nodes with as many cores as the grid has ranks.
        seed : int
            Unused.

        Returns
        -------
        numpy.ndarray
            int64 allocation core of every rank.
        """
        return self.rubik(pattern, machine, allocation)(pattern, machine, allocation, seed)

    def reason_not_applicable(self, pattern, machine, allocation) -> str | None:
        """Why the preset cannot place ``pattern`` here (computes the placement), or None.

        Parameters
        ----------
        pattern : Pattern
            The pattern.
        machine : Machine
            The machine.
        allocation : Allocation
            The allocation.

        Returns
        -------
        str or None
            The error the placement raises, or None when it succeeds.
        """
        try:
            self(pattern, machine, allocation, 0)
        except RankmapError as exc:
            return str(exc)
        return None


def applicable_presets(pattern, machine, allocation) -> list[str]:
    """Presets whose statements can be built here.

    A cheap test: the placement itself is only computed when the preset is evaluated; a
    leaf mismatch then shows as skipped.

    Parameters
    ----------
    pattern : Pattern
        The pattern.
    machine : Machine
        The machine.
    allocation : Allocation
        The allocation.

    Returns
    -------
    list of str
        Preset names, in :data:`PRESETS` order.
    """
    out = []
    for name in PRESETS:
        try:
            preset_spec(name, pattern, machine, allocation)
        except RankmapError:
            continue
        if pattern.n_ranks == allocation.n_cores:
            out.append(name)
    return out
