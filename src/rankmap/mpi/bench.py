"""MPI benchmarks run under a placement (mpi4py; start them with mpirun or srun).

* ``pairs`` (seed 003, section 2): ranks pair off at random and each pair exchanges a message
  both ways with Isend/Irecv/Wait; several random pairings, best and worst reported;
* ``cart`` (seed 003, section 4): 1-D/2-D/3-D Cartesian grid, cyclic or not, every rank
  exchanges with its two neighbours in every dimension (MPI_Cart_shift);
* ``halo``: 2-D/3-D star (2d neighbours) or box (3^d - 1 neighbours) halo exchange;
* ``fft``: a P0 x P1 grid does an Alltoall inside every row, then inside every column
  (seed 004).

Each first reorders the ranks by a placement of its own pattern (:func:`reorder_ranks`, as
``cart_create`` does), then for every message size runs ``iters`` exchanges ``repeats`` times;
a repeat's time is the slowest process's time per exchange. Bandwidth = bytes sent per process
per exchange (mean over processes) / time, in MB/s (10^6 bytes per second).
"""

from __future__ import annotations

import statistics

import numpy as np

from ..errors import RankmapError
from ..patterns.fft import make_fft2d
from ..patterns.pairs import make_random_pairs
from ..patterns.stencil import make_stencil, stencil_offsets
from .bench_config import KINDS, BenchConfig
from .cart import cart_from_reordering, check_cart_args
from .reorder import Reordering, identity, reorder_ranks, split_by_new_rank

__all__ = ["KINDS", "BenchConfig", "check_config", "buffer_bytes", "check_buffer_memory",
           "default_iters", "run_benchmark"]

def check_config(cfg: BenchConfig, size: int) -> None:
    """Raise (identically on every process) when the config cannot run on ``size`` processes.

    Parameters
    ----------
    cfg : BenchConfig
        The benchmark to run.
    size : int
        Number of processes of the communicator.

    Raises
    ------
    RankmapError
        On an unknown benchmark kind, fewer than 2 processes for ``pairs``, missing or bad
        ``dims`` for the grid benchmarks (a grid of one process, which sends no bytes,
        included), or a grid larger than ``size``.
    """
    if cfg.kind not in KINDS:
        raise RankmapError(f"unknown benchmark {cfg.kind!r}: choose from {', '.join(KINDS)}")
    if cfg.kind == "pairs":
        if size < 2:
            raise RankmapError("the pairs benchmark needs at least 2 processes (run it under "
                               "mpirun -n N)")
        return
    if cfg.dims is None:
        raise RankmapError(f"the {cfg.kind} benchmark needs --dims, e.g. --dims 4x4")
    n = {"cart": (1, 3), "halo": (2, 3), "fft": (2, 2)}[cfg.kind]
    if not n[0] <= len(cfg.dims) <= n[1]:
        want = "2" if n == (2, 2) else f"{n[0]} to {n[1]}"
        raise RankmapError(f"bad --dims {'x'.join(map(str, cfg.dims))} for {cfg.kind}: "
                           f"{want} dimensions")
    if int(np.prod(cfg.dims)) < 2:
        # a grid of one process has no neighbour, and its all-to-alls no other rank: no byte
        # would be sent and the table would say 0.0 MB/s
        raise RankmapError(f"bad --dims {'x'.join(map(str, cfg.dims))} for {cfg.kind}: a grid "
                           f"of 1 process sends no bytes; the {cfg.kind} benchmark needs at "
                           "least 2 processes in its grid")
    check_cart_args(size, cfg.dims, [cfg.periodic] * len(cfg.dims))


def buffer_bytes(cfg: BenchConfig, nbytes: int) -> int:
    """Bytes of message buffers one process holds to exchange messages of ``nbytes``.

    Parameters
    ----------
    cfg : BenchConfig
        The benchmark (a config :func:`check_config` accepted).
    nbytes : int
        Message size in bytes.

    Returns
    -------
    int
        One send buffer and a receive buffer per neighbour (pairs: one partner; cart: two
        per dimension; halo: every neighbour of the box or star), or the send and receive
        buffers of the two all-to-alls (fft).
    """
    if cfg.kind == "pairs":
        return 2 * nbytes
    ndim = len(cfg.dims)
    if cfg.kind == "fft":
        return 2 * nbytes * sum(cfg.dims)
    neighbours = 3 ** ndim - 1 if cfg.kind == "halo" and cfg.box else 2 * ndim
    return (1 + neighbours) * nbytes


def check_buffer_memory(cfg: BenchConfig) -> None:
    """Refuse a message size whose buffers could not fit in this node's memory.

    Parameters
    ----------
    cfg : BenchConfig
        The benchmark.

    Raises
    ------
    RankmapError
        Naming the first size whose buffers exceed the node's physical memory (a 1 TiB
        message ran into 'out of memory' on every process, with no word of --sizes).
    """
    import os

    from ..units import format_bytes
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return
    for nbytes in cfg.sizes:
        need = buffer_bytes(cfg, nbytes)
        if need > memory:
            raise RankmapError(f"bad --sizes entry {format_bytes(nbytes)}: the {cfg.kind} "
                               f"benchmark's buffers would take {format_bytes(need)} in each "
                               f"process, more than this node's memory "
                               f"({format_bytes(memory)})")


