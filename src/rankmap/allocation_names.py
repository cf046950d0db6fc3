"""Allocations from the real world: host names, Slurm host lists, Cray names, topology files,
and synthetic allocations for studies. Registered into :data:`rankmap.allocation.NODE_PARSERS`.

``--nodes`` forms handled here (the id/range form and id files stay in :mod:`rankmap.allocation`):

* ``random:N[:seed=S]`` — N distinct nodes drawn uniformly from the machine, listed in node-id
  order (as a scheduler lists a scattered allocation);
* ``contiguous:N[:start=S]`` — nodes S, S+1, ..., S+N-1 (default S = 0);
* a Slurm host list such as ``nid[00001-00128,00200]`` or ``c0-0c0s[0-3]n[0-3]`` (expanded by
  python-hostlist; several lists may be separated by spaces or newlines, e.g. the output of
  ``scontrol show hostnames``), or a file holding one;
* ``site.csv`` or ``site.csv:HOSTLIST`` — a topology CSV mapping site host names to machine
  coordinates; alone it allocates every row in file order, with a host list it allocates
  those names in host-list order.

Names resolve, in order, as: a Cray XC name ``cX-YcCsSnN`` (on an ``xc`` machine: group =
floor(X/2) + Y*floor(cabinet_cols/2), router row = C + 3*(X mod 2), router column = S, node N);
``nidNNNNN`` (node id NNNNN); the machine's own node names (``Machine.node_name``, e.g. the
names of a Slurm topology.conf). A fully qualified name (``cn001.cluster.local``) that the
machine does not list in full is taken by its short name (``cn001``), as ``hostname -f``
and some schedulers give it. Unknown names are an error listing the first few.

Topology CSV: a header line naming the columns; ``name`` plus either the machine's coordinate
columns (``group,row,col,node`` on a dragonfly, ``x,y,z`` on a 3-D torus) or ``id``.
"""

from __future__ import annotations

import os
import re

import numpy as np

from .node_allocation import Allocation
from .errors import RankmapError
from .machines import Dragonfly
from .machines.slurm_topology import SlurmTree
from .specs import parse_int
from .validate import (check_input_file, check_limit, expand_hostlist, hostlist_size,
                       parse_int_text, read_csv_rows, read_text, show)

__all__ = ["cname_to_coords", "resolve_names", "expand_host_list", "read_topology_csv",
           "parse_named_allocation", "is_id_text"]

