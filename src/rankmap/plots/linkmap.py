"""Link-load maps: where the hot links are.

Torus/mesh: one heat map per dimension and direction. On a 1-D or 2-D machine every link is
shown; on 3 or more dimensions the map shows the first two *other* dimensions and reduces
(max or sum, named in the colour-bar label) over the link's own dimension and any remaining
ones, so a hot ring shows up as a hot cell. Dragonfly: the group x group matrix of global-link
load and the per-group grid of router load.
"""

from __future__ import annotations

import numpy as np

from ..errors import RankmapError
from ..machines import Dragonfly, GridMachine
from ..report.figures import pyplot

__all__ = ["REDUCERS", "torus_panels", "plot_torus_links", "plot_link_map", "dragonfly_arrays",
           "plot_dragonfly_links", "supports"]

REDUCERS = {"max": np.nanmax, "sum": np.nansum}


def _scale(vmax: float, unit: str) -> tuple[float, str]:
    from .counters import count_scale

    div, label = count_scale(unit, vmax)
    return div, label[label.index("("):] if "(" in label else ""


def torus_panels(machine, loads: np.ndarray, reduce: str = "max") -> list[dict]:
    """The heat maps of a torus as data: per (dim, dir) with links, ``grid`` (2-D array,
    rows = second shown axis), ``axes`` (shown dimension indices), ``reduced`` (indices
    reduced over) and the hottest link's node coordinates and load.

    Parameters
    ----------
    machine : GridMachine
        A torus or mesh.
    loads : numpy.ndarray
        Count on every directed link, in the machine's link order.
    reduce : str
        ``max`` or ``sum`` over the hidden dimensions.

    Returns
    -------
    list of dict
        One panel per (dimension, direction) that has links.
    """
    if reduce not in REDUCERS:
        raise RankmapError(f"bad reduction {reduce!r}: max or sum")
    loads = np.asarray(loads, dtype=np.float64)
    if loads.shape != (machine.n_links,):
        raise RankmapError(f"expected {machine.n_links} link loads, got {loads.shape}")
    nd = machine.ndim
    dims = [int(v) for v in machine.dims]
    panels = []
    for d in range(nd):
        for direction in (1, -1):
            sel = (machine.link_dim == d) & (machine.link_dir == direction)
            if not sel.any():
                continue
            flat = np.full(machine.n_nodes, np.nan)
            flat[machine.link_src[sel]] = loads[sel]
            cube = flat.reshape(dims[::-1]).transpose()          # cube[x, y, z, ...]
            if nd == 1:
                shown, grid = [0], cube[None, :]
            elif nd == 2:
                shown, grid = [0, 1], cube.T
            else:
                shown = [a for a in range(nd) if a != d][:2]
            reduced = [a for a in range(nd) if a not in shown]
            if nd >= 3:
                moved = np.moveaxis(cube, shown, [0, 1])
                with np.errstate(all="ignore"):
                    import warnings
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", RuntimeWarning)
                        red = REDUCERS[reduce](moved.reshape(dims[shown[0]], dims[shown[1]], -1),
                                               axis=2)
                grid = red.T
            hot = int(np.nonzero(sel)[0][np.argmax(loads[sel])])
            panels.append({"dim": d, "dir": direction, "grid": grid, "axes": shown,
                           "reduced": reduced,
                           "hot_coords": [int(c) for c in machine.coords(machine.link_src[hot])],
                           "hot_load": float(loads[hot])})
    if not panels:
        raise RankmapError(f"{machine.spec} has no links to draw")
    return panels


