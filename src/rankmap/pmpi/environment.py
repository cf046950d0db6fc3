"""The ``RANKMAP_*`` settings the PMPI library reads, and how a launcher exports them."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess

__all__ = ["ENV_VARS", "launcher_kind", "launcher_env_args", "mpicc_for_launcher",
           "engine_command", "check_reorder_variables", "YES_NO", "launcher_index"]

#: every variable the library (or its engine) reads, with what it does
ENV_VARS = {
    "RANKMAP_MACHINE": "machine spec or .toml file; without it the ranks are not reordered",
    "RANKMAP_MAPPING": "placement to apply (default auto)",
    "RANKMAP_STENCIL": "star (default: 2d neighbours) or box (3^d - 1) for Cartesian grids",
    "RANKMAP_SEED": "seed of random placements (default 0)",
    "RANKMAP_NODE": "this process's node id or host name, or a comma list (entry r for "
                    "MPI_COMM_WORLD rank r); default: MPI_Get_processor_name",
    "RANKMAP_TIMEOUT": "seconds the engine may take (default 60; 0 disables reordering)",
    "RANKMAP_BIN": "the rankmap command the library runs (default: rankmap on PATH)",
    "RANKMAP_VERBOSE": "1 (or yes, true, on, a level above 0): one line on rank 0 for every "
                       "reordering and recording",
    "RANKMAP_HOST_NODES": "host=id,...: the machine node of each of the job's hosts (launch "
                          "--reorder --nodes sets it)",
    "RANKMAP_RECORD": "write the communication matrix to this file at MPI_Finalize",
    "RANKMAP_RECORD_FORMAT": "csv (default) or mat (dense N x N matrix of bytes)",
    "RANKMAP_RECORD_COLLECTIVES": "0 (or no, false, off): record point-to-point sends only",
}

#: the words the library reads as yes or no (any case)
YES_NO = ("1", "yes", "true", "on", "0", "no", "false", "off")


def check_reorder_variables(env) -> None:
    """Refuse a ``RANKMAP_*`` value the library would refuse inside the job (where it can only
    leave the ranks in the MPI library's order, with a warning).

    Parameters
    ----------
    env : mapping of str to str
        The environment the job gets (``os.environ``).

    Raises
    ------
    RankmapError
        For a bad ``RANKMAP_STENCIL``, ``RANKMAP_TIMEOUT``, ``RANKMAP_RECORD_COLLECTIVES``,
        ``RANKMAP_REORDER``, ``RANKMAP_VERBOSE``, ``RANKMAP_RECORD_FORMAT`` or
        ``RANKMAP_HOST_NODES``, naming it and its value.
    """
    import re

    from ..errors import RankmapError
    from ..mpi.nodes import HOST_NODES_ENV, host_nodes

    def value(name):
        return env.get(name, "")

    stencil = value("RANKMAP_STENCIL")
    if stencil and stencil not in ("star", "box"):
        raise RankmapError(f"RANKMAP_STENCIL={stencil!r}: choose star or box")
    timeout = value("RANKMAP_TIMEOUT")
    # what the library's strtod reads whole: a decimal number (1_0 and 0x10 are not
    # Python's float() and C's alike), or inf
    if timeout and (not re.fullmatch(r"\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|"
                                     r"\s*\+?inf(inity)?", timeout, re.IGNORECASE | re.ASCII)
                    or float(timeout) < 0):
        raise RankmapError(f"bad RANKMAP_TIMEOUT={timeout!r}: seconds from 0 expected "
                           "(0 turns reordering off)")
    for name in ("RANKMAP_RECORD_COLLECTIVES", "RANKMAP_REORDER", "RANKMAP_VERBOSE"):
        flag = value(name)
        # RANKMAP_VERBOSE also takes a level (2 is on, as in the library); the library reads
        # another word as off (RANKMAP_REORDER: no reordering), with a warning
        level = name == "RANKMAP_VERBOSE" and re.fullmatch(r"[0-9]+", flag) is not None
        if flag and flag.lower() not in YES_NO and not level:
            raise RankmapError(f"bad {name}={flag!r}: expected 1 or 0 (yes/no, true/false, "
                               "on/off)")
    fmt = value("RANKMAP_RECORD_FORMAT")
    if fmt and fmt not in ("csv", "mat"):
        raise RankmapError(f"bad RANKMAP_RECORD_FORMAT={fmt!r}: choose csv or mat")
    host_nodes(value(HOST_NODES_ENV))


_KINDS = {"mpirun.openmpi": "openmpi", "mpiexec.openmpi": "openmpi", "orterun": "openmpi",
          "prterun": "openmpi", "srun": "slurm", "mpiexec.hydra": "hydra",
          "mpirun.mpich": "hydra", "mpiexec.mpich": "hydra"}


def launcher_kind(program: str) -> str:
    """``openmpi``, ``slurm``, ``hydra`` (MPICH) or ``other`` for a launcher command name.

    ``mpirun``/``mpiexec`` are resolved through their symbolic links (Debian alternatives),
    then by their ``--version`` text (asked once a process for each path).

    Parameters
    ----------
    program : str
        The launcher command (name or path), e.g. ``mpirun``, ``srun``.

    Returns
    -------
    str
        The launcher family.
    """
    name = os.path.basename(program)
    if name in _KINDS:
        return _KINDS[name]
    if name not in ("mpirun", "mpiexec"):
        return "other"
    path = shutil.which(program)
    return _kind_of_path(path) if path else "other"


@functools.lru_cache(maxsize=32)
def _kind_of_path(path: str) -> str:
    real = os.path.basename(os.path.realpath(path))
    if real in _KINDS:
        return _KINDS[real]
    try:
        text = subprocess.run([path, "--version"], capture_output=True, text=True,
                              timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        text = ""
    if "Open MPI" in text or "OpenRTE" in text:
        return "openmpi"
    if "HYDRA" in text:
        return "hydra"
    return "other"


#: commands that start another command (``env A=1 mpirun ...``, ``timeout 600 mpirun ...``), with
#: their options that take a value as a separate word, and whether a first plain word is
#: theirs (timeout's DURATION, taskset's MASK)
_WRAPPERS = {"env": ({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}, 0),
             "timeout": ({"-s", "--signal", "-k", "--kill-after"}, 1),
             "nice": ({"-n", "--adjustment"}, 0), "nohup": (set(), 0), "setsid": (set(), 0),
             "stdbuf": ({"-i", "-o", "-e", "--input", "--output", "--error"}, 0),
             "time": ({"-f", "--format", "-o", "--output"}, 0), "taskset": (set(), 1)}


def launcher_index(argv: list[str]) -> int:
    """Index in ``argv`` of the MPI launcher, past commands that start it
    (``env OMP_NUM_THREADS=1 mpirun ...``, ``timeout 600 srun ...``, ``nice -n 5 ...``).

    Parameters
    ----------
    argv : list of str
        The command line.

    Returns
    -------
    int
        The launcher's index (0 when the command starts with it; ``len(argv)`` when the
        wrappers take every word).
    """
    i = 0
    while i < len(argv) and os.path.basename(argv[i]) in _WRAPPERS:
        name = os.path.basename(argv[i])
        takes_value, plain = _WRAPPERS[name]
        i += 1
        while i < len(argv):
            word = argv[i]
            if word == "--":
                i += 1
                break
            if word.startswith("-") and word != "-":
                i += 2 if word in takes_value else 1
            elif name == "env" and "=" in word and not word.startswith(("/", ".")):
                i += 1          # env's NAME=VALUE
            else:
                break
        i += plain
    return min(i, len(argv))


def launcher_env_args(argv: list[str], names: list[str]) -> list[str]:
    """``argv`` with the options that make the launcher pass the variables ``names`` on.

    Open MPI's mpirun: ``-x NAME`` each; MPICH's hydra: ``-genvlist a,b``; srun:
    ``--export=ALL`` (with the variables set in its environment; unchanged when the command
    already has ``--export``). Other launchers get the command unchanged (they pass their
    environment on).

    Parameters
    ----------
    argv : list of str
        The launch command, launcher first.
    names : list of str
        Environment variables the processes must see.

    Returns
    -------
    list of str
        A new command line, the options inserted right after the launcher.
    """
    if not argv or not names:
        return list(argv)
    at = launcher_index(argv)
    if at >= len(argv):
        return list(argv)
    kind = launcher_kind(argv[at])
    head, rest = argv[:at + 1], argv[at + 1:]
    if kind == "openmpi":
        extra = [a for n in names for a in ("-x", n)]
    elif kind == "hydra":
        # hydra takes one environment setting: -genvall passes everything already; a
        # -genvlist of the user's gets the names added; -genvnone (pass nothing) becomes
        # the list of the names alone
        own = rest[:_program_start(rest)]
        if any(a.lstrip("-") == "genvall" for a in own):
            return list(argv)
        for k, a in enumerate(own):
            if a.lstrip("-") == "genvlist" and k + 1 < len(own):
                merged = ",".join(dict.fromkeys(own[k + 1].split(",") + list(names)))
                return head + rest[:k + 1] + [merged] + rest[k + 2:]
            if a.lstrip("-") == "genvnone":
                return head + rest[:k] + ["-genvlist", ",".join(names)] + rest[k + 1:]
        extra = ["-genvlist", ",".join(names)]
    elif kind == "slurm":
        if any(a.startswith("--export") for a in rest):
            return list(argv)
        extra = ["--export=ALL"]
    else:
        extra = []
    return head + extra + rest


def _program_start(words: list[str]) -> int:
    """Index of the program in a launcher's arguments (its options before it)."""
    from ..launcher_words import program_index
    return program_index(["launcher"] + words) - 1


