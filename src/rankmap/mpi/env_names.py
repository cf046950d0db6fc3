"""The environment variables the in-job reordering reads, with no heavy import (the
commands' ``--help`` names them without loading numpy)."""

from __future__ import annotations

__all__ = ["NODE_ENV", "MACHINE_ENV", "HOST_NODES_ENV"]

#: this process's machine node, when its host name is not the machine's node name
NODE_ENV = "RANKMAP_NODE"
#: the machine spec (or .toml file) of the job
MACHINE_ENV = "RANKMAP_MACHINE"
#: ``host=id,host=id``: the machine node of each of the job's hosts (``launch --reorder
#: --nodes`` sets it), for sites whose host names are not the machine's node names
HOST_NODES_ENV = "RANKMAP_HOST_NODES"
