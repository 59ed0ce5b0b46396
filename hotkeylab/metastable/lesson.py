"""Helpers for notebook 04 · Metastable retry storms: the story's figures, the seed's argument as
numbers, the mitigations compared, phase-diagram cells, the hysteresis ramp and the what-if widget.

Everything here is built on the package's public API (:func:`~hotkeylab.metastable.simulate`,
:class:`~hotkeylab.metastable.Scenario`, :func:`~hotkeylab.metastable.closed_forms`) and on
:mod:`hotkeylab.capacity`, :mod:`hotkeylab.plotting` and :mod:`hotkeylab.sweep`. Times are ms in
arguments (``*_ms``) and seconds on plot axes and where a name ends in ``_s``.

>>> from hotkeylab.metastable import lesson
>>> run = simulate(lesson.SHORT_INCIDENT)                   # doctest: +SKIP
>>> lesson.story(run)                                       # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from .. import capacity, plotting
from ..plotting import COLORS
from ..validate import check_choice, check_int, check_number
from . import (
    SEED_INCIDENT,
    SEED_RETRY,
    AdaptiveThrottle,
    CoDel,
    GrpcThrottle,
    PercentBudget,
    RetryPolicy,
    Scenario,
    Window,
    closed_forms,
    effective_timeout_queue,
    figures,
    simulate,
)

__all__ = [
    "SHORT_INCIDENT",
    "FULL_QUEUE_600",
    "drain_from_bound",
    "queue_at",
    "load_verdicts",
    "ACT_MS",
    "SAFETY",
    "Mitigation",
    "MITIGATIONS",
    "mitigate",
    "windows_of",
    "story",
    "story_panels",
    "onset",
    "slope",
    "first_time",
    "first_below",
    "mean_between",
    "timeout_share_vs_queue",
    "band_user_rates",
    "drain_time_s",
    "restart_wave",
    "restart_limit_rate",
    "run_mitigation",
    "compare",
    "comparison_rows",
    "comparison_markdown",
    "small_multiples",
    "cell_scenario",
    "phase_cell",
    "trigger_boundary_s",
    "phase_figure",
    "hysteresis_point",
    "hysteresis",
    "plot_hysteresis",
    "WhatIf",
    "WhatIfResult",
    "whatif_controls",
    "RETRY_CHOICES",
]

# --------------------------------------------------------------------------- the short clock
#: The seed's incident on a compressed clock, for comparisons and sweeps: the month-start peak
#: (+20%) from 5 s, the second owner in datacentre C from 15 s to 45 s (isolation at 45 s), the
#: horizon at 120 s. Everything else (600 requests/s, batcher 20 rows / 20 ms, N = 16 / 27 ms,
#: M = 200 ms, the seed's retries) is :data:`~hotkeylab.metastable.SEED_INCIDENT`'s.
SHORT_INCIDENT = replace(
    SEED_INCIDENT,
    peak=Window(5_000.0, math.inf, 1.2),
    second_owner=Window(15_000.0, 45_000.0),
    horizon_ms=120_000.0,
)
#: When operators act on the short clock (15 s after isolation), and for how long.
ACT_MS = 60_000.0
ACT_FOR_MS = 30_000.0
#: Safety factor for ``capacity.safe_queue_limit`` in the bounded-queue mitigation.
SAFETY = 0.5
#: The seed's measure 2 as the mitigation table runs it: every retry delay ×10 for 30 s.
STRETCH_FACTOR = 10.0


# --------------------------------------------------------------------------- mitigations
@dataclass(frozen=True)
class Mitigation:
    """A fix applied to a scenario: ``apply(scenario) -> scenario``.

    ``kind`` is ``"intervention"`` (an operator acts at :data:`ACT_MS`, after isolation) or
    ``"protection"`` (always on, before the trigger). ``source`` names where the idea comes from.
    """

    label: str
    kind: str
    source: str
    apply: Callable[[Scenario], Scenario]


def _backoff(jitter: str, patience_ms: float = math.inf) -> RetryPolicy:
    return RetryPolicy(max_attempts=3, base_ms=100.0, multiplier=2.0, cap_ms=1_000.0, jitter=jitter,
                       patience_ms=patience_ms)


def _safe_limit(sc: Scenario) -> int:
    return capacity.safe_queue_limit(sc.timeout_ms, sc.batch_ms, SAFETY)


#: Every mitigation the notebook compares, in the order of its table. Names are the keys.
MITIGATIONS: dict[str, Mitigation] = {
    "none": Mitigation("none (the incident: isolation only)", "—", "seed 000", lambda sc: sc),
    "degrade": Mitigation(
        "degrade upstream for 30 s", "intervention", "seed 000 (what the team did)",
        lambda sc: replace(sc, degrade=Window(ACT_MS, ACT_MS + ACT_FOR_MS, 0.0))),
    "restart": Mitigation(
        "restart the server (queue cleared)", "intervention", "seed 000 (措施 1)",
        lambda sc: replace(sc, restart_at_ms=ACT_MS)),
    "stretch": Mitigation(
        f"retry interval ×{STRETCH_FACTOR:g} for 30 s", "intervention", "seed 000 (措施 2: 临时改变重试时间间隔)",
        lambda sc: replace(sc, stretch_retries=Window(ACT_MS, ACT_MS + ACT_FOR_MS, STRETCH_FACTOR))),
    "suppress": Mitigation(
        "switch retries off for 30 s", "intervention", "— (the limit of measure 2)",
        lambda sc: replace(sc, suppress_retries=Window(ACT_MS, ACT_MS + ACT_FOR_MS))),
    "no_retries": Mitigation(
        "no retries", "protection", "—",
        lambda sc: replace(sc, retry=RetryPolicy(max_attempts=1))),
    "backoff_none": Mitigation(
        "3 attempts, exponential backoff, no jitter", "protection", "Brooker 2015",
        lambda sc: replace(sc, retry=_backoff("none"))),
    "backoff_full": Mitigation(
        "3 attempts, exponential backoff, full jitter", "protection", "Brooker 2015",
        lambda sc: replace(sc, retry=_backoff("full"))),
    "backoff_equal": Mitigation(
        "3 attempts, exponential backoff, equal jitter", "protection", "Brooker 2015",
        lambda sc: replace(sc, retry=_backoff("equal"))),
    "backoff_decorrelated": Mitigation(
        "3 attempts, decorrelated jitter", "protection", "Brooker 2015",
        lambda sc: replace(sc, retry=_backoff("decorrelated"))),
    "queue_limit": Mitigation(
        f"bounded queue at the safe limit (safety {SAFETY:g})", "protection", "seed 000 (事前防范)",
        lambda sc: replace(sc, queue_limit=_safe_limit(sc))),
    "deadline_drop": Mitigation(
        "server drops requests past their deadline", "protection", "—",
        lambda sc: replace(sc, deadline_drop=True)),
    "adaptive_lifo": Mitigation(
        "adaptive LIFO", "protection", "Maurer 2015",
        lambda sc: replace(sc, discipline="adaptive_lifo")),
    "codel": Mitigation(
        "CoDel (target 5 ms, interval 100 ms)", "protection", "Maurer 2015",
        lambda sc: replace(sc, codel=CoDel(target_ms=5.0, interval_ms=100.0))),
    "lifo_codel": Mitigation(
        "adaptive LIFO + CoDel", "protection", "Maurer 2015",
        lambda sc: replace(sc, discipline="adaptive_lifo", codel=CoDel(target_ms=5.0, interval_ms=100.0))),
    "grpc": Mitigation(
        "gRPC retry throttling (10 tokens, ratio 0.1)", "protection", "gRFC A6",
        lambda sc: replace(sc, retry=replace(sc.retry, budget=GrpcThrottle(10.0, 0.1)))),
    "percent": Mitigation(
        "retry budget 20% + 10/s over 10 s", "protection", "Finagle RetryBudget",
        lambda sc: replace(sc, retry=replace(sc.retry, budget=PercentBudget(0.2, 10.0, 10_000.0)))),
    "leader": Mitigation(
        "leader/follower group commit (no 20 ms timer)", "protection", "MySQL binlog group commit",
        lambda sc: replace(sc, batcher="leader")),
    "adaptive_throttle": Mitigation(
        "client-side adaptive throttling (K = 2, 2 min)", "protection", "Google SRE ch. 21",
        lambda sc: replace(sc, client_throttle=AdaptiveThrottle(k=2.0, window_ms=120_000.0))),
}


def mitigate(name: str, scenario: Scenario = SHORT_INCIDENT) -> Scenario:
    """``scenario`` with mitigation ``name`` (a key of :data:`MITIGATIONS`) applied."""
    check_choice("mitigation", name, tuple(MITIGATIONS))
    return MITIGATIONS[name].apply(scenario)


# --------------------------------------------------------------------------- reading a run
def windows_of(run) -> dict:
    """The windowed arrays of a run (or a mapping that already is one)."""
    return run.windows if hasattr(run, "windows") else run


def _mask(w, t0_s: float, t1_s: float) -> np.ndarray:
    t = np.asarray(w["t"])
    return (t >= t0_s) & (t < t1_s)


def slope(run, name: str, t0_s: float, t1_s: float) -> float:
    """Least-squares slope (per second) of series ``name`` over windows starting in [t0_s, t1_s)."""
    w = windows_of(run)
    m = _mask(w, t0_s, t1_s)
    if m.sum() < 2:
        raise ValueError(f"t1_s must leave at least two windows after t0_s={t0_s:g}, got t1_s={t1_s!r}")
    t = np.asarray(w["t"])[m]
    return float(np.polyfit(t, np.asarray(w[name])[m], 1)[0])


def mean_between(run, name: str, t0_s: float, t1_s: float) -> float:
    """Mean of series ``name`` over windows starting in [t0_s, t1_s)."""
    w = windows_of(run)
    m = _mask(w, t0_s, t1_s)
    if not m.any():
        raise ValueError(f"t1_s must leave at least one window after t0_s={t0_s:g}, got t1_s={t1_s!r}")
    return float(np.mean(np.asarray(w[name])[m]))


def first_time(run, name: str, above: float, after_s: float = 0.0) -> float | None:
    """Start (s) of the first window at or after ``after_s`` where ``name`` exceeds ``above``."""
    w = windows_of(run)
    t = np.asarray(w["t"])
    hit = np.nonzero((t >= after_s) & (np.asarray(w[name]) > above))[0]
    return float(t[hit[0]]) if len(hit) else None


def first_below(run, name: str, below: float, after_s: float = 0.0) -> float | None:
    """Start (s) of the first window at or after ``after_s`` where ``name`` is below ``below``."""
    w = windows_of(run)
    t = np.asarray(w["t"])
    hit = np.nonzero((t >= after_s) & (np.asarray(w[name]) < below))[0]
    return float(t[hit[0]]) if len(hit) else None


def timeout_share_vs_queue(run, t0_s: float = 0.0, t1_s: float = math.inf) -> tuple[np.ndarray, np.ndarray]:
    """Per window in [t0_s, t1_s): (mean queue in batches, share of attempts that timed out)."""
    w = windows_of(run)
    m = _mask(w, t0_s, t1_s) & (np.asarray(w["attempts"]) > 0)
    q = np.asarray(w["queue"])[m]
    share = np.asarray(w["timeouts"])[m] / np.asarray(w["attempts"])[m]
    return q, np.minimum(share, 1.0)


# --------------------------------------------------------------------------- closed forms
def _invert_batch_rate(batches_per_s: float, sc: Scenario) -> float:
    """User requests/s whose batcher makes ``batches_per_s`` merged batches/s (bisection; the
    batch rate grows with the request rate)."""
    lo, hi = 1e-6, 1e6
    f = lambda lam: capacity.batcher_batch_rate(lam, sc.batch_max_rows, sc.batch_max_wait_ms)  # noqa: E731
    if f(hi) < batches_per_s:
        return math.inf
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if f(mid) < batches_per_s:
            lo = mid
        else:
            hi = mid
        if hi / lo < 1 + 1e-12:
            break
    return 0.5 * (lo + hi)


def band_user_rates(sc: Scenario = SEED_INCIDENT, retries: float | None = None) -> tuple[float, float]:
    """The bistable band in user requests/s for the hot-key thread with one owner.

    Upper edge: the user rate whose batches alone fill the thread (``batcher_batch_rate(λ) = μ``).
    Lower edge: the user rate at which, once every attempt times out and each request is sent
    ``R + 1`` times, the batches still fill it (``batcher_batch_rate((R + 1) λ) = μ``). ``retries``
    defaults to the scenario's retries in the storm (``closed_forms``' attempts − 1).
    """
    mu = capacity.tps_ceiling(sc.batch_ms)
    if retries is None:
        retries = closed_forms(sc)["attempts_per_request_stuck"] - 1
    r = check_number("retries", retries, low=0.0, allow_inf=True)
    hi = _invert_batch_rate(mu, sc)
    lo = 0.0 if math.isinf(r) else hi / (r + 1.0)
    return lo, hi


def drain_time_s(queue_batches: float, user_rate_per_s: float, sc: Scenario = SEED_INCIDENT) -> float:
    """Seconds to empty ``queue_batches`` while users keep sending ``user_rate_per_s`` (no retries):
    ``Q / (μ − batches from users)``; inf if the users alone fill the thread."""
    q = check_number("queue_batches", queue_batches, low=0.0)
    lam = check_number("user_rate_per_s", user_rate_per_s, low=0.0)
    growth = capacity.queue_growth_rate(
        capacity.batcher_batch_rate(lam, sc.batch_max_rows, sc.batch_max_wait_ms), 0.0,
        capacity.tps_ceiling(sc.batch_ms))
    return math.inf if growth >= 0 else q / -growth


#: The check behind notebook 04's drain estimate from the bound: the normal load (600 requests/s,
#: one owner) after a storm has filled the seed's bound. A slow database (every merged commit
#: 4 × N) from 2 s to 10 s fills the queue to QueueMaxSize; from 10 s the thread is back at
#: full speed and nothing else happens until the horizon. The horizon, 220 s after the database
#: recovers, is 1.27 × the fluid model's drain from the bound (173 s) and 13 s past the slowest of
#: seeds 0–19 (207 s); a run is cut there, since the queue is empty and nothing happens after it.
#: :func:`drain_from_bound` reports the margin and the tests check that no seed is cut off before it
#: drains. (Runs are prefixes of longer ones: the same seed gives the same windows up to any horizon.)
FULL_QUEUE_600 = replace(
    SEED_INCIDENT,
    peak=None,
    second_owner=None,
    slow_db=Window(2_000.0, 10_000.0, 4.0),
    warmup_ms=1_000.0,
    horizon_ms=230_000.0,
)


def drain_from_bound(seeds: Iterable[int] = range(20), sc: Scenario = FULL_QUEUE_600) -> dict:
    """Run ``sc`` (default :data:`FULL_QUEUE_600`) for each seed on the fast engine and read, from
    the end of its trigger: the queue then, whether the queue empties before the horizon and when
    (the first 1-s window whose mean queue is below half a batch), and the attempts rejected at
    the bound afterwards. Returns numpy arrays keyed ``queue_at_end``, ``drained``, ``drain_s``
    (nan where it never empties), ``rejected_after``, ``last_rejected_s`` (the end of
    the last window after the trigger with a rejection, 0 if none), ``seeds``, and ``horizon_after_s`` (the
    seconds from the trigger's end to the horizon: the longest drain the run could see)."""
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must list at least one seed, got []")
    end_s = sc.trigger_window[1] / 1e3 if sc.trigger_window else 0.0
    out = {"queue_at_end": [], "drained": [], "drain_s": [], "rejected_after": [], "last_rejected_s": []}
    for s_ in seeds:
        run = simulate(sc, engine="fast", seed=s_)
        w = run.windows
        k = int(round(end_s * 1000.0 / sc.window_ms))
        q = np.asarray(w["queue"], float)
        out["queue_at_end"].append(float(q[k - 1]) if k > 0 else float(q[0]))
        below = np.nonzero(q[k:] < 0.5)[0]
        out["drained"].append(bool(len(below)))
        out["drain_s"].append(float(below[0] * sc.window_ms / 1e3) if len(below) else math.nan)
        out["rejected_after"].append(float(np.sum(w["rejected"][k:])))
        rej = np.nonzero(np.asarray(w["rejected"][k:]) > 0)[0]
        out["last_rejected_s"].append(float((rej[-1] + 1) * sc.window_ms / 1e3) if len(rej) else 0.0)
    res = {key: np.asarray(v) for key, v in out.items()}
    res["seeds"] = np.asarray(seeds)
    res["horizon_after_s"] = sc.horizon_ms / 1e3 - end_s
    return res


def queue_at(sc: Scenario, t_s: float, seeds: Iterable[int] = range(3)) -> np.ndarray:
    """The mean queue (batches) in the 1-s window ending at ``t_s`` for each seed, each run
    simulated only up to ``t_s``: what follows cannot change what came before (a run is a prefix of
    any longer one), so this equals the same window of the full run, at a fraction of the cost."""
    t = check_number("t_s", t_s, low=sc.window_ms / 1e3, high=sc.horizon_ms / 1e3)
    k = int(round(t * 1000.0 / sc.window_ms))
    short = replace(sc, horizon_ms=k * sc.window_ms)
    return np.asarray([float(simulate(short, seed=s_).windows["queue"][k - 1]) for s_ in seeds])


def load_verdicts() -> dict:
    """The committed verdicts over seeds (:func:`.verdicts.load`); raises RuntimeError if any row
    is stale, i.e. the model or a preset changed since they were computed (run ``make verdicts``)."""
    from . import verdicts

    v = verdicts.load()
    stale = sorted(name for name, c in v.items() if c.stale)
    if stale:
        raise RuntimeError(f"verdicts_04.csv is stale for {stale[:5]}…: run `make verdicts`")
    return v


def restart_wave(sc: Scenario, user_rate_per_s: float | None = None) -> dict:
    """What a restart in the middle of a storm leaves behind, by the seed's arithmetic.

    A restart empties the queue but not the clients. In the storm every attempt times out, so a
    user retries every ``M + d`` ms (``d`` the mean retry delay) while within its patience P: it
    makes ``R = floor(P / (M + d))`` retries. At the restart each live request has one attempt in
    flight, which the restart destroys; all but the last attempts come back as retries within
    ``M + d``: about ``λ · R · (M + d)`` rows. Together with the ``λ · (M + d)`` new rows of that
    span, the batches made (``batcher_batch_rate``) minus what the thread commits is the backlog
    the wave leaves; above the effective threshold ``(M − T − N) / N`` the new requests time out
    again and the storm restarts. A rough estimate (the wave is spread, not a block): it names the
    mechanism and the order of magnitude, the simulation decides.
    """
    lam = sc.user_rate_per_s * (sc.peak.factor if sc.peak is not None else 1.0)
    if user_rate_per_s is not None:
        lam = check_number("user_rate_per_s", user_rate_per_s, low=0.0)
    pol = sc.retry
    d = pol.base_ms / 2.0 if pol.jitter == "full" else pol.base_ms
    span_ms = sc.timeout_ms + d
    r = 0 if pol.max_attempts <= 1 else pol.retries
    if not math.isinf(pol.patience_ms):
        r = min(r, math.floor(pol.patience_ms / span_ms))
    if math.isinf(r):
        r_eff = math.inf
        wave_rows = math.inf
    else:
        r_eff = r
        wave_rows = lam * r * span_ms / 1000.0
    new_rows = lam * span_ms / 1000.0
    mu = capacity.tps_ceiling(sc.batch_ms)
    if math.isinf(wave_rows):
        backlog = math.inf
    else:
        rate = (wave_rows + new_rows) / (span_ms / 1000.0)
        batches = capacity.batcher_batch_rate(rate, sc.batch_max_rows, sc.batch_max_wait_ms) * span_ms / 1000.0
        backlog = max(0.0, batches - mu * span_ms / 1000.0)
    threshold = effective_timeout_queue(sc)
    return {
        "user_rate_per_s": lam,
        "retries_per_request": r_eff,
        "span_ms": span_ms,
        "wave_rows": wave_rows,
        "new_rows": new_rows,
        "backlog_batches": backlog,
        "threshold_batches": threshold,
        "restart_works": backlog < threshold,
    }


def restart_limit_rate(sc: Scenario) -> float:
    """The user rate (requests/s) above which :func:`restart_wave` says a restart rebuilds the
    storm for ``sc``'s retry policy (bisection; inf if never below 1e5 requests/s)."""
    def bad(lam):
        return not restart_wave(sc, lam)["restart_works"]

    lo, hi = 1.0, 1e5
    if not bad(hi):
        return math.inf
    if bad(lo):
        return lo
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if bad(mid):
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


# --------------------------------------------------------------------------- figures
def _shades(sc: Scenario, horizon_s: float) -> tuple[list, list]:
    """(trigger windows, intervention windows) as ``(start_s, end_s, label)`` within the horizon."""
    trig, inter = [], []
    if sc.second_owner is not None:
        trig.append((sc.second_owner.start_ms / 1e3, min(sc.second_owner.end_ms / 1e3, horizon_s),
                     "second owner (trigger)"))
    if sc.slow_db is not None:
        trig.append((sc.slow_db.start_ms / 1e3, min(sc.slow_db.end_ms / 1e3, horizon_s), "slow database (trigger)"))
    if sc.degrade is not None:
        inter.append((sc.degrade.start_ms / 1e3, min(sc.degrade.end_ms / 1e3, horizon_s), "degraded upstream"))
    if sc.suppress_retries is not None:
        inter.append((sc.suppress_retries.start_ms / 1e3, min(sc.suppress_retries.end_ms / 1e3, horizon_s),
                      "retries suppressed"))
    return trig, inter


def _mark_events(ax, sc: Scenario, horizon_s: float, *, text: bool = True) -> None:
    if sc.second_owner is not None and sc.second_owner.end_ms / 1e3 < horizon_s:
        x = sc.second_owner.end_ms / 1e3
        ax.axvline(x, color=COLORS["capacity"], lw=1, ls=":", label="isolation")
        if text:
            ax.annotate("isolation", (x, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -10),
                        textcoords="offset points", fontsize=8, color=COLORS["capacity"])
    if sc.restart_at_ms is not None and sc.restart_at_ms / 1e3 < horizon_s:
        x = sc.restart_at_ms / 1e3
        ax.axvline(x, color=COLORS["intervention"], lw=4, ls="-", label="restart")
        if text:
            ax.annotate("restart", (x, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -20),
                        textcoords="offset points", fontsize=8, color="#3a6ea5")
    if sc.peak is not None and 0 < sc.peak.start_ms / 1e3 < horizon_s and text:
        x = sc.peak.start_ms / 1e3
        ax.annotate(f"peak ×{sc.peak.factor:g} →", (x, 0.0), xycoords=("data", "axes fraction"), xytext=(2, 4),
                    textcoords="offset points", fontsize=8, color=COLORS["offered"])


STORY_SERIES = ("offered", "retries", "goodput", "timeouts")


def story(run, *, ax=None, series: Sequence[str] = STORY_SERIES, queue: bool = True, legend=True,
          text: bool = True, ylim: float | None = None):
    """A run's timeline: user requests, retries, goodput and timeouts per second, the queue on a
    right axis, the trigger shaded grey, interventions shaded blue, isolation and restart marked.
    ``legend``: True (everything, outside right), ``"extra"`` (only what the story adds: shaded
    interventions) or False."""
    sc = run.scenario
    w = windows_of(run)
    horizon_s = float(w["t"][-1] + sc.window_ms / 1e3)
    trig, inter = _shades(sc, horizon_s)
    ax = plotting.timeline(run, series, ax=ax, queue=queue)
    plotting.shade(ax, trig, kind="trigger")
    plotting.shade(ax, inter, kind="intervention")
    _mark_events(ax, sc, horizon_s, text=text)
    if ylim is not None:
        ax.set_ylim(0, ylim)
    if legend:
        handles, labels = ax.get_legend_handles_labels()
        if queue:
            h2, l2 = ax.queue_ax.get_legend_handles_labels()
            handles, labels = handles + h2, labels + l2
        if legend == "extra":
            keep = {w[2] for w in inter} | ({"restart"} if sc.restart_at_ms is not None else set())
            pairs = [(h, lab) for h, lab in zip(handles, labels, strict=True) if lab in keep]
            handles, labels = [p[0] for p in pairs], [p[1] for p in pairs]
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.15, 1.0), fontsize=8)
    elif ax.get_legend() is not None:
        ax.get_legend().remove()
    return ax


