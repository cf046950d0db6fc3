"""Named machine shapes: Blue Gene/P partitions (seed 001, Table 1) and Blue Gene/L.

BG/P nodes have 4 cores and 425 MB/s torus links per direction (3.4 Gb/s); BG/L nodes 2
cores and 175 MB/s links (2 bits a cycle at 700 MHz, 167 MiB/s: seed 004, which measures
147 MB/s with MPI ping-pong).
"""

__all__ = ["BGP_SHAPES", "BGP_CORES", "BGL_SHAPES", "BGL_CORES", "PRESETS", "BGP_LINK_BW",
           "BGL_LINK_BW"]

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

#: torus link bandwidth per direction (bytes/s)
BGP_LINK_BW = 425e6
BGL_LINK_BW = 175e6

PRESETS = {"bgp": (BGP_SHAPES, BGP_CORES, "Blue Gene/P", BGP_LINK_BW),
           "bgl": (BGL_SHAPES, BGL_CORES, "Blue Gene/L", BGL_LINK_BW)}