_CNAME = re.compile(r"^c(\d+)-(\d+)c(\d+)s(\d+)n(\d+)$", re.ASCII)
_NID = re.compile(r"^nid0*(\d+)$", re.ASCII)
_DOTTED_QUAD = re.compile(r"^\d+\.\d+\.\d+\.\d+$", re.ASCII)
#: a host name with a domain: labels of letters, digits, hyphens and underscores (Slurm
#: allows them) joined by dots
_FQDN = re.compile(r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$", re.ASCII)
_IDS_ONLY = re.compile(r"^[\d\s,\-]+$", re.ASCII)
_MAX_NAME_TABLE = 2_000_000


def cname_to_coords(name: str, cabinet_cols: int) -> tuple[int, int, int, int] | None:
    """``(group, row, col, node)`` of a Cray XC name ``cX-YcCsSnN``; None if not one.

    Raises RankmapError when the name has the form but a field is out of range.

    Parameters
    ----------
    name : str
        A host name.
    cabinet_cols : int
        Cabinets per row of the machine room (the ``cabinet_cols`` of ``xc:``).

    Returns
    -------
    tuple of int or None
        ``(group, row, col, node)``, or None when ``name`` is not a Cray name.
    """
    m = _CNAME.match(name)
    if not m:
        return None
    if any(len(v) > 9 for v in m.groups()):
        raise RankmapError(f"bad Cray name {show(name)}: a field is too large")
    x, y, c, s, n = (int(v) for v in m.groups())
    if c > 2 or s > 15 or n > 3:
        raise RankmapError(f"bad Cray name {name!r}: chassis is 0-2, slot 0-15, node 0-3")
    if x >= cabinet_cols:
        raise RankmapError(f"bad Cray name {name!r}: cabinet column {x} but cabinet_cols="
                           f"{cabinet_cols}")
    return (x // 2 + y * (cabinet_cols // 2), c + 3 * (x % 2), s, n)


def _name_table(machine) -> dict[str, int]:
    if machine.n_nodes > _MAX_NAME_TABLE:
        return {}
    return {machine.node_name(i): i for i in range(machine.n_nodes)}


def is_id_text(text: str) -> bool:
    """Whether ``--nodes`` text is node ids and ranges only (``0-15,32 33``): read as ids,
    never as the name of a file (``--nodes 3`` is node 3 even where a file ``3`` exists;
    ``./3`` names the file).

    Parameters
    ----------
    text : str
        The text.

    Returns
    -------
    bool
        True when it holds only ASCII digits, commas, dashes and white space.
    """
    return _IDS_ONLY.match(text) is not None


def resolve_names(names: list[str], machine, where: str) -> np.ndarray:
    """Node ids of host names (Cray names, nidNNNNN, the machine's names); error on unknowns.

    Parameters
    ----------
    names : list of str
        Host names (Cray ``cX-YcCsSnN``, ``nidNNNNN``, or the machine's own names).
    machine : Machine
        The machine.
    where : str
        Where the names come from, for the error message.

    Returns
    -------
    numpy.ndarray
        int64 node id of every name.

    Raises
    ------
    RankmapError
        Unknown names (the first few are listed).
    """
    ids = np.full(len(names), -1, dtype=np.int64)
    cab = machine.cabinet_cols if isinstance(machine, Dragonfly) else None
    table = None
    unknown = []
    # a machine that names its own hosts (a Slurm topology.conf) is asked by name: its
    # nid001000 may be node 0, not node 1000, whatever its first host is called
    own_nids = isinstance(machine, SlurmTree) or \
        machine.n_nodes > 0 and _NID.match(machine.node_name(0)) is not None
    # a machine whose hosts are named in full (nid00001.x.org in a topology.conf) is asked
    # by name for full names too
    full_names = machine.n_nodes > 0 and "." in machine.node_name(0)
    for i, given in enumerate(names):
        name = given
        if _FQDN.match(name) and not _DOTTED_QUAD.match(name):
            # a fully qualified name (cn001.cluster.local) is its host's short name unless
            # the machine itself is named in full
            short = name.split(".", 1)[0]
            if not full_names and (not own_nids and _NID.match(short)
                                   or cab is not None and _CNAME.match(short)):
                name = short                    # no name table needed (1M nodes: 3 s)
            else:
                if table is None:
                    table = _name_table(machine)
                if name not in table:
                    name = short
        m = None if own_nids else _NID.match(name)
        if m:
            nid = int(m.group(1)) if len(m.group(1)) < 20 else machine.n_nodes
            if nid >= machine.n_nodes:
                raise RankmapError(f"{show(name, 40)} in {where} is outside the machine "
                                   f"(nid 0-{machine.n_nodes - 1})")
            ids[i] = nid
            continue
        if _CNAME.match(name) and not isinstance(machine, SlurmTree):
            if cab is None:
                raise RankmapError(f"Cray name {name!r} in {where} needs an xc machine "
                                   "(e.g. --machine xc:groups=26)")
            try:
                ids[i] = int(machine.node_ids(np.array(cname_to_coords(name, cab))))
            except RankmapError as exc:
                raise RankmapError(f"Cray name {given!r} in {where}: {exc}") from None
            continue
        if table is None:
            table = _name_table(machine)
        if name in table:
            ids[i] = table[name]
        else:
            unknown.append(given)
    if unknown:
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        raise RankmapError(f"unknown node names in {where}: "
                           f"{', '.join(show(u, 40)[1:-1] for u in unknown[:5])}{more}")
    return ids


def expand_host_list(text: str) -> list[str]:
    """Host names of one or more Slurm host lists separated by whitespace.

    Parameters
    ----------
    text : str
        Slurm host lists (``nid[00001-00004],c0-0c0s1n[0-3]``) separated by white space.

    Returns
    -------
    list of str
        The host names, in order.
    """
    names: list[str] = []
    parts = text.split()
    check_limit(sum(hostlist_size(p) for p in parts), "hosts", f"host list {text}")
    for part in parts:
        names.extend(expand_hostlist(part, "--nodes"))
    if not names:
        raise RankmapError("empty host list")
    return names


def _coord_columns(machine) -> list[str]:
    if isinstance(machine, Dragonfly):
        return ["group", "row", "col", "node"]
    return [ch.lower() for ch in machine.letters]


def read_topology_csv(path: str, machine) -> tuple[list[str], np.ndarray]:
    """(names, node ids) of every row of a topology CSV (see module docstring).

    Parameters
    ----------
    path : str
        The CSV file (``name,group,row,col,node``, ``name,x,y,z`` or ``name,id``).
    machine : Machine
        The machine whose nodes the rows name.

    Returns
    -------
    tuple of (list of str, numpy.ndarray)
        Host names and their int64 node ids, in file order.
    """
    rows = [r for r in read_csv_rows(path, "topology file")
            if r and not r[0].lstrip().startswith("#")]
    if not rows:
        raise RankmapError(f"topology file {show(path)} is empty")
    header = [h.strip().lower() for h in rows[0]]
    twice = next((h for i, h in enumerate(header) if h in header[:i]), None)
    if twice is not None:
        raise RankmapError(f"topology file {show(path)}: column {show(twice, 40)} is named "
                           "twice in the header")
    if "name" not in header:
        raise RankmapError(f"topology file {show(path)} needs a header line with a 'name' column")
    want = _coord_columns(machine)
    if "id" in header:
        cols = ["id"]
    elif want and all(c in header for c in want):
        cols = want
    else:
        need = ",".join(["name"] + want) if want else "name,id"
        raise RankmapError(f"topology file {show(path)} has columns {','.join(header)}: expected "
                           f"{need} (or name,id) for a {machine.kind}")
    extra = [c for c in header if c not in ["name"] + cols]
    if extra:
        # a column left unread could have told two hosts apart (name,x,y,z on a 2-D torus)
        raise RankmapError(f"topology file {show(path)}: column {show(extra[0], 40)} is not "
                           f"read: a {machine.kind} names its nodes by "
                           f"{','.join(['name'] + cols)}")
    pos = [header.index(c) for c in cols]
    ni = header.index("name")
    names, values = [], []
    for lineno, r in enumerate(rows[1:], start=2):
        if len(r) != len(header):
            raise RankmapError(f"topology file {show(path)} line {lineno}: expected "
                               f"{len(header)} fields, got {len(r)}")
        name = r[ni].strip()
        if not name or any(ch.isspace() or not ch.isprintable() for ch in name):
            raise RankmapError(f"topology file {show(path)} line {lineno}: bad host name "
                               f"{show(name, 40)}")
        names.append(name)
        values.append([parse_int_text(r[p], f"coordinate in topology file {show(path)} line "
                                      f"{lineno}:", minimum=0, maximum=1 << 40) for p in pos])
    values = np.array(values, dtype=np.int64).reshape(len(names), len(cols))
    if cols == ["id"]:
        ids = values[:, 0]
        bad = (ids < 0) | (ids >= machine.n_nodes)
        if bad.any():
            raise RankmapError(f"topology file {show(path)}: node id {int(ids[bad][0])} is outside "
                               f"the machine (0-{machine.n_nodes - 1})")
    else:
        ids = machine.node_ids(values)
    seen: dict[str, int] = {}
    for n in names:
        if n in seen:
            raise RankmapError(f"topology file {show(path)} lists {n!r} twice")
        seen[n] = 1
    return names, np.asarray(ids, dtype=np.int64)


def _parse_synthetic(text: str, machine) -> Allocation | None:
    m = re.match(r"^(random|contiguous):(.*)$", text)
    if not m:
        return None
    kind, rest = m.groups()
    parts = [p.strip() for p in rest.split(":")]
    n = parse_int(parts[0], f"{kind} node count", minimum=1)
    opts = {}
    for p in parts[1:]:
        key, eq, val = p.partition("=")
        allowed = "seed" if kind == "random" else "start"
        if not eq or key != allowed:
            raise RankmapError(f"bad --nodes {show(text)}: unknown field {show(p, 40)} (use "
                               f"{allowed}=N)")
        if key in opts:
            raise RankmapError(f"bad --nodes {show(text)}: {key}= given twice")
        opts[key] = parse_int(val, f"{kind} {key}", minimum=0)
    if n > machine.n_nodes:
        raise RankmapError(f"--nodes {show(text)} asks for {n} nodes, the machine has "
                           f"{machine.n_nodes}")
    if kind == "random":
        rng = np.random.default_rng(opts.get("seed", 0))
        nodes = np.sort(rng.choice(machine.n_nodes, size=n, replace=False)).astype(np.int64)
    else:
        start = opts.get("start", 0)
        if start + n > machine.n_nodes:
            raise RankmapError(f"--nodes {show(text)} runs past the last node "
                               f"{machine.n_nodes - 1}")
        nodes = np.arange(start, start + n, dtype=np.int64)
    return Allocation(nodes, machine.cores_per_node, source=text)


def _from_names(names: list[str], machine, source: str) -> Allocation:
    ids = resolve_names(names, machine, source)
    return Allocation(ids, machine.cores_per_node, names=list(names), source=source)


def parse_named_allocation(text: str, machine) -> Allocation | None:
    """An Allocation for the ``--nodes`` forms of this module, or None for other forms.

    Parameters
    ----------
    text : str
        The ``--nodes`` value.
    machine : Machine
        The machine the names refer to.

    Returns
    -------
    Allocation or None
        The allocation (with its host names), or None when ``text`` is an id list or a file
        of ids (handled by :func:`rankmap.allocation.parse_allocation`).
    """
    text = text.strip()
    if is_id_text(text):
        return None
    alloc = _parse_synthetic(text, machine)
    if alloc is not None:
        return alloc
    csv_path, sep, hosts = text.partition(".csv:")
    if sep or text.lower().endswith(".csv"):
        path = csv_path + ".csv" if sep else text
        check_input_file(path, "topology file")
        names, ids = read_topology_csv(path, machine)
        if not sep:
            return Allocation(ids, machine.cores_per_node, names=names, source=f"file {path}")
        wanted = expand_host_list(hosts)
        lookup = dict(zip(names, ids.tolist()))
        unknown = [w for w in wanted if w not in lookup]
        if unknown:
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            raise RankmapError(f"names not in topology file {show(path)}: "
                               f"{', '.join(unknown[:5])}{more}")
        return Allocation(np.array([lookup[w] for w in wanted], dtype=np.int64),
                          machine.cores_per_node, names=wanted, source=f"{path}:{hosts[:40]}")
    if os.path.isfile(text):
        content = " ".join(ln.split("#", 1)[0] for ln in read_text(text, "node file").splitlines())
        if not content.strip() or is_id_text(content):
            return None  # an id file: the core parser reads it
        return _from_names(expand_host_list(content), machine, f"file {text}")
    if "/" in text or text.lower().endswith((".txt", ".list", ".hosts")):
        return None  # a file name that does not exist: the core parser says so
    source = text if len(text) < 60 else text[:57] + "..."
    return _from_names(expand_host_list(text), machine, source)