def story_panels(run, *, height: float = 2.6):
    """Two panels sharing time: the story (:func:`story`) above; below, merged commits per second
    against the closed forms: capacity with one owner (1000 / N), with two owners taking turns,
    and the batch demand of the users at the peak and of the storm (every request sent R + 1
    times). Returns ``(fig, (top, bottom))``."""
    sc = run.scenario
    cf = closed_forms(sc)
    fig, (top, bot) = plotting.new_figure(2, 1, height=height, sharex=True, layout="constrained")
    story(run, ax=top)
    top.set_xlabel("")
    w = windows_of(run)
    bot.plot(w["t"], w["batches"], color=COLORS["goodput"], alpha=0.6, lw=2, label="merged commits/s (simulated)")
    lines = [
        (cf["capacity_one_owner"], "-", f"capacity, one owner: 1000/{sc.batch_ms:g} = {cf['capacity_one_owner']:.1f}"),
        (cf["capacity_two_owners"], "--",
         f"capacity, two owners ({sc.batch_ms:g}/{sc.cross_batch_ms:g} ms): {cf['capacity_two_owners']:.1f}"),
    ]
    for y, ls, lab in lines:
        bot.axhline(y, color=COLORS["capacity"], ls=ls, lw=1.5, label=lab)
    bot.axhline(cf["demand_peak"], color=COLORS["offered"], ls=":", lw=1.5,
                label=f"user batches at the peak: {cf['demand_peak']:.1f}")
    bot.axhline(cf["demand_stuck"], color=COLORS["retries"], ls=":", lw=1.5,
                label=f"user + retry batches in the storm: {cf['demand_stuck']:.1f}")
    horizon_s = float(w["t"][-1] + sc.window_ms / 1e3)
    trig, inter = _shades(sc, horizon_s)
    plotting.shade(bot, trig, kind="trigger")
    plotting.shade(bot, inter, kind="intervention")
    _mark_events(bot, sc, horizon_s, text=False)
    bot.set_ylim(0, 1.25 * max(cf["demand_stuck"], cf["capacity_one_owner"]))
    plotting.decorate(bot, xlabel="time (s)", ylabel="batches/s", legend=False)
    bot.legend(loc="upper left", bbox_to_anchor=(1.15, 1.0), fontsize=8)
    return fig, (top, bot)