#: the C compiler wrapper of each launcher family's MPI (Debian installs both families side by
#: side: mpicc is one of them, chosen by the alternatives system)
_FAMILY_MPICC = {"openmpi": "mpicc.openmpi", "hydra": "mpicc.mpich"}


def mpicc_for_launcher(launcher: str, mpicc: str | None = None) -> str | None:
    """The MPI C compiler wrapper the PMPI library must be built with to run under
    ``launcher``: the one given, else ``$RANKMAP_MPICC``, else the wrapper of the launcher's
    MPI family when it is installed (``mpirun.mpich``: ``mpicc.mpich``), else None (mpicc).

    A library built with another MPI than the program's makes every process fail in its
    first MPI call, so under MPICH's hydra the MPICH build is taken even where ``mpicc`` is
    Open MPI's.

    Parameters
    ----------
    launcher : str
        The launcher command (name or path), e.g. ``mpirun.mpich``.
    mpicc : str, optional
        The wrapper given on the command line (``--mpicc``).

    Returns
    -------
    str or None
        The wrapper's name, or None for the default (``mpicc``); an empty ``mpicc`` is given
        back as it is, for :func:`rankmap.pmpi.build.find_mpicc` to refuse.
    """
    from .build import MPICC_ENV
    if mpicc is not None and not mpicc.strip():
        return mpicc        # an empty --mpicc: find_mpicc refuses it by name
    if mpicc or os.environ.get(MPICC_ENV, "").strip():
        return mpicc or None
    family = _FAMILY_MPICC.get(launcher_kind(launcher))
    return family if family and shutil.which(family) else None


