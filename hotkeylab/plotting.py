"""House style for every figure in hotkeylab.

Fixed colour meanings across all notebooks (:data:`COLORS`): user traffic, retries, goodput,
timeouts, rejected, queue, lock owners; trigger windows shaded grey. Lowercase axis labels with
units, ``lw=2``, no titles (the markdown above a figure says what it shows).

- :func:`use_style` applies the rcParams (called on import of this module).
- :func:`timeline` draws windowed series (offered, goodput, queue, …) against time in seconds.
- :func:`shade` marks trigger/intervention windows.
- :func:`lock_gantt` draws who holds a lock when.
- :func:`phase_diagram` draws a recovered/stuck grid.
- :class:`LiveFigure` is a widget's figure, made once and updated in place by each slider move
  (artists' data set, axes rescaled, one draw); :func:`cut_short` is its "stopped at the event
  cap" note.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np

__all__ = [
    "COLORS",
    "LABELS",
    "use_style",
    "new_figure",
    "timeline",
    "shade",
    "lock_gantt",
    "phase_diagram",
    "decorate",
    "queue_axis",
    "merged_legend",
    "LiveFigure",
    "live_figure",
    "cut_short",
]

#: One meaning per colour, everywhere.
COLORS = {
    "offered": "#1f77b4",   # user traffic (blue)
    "user": "#1f77b4",
    "retries": "#ff7f0e",   # retries (orange)
    "goodput": "#2ca02c",   # answered in time (green)
    "served": "#2ca02c",
    "timeouts": "#d62728",  # timed out at the client (red)
    "rejected": "#8c564b",  # refused at the door (brown)
    "wasted": "#e377c2",    # processed after the client gave up (pink)
    "queue": "#9467bd",     # queue length (purple)
    "latency": "#17becf",   # latency (cyan)
    "capacity": "#444444",  # capacity lines, closed forms (dark grey, dashed)
    "formula": "#444444",
    "trigger": "#bbbbbb",   # shaded trigger window (light grey)
    "intervention": "#c6dbef",  # shaded intervention window (pale blue)
    "owner_b": "#1f77b4",
    "owner_c": "#ff7f0e",
    "recovered": "#2ca02c",
    "stuck": "#d62728",
}

LABELS = {
    "offered": "user requests/s",
    "retries": "retries/s",
    "goodput": "goodput (answered in time)/s",
    "timeouts": "timeouts/s",
    "rejected": "rejected/s",
    "wasted": "wasted work/s",
    "queue": "queue (batches)",
}

_RC = {
    "figure.figsize": (8.0, 3.6),
    "figure.dpi": 80,
    "savefig.dpi": 80,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 2,
    "legend.frameon": False,
    "font.size": 10,
}


def use_style() -> None:
    """Apply the house rcParams (modest dpi keeps notebooks light)."""
    mpl.rcParams.update(_RC)


use_style()


def new_figure(nrows: int = 1, ncols: int = 1, *, height: float | None = None, **kw):
    """``plt.subplots`` with the house size; ``height`` in inches per row."""
    w, h = _RC["figure.figsize"]
    if height is not None:
        h = height
    return plt.subplots(nrows, ncols, figsize=(w, h * nrows), squeeze=kw.pop("squeeze", True), **kw)


def decorate(ax, *, xlabel: str | None = None, ylabel: str | None = None, legend: bool = True, **kw):
    """Set lowercase labels (with units), limits etc. in one call, ModSim style."""
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if kw:
        ax.set(**kw)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best")
    return ax


def queue_axis(ax, label: str | None = None):
    """A right-hand axis for a queue length, in the queue's colour (twin of ``ax``)."""
    qax = ax.twinx()
    qax.set_ylabel(label or LABELS["queue"], color=COLORS["queue"])
    qax.grid(False)
    qax.spines["right"].set_visible(True)
    return qax


