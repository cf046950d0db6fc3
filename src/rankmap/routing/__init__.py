"""Routing models: how a flow of bytes between two nodes spreads over directed links.

The kernels here work on plain arrays (compiled with numba); each machine kind calls its own.
"""
