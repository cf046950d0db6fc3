"""Splitting of short spec strings such as ``torus:8x8x8:cores=4`` or ``stencil:64x64:box``.

A spec is ``kind`` followed by ``:``-separated fields; a field is either a flag/positional
word (``box``, ``8x8x8``) or ``key=value``. Parsing of the meaning is left to each kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import RankmapError
from .validate import INT64_MAX, check_limit, is_digits, parse_int_text, show

__all__ = ["Spec", "split_spec", "parse_shape", "parse_int", "files_beside"]


@dataclass
class Spec:
    """A parsed spec: its kind, positional words in order, and key=value options."""

    text: str
    kind: str
    words: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)

    def pop_option(self, key: str, default=None):
        """Remove and return option ``key`` (or ``default`` when absent).

        Parameters
        ----------
        key : str
            Option name (the part before ``=``).
        default : object
            What to return when the option is absent.

        Returns
        -------
        str or object
            The option's text, or ``default``.
        """
        return self.options.pop(key, default)

    def pop_flag(self, word: str) -> bool:
        """Remove positional ``word`` if present; return whether it was.

        Parameters
        ----------
        word : str
            A positional word (``box``, ``periodic``).

        Returns
        -------
        bool
            Whether the word was there (it is removed).
        """
        if word in self.words:
            self.words.remove(word)
            return True
        return False

    def reject_leftovers(self, what: str) -> None:
        """Raise naming the first word or option nobody consumed.

        Parameters
        ----------
        what : str
            What the spec describes (``machine``, ``pattern``), for the message.

        Raises
        ------
        RankmapError
            A word or option was left unconsumed.
        """
        if self.words:
            word = self.words[0]
            fields = [f.strip() for f in self.text.split(":")[1:]]
            if fields.count(word) > 1:
                raise RankmapError(f"bad {what} {show(self.text)}: field {show(word, 40)} "
                                   "given twice")
            raise RankmapError(f"unknown {what} field {show(word, 40)} in {show(self.text)}")
        if self.options:
            key = next(iter(self.options))
            raise RankmapError(f"unknown {what} option {show(key, 40)} in {show(self.text)}")


def split_spec(text: str, what: str = "spec", list_keys=()) -> Spec:
    """Split ``kind:word:key=value:...`` into a :class:`Spec` (commas also separate options).

    A field ``key=value`` whose key is in ``list_keys`` keeps its commas: the value is a list
    (``dims=0,2``, ``offsets=+1,0;-1,0``).

    Parameters
    ----------
    text : str
        The spec (``torus:8x8x8:cores=2``).
    what : str
        What it describes, for error messages.
    list_keys : iterable of str
        Keys whose values keep their commas.

    Returns
    -------
    Spec
        Kind (lower case), positional words in order, options.

    Raises
    ------
    RankmapError
        An empty spec, a missing kind, or a repeated option.
    """
    if not isinstance(text, str) or not text.strip():
        raise RankmapError(f"empty {what}")
    text = text.strip()
    parts = [p.strip() for p in text.split(":")]
    kind = parts[0].lower()
    if not kind:
        raise RankmapError(f"bad {what} {show(text)}: missing kind before ':'")
    spec = Spec(text=text, kind=kind)
    for part in parts[1:]:
        listed = "=" in part and part.partition("=")[0].strip().lower() in list_keys
        for item in part.split(",") if "=" in part and not listed else [part]:
            item = item.strip()
            if not item:
                raise RankmapError(f"bad {what} {show(text)}: empty field")
            if "=" in item:
                key, _, value = item.partition("=")
                key = key.strip().lower()
                if not key or not value.strip():
                    raise RankmapError(f"bad {what} {show(text)}: field {show(item, 40)} needs "
                                       "key=value")
                if key in spec.options:
                    raise RankmapError(f"bad {what} {show(text)}: option {show(key, 40)} given "
                                       "twice")
                spec.options[key] = value.strip()
            else:
                spec.words.append(item)
    return spec


def parse_shape(text: str, what: str = "shape", max_dims: int | None = None,
                cap: str | None = None, subject: str | None = None) -> tuple[int, ...]:
    """Parse ``8x16x32`` into ``(8, 16, 32)``: positive integers separated by ``x``.

    Parameters
    ----------
    text : str
    what : str
        Name of the shape for the message.
    max_dims : int or None
        Most dimensions allowed.
    cap : str or None
        A :data:`rankmap.validate.LIMITS` name (``"nodes"``, ``"ranks"``) the product of the
        sizes must stay within; checked before anything is allocated.
    subject : str or None
        What has that many (default ``text``), for the cap's message.

    Returns
    -------
    tuple of int
    """
    fields = str(text).lower().split("x")
    if max_dims is not None and len(fields) > max_dims:
        raise RankmapError(f"bad {what} {show(text)}: at most {max_dims} dimensions")
    shape = []
    for f in fields:
        if not is_digits(f.strip()):
            raise RankmapError(f"bad {what} {show(text)}: expected sizes like 8x16x32")
        # under a cap, a size past int64 is reported against the cap, not int64's range
        shape.append(parse_int_text(f, what, maximum=None if cap is not None else INT64_MAX))
    if any(s <= 0 for s in shape):
        raise RankmapError(f"bad {what} {show(text)}: every size must be positive")
    if cap is not None:
        total = 1
        for s in shape:
            total *= s
        check_limit(total, cap, subject or text)
    return tuple(shape)


def parse_int(text: str, what: str, minimum: int | None = 0,
              maximum: int | None = None) -> int:
    """Parse an integer option, naming ``what`` and the value on failure.

    Parameters
    ----------
    text : str
    what : str
    minimum, maximum : int or None
        Inclusive bounds; the value always fits in a signed 64-bit integer.

    Returns
    -------
    int
    """
    from .validate import INT64_MAX
    return parse_int_text(text, what, minimum=minimum,
                          maximum=INT64_MAX if maximum is None else maximum)


#: the files a spec can name: a pattern spec that is a TOML file or starts with graph:FILE,
#: a machine spec's node=FILE.xml and topology=FILE
_FILE_FIELDS = (re.compile(r"^(graph:)([^:]+)"), re.compile(r"(:node=)([^:]+\.xml)(?=:|$)"),
                re.compile(r"(:topology=)([^:]+)"), re.compile(r"^()(\S+\.toml)$"))


def files_beside(spec: str, folder: str) -> str:
    """``spec`` as written in a TOML file in ``folder``, its relative file names (a pattern
    ``graph:FILE`` or ``other.toml``, a machine's ``node=FILE.xml`` or ``topology=FILE``;
    in every part of ``A + B``) made relative to ``folder``: a TOML file reads the same from
    any working directory.

    Parameters
    ----------
    spec : str
        A machine or pattern spec from a TOML file.
    folder : str
        The TOML file's folder.

    Returns
    -------
    str
        The spec with those file names joined to ``folder`` (absolute ones kept).
    """
    import os

    def beside(m):
        name = m.group(2)
        return m.group(1) + (name if os.path.isabs(name) else os.path.join(folder, name))

    parts = re.split(r"(\s\+\s)", spec)
    out = []
    for part in parts:
        if not re.fullmatch(r"\s\+\s", part):
            text = part.strip()
            lead = part[:len(part) - len(part.lstrip())]
            trail = part[len(part.rstrip()):]
            for file_field in _FILE_FIELDS:
                text = file_field.sub(beside, text)
            part = lead + text + trail
        out.append(part)
    return "".join(out)
