"""``rankmap launch``: find the job's nodes, compute a placement, write the launcher's file and
build the launcher command that uses it.

The allocation is read from the environment of a batch job:

* Slurm: ``SLURM_JOB_NODELIST`` (a host list such as ``nid[00012-00015]``) and the tasks per
  node (``SLURM_TASKS_PER_NODE`` like ``4(x3),2``, else ``SLURM_JOB_CPUS_PER_NODE``);
* PBS / Torque: ``PBS_NODEFILE`` (one line per slot);
* Open MPI: a hostfile (``host slots=N`` lines) given by ``--hostfile`` or
  ``OMPI_MCA_orte_default_hostfile`` / ``PRTE_MCA_prte_default_hostfile``.

Host names are matched to machine nodes as in :mod:`rankmap.mpi.nodes`, or ``--nodes`` gives
the node ids in the same order. The launcher (first word of the command) decides the file:
``srun`` -> SLURM_HOSTFILE + ``--distribution=arbitrary``; ``mpirun``/``mpiexec``/``orterun``
-> Open MPI rankfile (``--rankfile``); ``mpiexec.hydra``/``mpiexec.mpich`` -> Hydra
machinefile (``-f``); ``smpirun`` -> hostfile (``-hostfile``); ``aprun`` -> Cray
``MPICH_RANK_ORDER`` + ``MPICH_RANK_REORDER_METHOD=3``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import numpy as np

from .allocation import Allocation, parse_allocation
from .errors import RankmapError
from .validate import is_digits
from .launcher_words import program_index

__all__ = ["JobHosts", "expand_slurm_counts", "expand_host_list", "slurm_hosts", "read_slot_file",
           "job_hosts", "job_allocation", "LaunchPlan", "LAUNCHER_FORMATS", "launcher_format",
           "launcher_ranks", "program_index", "command_for", "LAUNCHER_READS",
           "check_launcher_format", "option_value"]


@dataclass
class JobHosts:
    """The hosts of a job in scheduler order, the MPI slots on each, and where they came from."""

    hosts: list[str]
    slots: list[int]
    source: str
    job_id: str = ""


def expand_slurm_counts(text: str, what: str) -> list[int]:
    """Expand Slurm's compressed counts ``4(x3),2`` into ``[4, 4, 4, 2]``.

    Parameters
    ----------
    text : str
        The compressed counts, as in ``SLURM_TASKS_PER_NODE``.
    what : str
        Name of the variable the text came from, for error messages.

    Returns
    -------
    list of int
        One count per host, in host-list order.

    Raises
    ------
    RankmapError
        When an item is not ``N`` or ``N(xR)``, a count or repeat is 0, or a count or the
        number of hosts exceeds rankmap's limits.
    """
    from .validate import check_limit, limit, show

    out: list[int] = []
    items = []
    for item in text.split(","):
        m = re.fullmatch(r"\s*([0-9]{1,9})(?:\(x([0-9]{1,18})\))?\s*", item)
        if not m:
            raise RankmapError(f"bad {what} {show(text)}: expected counts like 4(x3),2")
        if int(m.group(1)) == 0 or (m.group(2) is not None and int(m.group(2)) == 0):
            zero = "a count" if int(m.group(1)) == 0 else "a repeat"
            raise RankmapError(f"bad {what} {show(text)}: {zero} of 0 in {show(item.strip())} "
                               "(every node has at least 1 task, every repeat at least 1)")
        items.append((int(m.group(1)), int(m.group(2) or 1)))
        if int(m.group(1)) > limit("cores"):
            check_limit(int(m.group(1)), "cores", f"{what}={text}")
    check_limit(sum(r for _, r in items), "hosts", f"{what}={text}")
    for count, repeat in items:
        out.extend([count] * repeat)
    return out


def expand_host_list(text: str) -> list[str]:
    """Expand a Slurm host list (``nid[00012-00015,00020],login1``) into host names.

    Parameters
    ----------
    text : str
        The compressed host list, as in ``SLURM_JOB_NODELIST``.

    Returns
    -------
    list of str
        The host names in list order.

    Raises
    ------
    RankmapError
        When the list is malformed, repeats a host or names no host.
    """
    from .validate import expand_hostlist, show

    hosts = expand_hostlist(text, "SLURM_JOB_NODELIST", allow_duplicates=False)
    if not hosts:
        raise RankmapError(f"Slurm host list {show(text)} names no hosts")
    return hosts


def slurm_hosts(env) -> JobHosts | None:
    """Hosts and tasks per node of the Slurm job in ``env`` (None outside Slurm).

    Parameters
    ----------
    env : Mapping[str, str]
        Environment variables (``os.environ`` or a dict): ``SLURM_JOB_NODELIST`` (or
        ``SLURM_NODELIST``), ``SLURM_TASKS_PER_NODE`` (else ``SLURM_JOB_CPUS_PER_NODE``),
        ``SLURM_JOB_ID``.

    Returns
    -------
    JobHosts or None
        The hosts and their slots with source ``"Slurm"``; None when no node list is set.

    Raises
    ------
    RankmapError
        When there is no per-node count, or the counts and the hosts differ in number.
    """
    nodelist = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")
    if not nodelist:
        return None
    hosts = expand_host_list(nodelist)
    for var in ("SLURM_TASKS_PER_NODE", "SLURM_JOB_CPUS_PER_NODE"):
        if env.get(var):
            slots = expand_slurm_counts(env[var], var)
            break
    else:
        raise RankmapError("Slurm job without SLURM_TASKS_PER_NODE or SLURM_JOB_CPUS_PER_NODE")
    if len(slots) != len(hosts):
        raise RankmapError(f"Slurm lists {len(hosts)} nodes ({nodelist}) but {len(slots)} task "
                           f"counts ({env.get('SLURM_TASKS_PER_NODE') or env.get('SLURM_JOB_CPUS_PER_NODE')})")
    return JobHosts(hosts, slots, "Slurm", env.get("SLURM_JOB_ID", ""))


def read_slot_file(path: str, what: str) -> tuple[list[str], list[int]]:
    """Hosts (first appearance order) and slots from a PBS node file or Open MPI hostfile.

    Accepts ``host`` lines (one slot each, repeated hosts add up) and ``host slots=N``
    (``max_slots``/``max-slots`` fields are accepted and ignored); ``#`` starts a comment.

    Parameters
    ----------
    path : str
        The file to read.
    what : str
        What the file is (``"hostfile"``, ``"PBS_NODEFILE"``, ...), for error messages.

    Returns
    -------
    hosts : list of str
        Host names in order of first appearance.
    slots : list of int
        Slots of each host.

    Raises
    ------
    RankmapError
        When the file is missing, a line has an unknown field or no slots, a host exceeds the
        core limit, or the file lists no host.
    """
    from .validate import check_input_file, check_limit, limit, read_lines, show
    check_input_file(path, what, repr)

    counts: dict[str, int] = {}
    for lineno, line in enumerate(read_lines(path, what), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        fields = text.split()
        host, n = fields[0], 1
        for f in fields[1:]:
            m = re.fullmatch(r"(slots|max_slots|max-slots)=([0-9]{1,9})", f)
            if not m:
                raise RankmapError(f"{path}: line {lineno}: unknown field {show(f, 40)} "
                                   "(expected 'host' or 'host slots=N')")
            if m.group(1) == "slots":
                n = int(m.group(2))
        if n <= 0:
            raise RankmapError(f"{path}: line {lineno}: host {host!r} has no slots")
        counts[host] = counts.get(host, 0) + n
        if counts[host] > limit("cores"):
            check_limit(counts[host], "cores", f"{path}: line {lineno}: host {host}")
    if not counts:
        raise RankmapError(f"{what} {path!r} lists no hosts")
    return list(counts), list(counts.values())


def job_hosts(env=None, hostfile: str | None = None) -> JobHosts:
    """The job's hosts from ``--hostfile``, Slurm, PBS or Open MPI's default hostfile.

    The sources are tried in that order; the first one present is used.

    Parameters
    ----------
    env : Mapping[str, str], optional
        Environment variables to read; ``os.environ`` by default.
    hostfile : str, optional
        Path of a hostfile given with ``--hostfile`` (takes precedence over the environment).

    Returns
    -------
    JobHosts
        The hosts in scheduler order, their slots, the source and the job id when known.

    Raises
    ------
    RankmapError
        When no source is found, or the one found cannot be read or parsed.
    """
    env = os.environ if env is None else env
    if hostfile:
        hosts, slots = read_slot_file(hostfile, "hostfile")
        return JobHosts(hosts, slots, f"hostfile {hostfile}")
    found = slurm_hosts(env)
    if found is not None:
        return found
    if env.get("PBS_NODEFILE"):
        hosts, slots = read_slot_file(env["PBS_NODEFILE"], "PBS_NODEFILE")
        return JobHosts(hosts, slots, "PBS", env.get("PBS_JOBID", ""))
    for var in ("OMPI_MCA_orte_default_hostfile", "PRTE_MCA_prte_default_hostfile"):
        if env.get(var):
            hosts, slots = read_slot_file(env[var], var)
            return JobHosts(hosts, slots, f"Open MPI hostfile {env[var]}")
    raise RankmapError("not inside a Slurm or PBS job (no SLURM_JOB_NODELIST or PBS_NODEFILE) "
                       "and no --hostfile given: run inside a job allocation or pass --hostfile")


def job_allocation(job: JobHosts, machine, nodes: str | None = None) -> Allocation:
    """Allocation of the job's hosts on ``machine`` (ids from ``--nodes`` or the host names).

    Cores per node are the job's slots per node; with uneven slots the smallest count is used
    so that no node gets more ranks than it has slots.

    Parameters
    ----------
    job : JobHosts
        The job's hosts and slots (from :func:`job_hosts`).
    machine : Machine
        The machine the job runs on.
    nodes : str, optional
        Node ids in job order (``--nodes`` syntax); by default the host names are resolved to
        machine nodes.

    Returns
    -------
    Allocation
        The job's nodes in job order, with the smallest slot count as cores per node and the
        host names kept.

    Raises
    ------
    RankmapError
        When ``nodes`` gives a different number of nodes than the job has, the host names
        cannot be resolved, two hosts map to the same machine node, or the job has more
        slots on every node than a node has cores.
    """
    from .mpi.nodes import resolve_node_labels
    if nodes is not None:
        alloc = parse_allocation(nodes, machine)
        if alloc.n_nodes != len(job.hosts):
            raise RankmapError(f"--nodes gives {alloc.n_nodes} nodes, the job has "
                               f"{len(job.hosts)} ({job.source})")
        if alloc.names is not None and list(alloc.names) != list(job.hosts):
            k = next(i for i, (a, b) in enumerate(zip(alloc.names, job.hosts)) if a != b)
            raise RankmapError(f"--nodes names {alloc.names[k]!r} where the job has "
                               f"{job.hosts[k]!r} ({job.source}): give the job's hosts in "
                               "its order, or node ids")
        ids = alloc.nodes
    else:
        ids, reason = resolve_node_labels(job.hosts, machine)
        if ids is None:
            raise RankmapError(f"{reason}; or give the node ids in job order with --nodes")
    if len(np.unique(ids)) != len(ids):
        raise RankmapError(f"two hosts of the job ({job.source}) map to the same machine node")
    if min(job.slots) > machine.cores_per_node:
        raise RankmapError(f"the job has {min(job.slots)} slots on every node ({job.source}), "
                           f"the machine's nodes have {machine.cores_per_node} cores: more "
                           "ranks than cores on a node")
    return Allocation(np.asarray(ids, dtype=np.int64), int(min(job.slots)), names=list(job.hosts),
                      source=job.source)


@dataclass
class LaunchPlan:
    """What ``launch`` runs: the command, extra environment variables and the file it wrote."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    path: str = ""
    format: str = ""


