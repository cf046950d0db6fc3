"""Splitting of short spec strings such as ``torus:8x8x8:cores=4`` or ``stencil:64x64:box``.

A spec is ``kind`` followed by ``:``-separated fields; a field is either a flag/positional
word (``box``, ``8x8x8``) or ``key=value``. Parsing of the meaning is left to each kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import RankmapError


@dataclass
class Spec:
    """A parsed spec: its kind, positional words in order, and key=value options."""

    text: str
    kind: str
    words: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)

    def pop_option(self, key: str, default=None):
        """Remove and return option ``key`` (or ``default`` when absent)."""
        return self.options.pop(key, default)

    def pop_flag(self, word: str) -> bool:
        """Remove positional ``word`` if present; return whether it was."""
        if word in self.words:
            self.words.remove(word)
            return True
        return False

    def reject_leftovers(self, what: str) -> None:
        """Raise naming the first word or option nobody consumed."""
        if self.words:
            raise RankmapError(f"unknown {what} field {self.words[0]!r} in {self.text!r}")
        if self.options:
            key = next(iter(self.options))
            raise RankmapError(f"unknown {what} option {key!r} in {self.text!r}")


def split_spec(text: str, what: str = "spec") -> Spec:
    """Split ``kind:word:key=value:...`` into a :class:`Spec` (commas also separate options)."""
    if not isinstance(text, str) or not text.strip():
        raise RankmapError(f"empty {what}")
    text = text.strip()
    parts = [p.strip() for p in text.split(":")]
    kind = parts[0].lower()
    if not kind:
        raise RankmapError(f"bad {what} {text!r}: missing kind before ':'")
    spec = Spec(text=text, kind=kind)
    for part in parts[1:]:
        for item in part.split(",") if "=" in part else [part]:
            item = item.strip()
            if not item:
                raise RankmapError(f"bad {what} {text!r}: empty field")
            if "=" in item:
                key, _, value = item.partition("=")
                key = key.strip().lower()
                if not key or not value.strip():
                    raise RankmapError(f"bad {what} {text!r}: field {item!r} needs key=value")
                if key in spec.options:
                    raise RankmapError(f"bad {what} {text!r}: option {key!r} given twice")
                spec.options[key] = value.strip()
            else:
                spec.words.append(item)
    return spec


def parse_shape(text: str, what: str = "shape", max_dims: int | None = None) -> tuple[int, ...]:
    """Parse ``8x16x32`` into ``(8, 16, 32)``: positive integers separated by ``x``."""
    fields = text.lower().split("x")
    try:
        shape = tuple(int(f) for f in fields)
    except ValueError:
        raise RankmapError(f"bad {what} {text!r}: expected sizes like 8x16x32") from None
    if any(s <= 0 for s in shape):
        raise RankmapError(f"bad {what} {text!r}: every size must be positive")
    if max_dims is not None and len(shape) > max_dims:
        raise RankmapError(f"bad {what} {text!r}: at most {max_dims} dimensions")
    return shape


def parse_int(text: str, what: str, minimum: int | None = 0) -> int:
    """Parse an integer option, naming ``what`` and the value on failure."""
    try:
        value = int(str(text).strip())
    except ValueError:
        raise RankmapError(f"bad {what} {text!r}: not an integer") from None
    if minimum is not None and value < minimum:
        raise RankmapError(f"bad {what} {text!r}: must be at least {minimum}")
    return value
