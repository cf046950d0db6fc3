"""Parsing of sizes, bandwidths and times given as text (``1MiB``, ``425MB/s``, ``50ns``)."""

from __future__ import annotations

import re

from .errors import RankmapError

_SIZE_UNITS = {
    "": 1, "b": 1,
    "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3, "gb": 1000**3,
    "t": 1000**4, "tb": 1000**4,
    "kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4,
}
_TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "": 1.0}
_NUM = r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"


def parse_size(text: str | int | float, what: str = "size", allow_zero: bool = False) -> int:
    """Return a byte count from ``64``, ``8KiB``, ``1MiB``, ``1MB``, ``1.5GB``.

    KiB/MiB/GiB are powers of 1024, KB/MB/GB powers of 1000. The result is an integer
    number of bytes; zero is rejected unless ``allow_zero``, negative values always.
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        m = re.fullmatch(_NUM + r"\s*([a-zA-Z]*)", str(text).strip())
        if not m or m.group(2).lower() not in _SIZE_UNITS:
            raise RankmapError(f"bad {what} {text!r}: expected a number with an optional unit "
                               "such as 64, 8KiB, 1MiB or 1MB")
        value = float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]
    if value < 0 or (value == 0 and not allow_zero) or value != value:
        raise RankmapError(f"bad {what} {text!r}: must be positive")
    if value != int(value):
        raise RankmapError(f"bad {what} {text!r}: not a whole number of bytes")
    return int(value)


def parse_bandwidth(text: str | float, what: str = "bandwidth") -> float:
    """Return bytes per second from ``425MB/s``, ``10GB/s``, ``1GiB/s`` or a plain number."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        s = str(text).strip()
        if s.lower().endswith("/s"):
            s = s[:-2]
        m = re.fullmatch(_NUM + r"\s*([a-zA-Z]*)", s)
        if not m or m.group(2).lower() not in _SIZE_UNITS:
            raise RankmapError(f"bad {what} {text!r}: expected e.g. 425MB/s or 10GB/s")
        value = float(m.group(1)) * _SIZE_UNITS[m.group(2).lower()]
    if not value > 0:
        raise RankmapError(f"bad {what} {text!r}: must be positive")
    return value


def parse_time(text: str | float, what: str = "time", allow_zero: bool = True) -> float:
    """Return seconds from ``50ns``, ``2us``, ``1.5ms``, ``3s`` or a plain number of seconds."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        m = re.fullmatch(_NUM + r"\s*([a-zA-Z]*)", str(text).strip())
        if not m or m.group(2).lower() not in _TIME_UNITS:
            raise RankmapError(f"bad {what} {text!r}: expected e.g. 50ns, 2us, 1ms or 0.5s")
        value = float(m.group(1)) * _TIME_UNITS[m.group(2).lower()]
    if value < 0 or (value == 0 and not allow_zero):
        raise RankmapError(f"bad {what} {text!r}: must be positive")
    return value


def format_bytes(n: float) -> str:
    """Human-readable byte count with binary units (``12.0 MiB``)."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"
