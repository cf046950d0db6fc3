"""rankmap: topology-aware MPI rank mapping.

Describe how a program communicates (patterns), the machine and the nodes you got (machines,
allocation), generate candidate placements (mappers), predict the load on every network link
(routing, metrics), pick the best and write it out for the launcher (io).
"""

__all__ = ["__version__", "interrupted_while_loading"]

__version__ = "0.1.0"


def interrupted_while_loading(signum, frame):
    """SIGINT handler while modules load: print one line and exit with status 130.

    Parameters
    ----------
    signum : int
        The signal number (SIGINT).
    frame : frame or None
        The interrupted frame (unused).

    Raises
    ------
    SystemExit
        Always, with status 130.
    """
    import sys
    sys.stderr.write("rankmap: interrupted\n")
    raise SystemExit(130)


def _quiet_start() -> None:
    """In the ``rankmap`` console script (only there: an embedding program keeps its own
    handler), a Ctrl-C while numpy, numba and the command modules load is one line, not a
    KeyboardInterrupt trace; :func:`rankmap.cli.main` restores Python's handler once loaded."""
    import os
    import signal
    import sys

    if os.path.basename(sys.argv[0] if sys.argv else "") == "rankmap" \
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, interrupted_while_loading)


_quiet_start()
