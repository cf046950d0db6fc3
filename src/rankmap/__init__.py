"""rankmap: topology-aware MPI rank mapping.

Describe how a program communicates (patterns), the machine and the nodes you got (machines,
allocation), generate candidate placements (mappers), predict the load on every network link
(routing, metrics), pick the best and write it out for the launcher (io).
"""

__version__ = "0.1.0"
