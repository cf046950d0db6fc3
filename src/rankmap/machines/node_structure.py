"""What is inside a compute node: packages (sockets), NUMA domains and cores.

A :class:`NodeStructure` is a value: the package and the NUMA domain of every core of a node,
cores numbered as the node's slots are (``0 .. cores-1``, package by package). It is built
from an lstopo-style synthetic description (:func:`parse_synthetic`, e.g.
``pack:2 numa:2 core:16``) or from an hwloc XML file (:mod:`rankmap.machines.hwloc_xml`), and
given to a machine when it is built (the ``node=`` option of a machine spec).

The time model gives every NUMA domain its own memory bandwidth and joins every two
packages of a node by an inter-socket link; the in-node placement step keeps heavy pairs of
ranks in one domain; Open MPI rankfiles name cores as ``socket:core``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..errors import RankmapError
from ..validate import check_limit, show

__all__ = ["NodeStructure", "parse_synthetic", "LEVEL_NAMES"]

#: synthetic level names (lower case, hwloc's long and short spellings) -> the level's kind
LEVEL_NAMES: dict[str, str] = {
    "pack": "package", "package": "package", "socket": "package",
    "numa": "numa", "numanode": "numa",
    "group": "group", "die": "group",
    "l1": "cache", "l2": "cache", "l3": "cache", "l4": "cache", "l5": "cache",
    "l1d": "cache", "l1i": "cache", "l1cache": "cache", "l2cache": "cache",
    "l3cache": "cache", "l4cache": "cache", "l5cache": "cache", "l1dcache": "cache",
    "l1icache": "cache", "l2dcache": "cache", "l3dcache": "cache",
    "core": "core", "pu": "pu",
}

_TOKEN = re.compile(r"^([A-Za-z][A-Za-z0-9]*)(?:\([^)]*\))?:([^()]+)(?:\([^)]*\))?$", re.ASCII)
_MEMORY = re.compile(r"^\[(?:numa|numanode)(?:\([^)]*\))?\]$", re.IGNORECASE)


@dataclass(frozen=True)
class NodeStructure:
    """Packages and NUMA domains of the cores of one node.

    Parameters
    ----------
    package_of_core : tuple of int
        Package (socket) of every core, numbered 0.. in core order; cores of one package
        are consecutive.
    numa_of_core : tuple of int
        NUMA domain of every core, numbered 0.. in core order.
    pus_per_core : int
        Hardware threads per core (informative: ranks bind to cores).
    source : str
        Where it came from (the synthetic text or the XML file name).
    """

    package_of_core: tuple[int, ...]
    numa_of_core: tuple[int, ...]
    pus_per_core: int = 1
    source: str = ""

    def __post_init__(self):
        pk, nu = self.package_of_core, self.numa_of_core
        if len(pk) == 0:
            raise RankmapError(f"node structure {show(self.source)} has no cores")
        if len(pk) != len(nu):
            raise RankmapError(f"node structure {show(self.source)}: {len(pk)} package entries "
                               f"for {len(nu)} NUMA entries")
        check_limit(len(pk), "cores", f"node structure {self.source}")
        for what, ids in (("package", pk), ("NUMA domain", nu)):
            arr = np.asarray(ids)
            if arr.min() < 0 or set(arr.tolist()) != set(range(int(arr.max()) + 1)):
                raise RankmapError(f"node structure {show(self.source)}: {what} numbers must "
                                   "be 0, 1, ... without gaps")
        if (np.diff(np.asarray(pk)) < 0).any():
            raise RankmapError(f"node structure {show(self.source)}: cores must be numbered "
                               "package by package")
        if self.pus_per_core < 1:
            raise RankmapError(f"node structure {show(self.source)}: bad PUs per core "
                               f"{self.pus_per_core}")

    # ---- sizes -------------------------------------------------------------------------
    @property
    def n_cores(self) -> int:
        """Cores of the node."""
        return len(self.package_of_core)

    @property
    def n_packages(self) -> int:
        """Packages (sockets) of the node."""
        return max(self.package_of_core) + 1

    @property
    def n_domains(self) -> int:
        """NUMA domains of the node."""
        return max(self.numa_of_core) + 1

    @cached_property
    def core_in_package(self) -> np.ndarray:
        """Index of every core within its package (0..), the ``C`` of Open MPI's ``S:C``."""
        pk = np.asarray(self.package_of_core, dtype=np.int64)
        first = np.searchsorted(pk, pk, side="left")
        return np.arange(len(pk), dtype=np.int64) - first

    # ---- slots ---------------------------------------------------------------------------
    def slot_cores(self, threads: int = 1) -> np.ndarray:
        """First core of every slot when each rank takes ``threads`` consecutive cores.

        Parameters
        ----------
        threads : int
            Cores per rank (``--threads``); must divide the node's cores.

        Returns
        -------
        numpy.ndarray
            int64 core of slot ``s`` (= ``s * threads``), length ``cores // threads``.
        """
        if threads < 1 or self.n_cores % threads:
            raise RankmapError(f"bad threads per rank {threads}: must divide the node's "
                               f"{self.n_cores} cores")
        return np.arange(0, self.n_cores, threads, dtype=np.int64)

    def slot_package(self, threads: int = 1) -> np.ndarray:
        """Package of every slot (the package of its first core), int64.

        Parameters
        ----------
        threads : int
            Cores per rank (consecutive).

        Returns
        -------
        numpy.ndarray
            int64 package of every slot.
        """
        return np.asarray(self.package_of_core, dtype=np.int64)[self.slot_cores(threads)]

    def slot_domain(self, threads: int = 1) -> np.ndarray:
        """NUMA domain of every slot (the domain of its first core), int64.

        Parameters
        ----------
        threads : int
            Cores per rank (consecutive).

        Returns
        -------
        numpy.ndarray
            int64 NUMA domain of every slot.
        """
        return np.asarray(self.numa_of_core, dtype=np.int64)[self.slot_cores(threads)]

    def slot_cell(self, threads: int = 1) -> np.ndarray:
        """Cell of every slot: cells are the distinct (package, NUMA domain) pairs, numbered
        in core order; the in-node placement step fills cells.

        Parameters
        ----------
        threads : int
            Cores per rank (consecutive).

        Returns
        -------
        numpy.ndarray
            int64 cell of every slot.
        """
        key = self.slot_package(threads) * self.n_domains + self.slot_domain(threads)
        _u, first, inv = np.unique(key, return_index=True, return_inverse=True)
        rank = np.empty(len(first), dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(len(first))
        return rank[inv.reshape(-1)]

    # ---- text ----------------------------------------------------------------------------
    @cached_property
    def synthetic(self) -> str | None:
        """The lstopo-style synthetic description of the node, as :func:`parse_synthetic`
        reads it back into this node: ``pack:2 numa:2 core:16`` when NUMA domains lie inside
        packages, ``numa:2 pack:2 core:4`` when packages lie inside NUMA domains (groups
        above them are folded into the counts), ``pack:2 core:8`` for one domain; None only
        for an irregular node (packages or domains of unequal sizes, or a domain across
        packages that do not lie inside it), which no such description fits."""
        P, D, C = self.n_packages, self.n_domains, self.n_cores
        c = np.arange(C)
        if C % P or C % D or not np.array_equal(self.package_of_core, c // (C // P)) \
                or not np.array_equal(self.numa_of_core, c // (C // D)):
            return None
        if D == 1:   # one domain for the whole node (no NUMA level)
            parts = [f"pack:{P}", f"core:{C // P}"]
        elif D % P == 0:
            parts = [f"pack:{P}", f"numa:{D // P}", f"core:{C // D}"]
        elif P % D == 0:
            parts = [f"numa:{D}", f"pack:{P // D}", f"core:{C // P}"]
        else:
            return None
        if self.pus_per_core > 1:
            parts.append(f"pu:{self.pus_per_core}")
        return " ".join(parts)

    def describe(self) -> dict:
        """JSON-ready summary: packages, NUMA domains, cores, PUs per core, source, synthetic.

        Returns
        -------
        dict
            ``packages``, ``numa_domains``, ``cores``, ``pus_per_core``, ``source`` and
            ``synthetic`` (:attr:`synthetic`; None, JSON null, for an irregular node).
        """
        return {"packages": self.n_packages, "numa_domains": self.n_domains,
                "cores": self.n_cores, "pus_per_core": self.pus_per_core,
                "source": self.source, "synthetic": self.synthetic}


def parse_synthetic(text: str) -> NodeStructure:
    """A node from an lstopo-style synthetic description.

    Levels from the top, ``TYPE:COUNT`` separated by spaces or commas (``pack:2 numa:2
    core:16``, or hwloc's own export ``Package:2 [NUMANode(memory=...)] L3Cache:1(size=...)
    Core:8 PU:2``). Types: ``pack``/``package``/``socket``, ``numa``/``numanode``,
    ``group``/``die``, caches (``l1``..``l5``, ``l3cache``, ...), ``core``, ``pu``; each
    multiplies the objects below it. A ``[NUMANode]`` after a level gives each object of that
    level one NUMA domain; several in a row (the DDR and HBM memories of a flat-mode node)
    are still one domain an object, whose cores they share (as the XML reader counts them:
    a core's domain is the first NUMA node holding it). Without any NUMA level the node is
    one NUMA domain (hwloc's convention); without ``core`` every PU is a core.

    Parameters
    ----------
    text : str
        The description.

    Returns
    -------
    NodeStructure
    """
    tokens = [t for t in re.split(r"[\s,]+", str(text).strip()) if t]
    if not tokens:
        raise RankmapError("empty node structure: give levels like pack:2 numa:2 core:16")
    count = 1          # objects at the current level (per node)
    packages = numa = cores = None
    pus = 1
    seen: set[str] = set()
    last = None
    for tok in tokens:
        if _MEMORY.match(tok):
            if numa is not None and last != "memory":
                raise RankmapError(f"bad node structure {show(text)}: NUMA domains given twice")
            numa = count        # more memories of the same objects: the same domains
            last = "memory"
            continue
        m = _TOKEN.match(tok)
        if not m:
            raise RankmapError(f"bad node structure level {show(tok, 40)} in {show(text)}: "
                               "expected TYPE:COUNT such as pack:2")
        name, n_text = m.group(1).lower(), m.group(2)
        kind = LEVEL_NAMES.get(name)
        if kind is None:
            raise RankmapError(f"unknown node structure level {show(m.group(1), 40)} in "
                               f"{show(text)}: use pack, numa, group, l1..l5, core, pu")
        if not (n_text.isascii() and n_text.isdigit()) or len(n_text) > 7 or int(n_text) < 1:
            raise RankmapError(f"bad count {show(n_text, 20)} of {name} in {show(text)}: "
                               "must be a whole number, 1 or more")
        n = int(n_text)
        if last == "pu":
            raise RankmapError(f"bad node structure {show(text)}: pu must be the last level")
        if kind in ("package", "numa", "core", "pu") and kind in seen:
            raise RankmapError(f"bad node structure {show(text)}: {name} given twice")
        if kind == "pu":
            pus = n
            if cores is None:
                cores = count * n
                pus = 1
        else:
            if cores is not None:
                raise RankmapError(f"bad node structure {show(text)}: only pu may come "
                                   f"below core, not {name}")
            count *= n      # checked against the cores' limit once the cores are known
            if kind == "package":
                if numa is not None and count % numa:
                    raise RankmapError(f"bad node structure {show(text)}")
                packages = count
            elif kind == "numa":
                numa = count
            elif kind == "core":
                cores = count
        seen.add(kind)
        last = kind
    if cores is None:
        raise RankmapError(f"bad node structure {show(text)}: give core:N (cores of each "
                           "object above)")
    check_limit(cores, "cores", f"node structure {text}")
    c = np.arange(cores, dtype=np.int64)
    package = c // (cores // (packages or 1))
    domain = c // (cores // (numa or 1))
    return NodeStructure(tuple(package.tolist()), tuple(domain.tolist()), pus,
                         " ".join(tokens))
