"""The ``rankmap`` command: one program, one subcommand per module listed in COMMANDS.

Each command module defines ``add_parser(subparsers)`` which registers its parser and sets
``func`` (called with the parsed args; returns the exit status). Bad input raises
:class:`~rankmap.errors.RankmapError`, printed as one line with exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from .. import __version__
from ..errors import RankmapError

#: command modules, in the order ``rankmap --help`` lists them.
COMMANDS = ["compare", "evaluate", "map_cmd", "demo", "counters", "links", "launch", "bench",
            "nodes", "study", "validate"]


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse's convention too)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every subcommand."""
    parser = _Parser(prog="rankmap", description="Topology-aware MPI rank mapping: predict "
                     "the load a placement puts on every network link, pick the best, and "
                     "write it out for your launcher.",
                     epilog="Run 'rankmap COMMAND --help' for a command's options and example.")
    parser.add_argument("--version", action="version", version=f"rankmap {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``rankmap`` console script.

    Bad input (a :class:`~rankmap.errors.RankmapError`, an unreadable file) prints one line
    on stderr and returns 2; Ctrl-C (also while the command modules load) returns 130 with one
    line; SIGTERM removes the temporary files of unfinished writes and returns 143.
    """
    import warnings

    command = "rankmap"
    try:
        from ..io.atomic import install_signal_cleanup

        install_signal_cleanup()
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help, --version, or a usage error already printed
            return exc.code if isinstance(exc.code, int) else 2
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
        command = f"rankmap {args.command}"
        with warnings.catch_warnings():
            # numpy's floating-point warnings never reach the user: results are validated
            warnings.simplefilter("ignore", RuntimeWarning)
            return int(args.func(args) or 0)
    except RankmapError as exc:
        print(f"{command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into head & co.: not an error
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except MemoryError:
        print(f"{command}: error: out of memory; use a smaller machine, pattern or allocation",
              file=sys.stderr)
        return 2
    except OSError as exc:  # unreadable input, full disk, permission denied
        from ..validate import show
        where = f" {show(exc.filename)}" if getattr(exc, "filename", None) else ""
        print(f"{command}: error:{where} {exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rankmap: interrupted", file=sys.stderr)
        return 130


def _one_line(exc: BaseException, width: int = 400) -> str:
    """The message on one line, cut to ``width`` characters."""
    text = " ".join(str(exc).split())
    return text if len(text) <= width else text[:width - 3] + "..."


if __name__ == "__main__":
    sys.exit(main())
