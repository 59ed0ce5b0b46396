"""07 · The figures: the dependency graph coloured by utilisation, the timelines with the seed's
alarms, the fixes compared, the widget's compact panels (the alarm-order map is in
:mod:`.figures_map`). Each takes results as data (a :class:`~.results.Run`, a
:class:`~.experiments.FixComparison`)."""

from __future__ import annotations

import math

import numpy as np

from ..plotting import COLORS, decorate, new_figure, shade
from .experiments import FixComparison
from .graph import GATEWAY_GRAPH, Graph
from .results import Run, node_utilisation
from .scenario import _SEED_PEAK_PER_MIN, MAX_UTIL, MIN_MS, SEED_ALARM_ORDER

_UTIL_CMAP = "RdYlGn_r"
_UTIL_MAX = 1.5
_BOX_W, _BOX_H = 1.8, 0.8
#: what a box's number is, where it is not utilisation (offered / capacity)
_GRAPH_PREFIX = {"access": "cpu busy ", "monitoring": "cpu busy ", "app": "cpu busy ", "logs": "threads "}


def _border(c, other):
    """Where the segment from box centre ``c`` towards ``other`` leaves the box."""
    dx, dy = other[0] - c[0], other[1] - c[1]
    tx = (_BOX_W / 2) / abs(dx) if dx else math.inf
    ty = (_BOX_H / 2) / abs(dy) if dy else math.inf
    f = min(tx, ty)
    return c[0] + dx * f, c[1] + dy * f


