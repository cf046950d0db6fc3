"""Machine descriptions: parse a spec string or TOML file into a :class:`Machine`.

Spec strings (see ``rankmap compare --help``):

* ``torus:8x16x32[:cores=4][:bw=425MB/s][:lat=100ns][:wrap=xz]`` — torus, all dims wrap
  unless ``wrap=`` names the ones that do (letters X, Y, Z or A..F, or ``none``);
* every kind takes ``node=pack:2,numa:2,core:16`` (lstopo-style synthetic levels) or
  ``node=FILE.xml`` (hwloc XML): the packages, NUMA domains and cores inside each node
  (:mod:`~rankmap.machines.node_structure`);
* ``mesh:8x8x8[...]`` — the same with no wrap unless ``wrap=`` names some;
* ``bgp:N`` / ``bgl:N`` — Blue Gene/P and /L partitions (``bgp:4096`` = 8x16x32, 4 cores);
* a ``.toml`` file with ``machine = "<spec>"`` and optionally ``node = "pack:2 numa:2
  core:16"`` (or ``node = "node.xml"``, found beside the TOML file).

Dragonflies (``dragonfly:``, ``xc:``) and fat trees (``fattree:``) are parsed by
:mod:`~rankmap.machines.dragonfly_spec`, :mod:`~rankmap.machines.xc` and
:mod:`~rankmap.machines.fattree_spec`; :data:`MACHINE_KINDS` is the fixed table of parsers.
"""

from __future__ import annotations

import os
import tomllib
from types import MappingProxyType
from typing import Callable

from ..errors import RankmapError
from ..specs import Spec, files_beside, parse_int, parse_shape, split_spec
from .base import GridMachine, Machine
from .dragonfly import Dragonfly
from .dragonfly_spec import parse_dragonfly
from .fattree import FatTree, TreeMachine
from .fattree_spec import parse_fattree
from .node_structure import NodeStructure
from .options import common_options, extract_node_text
from .presets import PRESETS
from .torus import DEFAULT_HOP_LATENCY, LETTER_SETS, Torus
from .xc import parse_xc

__all__ = ["Machine", "GridMachine", "Torus", "Dragonfly", "TreeMachine", "FatTree",
           "NodeStructure", "parse_machine", "MACHINE_KINDS"]


def _wrap_flags(spec: Spec, ndim: int, default: bool) -> tuple[bool, ...]:
    value = spec.pop_option("wrap")
    if value is None:
        return (default,) * ndim
    letters = LETTER_SETS[ndim]
    v = value.upper()
    if v in ("NONE", "0", "FALSE"):
        return (False,) * ndim
    if v in ("ALL", "1", "TRUE"):
        return (True,) * ndim
    bad = [ch for ch in v if ch not in letters]
    if bad:
        raise RankmapError(f"bad wrap {value!r} in {spec.text!r}: use letters of {letters}, "
                           "'all' or 'none'")
    twice = next((ch for ch in v if v.count(ch) > 1), None)
    if twice is not None:
        raise RankmapError(f"bad wrap {value!r} in {spec.text!r}: {twice} is named twice")
    return tuple(ch in v for ch in letters)


def _parse_grid_machine(spec: Spec) -> Machine:
    if not spec.words:
        raise RankmapError(f"bad machine {spec.text!r}: give a shape, e.g. {spec.kind}:8x8x8")
    dims = parse_shape(spec.words.pop(0), "machine shape", max_dims=6, cap="nodes",
                       subject=spec.text)
    wrap = _wrap_flags(spec, len(dims), default=(spec.kind == "torus"))
    opts = common_options(spec)
    spec.reject_leftovers("machine")
    return Torus(dims, wrap=wrap, spec=spec.text, **opts)


def _parse_preset(spec: Spec) -> Machine:
    shapes, cores, label, link_bw = PRESETS[spec.kind]
    if not spec.words:
        raise RankmapError(f"bad machine {spec.text!r}: give a node count, e.g. {spec.kind}:"
                           f"{next(iter(shapes))}")
    word = spec.words.pop(0)
    n = parse_int(word, f"{label} node count", minimum=1)
    if n not in shapes:
        raise RankmapError(f"no {label} partition of {n} nodes: choose from "
                           f"{', '.join(str(k) for k in shapes)}")
    opts = {"cores_per_node": cores, "bandwidth": link_bw,
            "hop_latency_s": DEFAULT_HOP_LATENCY}
    opts.update(common_options(spec))
    spec.reject_leftovers("machine")
    return Torus(shapes[n], spec=spec.text, name=f"{label} {n}", **opts)


