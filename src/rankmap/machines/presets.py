"""Named machine shapes: Blue Gene/P partitions (seed 001, Table 1) and Blue Gene/L.

BG/P nodes have 4 cores, BG/L nodes 2; both have 425 MB/s links per direction.
"""

__all__ = ["BGP_SHAPES", "BGP_CORES", "BGL_SHAPES", "BGL_CORES", "PRESETS"]

#: Argonne BG/P partition shapes by node count (seed 001, Table 1).
BGP_SHAPES = {
    512: (8, 8, 8),
    1024: (8, 8, 16),
    2048: (8, 8, 32),
    4096: (8, 16, 32),
    8192: (8, 32, 32),
    16384: (16, 32, 32),
    32768: (32, 32, 32),
}
BGP_CORES = 4

#: Blue Gene/L partition shapes used in seed 004.
BGL_SHAPES = {
    512: (8, 8, 8),
    1024: (8, 8, 16),
}
BGL_CORES = 2

PRESETS = {"bgp": (BGP_SHAPES, BGP_CORES, "Blue Gene/P"),
           "bgl": (BGL_SHAPES, BGL_CORES, "Blue Gene/L")}