def merged_legend(*axes, **kw):
    """One legend on the first axis for the lines of all ``axes`` (e.g. an axis and its twin)."""
    handles, labels = [], []
    for a in axes:
        h, lab = a.get_legend_handles_labels()
        handles, labels = handles + h, labels + lab
    return axes[0].legend(handles, labels, **kw) if handles else None


def shade(ax, windows: Iterable, *, kind: str = "trigger", label: str | None = None):
    """Shade time windows ``[(start_s, end_s), ...]`` or ``[(start_s, end_s, label), ...]``."""
    first = True
    for w in windows:
        start, end = w[0], w[1]
        lab = w[2] if len(w) > 2 else (label if first else None)
        ax.axvspan(start, end, color=COLORS.get(kind, kind), alpha=0.35, lw=0, label=lab, zorder=0)
        first = False
    return ax


def _windows_of(run) -> Mapping[str, np.ndarray]:
    return run.windows if hasattr(run, "windows") else run


def timeline(
    run,
    series: Sequence[str] = ("offered", "retries", "goodput"),
    *,
    ax=None,
    queue: bool = False,
    shades: Iterable = (),
    hline: float | None = None,
    hline_label: str | None = None,
    labels: Mapping[str, str] | None = None,
    ylabel: str = "requests/s",
):
    """Plot windowed series of a run (an object with ``.windows`` or a mapping with ``t``).

    ``series`` are drawn on the left axis (per second); ``queue=True`` adds the ``queue`` series
    on a right-hand axis. ``shades`` are ``(start_s, end_s[, label])`` trigger windows; ``hline``
    a capacity line. Returns the axis (and the queue axis as ``ax.queue_ax`` when drawn).
    """
    w = _windows_of(run)
    if ax is None:
        _, ax = new_figure()
    labels = {**LABELS, **(labels or {})}
    t = np.asarray(w["t"])
    for name in series:
        ax.plot(t, w[name], color=COLORS.get(name), label=labels.get(name, name), lw=2)
    if hline is not None:
        ax.axhline(hline, color=COLORS["capacity"], ls="--", lw=1.5, label=hline_label)
    shade(ax, shades)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_xlim(t[0], t[-1] + (t[1] - t[0] if len(t) > 1 else 1))
    ax.set_ylim(bottom=0)
    axes = [ax]
    if queue:
        qax = queue_axis(ax, labels["queue"])
        qax.plot(t, w["queue"], color=COLORS["queue"], lw=2, label=labels["queue"])
        qax.set_ylim(bottom=0)
        ax.queue_ax = qax
        axes.append(qax)
    merged_legend(*axes, loc="upper left", fontsize=8)
    return ax


def lock_gantt(intervals: Iterable, *, ax=None, colors: Mapping | None = None, time_unit: str = "ms",
               owners: Sequence | None = None):
    """Who holds the lock when: ``intervals`` are ``(owner, start, end)`` tuples (or objects
    with those attributes). One row per owner, top to bottom in the order of ``owners`` when given
    (owners not in it follow), else in order of first appearance."""
    rows: dict = {o: i for i, o in enumerate(owners or ())}
    bars: dict = {}
    for iv in intervals:
        owner, start, end = (iv.owner, iv.start, iv.end) if hasattr(iv, "owner") else iv
        rows.setdefault(owner, len(rows))
        bars.setdefault(owner, []).append((start, end - start))
    if ax is None:
        _, ax = new_figure(height=0.5 + 0.45 * max(1, len(rows)))
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for owner, y in rows.items():
        c = (colors or {}).get(owner, cycle[y % len(cycle)])
        ax.broken_barh(bars.get(owner, []), (y - 0.35, 0.7), facecolors=c, edgecolor="white", lw=0.5)
    ax.set_yticks(list(rows.values()), [str(o) for o in rows])
    ax.invert_yaxis()
    ax.set_xlabel(f"time ({time_unit})")
    ax.grid(axis="y", visible=False)
    return ax