#: machine kind -> parser taking a split :class:`Spec` (a fixed table: parsers import the
#: classes they build, nothing registers itself here).
MACHINE_KINDS: "MappingProxyType[str, Callable[[Spec], Machine]]" = MappingProxyType({
    "torus": _parse_grid_machine,
    "mesh": _parse_grid_machine,
    "bgp": _parse_preset,
    "bgl": _parse_preset,
    "dragonfly": parse_dragonfly,
    "xc": parse_xc,
    "fattree": parse_fattree,
})


def parse_machine(text: str | Machine) -> Machine:
    """Build a machine from its spec.

    Parameters
    ----------
    text : str or Machine
        A spec (``torus:8x8x8:cores=2``, ``bgp:4096``, ``dragonfly:...``, ``fattree:...``,
        ``xc:...``) or a ``.toml`` file holding ``machine = "..."``; a Machine is returned
        as it is.

    Returns
    -------
    Machine
        The machine.

    Raises
    ------
    RankmapError
        An unknown kind or a bad option (one line naming it).
    """

    if isinstance(text, Machine):
        return text
    if not isinstance(text, str) or not text.strip():
        raise RankmapError("empty machine spec")
    text = text.strip()      # a trailing space after node=... read as part of its levels
    if text.endswith(".toml"):
        return _machine_from_toml(text)
    rest, node = extract_node_text(text)
    spec = split_spec(rest, "machine")
    if node is not None:
        if "node" in spec.options:
            from ..validate import show
            raise RankmapError(f"bad machine {show(text)}: option 'node' given twice")
        spec.options["node"] = node
        spec.text = text.strip()
    parser = MACHINE_KINDS.get(spec.kind)
    if parser is None:
        from ..validate import show
        raise RankmapError(f"unknown machine kind {show(spec.kind, 40)} in {show(text)}: choose from "
                           f"{', '.join(sorted(MACHINE_KINDS))}")
    return parser(spec)


#: machine files being read (real paths): a file naming itself is an error, not a recursion.
_READING: list[str] = []


def _machine_from_toml(path: str) -> Machine:
    from ..validate import check_input_file, read_text, show

    check_input_file(path, "machine file")
    real = os.path.realpath(path)
    if real in _READING or len(_READING) >= 8:
        raise RankmapError(f"machine file {show(path)} names itself (through "
                           f"{' -> '.join(os.path.basename(p) for p in _READING)})")
    try:
        data = tomllib.loads(read_text(path, "machine file"))
    except tomllib.TOMLDecodeError as exc:
        raise RankmapError(f"machine file {show(path)} is not valid TOML: {exc}") from None
    except RecursionError:
        raise RankmapError(f"machine file {show(path)} nests too deeply") from None
    unknown = sorted(set(data) - {"machine", "node"})
    if unknown:
        raise RankmapError(f"machine file {show(path)}: unknown key {show(unknown[0])} "
                           "(a machine file has machine = \"<spec>\" and optionally node = ...)")
    spec = data.get("machine")
    if not isinstance(spec, str):
        raise RankmapError(f"machine file {show(path)} needs a line machine = \"<spec>\"")
    node = data.get("node")
    if node is not None:
        if not isinstance(node, str) or not node.strip():
            raise RankmapError(f"machine file {show(path)}: node must be a string such as "
                               "\"pack:2 numa:2 core:16\" or \"node.xml\"")
        # node = "node.xml" is beside the machine file: files_beside joins it below, once
        spec = f"{spec}:node={node.strip()}"
    # the files the spec names (node=X.xml, topology=FILE) are beside the machine file too
    spec = files_beside(spec, os.path.dirname(path))
    _READING.append(real)
    try:
        return parse_machine(spec)
    finally:
        _READING.pop()
