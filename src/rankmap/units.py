"""Parsing of sizes, bandwidths and times given as text (``1MiB``, ``425MB/s``, ``50ns``).

Every value is finite and within a physical range (see :data:`MAX_SIZE`, :data:`BANDWIDTH_RANGE`,
:data:`MAX_TIME`): ``1e400`` or ``bw=1e-320`` is an error, never an infinite prediction.

The case of the ``b`` matters, as in networking: ``B`` is bytes, ``b`` bits. A bandwidth in
bits (``10Gb/s``) is converted (1.25e9 bytes/s); a size in bits is refused, never read as
bytes. A time given as text needs its unit (``100`` could be seconds or nanoseconds): only
``0`` may go without one.
"""

from __future__ import annotations

import decimal
import math
import re
import sys

from .errors import RankmapError
from .validate import show

__all__ = ["parse_size", "parse_bandwidth", "parse_time", "format_bytes", "exact_bytes",
           "format_seconds",
           "MAX_SIZE",
           "BANDWIDTH_RANGE", "MAX_TIME"]

_SIZE_UNITS = {
    "": 1, "b": 1,
    "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3,
    "t": 1000**4, "tb": 1000**4, "p": 1000**5, "pb": 1000**5,
    "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4, "pib": 1024**5,
}
_TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "": 1.0}
_NUM = r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"

#: largest message size, and most bytes a flow carries between two ranks in a phase: 1 PiB.
MAX_SIZE = 1 << 50
#: link, NIC and memory bandwidths (bytes/s) must lie in this range: 1 B/s to 1 PB/s.
BANDWIDTH_RANGE = (1.0, 1e15)
#: largest latency or overhead (seconds): one hour.
MAX_TIME = 3600.0


def _split(text, units: dict, what: str, hint: str, shown=None) -> tuple[float, str | None]:
    """The number and the unit as written of a value (``""``: text without a unit; None: a
    number, not text); the unit must be known (in any case), else an error names the value
    (``shown``: as the user wrote it, when ``text`` is a part of it)."""
    shown = text if shown is None else shown
    if isinstance(text, bool):
        raise RankmapError(f"bad {what} {show(shown)}: {hint}")
    if isinstance(text, (int, float)):
        value = float(text) if not isinstance(text, int) or abs(text) < 1 << 1000 else math.inf
        unit = None
    else:
        s = str(text).strip()
        m = re.fullmatch(_NUM + r"\s*([a-zA-Z]*)", s) if len(s) <= 60 else None
        if not m or m.group(2).lower() not in units:
            raise RankmapError(f"bad {what} {show(shown)}: {hint}")
        value, unit = float(m.group(1)), m.group(2)
    if not math.isfinite(value):
        raise RankmapError(f"bad {what} {show(shown)}: not a finite number")
    return value, unit


def _exact(text: str, factor: float) -> decimal.Decimal:
    """The number that begins ``text`` times ``factor``, exactly (the text holds at most 60
    characters, so 200 digits are enough)."""
    number = re.match(_NUM, text.strip()).group(1)
    with decimal.localcontext() as ctx:
        ctx.prec = 200
        return decimal.Decimal(number) * decimal.Decimal(repr(factor))


def _in_bits(unit: str | None) -> bool:
    """Whether a size unit as written counts bits: it ends in a lower-case ``b``."""
    return bool(unit) and unit.endswith("b")


def _number(text, units: dict, what: str, hint: str, shown=None) -> tuple[float, str | None]:
    """The value of ``text`` in its unit's base (bytes, seconds) and the unit as written
    (:func:`_split`); a product that overflows is an error naming ``shown`` (default
    ``text``)."""
    value, unit = _split(text, units, what, hint, shown)
    if unit is None:
        return value, unit
    # the decimal text times the unit, rounded once: 5us is the float nearest 5e-6 (5 * 1e-6
    # is 4.9999999999999996e-06)
    exact = _exact(str(text), units[unit.lower()])
    value = float(exact)
    if not math.isfinite(value):
        raise RankmapError(f"bad {what} {show(text if shown is None else shown)}: not a finite "
                           "number")
    if exact != 0 and abs(value) < sys.float_info.min:
        # 1e-400s read as 0 (or a subnormal that keeps few digits): never quietly rounded
        raise RankmapError(f"bad {what} {show(text if shown is None else shown)}: too small "
                           "to tell from 0")
    return value, unit


def parse_size(text: str | int | float, what: str = "size", allow_zero: bool = False) -> int:
    """Return a byte count from ``64``, ``8KiB``, ``1MiB``, ``1MB``, ``1.5GB``.

    KiB/MiB/GiB are powers of 1024, KB/MB/GB powers of 1000. The result is an integer
    number of bytes, at most :data:`MAX_SIZE`; zero is rejected unless ``allow_zero``,
    negative values always.

    Parameters
    ----------
    text : str or int or float
    what : str
        Name of the value for the message.
    allow_zero : bool

    Returns
    -------
    int
        Bytes.
    """
    hint = "expected a number with an optional unit such as 64, 8KiB, 1MiB or 1MB"
    value, unit = _number(text, _SIZE_UNITS, what, hint)
    if _in_bits(unit):
        raise RankmapError(f"bad {what} {show(text)}: a lower-case b is bits; sizes are bytes "
                           f"(B: 8KB, 8KiB)")
    if value < 0 or (value == 0 and not allow_zero):
        raise RankmapError(f"bad {what} {show(text)}: must be positive")
    if value > MAX_SIZE:
        raise RankmapError(f"bad {what} {show(text)}: at most 1PiB")
    if isinstance(text, str):
        # the decimal text times the unit, exactly: 4.1MB is 4,100,000 bytes (4.1 * 1e6 is
        # 4099999.9999999995 in binary floating point), 100.0000000000000001 is not whole
        exact = _exact(text, _SIZE_UNITS[(unit or "").lower()])
        if exact != exact.to_integral_value():
            raise RankmapError(f"bad {what} {show(text)}: not a whole number of bytes")
        return int(exact)
    if value != int(value):
        raise RankmapError(f"bad {what} {show(text)}: not a whole number of bytes")
    return int(value)


