"""argparse ``type=`` converters built on :mod:`rankmap.validate`: every number option is
finite, in range and (where a count is meant) an integer, so ``--seed -1``, ``--bins 1e9`` or
``--y nan`` is one clear line and exit 2."""

from __future__ import annotations

import argparse

from ..errors import RankmapError
from ..validate import INT64_MAX, check_limit, parse_float_text, parse_int_text

__all__ = ["int_arg", "float_arg", "SEED", "THREADS", "FRACTION", "JOBS"]


def int_arg(minimum: int | None = 0, maximum: int | None = INT64_MAX,
            cap: str | None = None, what: str = "value"):
    """A converter to an integer in [minimum, maximum] (and within the cap ``cap``).

    Parameters
    ----------
    minimum, maximum : int or None
        Inclusive bounds.
    cap : str or None
        A :data:`rankmap.validate.LIMITS` name.
    what : str
        Name for the message.

    Returns
    -------
    callable
    """
    def convert(text: str) -> int:
        try:
            value = parse_int_text(text, what, minimum, maximum)
            if cap is not None:
                check_limit(value, cap, f"{what} {value}")
        except RankmapError as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"bad {what} ")) from None
        return value
    convert.__name__ = "integer"
    return convert


def float_arg(minimum: float | None = None, maximum: float | None = None,
              positive: bool = False, what: str = "value"):
    """A converter to a finite float in [minimum, maximum] (``positive``: above zero).

    Parameters
    ----------
    minimum, maximum : float or None
    positive : bool
    what : str

    Returns
    -------
    callable
    """
    def convert(text: str) -> float:
        try:
            return parse_float_text(text, what, minimum, maximum, positive)
        except RankmapError as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"bad {what} ")) from None
    convert.__name__ = "number"
    return convert


#: --seed: a non-negative integer below 2^63 (numpy seeds are non-negative).
SEED = int_arg(0, INT64_MAX)
#: --threads: threads per rank.
THREADS = int_arg(1, 1 << 16)
#: --y and similar fractions in (0, 1].
FRACTION = float_arg(0.0, 1.0, positive=True)
#: --jobs: worker processes (at most rankmap.selection.parallel.MAX_JOBS = 512).
JOBS = int_arg(1, 512, what="--jobs")
