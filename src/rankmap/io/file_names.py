"""File names made from phase or candidate names: safe characters, never two alike."""

from __future__ import annotations

import os

__all__ = ["file_safe", "distinct_paths"]


def file_safe(text: str) -> str:
    """``text`` with every character other than letters, digits, ``-``, ``_`` and ``.``
    made ``_`` (``a/b`` -> ``a_b``).

    Parameters
    ----------
    text : str
        A phase or candidate name.

    Returns
    -------
    str
        A name that is one path component.
    """
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text)


def distinct_paths(paths: list[str]) -> list[str]:
    """``paths`` with every repeat given ``-2``, ``-3``, ... before its extension, in order,
    so that no file written replaces another written with it (``a_b`` from phases ``a/b``
    and ``a_b``).

    Parameters
    ----------
    paths : list of str
        File paths, possibly repeated.

    Returns
    -------
    list of str
        The same paths, repeats renamed; all distinct.
    """
    out, used = [], set(paths)
    seen: set[str] = set()
    for path in paths:
        if path in seen:
            stem, ext = os.path.splitext(path)
            k = 2
            while f"{stem}-{k}{ext}" in used:
                k += 1
            path = f"{stem}-{k}{ext}"
            used.add(path)
        seen.add(path)
        out.append(path)
    return out