LAUNCHER_FORMATS = {"srun": "slurm", "aprun": "cray", "mpirun": "openmpi", "mpiexec": "openmpi",
                    "orterun": "openmpi", "prterun": "openmpi", "mpiexec.openmpi": "openmpi",
                    "mpirun.openmpi": "openmpi", "mpiexec.hydra": "mpich",
                    "mpiexec.mpich": "mpich", "mpirun.mpich": "mpich", "smpirun": "hostfile"}


def launcher_format(argv: list[str], fmt: str | None = None) -> str:
    """Placement file format for the launcher ``argv[0]`` (``fmt`` overrides).

    Parameters
    ----------
    argv : list of str
        The launcher command (the words after ``--``).
    fmt : str, optional
        Format given with ``--format``; returned as is when set.

    Returns
    -------
    str
        One of ``slurm``, ``openmpi``, ``mpich``, ``hostfile``, ``cray`` (see
        :data:`LAUNCHER_FORMATS`).

    Raises
    ------
    RankmapError
        When ``argv`` is empty, or the launcher is unknown and no ``fmt`` is given.
    """
    if not argv:
        raise RankmapError("no launcher command: give it after '--', e.g. -- srun ./app")
    if fmt:
        return fmt
    name = os.path.basename(argv[0])
    if name not in LAUNCHER_FORMATS:
        raise RankmapError(f"unknown launcher {name!r}: pass --emit (one of slurm, openmpi, "
                           "mpich, hostfile, cray)")
    if name in ("mpirun", "mpiexec") and _family_reads(argv[0]) == ("mpich",):
        return "mpich"          # MPICH's hydra installed as mpirun
    return LAUNCHER_FORMATS[name]


