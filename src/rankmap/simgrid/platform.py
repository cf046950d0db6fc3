"""SimGrid platform XML and hostfile for a rankmap machine and placement.

A torus becomes one ``<cluster topology="TORUS" topo_parameters="X,Y,Z">``. SimGrid numbers
the hosts of a torus cluster with the first dimension fastest (``TorusZone``: coordinate j is
``(id / prod(dims[:j])) % dims[j]``), exactly rankmap's node ids, so host ``node-<id>`` is
rankmap node ``id``; tests check this on routes. Links are ``SPLITDUPLEX`` (one resource per
direction, like rankmap's directed links) with the machine's link bandwidth and per-hop
latency. Intra-node messages use the cluster's loopback link (``loopback_bw`` = the time
model's memory bandwidth).

Link latency: SimGrid's CM02 model shares a link's bandwidth in inverse proportion to each
flow's route latency (its "sharing penalty", a TCP round-trip unfairness model), so a 3-hop
flow gets a third of a 1-hop flow's share. rankmap's model is plain max-min (equal shares),
so validation writes ``lat=0`` (``link_latency=0``): SimGrid then gives every flow penalty 1.

SimGrid's torus always wraps and routes by dimension order, the shorter way round. A tie
(offset exactly n/2) goes + except from coordinate n/2 itself, where it goes - (rankmap's
``dor`` always goes +): the same hop count, a mirrored link choice.
"""

from __future__ import annotations

import numpy as np

from ..errors import RankmapError

HOST_PREFIX = "node-"


def _bw(value: float) -> str:
    return f"{value:.10g}Bps"


def _time(value: float) -> str:
    return f"{value:.10g}s"


def check_supported(machine, routing: str) -> None:
    """Raise RankmapError unless SimGrid can model this machine and routing like rankmap."""
    if machine.kind not in ("torus",) or not hasattr(machine, "dims"):
        raise RankmapError(f"SimGrid validation supports torus machines, not {machine.kind} "
                           f"({machine.spec})")
    if not all(machine.wrap):
        raise RankmapError(f"SimGrid's torus always wraps: {machine.spec} has unwrapped "
                           "dimensions")
    if routing != "dor":
        raise RankmapError(f"SimGrid routes a torus by dimension order only: use --routing dor, "
                           f"not {routing!r}")


def platform_xml(machine, mem_bw: float | None = None, link_latency: float | None = None) -> str:
    """The SimGrid platform (XML text) of ``machine`` (see the module docstring).

    ``link_latency`` (s) overrides the machine's per-hop latency on every link.
    """
    check_supported(machine, "dor")
    dims = ",".join(str(int(d)) for d in machine.dims)
    bw = float(np.max(machine.link_bandwidth)) if machine.n_links else machine.bandwidth
    lat = machine.hop_latency_s if link_latency is None else float(link_latency)
    loop = ""
    if mem_bw is not None:
        loop = f' loopback_bw="{_bw(mem_bw)}" loopback_lat="0s"'
    return (
        "<?xml version='1.0'?>\n"
        '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
        '<platform version="4.1">\n'
        f'  <cluster id="rankmap" prefix="{HOST_PREFIX}" suffix="" '
        f'radical="0-{machine.n_nodes - 1}" speed="1Gf" core="{machine.cores_per_node}" '
        f'bw="{_bw(bw)}" lat="{_time(lat)}" sharing_policy="SPLITDUPLEX" '
        f'topology="TORUS" topo_parameters="{dims}"{loop}/>\n'
        "</platform>\n")


def hostfile(node_of_rank) -> str:
    """Hostfile text whose line r is the host of rank r (how smpirun takes a placement)."""
    nodes = np.asarray(node_of_rank, dtype=np.int64)
    return "".join(f"{HOST_PREFIX}{n}\n" for n in nodes.tolist())
