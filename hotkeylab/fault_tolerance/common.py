"""09 · Pieces every practice's model shares: the :class:`Run` a simulation returns, the run's
arguments and time spans checked, Poisson arrivals (:class:`hotkeylab.sim.PoissonSource`), the
bounded run, per-window statistics and one call in flight (:class:`Attempt`).

Every scenario declares its event cap ``max_events`` in ``[1, MAX_EVENTS]``. One SimPy event costs
17-28 µs of CPU in these models at their largest loads (the isolation model is the dearest;
ejection about 4 µs), measured on the 2-core CI machine while it ran other work, so a run at the cap
takes at most about 4.5 s of CPU and ends within ~20 s of wall time on a machine loaded four times
over. A run the cap stops ends with ``status.truncated``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import simpy

from .. import sim
from ..sim import (
    Ledger,
    PoissonSource,
    Recorder,
    RunStatus,
    check_seed,
    run_bounded,
    window_percentiles,
)
from ..validate import check_fields, check_number, param

MAX_RATE_PER_S = 100_000.0
MAX_HORIZON_MS = 3_600_000.0
MAX_WORKERS = 100_000
#: the largest event cap of one run (see the module docstring); the largest run of notebook 09
#: (the isolation preset) needs about 139,000 events
MAX_EVENTS = 160_000


@dataclass(frozen=True)
class Run(sim.Run):
    """What every simulation of this module returns.

    ``windows``: equal-length numpy arrays over time windows, ``t`` = window start in seconds,
    counters per second, levels as time-weighted means. ``summary``: the key numbers, the
    practice's own typed summary (:mod:`.results`; no samples: None, never NaN).
    ``log``: per-request arrays or event lists the plots need. ``status``: how the bounded run
    ended (``status.truncated`` if the event cap stopped it before the horizon).
    """

    scenario: object
    seed: int
    status: RunStatus
    ledger: Ledger
    windows: dict
    summary: sim.Summary = field(default_factory=dict)  # each practice passes its own Summary
    log: dict = field(default_factory=dict)

    @property
    def truncated(self) -> bool:
        return self.status.truncated


# --------------------------------------------------------------------------- declared ranges
def rate_param(default: float):
    """A Poisson rate (per second) in ``[0, MAX_RATE_PER_S]``."""
    return param(default, low=0.0, high=MAX_RATE_PER_S)


def workers_param(default: int, low: int = 1):
    """A worker count in ``[low, MAX_WORKERS]``."""
    return param(default, kind="int", low=low, high=MAX_WORKERS)


def span_start(default: float):
    """The start of a time span (ms) inside the longest horizon; see :func:`check_span`."""
    return param(default, low=0.0, high=MAX_HORIZON_MS)


def span_end(default: float):
    """The end of a time span (ms; inf: never ends); see :func:`check_span`."""
    return param(default, low=0.0, allow_inf=True)


def events_param(default: int = MAX_EVENTS):
    """The run's event cap (``max_events``) in ``[1, MAX_EVENTS]``: a run that reaches it ends
    there, with ``status.truncated``."""
    return param(default, kind="int", low=1, high=MAX_EVENTS)


def horizon_param(default: float):
    return param(default, low=0.0, low_open=True, high=MAX_HORIZON_MS)


def window_param(default: float):
    """Width of the windows in ``Run.windows``; at most the horizon (:func:`check_window_ms`)."""
    return param(default, low=0.0, low_open=True)


# --------------------------------------------------------------------------- checks
def check_scenario_fields(sc, *spans: tuple[str, str]) -> None:
    """What every practice's scenario checks in ``__post_init__``: the declared ranges of its
    fields (:func:`hotkeylab.validate.check_fields`), each time span ``(start, end)`` in order
    (:func:`check_span`) and ``window_ms`` inside the horizon (:func:`check_window_ms`), if it
    has windows."""
    check_fields(sc)
    for start, end in spans:
        check_span(sc, start, end)
    if hasattr(sc, "window_ms"):
        check_window_ms(sc)


def check_span(sc, start: str, end: str) -> None:
    """A time span of scenario ``sc`` (fields ``start`` and ``end``, ms): ``end >= start``. The
    fields' own ranges are declared on them (:func:`span_start`, :func:`span_end`)."""
    a, b = getattr(sc, start), getattr(sc, end)
    if b < a:
        raise ValueError(f"{end} must be >= {start} ({a:g}), got {b!r}")


def check_window_ms(sc) -> None:
    """``window_ms`` of scenario ``sc`` fits in its horizon."""
    check_number("window_ms", sc.window_ms, low=0.0, low_open=True, high=sc.horizon_ms)


def check_scenario(name: str, value, kind) -> None:
    """``value`` must be a ``kind`` (a practice's scenario class), else ValueError naming ``name``."""
    if not isinstance(value, kind):
        raise ValueError(f"{name} must be a fault_tolerance.{kind.__name__}, got {type(value).__name__}")


def check_run_args(scenario, kind, seed) -> int:
    """The arguments every ``simulate_*`` takes; returns the checked seed."""
    check_scenario("scenario", scenario, kind)
    return check_seed(seed)


def check_runs(name: str, runs) -> dict:
    """A non-empty dict of :class:`Run` (a figure's input)."""
    if not isinstance(runs, dict) or not runs or not all(isinstance(r, Run) for r in runs.values()):
        raise ValueError(f"{name} must be a non-empty dict of fault_tolerance.Run, got {runs!r:.80}")
    return runs


def check_run(name: str, run) -> Run:
    if not isinstance(run, Run):
        raise ValueError(f"{name} must be a fault_tolerance.Run, got {type(run).__name__}")
    return run


