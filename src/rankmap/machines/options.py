"""Spec options every machine kind shares: ``cores=``, ``bw=``, ``lat=`` and ``node=``."""

from __future__ import annotations

import re

from ..errors import RankmapError
from ..specs import Spec, parse_int
from ..units import parse_bandwidth, parse_time
from ..validate import limit, show
from .node_structure import NodeStructure, parse_synthetic

__all__ = ["common_options", "node_option", "agreed_cores", "extract_node_text"]

_SYNTH_TOKEN = r"(?:[A-Za-z][A-Za-z0-9]*(?:\([^)]*\))?:[+-]?[0-9][\w.]*(?:\([^)]*\))?|\[[^\]]*\])"
#: ``node=`` followed by synthetic levels (their ``:`` would otherwise split the spec)
_NODE_SYNTH = re.compile(r"(^|[:,])\s*node\s*=\s*(" + _SYNTH_TOKEN + r"(?:[ ,]+" + _SYNTH_TOKEN
                         + r")*)(?=$|[:,])", re.IGNORECASE)

#: where a ``node=`` value starts, whatever it is (for messages)
_NODE_VALUE = re.compile(r"(^|[:,])\s*node\s*=\s*([^:]*(?::[^:]*)?)", re.IGNORECASE)


def extract_node_text(text: str) -> tuple[str, str | None]:
    """Cut a synthetic ``node=pack:2,numa:2,core:16`` (or ``node=pack:2 numa:2 core:16``)
    out of a machine spec before it is split at ``:``.

    Parameters
    ----------
    text : str
        The machine spec.

    Returns
    -------
    (str, str or None)
        The spec without the option, and the synthetic text (None when absent; a
        ``node=FILE.xml`` stays in the spec as an ordinary option).
    """
    m = _NODE_SYNTH.search(text)
    given = _NODE_VALUE.search(text)
    if m is None:
        if given is not None and not given.group(2).strip().lower().endswith(".xml"):
            # levels the reader cannot split off: named with the whole spec, as typed
            raise RankmapError(f"bad machine {show(text)}: node= {show(given.group(2), 40)} is "
                               "neither levels such as pack:2,numa:2,core:8 nor a .xml file")
        return text, None
    if text[m.end():m.end() + 1] in (",", ";"):     # levels, then something that is none
        raise RankmapError(f"bad machine {show(text)}: node= {show(text[m.start(2):], 40)}: "
                           "expected levels such as pack:2,numa:2,core:8")
    rest = text[:m.start()] + text[m.end():]
    if _NODE_SYNTH.search(rest):
        raise RankmapError(f"bad machine {show(text)}: option 'node' given twice")
    return rest, m.group(2)


def node_option(value: str) -> NodeStructure:
    """The node structure a ``node=`` value names: an hwloc XML file (``.xml``) or an
    lstopo-style synthetic description (:func:`~rankmap.machines.node_structure.parse_synthetic`).

    Parameters
    ----------
    value : str
        ``node.xml`` or ``pack:2 numa:2 core:16``.

    Returns
    -------
    NodeStructure
    """
    if value.strip().lower().endswith(".xml"):
        from .hwloc_xml import read_hwloc_xml
        return read_hwloc_xml(value.strip())
    return parse_synthetic(value)

__all__ = ["common_options"]


def common_options(spec: Spec) -> dict:
    """Pop the options every machine kind takes.

    ``cores=`` and ``node=`` must agree; ``node=`` alone sets the cores per node.

    Parameters
    ----------
    spec : Spec
        The split spec; ``cores=``, ``bw=``, ``lat=`` and ``node=`` are removed from it.

    Returns
    -------
    dict
        Constructor keyword arguments for the options given: ``cores_per_node`` (int),
        ``bandwidth`` (link bandwidth, bytes/s), ``hop_latency_s`` (per-hop latency, s) and
        the node structure (packages, NUMA domains and cores) of ``node=``.
    """
    opts = {}
    if (v := spec.pop_option("cores")) is not None:
        opts["cores_per_node"] = parse_int(v, "cores per node", minimum=1,
                                           maximum=limit("cores"))
    if (v := spec.pop_option("bw")) is not None:
        opts["bandwidth"] = parse_bandwidth(v, "link bandwidth")
    if (v := spec.pop_option("lat")) is not None:
        opts["hop_latency_s"] = parse_time(v, "per-hop latency")
    if (v := spec.pop_option("node")) is not None:
        node = node_option(v)
        opts["cores_per_node"] = agreed_cores(opts.get("cores_per_node"), node, spec.text)
        opts["node_structure"] = node
    return opts


def agreed_cores(cores: int | None, node: NodeStructure, text: str) -> int:
    """The cores per node when ``node=`` gives a structure: ``cores=`` (if given) must equal
    the structure's cores.

    Parameters
    ----------
    cores : int or None
        The ``cores=`` value.
    node : NodeStructure
        The structure.
    text : str
        The spec, for the message.

    Returns
    -------
    int
    """
    if cores is not None and cores != node.n_cores:
        raise RankmapError(f"cores={cores} disagrees with node={show(node.source, 40)} "
                           f"({node.n_cores} cores) in {show(text)}")
    return node.n_cores
