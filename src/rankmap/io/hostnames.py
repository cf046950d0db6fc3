"""Host names of allocated nodes for launcher files, and reading ranks back from host names.

Names come from the allocation (``--nodes`` given as real host names) or from a template such
as ``nid{id:05d}`` (fields: ``id`` the machine node id, ``pos`` the position in the allocation,
and the machine's coordinate letters in lower case, e.g. ``{x}``, ``{y}``, ``{z}``).
Host-per-rank formats (Slurm, Hydra, SimGrid) only say which node a rank runs on; reading them
back gives each rank the next free core of its node, in rank order.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from ..allocation import Allocation
from ..errors import RankmapError
from ..mappers.base import Placement, validate_mapping

__all__ = ["check_name_template", "apply_name_template", "rank_hosts", "check_host_name",
           "check_host_names", "host_name_problem", "BAD_HOST_CHARACTERS", "position_lookup",
           "mapping_from_hosts", "read_lines"]

_FIELD = re.compile(r"\{([a-zA-Z_]\w*)[^{}]*\}")


#: an integer format spec: optional fill/align, sign, zero padding, width (checked against the
#: name-width cap), and an integer presentation type.
_SPEC = re.compile(r"(?:.?[<>=^])?[-+ ]?#?0?([0-9]{0,6})[,_]?[dxXob]?")


def check_name_template(template: str, known: set[str]) -> set[str]:
    """The fields of a ``--names`` template; raise unless every field is a plain known name
    with an integer format of bounded width (no ``{id[0]}``, ``{id.real}``, ``{id!r}``).

    Parameters
    ----------
    template : str
    known : set of str
        Allowed field names.

    Returns
    -------
    set of str
        The fields used.
    """
    import string

    from ..validate import limit, show

    cap = limit("name_width")
    what = f"bad --names template {show(template, 60)}"
    if len(template) > cap:
        raise RankmapError(f"{what}: longer than {cap} characters (set RANKMAP_MAX_NAME_WIDTH "
                           "to raise it)")
    bad = next((ch for ch in template if not ch.isprintable() or ch.isspace()
                or "\ud800" <= ch <= "\udfff"), None)
    if bad is not None:
        raise RankmapError(f"{what}: host names cannot hold {ascii(bad)} (a space, a control "
                           "character or a byte that is not UTF-8)")
    fields = set()
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise RankmapError(f"{what}: {exc}") from None
    for _literal, name, spec, conv in parsed:
        if name is None:
            continue
        if name not in known:
            raise RankmapError(f"{what}: unknown field {show(name, 30)} (known: "
                               f"{', '.join(sorted(known))})")
        m = _SPEC.fullmatch(spec or "")
        if conv is not None or m is None:
            raise RankmapError(f"{what}: field {{{name}}} takes an integer format such as "
                               f"{{{name}:05d}}")
        if m.group(1) and int(m.group(1)) > cap:
            raise RankmapError(f"{what}: width {m.group(1)} is over the limit of {cap} "
                               "(set RANKMAP_MAX_NAME_WIDTH to raise it)")
        fields.add(name)
    if not fields:
        raise RankmapError(f"{what}: it needs a field such as {{id}}")
    return fields


def apply_name_template(allocation: Allocation, machine, template: str) -> Allocation:
    """A copy of ``allocation`` whose host names come from ``template`` (``nid{id:05d}``).

    Parameters
    ----------
    allocation : Allocation
    machine : Machine
    template : str
        A format string with fields ``id``, ``pos`` and the machine's letters.

    Returns
    -------
    Allocation
    """
    from ..validate import show

    letters = machine.letters.lower()
    known = {"id", "pos"} | set(letters)
    fields = check_name_template(template, known)
    coords = machine.coords(allocation.nodes) if fields & set(letters) else None
    names = []
    for pos, node in enumerate(allocation.nodes.tolist()):
        values = {"id": node, "pos": pos}
        if coords is not None:
            values.update({ch: int(v) for ch, v in zip(letters, coords[pos])})
        try:
            names.append(template.format(**values))
        except (ValueError, IndexError, KeyError) as exc:
            raise RankmapError(f"bad --names template {show(template, 60)}: {exc}") from None
    if len(set(names)) != len(names):
        raise RankmapError(f"--names template {show(template, 60)} gives two nodes the same "
                           "name")
    return dataclasses.replace(allocation, names=names)


def rank_hosts(mapping: Placement, machine, allocation: Allocation) -> list[str]:
    """Host name of every rank, in rank order.

    Parameters
    ----------
    mapping : Placement
        The placement.
    machine : Machine
        The machine.
    allocation : Allocation
        The allocation (its names, else the machine's).

    Returns
    -------
    list of str
        Host name of every rank, in rank order.
    """
    names = np.array(allocation.host_names(machine), dtype=object)
    mapping.check_within(allocation)     # made for another allocation: named, not IndexError
    return names[mapping.core_of_rank // allocation.cores_per_node].tolist()


#: characters no launcher file can hold in a host name: ``#`` starts a comment, ``:`` ends
#: the host in a machinefile (``host:count``) and hostfiles, ``,`` ``[`` ``]`` are host list
#: syntax in a SLURM_HOSTFILE (``nid[1-3],nid7``), ``=`` and ``,`` split an Open MPI rankfile
#: line (``rank 1=a,b`` is refused, ``rank 1=n=1`` read as host ``n``); blanks and control
#: characters separate fields everywhere
BAD_HOST_CHARACTERS = "#:,=[]"

#: what reads each host-naming format, for the messages
_READERS = {"openmpi": "Open MPI's rankfile", "slurm": "Slurm's SLURM_HOSTFILE",
            "mpich": "Hydra's machinefile", "hostfile": "smpirun's hostfile"}

#: more characters one format's reader takes apart: Open MPI's rankfile reads ``user@host``
#: and quoted strings
_FORMAT_BAD = {"openmpi": "@\"'"}


def host_name_problem(name: str, fmt: str | None = None) -> str | None:
    """Why a host name cannot be written to a launcher file, or None when it can.

    Parameters
    ----------
    name : str
        A host name.
    fmt : str, optional
        The format (``openmpi``, ``slurm``, ``mpich``, ``hostfile``); its reader's own
        characters are refused too.

    Returns
    -------
    str or None
        One line naming the host and the character; None when the name can be written.
    """
    from ..validate import show
    bad = BAD_HOST_CHARACTERS + _FORMAT_BAD.get(fmt or "", "")
    reader = _READERS.get(fmt or "", "a launcher file")
    if not name:
        return f"an empty host name cannot be written to {reader}"
    ch = next((c for c in name if c.isspace() or not c.isprintable() or c in bad), None)
    if ch is None:
        return None
    said = (repr(ch) if ch.isprintable() and not ch.isspace()
            else f"{ascii(ch)} (a blank or control character)")
    return (f"host name {show(name, 60)} has {said}, which {reader} cannot hold (it would "
            "read another host or none): name the hosts without it (--names or --nodes)")


def check_host_name(name: str, fmt: str | None = None) -> None:
    """Raise when a host name cannot be written to a launcher file (empty, blanks, control
    characters, or one of :data:`BAD_HOST_CHARACTERS`; more for some formats).

    Parameters
    ----------
    name : str
        A host name.
    fmt : str, optional
        The format written (:func:`host_name_problem`).

    Raises
    ------
    RankmapError
        Naming the host and the character.
    """
    problem = host_name_problem(name, fmt)
    if problem is not None:
        raise RankmapError(problem)


def check_host_names(allocation: Allocation, machine, fmt: str) -> None:
    """Refuse, before any search, a host name of the allocation that the launcher file of
    ``fmt`` cannot hold (formats that name no hosts pass).

    Parameters
    ----------
    allocation : Allocation
        The allocation (its names, else the machine's; ``hostfile``'s default names are the
        SimGrid platform's ``node-<id>``).
    machine : Machine
        The machine.
    fmt : str
        The format to write.

    Raises
    ------
    RankmapError
        For the first such name in allocation order, naming the host and the character.
    """
    if fmt not in _READERS or (fmt == "hostfile" and allocation.names is None):
        return
    for name in allocation.host_names(machine):
        check_host_name(str(name), fmt)


def position_lookup(machine, allocation: Allocation) -> dict[str, int]:
    """Host name -> position in the allocation.

    Parameters
    ----------
    machine : Machine
        The machine.
    allocation : Allocation
        The allocation.

    Returns
    -------
    dict of str to int
        Host name of every allocated node -> its position in the allocation.
    """
    return {name: pos for pos, name in enumerate(allocation.host_names(machine))}


def mapping_from_hosts(hosts: list[str], where: list[str], machine, allocation: Allocation,
                       name: str, n_ranks: int | None = None,
                       label: str | None = None) -> Placement:
    """Placement that puts rank r on host ``hosts[r]`` (next free core of that node).

    ``where[r]`` locates rank r's entry for error messages (``file: line 3``).

    Parameters
    ----------
    hosts : list of str
        Host of every rank, in rank order.
    where : list of str
        Where each entry comes from, for error messages (``file: line 3``).
    machine : Machine
        The machine.
    allocation : Allocation
        The allocation; hosts must be allocated nodes.
    name : str
        What the placement is, for error messages (``hostfile 'h.txt'``).
    n_ranks : int, optional
        Ranks expected (default: ``len(hosts)``).
    label : str, optional
        The placement's name in results (default ``name``); a file's placement is named
        after the file, whatever its format.

    Returns
    -------
    Placement
        Rank r on the next free core of ``hosts[r]``.

    Raises
    ------
    RankmapError
        An unknown host, more ranks on a host than it has cores, or a rank count mismatch.
    """
    lookup = position_lookup(machine, allocation)
    if n_ranks is not None and len(hosts) != n_ranks:
        raise RankmapError(f"{name} places {len(hosts)} ranks, the pattern has {n_ranks}")
    pos = np.empty(len(hosts), dtype=np.int64)
    for r, host in enumerate(hosts):
        p = lookup.get(host)
        if p is None:
            from ..validate import show
            raise RankmapError(f"{where[r]}: host {show(host, 60)} is not in the allocation "
                               "(written with map --names? give the same --names)")
        pos[r] = p
    cpn = allocation.cores_per_node
    counts = np.bincount(pos, minlength=allocation.n_nodes)
    if (counts > cpn).any():
        p = int(np.argmax(counts))
        raise RankmapError(f"{name} puts {int(counts[p])} ranks on host "
                           f"{allocation.host_names(machine)[p]!r}, which has {cpn} cores")
    order = np.argsort(pos, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    slot = np.empty(len(hosts), dtype=np.int64)
    slot[order] = np.arange(len(hosts)) - np.repeat(starts, counts)
    return validate_mapping(label or name, pos * cpn + slot, len(hosts), allocation)


def read_lines(path: str) -> list[tuple[int, str]]:
    """Non-blank lines of a text file without ``#`` comments, with their line numbers.

    Parameters
    ----------
    path : str
        A text file.

    Returns
    -------
    list of (int, str)
        Its non-blank lines without ``#`` comments, stripped, with their 1-based line numbers.
    """
    from ..validate import check_input_file, read_lines as read_text_lines, show
    check_input_file(path, "placement file")
    out = []
    for lineno, line in enumerate(read_text_lines(path, "placement file"), 1):
        text = line.split("#", 1)[0].strip()
        if text:
            out.append((lineno, text))
    if not out:
        raise RankmapError(f"placement file {show(path)} places no ranks")
    return out
