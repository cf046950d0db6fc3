"""Compiled (numba) kernels on plain arrays: torus walks, dragonfly stages, tree routes.

The lowest layer above the core: kernels know nothing of machines or routers; the machines
call them for hop distances and the routers (:mod:`rankmap.routing`) for paths and loads.
"""

__all__ = ["torus", "dragonfly", "fattree"]
