"""Output of ``rankmap bench``: a text table, and a plot of bandwidth against message size."""

from __future__ import annotations

from ..units import format_bytes

__all__ = ["format_table", "plot_bandwidth"]


def _fmt_time(t: float) -> str:
    return f"{t * 1e6:10.1f}"


def _said(result: dict) -> bool:
    """Whether the placement's name already says why the ranks were not reordered (the
    launcher's order kept by ``auto``)."""
    return result["mapping"].startswith("the launcher's order")


def format_table(result: dict) -> str:
    """Text table of a benchmark result: one line per message size.

    Parameters
    ----------
    result : dict
        The result of :func:`rankmap.mpi.bench.run_benchmark` (times in seconds, bandwidths
        in MB/s).

    Returns
    -------
    str
        A header line and one line per size: size, iterations, times in microseconds and
        bandwidth in MB/s (best and worst pairing for the ``pairs`` benchmark).
    """
    head = (f"{result['benchmark']} benchmark: {result['processes']} processes"
            + (f", dims {'x'.join(map(str, result['dims']))}" if result.get("dims") else "")
            + f", placement {result['mapping']}"
            + ("" if result["reordered"] or _said(result) else
               f" (not reordered: {result['not_reordered_because']})")
            + f", {result['repeats']} repeat{'' if result['repeats'] == 1 else 's'}")
    pairs = result["benchmark"] == "pairs"
    cols = ["size", "iters", "min_us", "median_us", "MB/s"]
    if pairs:
        cols = ["size", "iters", "best_min_us", "best_med_us", "worst_med_us", "best_MB/s",
                "worst_MB/s"]
    lines = [head, "  ".join(f"{c:>12}" for c in cols)]
    for row in result["rows"]:
        vals = [f"{format_bytes(row['size']):>12}", f"{row['iters']:>12}",
                f"{_fmt_time(row['min_s']):>12}", f"{_fmt_time(row['median_s']):>12}"]
        if pairs:
            vals.append(f"{_fmt_time(row['worst_median_s']):>12}")
        vals.append(f"{row['bandwidth_MBps'] or 0:12.1f}")
        if pairs:
            vals.append(f"{row['worst_bandwidth_MBps'] or 0:12.1f}")
        lines.append("  ".join(vals))
    return "\n".join(lines) + "\n"


def plot_bandwidth(result: dict, path: str, force: bool = False) -> str:
    """PNG/PDF/SVG plot of bandwidth (MB/s) against message size (bytes, log scale).

    Parameters
    ----------
    result : dict
        The result of :func:`rankmap.mpi.bench.run_benchmark`.
    path : str
        Output file; its suffix (``.png`` or ``.svg``) picks the format.
    force : bool, optional
        Overwrite an existing file.

    Returns
    -------
    str
        The path written (atomically).

    Raises
    ------
    RankmapError
        When ``path`` exists and ``force`` is not given.
    """
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..io.atomic import write_atomic

    rows = result["rows"]
    sizes = [r["size"] for r in rows]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    if result["benchmark"] == "pairs":
        ax.plot(sizes, [r["bandwidth_MBps"] for r in rows], "o-", label="best pairing (median)")
        ax.plot(sizes, [r["worst_bandwidth_MBps"] for r in rows], "s--",
                label="worst pairing (median)")
    else:
        ax.plot(sizes, [r["bandwidth_MBps"] for r in rows], "o-", label="median time")
        ax.plot(sizes, [r["peak_bandwidth_MBps"] for r in rows], "^:", label="best time")
    ax.set_xscale("log", base=2)
    # at most 6 labels, turned: '64 KiB128 KiB256 KiB' ran together with 8 across
    step = max(1, -(-len(sizes) // 6))
    ax.set_xticks(sizes[::step], [format_bytes(v).replace(".0 ", " ") for v in sizes[::step]],
                  rotation=30, ha="right")
    ax.minorticks_off()
    ax.set_xlabel("message size")
    ax.set_ylabel("bandwidth per process (MB/s)")
    ax.set_title(f"{result['benchmark']}, {result['processes']} processes, placement "
                 f"{result['mapping']}")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fmt = path.rsplit(".", 1)[-1].lower() if "." in path else "png"
    from ..io.image import figure_image
    data = figure_image(fig, fmt if fmt in ("png", "svg") else "png", dpi=120)
    plt.close(fig)
    return write_atomic(path, data, force=force)
