"""SimGrid SMPI as an independent referee for rankmap's predicted times.

rankmap writes the platform XML of the machine (:mod:`.platform`: torus, k-ary fat tree or
dragonfly) and a hostfile whose line r is the host of rank r; :mod:`.routes` checks that
SimGrid routes host pairs over the same links as rankmap. The shipped MPI programs (compiled
with ``smpicc`` into a cache on first use, :mod:`.build`) are ``programs/halo.c`` (stencils),
``programs/fft2d.c`` (row/column all-to-alls on sub-communicators), ``programs/pairs.c``
(random pairs) and ``programs/flows.c`` (replays any pattern's flow file, :mod:`.flowfile`);
:mod:`.runner` runs ``smpirun`` with a timeout and reads back each phase's simulated time;
:mod:`.validation` sets predicted and simulated times side by side.
"""

from .build import INSTALL_HINT, compiled_program, smpi_available
from .platform import check_supported, hostfile, platform_xml
from .runner import SimulationTimeout, SmpiResult, simulate

__all__ = ["INSTALL_HINT", "compiled_program", "smpi_available", "check_supported", "hostfile",
           "platform_xml", "SimulationTimeout", "SmpiResult", "simulate"]