def _family_reads(launcher: str) -> tuple[str, ...] | None:
    """The format a plain ``mpirun``/``mpiexec`` reads, by its MPI (its ``--version``):
    ``openmpi`` for Open MPI's, ``mpich`` for MPICH's hydra, None when it cannot be told."""
    from .pmpi.environment import launcher_kind
    return {"openmpi": ("openmpi",), "hydra": ("mpich",)}.get(launcher_kind(launcher))


#: the placement file formats each launcher can be made to read (plain ``mpirun`` and
#: ``mpiexec`` are Open MPI's or MPICH's, whichever is installed; an unknown launcher takes
#: any format given with ``--emit``)
LAUNCHER_READS = {"srun": ("slurm", "cray"), "aprun": ("cray",), "smpirun": ("hostfile",),
                  "mpirun": ("openmpi", "mpich"), "mpiexec": ("openmpi", "mpich"),
                  "mpiexec.hydra": ("mpich",), "mpiexec.mpich": ("mpich",),
                  "mpirun.mpich": ("mpich",)}


def check_launcher_format(argv: list[str], fmt: str) -> None:
    """Refuse a placement file format the launcher cannot read (``--emit slurm`` with
    ``mpirun`` built ``mpirun --distribution=arbitrary``, an option mpirun does not have).

    Parameters
    ----------
    argv : list of str
        The launcher command.
    fmt : str
        The format to write (``--emit``).

    Raises
    ------
    RankmapError
        Naming the format, the launcher and the formats it reads.
    """
    name = os.path.basename(argv[0])
    reads = LAUNCHER_READS.get(name)
    if name in ("mpirun", "mpiexec"):
        # Open MPI's has no -f (it took --emit mpich, then failed: unknown option "-f")
        reads = _family_reads(argv[0]) or reads
    if reads is None and LAUNCHER_FORMATS.get(name) == "openmpi":
        # not hostfile: Open MPI makes a host's repeated lines its slots, filled in order of
        # first appearance, so ranks would land elsewhere than the file's lines say
        reads = ("openmpi",)
    if reads is not None and fmt not in reads:
        raise RankmapError(f"--emit {fmt}: {name} does not read that file (it is for "
                           f"{_PLACED_BY.get(fmt, fmt)}); {name} takes --emit "
                           f"{', '.join(reads[:-1]) + ' or ' if len(reads) > 1 else ''}"
                           f"{reads[-1]}")


