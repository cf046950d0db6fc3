"""Spec strings of dragonflies: ``dragonfly:groups=G,rows=R,...`` (see :func:`parse_dragonfly`)
and the options shared with the ``xc`` preset (:mod:`rankmap.machines.xc`)."""

from __future__ import annotations

from ..errors import RankmapError
from ..specs import parse_int
from ..units import parse_bandwidth, parse_time
from .dragonfly import Dragonfly
from .options import agreed_cores, node_option

__all__ = ["parse_dragonfly", "pop_int", "pop_cores", "pop_common", "check_size"]


def pop_int(spec, key, default, minimum=1):
    """Pop an integer option of a dragonfly spec.

    Parameters
    ----------
    spec : Spec
        The split spec; the option is removed from it.
    key : str
        Option name (``groups``, ``rows``, ...).
    default : int
        Value when the option is absent.
    minimum : int
        Smallest value accepted.

    Returns
    -------
    int
        The value.
    """
    v = spec.pop_option(key)
    return default if v is None else parse_int(v, f"dragonfly {key}", minimum=minimum)


def pop_cores(spec, default: int) -> tuple[int, dict]:
    """Pop ``cores=`` and ``node=`` (they must agree; ``node=`` alone sets the cores).

    Parameters
    ----------
    spec : Spec
        The machine spec being parsed.
    default : int
        Cores per node when neither option is given.

    Returns
    -------
    (int, dict)
        Cores per node, and ``{"node_structure": ...}`` when ``node=`` was given.
    """
    given = spec.pop_option("cores")
    cores = None if given is None else parse_int(given, "dragonfly cores", minimum=1)
    node = spec.pop_option("node")
    if node is None:
        return (default if cores is None else cores), {}
    structure = node_option(node)
    return agreed_cores(cores, structure, spec.text), {"node_structure": structure}


def pop_common(spec) -> dict:
    """Pop the options every dragonfly spec takes: ``bw_row=``, ``bw_col=``, ``bw_global=``,
    ``bw_inject=`` (bytes/s), ``lat=`` (seconds), ``global=``, ``layout=``.

    Parameters
    ----------
    spec : Spec
        The split spec; the options are removed from it.

    Returns
    -------
    dict
        :class:`Dragonfly` keyword arguments for the options given (bandwidths in bytes/s,
        latency in s).
    """

    bw = {}
    for cls in ("row", "col", "global", "inject"):
        if (v := spec.pop_option(f"bw_{cls}")) is not None:
            bw[cls] = parse_bandwidth(v, f"{cls} link bandwidth")
    opts = {"bandwidth": bw}
    if (v := spec.pop_option("lat")) is not None:
        opts["hop_latency_s"] = parse_time(v, "per-hop latency")
    if (v := spec.pop_option("global")) is not None:
        opts["global_links"] = parse_int(v, "global links per group pair", minimum=1)
    if (v := spec.pop_option("layout")) is not None:
        opts["layout"] = v.lower()
    return opts


def check_size(text, groups, routers, nodes, cores, gports, global_links,
               rows=None, cols=None) -> None:
    """Caps on nodes, routers, cores and global links, checked before anything is built.

    Parameters
    ----------
    text : str
        The spec (named in the error).
    groups, routers, nodes, cores, gports : int
        Groups, routers per group, nodes per router, cores per node, global ports per router.
    global_links : int or None
        Parallel global links per pair of groups (None: the default).
    """
    from ..validate import check_limit, limit
    check_limit(groups * routers * nodes, "nodes", text)
    if rows is not None:  # every router links to the others of its row and of its column
        check_limit(groups * routers * (rows + cols - 2), "links", text)
    check_limit(groups * routers, "nodes", f"{text} (routers)")
    if cores > limit("cores"):
        check_limit(cores, "cores", text)
    if groups > 1:
        per_pair = global_links if global_links is not None else routers * gports // (groups - 1)
        check_limit(groups * (groups - 1) * min(per_pair, routers * gports), "links", text)


def parse_dragonfly(spec) -> Dragonfly:
    """``dragonfly:groups=G,rows=R,cols=C,nodes=N,cores=K[,global=L][,gports=P]
    [,layout=spread|consecutive|absolute][,bw_row=..,bw_col=..,bw_global=..,bw_inject=..][,lat=..]``.

    Defaults: rows=1, cols=1, nodes=1, cores=1, gports=1 (so ``global`` defaults to
    ``floor(R*C/(G-1))``), layout spread, Aries-like bandwidths.

    Parameters
    ----------
    spec : Spec
        The split spec (kind ``dragonfly``); its options are consumed.

    Returns
    -------
    Dragonfly
        The machine.

    Raises
    ------
    RankmapError
        Missing ``groups``, a bad or unknown option, or sizes over the caps.
    """
    if spec.words:
        raise RankmapError(f"bad machine {spec.text!r}: dragonfly takes key=value options, e.g. "
                           "dragonfly:groups=4,rows=2,cols=3,nodes=2,cores=4")
    if "groups" not in spec.options:
        raise RankmapError(f"bad machine {spec.text!r}: give groups=G")
    dims = {k: pop_int(spec, k, 1) for k in ("groups", "rows", "cols", "nodes")}
    dims["cores"], node = pop_cores(spec, 1)
    gports = pop_int(spec, "gports", 1)
    opts = pop_common(spec)
    opts.update(node)
    spec.reject_leftovers("dragonfly")
    check_size(spec.text, dims["groups"], dims["rows"] * dims["cols"], dims["nodes"],
               dims["cores"], gports, opts.get("global_links"), dims["rows"], dims["cols"])
    return Dragonfly(dims["groups"], dims["rows"], dims["cols"], dims["nodes"], dims["cores"],
                     gports=gports, spec=spec.text, **opts)
