"""One line on a terminal when a command has to compile rankmap's numba kernels first.

On a machine where numba's cache is still empty (the first run after an install, or after an
upgrade of numba or rankmap), the first command compiles the kernels it calls: about 20 s
for ``rankmap demo`` instead of 1.3 s, with nothing but a spinner to say why. The kernels log
each compile (:data:`rankmap.kernels.jit.LOGGER`); :func:`announce_compiles` prints the first
of them as one line on stderr, when stderr is a terminal, from this process only (the
workers of ``--jobs``, forked from it, inherit the handler and stay silent). The line goes to
whatever ``sys.stderr`` is when it is printed, so a live progress bar shows it above itself.
"""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["KERNEL_LOGGER", "NOTICE", "FirstCompileNotice", "announce_compiles"]

#: the line printed before the first compile
NOTICE = ("rankmap: compiling its numba kernels for this machine, once: later runs load "
          "them from numba's cache")

#: the logger of the kernels' compiles (rankmap.kernels.jit.LOGGER, named here so that the
#: command line does not import numba to configure it)
KERNEL_LOGGER = "rankmap.kernels.jit"


class FirstCompileNotice(logging.Handler):
    """Prints :data:`NOTICE` on the first compile logged by the process that made it.

    Parameters
    ----------
    pid : int, optional
        The process that prints (default: this one).
    """

    def __init__(self, pid: int | None = None):
        super().__init__(logging.INFO)
        self.pid = os.getpid() if pid is None else pid
        self.shown = False

    def emit(self, record: logging.LogRecord) -> None:
        """Print the notice for the first record of this process; ignore the rest.

        Parameters
        ----------
        record : logging.LogRecord
            A compile logged by a kernel.

        Returns
        -------
        None
        """
        if self.shown or os.getpid() != self.pid:
            return
        self.shown = True
        print(NOTICE, file=sys.stderr, flush=True)


def announce_compiles() -> FirstCompileNotice | None:
    """Have the first kernel compile of this process announced on stderr (a terminal only).

    Returns
    -------
    FirstCompileNotice or None
        The handler added to the kernels' logger; None when stderr is not a terminal (nothing
        is printed there: scripts and tests see the output they expect) or one is already
        there.
    """
    if not sys.stderr.isatty():
        return None
    logger = logging.getLogger(KERNEL_LOGGER)
    if any(isinstance(h, FirstCompileNotice) for h in logger.handlers):
        return None
    handler = FirstCompileNotice()
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False   # the notice only: no line of Python's default logging
    return handler
