"""A tree network read from a Slurm ``topology.conf`` (``fattree:topology=FILE``).

The file lists switches, one per line: ``SwitchName=NAME Nodes=HOSTLIST`` for leaf switches
and ``SwitchName=NAME Switches=LIST`` for switches above them (other keys such as
``LinkSpeed`` are ignored; ``#`` starts a comment). Hosts become the machine's nodes in the
order the file first names them, with their real names; every switch and host except the one
top switch has exactly one parent. Each cable is an up and a down link; routes go up to the
lowest common ancestor and down, so ``dmodk`` and ``ecmp`` give the same unique path. Hop
counts include the host links. Node coordinates are ``[leaf switch index, position under it]``.
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import RankmapError
from ..kernels import fattree as fk
from .fattree import DEFAULT_BANDWIDTH, DEFAULT_HOP_LATENCY, TreeMachine

__all__ = ["parse_topology_conf", "SlurmTree", "read_topology_conf"]

#: KEY=VALUE; ``\b`` makes the match start only at the start of a word (without it a long run of
#: word characters and no ``=`` is retried from each of its characters: quadratic time).
_FIELD = re.compile(r"\b(\w+)=(\S+)")


def _expand(value: str, path: str, lineno: int) -> list[str]:
    from ..validate import expand_hostlist
    return expand_hostlist(value, f"{path} line {lineno}", allow_duplicates=False)


def parse_topology_conf(path: str) -> tuple[list[str], dict[str, list[str]], dict[str, list[str]]]:
    """Read the switches of a Slurm topology.conf.

    Parameters
    ----------
    path : str
        The file (``SwitchName=... Nodes=...`` / ``Switches=...`` lines; host lists expanded).

    Returns
    -------
    switches : list of str
        Switch names in file order.
    hosts : dict of str to list of str
        Switch name -> the host names attached to it.
    children : dict of str to list of str
        Switch name -> its child switches.

    Raises
    ------
    RankmapError
        A missing file, a malformed line (naming file and line), or a switch listing itself.
    """
    from ..validate import check_input_file, read_lines
    check_input_file(path, "topology file", repr)
    switches: list[str] = []
    hosts: dict[str, list[str]] = {}
    children: dict[str, list[str]] = {}
    for lineno, line in enumerate(read_lines(path, "topology file"), start=1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields: dict[str, str] = {}
        for key, value in _FIELD.findall(line):
            if key.lower() in fields:
                raise RankmapError(f"{path} line {lineno}: {key}= given twice on one line")
            fields[key.lower()] = value
        name = fields.get("switchname")
        if name is None:
            from ..validate import show
            raise RankmapError(f"{path} line {lineno}: expected SwitchName=..., got "
                               f"{show(line)}")
        if name in hosts:
            raise RankmapError(f"{path} line {lineno}: switch {name!r} defined twice")
        switches.append(name)
        hosts[name] = _expand(fields["nodes"], path, lineno) if "nodes" in fields else []
        children[name] = (_expand(fields["switches"], path, lineno)
                          if "switches" in fields else [])
    if not switches:
        raise RankmapError(f"topology file {path!r} defines no switches")
    return switches, hosts, children


class SlurmTree(TreeMachine):
    """A tree of switches and hosts from a Slurm topology.conf."""

    kind = "fattree"

    def __init__(self, path: str, cores_per_node: int = 1, bandwidth: float = DEFAULT_BANDWIDTH,
                 hop_latency_s: float = DEFAULT_HOP_LATENCY, spec: str | None = None,
                 node_structure=None):
        switches, hosts_of, children = parse_topology_conf(path)
        host_names: list[str] = []
        host_parent: list[int] = []
        seen: dict[str, int] = {}
        sw_index = {s: i for i, s in enumerate(switches)}
        for s in switches:
            for h in hosts_of[s]:
                if h in seen:
                    raise RankmapError(f"{path}: host {h!r} is under two switches "
                                       f"({switches[host_parent[seen[h]]]} and {s})")
                seen[h] = len(host_names)
                host_names.append(h)
                host_parent.append(sw_index[s])
        if not host_names:
            raise RankmapError(f"topology file {path!r} names no hosts (Nodes=...)")
        H, S = len(host_names), len(switches)
        sw_parent = np.full(S, -1, dtype=np.int64)
        for s in switches:
            for c in children[s]:
                if c not in sw_index:
                    raise RankmapError(f"{path}: switch {s!r} lists unknown switch {c!r}")
                if c == s:
                    raise RankmapError(f"{path}: switch {s!r} lists itself as a child")
                if sw_parent[sw_index[c]] >= 0:
                    raise RankmapError(f"{path}: switch {c!r} has two parents; rankmap reads "
                                       "topology.conf as a tree")
                sw_parent[sw_index[c]] = sw_index[s]
        roots = [switches[i] for i in np.nonzero(sw_parent < 0)[0]]
        if not roots:
            raise RankmapError(f"{path}: no top-level switch: the switches form a cycle")
        if len(roots) > 1:
            raise RankmapError(f"{path}: several top-level switches ({', '.join(roots[:4])}): "
                               "add a switch joining them")
        parent = np.concatenate([H + np.array(host_parent, dtype=np.int64),
                                 np.where(sw_parent >= 0, H + sw_parent, -1)])
        V = H + S
        depth = np.full(V, -1, dtype=np.int64)
        root = H + sw_index[roots[0]]
        depth[root] = 0
        par = parent.tolist()
        dep = depth.tolist()
        for v in range(V):  # walk up to a vertex of known depth: O(V) overall, cycles end it
            if dep[v] != -1:
                continue
            chain, on_chain = [], set()
            u = v
            while u >= 0 and dep[u] == -1 and u not in on_chain:
                chain.append(u)
                on_chain.add(u)
                u = par[u]
            reach = u >= 0 and dep[u] >= 0
            for i, w in enumerate(reversed(chain), 1):
                dep[w] = dep[u] + i if reach else -2  # -2: cut off from the top (a cycle)
        depth = np.maximum(np.array(dep, dtype=np.int64), -1)
        if (depth < 0).any():
            bad = int(np.nonzero(depth < 0)[0][0])
            what = host_names[bad] if bad < H else switches[bad - H]
            raise RankmapError(f"{path}: {what!r} is not connected to the top switch "
                               f"{roots[0]!r} (a cycle?)")
        spec = spec or f"fattree:topology={path}"
        super().__init__(spec, H, cores_per_node, hop_latency_s, node_structure)
        self.path, self.bandwidth = path, float(bandwidth)
        self.host_names, self.switch_names = host_names, switches
        self.parent, self.depth = parent, depth
        nonroot = np.nonzero(parent >= 0)[0]
        self.up_link = np.full(V, -1, dtype=np.int64)
        self.down_link = np.full(V, -1, dtype=np.int64)
        self.up_link[nonroot] = 2 * np.arange(len(nonroot))
        self.down_link[nonroot] = 2 * np.arange(len(nonroot)) + 1
        self._src = np.empty(2 * len(nonroot), dtype=np.int64)
        self._dst = np.empty(2 * len(nonroot), dtype=np.int64)
        self._src[0::2], self._dst[0::2] = nonroot, parent[nonroot]
        self._src[1::2], self._dst[1::2] = parent[nonroot], nonroot
        self._bw = np.full(len(self._src), self.bandwidth)
        self._leaf = np.array(host_parent, dtype=np.int64)
        self._pos = np.zeros(H, dtype=np.int64)
        for s in range(S):
            members = np.nonzero(self._leaf == s)[0]
            self._pos[members] = np.arange(len(members))

    def _vertex_name(self, v: np.ndarray) -> np.ndarray:
        names = np.array(self.host_names + self.switch_names, dtype=object)
        return names[v]

    def link_columns(self) -> dict[str, np.ndarray]:
        """``src``, ``dst`` (vertex ids) and ``src_name``, ``dst_name`` (host/switch names)."""
        return {"src": self._src, "dst": self._dst,
                "src_name": self._vertex_name(self._src).astype(str),
                "dst_name": self._vertex_name(self._dst).astype(str)}

    def coords(self, nodes) -> np.ndarray:
        """``[leaf switch index, position under that switch]`` of each host."""
        nodes = np.asarray(nodes, dtype=np.int64)
        return np.stack([self._leaf[nodes], self._pos[nodes]], axis=-1)

    def node_ids(self, coords) -> np.ndarray:
        """Host ids of ``[leaf switch, position]`` rows."""
        c = np.asarray(coords, dtype=np.int64).reshape(-1, 2)
        table = {(int(a), int(b)): i for i, (a, b) in enumerate(zip(self._leaf, self._pos))}
        out = []
        for a, b in c:
            if (int(a), int(b)) not in table:
                raise RankmapError(f"no host at leaf switch {a}, position {b}")
            out.append(table[(int(a), int(b))])
        return np.array(out, dtype=np.int64)

    def node_name(self, node: int) -> str:
        """The host's name in topology.conf."""
        return self.host_names[int(node)]

    def hop_distance(self, a, b) -> np.ndarray:
        """Links on the unique tree path (host links included)."""
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        shape = np.broadcast(a, b).shape
        indptr, _l, _f = fk.tree_rows(np.ascontiguousarray(np.broadcast_to(a, shape).ravel()),
                                      np.ascontiguousarray(np.broadcast_to(b, shape).ravel()),
                                      self.parent, self.depth, self.up_link, self.down_link)
        return np.diff(indptr).reshape(shape)

    def describe(self) -> dict:
        """File, hosts, switches, links, bandwidth (bytes/s)."""
        return {"kind": self.kind, "spec": self.spec, "topology": self.path,
                "nodes": self.n_nodes, "switches": len(self.switch_names),
                "cores_per_node": self.cores_per_node, "links": self.n_links,
                "link_bandwidth_Bps": self.bandwidth, "hop_latency_s": self.hop_latency_s,
                **self.describe_node()}


def read_topology_conf(path: str, spec: str | None = None, **opts) -> SlurmTree:
    """Build the tree machine of a Slurm topology.conf (see the module docstring).

    Parameters
    ----------
    path : str
        The topology.conf file.
    spec : str, optional
        The machine spec shown in outputs (default: built from ``path``).
    **opts
        Machine options passed to :class:`SlurmTree` (cores per node, bandwidth, latency).

    Returns
    -------
    SlurmTree
        The tree: hosts as nodes, switches as inner vertices, links both ways.
    """

    return SlurmTree(path, spec=spec, **opts)
