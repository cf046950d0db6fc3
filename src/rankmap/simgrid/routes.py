"""Do SimGrid's routes equal rankmap's? A check that validation compares like with like.

SimGrid names its links its own way, so routes are compared up to a renaming of links: two
routings of a set of host pairs agree when their links can be matched one to one so that
every matched pair has the same bandwidth and is crossed by exactly the same host pairs (in
rankmap, with weight 1: a split route such as ECMP never agrees). Equal signatures mean
max-min sharing sees the same resources, so both sides solve the same sharing problem.

SimGrid's routes come from ``programs/routes.cpp`` (the s4u ``Host::route_to`` API),
compiled with the C++ compiler against ``-lsimgrid`` on first use.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..routing import router_for
from ..errors import RankmapError
from ..threads import child_environ
from .build import compiled_program, find_tool
from .platform import platform_xml

__all__ = ["RouteAgreement", "simgrid_routes", "compare_routes", "sample_pairs"]


@dataclass
class RouteAgreement:
    """Links used by the host pairs on each side and how many of them have a match."""

    pairs: int
    rankmap_links: int
    simgrid_links: int
    matched: int

    @property
    def identical(self) -> bool:
        """True when every used link of both sides has a counterpart."""
        return self.matched == self.rankmap_links == self.simgrid_links

    def describe(self) -> str:
        """One line for reports.

        Returns
        -------
        str
            Whether the routes are identical, else how many links of each side carry the same
            host pairs.
        """
        if self.identical:
            return (f"routes identical on {self.pairs} host pairs ({self.matched} links, "
                    "up to naming)")
        return (f"routes differ, checked on {self.pairs} host pairs: {self.matched} of "
                f"{self.rankmap_links} rankmap links and {self.simgrid_links} SimGrid links "
                "carry the same pairs")


def simgrid_routes(machine, pairs) -> list[list[tuple[str, float]]]:
    """SimGrid's route of every (src, dst) host pair.

    Parameters
    ----------
    machine : Machine
        A machine SimGrid can model (:func:`rankmap.simgrid.platform.check_supported`).
    pairs : array_like of int, shape (P, 2)
        Source and destination node ids.

    Returns
    -------
    list of list of tuple
        For each pair, its links in order as (link name, bandwidth in bytes/s).

    Raises
    ------
    RankmapError
        When SimGrid or a C++ compiler is missing, or the route dump fails or gives a wrong
        number of routes.
    """
    find_tool("smpicc")  # says what to install when SimGrid is missing
    exe = compiled_program("routes", ".cpp", "c++", ("-lsimgrid",))
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    with tempfile.TemporaryDirectory(prefix="rankmap-routes-") as tmp:
        plat, plist = os.path.join(tmp, "platform.xml"), os.path.join(tmp, "pairs")
        with open(plat, "w") as fh:
            fh.write(platform_xml(machine))
        np.savetxt(plist, pairs, fmt="%d")
        proc = subprocess.run([exe, plat, plist, "--log=root.thres:critical"],
                              capture_output=True, text=True, env=child_environ())
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RankmapError(f"SimGrid route dump failed (exit {proc.returncode}): {tail}")
    routes = []
    for line in proc.stdout.splitlines():
        fields = line.split()
        routes.append([(name, float(bw)) for name, bw in
                       (f.rsplit("@", 1) for f in fields[2:])])
    if len(routes) != len(pairs):
        raise RankmapError(f"SimGrid route dump gave {len(routes)} routes for {len(pairs)} pairs")
    return routes


def _rankmap_signatures(machine, pairs, routing) -> Counter:
    P = router_for(machine, routing).paths(pairs[:, 0], pairs[:, 1]).tocsc()
    sigs = Counter()
    for link in np.nonzero(np.diff(P.indptr))[0]:
        lo, hi = P.indptr[link], P.indptr[link + 1]
        rows = P.indices[lo:hi]
        if not np.allclose(P.data[lo:hi], 1.0):
            sigs[("split", int(link))] += 1  # a fractional route never matches SimGrid
            continue
        sigs[(tuple(sorted(rows.tolist())), round(float(machine.link_bandwidth[link]), 3))] += 1
    return sigs


def _simgrid_signatures(routes) -> Counter:
    users: dict[str, list[int]] = {}
    bandwidth: dict[str, float] = {}
    for f, route in enumerate(routes):
        for name, bw in route:
            users.setdefault(name, []).append(f)
            bandwidth[name] = bw
    return Counter((tuple(sorted(rows)), round(bandwidth[name], 3))
                   for name, rows in users.items())


def compare_routes(machine, pairs, routing: str | None = None) -> RouteAgreement:
    """Compare rankmap's and SimGrid's routes of the (src, dst) node pairs (module docstring).

    Pairs with ``src == dst`` are dropped (they use the loopback, not the network).

    Parameters
    ----------
    machine : Machine
        A machine SimGrid can model.
    pairs : array_like of int, shape (P, 2)
        Source and destination node ids.
    routing : str, optional
        rankmap routing to compare (default: the machine's default routing).

    Returns
    -------
    RouteAgreement
        Used links on each side and how many match (same pairs, same bandwidth).

    Raises
    ------
    RankmapError
        When the routing is unknown for the machine, or SimGrid's routes cannot be obtained.
    """
    routing = machine.check_routing(routing)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    ours = _rankmap_signatures(machine, pairs, routing)
    theirs = _simgrid_signatures(simgrid_routes(machine, pairs))
    matched = sum((ours & theirs).values())
    return RouteAgreement(len(pairs), sum(ours.values()), sum(theirs.values()), matched)


def sample_pairs(n_nodes: int, count: int = 4000, seed: int = 0) -> np.ndarray:
    """All ordered node pairs when there are at most ``count``, else ``count`` random ones.

    Parameters
    ----------
    n_nodes : int
        Number of nodes (at least 2).
    count : int, optional
        Most pairs returned.
    seed : int, optional
        Seed of the random sample (same seed, same pairs).

    Returns
    -------
    numpy.ndarray of int64, shape (P, 2)
        Distinct-endpoint (src, dst) node pairs.
    """
    if n_nodes * (n_nodes - 1) <= count:
        a, b = np.meshgrid(np.arange(n_nodes), np.arange(n_nodes), indexing="ij")
        keep = a != b
        return np.stack([a[keep], b[keep]], axis=1)
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_nodes, count)
    b = (a + rng.integers(1, n_nodes, count)) % n_nodes
    return np.stack([a, b], axis=1)
