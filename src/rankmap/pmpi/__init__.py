"""The rankmap PMPI library for C, C++ and Fortran MPI programs (loaded with ``LD_PRELOAD``).

* :mod:`.build` — compiles the shipped C sources with the MPI's own ``mpicc`` into a cache;
* :mod:`.place` — the engine the library runs on one process to reorder a topology
  (``rankmap pmpi place REQUEST -o RESULT``);
* :mod:`.recording` — reads and summarises what ``RANKMAP_RECORD`` wrote;
* :mod:`.environment` — the ``RANKMAP_*`` settings and the launcher options that export them.
"""

from .build import library_path
from .environment import ENV_VARS, launcher_env_args
from .place import place_request
from .recording import RecordSummary, summarize_recording

__all__ = ["library_path", "place_request", "summarize_recording", "RecordSummary",
           "ENV_VARS", "launcher_env_args"]