def option_value(own: list[str], names: tuple[str, ...]) -> str | None:
    """The value a launcher command gives an option: ``-N 4``, ``--ntasks-per-node=4`` or
    ``--ntasks-per-node 4`` (the first of ``names`` found).

    Parameters
    ----------
    own : list of str
        The launcher's options (before the program).
    names : tuple of str
        The option's spellings.

    Returns
    -------
    str or None
        Its value as written, or None when the option is not given.
    """
    for i, word in enumerate(own):
        key, eq, value = word.partition("=")
        if key in names:
            if eq:
                return value
            return own[i + 1] if i + 1 < len(own) else ""
        for name in names:              # a short option joined to its number: -c2, -N4
            if len(name) == 2 and word.startswith(name) and is_digits(word[2:]):
                return word[2:]
    return None


#: launcher options that place ranks themselves, which the placement file would fight with
#: (Open MPI refuses a --map-by beside --rankfile; a second hostfile replaces rankmap's)
_PLACING_OPTIONS = {
    "openmpi": frozenset("--rankfile -rankfile -rf --map-by -map-by --rank-by -rank-by "
                         "--npernode -npernode --pernode -pernode --ppr -ppr --npersocket "
                         "-npersocket --bynode -bynode --byslot -byslot --bysocket -bysocket "
                         "--bycore -bycore -N".split()),   # -N: -npernode in Open MPI 4
    # hydra takes its options with one dash or two
    "mpich": frozenset("-f --f -hostfile --hostfile -machinefile --machinefile -hosts --hosts "
                       "-host --host -ppn --ppn -rankmap --rankmap".split()),
    "hostfile": frozenset("-hostfile -machinefile".split()),
    # the hostfile gives every rank's node; a count per node would contradict it
    "slurm": frozenset("--ntasks-per-node".split()),
}
_PLACED_BY = {"openmpi": "--rankfile", "mpich": "-f", "hostfile": "-hostfile",
              "slurm": "--distribution=arbitrary", "cray": "MPICH_RANK_ORDER"}


