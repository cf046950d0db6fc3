"""Reading what ``RANKMAP_RECORD`` wrote and summarising it (``rankmap record``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import RankmapError

__all__ = ["RecordSummary", "read_recording", "summarize_recording", "SHOWN_PHASES"]

#: phases whose bytes the summary lists (the others are counted)
SHOWN_PHASES = 8


@dataclass
class RecordSummary:
    """What a recording holds: ranks, per-phase bytes, totals and the heaviest pairs."""

    ranks: int
    phases: list[tuple[str, float]]             # (phase, bytes)
    total_bytes: float
    total_messages: int | None                  # None for the dense matrix (not recorded)
    heaviest: list[tuple[int, int, float]] = field(default_factory=list)  # src, dst, bytes
    recorded_phases: int | None = None          # phases before identical ones were folded

    def lines(self) -> list[str]:
        """Human-readable summary lines.

        Returns
        -------
        list of str
            Ranks, phases with their bytes, totals and the heaviest pairs, one item per line.
        """
        shown = ", ".join(f"{name}: {_human(b)}" for name, b in self.phases[:SHOWN_PHASES])
        if len(self.phases) > SHOWN_PHASES:
            shown += f", ... {len(self.phases) - SHOWN_PHASES} more"
        folded = ""
        if self.recorded_phases is not None and self.recorded_phases > len(self.phases):
            folded = (f"; {self.recorded_phases} recorded, identical ones folded into one "
                      "with their bytes added up")
        out = [f"ranks: {self.ranks}",
               f"phases: {len(self.phases)}" + (f" ({shown}{folded})" if self.phases else ""),
               f"total: {_human(self.total_bytes)}" + (
                   f" in {self.total_messages} messages" if self.total_messages is not None
                   else "")]
        if self.heaviest:
            out.append("heaviest pairs: " + ", ".join(f"{s}->{d} {_human(b)}"
                                                      for s, d, b in self.heaviest))
        return out


def _human(nbytes: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.1f} {unit}"
    return f"{int(nbytes)} B"


def read_recording(path: str):
    """Read a recorded communication file (``rankmap record``'s CSV, or a ``.mat`` matrix).

    Parameters
    ----------
    path : str
        The recording.

    Returns
    -------
    src, dst : numpy.ndarray of int64
        Sending and receiving rank of every recorded pair.
    nbytes : numpy.ndarray of float64
        Bytes sent on each pair.
    messages : numpy.ndarray of int64 or None
        Message count of each pair when the CSV has a ``messages`` column, else None.
    phases : list of str
        Phase of each pair (``all`` for a matrix, ``graph`` for a CSV without phases).
    n_ranks : int
        Rank count (``# ranks N`` comment, matrix size, or largest rank + 1).

    Raises
    ------
    RankmapError
        When the file is not a valid graph CSV or matrix (see
        :mod:`rankmap.patterns.graph_files`).
    """
    from ..patterns.graph_files import read_csv_graph, read_dense_matrix
    if path.lower().endswith(".mat"):
        src, dst, nb, _, n = read_dense_matrix(path)
        return src, dst, nb, None, ["all"] * len(src), n
    src, dst, nb, phases, n = read_csv_graph(path)
    msgs = []
    with open(path, encoding="utf-8") as fh:
        header = fh.readline().strip().split(",")
        if "messages" in header:
            col = header.index("messages")
            for line in fh:
                if line.strip() and not line.startswith("#"):
                    msgs.append(int(line.split(",")[col]))
    n = max(n or 0, int(max(src.max(), dst.max())) + 1)
    return (src, dst, nb, np.array(msgs, dtype=np.int64) if msgs else None,
            phases or ["graph"] * len(src), n)


#: the comment the library writes after the rows when it folded identical phases
_RECORDED_PHASES = "recorded phases"


def _recorded_phases(path: str) -> int | None:
    """The phase count before folding, from the ``# recorded phases N`` line the library
    writes at the end of a CSV recording; None when there is none."""
    with open(path, "rb") as fh:
        fh.seek(0, 2)
        fh.seek(max(fh.tell() - 4096, 0))
        tail = fh.read().decode("utf-8", errors="replace")
    for line in tail.splitlines():
        words = line.strip().lstrip("#").split()
        if line.startswith("#") and " ".join(words[:-1]) == _RECORDED_PHASES and words \
                and words[-1].isascii() and words[-1].isdigit():
            return int(words[-1])
    return None


def _declared_ranks(path: str) -> int:
    """The rank count of a recording that holds no transfer: its ``# ranks N`` line (CSV) or
    its number of rows (``.mat``); 0 when it says nothing."""
    with open(path, encoding="utf-8") as fh:
        lines = [line.strip() for line in fh if line.strip()]
    if path.lower().endswith(".mat"):
        return len(lines)
    for line in lines:
        words = line.lstrip("#").split()
        if line.startswith("#") and len(words) == 2 and words[0] == "ranks" \
                and words[1].isascii() and words[1].isdigit():
            return int(words[1])
    return 0


def summarize_recording(path: str, top: int = 5) -> RecordSummary:
    """Summary of a recording.

    Parameters
    ----------
    path : str
        The CSV (``src,dst,bytes,messages,phase``) or ``.mat`` file the library wrote.
    top : int
        How many of the heaviest (source, destination) pairs (bytes over all phases) to list.

    Returns
    -------
    RecordSummary
    """
    try:
        src, dst, nb, msgs, phases, n = read_recording(path)
    except RankmapError as exc:
        if "no edges" in str(exc):   # nothing was sent: the file still says how many ranks
            return RecordSummary(_declared_ranks(path), [], 0.0, 0)
        raise
    # one pass over the rows (a scan per phase took 35 s at 12,000 phases)
    uniq_ph, first, code = np.unique(np.asarray(phases, dtype=str), return_index=True,
                                     return_inverse=True)
    ph_bytes = np.bincount(code.ravel(), weights=nb, minlength=len(uniq_ph))
    per_phase = [(str(uniq_ph[i]), float(ph_bytes[i])) for i in np.argsort(first, kind="stable")]
    key = src * n + dst
    uniq, inv = np.unique(key, return_inverse=True)
    pair_bytes = np.bincount(inv, weights=nb)
    order = np.lexsort((uniq, -pair_bytes))[:top]
    heavy = [(int(uniq[i] // n), int(uniq[i] % n), float(pair_bytes[i])) for i in order]
    return RecordSummary(n, per_phase, float(nb.sum()),
                         int(msgs.sum()) if msgs is not None else None, heavy,
                         None if path.lower().endswith(".mat") else _recorded_phases(path))
