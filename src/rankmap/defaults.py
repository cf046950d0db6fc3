"""Default values the command line states in its help, kept here with no heavy import.

``rankmap COMMAND --help`` builds its parser from these without loading numpy or numba;
the modules that use them (:mod:`rankmap.metrics.link_metrics`, :mod:`rankmap.mappers.refine`)
import them from here, so a default is written once.
"""

from __future__ import annotations

__all__ = ["DEFAULT_PLATEAU_Y", "DEFAULT_BUDGET", "BUDGET_PER_RANK", "MAX_DEFAULT_BUDGET",
           "REFINE_WORK"]

#: fraction of links below the plateau point (seed 000 uses y = 0.99).
DEFAULT_PLATEAU_Y = 0.99

#: default work bound of one refinement, proposed moves evaluated: :data:`BUDGET_PER_RANK` per
#: rank, at least this many and at most :data:`MAX_DEFAULT_BUDGET`
DEFAULT_BUDGET = 20000
#: proposals per rank of the default budget (a local search must visit every rank a few times;
#: on 8,192 ranks 20,000 proposals left 6 % of the hop-bytes a 60,000 one removed)
BUDGET_PER_RANK = 8
#: the largest default budget (65,536 proposals: a few tens of seconds at 8,192 ranks)
MAX_DEFAULT_BUDGET = 1 << 16

#: work bound of one search: route entries (the hop links of the moved flows' routes before
#: and after, each share of a split route apart: a single-path route's hops) looked at
REFINE_WORK = 1 << 27
