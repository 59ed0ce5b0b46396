"""Helpers for notebook 04a · Retry storms: the mitigations surveyed.

The verdicts come from the committed counts (:mod:`hotkeylab.metastable.verdicts`); this module
adds the arithmetic that explains them and the figures that show them:

- :func:`storm_attempts`: attempts a user request makes when every attempt times out, from the
  retry policy's own rule (cap, delays, patience); :func:`storm_demand` turns that into merged
  batches per second through the batcher, and :func:`attempts_ceiling` is the most attempts per
  request the hot-key thread can carry at the peak.
- :func:`storm_exit_s`, :func:`stretch_needed`, :func:`drain_edge_rate`: how long a storm takes to
  die out once the work fits, and what that asks of the seed's measure 2 and of a phase diagram.
- :func:`restart_run`: one restart of the short incident with a given patience (module-level,
  so a process pool can call it).
- :func:`survey_rows`, :func:`survey_markdown`, :func:`plot_survey`, :func:`backoff_grid`,
  :func:`plot_backoff`, :func:`plot_restart_zoom`, :func:`plot_phase_load`.

>>> from hotkeylab.metastable import SEED_RETRY, survey
>>> survey.storm_attempts(SEED_RETRY, 200.0)
2.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from .. import capacity, plotting
from ..plotting import COLORS
from ..validate import check_int, check_number
from . import SEED_INCIDENT, RetryPolicy, Scenario, closed_forms, effective_timeout_queue, simulate
from . import lesson as L
from .analysis import BLOCK_S

__all__ = [
    "GROUPS",
    "peak_rate",
    "storm_attempts",
    "storm_demand",
    "attempts_ceiling",
    "user_rate_for_batches",
    "storm_exit_s",
    "stretch_needed",
    "drain_edge_rate",
    "restart_scenario",
    "restart_run",
    "share_text",
    "survey_rows",
    "survey_markdown",
    "plot_survey",
    "backoff_grid",
    "plot_backoff",
    "plot_restart_zoom",
    "restart_zoom_top",
    "restart_zoom_clipped",
    "plot_phase_load",
]

#: The mitigations of :data:`lesson.MITIGATIONS` by what they act on, in the notebook's order.
GROUPS: dict[str, tuple[str, ...]] = {
    "operators act after isolation": ("degrade", "restart", "stretch", "suppress"),
    "clients send less": ("no_retries", "backoff_none", "backoff_full", "backoff_equal", "backoff_decorrelated",
                          "grpc", "percent", "adaptive_throttle"),
    "the server protects itself": ("queue_limit", "deadline_drop", "adaptive_lifo", "codel", "lifo_codel"),
    "the batcher": ("leader",),
}


# --------------------------------------------------------------------------- the work of a storm
def peak_rate(sc: Scenario = L.SHORT_INCIDENT) -> float:
    """User requests/s at the peak (the base rate times the peak's factor)."""
    return sc.user_rate_per_s * (sc.peak.factor if sc.peak is not None else 1.0)


def storm_attempts(policy: RetryPolicy, timeout_ms: float, *, stretch: float = 1.0, samples: int = 200_000,
                   seed: int = 0) -> float:
    """Mean attempts per user request when every attempt times out after ``timeout_ms`` (M).

    The policy's own rule, as :class:`RetryPolicy` states it: attempt k + 1 starts at
    ``k·M + D_1 + … + D_k``, where ``D_k`` is the k-th delay (backoff, jitter, at least
    ``min_delay_ms``, times ``stretch``, the seed's measure 2); the user stops at
    ``max_attempts`` or once the next attempt would start more than ``patience_ms`` after the first.
    Delays are random, so the mean is taken over ``samples`` draws with a fixed ``seed`` (the same
    draws for every ``stretch``, so the result falls monotonically as ``stretch`` grows). With no
    patience the count is ``max_attempts`` (inf if that is unlimited). Rejected attempts, which fail
    at once rather than after M, are not counted: this is the storm's work with timeouts only.
    """
    m = check_number("timeout_ms", timeout_ms, low=0.0, low_open=True)
    f = check_number("stretch", stretch, low=1e-3, high=1e3)
    n = check_int("samples", samples, low=1)
    p = policy
    if math.isinf(p.patience_ms):
        return float(p.max_attempts)
    k_max = int(min(p.max_attempts - 1, math.floor(p.patience_ms / m)))  # each retry costs at least M
    if k_max <= 0:
        return 1.0
    rng = np.random.default_rng(seed)
    u = rng.random((k_max, n))
    start = np.zeros(n)
    alive = np.ones(n, dtype=bool)
    prev = np.zeros(n)
    attempts = np.ones(n)
    for k in range(1, k_max + 1):
        if p.jitter == "decorrelated":
            lo = p.base_ms
            hi = np.maximum(lo, 3.0 * np.where(prev > 0, prev, lo))
            d = np.minimum(p.cap_ms, lo + u[k - 1] * (hi - lo))
        else:
            d0 = min(p.cap_ms, p.base_ms * p.multiplier ** (k - 1))
            d = {"none": np.full(n, d0), "full": u[k - 1] * d0, "equal": 0.5 * d0 + 0.5 * d0 * u[k - 1]}[p.jitter]
        prev = d  # the unstretched delay, as the client remembers it for decorrelated jitter
        d = np.maximum(p.min_delay_ms, d * f)
        start = start + m + d
        alive &= start <= p.patience_ms
        attempts += alive
    return float(attempts.mean())


def storm_demand(sc: Scenario, attempts: float) -> float:
    """Merged batches/s the batcher makes when each user request at the peak is sent ``attempts``
    times: ``batcher_batch_rate(λ_peak × attempts)`` (retries mostly fill existing batches)."""
    a = check_number("attempts", attempts, low=0.0)
    return capacity.batcher_batch_rate(min(peak_rate(sc) * a, 1e6), sc.batch_max_rows, sc.batch_max_wait_ms)


def user_rate_for_batches(batches_per_s: float, sc: Scenario = SEED_INCIDENT) -> float:
    """The request rate (requests/s) from which the batcher makes ``batches_per_s`` merged batches
    per second (the inverse of ``capacity.batcher_batch_rate``, by bisection); inf if none does."""
    b = check_number("batches_per_s", batches_per_s, low=0.0)

    def rate(lam):
        return capacity.batcher_batch_rate(lam, sc.batch_max_rows, sc.batch_max_wait_ms)

    if b == 0:
        return 0.0
    lo, hi = 1e-6, 1e6
    if rate(hi) < b:
        return math.inf
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if rate(mid) < b else (lo, mid)
        if hi / lo < 1 + 1e-12:
            break
    return 0.5 * (lo + hi)


def attempts_ceiling(sc: Scenario = L.SHORT_INCIDENT) -> float:
    """The most attempts per user request the hot-key thread carries at the peak: the request rate
    whose batches fill it (``batcher_batch_rate(x) = 1000/N``, the bistable band's upper edge)
    divided by the users' rate at the peak. A storm sending more than this sustains itself."""
    return user_rate_for_batches(capacity.tps_ceiling(sc.batch_ms), sc) / peak_rate(sc)


def storm_exit_s(sc: Scenario, queue_batches: float, attempts: float, user_rate_per_s: float | None = None) -> float:
    """Seconds until a storm with ``queue_batches`` waiting falls back below the timeout threshold
    ``(M − T − N)/N`` while each user request (``user_rate_per_s``, default the peak rate) is sent
    ``attempts`` times: ``(Q − Q_eff) / (μ − batcher_batch_rate(attempts × λ))``; inf if that
    demand fills the thread (the storm sustains itself)."""
    q = check_number("queue_batches", queue_batches, low=0.0)
    a = check_number("attempts", attempts, low=0.0)
    lam = peak_rate(sc) if user_rate_per_s is None else check_number("user_rate_per_s", user_rate_per_s, low=0.0)
    excess = q - effective_timeout_queue(sc)
    if excess <= 0:
        return 0.0  # already below the threshold: no storm to leave
    mu = capacity.tps_ceiling(sc.batch_ms)
    demand = capacity.batcher_batch_rate(min(lam * a, 1e6), sc.batch_max_rows, sc.batch_max_wait_ms)
    if demand >= mu:
        return math.inf
    return excess / (mu - demand)


def stretch_needed(sc: Scenario, queue_batches: float, window_s: float) -> float:
    """Smallest factor for the seed's measure 2 (every retry delay × factor) with which a window of
    ``window_s`` seconds takes a storm with ``queue_batches`` waiting back below the threshold, by
    :func:`storm_attempts` and :func:`storm_exit_s` (bisection over the factor); inf if even
    ×1000 does not."""
    w = check_number("window_s", window_s, low=0.0, low_open=True)

    def ok(f):
        a = storm_attempts(sc.retry, sc.timeout_ms, stretch=f)
        return storm_exit_s(sc, queue_batches, a) <= w

    lo, hi = 1.0, 1000.0
    if ok(lo):
        return lo
    if not ok(hi):
        return math.inf
    for _ in range(40):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def drain_edge_rate(sc: Scenario, queue_batches: float, within_s: float, attempts: float) -> float:
    """The user rate (requests/s, at the peak) below which a storm with ``queue_batches`` waiting
    and ``attempts`` per request falls below the timeout threshold within ``within_s`` seconds:
    the solution of ``storm_exit_s = within_s``. Below the bistable band's lower edge a storm dies
    out, but near that edge slowly: this is the load at which it dies out *in time*."""
    w = check_number("within_s", within_s, low=0.0, low_open=True)
    a = check_number("attempts", attempts, low=0.0, low_open=True)
    q = max(0.0, check_number("queue_batches", queue_batches, low=0.0) - effective_timeout_queue(sc))
    target = capacity.tps_ceiling(sc.batch_ms) - q / w
    return user_rate_for_batches(max(0.0, target), sc) / a


# --------------------------------------------------------------------------- restart wave
def restart_scenario(patience_ms: float = 300.0, window_ms: float = 1_000.0, after_ms: float = 20_000.0) -> Scenario:
    """The short incident with the seed's retries at ``patience_ms`` and a restart (queue cleared)
    when operators act (:data:`lesson.ACT_MS`), run ``after_ms`` past it, in windows of ``window_ms``."""
    sc = L.SHORT_INCIDENT
    p = check_number("patience_ms", patience_ms, low=0.0)
    return replace(sc, retry=replace(sc.retry, patience_ms=p), restart_at_ms=L.ACT_MS,
                   horizon_ms=L.ACT_MS + check_number("after_ms", after_ms, low=5_000.0),
                   window_ms=check_number("window_ms", window_ms, low=10.0, high=5_000.0))


def restart_run(patience_ms: float = 300.0, seed: int = 0, window_ms: float = 1_000.0):
    """One run of :func:`restart_scenario` on the fast engine."""
    return simulate(restart_scenario(patience_ms, window_ms), engine="fast", seed=seed)


# --------------------------------------------------------------------------- the survey table
def share_text(count, field: str = "served_share") -> str:
    """``Count.share_range`` as text, one value when the range is a single percent (``"100%"``)."""
    x = 100 * getattr(count, field)
    lo, hi = f"{np.nanmin(x):.0f}", f"{np.nanmax(x):.0f}"
    return f"{lo}%" if lo == hi else f"{lo}–{hi}%"


def survey_rows(V: dict) -> list[dict]:
    """One row per mitigation of :data:`GROUPS` (and ``"none"`` first): its label, kind, source,
    the verdict over seeds (``Count.text``), the ranges of served and end shares, mean attempts."""
    rows = []
    for group, names in {"the incident": ("none",), **GROUPS}.items():
        for name in names:
            c = V[f"mit_{name}"]
            m = L.MITIGATIONS[name]
            rows.append({"name": name, "group": group, "label": m.label, "kind": m.kind, "source": m.source,
                         "k": c.k, "n": c.n, "text": c.text, "knife_edge": c.knife_edge,
                         "served": share_text(c, "served_share"), "end": share_text(c, "end_share"),
                         "attempts": float(np.mean(c.attempts_per_request)), "stale": c.stale})
    return rows


def survey_markdown(rows: list[dict]) -> str:
    """A markdown table of :func:`survey_rows`."""
    head = ["mitigation", "acts on", "source", "verdict over seeds", "served in time (range)",
            "goodput / offered, last 10 s (range)", "attempts per user request (mean)"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        verdict = f"**{r['text']}**" if r["knife_edge"] else r["text"]
        out.append(f"| {r['label']} | {r['group']} | {r['source']} | {verdict} | {r['served']} | {r['end']} | "
                   f"{r['attempts']:.2f} |")
    return "\n".join(out)


def plot_survey(V: dict, names: Sequence[str] | None = None):
    """Two panels sharing the mitigations (rows) and the 0–100% scale, one dot per seed. Left: the
    share of offered user requests answered in time over the run's last 10 s, against the 90%
    criterion (dashed). Right: the share answered in time over the whole run (what the fix cost on
    the way). Green where that seed recovered (``run.recovered``), red where not; ``k/n`` at the right."""
    from matplotlib.lines import Line2D

    from .analysis import RECOVERY_SHARE

    names = list(names) if names is not None else ["none", *[n for g in GROUPS.values() for n in g]]
    fig, axes = plotting.new_figure(1, 2, height=0.3 * len(names) + 1.2, sharey=True, layout="constrained")
    fig.set_size_inches(9.5, 0.3 * len(names) + 1.2)
    for ax, field, xlabel in ((axes[0], "end_share", "answered in time / offered, last 10 s (%)"),
                              (axes[1], "served_share", "answered in time / offered, whole run (%)")):
        for i, name in enumerate(names):
            c = V[f"mit_{name}"]
            off = np.linspace(-0.28, 0.28, c.n)
            x = 100 * getattr(c, field)
            ok = c.recovered
            ax.scatter(x[ok], i + off[ok], s=12, color=COLORS["recovered"], lw=0, zorder=3)
            ax.scatter(x[~ok], i + off[~ok], s=12, color=COLORS["stuck"], lw=0, zorder=3)
        ax.set_xlim(-3, 103)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel(xlabel)
    axes[0].axvline(100 * RECOVERY_SHARE, color=COLORS["capacity"], ls="--", lw=1.5)
    for i, name in enumerate(names):
        c = V[f"mit_{name}"]
        axes[1].annotate(f"{c.k}/{c.n}", (1.0, i), xycoords=("axes fraction", "data"), xytext=(4, 0),
                         textcoords="offset points", va="center", fontsize=8,
                         color=COLORS["stuck"] if c.k == 0 else COLORS["recovered"] if c.k == c.n else "black")
    axes[0].set_yticks(range(len(names)), [L.MITIGATIONS[n].label for n in names], fontsize=8)
    axes[0].invert_yaxis()
    handles = [Line2D([], [], marker="o", ls="", color=COLORS["recovered"], label="a seed that recovered"),
               Line2D([], [], marker="o", ls="", color=COLORS["stuck"], label="a seed that stayed stuck"),
               Line2D([], [], color=COLORS["capacity"], ls="--", lw=1.5,
                      label=f"{100 * RECOVERY_SHARE:.0f}%: the recovery criterion (per {BLOCK_S:g}-s block)")]
    fig.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=8)
    return fig, axes


# --------------------------------------------------------------------------- the backoff sweep
def backoff_grid(V: dict) -> dict:
    """The backoff sweep as arrays: rows (attempts, kind), columns patience; recovered counts, seeds,
    mean attempts per user request (simulated, whole run) and :func:`storm_attempts` (closed form)."""
    from .verdicts import BACKOFF_ATTEMPTS, BACKOFF_KINDS, BACKOFF_PATIENCE_MS, EXPERIMENTS

    rows = [(a, k) for a in BACKOFF_ATTEMPTS for k in BACKOFF_KINDS]
    cols = ["inf" if math.isinf(p) else f"{p:.0f}" for p in BACKOFF_PATIENCE_MS]
    shape = (len(rows), len(cols))
    k, n, sim, closed = (np.zeros(shape) for _ in range(4))
    for i, (a, kind) in enumerate(rows):
        for j, p in enumerate(cols):
            name = f"backoff_{a}_{kind}_{p}"
            c = V[name]
            k[i, j], n[i, j] = c.k, c.n
            sim[i, j] = float(np.mean(c.attempts_per_request))
            sc = EXPERIMENTS[name].scenario
            closed[i, j] = storm_attempts(sc.retry, sc.timeout_ms)
    return {"rows": rows, "cols": cols, "k": k, "n": n, "sim": sim, "closed": closed}


def plot_backoff(bg: dict, sc: Scenario = L.SHORT_INCIDENT):
    """Left: seeds recovered per cell of the sweep; middle: attempts per user request (simulated,
    whole run; closed form below it); right: the storm's batch demand against the attempts per
    request with the thread's capacity, each cell of the sweep at its closed-form attempts."""
    import matplotlib as mpl

    fig, (a1, a2, a3) = plotting.new_figure(1, 3, height=3.4, layout="constrained",
                                           gridspec_kw={"width_ratios": [1, 1, 1.5]})
    fig.set_size_inches(11.0, 3.4)
    ylabels = [f"{a} attempts, {k}" for a, k in bg["rows"]]
    xlabels = [("∞" if c == "inf" else c) for c in bg["cols"]]
    cmap = mpl.colors.LinearSegmentedColormap.from_list("rg", [COLORS["stuck"], "#f7f7f7", COLORS["recovered"]])
    a1.imshow(bg["k"] / bg["n"], cmap=cmap, vmin=0, vmax=1, aspect="auto")
    a2.imshow(bg["sim"], cmap="Oranges", vmin=1, vmax=max(2.0, float(bg["sim"].max())) * 1.15, aspect="auto")
    for i in range(len(ylabels)):
        for j in range(len(xlabels)):
            a1.text(j, i, f"{bg['k'][i, j]:.0f}/{bg['n'][i, j]:.0f}", ha="center", va="center", fontsize=9)
            a2.text(j, i, f"{bg['sim'][i, j]:.2f}\n({bg['closed'][i, j]:.2f})", ha="center", va="center", fontsize=8)
    for ax, lab in ((a1, "seeds recovered"), (a2, "attempts per user request: simulated (closed form)")):
        ax.set_xticks(range(len(xlabels)), xlabels)
        ax.set_xlabel("user patience (ms)")
        ax.grid(False)
        ax.text(0.5, 1.02, lab, transform=ax.transAxes, ha="center", va="bottom", fontsize=9)
    a1.set_yticks(range(len(ylabels)), ylabels, fontsize=8)
    a2.set_yticks(range(len(ylabels)), [])
    a_max = max(6.3, float(np.nanmax(bg["closed"][np.isfinite(bg["closed"])])) + 1.3)
    xs = np.linspace(1.0, a_max, 120)
    a3.plot(xs, [storm_demand(sc, x) for x in xs], color=COLORS["retries"], lw=2,
            label="batcher_batch_rate(λ_peak × attempts)")
    mu = capacity.tps_ceiling(sc.batch_ms)
    a3.axhline(mu, color=COLORS["capacity"], ls="--", lw=1.5, label=f"capacity 1000/N = {mu:.1f}")
    ceil = attempts_ceiling(sc)
    a3.axvline(ceil, color=COLORS["capacity"], ls=":", lw=1.5, label=f"ceiling {ceil:.2f} attempts")
    cells: dict[float, list] = {}
    for i, row in enumerate(bg["rows"]):
        for j, col in enumerate(bg["cols"]):
            cells.setdefault(round(float(bg["closed"][i, j]), 3), []).append((row, col, bg["k"][i, j], bg["n"][i, j]))
    for q, (x, cs) in enumerate(sorted(cells.items())):
        k, n = sum(c[2] for c in cs), sum(c[3] for c in cs)
        color = COLORS["recovered"] if k == n else COLORS["stuck"] if k == 0 else "black"
        a3.plot([x], [storm_demand(sc, x)], "o", ms=7, color=color)
        # the first point sits just above the capacity line: label it above-left, the others below-right
        a3.annotate(f"{len(cs)} cell{'s' if len(cs) > 1 else ''}, {k:.0f}/{n:.0f} runs", (x, storm_demand(sc, x)),
                    xytext=(-8, 8) if q == 0 else (8, -12), textcoords="offset points",
                    ha="right" if q == 0 else "left", fontsize=7.5, color=color)
    a3.set_ylim(0, 1.1 * storm_demand(sc, a_max))
    plotting.decorate(a3, xlabel="attempts per user request in the storm", ylabel="merged batches/s", legend=False)
    a3.legend(loc="upper left", fontsize=7.5, bbox_to_anchor=(0.0, 1.0))
    return fig, (a1, a2, a3)


# --------------------------------------------------------------------------- restart zoom
def plot_restart_zoom(runs: dict, t0_s: float, t1_s: float, texts: dict | None = None, wave_s: float = 1.0):
    """The seconds around a restart, one column per run of ``runs`` (``{label: run}``, fine
    windows), all panels sharing the time axis and each row its y axis. Top: user requests,
    retries and goodput per second; the scale is set by the wave, the largest rate in the first
    ``wave_s`` after the restart, so a later storm may run off the top (:func:`restart_zoom_clipped`
    says whether it does). Bottom: the queue on a symmetric-log scale (linear below 1 batch) with
    the timeout threshold dashed. ``texts`` adds a line per column (e.g. the count over seeds)."""
    n = len(runs)
    fig, axes = plotting.new_figure(2, n, height=2.2, sharex=True, sharey="row", squeeze=False,
                                    layout="constrained", gridspec_kw={"height_ratios": [1.4, 1]})
    fig.set_size_inches(max(8.0, 4.6 * n), 4.8)
    top = restart_zoom_top(runs, wave_s)
    for k, (label, run) in enumerate(runs.items()):
        ax, qax = axes[0, k], axes[1, k]
        w = run.windows
        m = (w["t"] >= t0_s) & (w["t"] < t1_s)
        t = w["t"][m] + run.scenario.window_ms / 2e3
        for s in ("offered", "retries", "goodput"):
            ax.plot(t, w[s][m], color=COLORS[s], lw=2, label=plotting.LABELS[s])
        qax.plot(t, w["queue"][m], color=COLORS["queue"], lw=2, label=plotting.LABELS["queue"])
        qax.axhline(effective_timeout_queue(run.scenario), color=COLORS["queue"], ls="--", lw=1,
                    label="timeouts start: (M − T − N)/N")
        for a in (ax, qax):
            a.axvline(run.scenario.restart_at_ms / 1e3, color=COLORS["intervention"], lw=4, zorder=0,
                      label="restart" if a is ax else None)
        ax.set_ylim(0, top)
        qax.set_yscale("symlog", linthresh=1.0)
        qax.set_ylim(0, 1.5 * max(float(np.max(r.windows["queue"])) for r in runs.values()))
        qax.set_xlim(t0_s, t1_s)
        qax.set_xlabel("time (s)")
        ax.text(0.98, 0.97, label + ("\n" + texts[label] if texts and label in texts else ""), ha="right",
                transform=ax.transAxes, va="top", fontsize=8, bbox=dict(facecolor="white", alpha=0.85, lw=0))
    axes[0, 0].set_ylabel("per second")
    axes[1, 0].set_ylabel("queue (batches)")
    h1, l1 = axes[0, 0].get_legend_handles_labels()
    h2, l2 = axes[1, 0].get_legend_handles_labels()
    fig.legend(h1 + h2, l1 + l2, loc="outside lower center", ncols=6, fontsize=8)
    return fig, axes


def restart_zoom_top(runs: dict, wave_s: float = 1.0) -> float:
    """The top of :func:`plot_restart_zoom`'s rate panels: 1.3 × the largest rate of any run in
    the first ``wave_s`` seconds after its restart."""
    top = 1.0
    for run in runs.values():
        w = run.windows
        r0 = run.scenario.restart_at_ms / 1e3
        m = (w["t"] >= r0) & (w["t"] < r0 + wave_s)
        top = max(top, *(float(np.max(w[s][m])) for s in ("offered", "retries", "goodput")))
    return 1.3 * top


def restart_zoom_clipped(runs: dict, t0_s: float, t1_s: float, wave_s: float = 1.0) -> dict:
    """Per run label: the first time (s) in [t0_s, t1_s) after the restart at which a rate of
    :func:`plot_restart_zoom` runs off the top of its panel, or None."""
    top = restart_zoom_top(runs, wave_s)
    out = {}
    for label, run in runs.items():
        w = run.windows
        r0 = run.scenario.restart_at_ms / 1e3
        m = (w["t"] >= max(t0_s, r0)) & (w["t"] < t1_s)
        over = np.zeros(int(m.sum()), dtype=bool)
        for s in ("offered", "retries", "goodput"):
            over |= w[s][m] > top
        out[label] = float(w["t"][m][over][0]) if over.any() else None
    return out


# --------------------------------------------------------------------------- phase diagram by load
def plot_phase_load(grid, xs: Sequence[float], loads: Sequence[float], *, duration_s: float, after_s: float,
                    queue_batches: float, sc: Scenario = SEED_INCIDENT, ax=None):
    """Recovered/stuck cells (one run each) over C's batch time × base user rate, with the closed
    forms in base-rate units: the bistable band's lower and upper edges, the load below which a
    storm with ``queue_batches`` waiting is back under the threshold early enough for a passing 5-s
    block within ``after_s`` (:func:`drain_edge_rate` with ``after_s − BLOCK_S``), and
    the contour where a ``duration_s`` trigger just takes the queue to the two-owner threshold."""
    peak = sc.peak.factor if sc.peak is not None else 1.0
    ax = plotting.phase_diagram(grid, xs, loads, ax=ax, xlabel="C's batch time (ms)",
                                ylabel="base load (user requests/s, +20% at the peak)")
    ax.get_legend().remove()
    lo, hi = L.band_user_rates(sc)
    attempts = closed_forms(sc)["attempts_per_request_stuck"]
    drain = drain_edge_rate(sc, queue_batches, after_s - BLOCK_S, attempts)
    x_f = np.linspace(min(xs) - 2.0, max(xs) + 3.0, 200)
    dy = np.diff(loads)
    y_lo, y_hi = min(loads) - 0.5 * dy[0], max(loads) + 0.5 * dy[-1]
    for y, ls, lab in ((hi, "-.", "band's upper edge: the users alone fill the thread"),
                       (lo, ":", "band's lower edge: below it a storm dies out"),
                       (drain, "-", f"below: a full queue ({queue_batches:g} batches) dies out in time")):
        if y_lo <= y / peak <= y_hi:  # only lines that are drawn go into the legend
            ax.axhline(y / peak, color="black", lw=1.5 if ls != "-" else 1.0, ls=ls, label=lab)
    yy = np.linspace(min(loads), max(loads), 120)
    zz = np.array([L.trigger_boundary_s(x_f, sc, user_rate_per_s=lam) for lam in yy])
    ax.contour(x_f, yy, np.where(np.isfinite(zz), zz, 1e9), levels=[duration_s], colors="black",
               linestyles="--", linewidths=2)
    ax.plot([], [], color="black", ls="--", lw=2, label=f"right of it a {duration_s:g}-s trigger reaches the threshold")
    ax.set_ylim(y_lo, y_hi)
    dx = np.diff(xs)
    ax.set_xlim(min(xs) - 0.5 * dx[0], max(xs) + 0.5 * dx[-1])
    from matplotlib.patches import Patch

    handles = [Patch(color=COLORS["recovered"], label=f"recovered within {after_s:g} s of the trigger's end (one seed)"),
               Patch(color=COLORS["stuck"], label="not recovered by then (one seed)")]
    h, lab = ax.get_legend_handles_labels()
    ax.legend(handles + h, [x.get_label() for x in handles] + lab, loc="upper left", bbox_to_anchor=(1.02, 1.0),
              fontsize=8)
    return ax
