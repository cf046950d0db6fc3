"""Running a pattern under a placement in SimGrid SMPI and reading back per-phase times.

The run uses ``--cfg=smpi/simulate-computation:no`` (only communication takes simulated
time, so results are deterministic), SimGrid's ``CM02`` network model (plain max-min sharing
with no bandwidth or latency correction factors) and no cross-traffic (no simulated TCP
acknowledgements on the reverse path): the same assumptions as rankmap's time model, so the
two can be compared like with like. Buffers are SMPI shared mallocs.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from dataclasses import dataclass

from ..errors import RankmapError
from .build import compiled_program, find_tool
from .flowfile import flow_file_bytes
from .platform import check_supported, hostfile, platform_xml

SMPI_CONFIG = ["--cfg=smpi/simulate-computation:no", "--cfg=network/model:CM02",
               "--cfg=network/crosstraffic:0", "--cfg=smpi/display-timing:0",
               "--log=root.thres:critical"]


class SimulationTimeout(RankmapError):
    """A simulation ran past its time limit."""


@dataclass
class SmpiResult:
    """Simulated seconds per phase (pattern order), their sum, and wall-clock seconds."""

    phase_times: list[float]
    wall_s: float

    @property
    def total_s(self) -> float:
        """Simulated time of the whole pattern (sum of phases), seconds."""
        return float(sum(self.phase_times))


def simulate(machine, pattern, node_of_rank, routing: str = "dor", mem_bw: float | None = None,
             timeout: float | None = None, workdir: str | None = None,
             link_latency: float | None = 0.0) -> SmpiResult:
    """Simulate ``pattern`` with rank r on node ``node_of_rank[r]`` in SMPI.

    ``link_latency`` (s, default 0 for plain max-min sharing, see :mod:`.platform`; None:
    the machine's per-hop latency) is written on every link.

    Raises :class:`SimulationTimeout` after ``timeout`` wall-clock seconds.
    """
    import time

    check_supported(machine, routing)
    exe = compiled_program("flows")
    smpirun = find_tool("smpirun")
    with tempfile.TemporaryDirectory(prefix="rankmap-smpi-", dir=workdir) as tmp:
        plat, hosts, flows = (os.path.join(tmp, n) for n in ("platform.xml", "hosts", "flows.bin"))
        with open(plat, "w") as fh:
            fh.write(platform_xml(machine, mem_bw, link_latency))
        with open(hosts, "w") as fh:
            fh.write(hostfile(node_of_rank))
        with open(flows, "wb") as fh:
            fh.write(flow_file_bytes(pattern))
        cmd = [smpirun, "-np", str(pattern.n_ranks), "-platform", plat, "-hostfile", hosts,
               *SMPI_CONFIG, exe, flows]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=tmp)
        except subprocess.TimeoutExpired:
            raise SimulationTimeout(f"SMPI simulation exceeded --timeout {timeout:g} s") from None
        wall = time.perf_counter() - t0
    times = {int(m.group(1)): float(m.group(2))
             for m in re.finditer(r"^phase (\d+) (\S+)$", proc.stdout, re.M)}
    if proc.returncode != 0 or len(times) != len(pattern.phases):
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RankmapError(f"smpirun failed (exit {proc.returncode}): {tail}")
    return SmpiResult([times[i] for i in range(len(pattern.phases))], wall)
