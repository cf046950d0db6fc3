"""Spec options every machine kind shares: ``cores=``, ``bw=`` and ``lat=``."""

from __future__ import annotations

from ..specs import Spec, parse_int
from ..units import parse_bandwidth, parse_time
from ..validate import limit


def common_options(spec: Spec) -> dict:
    """Pop ``cores=N`` (cores per node), ``bw=`` (link bandwidth, bytes/s) and ``lat=``
    (per-hop latency, s) from ``spec``; return them as constructor keyword arguments."""
    opts = {}
    if (v := spec.pop_option("cores")) is not None:
        opts["cores_per_node"] = parse_int(v, "cores per node", minimum=1,
                                           maximum=limit("cores"))
    if (v := spec.pop_option("bw")) is not None:
        opts["bandwidth"] = parse_bandwidth(v, "link bandwidth")
    if (v := spec.pop_option("lat")) is not None:
        opts["hop_latency_s"] = parse_time(v, "per-hop latency")
    return opts