def phase_diagram(
    grid,
    xs: Sequence[float],
    ys: Sequence[float],
    *,
    ax=None,
    xlabel: str = "",
    ylabel: str = "",
    labels: tuple[str, str] = ("stuck", "recovered"),
):
    """A grid of booleans (``grid[i, j]`` for ``ys[i]``, ``xs[j]``; True = recovered) drawn as
    green/red cells; fractions in [0, 1] (share of seeds recovered) are drawn as a red→green scale."""
    g = np.asarray(grid, dtype=float)
    if g.shape != (len(ys), len(xs)):
        raise ValueError(f"grid must have shape (len(ys), len(xs)) = {(len(ys), len(xs))}, got {g.shape}")
    if ax is None:
        _, ax = new_figure(height=3.6)
    cmap = mpl.colors.LinearSegmentedColormap.from_list("rg", [COLORS["stuck"], "#f7f7f7", COLORS["recovered"]])
    xs_a, ys_a = np.asarray(xs, float), np.asarray(ys, float)

    def edges(v):
        if len(v) == 1:
            return np.array([v[0] - 0.5, v[0] + 0.5])
        mid = (v[1:] + v[:-1]) / 2
        return np.concatenate([[v[0] - (mid[0] - v[0])], mid, [v[-1] + (v[-1] - mid[-1])]])

    mesh = ax.pcolormesh(edges(xs_a), edges(ys_a), g, cmap=cmap, vmin=0, vmax=1, shading="flat")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(False)
    from matplotlib.patches import Patch

    ax.legend(
        handles=[Patch(color=COLORS["recovered"], label=labels[1]), Patch(color=COLORS["stuck"], label=labels[0])],
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
    )
    ax.mesh = mesh
    return ax


# --------------------------------------------------------------------------- live widget figures
def cut_short(run) -> str:
    """`` (stopped at the event cap, 750,000 events, at 12.3 s)`` for a run its event cap cut short
    (``run.truncated``), else ``""``: the one wording every widget uses."""
    if not getattr(run, "truncated", False):
        return ""
    cap = getattr(getattr(run, "scenario", None), "max_events", None)
    status = getattr(run, "status", None)
    t_end = getattr(status, "t_end_ms", None)
    events = f", {cap:,} events" if cap is not None else ""
    at = f", at {t_end / 1e3:.1f} s" if t_end is not None else ""
    return f" (stopped at the event cap{events}{at})"


