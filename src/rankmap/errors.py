"""The one exception type for bad user input.

Every error a user can cause (malformed spec, unknown name, bad file, impossible placement)
raises :class:`RankmapError` with a one-line message naming the bad value; the command line
prints it and exits with status 2.
"""

__all__ = ["RankmapError"]


class RankmapError(ValueError):
    """Bad input from the user: the message is shown as is, without a traceback."""
