"""Mapper names at the selection level: every registry name plus ``auto``."""

from __future__ import annotations

from ..evaluation import Evaluator
from ..mappers import Placement, check_fits, validate_mapping
from ..mappers import build_mapping as build_registered
from ..mappers import resolve
from .in_node import in_node_accept

__all__ = ["build_placement", "is_auto", "check_name"]


def is_auto(name: str) -> bool:
    """Whether a mapping name asks for automatic selection.

    Parameters
    ----------
    name : str
        A mapping name.

    Returns
    -------
    bool
        True for ``auto`` (any case, surrounding blanks ignored).
    """
    return name.strip().lower() == "auto"


def check_name(name: str, machine) -> None:
    """Check a mapping name before any work.

    Parameters
    ----------
    name : str
        A mapping name.
    machine : Machine
        The machine (rank orders depend on its letters).

    Raises
    ------
    RankmapError
        ``name`` is neither ``auto`` nor a name the registry resolves.
    """

    if not is_auto(name):
        resolve(name, machine, extra_known=("auto",))


def build_placement(name: str, pattern, machine, allocation, seed: int = 0, *, routing=None,
                    budget: int | None = None, time_options=None,
                    evaluator: Evaluator | None = None, executor=None,
                    stage=None, progress=None, in_node: bool = True,
                    name_pick: bool = False) -> Placement:
    """The placement called ``name``: ``auto`` (:func:`rankmap.selection.auto.auto_select`) or
    any registered mapper (:func:`rankmap.mappers.build_mapping`).

    Parameters
    ----------
    name : str
        Placement name.
    pattern, machine, allocation
        The inputs.
    seed : int
        Seed of randomised mappers.
    routing : Router or str, optional
        Routing for ``auto`` and ``refine`` (ignored when ``evaluator`` is given).
    budget : int, optional
        Work bound (proposed moves) of refinements.
    time_options : TimeOptions, optional
        Time-model settings ``auto`` ranks with, and the in-node step's rule is judged with
        (ignored when ``evaluator`` is given; default: :class:`~rankmap.timing.TimeOptions`'s).
    evaluator : Evaluator, optional
        The evaluator ``auto`` selects with (its router also drives ``refine``).
    executor : Executor, optional
        Where ``auto`` runs its candidates and refinements (default: in this process).
    stage : callable, optional
        ``stage(name, what)`` when one of ``auto``'s candidates starts a step.
    progress : callable, optional
        ``progress(name)`` when one of ``auto``'s candidates is done.
    in_node : bool
        On a machine with a node structure, run the in-node placement step
        (:func:`~rankmap.mappers.domain_placement.in_node_step`) after the mapper (and on
        every one of ``auto``'s candidates); False keeps the mappers' cores (``--in-node keep``).
        With a time model on (the evaluator's, else ``time_options``) a node keeps its new
        order only where it is predicted no slower
        (:func:`~rankmap.selection.in_node.time_accept`), as ``auto`` and ``compare`` judge it.
    name_pick : bool
        Name ``auto``'s placement after its pick, ``auto (refine:rcb)``, instead of ``auto``.

    Returns
    -------
    Placement
        The validated placement (named ``auto`` for automatic selection, or after its pick).
    """
    router = evaluator.router if evaluator is not None else routing
    if is_auto(name):
        from .auto import auto_select
        check_fits(pattern.n_ranks, allocation)
        comp = auto_select(pattern, machine, allocation, seed, router, budget=budget,
                           time_options=time_options, evaluator=evaluator,
                           executor=executor, stage=stage, progress=progress,
                           in_node=in_node, baseline=False)   # (the pick alone is used)
        return validate_mapping(f"auto ({comp.best.name})" if name_pick else "auto",
                                comp.best.mapping.core_of_rank, pattern.n_ranks, allocation)
    accept = (in_node_accept(pattern, machine, allocation, evaluator, time_options)
              if in_node else None)
    return build_registered(name, pattern, machine, allocation, seed, router=router,
                            budget=budget, extra_known=("auto",), in_node=in_node,
                            in_node_accept=accept)
