"""The ``rankmap`` command: one program, one subcommand per module listed in COMMANDS.

Each command module defines ``add_parser(subparsers)`` which registers its parser and sets
``func`` (called with the parsed args; returns the exit status). Bad input raises
:class:`~rankmap.errors.RankmapError`, printed as one line with exit status 2.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import os
import signal
import sys

from .. import __version__, interrupted_while_loading
from ..errors import RankmapError

__all__ = ["COMMANDS", "build_parser", "main", "console"]

#: command name -> (module, one-line summary), in the order ``rankmap --help`` lists them.
#: Only the module of the command being run is imported (the others pull in numba, scipy and
#: matplotlib), so ``rankmap --version`` and ``rankmap --help`` start at once. The summaries
#: must equal each module's own ``help=`` (a test checks it).
COMMANDS = {
    "compare": ("compare", "evaluate candidate placements side by side, mark the best"),
    "evaluate": ("evaluate", "metrics of one placement (mapfile or mapping name), every link's "
                 "load"),
    "map": ("map_cmd", "write a placement file for a launcher"),
    "demo": ("demo", "the embedded default: BG/P 4096-node torus, 2-D box halo, all rank "
             "orders"),
    "counters": ("counters", "plateau point, PDF/CDF and time correlation of link counters"),
    "links": ("links", "link-load maps and the hottest links of a counters file"),
    "launch": ("launch", "run srun/mpirun/mpiexec/smpirun/aprun with a computed placement"),
    "bench": ("bench", "MPI benchmarks (pairs, cart, halo, fft) under a placement"),
    "nodes": ("nodes", "list the allocated nodes: name, node id, coordinates"),
    "study": ("study", "sweep node counts and threads per rank over random allocations"),
    "validate": ("validate", "predicted time (rankmap) vs simulated time (SimGrid SMPI) per "
                 "placement"),
    "simgrid": ("simgrid_cmd",
                "SimGrid files: the platform XML of a machine, the SMPI build's shim"),
    "record": ("record", "record who sends how much to whom in any MPI program"),
    "pmpi": ("pmpi", "the PMPI library that reorders MPI_Cart_create & co. in any MPI program"),
}


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        # no abbreviations: `compare --plot cdf.png` was read as --plot-dir and made a folder
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args=None, namespace=None):
        """argparse's, noting the options of the innermost command parsed (for the hint of
        an unknown option: ``--mapping`` -> ``--mappings``)."""
        namespace, extras = super().parse_known_args(args, namespace)
        if not hasattr(namespace, "_options"):
            setattr(namespace, "_options",
                    [o for action in self._actions for o in action.option_strings])
        return namespace, extras

    def error(self, message):  # one line, exit 2 (argparse's convention too)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser(only: str | None = "*") -> argparse.ArgumentParser:
    """The argument parser: every command's full parser (``only="*"``), or only the full
    parser of command ``only`` and a one-line entry for each of the others (``None``: none).

    Parameters
    ----------
    only : str or None
        ``"*"`` for every command's full parser, a command name for that one's full parser and
        one-line entries for the others (fast start-up), or None for one-line entries only.

    Returns
    -------
    argparse.ArgumentParser
        The ``rankmap`` parser.
    """
    parser = _Parser(prog="rankmap", description="Topology-aware MPI rank mapping: predict "
                     "the load a placement puts on every network link, pick the best, and "
                     "write it out for your launcher.",
                     epilog="Run 'rankmap COMMAND --help' for a command's options and example.")
    parser.add_argument("--version", action="version", version=f"rankmap {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (module, summary) in COMMANDS.items():
        if only == "*" or only == name:
            importlib.import_module(f"{__name__}.{module}").add_parser(sub)
        else:
            sub.add_parser(name, help=summary)
    return parser


def console() -> None:
    """Entry point of the installed ``rankmap`` script: :func:`main`, then exit with its status.

    Three things make the script start and stop faster than :func:`main` as tests call it,
    and change no output:

    * the collector is off while the command's modules load (numpy, numba, scipy and ours),
      and the objects they made are then frozen out of its passes (``main(freeze_loaded=
      True)``): its collections during the imports and numba's first kernel load took
      0.06-0.07 s of every command that runs a compiled kernel;
    * the objects still alive at the end are frozen too (:func:`gc.freeze`);
    * once :func:`main` has returned, the interpreter's teardown is skipped: the first exit
      handler registered, so the last to run (:func:`_exit_without_teardown`), flushes
      stdout and stderr (the C library's streams are flushed as :func:`sys.exit` is handled)
      and leaves with :func:`os._exit`.
      Everything before the teardown still happens, in the interpreter's order: threads
      joined, the other ``atexit`` handlers, output flushed. Only freeing the objects of
      numba, llvmlite and the command one by one is left to the operating system: 0.02 s of
      the 131,072-rank default ``compare`` (the collector's passes over them, before they
      were frozen, took 0.11-0.15 s). Under MPI (mpi4py loaded) the interpreter's own exit
      runs: mpi4py finalises MPI after the teardown.

    Raises
    ------
    SystemExit
        Always, with :func:`main`'s exit status.
    """
    status: list[int | None] = [None]  # set once main returns
    atexit.register(_exit_without_teardown, status)
    code = main(freeze_loaded=True)
    status[0] = code
    from ..io.atomic import mark_exiting
    mark_exiting()      # a SIGTERM in the exit functions ends the process, no traceback
    gc.freeze()
    sys.exit(code)


def _exit_without_teardown(status: list[int | None]) -> None:
    """Flush stdout and stderr, then end the process with ``status[0]`` without the teardown.

    As the interpreter does, a failed flush of stdout turns a status of 0 into 120. With no
    status (main did not return: an MPI worker's or a signal's ``SystemExit``, an uncaught
    exception) the interpreter's own exit goes on, with its own status; so it does when MPI
    is loaded (mpi4py finalises it from the interpreter's last exit functions). The C
    library's buffered output was flushed before, as :func:`sys.exit` is handled."""
    code = status[0]
    if code is None or "mpi4py.MPI" in sys.modules:
        return  # mpi4py finalises MPI from the interpreter's last exit functions
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            if stream is sys.stdout and code == 0:
                code = 120
    os._exit(code)


def main(argv: list[str] | None = None, *, freeze_loaded: bool = False) -> int:
    """The ``rankmap`` command (the installed script calls it through :func:`console`).

    Bad input (a :class:`~rankmap.errors.RankmapError`, an unreadable file) prints one line
    on stderr and returns 2; Ctrl-C (also while the command modules load) returns 130 with one
    line; SIGTERM removes the temporary files of unfinished writes and returns 143.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: ``sys.argv[1:]``).
    freeze_loaded : bool
        Keep the garbage collector off while the command's modules load, then freeze the
        objects they made out of its passes (:func:`gc.freeze`) and turn it back on, as the
        installed script does (:func:`console`). Off by default: a process that calls
        ``main`` many times, as the tests do, would keep every frozen object.

    Returns
    -------
    int
        Exit status: 0, 2 on bad input, 130 on Ctrl-C, 143 / 129 on SIGTERM / SIGHUP.
    """
    import warnings

    from ..kernels.blas_probe import decline_blas_probe
    from ..threads import limit_blas_threads

    limit_blas_threads()  # before numpy and scipy load (rankmap.threads says why)
    decline_blas_probe()  # numba's first kernel load without scipy.linalg (the module says why)
    command = "rankmap"
    spreads = False   # the command spreads its search over an MPI launch's processes
    if sys.stdout is None:   # started with stdout closed (>&-): print() would drop the results
        if sys.stderr is not None:
            print("rankmap: error: standard output is closed: nowhere to print the results",
                  file=sys.stderr)
        return 2
    try:
        from ..io.atomic import install_signal_cleanup

        install_signal_cleanup()
        # a stream the caller closed (`rankmap ... >&-`) is None in Python: its output is
        # dropped, as print drops it, instead of failing where a command asks it a question
        for name in ("stdout", "stderr"):
            if getattr(sys, name) is None:
                setattr(sys, name, open(os.devnull, "w"))
        # a path given as non-UTF-8 bytes (kept by Python as surrogates) is echoed escaped,
        # as stderr already does, instead of failing the print after the work is done
        if hasattr(sys.stdout, "reconfigure"):
            sys.stdout.reconfigure(errors="backslashreplace")
        argv = sys.argv[1:] if argv is None else list(argv)
        collecting = freeze_loaded and gc.isenabled()
        if collecting:
            gc.disable()
        try:
            parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
        finally:
            if collecting:
                gc.freeze()
                gc.enable()
        if signal.getsignal(signal.SIGINT) is interrupted_while_loading:
            # loaded: a normal Ctrl-C, noted (a command loads numpy & co. when it runs, and a
            # Ctrl-C inside a C extension's start can come out as its ImportError)
            signal.signal(signal.SIGINT, _interrupt)
        try:
            args, unknown = parser.parse_known_args(argv)
        except SystemExit as exc:  # --help, --version, or a usage error already printed
            return exc.code if isinstance(exc.code, int) else 2
        if not getattr(args, "func", None):
            if unknown:       # `rankmap --bogus`: one line, not the whole help
                print(f"rankmap: error: unrecognized arguments: {' '.join(unknown)}",
                      file=sys.stderr)
            else:
                parser.print_help()
            return 2
        command = f"rankmap {args.command}"
        if unknown:   # argparse names only "rankmap": the command is named, as other errors do
            print(f"{command}: error: unrecognized arguments: {' '.join(unknown)}"
                  f"{_hint(args.command, unknown, getattr(args, '_options', []))}",
                  file=sys.stderr)
            return 2
        spreads = (args.command in SPREAD_COMMANDS
                   and not getattr(args, "search_procs", None))
        _check_output_names(args)
        if args.command in SINGLE_PROCESS_COMMANDS and not _first_of_launch(command):
            return 0
        from .compile_notice import announce_compiles
        from .notes import drop_notes, flush_notes
        announce_compiles()   # a first run compiles the kernels: say so on a terminal
        drop_notes()
        with warnings.catch_warnings():
            # numpy's floating-point warnings never reach the user: results are validated
            warnings.simplefilter("ignore", RuntimeWarning)
            # any other warning is one line naming the command, not Python's file:line and
            # source line
            warnings.showwarning = _warning_printer(command)
            code = int(args.func(args) or 0)
            if spreads and "rankmap.mpi.spread" in sys.modules:
                from ..mpi.spread import finish_collectively
                finish_collectively()   # a process that failed after the search says so
        flush_notes()  # notes only for a command that succeeded: an error stays one line
        return code
    except RankmapError as exc:
        _drop_notes()
        if _tell_others(spreads, _one_line(exc)):
            print(f"{command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into head & co.: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except MemoryError:
        _drop_notes()
        text = "out of memory; use a smaller machine, pattern or allocation"
        if _tell_others(spreads, text):
            print(f"{command}: error: {text}", file=sys.stderr)
        return 2
    except OSError as exc:  # unreadable input, full disk, permission denied
        _drop_notes()
        from ..validate import show
        where = f" {show(exc.filename)}:" if getattr(exc, "filename", None) else ""
        if _tell_others(spreads, f"{where} {exc.strerror or exc}".strip()):
            print(f"{command}: error:{where} {exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        _drop_notes()
        print("rankmap: interrupted", file=sys.stderr)
        return 130
    except SystemError as exc:
        # Ctrl-C or SIGTERM handled while a compiled kernel's dispatcher was calling back
        # into Python: the dispatcher reports the handler's exception as its cause
        stop = _stopped_by(exc)
        if stop is None:
            if _INTERRUPTED[0]:
                print("rankmap: interrupted", file=sys.stderr)
                return 130
            raise
        _drop_notes()
        if isinstance(stop, KeyboardInterrupt):
            print("rankmap: interrupted", file=sys.stderr)
            return 130
        return stop.code if isinstance(stop.code, int) else 1
    except Exception:
        if _INTERRUPTED[0]:     # what a Ctrl-C turned into (numpy's ImportError, mid-import)
            _drop_notes()
            print("rankmap: interrupted", file=sys.stderr)
            return 130
        _tell_others(spreads, _one_line(sys.exc_info()[1]))   # a bug: still no hang
        raise


def _tell_others(spreads: bool, text: str) -> bool:
    """Under ``mpirun -n K``, tell the other processes that this one failed (``text``): they
    stop with the error instead of waiting for this one (:func:`rankmap.mpi.spread.
    fail_collectively`). Nothing outside an MPI launch. Returns whether this process prints
    the error (rank 0 alone does under MPI)."""
    if "rankmap.mpi.spread" not in sys.modules and not (spreads and any(
            os.environ.get(name, "").strip() for name in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE"))):
        return True  # (rankmap.mpi.spread.SIZE_VARIABLES, without its imports)
    from ..mpi.spread import fail_collectively
    return fail_collectively(text, spreads)


#: set by the Ctrl-C handler of a command that runs
_INTERRUPTED: list[bool] = [False]


def _interrupt(signum, frame):
    """SIGINT once the command's modules are loaded: Python's KeyboardInterrupt, noted."""
    _INTERRUPTED[0] = True
    raise KeyboardInterrupt


def _warning_printer(command: str):
    """A :func:`warnings.showwarning` that prints ``COMMAND: warning: MESSAGE`` on one line."""
    def show(message, category, filename, lineno, file=None, line=None):
        text = " ".join(str(message).split()).removeprefix("rankmap: ")
        print(f"{command}: warning: {text}", file=file or sys.stderr)
    return show


#: commands that run in one process: started by ``mpirun -n K``, rank 0 runs them and the
#: other processes end at once (compare, map, evaluate and launch spread their search over the
#: processes; bench is an MPI program; record and pmpi are started by or start MPI programs)
SINGLE_PROCESS_COMMANDS = ("study", "counters", "links", "nodes", "demo", "simgrid",
                           "validate")
#: commands whose search is spread over the processes of ``mpirun -n K`` (launch without
#: --search-procs): each makes its MPI executor before any other work
SPREAD_COMMANDS = ("compare", "map", "evaluate", "launch")


#: options naming a file or folder to write, by their argparse destination
OUTPUT_OPTIONS = {"output": "-o", "report": "--report", "plot_dir": "--plot-dir",
                  "plot": "--plot", "scatter": "--scatter", "links_out": "--links-out",
                  "out": "--out", "json": "--json"}
#: options naming files to read (or specs that may name one: ``graph:FILE``, ``site.toml``,
#: ``fattree:topology=FILE``), by their argparse destination
INPUT_OPTIONS = {"pattern": "--pattern", "machine": "--machine", "nodes": "--nodes",
                 "mapfile": "--mapfile", "hostfile": "--hostfile", "times": "--times",
                 "file": "FILE.csv", "files": "FILE.csv", "request": "REQUEST"}
#: inputs for which an empty value would silently mean "not given", or name no file
NONEMPTY_INPUTS = {"times": "--times", "labels": "--labels", "names": "--names",
                   "file": "FILE.csv", "files": "FILE.csv", "mapfile": "--mapfile",
                   "hostfile": "--hostfile"}


def _check_output_names(args) -> None:
    """Output names fit before any work: an empty name (``--report ''``) is an error, not no
    output; ``-`` is not standard output (files are written atomically), so it is refused
    rather than made a file named ``-``; and two outputs may not name the same path (the
    second would overwrite the first after the work). Inputs whose empty value would read as
    not given (``--times ''``) are refused too."""
    given = []
    for dest, flag in {**OUTPUT_OPTIONS, **NONEMPTY_INPUTS}.items():
        value = getattr(args, dest, None)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and not item.strip():
                what = ("an empty value" if dest in ("labels", "names")
                        else "an empty file name")
                raise RankmapError(f"{flag} {item!r}: {what}")
        if dest in OUTPUT_OPTIONS and isinstance(value, str):
            if "\0" in value:
                from ..validate import show
                raise RankmapError(f"bad {flag} {show(value)}: a file name holds no NUL byte")
            if value == "-":
                raise RankmapError(f"{flag} -: rankmap writes a file, not standard output: "
                                   "give a file name")
            given.append((flag, value))
    _check_outputs_are_not_inputs(args, given)
    seen: dict[str, tuple[str, str]] = {}
    for flag, value in given:
        key = os.path.realpath(value)
        if key in seen:
            first, first_value = seen[key]
            same = (f"both name {value!r}" if value == first_value else
                    f"({first_value!r} and {value!r}) name the same file")
            raise RankmapError(f"{first} and {flag} {same}: give each output its own file")
        seen[key] = (flag, value)


def _named_files(spec: str) -> list[str]:
    """The existing files a spec may name: itself, what follows its kind (``graph:FILE``) and
    every ``key=FILE`` value."""
    pieces = [spec, *spec.split(":")[1:]]
    pieces += [p.split("=", 1)[1] for p in spec.split(":") if "=" in p]
    return [p for p in pieces if p and os.path.isfile(p)]


def _check_outputs_are_not_inputs(args, outputs) -> None:
    """No output may be a file the command reads: ``-o g.csv --force`` with ``--pattern
    graph:g.csv`` replaced the pattern with the placement, and a search's hostfile once took
    the name of the user's."""
    read = {}
    for dest, flag in INPUT_OPTIONS.items():
        value = getattr(args, dest, None)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                for path in _named_files(item):
                    read.setdefault(os.path.realpath(path), (flag, item))
    for flag, value in outputs:
        hit = read.get(os.path.realpath(value))
        if hit:
            raise RankmapError(f"{flag} {value!r} is a file this command reads ({hit[0]} "
                               f"{hit[1]!r}): give the output its own file")


#: (command, option it does not have) -> the option that does the job there
_NEAR_OPTIONS = {("compare", "--plot"): "--plot-dir DIR, one plot a phase",
                 ("evaluate", "--plot"): "--report FILE.html",
                 ("compare", "--json"): "--format json",
                 ("evaluate", "--json"): "--format json"}


def _hint(command: str, unknown: list[str], options: list[str]) -> str:
    """``; rankmap C has X`` when an unknown option is another command's spelling of one
    command ``C`` has under another name, else ``; did you mean X?`` for a close spelling of
    one of its ``options`` (``--mapping``, ``--time``: abbreviations are not taken)."""
    import difflib

    for word in unknown:
        near = _NEAR_OPTIONS.get((command, word.split("=", 1)[0]))
        if near:
            return f"; rankmap {command} has {near}"
    for word in unknown:
        flag = word.split("=", 1)[0]
        if flag.startswith("--"):
            longer = [o for o in options if o.startswith(flag) and o.startswith("--")]
            close = longer[:1] or difflib.get_close_matches(flag, options, n=1, cutoff=0.75)
            if close:
                return f"; did you mean {close[0]}?"
    return ""


def _first_of_launch(command: str) -> bool:
    """Whether this process runs a one-process command: not started by an MPI launcher of
    several processes, or its rank 0 (which says the others did nothing)."""
    from ..mpi.spread import launched_rank, launched_size
    size = launched_size()
    if size == 1:
        return True
    if launched_rank() != 0:
        return False
    print(f"{command}: runs in one process: the other {size - 1} of this MPI launch did "
          "nothing", file=sys.stderr)
    return True


def _stopped_by(exc: BaseException) -> BaseException | None:
    """The KeyboardInterrupt or SystemExit (a signal's) among ``exc``'s causes, or None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def _drop_notes() -> None:
    from .notes import drop_notes
    drop_notes()


def _one_line(exc: BaseException, width: int = 400) -> str:
    """The message on one line, cut to ``width`` characters."""
    text = " ".join(str(exc).split())
    return text if len(text) <= width else text[:width - 3] + "..."


if __name__ == "__main__":
    sys.exit(main())