def onset(run, t0_s: float, t1_s: float, *, ax=None):
    """Zoom on the moment the queue passes the timeout threshold: the queue (batches, left) with
    M/N and the effective thresholds ``(M − T − N)/N`` for one and two owners, and goodput and
    timeouts per second (right)."""
    sc = run.scenario
    w = windows_of(run)
    m = _mask(w, t0_s, t1_s)
    t = np.asarray(w["t"])[m] + sc.window_ms / 2e3  # window centres
    if ax is None:
        _, ax = plotting.new_figure(layout="constrained")
    ax.plot(t, np.asarray(w["queue"])[m], "o-", color=COLORS["queue"], label="queue (batches, mean per s)")
    cf = closed_forms(sc)
    for y, ls, lab in (
        (cf["critical_queue"], "-", f"M/N = {sc.timeout_ms:g}/{sc.batch_ms:g} = {cf['critical_queue']:.1f}"),
        (cf["effective_queue_one_owner"], "--", f"(M − T − N)/N, one owner = {cf['effective_queue_one_owner']:.2f}"),
        (cf["effective_queue_two_owners"], ":",
         f"(M − T − N̄)/N̄, two owners = {cf['effective_queue_two_owners']:.2f}"),
    ):
        ax.axhline(y, color=COLORS["capacity"], ls=ls, lw=1.5, label=lab)
    qmax = 3.0 * cf["critical_queue"]
    ax.set_ylim(0, qmax)
    rax = ax.twinx()
    for s in ("goodput", "timeouts"):
        rax.plot(t, np.asarray(w[s])[m], color=COLORS[s], lw=2, label=plotting.LABELS[s])
    rax.set_ylim(bottom=0)
    rax.set_ylabel("requests/s")
    rax.grid(False)
    rax.spines["right"].set_visible(True)
    plotting.decorate(ax, xlabel="time (s)", ylabel="queue (batches)", legend=False)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = rax.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc="upper left", bbox_to_anchor=(1.1, 1.0), fontsize=8)
    ax.rate_ax = rax
    return ax


