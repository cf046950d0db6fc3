"""File formats: launcher placement files (mapfiles, rank orders, host files), link CSVs,
and the atomic writer every output goes through."""

from .atomic import write_atomic

__all__ = ["write_atomic"]
