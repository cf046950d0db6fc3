"""Launcher placement formats, by name (``rankmap map --emit NAME``).

Each emitter turns a Mapping into the text a launcher reads. Formats register themselves in
:data:`EMITTERS` with a one-line description.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import RankmapError
from .bgmap import format_mapfile


@dataclass
class Emitter:
    """A placement file format: ``write(mapping, machine, allocation) -> text``."""

    name: str
    write: Callable
    description: str
    #: printed after writing, e.g. the launcher options that use the file ({path} substituted)
    usage: str = ""


EMITTERS: dict[str, Emitter] = {}


def register_emitter(emitter: Emitter) -> None:
    """Add a format."""
    EMITTERS[emitter.name] = emitter


def get_emitter(name: str) -> Emitter:
    """The format called ``name`` or a clear error listing the known ones."""
    if name not in EMITTERS:
        raise RankmapError(f"unknown --emit format {name!r}: choose from {', '.join(EMITTERS)}")
    return EMITTERS[name]


register_emitter(Emitter(
    "bgp", format_mapfile,
    "Blue Gene/L-P mapfile: one line per rank, 'x y z t' (e.g. '0 0 0 1')",
    usage="mpirun -mapfile {path} ...   (Blue Gene/P: or BG_MAPPING={path})"))
