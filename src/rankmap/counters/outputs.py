"""The output files of one run of ``rankmap counters`` or ``rankmap links``, removed again when
the run fails or is interrupted.

A Ctrl-C after the first of several maps left the report and one map of three; the rerun was
then refused (``output 'm.html' exists; use --force``). Each file is written atomically (it is
complete or absent); :class:`RunOutputs` also makes the set of them all-or-nothing for the
files this run created: a file that existed before the run (replaced with ``--force``) is
never removed.
"""

from __future__ import annotations

import os

__all__ = ["RunOutputs"]


class RunOutputs:
    """Context manager recording the files a run creates; on an exception (an error, Ctrl-C,
    SIGTERM) it removes them and lets the exception go on.

    Examples
    --------
    >>> with RunOutputs() as outputs:                      # doctest: +SKIP
    ...     outputs.write("m.html", lambda: report.write("m.html", force=False))
    """

    def __init__(self):
        self.created: list[str] = []

    def __enter__(self) -> "RunOutputs":
        return self

    def write(self, path: str, writer):
        """Run ``writer()``, which writes ``path``; remember ``path`` if it is new.

        Parameters
        ----------
        path : str
            The output file (a symbolic link stands for the file it leads to).
        writer : callable
            Writes the file (atomically); its result is returned.

        Returns
        -------
        object
            What ``writer`` returns.
        """
        from ..io.atomic import resolve_output

        target = os.path.abspath(resolve_output(path))
        existed = os.path.lexists(target)
        result = writer()
        if not existed and os.path.lexists(target):
            self.created.append(target)
        return result

    def remove_created(self) -> None:
        """Remove the files this run created (never one that existed before it)."""
        for path in reversed(self.created):
            try:
                os.unlink(path)
            except OSError:
                pass
        self.created.clear()

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is not None:
            self.remove_created()
        return False
