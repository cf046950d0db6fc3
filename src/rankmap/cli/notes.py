"""Notes for the user (a pattern recognised as a stencil, a mapper falling back to another)
held until the command succeeds: a command that fails prints its one error line only.

Commands call :func:`note`; :func:`rankmap.cli.main` prints the held notes on stderr when the
command returns and drops them when it fails.
"""

from __future__ import annotations

import sys

__all__ = ["note", "flush_notes", "drop_notes"]

_HELD: list[str] = []


def note(text: str) -> None:
    """Hold one line for stderr until the command succeeds.

    Parameters
    ----------
    text : str
        The note (one line).
    """
    _HELD.append(" ".join(str(text).split()))


def flush_notes(file=None) -> None:
    """Print the held notes (stderr by default) and forget them.

    Parameters
    ----------
    file : text stream, optional
        Where to print them.
    """
    out = sys.stderr if file is None else file
    for line in _HELD:
        print(line, file=out)
    _HELD.clear()


def drop_notes() -> None:
    """Forget the held notes (the command failed: its error is the only line)."""
    _HELD.clear()