# --------------------------------------------------------------------------- mitigations compared
def run_mitigation(name: str, scenario: Scenario = SHORT_INCIDENT, seed: int = 0):
    """One run of ``scenario`` with mitigation ``name`` on the fast engine (module-level, so a
    process pool can call it)."""
    return simulate(mitigate(name, scenario), engine="fast", seed=seed)


def compare(names: Iterable[str], scenario: Scenario = SHORT_INCIDENT, seed: int = 0, executor=None) -> dict:
    """Run each mitigation in ``names`` on ``scenario`` with ``seed``: ``{name: run}``, through
    :func:`hotkeylab.sweep.run` (``executor=None``: a process pool; ``"serial"``: in-process)."""
    from ..sweep import run as sweep_run

    names = list(names)
    for n in names:
        check_choice("mitigation", n, tuple(MITIGATIONS))
    params = [{"name": n, "scenario": scenario, "seed": seed} for n in names]
    runs = sweep_run(run_mitigation, params, executor=executor, progress=False)
    return dict(zip(names, runs, strict=True))


def comparison_rows(runs: dict, labels: dict | None = None) -> list[dict]:
    """One row per run: label, kind, recovered, time to recover (s after the trigger ended),
    share of user requests served in time, goodput lost (user requests), wasted share of the
    commits, retries sent, attempts rejected."""
    rows = []
    for name, run in runs.items():
        s = run.summary
        mit = MITIGATIONS.get(name)
        rows.append({
            "name": name,
            "label": (labels or {}).get(name, mit.label if mit else name),
            "kind": mit.kind if mit else "",
            "source": mit.source if mit else "",
            "recovered": bool(s["recovered"]),
            "recovery_time_s": s["recovery_time_s"],
            "served_share": float(s["served_share"]),
            "goodput_lost": int(s["goodput_lost"]),
            "wasted_share": float(s["wasted_share"]),
            "wasted_rows": int(s["wasted_rows"]),
            "retries": int(s["retries"]),
            "rejected": int(s["rejected"]),
            "max_queue": float(s["max_queue"]),
        })
    return rows