# --------------------------------------------------------------------------- arrivals and the run
def segments(rate_per_s, horizon_ms, start_ms=0.0, end_ms=0.0, factor=1.0):
    """Piecewise-constant Poisson rates: ``rate`` over the horizon, ``rate × factor`` inside
    ``[start_ms, end_ms)``."""
    if end_ms <= start_ms or factor == 1.0:
        return [(0.0, horizon_ms, rate_per_s)]
    s, e = min(start_ms, horizon_ms), min(end_ms, horizon_ms)
    return [(0.0, s, rate_per_s), (s, e, rate_per_s * factor), (e, horizon_ms, rate_per_s)]


def poisson(env, rng, segs, spawn):
    """Poisson arrivals over piecewise-constant ``segs`` ``[(t0_ms, t1_ms, rate_per_s)]``; calls
    ``spawn()`` at each arrival. Gaps come from one :class:`~hotkeylab.sim.PoissonSource` per
    segment, drawn in blocks of 256 (same seed, same stream)."""
    for t0, t1, rate in segs:
        if rate <= 0 or t1 <= t0:
            continue
        if env.now < t0:
            yield env.timeout(t0 - env.now)
        gaps = PoissonSource(rng, rate, block=256)
        t = max(env.now, t0)
        while True:
            t += gaps.next_gap()
            if t >= t1:
                break
            yield env.timeout(t - env.now)
            spawn()


def bounded(env, sc) -> RunStatus:
    """Run ``env`` to the scenario's horizon or its event cap ``sc.max_events``
    (:func:`hotkeylab.sim.run_bounded`)."""
    return run_bounded(env, until_ms=sc.horizon_ms, max_events=sc.max_events)


def finish(env, sc, rec, st) -> tuple[RunStatus, dict, np.ndarray]:
    """The shared tail of a ``simulate_*``: run ``env`` to the horizon or the event cap
    (:func:`bounded`), extend the recorder's levels to the run's end, and read back the windows
    and the requests' arrival times ``st.arrive`` (ms). Returns ``(status, windows, arrive_ms)``."""
    status = bounded(env, sc)
    rec.close(status.t_end_ms)
    return status, rec.arrays(), np.asarray(st.arrive, float)


def latency_windows(w: dict, arrive_ms, done_ms, window_ms) -> np.ndarray:
    """Adds ``mean_ms``, ``p50_ms`` and ``p99_ms`` to the windows ``w``: the latency
    ``done − arrive`` of the requests finishing in each window (:func:`window_stats`; NaN
    ``done``: still in the system). Returns the latencies."""
    lat = done_ms - arrive_ms
    w["mean_ms"], w["p50_ms"], w["p99_ms"] = window_stats(done_ms, lat, window_ms, len(w["t"]))
    return lat


def ledger(outcomes, **extra) -> tuple[np.ndarray, Ledger]:
    """The outcome codes as an array and their :meth:`~hotkeylab.sim.Ledger.from_outcomes`."""
    codes = np.asarray(outcomes, np.int8)
    return codes, Ledger.from_outcomes(codes, **extra)


@dataclass
class RunState:
    """What the mutable state of every practice's run starts with: the SimPy environment, the
    scenario (the practice's own scenario class), the run's random stream and its recorder (None
    where a run keeps no windows). Each practice's ``_…State`` adds its queues and per-request lists."""

    env: simpy.Environment
    sc: object
    rng: np.random.Generator
    rec: Recorder | None


class Attempt:
    """One call in flight: ``done`` fires with the answer; ``abandoned`` once the caller has
    given up (the callee cannot tell, and its late answer is wasted work)."""

    __slots__ = ("done", "abandoned")

    def __init__(self, env):
        self.done = env.event()
        self.abandoned = False


# --------------------------------------------------------------------------- windows
def window_stats(t_done_ms, values, window_ms, n):
    """Mean, p50 and p99 of ``values`` binned by ``t_done_ms`` into ``n`` windows (NaN in a window
    with none; a NaN time or value is left out). The percentiles are the kernel's
    :func:`hotkeylab.sim.window_percentiles`."""
    t = np.asarray(t_done_ms, dtype=float)
    v = np.asarray(values, dtype=float)
    keep = ~np.isnan(t) & ~np.isnan(v)
    t, v = t[keep], v[keep]
    p50, p99 = window_percentiles(t, v, window_ms, n, qs=(50, 99))
    idx = np.floor_divide(t, window_ms)
    inside = (idx >= 0) & (idx < n)
    idx, v = idx[inside].astype(np.int64), v[inside]
    v = v[np.argsort(idx, kind="stable")]  # the values window by window
    counts = np.bincount(idx, minlength=n)
    full = counts > 0
    mean = np.full(n, np.nan)
    if full.any():
        mean[full] = [run.mean() for run in np.split(v, np.cumsum(counts[full])[:-1])]
    return mean, p50, p99


def window_share(t_ms, ok, window_ms, n):
    """Share of ``ok`` among items binned by ``t_ms`` (NaN in empty windows)."""
    t = np.asarray(t_ms, dtype=float)
    idx = np.floor_divide(t, window_ms).astype(np.int64)
    inside = (idx >= 0) & (idx < n)
    tot = np.bincount(idx[inside], minlength=n).astype(float)
    good = np.bincount(idx[inside], weights=np.asarray(ok, float)[inside], minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tot > 0, good / np.where(tot > 0, tot, 1), np.nan)


def share(mask_ok, mask_all) -> float:
    """``|ok ∧ all| / |all|`` (NaN when ``all`` is empty)."""
    n = int(np.count_nonzero(mask_all))
    return float(np.count_nonzero(mask_ok & mask_all) / n) if n else math.nan


def mean_or_nan(values, mask) -> float:
    """Mean of ``values[mask]`` (NaN when the mask is empty)."""
    return float(values[mask].mean()) if mask.any() else math.nan
