"""Reading a compute node's structure from hwloc's XML (``lstopo --of xml > node.xml``).

Only ``object`` elements of types ``Package`` (``Socket`` in hwloc 1.x), ``NUMANode``,
``Core`` and ``PU`` are read, by their ``cpuset`` bitmaps (hwloc's ``0xffffffff,0x000000ff``
form: 32-bit hex words, most significant first). Caches, groups and I/O objects are skipped:
a core's package is the package whose cpuset holds the core's, its NUMA domain the NUMA node
whose cpuset meets it (hwloc 2 attaches NUMA nodes as memory children, hwloc 1.x as parents;
both give these cpusets). Cores are ordered by package, then as the file lists them (hwloc's
logical order). A node without cores lists its PUs as cores; without packages it is one
package, without NUMA nodes one domain.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import numpy as np

from ..errors import RankmapError
from ..validate import check_input_file, check_limit, read_text, show
from .node_structure import NodeStructure

__all__ = ["parse_cpuset", "read_hwloc_xml", "node_structure_from_xml"]


def parse_cpuset(text: str | None, where: str) -> int:
    """An hwloc bitmap (``0x00000003``, ``0xffffffff,0x0000000f``; empty words are 0) as an int.

    Parameters
    ----------
    text : str or None
        The attribute value.
    where : str
        What is being read, for the error message.

    Returns
    -------
    int
        The set of PU indices as bits (0 when absent).
    """
    if text is None or not text.strip():
        return 0
    value = 0
    words = text.strip().split(",")
    if len(words) > 4096:
        raise RankmapError(f"{where}: cpuset {show(text, 40)} is too long")
    for word in words:
        word = word.strip()
        if word.lower().startswith("0x"):
            word = word[2:]
        if word and (len(word) > 8 or any(ch not in "0123456789abcdefABCDEF" for ch in word)):
            raise RankmapError(f"{where}: bad cpuset {show(text, 40)} (expected hwloc's "
                               "0xffffffff,0x0000000f form)")
        value = (value << 32) | (int(word, 16) if word else 0)
    return value


def node_structure_from_xml(text: str, source: str) -> NodeStructure:
    """Parse the text of an hwloc XML topology.

    Parameters
    ----------
    text : str
        The XML document.
    source : str
        Its name (file), kept in the structure and named in errors.

    Returns
    -------
    NodeStructure
    """
    if "<!DOCTYPE" in text and "<!ENTITY" in text:
        raise RankmapError(f"hwloc XML {show(source)} declares entities: not an hwloc file")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise RankmapError(f"hwloc XML {show(source)} is not valid XML: {exc}") from None
    if root.tag != "topology":
        raise RankmapError(f"{show(source)} is not an hwloc XML topology (root <{root.tag[:40]}>, "
                           "expected <topology>; write it with lstopo --of xml)")
    objects: dict[str, list[int]] = {"package": [], "numa": [], "core": [], "pu": []}
    kinds = {"Package": "package", "Socket": "package", "NUMANode": "numa", "Core": "core",
             "PU": "pu"}
    # hwloc 1.x and 2.x XML v2 put objects in <object>; the first topology object may be the
    # Machine, and a file may hold several topologies (hwloc 2 XML v2 diffs): read the first
    top = root.find("object")
    if top is None:
        raise RankmapError(f"hwloc XML {show(source)} holds no <object>")
    for el in top.iter("object"):
        kind = kinds.get(el.get("type", ""))
        if kind is not None:
            cpuset = parse_cpuset(el.get("cpuset"), f"hwloc XML {source}")
            if cpuset:
                objects[kind].append(cpuset)
    cores = objects["core"] or objects["pu"]
    if not cores:
        raise RankmapError(f"hwloc XML {show(source)} has no Core or PU objects with a cpuset")
    for kind, sets in objects.items():
        check_limit(len(sets), "cores", f"hwloc XML {source} ({kind} objects)")
    packages = objects["package"] or [_union(cores)]
    numas = objects["numa"] or [_union(cores)]
    first = np.array([(c & -c).bit_length() - 1 for c in cores], dtype=np.int64)
    pk = _owners(packages, first, "package", source)
    nu = _owners(numas, first, "NUMA node", source)
    order = np.lexsort((np.arange(len(cores)), pk))
    pk, nu = _renumber(pk[order]), _renumber(nu[order])
    pus = 1
    if objects["core"] and objects["pu"]:
        pus = max(1, len(objects["pu"]) // len(objects["core"]))
    return NodeStructure(tuple(pk.tolist()), tuple(nu.tolist()), pus,
                         os.path.basename(source))


#: most PU bits read over all packages or NUMA nodes of a file
MAX_BITS = 1 << 24


def _bits(x: int) -> np.ndarray:
    """Indices of the set bits of ``x`` (int64, ascending)."""
    s = bin(x)[2:][::-1].encode()
    return np.nonzero(np.frombuffer(s, dtype=np.uint8) == ord("1"))[0]


def _owners(sets: list[int], first_pu: np.ndarray, what: str, source: str) -> np.ndarray:
    """Index of the first of ``sets`` holding each core's first PU."""
    size = max(max(s.bit_length() for s in sets), int(first_pu.max()) + 1)
    owner = np.full(size, -1, dtype=np.int64)
    total = 0
    for i, s in enumerate(sets):
        bits = _bits(s)
        total += len(bits)
        if total > MAX_BITS:
            raise RankmapError(f"hwloc XML {show(source)}: {what} cpusets hold more than "
                               f"{MAX_BITS} PUs")
        free = bits[owner[bits] < 0]
        owner[free] = i
    out = owner[first_pu]
    if (out < 0).any():
        bad = int(first_pu[np.nonzero(out < 0)[0][0]])
        raise RankmapError(f"hwloc XML {show(source)}: the core of PU {bad} is in no {what}")
    return out


def _union(sets: list[int]) -> int:
    out = 0
    for s in sets:
        out |= s
    return out


def _renumber(ids: np.ndarray) -> np.ndarray:
    """Ids renumbered 0, 1, ... in order of first appearance."""
    _u, first, inv = np.unique(ids, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inv.reshape(-1)]


def read_hwloc_xml(path: str) -> NodeStructure:
    """The node structure in an hwloc XML file (``lstopo --of xml``).

    Parameters
    ----------
    path : str
        The file.

    Returns
    -------
    NodeStructure
    """
    check_input_file(path, "hwloc XML file")
    return node_structure_from_xml(read_text(path, "hwloc XML file"), path)
