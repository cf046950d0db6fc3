"""Routing models: how a flow of bytes between two nodes spreads over a machine's links.

One :class:`Router` class per routing (``dor``, ``adaptive`` on tori and meshes; ``minimal``,
``valiant``, ``ugal`` on dragonflies; ``dmodk``, ``ecmp`` on trees). :func:`router_for` builds
the one a machine and a routing name ask for.
"""

from __future__ import annotations

from ..errors import RankmapError
from ..machines import Dragonfly, GridMachine, Machine
from ..machines.fattree import TreeMachine
from .base import LinkLoads, Router
from .dragonfly import UGAL, DragonflyMinimal, Valiant
from .fattree import ECMP, DmodK
from .torus import DOR, Adaptive

__all__ = ["Router", "LinkLoads", "router_for", "routing_names", "DOR", "Adaptive",
           "DragonflyMinimal", "Valiant", "UGAL", "DmodK", "ECMP"]

#: machine class -> its router classes, the default first
ROUTERS: tuple[tuple[type, tuple[type, ...]], ...] = (
    (GridMachine, (DOR, Adaptive)),
    (Dragonfly, (DragonflyMinimal, Valiant, UGAL)),
    (TreeMachine, (DmodK, ECMP)),
)


def _classes(machine: Machine) -> tuple[type, ...]:
    for cls, routers in ROUTERS:
        if isinstance(machine, cls):
            return routers
    raise RankmapError(f"no routing model for a {machine.kind} machine")


def routing_names(machine: Machine) -> tuple[str, ...]:
    """Routing names a machine understands, the default first.

    Parameters
    ----------
    machine : Machine
        The network.

    Returns
    -------
    tuple of str
        E.g. ``("dor", "adaptive")`` on a torus.
    """
    return tuple(r.name for r in _classes(machine))


def router_for(machine: Machine, routing: "str | Router | None" = None) -> Router:
    """The router of ``machine`` called ``routing`` (None: the machine's default).

    Parameters
    ----------
    machine : Machine
        The network to route on.
    routing : str, Router or None
        A routing name (``--routing``), a router (returned as is when it is bound to this
        machine) or None for the default.

    Returns
    -------
    Router
        A router bound to ``machine``.
    """
    if isinstance(routing, Router):
        if routing.machine is not machine:
            raise RankmapError(f"router {routing!r} belongs to another machine")
        return routing
    name = machine.check_routing(routing)
    for cls in _classes(machine):
        if cls.name == name:
            return cls(machine)
    raise RankmapError(f"unknown routing {routing!r} for a {machine.kind}")
