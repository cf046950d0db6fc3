"""The Cray XC (Aries) dragonfly preset: ``xc:groups=G[,cabinet_cols=N][,...]``."""

from __future__ import annotations

from ..errors import RankmapError
from .dragonfly import Dragonfly
from .dragonfly_spec import check_size, pop_common, pop_cores, pop_int

__all__ = ["XC", "parse_xc"]


#: Cray XC (Aries) group: 6 rows (chassis) x 16 columns (slots) of routers, 4 nodes each;
#: Trinity-like nodes with 32 cores. Each Aries has 10 optical links in 5 connectors: a global
#: link here is one connector (two links, 2 x 4.7 GB/s), so 5 global ports per router.
XC = {"rows": 6, "cols": 16, "nodes": 4, "cores": 32, "gports": 5, "cabinet_cols": 12,
      "bw_global": 9.4e9}


def parse_xc(spec) -> Dragonfly:
    """``xc:groups=G[,cabinet_cols=N][,cores=K][,global=L][,...]``: a Cray XC (Aries) dragonfly.

    ``cabinet_cols`` (cabinets per row of the machine room, default 12) only affects Cray
    names ``cX-YcCsSnN``: group = floor(X/2) + Y*floor(N/2).

    Parameters
    ----------
    spec : Spec
        The split spec (kind ``xc``); its options are consumed.

    Returns
    -------
    Dragonfly
        G groups of 6x16 routers, 4 nodes each, Aries bandwidths (bytes/s).
    """

    if spec.words:
        raise RankmapError(f"bad machine {spec.text!r}: use xc:groups=G, e.g. xc:groups=26")
    if "groups" not in spec.options:
        raise RankmapError(f"bad machine {spec.text!r}: give groups=G, e.g. xc:groups=26")
    groups = pop_int(spec, "groups", 1)
    cores, node = pop_cores(spec, XC["cores"])
    gports = pop_int(spec, "gports", XC["gports"])
    cab = pop_int(spec, "cabinet_cols", XC["cabinet_cols"], minimum=2)
    if cab % 2:
        raise RankmapError(f"bad cabinet_cols={cab}: a group is a pair of cabinets, use an even "
                           "number")
    opts = pop_common(spec)
    opts.update(node)
    opts["bandwidth"] = {"global": XC["bw_global"], **opts["bandwidth"]}
    spec.reject_leftovers("xc")
    check_size(spec.text, groups, XC["rows"] * XC["cols"], XC["nodes"], cores, gports,
               opts.get("global_links"), XC["rows"], XC["cols"])
    return Dragonfly(groups, XC["rows"], XC["cols"], XC["nodes"], cores, gports=gports,
                     spec=spec.text, name=f"Cray XC {groups} groups", cabinet_cols=cab, **opts)