def plot_torus_links(machine, loads: np.ndarray, unit: str = "bytes", reduce: str = "max",
                     title: str = ""):
    """Heat maps of a torus's link loads (see module doc) on one shared colour scale; the
    busiest link of each panel is starred. ``loads`` are per-link counts in machine link
    order; returns the figure.

    Parameters
    ----------
    machine : Machine
        The machine.
    loads : numpy.ndarray
        Count on every directed link, in the machine's link order (bytes or packets).
    unit : str
        ``bytes`` or ``packets`` (axis labels; bytes shown in MiB).
    reduce : str
        ``max`` or ``sum``: how loads folded onto one cell combine.
    title : str
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.
    """
    from matplotlib.ticker import MaxNLocator

    plt = pyplot()
    panels = torus_panels(machine, loads, reduce)
    vmax = max(float(np.nanmax(p["grid"])) if np.isfinite(p["grid"]).any() else 0.0
               for p in panels)
    div, ulabel = _scale(vmax, unit)
    letters = machine.letters
    nrows = (len(panels) + 1) // 2
    shape_ratio = max(p["grid"].shape[0] / max(p["grid"].shape[1], 1) for p in panels)
    fig, axes = plt.subplots(nrows, 2, figsize=(10, max(2.4, 3.4 * min(shape_ratio, 1.5))
                                                      * nrows + 0.8), dpi=100, squeeze=False,
                             layout="constrained")
    for ax in axes.ravel()[len(panels):]:
        ax.set_visible(False)
    hidden = set()
    im = None
    for ax, p in zip(axes.ravel(), panels):
        name = f"{letters[p['dim']]}{'+' if p['dir'] > 0 else '-'}"
        im = ax.imshow(p["grid"] / div, origin="lower", cmap="inferno", vmin=0,
                       vmax=(vmax / div) or 1.0, aspect="auto", interpolation="nearest")
        red = ",".join(letters[a] for a in p["reduced"])
        if red:
            hidden.add(red)
        hx = p["hot_coords"][p["axes"][0]]
        hy = p["hot_coords"][p["axes"][1]] if len(p["axes"]) > 1 else 0
        # the star's meaning goes in the title: a legend would cover cells or the axis label
        if p["hot_load"] > 0 and reduce == "sum" and red:
            # summed cells: the star marks the largest sum, the colour the map shows (the
            # busiest single link sat elsewhere, on a dimmer cell)
            cy, cx = np.unravel_index(int(np.nanargmax(p["grid"])), p["grid"].shape)
            ax.plot([cx], [cy], "*", color="cyan", markersize=12, markeredgecolor="black")
            hot = (f"star: largest sum, at {letters[p['axes'][0]]}={cx}"
                   + (f", {letters[p['axes'][1]]}={cy}" if len(p["axes"]) > 1 else "")
                   + f", {np.nanmax(p['grid']) / div:.4g} {ulabel.strip('()')}")
        elif p["hot_load"] > 0:
            ax.plot([hx], [hy], "*", color="cyan", markersize=12, markeredgecolor="black")
            hot = (f"star: busiest, at ({','.join(str(int(c)) for c in p['hot_coords'])}), "
                   f"{p['hot_load'] / div:.4g} {ulabel.strip('()')}")
        else:
            hot = "no traffic"
        ax.set_xlabel(f"{letters[p['axes'][0]]} coordinate (node)")
        ax.set_ylabel(f"{letters[p['axes'][1]]} coordinate (node)" if len(p["axes"]) > 1
                      else "(1-D machine)")
        ax.set_title(f"{name} links" + (f" ({reduce} over {red})" if red else "")
                     + f"\n{hot}", fontsize=9)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    what = f"{unit} on a directed link"
    if hidden:
        what += f", {reduce} over the hidden dimension ({' / '.join(sorted(hidden))})"
    cb = fig.colorbar(im, ax=axes.ravel()[:len(panels)].tolist(), shrink=0.9)
    cb.set_label(f"{what} {ulabel}", fontsize=8)
    fig.suptitle((title + "\n" if title else "") + f"link loads on {machine.spec}", fontsize=10)
    return fig


