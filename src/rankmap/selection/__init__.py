"""Selection: compare named candidates and choose one automatically (``auto``).

Above evaluation: :func:`compare` and :func:`auto_select` share one candidate loop
(:mod:`rankmap.selection.candidates`) and one :class:`~rankmap.evaluation.Evaluator`, so the
routing and metrics a command was given drive both the ranking and the refinements.
"""

from .auto import GRAPH_RANK_LIMIT, REFINE_TOP, auto_select, candidate_names
from .candidates import (distinct_names, evaluate_candidates, expand_names, sort_best_first,
                         split_names)
from .compare import compare
from .names import build_placement, check_name, is_auto

__all__ = ["compare", "auto_select", "candidate_names", "distinct_names", "expand_names",
           "evaluate_candidates", "sort_best_first", "split_names", "build_placement",
           "check_name", "is_auto", "GRAPH_RANK_LIMIT", "REFINE_TOP"]
