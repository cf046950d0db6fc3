"""SimGrid SMPI as an independent referee for rankmap's predicted times.

rankmap writes the platform XML of the machine (:mod:`.platform`), a hostfile whose line r is
the host of rank r, and a flow file of the pattern (:mod:`.flowfile`); the shipped C program
``programs/flows.c`` (compiled with ``smpicc`` into a cache on first use, :mod:`.build`)
replays every phase's flows at once with non-blocking MPI; :mod:`.runner` runs ``smpirun``
with a timeout and reads back each phase's simulated time.
"""

from .build import INSTALL_HINT, compiled_program, smpi_available
from .platform import check_supported, hostfile, platform_xml
from .runner import SimulationTimeout, SmpiResult, simulate

__all__ = ["INSTALL_HINT", "compiled_program", "smpi_available", "check_supported", "hostfile",
           "platform_xml", "SimulationTimeout", "SmpiResult", "simulate"]