def comparison_markdown(rows: list[dict], *, source: bool = True) -> str:
    """A markdown table of :func:`comparison_rows`."""
    head = ["mitigation", "kind", "recovered?", "time to recover (s)", "served in time",
            "goodput lost (requests)", "wasted commits", "retries", "rejected", "max queue (batches)"]
    if source:
        head.append("source")
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        rt = "—" if r["recovery_time_s"] is None else f"{r['recovery_time_s']:.0f}"
        cells = [r["label"], r["kind"], "yes" if r["recovered"] else "**no**", rt,
                 f"{100 * r['served_share']:.1f}%", f"{r['goodput_lost']:,}", f"{100 * r['wasted_share']:.1f}%",
                 f"{r['retries']:,}", f"{r['rejected']:,}", f"{r['max_queue']:.0f}"]
        if source:
            cells.append(r["source"])
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def small_multiples(runs: dict, *, ncols: int = 3, labels: dict | None = None, height: float = 1.9,
                    series: Sequence[str] = ("offered", "retries", "goodput", "timeouts", "rejected")):
    """One small timeline per run, requests/s on a shared scale (left), the queue on each panel's
    own scale (right). The label in each panel says what was run and whether it recovered."""
    n = len(runs)
    ncols = check_int("ncols", ncols, low=1)
    nrows = math.ceil(n / ncols)
    fig, axes = plotting.new_figure(nrows, ncols, height=height, squeeze=False, sharex=True,
                                    layout="constrained")
    fig.set_size_inches(max(8.0, 3.3 * ncols), height * nrows + 0.5)
    ymax = 1.0
    for run in runs.values():
        w = windows_of(run)
        ymax = max(ymax, *(float(np.max(w[s])) for s in series))
    flat = list(axes.flat)
    for k, (ax, (name, run)) in enumerate(zip(flat, runs.items(), strict=False)):
        story(run, ax=ax, series=series, legend=False, text=False, ylim=1.45 * ymax)
        ax.queue_ax.set_ylim(0, 1.45 * max(1.0, float(np.max(windows_of(run)["queue"]))))
        mit = MITIGATIONS.get(name)
        lab = (labels or {}).get(name, mit.label if mit else name)
        ok = "recovered" if run.recovered else "stuck"
        ax.text(0.02, 0.97, f"{lab} → {ok}", transform=ax.transAxes, va="top", fontsize=7.5,
                color=COLORS["recovered" if run.recovered else "stuck"])
        ax.tick_params(labelsize=7)
        ax.set_ylabel("requests/s" if k % ncols == 0 else "", fontsize=8)
        ax.queue_ax.set_ylabel("queue" if k % ncols == ncols - 1 or k == n - 1 else "", fontsize=8)
        ax.queue_ax.tick_params(labelsize=7)
        last_in_column = k + ncols >= n
        ax.set_xlabel("time (s)" if last_in_column else "", fontsize=8)
        if last_in_column:
            ax.xaxis.set_tick_params(labelbottom=True)
    for ax in flat[n:]:
        ax.set_visible(False)
    handles, labs = [], []
    for ax in flat[:n]:
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = ax.queue_ax.get_legend_handles_labels()
        for h, lab in zip(h1 + h2, l1 + l2, strict=True):
            if lab not in labs:
                handles.append(h)
                labs.append(lab)
    fig.legend(handles, labs, loc="outside lower center", ncols=4, fontsize=8)
    return fig, axes


# --------------------------------------------------------------------------- phase diagrams
PHASE_TRIGGER_START_MS = 10_000.0
PHASE_AFTER_MS = 40_000.0


def cell_scenario(cross_batch_ms: float = 27.0, duration_s: float = 30.0, user_rate_per_s: float = 600.0,
                  mitigation: str = "none", slow_factor: float | None = None) -> Scenario:
    """One phase-diagram cell: the peak (+20%) from 5 s, a trigger from 10 s lasting ``duration_s``
    (a second owner with ``cross_batch_ms`` batches, or a database ``slow_factor`` times slower),
    then 40 s to show whether it recovers. ``mitigation`` is a protection from
    :data:`MITIGATIONS` (interventions need an operator and are not swept)."""
    check_number("duration_s", duration_s, low=0.0, high=3600.0)
    check_choice("mitigation", mitigation, tuple(MITIGATIONS))
    start = PHASE_TRIGGER_START_MS
    end = start + 1000.0 * duration_s
    sc = replace(
        SEED_INCIDENT,
        user_rate_per_s=check_number("user_rate_per_s", user_rate_per_s, low=0.0, high=1e5),
        peak=Window(5_000.0, math.inf, 1.2),
        second_owner=None if slow_factor is not None else Window(start, max(end, start)),
        cross_batch_ms=check_number("cross_batch_ms", cross_batch_ms, low=0.0, low_open=True),
        slow_db=None if slow_factor is None else Window(start, end, check_number("slow_factor", slow_factor,
                                                                                  low=0.0, low_open=True)),
        horizon_ms=end + PHASE_AFTER_MS,
    )
    if MITIGATIONS[mitigation].kind == "intervention":
        raise ValueError(f"mitigation must be a protection (always on) for a sweep, got {mitigation!r}")
    return mitigate(mitigation, sc)