def parse_bandwidth(text: str | float, what: str = "bandwidth") -> float:
    """Return bytes per second from ``425MB/s``, ``10GB/s``, ``1GiB/s`` or bits per second
    (``10Gb/s``: a lower-case b); text needs its B or b (``425`` and ``10G`` are refused),
    a number (int or float, as TOML files give it) is bytes per second.

    Parameters
    ----------
    text : str or float
    what : str
        Name of the value for the message.

    Returns
    -------
    float
        Bytes per second, within :data:`BANDWIDTH_RANGE`.
    """
    t = text
    if isinstance(t, str) and t.strip().lower().endswith("/s"):
        t = t.strip()[:-2]
    hint = "expected e.g. 425MB/s, 10GB/s or 100Gb/s (bits)"
    value, unit = _number(t, _SIZE_UNITS, what, hint, shown=text)
    if not value > 0:       # before the unit's hint, which would suggest '0GB/s'
        raise RankmapError(f"bad {what} {show(text)}: must be positive")
    if unit is not None and not unit.lower().endswith("b"):
        # '425' or '10G': bytes or bits? (a number, as TOML gives it, is bytes/s)
        num = str(t).strip()[:len(str(t).strip()) - len(unit)].strip()
        raise RankmapError(f"bad {what} {show(text)}: say bytes (B) or bits (b), e.g. "
                           f"{num}{unit}B/s or {num}{unit}b/s")
    if _in_bits(unit):
        value /= 8.0
    if not value > 0:
        raise RankmapError(f"bad {what} {show(text)}: must be positive")
    lo, hi = BANDWIDTH_RANGE
    if not lo <= value <= hi:
        raise RankmapError(f"bad {what} {show(text)}: must be between 1B/s and 1PB/s")
    return value


def parse_time(text: str | float, what: str = "time", allow_zero: bool = True) -> float:
    """Return seconds from ``50ns``, ``2us``, ``1.5ms`` or ``3s`` (text needs its unit, but
    for ``0``), or from a number of seconds (int or float, as TOML files give it).

    Parameters
    ----------
    text : str or float
    what : str
        Name of the value for the message.
    allow_zero : bool

    Returns
    -------
    float
        Seconds, at most :data:`MAX_TIME`.
    """
    hint = "expected e.g. 50ns, 2us, 1ms or 0.5s"
    value, unit = _number(text, _TIME_UNITS, what, hint)
    if unit == "" and value != 0:
        num = str(text).strip()
        raise RankmapError(f"bad {what} {show(text)}: give its unit, e.g. {num}ns, {num}us "
                           f"or {num}s")
    if value < 0 or (value == 0 and not allow_zero):
        raise RankmapError(f"bad {what} {show(text)}: must be positive")
    if value > MAX_TIME:
        raise RankmapError(f"bad {what} {show(text)}: at most 3600s")
    return value


def exact_bytes(n: float) -> str:
    """A byte count with every digit (``1,125,899,906,842,625``), for messages that compare
    it with a limit: rounded to 3 digits, a value just past the limit read as the limit.

    Parameters
    ----------
    n : float
        Bytes.

    Returns
    -------
    str
    """
    n = float(n)
    if not math.isfinite(n) or abs(n) >= 1e21:
        return f"{n:.6g}"
    return f"{int(n):,}" if n.is_integer() else f"{n:,.3f}"


def format_bytes(n: float) -> str:
    """Human-readable byte count with binary units (``12.0 MiB``).

    Parameters
    ----------
    n : float
        A byte count.

    Returns
    -------
    str
        ``512 B``, ``12.0 MiB``, ... (binary units, one decimal above bytes). A fraction of
        a byte keeps its digits (``0.5 B``, ``10.67 B``, ``0.000125 B``), never read as
        ``0 B``: adaptive routing and collectives split messages into parts.
    """
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{_byte_digits(n)} B"
        n /= 1024
    return f"{n:.1f} PiB"


def _byte_digits(n: float) -> str:
    """Bytes below 1 KiB: whole counts as integers, fractions to two decimals, and
    below 0.01 B three significant digits."""
    if n.is_integer():
        return f"{n:.0f}"
    if abs(n) < 0.01:
        return f"{n:.3g}"
    return f"{n:.2f}".rstrip("0").rstrip(".")


def format_seconds(t: float) -> str:
    """A time in milliseconds with three decimals (``29.608 ms``); below 10 us, where those
    would show at most one digit, in microseconds (``2.345 us``), below 10 ns in nanoseconds
    (three significant digits below 0.01 ns, never ``0.000 ns``);
    from 10 s on in seconds (``12.500 s``), from 100,000 s (28 h) on in hours.

    Parameters
    ----------
    t : float
        Seconds.

    Returns
    -------
    str
        The time with its unit.
    """
    t = float(t)
    if t != 0 and abs(t) < 1e-11:
        return f"{t * 1e9:.3g} ns"
    if t != 0 and abs(t) < 1e-8:
        return f"{t * 1e9:.3f} ns"
    if t != 0 and abs(t) < 1e-5:
        return f"{t * 1e6:.3f} us"
    if abs(t) >= 1e5:
        return f"{t / 3600:.3f} h"
    if abs(t) >= 10:
        return f"{t:.3f} s"
    return f"{t * 1e3:.3f} ms"