class LiveFigure:
    """A widget's figure, made once and kept between slider moves.

    The figure (a plain :class:`~matplotlib.figure.Figure` on an Agg canvas, outside pyplot, so
    nothing accumulates) and its axes are created once; a subclass or caller adds its artists
    with :meth:`line` (kept in :attr:`lines` by name), and each update sets their data
    (:meth:`set_lines`), rescales (:meth:`rescale_y`), sets the verdict note (:meth:`note`, top
    left of the first axis unless told) and draws once (:meth:`draw`) instead of clearing and re-plotting.
    A run without data (no windows) shows "no data" on the axes (:meth:`no_data`).

    Widgets whose figure a lesson's ``figures.py`` builds use :meth:`replot` instead: the same
    figure, its axes cleared and the plotting function run on them, the layout computed once.

    :attr:`latest` is the live figure drawn most recently (the benchmark redraws it bare).
    """

    latest: LiveFigure | None = None

    def __init__(self, nrows: int = 1, ncols: int = 1, *, figsize=None, layout: str | None = "constrained",
                 note_ax: int = 0, note_xy=(0.01, 0.97), note_ha: str = "left", **subplots_kw):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.fig = Figure(figsize=figsize or _RC["figure.figsize"], layout=layout)
        FigureCanvasAgg(self.fig)
        axes = self.fig.subplots(nrows, ncols, squeeze=False, **subplots_kw)
        self.axes = list(axes.flat)
        self.ax = self.axes[0]
        self.lines: dict = {}
        self._note_at = (note_ax, note_xy, note_ha)
        self._new_note()
        self._empty: dict = {}
        self._layout_done = False
        self.calls = 0

    def _new_note(self) -> None:
        k, xy, ha = self._note_at
        nax = self.axes[k]
        self.verdict = nax.text(*xy, "", transform=nax.transAxes, ha=ha, va="top", fontsize=9, zorder=8,
                                bbox=dict(facecolor="white", alpha=0.85, lw=0))

    def line(self, name: str, ax=None, **kw):
        """An empty line on ``ax`` (default: the first axis), kept as ``lines[name]``."""
        self.lines[name] = (ax or self.ax).plot([], [], **kw)[0]
        return self.lines[name]

    def set_lines(self, x, data: Mapping, names: Iterable | None = None) -> None:
        """Each line's data: ``x`` against ``data[name]``, for ``names`` (default: every line)."""
        for name in self.lines if names is None else names:
            self.lines[name].set_data(x, data[name])

    @staticmethod
    def top(arrays: Iterable, floor: float = 1.0) -> float:
        """The largest finite value of ``arrays`` (empty or all-NaN ones ignored), at least ``floor``."""
        peaks = [float(np.nanmax(a)) for a in map(np.asarray, arrays) if a.size and not np.all(np.isnan(a))]
        return max(floor, *peaks) if peaks else floor

    def rescale_y(self, ax, arrays: Iterable, *, floor: float = 1.0, pad: float = 1.1) -> float:
        """``ax``'s y axis from 0 to ``pad`` × the largest value of ``arrays`` (at least ``floor``)."""
        top = pad * self.top(arrays, floor)
        ax.set_ylim(0, top)
        return top

    def note(self, text: str, color: str = "black") -> None:
        """The verdict line in the corner of the first axis."""
        self.verdict.set_text(text)
        self.verdict.set_color(color)

    def no_data(self, ax, empty: bool, text: str = "no data in this run") -> bool:
        """Show ``text`` across ``ax`` while ``empty`` (hidden otherwise); returns ``empty``."""
        if ax not in self._empty:
            self._empty[ax] = ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center",
                                      fontsize=11, color=COLORS["capacity"], zorder=9)
        self._empty[ax].set_text(text)
        self._empty[ax].set_visible(bool(empty))
        return bool(empty)

    def replot(self, plot, *args, tight: bool = True, **kw):
        """Clear the figure's axes (and drop the twins, legends and texts a previous call added),
        run ``plot(*args, axes_or_ax, **kw)`` on them and draw once. ``plot`` is a lesson's figure
        function taking its axes last; with ``tight`` the first call's tight layout is kept for
        the later ones (computing it again would cost another draw per slider move)."""
        for a in self.fig.axes:
            if a not in self.axes:
                a.remove()
        for a in self.axes:
            a.cla()
        for art in [*self.fig.legends, *self.fig.texts]:
            art.remove()
        self._empty.clear()
        self._new_note()
        out = plot(*args, self.axes if len(self.axes) > 1 else self.ax, **kw)
        if tight and not self._layout_done:
            self.fig.tight_layout()
            self.fig.set_layout_engine("none")
        self._layout_done = True
        self.draw()
        return out

    def draw(self) -> None:
        """Render the figure (one draw per update)."""
        self.fig.canvas.draw()
        self.calls += 1
        LiveFigure.latest = self

    def show(self, markdown: str | None = None) -> None:
        """Display the figure (and ``markdown`` below it) in the notebook's output."""
        from IPython.display import Markdown, display

        display(self.fig)
        if markdown is not None:
            display(Markdown(markdown))


_LIVE: dict = {}


def live_figure(key, nrows: int = 1, ncols: int = 1, **kw) -> LiveFigure:
    """The :class:`LiveFigure` of widget ``key`` (made with these arguments on first use, then the
    same figure for every later call); put the figure's shape in ``key`` where it varies."""
    if key not in _LIVE:
        _LIVE[key] = LiveFigure(nrows, ncols, **kw)
    return _LIVE[key]