def phase_cell(cross_batch_ms: float = 27.0, duration_s: float = 30.0, user_rate_per_s: float = 600.0,
               mitigation: str = "none", seed: int = 0) -> float:
    """1.0 if the cell (:func:`cell_scenario`) recovers on the fast engine, else 0.0. Module-level
    so a process pool can pickle it for :func:`hotkeylab.sweep.grid`."""
    run = simulate(cell_scenario(cross_batch_ms, duration_s, user_rate_per_s, mitigation), engine="fast", seed=seed)
    return 1.0 if run.recovered else 0.0


def trigger_boundary_s(cross_batch_ms, sc: Scenario = SEED_INCIDENT, user_rate_per_s: float | None = None,
                       queue_batches: float | None = None):
    """Closed form for the phase boundary: how long a second owner with ``cross_batch_ms`` batches
    must last for the queue to reach ``queue_batches`` (default: the effective timeout threshold
    with two owners), growing at ``user batches at the peak − two-owner capacity``. inf where the
    two owners still keep up. Vectorised over ``cross_batch_ms``."""
    lam = sc.user_rate_per_s if user_rate_per_s is None else user_rate_per_s
    peak = sc.peak.factor if sc.peak is not None else 1.0
    demand = capacity.batcher_batch_rate(lam * peak, sc.batch_max_rows, sc.batch_max_wait_ms)
    xs = np.atleast_1d(np.asarray(cross_batch_ms, dtype=float))
    out = np.empty_like(xs)
    for k, x in enumerate(xs):
        mu2 = capacity.alternating_owners_tps([sc.batch_ms, x])
        q = effective_timeout_queue(sc, (sc.batch_ms + x) / 2) if queue_batches is None else queue_batches
        g = demand - mu2
        out[k] = q / g if g > 0 else math.inf
    return out if np.ndim(cross_batch_ms) else float(out[0])


def _boundary_grid(xs: np.ndarray, user_rates: np.ndarray, sc: Scenario) -> np.ndarray:
    """:func:`trigger_boundary_s` on a grid (rows: user rates, columns: C's batch times)."""
    peak = sc.peak.factor if sc.peak is not None else 1.0
    demand = np.array([capacity.batcher_batch_rate(lam * peak, sc.batch_max_rows, sc.batch_max_wait_ms)
                       for lam in user_rates])[:, None]
    n_bar = (sc.batch_ms + xs) / 2.0
    mu2 = 1000.0 / n_bar
    q = np.maximum(0.0, (sc.timeout_ms - sc.batch_max_wait_ms - n_bar) / n_bar)[None, :]
    g = demand - mu2[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(g > 0, q / np.where(g > 0, g, 1.0), np.inf)


def phase_figure(grids: dict, xs: Sequence[float], ys: Sequence[float], *, kind: str = "duration",
                 duration_s: float = 20.0):
    """Recovered/stuck grids side by side (``{label: grid}``), with the closed forms drawn over them.

    ``kind="duration"``: x = C's batch time (ms), y = trigger duration (s); the curve is
    :func:`trigger_boundary_s`, the duration after which the queue reaches the two-owner timeout
    threshold (stuck above it, when the load is in the bistable band). ``kind="load"``: x = C's batch
    time, y = base user rate (requests/s, the +20% peak on top); the lines are the bistable band's
    edges in base-rate units and the contour where a ``duration_s`` trigger just reaches the
    threshold."""
    check_choice("kind", kind, ("duration", "load"))
    n = len(grids)
    fig, axes = plotting.new_figure(1, n, height=3.3, squeeze=False, layout="constrained")
    fig.set_size_inches(max(8.0, 4.6 * n), 3.3)
    xs_f = np.linspace(min(xs) - 1.0, max(xs) + 2.0, 200)
    sc = SEED_INCIDENT
    peak = sc.peak.factor
    for k, (ax, (label, g)) in enumerate(zip(axes.flat, grids.items(), strict=True)):
        plotting.phase_diagram(g, xs, ys, ax=ax, xlabel="C's batch time (ms)",
                               ylabel="trigger duration (s)" if kind == "duration" else "base load (user requests/s)",
                               labels=("stuck", "recovered"))
        if k < n - 1 and ax.get_legend() is not None:
            ax.get_legend().remove()
        if kind == "duration":
            b = trigger_boundary_s(xs_f)
            ax.plot(xs_f, np.where(np.isfinite(b), b, np.nan), color="black", lw=2, ls="--",
                    label="queue reaches the threshold (closed form)")
            ax.set_ylim(min(ys) - 0.5 * (ys[1] - ys[0]), max(ys) + 0.5 * (ys[-1] - ys[-2]))
        else:
            lo, hi = band_user_rates(sc)
            for edge, ls, what in ((lo, ":", "lower"), (hi, "-.", "upper")):
                if min(ys) <= edge / peak <= max(ys):
                    ax.axhline(edge / peak, color="black", lw=1.5, ls=ls, label=f"band's {what} edge (closed form)")
            yy = np.linspace(min(ys), max(ys), 120)
            zz = _boundary_grid(xs_f, yy, sc)
            ax.contour(xs_f, yy, np.where(np.isfinite(zz), zz, 1e9), levels=[duration_s], colors="black",
                       linestyles="--", linewidths=2)
            ax.plot([], [], color="black", ls="--", lw=2, label=f"a {duration_s:g}-s trigger reaches the threshold")
            ax.set_ylim(min(ys) - 0.5 * (ys[1] - ys[0]), max(ys) + 0.5 * (ys[-1] - ys[-2]))
        ax.set_xlim(min(xs) - 0.5 * (xs[1] - xs[0]), max(xs) + 0.5 * (xs[-1] - xs[-2]))
        ax.text(0.02, 0.98, label, transform=ax.transAxes, va="top", fontsize=9,
                bbox=dict(facecolor="white", alpha=0.85, lw=0))
    from matplotlib.patches import Patch

    handles = [Patch(color=COLORS["recovered"]), Patch(color=COLORS["stuck"])]
    labels = [f"recovered within {PHASE_AFTER_MS / 1e3:g} s of the trigger's end", "stuck"]
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="outside lower center", ncols=3, fontsize=8)
    for ax in axes.flat:
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    return fig, axes


# --------------------------------------------------------------------------- hysteresis
HYST_HIGH_PER_S = 1_500.0
HYST_OVERLOAD_MS = 3_000.0
HYST_SETTLE_MS = 37_000.0
HYST_MEASURE_MS = 20_000.0