def engine_command(argv0: str | None = None) -> str:
    """The ``rankmap`` command the PMPI library runs as its engine (``RANKMAP_BIN``).

    The installed script beside this Python, else ``rankmap`` on PATH, else ``argv0`` when it
    is an executable file; otherwise (``python -m rankmap`` without the script) a two-line
    shell script in rankmap's cache that runs this Python with ``-m rankmap`` and this
    package on ``PYTHONPATH``, written once per interpreter and package.

    Parameters
    ----------
    argv0 : str, optional
        The running command's ``sys.argv[0]``.

    Returns
    -------
    str
        Absolute path of an executable file.
    """
    import hashlib
    import shlex
    import sys

    from ..io.atomic import write_atomic
    from .build import cache_root

    beside = os.path.join(os.path.dirname(sys.executable), "rankmap")
    for found in (beside if os.access(beside, os.X_OK) else None, shutil.which("rankmap"),
                  argv0 if argv0 and os.path.isfile(argv0) and os.access(argv0, os.X_OK)
                  and os.path.basename(argv0) != "__main__.py" else None):
        if found:
            return os.path.abspath(found)
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
        __file__))))
    key = hashlib.sha256(f"{sys.executable}\0{package_parent}".encode()).hexdigest()[:16]
    path = os.path.join(os.path.dirname(cache_root()), "bin", f"rankmap-{key}")
    text = ("#!/bin/sh\n"
            f"PYTHONPATH={shlex.quote(package_parent)}${{PYTHONPATH:+:$PYTHONPATH}} "
            f"exec {shlex.quote(sys.executable)} -m rankmap \"$@\"\n")
    current = None
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as fh:
            current = fh.read()
    if current != text:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_atomic(path, text, force=True)
    os.chmod(path, 0o755)
    return path