def default_iters(nbytes: int) -> int:
    """Exchanges per repeat: more for small messages (about 1 MiB per repeat, 1 to 50).

    Parameters
    ----------
    nbytes : int
        Message size in bytes.

    Returns
    -------
    int
        Number of exchanges timed together in one repeat.
    """
    return int(max(1, min(50, (1 << 20) // max(nbytes, 1))))


def _pattern(cfg: BenchConfig, size: int):
    dims = tuple(cfg.dims) if cfg.dims else None
    if cfg.kind == "pairs":
        return make_random_pairs("bench:pairs", size, seed=cfg.seed)
    if cfg.kind == "fft":
        return make_fft2d("bench:fft", dims)
    return make_stencil(f"bench:{cfg.kind}", dims, box=cfg.box and cfg.kind == "halo",
                        periodic=cfg.periodic)


def _reorder(comm, cfg: BenchConfig, n_ranks: int) -> Reordering:
    if cfg.mapping == "none":
        return identity(comm.Get_size(), n_ranks, "--mapping none")
    return reorder_ranks(comm, lambda: _pattern(cfg, comm.Get_size()), cfg.machine,
                         cfg.mapping, cfg.seed)


def _time(comm, exchange, iters: int, repeats: int) -> list[float]:
    from mpi4py import MPI
    exchange()  # warm-up
    times = []
    for _ in range(repeats):
        comm.Barrier()
        t0 = MPI.Wtime()
        for _ in range(iters):
            exchange()
        t = (MPI.Wtime() - t0) / iters
        times.append(comm.allreduce(t, op=MPI.MAX))
    return times


def _row(comm, nbytes: int, sent: int, iters: int, times: list[float]) -> dict:
    from mpi4py import MPI
    mean_sent = comm.allreduce(sent, op=MPI.SUM) / comm.Get_size()
    med = statistics.median(times)
    return {"size": nbytes, "iters": iters, "bytes_per_process": mean_sent,
            "times_s": times, "min_s": min(times), "median_s": med,
            "bandwidth_MBps": mean_sent / med / 1e6 if med > 0 else None,
            "peak_bandwidth_MBps": mean_sent / min(times) / 1e6 if min(times) > 0 else None}


def _exchange_with(comm, peers_send, peers_recv, nbytes: int):
    from mpi4py import MPI
    sbuf = np.ones(nbytes, dtype=np.uint8)
    rbufs = [np.empty(nbytes, dtype=np.uint8) for _ in peers_recv]

    def exchange():
        """One exchange: post every receive and send, wait for all."""
        reqs = [comm.Irecv(b, source=p, tag=7) for b, p in zip(rbufs, peers_recv)]
        reqs += [comm.Isend(sbuf, dest=p, tag=7) for p in peers_send]
        MPI.Request.Waitall(reqs)
    return exchange


def _run_pairs(comm, cfg: BenchConfig) -> dict:
    n = comm.Get_size()
    me = comm.Get_rank()
    partners = []
    for i in range(cfg.pairings):
        ph = make_random_pairs("pairs", n, seed=cfg.seed + i).phases[0]
        partner = np.full(n, -1, dtype=np.int64)
        partner[ph.src] = ph.dst
        partners.append(int(partner[me]))
    rows = []
    for nbytes in cfg.sizes:
        iters = cfg.iters or default_iters(nbytes)
        per = []
        for i, p in enumerate(partners):
            peers = [p] if p >= 0 else []
            times = _time(comm, _exchange_with(comm, peers, peers, nbytes), iters, cfg.repeats)
            per.append(_row(comm, nbytes, nbytes * len(peers), iters, times))
        best = min(range(len(per)), key=lambda i: per[i]["median_s"])
        worst = max(range(len(per)), key=lambda i: per[i]["median_s"])
        row = dict(per[best])
        row.update({"best_pairing_seed": cfg.seed + best, "worst_pairing_seed": cfg.seed + worst,
                    "worst_median_s": per[worst]["median_s"],
                    "worst_bandwidth_MBps": per[worst]["bandwidth_MBps"],
                    "pairing_median_s": [r["median_s"] for r in per]})
        rows.append(row)
    return {"rows": rows}


def _grid_neighbours(cart, dims, offsets, periodic) -> list[int]:
    coords = np.array(cart.Get_coords(cart.Get_rank()))
    out = []
    for off in offsets:
        c = coords + off
        if periodic:
            c %= np.array(dims)
        elif ((c < 0) | (c >= np.array(dims))).any():
            continue
        r = cart.Get_cart_rank([int(v) for v in c])
        if r != cart.Get_rank():
            out.append(r)
    return out


def _run_grid(comm, cfg: BenchConfig, cart) -> dict:
    from mpi4py import MPI
    dims = list(cfg.dims)
    if cfg.kind == "cart":
        peers_send, peers_recv = [], []
        for d in range(len(dims)):
            src, dst = cart.Shift(d, 1)
            for a, b in ((dst, src), (src, dst)):  # send up, receive from below; and back
                if a != MPI.PROC_NULL and a != cart.Get_rank():
                    peers_send.append(a)
                if b != MPI.PROC_NULL and b != cart.Get_rank():
                    peers_recv.append(b)
    else:
        offs = stencil_offsets(len(dims), cfg.box)
        peers_send = _grid_neighbours(cart, dims, offs, cfg.periodic)
        peers_recv = _grid_neighbours(cart, dims, -offs, cfg.periodic)
    rows = []
    for nbytes in cfg.sizes:
        iters = cfg.iters or default_iters(nbytes)
        times = _time(cart, _exchange_with(cart, peers_send, peers_recv, nbytes), iters,
                      cfg.repeats)
        rows.append(_row(cart, nbytes, nbytes * len(peers_send), iters, times))
    return {"rows": rows}


def _run_fft(comm, cfg: BenchConfig, cart) -> dict:
    cols = cart.Sub([True, False])  # P0 ranks sharing the index of dimension 1
    rows_c = cart.Sub([False, True])  # P1 consecutive ranks
    out = []
    for nbytes in cfg.sizes:
        iters = cfg.iters or default_iters(nbytes)
        bufs = {}
        for name, sub in (("row", rows_c), ("col", cols)):
            k = sub.Get_size()
            bufs[name] = (sub, np.ones(k * nbytes, dtype=np.uint8),
                          np.empty(k * nbytes, dtype=np.uint8))

        def exchange():
            """One FFT transpose step: Alltoall in the row, then in the column."""
            for sub, s, r in bufs.values():
                sub.Alltoall(s, r)
        sent = nbytes * (rows_c.Get_size() - 1 + cols.Get_size() - 1)
        out.append(_row(cart, nbytes, sent, iters, _time(cart, exchange, iters, cfg.repeats)))
    cols.Free()
    rows_c.Free()
    return {"rows": out}


def run_benchmark(comm, cfg: BenchConfig) -> dict | None:
    """Run the benchmark collectively; the JSON-ready result on rank 0 of ``comm``, else None.

    Processes left out of the grid (more processes than ``prod(dims)``) only wait.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        Communicator whose processes all call this function.
    cfg : BenchConfig
        What to run: kind, grid, message sizes (bytes), repeats and the placement.

    Returns
    -------
    dict or None
        On rank 0: the configuration, the placement applied and one row per message size
        (times in seconds, ``bandwidth_MBps`` in MB/s per process); None on other ranks.

    Raises
    ------
    RankmapError
        On every process, when the configuration is bad (:func:`check_config`).
    """
    check_config(cfg, comm.Get_size())
    n_ranks = comm.Get_size() if cfg.kind == "pairs" else int(np.prod(cfg.dims))
    reordering = _reorder(comm, cfg, n_ranks)
    from mpi4py import MPI
    if cfg.kind == "pairs":
        work = split_by_new_rank(comm, reordering)
        result = _run_pairs(work, cfg)
    else:
        periods = [cfg.periodic] * len(cfg.dims)
        work = cart_from_reordering(comm, list(cfg.dims), periods, reordering)
        result = None
        if work != MPI.COMM_NULL:
            result = (_run_fft if cfg.kind == "fft" else _run_grid)(comm, cfg, work)
    lead = work != MPI.COMM_NULL and work.Get_rank() == 0
    if work != MPI.COMM_NULL:
        work.Free()
    # new rank 0 holds the result; hand it to rank 0 of comm
    holder = comm.allreduce(comm.Get_rank() if lead else -1, op=MPI.MAX)
    if holder != 0:
        if comm.Get_rank() == holder:
            comm.send(result, dest=0, tag=11)
        elif comm.Get_rank() == 0:
            result = comm.recv(source=holder, tag=11)
    if comm.Get_rank() != 0:
        return None
    m = cfg.machine
    return {"benchmark": cfg.kind, "processes": comm.Get_size(),
            "dims": list(cfg.dims) if cfg.dims else None,
            "box": cfg.box if cfg.kind == "halo" else None,
            "periodic": cfg.periodic if cfg.kind in ("cart", "halo") else None,
            "pairings": cfg.pairings if cfg.kind == "pairs" else None,
            "machine": getattr(m, "spec", m), "mapping_requested": cfg.mapping,
            "mapping": reordering.mapping, "reordered": reordering.reordered,
            "not_reordered_because": reordering.reason or None,
            "ranks_moved_off_their_node": reordering.moved,
            "repeats": cfg.repeats, "seed": cfg.seed, **result}