#: the process-count options of every launcher; ``-c`` too for Open MPI's mpirun (srun's
#: ``-c`` is its CPUs per task)
_COUNT_OPTIONS = ("-n", "-np", "--np", "--ntasks", "--n")
_OPENMPI_COUNT_OPTIONS = _COUNT_OPTIONS + ("-c",)


def _is_openmpi(launcher: str) -> bool:
    """Whether ``launcher`` is Open MPI's (by name, or ``mpirun``/``mpiexec`` by its
    ``--version``)."""
    name = os.path.basename(launcher)
    if name in ("mpirun", "mpiexec"):
        return _family_reads(launcher) == ("openmpi",)
    return LAUNCHER_FORMATS.get(name) == "openmpi"


def _segment_ranks(launcher: str, words: list[str], options: tuple[str, ...]) -> int | None:
    """The process count of one part of a launcher command (its options before its
    program; the last one given, as the launchers read them)."""
    end = program_index([launcher] + words) - 1
    found = None
    for i, arg in enumerate(words[:end]):
        key, eq, value = arg.partition("=")
        if arg in options and i + 1 < end:
            value = words[i + 1]
        elif eq and key in options:
            pass
        elif re.fullmatch(r"-n[0-9]+", arg):
            value = arg[2:]
        else:
            continue
        if not is_digits(value) or int(value) <= 0:
            raise RankmapError(f"bad process count {value!r} in the launcher command")
        found = int(value)
    return found