def hysteresis_point(user_rate_per_s: float, direction: str = "up", seed: int = 0) -> float:
    """Goodput (user requests/s answered in time) at a constant load, measured over the last 20 s.

    ``direction="up"``: the load arrives from below: the system starts empty and healthy, as after
    a slow ramp up. ``"down"``: it arrives from above: 20 s at :data:`HYST_HIGH_PER_S` requests/s
    (past the thread's capacity: a queue and a storm build), then the load steps down to
    ``user_rate_per_s`` for 60 s. No trigger, the seed's retries, one owner.
    """
    lam = check_number("user_rate_per_s", user_rate_per_s, low=1.0, high=1e5)
    check_choice("direction", direction, ("up", "down"))
    horizon = HYST_OVERLOAD_MS + HYST_SETTLE_MS + HYST_MEASURE_MS
    peak = Window(0.0, HYST_OVERLOAD_MS, HYST_HIGH_PER_S / lam) if direction == "down" else None
    sc = replace(SEED_INCIDENT, user_rate_per_s=lam, peak=peak, second_owner=None, horizon_ms=horizon,
                 warmup_ms=0.0)
    run = simulate(sc, engine="fast", seed=seed)
    return mean_between(run, "goodput", (horizon - HYST_MEASURE_MS) / 1e3, horizon / 1e3)


def hysteresis(loads: Sequence[float], seed: int = 0, executor="serial") -> dict:
    """Goodput at each load arriving from below (``up``) and from above (``down``)."""
    from ..sweep import run as sweep_run

    params = [{"user_rate_per_s": float(x), "direction": d, "seed": seed} for d in ("up", "down") for x in loads]
    vals = sweep_run(hysteresis_point, params, executor=executor, progress=False)
    n = len(loads)
    return {"offered": np.asarray(loads, float), "up": np.asarray(vals[:n]), "down": np.asarray(vals[n:])}


def plot_hysteresis(h: dict, band: tuple[float, float] | None = None, ax=None):
    """Goodput vs offered load, ramping up (healthy start) and down (after overload)."""
    if ax is None:
        _, ax = plotting.new_figure(layout="constrained")
    x = h["offered"]
    ax.plot(x, x, color=COLORS["offered"], lw=1, ls=":", label="goodput = offered")
    ax.plot(x, h["up"], "o-", color=COLORS["goodput"], label="ramping up (starts healthy)")
    ax.plot(x, h["down"], "s--", color=COLORS["stuck"],
            label=f"ramping down (after {HYST_OVERLOAD_MS / 1e3:g} s at {HYST_HIGH_PER_S:g}/s)")
    for xi, yu, yd in zip(x, h["up"], h["down"], strict=True):
        if abs(yu - yd) > 0.2 * xi:
            ax.annotate("", xy=(xi, yd), xytext=(xi, yu),
                        arrowprops=dict(arrowstyle="->", color=COLORS["capacity"], lw=0.8, alpha=0.6))
    if band is not None:
        ax.axvspan(band[0], band[1], color=COLORS["trigger"], alpha=0.35, lw=0,
                   label=f"bistable band {band[0]:.0f}–{band[1]:.0f} requests/s (closed form)")
    plotting.decorate(ax, xlabel="offered load (user requests/s)", ylabel="goodput (requests/s)", legend=False)
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper left", fontsize=8)
    return ax


# --------------------------------------------------------------------------- what-if widget
#: Retry policies offered by the widget, by label.
RETRY_CHOICES: dict[str, RetryPolicy] = {
    "seed: retry after 0–50 ms, no cap": SEED_RETRY,
    "no retries": RetryPolicy(max_attempts=1),
    "3 attempts, backoff + full jitter": _backoff("full"),
    "seed + gRPC throttling": replace(SEED_RETRY, budget=GrpcThrottle(10.0, 0.1)),
    "seed + 20% retry budget": replace(SEED_RETRY, budget=PercentBudget(0.2, 10.0, 10_000.0)),
}
WHATIF_RETRY = "seed: retry after 0–50 ms, no cap"
WHATIF_START_MS = 10_000.0
WHATIF_HORIZON_MS = 120_000.0


@dataclass
class WhatIfResult:
    """What the widget computed: the run, its closed forms, and the headline numbers."""

    scenario: Scenario
    run: object
    closed: dict
    recovered: bool
    served_share: float
    wasted_share: float
    max_queue: float
    band: tuple
    extras: dict = field(default_factory=dict)

    def _repr_markdown_(self) -> str:
        c = self.closed
        verdict = "**recovered**" if self.recovered else "**stuck**"
        return (
            f"{verdict}: {100 * self.served_share:.1f}% of user requests answered in time, "
            f"{100 * self.wasted_share:.1f}% of commits wasted, longest queue {self.max_queue:.0f} batches. "
            f"Closed forms: capacity {c['capacity_one_owner']:.1f} batches/s (one owner), "
            f"{c['capacity_two_owners']:.1f} (two owners); user batches {c['demand_normal']:.1f}/s; "
            f"timeouts start near {c['effective_queue_one_owner']:.1f} batches (M/N = {c['critical_queue']:.1f}); "
            f"bistable band {self.band[0]:.0f}–{self.band[1]:.0f} requests/s."
        )


