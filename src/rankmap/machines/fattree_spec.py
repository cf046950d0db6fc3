"""Spec strings of fat trees: ``fattree:k=K:levels=N[...]`` or ``fattree:topology=FILE``."""

from __future__ import annotations

from ..errors import RankmapError
from ..specs import parse_int
from ..validate import check_limit, parse_float_text
from .base import Machine
from .fattree import FatTree, check_fat_tree_size
from .options import common_options
from .slurm_topology import read_topology_conf

__all__ = ["parse_fattree"]


def parse_fattree(spec) -> Machine:
    """``fattree:k=K:levels=N[:cores=C][:bw=..][:taper=T][:lat=..]`` or
    ``fattree:topology=FILE[:cores=C][:bw=..][:lat=..]``.

    Parameters
    ----------
    spec : Spec
        The split spec (kind ``fattree``); its options are consumed.

    Returns
    -------
    Machine
        A :class:`FatTree` (k-ary n-tree) or a :class:`SlurmTree` read from the file.
    """

    opts = common_options(spec)
    path = spec.pop_option("topology")
    if path is not None:
        shaped = [k for k in ("k", "levels", "taper") if k in spec.options]
        if shaped:
            raise RankmapError(f"bad machine {spec.text!r}: {shaped[0]}= describes a k-ary "
                               "tree, topology= reads the tree from a file: give one of them")
        spec.reject_leftovers("fattree")
        return read_topology_conf(path, spec=spec.text, **opts)
    if "k" not in spec.options or "levels" not in spec.options:
        raise RankmapError(f"bad machine {spec.text!r}: give k= and levels=, e.g. "
                           "fattree:k=16:levels=3, or topology=topology.conf")
    k = parse_int(spec.pop_option("k"), "fat-tree k", minimum=2)
    levels = parse_int(spec.pop_option("levels"), "fat-tree levels", minimum=1)
    # k^levels hosts, computed without building a huge integer (levels=10^9 would)
    check_fat_tree_size(k, levels)
    check_limit(k ** levels if levels <= 64 else 1 << 64, "nodes", spec.text)
    if (v := spec.pop_option("taper")) is not None:
        opts["taper"] = parse_float_text(v, "taper", minimum=1.0, maximum=1e6)
    spec.reject_leftovers("fattree")
    return FatTree(k, levels, spec=spec.text, **opts)