def plot_graph(run: Run, t_ms: float, ax=None, *, graph: Graph = GATEWAY_GRAPH, note: str | None = None):
    """Draw the dependency graph at ``t_ms`` (means of the last 10 s), hatched grey when down. The
    jimdb, MySQL, JMQ and ES boxes show utilisation (offered load / capacity; red above 1); the
    gateway boxes (access layer, monitoring, app layer: the same hosts) the CPU busy share of the
    live hosts, which cannot pass 1; the call-logs box the sender threads in use over their cap.
    The fallback edge turns red while calls go through jimdb to MySQL. Returns the axis."""
    import matplotlib as mpl
    from matplotlib.patches import FancyBboxPatch

    if ax is None:
        _, ax = new_figure(height=2.8)
    util = node_utilisation(run, t_ms)
    cmap = mpl.colormaps[_UTIL_CMAP]
    norm = mpl.colors.Normalize(0.0, _UTIL_MAX)
    w, sc = run.windows, run.scenario
    k = min(int(t_ms // sc.step_ms), sc.steps - 1)
    split = sc.fixes.split_clusters and t_ms >= sc.fixes_at_ms
    for e in graph.edges:
        if (e.dst == "jimdb_mon" and not split) or (e.src == "monitoring" and e.dst == "jimdb" and split):
            continue
        c0, c1 = graph.node(e.src).xy, graph.node(e.dst).xy
        style = "--" if e.kind in ("fallback", "async") else "-"
        hot = e.kind == "fallback" and w["fallthrough"][k] > 0
        color = COLORS["timeouts"] if hot else "#555555"
        if e.kind == "fallback":  # under the app layer, bottom edge to bottom edge
            p0 = (c0[0] + 0.3, c0[1] - _BOX_H / 2)
            p1 = (c1[0] - 0.3, c1[1] - _BOX_H / 2)
            conn = "arc3,rad=0.1"
            lab_xy = ((p0[0] + p1[0]) / 2, p0[1] - 0.42)
        elif e.dst == "jimdb_mon":  # over the jimdb box
            p0 = (c0[0] + 0.3, c0[1] + _BOX_H / 2)
            p1 = (c1[0] - 0.3, c1[1] + _BOX_H / 2)
            conn = "arc3,rad=-0.2"
            lab_xy = ((p0[0] + p1[0]) / 2, p0[1] + 0.45)
        else:
            p0, p1 = _border(c0, c1), _border(c1, c0)
            conn = "arc3,rad=0"
            dx, dy = p1[0] - p0[0], p1[1] - p0[1]
            ln = math.hypot(dx, dy) or 1.0
            lab_xy = ((p0[0] + p1[0]) / 2 - 0.08 * dy / ln, (p0[1] + p1[1]) / 2 + 0.08 * dx / ln)
        ax.annotate(
            "", xy=p1, xytext=p0,
            arrowprops=dict(arrowstyle="-|>", color=color, lw=2 if hot else 1.2, ls=style,
                            shrinkA=0, shrinkB=0, connectionstyle=conn),
        )  # fmt: skip
        if e.label and e.src != "clients":
            va = "top" if e.kind == "fallback" else "bottom"
            ha = "right" if (e.kind == "call" and p0[0] != p1[0] and p0[1] != p1[1]) else "center"
            ax.text(*lab_xy, e.label, ha=ha, va=va, fontsize=7, color=color)
    for n in graph.nodes:
        u, down = util[n.name]
        x, y = n.xy
        hatch = None
        if n.name == "jimdb_mon" and not split:
            face, txt = "#f7f7f7", "(not split)"
        elif n.name == "clients":
            face = "#e8eef7"
            txt = f"{w['arrivals'][k] * MIN_MS / sc.step_ms / 1e6:.2f} M calls/min"
        elif down:
            face, txt, hatch = "#cccccc", "down", "xx"
        else:
            face = cmap(norm(min(u, _UTIL_MAX)))
            txt = f"{_GRAPH_PREFIX.get(n.name, '')}{u:.2f}"
        ax.add_patch(
            FancyBboxPatch((x - _BOX_W / 2, y - _BOX_H / 2), _BOX_W, _BOX_H,
                           boxstyle="round,pad=0,rounding_size=0.1", fc=face, ec="#333333", lw=1, hatch=hatch)
        )  # fmt: skip
        ax.text(x, y + 0.13, n.label, ha="center", va="center", fontsize=7.5, linespacing=1.0)
        box = {"fc": "white", "ec": "none", "alpha": 0.8, "pad": 1} if hatch else None
        ax.text(x, y - 0.26, txt, ha="center", va="center", fontsize=8, fontweight="bold", bbox=box)
    ax.set_xlim(-0.05, 10.15)
    ax.set_ylim(-0.15, 4.25)
    ax.axis("off")
    label = note if note is not None else f"minute {t_ms / MIN_MS:.0f}"
    ax.text(-0.05, 4.25, label, ha="left", va="top", fontsize=9, fontweight="bold")
    return ax


def plot_graph_moments(run: Run, moments: list, *, graph: Graph = GATEWAY_GRAPH):
    """The graph at several ``(t_ms, note)`` moments, one row each, with a colour bar."""
    import matplotlib as mpl
    import matplotlib.pyplot as plt

    n = len(moments)
    fig, axes = plt.subplots(n, 1, figsize=(8.0, 2.75 * n + 0.5), squeeze=False)
    for ax, (t_ms, note) in zip(axes[:, 0], moments, strict=True):
        plot_graph(run, t_ms, ax, graph=graph, note=note)
    fig.subplots_adjust(left=0.01, right=0.99, top=0.99, bottom=0.95 / (2.75 * n + 0.5) + 0.04, hspace=0.05)
    cax = fig.add_axes((0.3, 0.095, 0.4, 0.012))
    sm = mpl.cm.ScalarMappable(norm=mpl.colors.Normalize(0.0, _UTIL_MAX), cmap=_UTIL_CMAP)
    cb = fig.colorbar(sm, cax=cax, orientation="horizontal", extend="max")
    cb.set_label(f"jimdb, mysql, jmq, es: utilisation (offered load / capacity, can pass 1)\n"
                 f"gateway boxes: cpu busy share of the live hosts (at most 1); call logs: threads / cap\n"
                 f"at {_UTIL_MAX:g} and above all the same red: read the number", fontsize=8)
    cb.ax.tick_params(labelsize=7)
    return fig


def _spread(xs, gap):
    """Label positions for the sorted ``xs``: alarms closer than ``gap`` form a group whose labels
    sit ``gap`` apart, centred on the group; a group never overlaps the one before."""
    groups = [[xs[0]]]
    for x in xs[1:]:
        if x - groups[-1][-1] < gap:
            groups[-1].append(x)
        else:
            groups.append([x])
    pos = []
    for g in groups:
        start = float(np.mean(g)) - gap * (len(g) - 1) / 2
        if pos:
            start = max(start, pos[-1] + gap)
        pos += [start + gap * k for k in range(len(g))]
    return pos


def _alarm_lines(ax, run: Run, names=SEED_ALARM_ORDER, numbers=True):
    """Dotted red lines at the alarms; numbers (1 = first in the seed's list) in a row above the
    axis, spread apart where alarms come close together, each tied to its line."""
    span = run.scenario.horizon_ms / MIN_MS
    fired = [(i, run.alarm_ms(name) / MIN_MS) for i, name in enumerate(names, 1)]
    fired = sorted(((x, i) for i, x in fired if not math.isnan(x)))
    for x, _ in fired:
        ax.axvline(x, color=COLORS["timeouts"], lw=0.8, ls=":", zorder=1)
    if not numbers or not fired:
        return
    pos = _spread([x for x, _ in fired], 0.025 * span)
    for (x, i), p in zip(fired, pos, strict=True):
        ax.annotate(str(i), xy=(x, 1.0), xycoords=("data", "axes fraction"), xytext=(p, 1.13),
                    textcoords=("data", "axes fraction"), color=COLORS["timeouts"], fontsize=8, ha="center",
                    va="bottom", annotation_clip=False,
                    arrowprops=dict(arrowstyle="-", color=COLORS["timeouts"], lw=0.6, shrinkA=0, shrinkB=0))


def _fix_shade(ax, run: Run, label: bool):
    """Shade the time the fixes are on, when they come on during the run."""
    sc = run.scenario
    if (sc.fixes.names() or sc.local_cache_hit_ratio) and 0 < sc.fixes_at_ms < sc.horizon_ms:
        shade(ax, [(sc.fixes_at_ms / MIN_MS, sc.horizon_ms / MIN_MS)], kind="intervention",
              label="fixes on" if label else None)  # fmt: skip
        if label:
            ax.legend(loc="lower left", fontsize=8)


def plot_timelines(run: Run, *, alarms: bool = True, reference: Run | None = None, reference_label: str = "reference"):
    """Each component against time (min), the seed's alarms marked 1–7 as dotted lines. The heap
    panel shows the fullest host's heap against two levels: live data plus a full log queue, and
    the whole heap (out of memory); ``reference``, another :class:`Run` of the same length, adds
    its fullest host's heap there (``reference_label`` in the legend), to show the gap."""
    import matplotlib.pyplot as plt

    if reference is not None and not isinstance(reference, Run):
        raise ValueError(f"reference must be a Run or None, got {type(reference).__name__}")
    if not isinstance(reference_label, str):
        raise ValueError(f"reference_label must be a string, got {type(reference_label).__name__}")
    w, sc = run.windows, run.scenario
    t = w["t"] / 60.0
    per_min = MIN_MS / sc.step_ms / 1e6
    fig, ax = plt.subplots(6, 1, figsize=(8.0, 12.0), sharex=True, height_ratios=[1, 1, 0.8, 1, 1, 1])
    fig.subplots_adjust(top=0.95)
    a = ax[0]
    a.plot(t, w["arrivals"] * per_min, color=COLORS["offered"], lw=2, label="calls")
    a.plot(t, w["served"] * per_min, color=COLORS["goodput"], lw=1.5, label="answered")
    if w["rejected"].any():
        a.plot(t, w["rejected"] * per_min, color=COLORS["rejected"], lw=1.5, label="rejected (token bucket)")
    a.axhline(_SEED_PEAK_PER_MIN / 1e6, color=COLORS["capacity"], ls="--", lw=1.2, label="seed: 1.9 M/min")
    decorate(a, ylabel="million calls/min", ylim=(0, None))
    a = ax[1]
    a.plot(t, w["gateway_cpu"] * 100, color=COLORS["offered"], lw=2, label="cpu, mean of live hosts")
    a.plot(t, w["gateway_cpu_max"] * 100, color=COLORS["offered"], lw=0.8, alpha=0.6, label="cpu, hottest host")
    a.plot(t, w["gc_share"] * 100, color=COLORS["wasted"], lw=1.5, label="young gc share of cpu")
    a.plot(t, w["hosts_up"] / sc.hosts * 100, color=COLORS["capacity"], lw=1.5, label=f"hosts up (% of {sc.hosts})")
    decorate(a, ylabel="gateway (%)", ylim=(0, 110))
    a.set_yticks([0, 25, 50, 75, 100])
    a.legend(loc="lower right", bbox_to_anchor=(1.0, 0.1), fontsize=7, ncol=2)
    a = ax[2]
    full_queue = (sc.live_mb + sc.log_buffer_mb) / sc.heap_mb * 100
    a.axhline(100.0, color=COLORS["timeouts"], lw=1.0, ls="-", label="heap full: out of memory")
    a.axhline(full_queue, color=COLORS["capacity"], lw=1.0, ls="-.",
              label=f"live data + full log queue ({full_queue:.0f} %)")  # fmt: skip
    a.plot(t, w["heap_used"] * 100, color=COLORS["queue"], lw=1.8, label="this run")
    if reference is not None:
        rt = reference.windows["t"] / 60.0
        a.plot(rt, reference.windows["heap_used"] * 100, color=COLORS["goodput"], lw=1.5, ls="--",
               label=reference_label)  # fmt: skip
    decorate(a, ylabel="heap used,\nfullest host (%)", ylim=(0, 110))
    a.set_yticks([0, 25, 50, 75, 100])
    a.legend(loc="lower right", fontsize=7, ncol=2)
    a = ax[3]
    a.plot(t, w["jimdb_util"], color=COLORS["offered"], lw=2, label="hot shard: offered / capacity")
    a.axhline(1.0, color=COLORS["capacity"], ls="--", lw=1.2)
    down = w["jimdb_up"] == 0
    spans = _spans(t, down)
    shade(a, spans, label="failover (unavailable)")
    decorate(a, ylabel="jimdb utilisation", ylim=(0, None))
    a = ax[4]
    a.plot(t, w["mysql_util"], color=COLORS["offered"], lw=2, label="offered / capacity")
    a.axhline(1.0, color=COLORS["capacity"], ls="--", lw=1.2)
    a.set_yscale("symlog", linthresh=1.0)
    top = max(1.0, float(np.nanmax(w["mysql_util"])))
    ticks = [0.0, 0.5, 1.0] + [10.0**e for e in range(1, int(math.floor(math.log10(top))) + 1)]
    a.set_yticks(ticks, [f"{v:g}" for v in ticks])
    a.yaxis.set_minor_locator(plt.NullLocator())
    scans = w["full_scans"] > 0
    if scans.any():
        a.plot(t[scans], np.full(scans.sum(), 0.05), "|", color=COLORS["timeouts"], ms=6, label="full scans")
    decorate(a, ylabel="mysql utilisation\n(linear below 1, log above)", ylim=(0, None))
    a = ax[5]
    a.plot(t, w["pending"] / 1e6, color=COLORS["queue"], lw=2, label="pending in gateway heaps")
    a.plot(t, w["jmq_backlog"] / 1e6, color=COLORS["queue"], lw=1.5, ls="--", label="jmq backlog (not in es)")
    bound = sc.log_buffer_mb * 1024.0 / sc.log_kb * sc.hosts / 1e6 if sc.log_kb > 0 else math.inf
    if math.isfinite(bound):
        a.axhline(bound, color=COLORS["queue"], lw=0.8, ls="-.", label="all log queues full")
    decorate(a, xlabel="time (min)", ylabel="call logs (million)", ylim=(0, None))
    a2 = a.twinx()
    a2.plot(t, w["scans_running"] / 1e3, color=COLORS["timeouts"], lw=1.5, ls=":", label="full scans (right axis)")
    h1, l1 = a.get_legend_handles_labels()
    h2, l2 = a2.get_legend_handles_labels()
    a.legend(h1 + h2, l1 + l2, loc="upper left", fontsize=7)
    a2.set_ylabel("full scans mysql runs (thousand)", color=COLORS["timeouts"], fontsize=8)
    a2.tick_params(axis="y", colors=COLORS["timeouts"], labelsize=8)
    a2.set_ylim(0, None)
    a2.grid(False)
    a2.spines["right"].set_visible(True)
    for a in ax:
        a.set_xlim(t[0], t[-1])
    if alarms:
        for a in ax:
            _alarm_lines(a, run, numbers=a is ax[0])
    for a in ax:
        _fix_shade(a, run, label=False)
    fig.tight_layout()
    return fig


def _spans(t, mask):
    """(start, end) runs of True in ``mask`` on axis ``t``."""
    out = []
    m = np.asarray(mask, dtype=bool)
    if not m.any():
        return out
    d = np.diff(np.concatenate([[0], m.astype(int), [0]]))
    starts, ends = np.flatnonzero(d == 1), np.flatnonzero(d == -1)
    step = t[1] - t[0] if len(t) > 1 else 1.0
    for s, e in zip(starts, ends, strict=True):
        out.append((t[s], t[e - 1] + step))
    return out


def plot_fixes(comparison: FixComparison):
    """Peak utilisation (offered load / capacity) per component (left, colour = utilisation, red
    above 1; for the gateway: calls offered to the access layer over what the live hosts' CPUs can
    process after GC and thread switching, so not the CPU busy share) and the share of calls
    answered (right), one row per variant."""
    import matplotlib as mpl
    import matplotlib.pyplot as plt

    rows = comparison.rows()
    labels = [r["label"] for r in rows]
    cols = ["gateway", "jimdb", "mysql", "jmq"]
    m = np.array([[r["peaks"][c] for c in cols] for r in rows])
    height = 0.36 * len(rows) + 1.2
    fig, (a0, a1) = plt.subplots(1, 2, figsize=(8.0, height), width_ratios=[1.5, 1])
    im = a0.imshow(np.minimum(m, _UTIL_MAX), cmap=_UTIL_CMAP, norm=mpl.colors.Normalize(0, _UTIL_MAX), aspect="auto")
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            v = m[i, j]
            big = cols[j] == "gateway" and v >= MAX_UTIL
            txt = f"≥{MAX_UTIL:.0f}" if big else (f"{v:.1f}" if v >= 10 else f"{v:.2f}")
            a0.text(j, i, txt, ha="center", va="center", fontsize=8)
    names = {"gateway": "gateway\n(offered/cpu)"}
    a0.set_xticks(range(len(cols)), [names.get(c, c) for c in cols], fontsize=8)
    a0.set_yticks(range(len(labels)), labels)
    a0.xaxis.tick_top()
    a0.grid(False)
    a0.set_xlabel("peak utilisation = offered load / capacity\n(gateway: calls offered / what the live\n"
                  f"hosts' cpus can process, capped at {MAX_UTIL:.0f})", fontsize=8)

    shares = np.array([[r["flood"][k] for k in ("answered", "refused", "failed")] for r in rows]) * 100
    left = np.zeros(len(rows))
    y = np.arange(len(rows))
    for j, (key, color) in enumerate(
        (("answered", COLORS["goodput"]), ("refused fast", COLORS["rejected"]), ("failed", COLORS["timeouts"]))
    ):
        a1.barh(y, shares[:, j], left=left, color=color, height=0.6, label=key)
        left += shares[:, j]
    for i, s_ in enumerate(shares[:, 0]):
        a1.text(2, i, f"{s_:.1f}", va="center", fontsize=8, color="white", fontweight="bold")
    a1.set_ylim(len(rows) - 0.5, -0.5)
    a1.set_yticks([])
    a1.set_xlim(0, 100)
    a1.legend(loc="upper center", bbox_to_anchor=(0.45, -0.16), ncol=2, fontsize=8)
    start = comparison.runs[rows[0]["label"]].scenario.ramp_mid_ms / MIN_MS
    a1.set_xlabel(f"calls from minute {start:.0f} on (%)")
    fig.tight_layout(rect=(0, 0.3 / height, 1, 1))
    box = a0.get_position()  # the colour bar under the left panel and its label, as wide as it
    below = a0.get_tightbbox(fig.canvas.get_renderer()).transformed(fig.transFigure.inverted()).y0
    cax = fig.add_axes((box.x0, below - 0.2 / height, box.width, 0.1 / height))
    cb = fig.colorbar(im, cax=cax, orientation="horizontal", extend="max")
    cb.set_label(f"utilisation; at {_UTIL_MAX:g} and above all the same red: read the number", fontsize=8)
    cb.ax.tick_params(labelsize=7)
    return fig


def plot_compact(run: Run, ax=None):
    """Three panels for the widget: calls (answered, refused, failed), the gateway (hottest host's
    CPU, hosts up) and the utilisation of jimdb, MySQL and JMQ; the seed's alarms dotted."""
    import matplotlib.pyplot as plt

    w, sc = run.windows, run.scenario
    t = w["t"] / 60.0
    per_min = MIN_MS / sc.step_ms / 1e6
    if ax is None:
        fig, ax = plt.subplots(3, 1, figsize=(8.0, 6.6), sharex=True)
    fig = ax[0].figure
    a = ax[0]
    a.plot(t, w["arrivals"] * per_min, color=COLORS["offered"], lw=2, label="calls")
    a.plot(t, w["served"] * per_min, color=COLORS["goodput"], lw=1.5, label="answered")
    a.plot(t, (w["failed"] + w["timeouts"]) * per_min, color=COLORS["timeouts"], lw=1.2, label="failed")
    if w["rejected"].any():
        a.plot(t, w["rejected"] * per_min, color=COLORS["rejected"], lw=1.2, label="refused fast")
    decorate(a, ylabel="million calls/min", ylim=(0, None))
    a.legend(loc="upper left", fontsize=8)
    a = ax[1]
    a.plot(t, w["gateway_cpu_max"] * 100, color="#000000", lw=1.5, label="cpu, hottest host")
    a.plot(t, w["hosts_up"] / sc.hosts * 100, color="#7f7f7f", lw=1.5, ls="--", label=f"hosts up (% of {sc.hosts})")
    decorate(a, ylabel="gateway (%)", ylim=(0, 105))
    a.legend(loc="lower left", fontsize=8)
    a = ax[2]
    a.plot(t, np.minimum(w["jimdb_util"], 3), color="#000000", lw=1.5, label="jimdb hot shard")
    a.plot(t, np.minimum(w["mysql_util"], 3), color="#000000", lw=1.2, ls="--", label="mysql (clipped at 3)")
    a.plot(t, np.minimum(w["jmq_util"], 3), color=COLORS["queue"], lw=1.2, label="jmq")
    a.axhline(1.0, color=COLORS["capacity"], lw=1, ls="-", alpha=0.5)
    decorate(a, xlabel="time (min)", ylabel="offered / capacity (≤ 3)", ylim=(0, 3.7))
    a.legend(loc="upper left", fontsize=8, ncol=3)
    for a in ax:
        a.set_xlim(t[0], t[-1])
        _alarm_lines(a, run, numbers=a is ax[0])
        _fix_shade(a, run, label=a is ax[1])
    fig.tight_layout()
    return ax

