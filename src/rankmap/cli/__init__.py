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
    """Entry point of the ``rankmap`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except RankmapError as exc:
        print(f"rankmap {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into head & co.: not an error
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # unreadable input, full disk, permission denied
        where = f" {exc.filename!r}" if getattr(exc, "filename", None) else ""
        print(f"rankmap {args.command}: error:{where} {exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rankmap: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