def launcher_ranks(argv: list[str]) -> int | None:
    """The process count given to the launcher (``-n 16``, ``-np 16``, ``--ntasks=16``;
    ``-c 16`` to Open MPI's mpirun), the last one where several are given; the sum over the
    parts of an MPMD command (``mpirun -n 2 ./a : -n 2 ./b``).

    Only the launcher's own options count, those before the program
    (:func:`program_index`): the program may have a ``-n`` of its own.

    Parameters
    ----------
    argv : list of str
        The launcher command; ``argv[0]`` (the launcher) is not examined.

    Returns
    -------
    int or None
        The process count; None when the command gives none.

    Raises
    ------
    RankmapError
        When a count given is not a positive integer, or a part of an MPMD command has none.
    """
    if not argv:
        return None
    options = _OPENMPI_COUNT_OPTIONS if _is_openmpi(argv[0]) else _COUNT_OPTIONS
    parts: list[list[str]] = [[]]
    for word in argv[1:]:
        if word == ":":
            parts.append([])
        else:
            parts[-1].append(word)
    counts = [_segment_ranks(argv[0], part, options) for part in parts]
    if len(counts) == 1:
        return counts[0]
    if any(c is None for c in counts):
        raise RankmapError("an MPMD launcher command (parts joined by ':') needs a process "
                           "count in every part, e.g. -n 2 ./a : -n 2 ./b")
    return sum(counts)


def command_for(fmt: str, argv: list[str], path: str, n_ranks: int | None = None) -> LaunchPlan:
    """The launcher command (and environment) that makes it read the placement file ``path``.

    When ``n_ranks`` is given and the command has no process count, ``-n N`` (``-np N`` for
    smpirun) is added so the launcher starts exactly the ranks placed.

    Parameters
    ----------
    fmt : str
        Placement file format (from :func:`launcher_format`).
    argv : list of str
        The launcher command.
    path : str
        The placement file written for the launcher.
    n_ranks : int, optional
        Number of ranks placed.

    Returns
    -------
    LaunchPlan
        The command to run, the environment variables to add, the file and its format.

    Raises
    ------
    RankmapError
        When an ``srun`` command already sets ``--distribution``/``-m``, or ``fmt`` is not a
        launchable format.
    """
    head, rest = argv[:1], argv[1:]
    own = argv[1:program_index(argv)]              # the launcher's options, not the program's
    taken = [a for a in own if a.split("=", 1)[0] in _PLACING_OPTIONS.get(fmt, ())]
    if taken:
        raise RankmapError(f"remove {taken[0]} from the {os.path.basename(argv[0])} command: "
                           f"launch places the ranks with {_PLACED_BY[fmt]}")
    count: list[str] = []
    if n_ranks is not None and launcher_ranks(argv) is None:
        count = ["-np" if fmt == "hostfile" else "-n", str(n_ranks)]
    if fmt == "slurm":
        if any(a.startswith(("--distribution", "-m")) for a in own):
            raise RankmapError("remove --distribution/-m from the srun command: launch sets "
                               "--distribution=arbitrary")
        return LaunchPlan(head + ["--distribution=arbitrary"] + count + rest,
                          {"SLURM_HOSTFILE": os.path.abspath(path)}, path, fmt)
    if fmt == "openmpi":
        return LaunchPlan(head + ["--rankfile", path] + count + rest, {}, path, fmt)
    if fmt == "mpich":
        return LaunchPlan(head + ["-f", path] + count + rest, {}, path, fmt)
    if fmt == "hostfile":
        return LaunchPlan(head + ["-hostfile", path] + count + rest, {}, path, fmt)
    if fmt == "cray":
        return LaunchPlan(head + count + rest, {"MPICH_RANK_REORDER_METHOD": "3"}, path, fmt)
    raise RankmapError(f"format {fmt!r} cannot be launched: choose slurm, openmpi, mpich, "
                       "hostfile or cray")
