"""The rankmap PMPI library for C, C++ and Fortran MPI programs (loaded with ``LD_PRELOAD``).

* :mod:`.build` — compiles the shipped C sources with the MPI's own ``mpicc`` into a cache;
* :mod:`.place` — the engine the library runs on one process to reorder a topology
  (``rankmap pmpi place REQUEST -o RESULT``);
* :mod:`.recording` — reads and summarises what ``RANKMAP_RECORD`` wrote;
* :mod:`.environment` — the ``RANKMAP_*`` settings and the launcher options that export them.
"""

from importlib import import_module

__all__ = ["library_path", "place_request", "summarize_recording", "RecordSummary",
           "ENV_VARS", "launcher_env_args"]

#: public name -> submodule defining it, imported on first use: ``rankmap pmpi path`` and
#: ``rankmap launch --reorder`` need only :mod:`.build` (no numpy), the engine only :mod:`.place`
_HOME = {"library_path": "build", "place_request": "place", "summarize_recording": "recording",
         "RecordSummary": "recording", "ENV_VARS": "environment",
         "launcher_env_args": "environment"}


def __getattr__(name: str):
    if name in _HOME:
        return getattr(import_module(f"{__name__}.{_HOME[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
