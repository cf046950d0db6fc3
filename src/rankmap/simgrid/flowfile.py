"""The binary flow file read by the ``flows.c`` SMPI program (layout in its header comment).

Records are grouped by (phase, rank) with the pattern's own flow order kept inside a group,
so the n-th send from a to b in a phase matches the n-th receive at b from a.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MAGIC", "flow_file_bytes"]

MAGIC = 0x70616d6b6e6172


def flow_file_bytes(pattern) -> bytes:
    """The flow file of ``pattern`` (every phase, every flow) as bytes.

    Parameters
    ----------
    pattern : Pattern
        The communication pattern; flow sizes in bytes (rounded to whole bytes).

    Returns
    -------
    bytes
        Little-endian int64 words: magic, rank and phase counts, send and receive indexes per
        (phase, rank), then (peer, bytes) records of sends and of receives.

    Raises
    ------
    RankmapError
        When a message exceeds 2 GiB - 1 bytes (SMPI's int counts cannot send it).
    """
    n, phases = pattern.n_ranks, pattern.phases
    send_counts = np.zeros((len(phases), n), dtype=np.int64)
    recv_counts = np.zeros((len(phases), n), dtype=np.int64)
    sends, recvs = [], []
    for p, ph in enumerate(phases):
        nbytes = np.rint(ph.bytes).astype(np.int64)
        if np.any(nbytes > 2**31 - 1):
            from ..errors import RankmapError
            raise RankmapError(f"phase {ph.name!r} has a message over 2 GiB: SMPI's int counts "
                               "cannot send it")
        o = np.argsort(ph.src, kind="stable")
        sends.append(np.stack([ph.dst[o], nbytes[o]], axis=1))
        send_counts[p] = np.bincount(ph.src, minlength=n)
        o = np.argsort(ph.dst, kind="stable")
        recvs.append(np.stack([ph.src[o], nbytes[o]], axis=1))
        recv_counts[p] = np.bincount(ph.dst, minlength=n)
    send_index = np.concatenate([[0], np.cumsum(send_counts.ravel())]).astype("<i8")
    recv_index = np.concatenate([[0], np.cumsum(recv_counts.ravel())]).astype("<i8")
    empty = np.zeros((0, 2), dtype=np.int64)
    parts = [np.array([MAGIC, n, len(phases)], dtype="<i8"), send_index, recv_index,
             np.concatenate(sends or [empty]).astype("<i8").ravel(),
             np.concatenate(recvs or [empty]).astype("<i8").ravel()]
    return b"".join(p.tobytes() for p in parts)
