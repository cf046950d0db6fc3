"""``rankmap record``: run an MPI program with the PMPI library recording its communication."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from ..errors import RankmapError
from ..threads import child_environ
from ..io.atomic import check_writable, move_into_place, resolve_output
from ..pmpi.build import library_path
from ..pmpi.environment import check_reorder_variables, mpicc_for_launcher
from ..pmpi.environment import launcher_env_args
from .common import add_force, example
from .notes import note

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    """Register the ``record`` subcommand.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The ``rankmap`` subcommand parsers.
    """
    p = sub.add_parser(
        "record", help="record who sends how much to whom in any MPI program",
        description="Run the launcher command with the rankmap PMPI library preloaded "
        "(LD_PRELOAD, exported with mpirun -x / srun --export / mpiexec -genvlist) and "
        "RANKMAP_RECORD set: at MPI_Finalize the bytes and messages every process sent to every "
        "other (MPI_COMM_WORLD ranks; point-to-point sends of every kind from any communicator, "
        "collectives as documented logical transfers), split into phases at MPI_Pcontrol calls, "
        "are written to FILE. Then a summary is printed. Read the file with --pattern graph:FILE.",
        epilog=example("rankmap record -o comm.csv -- mpirun -n 512 ./lulesh2.0 -s 20\n"
                       "rankmap compare --machine torus:8x8x8 --pattern graph:comm.csv "
                       "--mappings all"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="where to write the recording")
    p.add_argument("--format", choices=("csv", "mat"), default=None,
                   help="csv: src,dst,bytes,messages,phase rows; mat: dense N x N matrix of "
                   "bytes over the whole run (default: mat for a .mat FILE, else csv)")
    p.add_argument("--no-collectives", action="store_true",
                   help="record point-to-point sends only")
    p.add_argument("--mpicc", metavar="CMD",
                   help="MPI C compiler wrapper of the program's MPI (default: "
                   "$RANKMAP_MPICC, else the launcher's: mpicc.mpich under MPICH's "
                   "mpirun.mpich or mpiexec.hydra, else mpicc)")
    add_force(p)
    p.add_argument("launcher_argv", nargs=argparse.REMAINDER, metavar="-- LAUNCHER ARGS",
                   help="the launcher command line, after '--'")
    p.set_defaults(func=run)


def run(args) -> int:
    """Run the program with recording on, then summarise the file it wrote.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Returns
    -------
    int
        Exit status: 0 (bad input raises RankmapError, which :func:`rankmap.cli.main` turns
        into one line and status 2).
    """
    argv = list(args.launcher_argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise RankmapError("no program to run: give the launcher command after '--', e.g. "
                           "-- mpirun -n 4 ./app")
    from ..pmpi.environment import launcher_index, launcher_kind
    at = min(launcher_index(argv), len(argv) - 1)    # past env, timeout & co.
    launcher = argv[at]
    if os.path.basename(launcher).startswith("smpirun"):
        raise RankmapError("record cannot run under smpirun: SimGrid loads a private copy of "
                           "the program for every rank, out of the recording library's reach. "
                           "Record the program built with mpicc under mpirun (it sends the "
                           "same bytes), then run its smpicc build in SimGrid with: rankmap "
                           "validate --pattern graph:FILE ... -- ./app.smpi")
    is_mat = args.output.lower().endswith(".mat")   # as graph: reads it (case-blind)
    fmt = args.format or ("mat" if is_mat else "csv")
    if fmt == "mat" and not is_mat:
        raise RankmapError(f"--format mat writes a .mat file, got -o {args.output!r}")
    if fmt == "csv" and is_mat:
        raise RankmapError(f"-o {args.output!r}: a .mat file holds the dense matrix; use "
                           "--format mat or a .csv name")
    # the user's RANKMAP_REORDER (=1 reorders while recording) and RANKMAP_VERBOSE go to the
    # job: a bad value is refused here, not read as another word by the library
    check_reorder_variables({k: v for k, v in os.environ.items()
                             if k not in ("RANKMAP_RECORD_FORMAT", "RANKMAP_RECORD_COLLECTIVES")})
    path = resolve_output(os.path.abspath(args.output))   # a link: the file it leads to
    check_writable(path, args.force)
    lib = library_path(mpicc_for_launcher(launcher, args.mpicc))
    if not args.mpicc and not os.environ.get("RANKMAP_MPICC", "").strip() and \
            launcher_kind(launcher) == "other":
        note(f"rankmap record: note: cannot tell the MPI of {os.path.basename(launcher)!r}: "
             "the library is built with mpicc; give --mpicc if the program uses another MPI")
    # the program writes into a folder of its own beside the output, which takes the file's
    # name only at the end, by a link that fails if the output appeared during the run
    try:
        folder = tempfile.mkdtemp(prefix=".rankmap-record-", dir=os.path.dirname(path))
    except OSError as exc:
        raise RankmapError(f"cannot write output {args.output!r}: {exc.strerror}") from None
    tmp = os.path.join(folder, os.path.basename(path))
    keep = False
    try:
        proc = _run_recording(argv, lib, tmp, fmt, args.no_collectives)
        if not os.path.exists(tmp):
            raise RankmapError(f"the program wrote no recording to {args.output!r} (exit "
                               f"status {proc.returncode}; did it call MPI_Finalize? was it "
                               "built with the MPI the library was built for (--mpicc)? did "
                               "the launcher refuse its options (see above)?)")
        try:
            move_into_place(tmp, path, args.force)
        except RankmapError as exc:
            keep = True
            raise RankmapError(f"{exc} (it appeared during the run); the recording is kept "
                               f"in {tmp}") from None
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"rankmap record: wrote {args.output} ({fmt})", file=sys.stderr)
    from ..pmpi.recording import summarize_recording  # numpy: to run, not for --help

    for line in summarize_recording(path).lines():
        print(line)
    if proc.returncode != 0:
        print(f"rankmap record: the program exited with status {proc.returncode}",
              file=sys.stderr)
    return proc.returncode


def _run_recording(argv: list[str], lib: str, tmp: str, fmt: str, no_collectives: bool):
    """Run the launcher command with the recording library preloaded, writing ``tmp``."""
    preload = os.environ.get("LD_PRELOAD", "")
    env = {"LD_PRELOAD": lib + (":" + preload if preload else ""), "RANKMAP_RECORD": tmp,
           "RANKMAP_RECORD_FORMAT": fmt,
           "RANKMAP_RECORD_COLLECTIVES": "0" if no_collectives else "1",
           # recording only: the program's MPI_Cart_create & co. are the MPI library's own
           # (unless RANKMAP_REORDER=1 asks for both)
           "RANKMAP_REORDER": os.environ.get("RANKMAP_REORDER", "").strip() or "0"}
    cmd = launcher_env_args(argv, list(env))
    try:
        proc = subprocess.Popen(cmd, env=child_environ(env))
    except FileNotFoundError:
        raise RankmapError(f"launcher {argv[0]!r} not found") from None
    try:
        proc.wait()
    except BaseException:
        _stop_launcher(proc)
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode)


def _stop_launcher(proc) -> None:
    """End the launcher when ``record`` is interrupted (SIGTERM from a batch system or
    ``timeout``, Ctrl-C): a SIGTERM lets it stop its processes (a SIGKILL, as
    ``subprocess.run`` sends, left the program's ranks running without a parent); a SIGKILL
    only if it has not ended 10 s later."""
    if proc.poll() is not None:
        return
    try:
        proc.terminate()
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    except OSError:
        pass