def plot_link_map(machine, loads: np.ndarray, unit: str = "bytes", reduce: str = "max",
                  title: str = ""):
    """The link-load map suited to the machine (torus/mesh or dragonfly); returns the figure.

    Parameters
    ----------
    machine : Machine
        The machine.
    loads : numpy.ndarray
        Count on every directed link, in the machine's link order (bytes or packets).
    unit : str
        ``bytes`` or ``packets`` (axis labels; bytes shown in MiB).
    reduce : str
        ``max`` or ``sum``: how loads folded onto one cell combine.
    title : str
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.

    Raises
    ------
    RankmapError
        A machine with no map (see :func:`supports`).
    """
    if isinstance(machine, GridMachine):
        return plot_torus_links(machine, loads, unit, reduce, title)
    if isinstance(machine, Dragonfly):
        return plot_dragonfly_links(machine, loads, unit, reduce, title)
    raise RankmapError(f"no link-load map for {machine.spec} ({machine.kind})")


def dragonfly_arrays(machine, loads: np.ndarray, reduce: str = "max") -> dict:
    """Dragonfly maps as data: ``groups`` (G x G, bytes from group a (row) to group b
    (column) over their parallel global links, reduced by max or sum; NaN on the diagonal)
    and ``routers`` (G x R x C: each router's outgoing row/col/global links, reduced).

    Parameters
    ----------
    machine : Dragonfly
        The machine.
    loads : numpy.ndarray
        Count on every directed link, in the machine's link order.
    reduce : str
        ``max`` or ``sum`` over parallel links / a router's links.

    Returns
    -------
    dict
        ``groups`` (G x G float64) and ``routers`` (G x R x C float64), in the unit of
        ``loads``.
    """
    if reduce not in REDUCERS:
        raise RankmapError(f"bad reduction {reduce!r}: max or sum")
    loads = np.asarray(loads, dtype=np.float64)
    if loads.shape != (machine.n_links,):
        raise RankmapError(f"expected {machine.n_links} link loads, got {loads.shape}")
    G, R, C = machine.G, machine.R, machine.C
    cols = machine.link_columns()
    cls = np.asarray(cols["class"])
    rs, rd = np.asarray(cols["src_router"]), np.asarray(cols["dst_router"])
    ufunc = np.maximum if reduce == "max" else np.add
    groups = np.zeros((G, G))
    glob = cls == "global"
    ufunc.at(groups, (rs[glob] // (R * C), rd[glob] // (R * C)), loads[glob])
    groups[np.eye(G, dtype=bool)] = np.nan
    routers = np.zeros(G * R * C)
    net = np.isin(cls, ("row", "col", "global"))
    ufunc.at(routers, rs[net], loads[net])
    return {"groups": groups, "routers": routers.reshape(G, R, C)}


def plot_dragonfly_links(machine, loads: np.ndarray, unit: str = "bytes", reduce: str = "max",
                         title: str = ""):
    """Left: the group x group global-link matrix; right: every group's R x C router grid
    (groups tiled left to right, top to bottom), each router coloured by its outgoing
    row/col/global link load (max or sum, named in the colour-bar label); returns the figure.

    Parameters
    ----------
    machine : Machine
        The machine.
    loads : numpy.ndarray
        Count on every directed link, in the machine's link order (bytes or packets).
    unit : str
        ``bytes`` or ``packets`` (axis labels; bytes shown in MiB).
    reduce : str
        ``max`` or ``sum``: how loads folded onto one cell combine.
    title : str
        Figure title.

    Returns
    -------
    matplotlib.figure.Figure
        The figure.
    """
    plt = pyplot()
    arr = dragonfly_arrays(machine, loads, reduce)
    G, R, C = machine.G, machine.R, machine.C
    vmax = float(np.nanmax(loads)) if len(loads) else 0.0
    div, ulabel = _scale(vmax if reduce == "max" else max(vmax, np.nanmax(arr["routers"])), unit)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 5.8), dpi=100, layout="constrained")
    gm = arr["groups"] / div
    im = ax1.imshow(gm, origin="upper", cmap="inferno", vmin=0, interpolation="nearest")
    cb = fig.colorbar(im, ax=ax1)
    cb.set_label(f"{unit} on global links a->b, {reduce} over the {machine.L} parallel links "
                 f"{ulabel}", fontsize=8)
    if G > 1 and np.isfinite(gm).any():
        a, b = np.unravel_index(np.nanargmax(gm), gm.shape)
        ax1.plot([b], [a], "*", color="cyan", markersize=12, markeredgecolor="black",
                 label=f"busiest group pair {a}->{b}: {gm[a, b]:.4g} {ulabel.strip('()')}")
        ax1.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), framealpha=0.8)
    from matplotlib.ticker import MaxNLocator
    for axis in (ax1.xaxis, ax1.yaxis):          # groups are whole numbers
        axis.set_major_locator(MaxNLocator(integer=True))
    ax1.set_xlabel("destination group b")
    ax1.set_ylabel("source group a")
    ax1.set_title("global links between groups", fontsize=9)
    # router mosaic: groups tiled gc per row, one blank row/column between groups
    gc = int(np.ceil(np.sqrt(G * R / max(C, 1))))
    gc = max(1, min(G, gc))
    gr = int(np.ceil(G / gc))
    mosaic = np.full((gr * (R + 1) - 1, gc * (C + 1) - 1), np.nan)
    for g in range(G):
        i, j = divmod(g, gc)
        mosaic[i * (R + 1):i * (R + 1) + R, j * (C + 1):j * (C + 1) + C] = arr["routers"][g] / div
    im2 = ax2.imshow(mosaic, origin="upper", cmap="inferno", vmin=0, interpolation="nearest",
                     aspect="auto")
    cb2 = fig.colorbar(im2, ax=ax2)
    cb2.set_label(f"{unit} leaving a router, {reduce} over its row/col/global links {ulabel}",
                  fontsize=8)
    hot = int(np.argmax(arr["routers"]))
    g, rr, cc = np.unravel_index(hot, arr["routers"].shape)
    i, j = divmod(int(g), gc)
    ax2.plot([j * (C + 1) + cc], [i * (R + 1) + rr], "*", color="cyan", markersize=12,
             markeredgecolor="black", label=f"busiest router: group {g}, row {rr}, col {cc}")
    ax2.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.1), framealpha=0.8)
    if G <= 64:
        for g2 in range(G):
            i2, j2 = divmod(g2, gc)
            ax2.text(j2 * (C + 1) + (C - 1) / 2, i2 * (R + 1) - 0.55, f"group {g2}",
                     ha="center", va="bottom", fontsize=7)
    ax2.set_xticks([])
    ax2.set_yticks([])
    ax2.set_xlabel(f"router column within a group ({C} per group; groups tiled {gc} across)")
    ax2.set_ylabel(f"router row within a group ({R} per group)")
    ax2.set_title("routers of every group", fontsize=9, pad=16)
    # node links (injection, ejection) are in no panel: say so when one is the busiest
    note = ""
    if len(loads) and vmax > 0:
        top = int(np.nanargmax(loads))
        kind = str(machine.link_columns()["class"][top])
        if kind not in ("row", "col", "global"):
            note = (f"\nthe busiest link is a node's {kind} link, {vmax / div:.4g} "
                    f"{ulabel.strip('()')}: node links are not drawn")
    fig.suptitle((title + "\n" if title else "") + f"link loads on {machine.spec}" + note,
                 fontsize=10)
    return fig


def supports(machine) -> bool:
    """Whether a link-load map can be drawn for this machine (torus/mesh or dragonfly).

    Parameters
    ----------
    machine : Machine
        The machine.

    Returns
    -------
    bool
        True for a grid machine or a dragonfly.
    """
    return isinstance(machine, (GridMachine, Dragonfly))