class WhatIf:
    """The what-if figure, kept between calls: each call simulates on the fast engine, updates
    the lines' data and the shaded trigger, and redraws the same figure.

    >>> wi = WhatIf()                                                     # doctest: +SKIP
    >>> interactive(wi.update, **whatif_controls())                       # doctest: +SKIP
    """

    SERIES = ("offered", "retries", "goodput", "timeouts", "rejected")

    def __init__(self):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.fig = Figure(figsize=(8.0, 3.4), layout="constrained")
        FigureCanvasAgg(self.fig)
        ax = self.ax = self.fig.add_subplot()
        # each window's value is drawn over its second (steps), so nothing seems to move before it happens
        self.lines = {s: ax.plot([], [], color=COLORS[s], lw=2, label=plotting.LABELS[s], drawstyle="steps-post")[0]
                      for s in self.SERIES}
        # the users' line on top, dashed black, so the retries (often equal to it) cannot hide it
        self.lines["offered"].set(color="black", ls=(0, (3, 3)), lw=1.0, zorder=5)
        self.lines["retries"].set(lw=3.0, alpha=0.8)  # wide under the users' thin line: both visible
        self.qax = plotting.queue_axis(ax, "queue (batches, log; floor = 0)")
        # symlog: the ~10-batch threshold stays visible beside 1000s; ticks at powers of ten only
        figures.log_queue_axis(self.qax, 10.0)
        self.qline = self.qax.plot([], [], color=COLORS["queue"], lw=2, label="queue (batches, right axis)",
                                   drawstyle="steps-post")[0]
        # the threshold belongs to the right (queue) axis: drawn from the middle to the right edge only,
        # in the queue's colour, with its value written beside the right axis
        self.thr = self.qax.plot([0.5, 1.0], [0, 0], color=COLORS["queue"], ls="--", lw=1.2,
                                 transform=self.qax.get_yaxis_transform(),
                                 label="timeouts start, one owner (right axis)")[0]
        self.thr_text = self.qax.text(0.995, 0, "", transform=self.qax.get_yaxis_transform(), ha="right",
                                      va="bottom", fontsize=7, color=COLORS["queue"])
        self.span = ax.axvspan(WHATIF_START_MS / 1e3, 40.0, color=COLORS["trigger"], alpha=0.35, lw=0,
                               label="second owner (trigger)", zorder=0)
        self.verdict = ax.text(0.01, 0.97, "", transform=ax.transAxes, ha="left", va="top", fontsize=9, zorder=8,
                               bbox=dict(facecolor="white", alpha=0.85, lw=0))
        ax.set_xlabel("time (s)")
        ax.set_ylabel("requests/s")
        self._legend_kw = dict(loc="upper left", bbox_to_anchor=(1.15, 1.0), fontsize=8)
        plotting.merged_legend(ax, self.qax, **self._legend_kw)
        ax.set_xlim(0, WHATIF_HORIZON_MS / 1e3)
        self.calls = 0
        self.last: WhatIfResult | None = None

    def scenario(self, user_rate_per_s: float = 720.0, cross_batch_ms: float = 27.0, trigger_s: float = 30.0,
                 timeout_ms: float = 200.0, batch_ms: float = 16.0, queue_limit: int | None = None,
                 retry: str = WHATIF_RETRY, patience_ms: float = 300.0) -> Scenario:
        """The scenario the widget runs: constant load, a second owner from 10 s for ``trigger_s``;
        ``patience_ms`` replaces the retry policy's patience (a user stops once the next attempt
        would start more than this after the first: with M = 200 ms, 300 ms leaves room for one
        retry, 100 ms for none)."""
        check_number("trigger_s", trigger_s, low=0.0, high=(WHATIF_HORIZON_MS - WHATIF_START_MS) / 1e3)
        check_choice("retry", retry, tuple(RETRY_CHOICES))
        check_number("patience_ms", patience_ms, low=0.0, high=60_000.0)
        if queue_limit is not None:
            check_int("queue_limit", queue_limit, low=0)
        end = WHATIF_START_MS + 1e3 * trigger_s
        return replace(
            SEED_INCIDENT,
            user_rate_per_s=check_number("user_rate_per_s", user_rate_per_s, low=0.0, high=1e5),
            peak=None,
            batch_ms=check_number("batch_ms", batch_ms, low=0.0, low_open=True),
            cross_batch_ms=check_number("cross_batch_ms", cross_batch_ms, low=0.0, low_open=True),
            timeout_ms=check_number("timeout_ms", timeout_ms, low=0.0, low_open=True),
            second_owner=Window(WHATIF_START_MS, end) if trigger_s > 0 else None,
            queue_limit=queue_limit,
            retry=replace(RETRY_CHOICES[retry], patience_ms=patience_ms),
            horizon_ms=WHATIF_HORIZON_MS,
        )

    def update(self, user_rate_per_s: float = 720.0, cross_batch_ms: float = 27.0, trigger_s: float = 30.0,
               timeout_ms: float = 200.0, batch_ms: float = 16.0, queue_limit: int | None = None,
               retry: str = WHATIF_RETRY, patience_ms: float = 300.0, seed: int = 0,
               show: bool = True) -> WhatIfResult:
        """Simulate the what-if scenario and redraw the persistent figure (displayed if ``show``)."""
        sc = self.scenario(user_rate_per_s, cross_batch_ms, trigger_s, timeout_ms, batch_ms, queue_limit, retry,
                           patience_ms)
        run = simulate(sc, engine="fast", seed=seed)
        cf = closed_forms(sc)
        band = band_user_rates(sc)
        res = WhatIfResult(sc, run, cf, bool(run.recovered), float(run.summary["served_share"]),
                           float(run.summary["wasted_share"]), float(run.summary["max_queue"]), band)
        self.redraw(res)
        self.calls += 1
        self.last = res
        if show:
            from IPython.display import Markdown, display

            display(self.fig)
            display(Markdown(res._repr_markdown_()))
        return res

    __call__ = update

    def redraw(self, res: WhatIfResult) -> None:
        """Put ``res``'s run into the figure's lines and draw it."""
        w = res.run.windows
        t = w["t"]
        ymax = 1.0
        for s, line in self.lines.items():
            line.set_data(t, w[s])
            ymax = max(ymax, float(np.max(w[s])))
        self.ax.set_ylim(0, 1.1 * ymax)
        self.qline.set_data(t, w["queue"])
        thr = res.closed["effective_queue_one_owner"]
        self.thr.set_ydata([thr, thr])
        self.thr_text.set_y(thr)
        self.thr_text.set_text(f"timeouts start: {thr:.1f} batches →")
        figures.log_queue_axis(self.qax, 2.0 * max(float(np.max(w["queue"])), 2.0 * thr, 1.0))
        # the legend lists only what is drawn: a series that stayed at zero (no rejections) drops out
        shown = [ln for s, ln in self.lines.items() if s in ("offered", "goodput") or np.any(w[s] > 0)]
        for ln in self.lines.values():
            ln.set_visible(ln in shown)
        hs = shown + [self.span, self.qline, self.thr]
        self.ax.legend(hs, [h.get_label() for h in hs], **self._legend_kw)
        so = res.scenario.second_owner
        a, b = (so.start_ms / 1e3, so.end_ms / 1e3) if so is not None else (0.0, 0.0)
        self.span.set_x(a)
        self.span.set_width(b - a)
        self.verdict.set_text(
            f"{'recovered' if res.recovered else 'stuck'}: {100 * res.served_share:.0f}% served in time")
        self.verdict.set_color(COLORS["recovered" if res.recovered else "stuck"])
        self.fig.canvas.draw()


def whatif_controls() -> dict:
    """Controls for ``ipywidgets.interactive(WhatIf().update, **whatif_controls())``. Children
    order: load, C's batch time, trigger duration, M, N, queue limit, retry policy, patience."""
    import ipywidgets as widgets

    style = {"description_width": "170px"}
    layout = widgets.Layout(width="480px")

    def fs(value, lo, hi, step, desc):
        return widgets.FloatSlider(value=value, min=lo, max=hi, step=step, description=desc, style=style,
                                   layout=layout, continuous_update=False)

    return {
        "user_rate_per_s": fs(720.0, 200.0, 1400.0, 20.0, "load (user requests/s)"),
        "cross_batch_ms": fs(27.0, 16.0, 60.0, 1.0, "C's batch time (ms)"),
        "trigger_s": fs(30.0, 0.0, 60.0, 5.0, "trigger duration (s)"),
        "timeout_ms": fs(200.0, 50.0, 1000.0, 10.0, "M: client timeout (ms)"),
        "batch_ms": fs(16.0, 4.0, 40.0, 1.0, "N: batch time in B (ms)"),
        "queue_limit": widgets.Dropdown(options=[("none", None)] + [(str(k), k) for k in (3, 6, 9, 12, 25, 100)]
                                        + [("250 (≈ the seed's, assumed)", 250)],
                                        value=None, description="QueueMaxSize (batches)", style=style, layout=layout),
        "retry": widgets.Dropdown(options=list(RETRY_CHOICES), value=WHATIF_RETRY,
                                  description="retry policy", style=style, layout=layout),
        "patience_ms": fs(300.0, 100.0, 2000.0, 50.0, "user patience (ms)"),
        "seed": widgets.fixed(0),
        "show": widgets.fixed(True),
    }
