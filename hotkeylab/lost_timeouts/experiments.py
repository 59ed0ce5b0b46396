"""08 · Experiments the notebook runs: the three conditions, t₀ over random seeds, the fixes compared, the
assumptions' ranges, the cluster view (the timing wheel's own measurements are in :mod:`.wheel_demos`).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import simpy

from ..sim import check_seed, run_bounded
from ..validate import check_choice, check_int, check_number
from .closed_form import (
    fluid,
    healthy_bound,
    p_shutdown_at_kill,
)
from .model import Run, simulate, start_machine
from .scenario import (
    _MAX_HORIZON_MS,
    FIXES,
    SEED_INCIDENT,
    Scenario,
)

__all__ = [
    "conditions_table",
    "t0_experiment",
    "shutdown_count",
    "compare_fixes",
    "assumption_ranges",
    "alert_time_s",
    "cluster_view",
]


# =========================================================================== analyses
def conditions_table(
    base: Scenario = SEED_INCIDENT, seed: int = 0, horizon_ms: float = 240_000.0, fix: str = "none"
) -> list[dict]:
    """Simulate the 8 combinations of the seed's three conditions (asynchronous calls, an abrupt
    provider exit, a hung provider) and report, from each run: when the shared executor was shut
    down (None: never), lost timeout tasks (WARN lines), stuck futures at the end, and whether it
    leaks. Nothing here is predicted: the rows come out of ``close_channel`` and the executors."""
    check_choice("fix", fix, FIXES)
    h = check_number("horizon_ms", horizon_ms, low=1000.0, high=_MAX_HORIZON_MS)
    rows = []
    for is_async in (True, False):
        for abrupt in (True, False):
            for hung in (True, False):
                sc = replace(
                    base,
                    call_mode="async" if is_async else "sync",
                    exit_kind="abrupt" if abrupt else "graceful",
                    hang_at_ms=base.hang_at_ms if hung else None,
                    fix=fix,
                    horizon_ms=h,
                    window_ms=min(base.window_ms, h),
                    gc_sample_ms=min(base.gc_sample_ms, h),
                )
                run = simulate(sc, seed)
                s = run.summary
                rows.append(
                    {
                        "async": is_async,
                        "abrupt_exit": abrupt,
                        "hung_provider": hung,
                        "shutdown_s": s["executor_shutdown_s"],
                        "lost_timeouts": s["lost_timeouts"],
                        "stuck_end": s["stuck_end"],
                        "in_flight_end": s["in_flight_end"],
                        "failed_on_disconnect": s["failed_on_disconnect"],
                        "leaks": s["leaks"],
                    }
                )
    return rows


def t0_experiment(
    base: Scenario = SEED_INCIDENT, hang_before_ms: float = 30_000.0, seeds: int = 20, window_ms: float = 5000.0
) -> dict:
    """Test :func:`leak_start` against the simulation when the hang comes *before* the shutdown.

    Provider 1 hangs ``hang_before_ms`` before provider 0's abrupt exit; the run stops a little
    after the shutdown. Per seed we record the stuck calls (their timeout rejected) issued before
    the shutdown, and the issue times of the earliest stuck call and of the latest call that timed
    out. The closed form expects ``λ s (t_shutdown − t0) = λ s (T + tick / 2)`` stuck calls issued
    before the shutdown, and ``t0`` between those two issue times.

    Also per seed (``seed_list``): ``max_stuck_in_one_tick``, the most of those stuck calls whose
    timeouts fired at one and the same tick (a burst of calls routed to the hung provider);
    ``typical_seed`` (count nearest the median) and ``outlier_seed`` (farthest from the closed
    form) name the seeds :func:`plot_t0_timelines` draws.
    """
    n = check_int("seeds", seeds, low=1, high=1000)
    hb = check_number("hang_before_ms", hang_before_ms, low=0.0, high=base.exit_at_ms or 0.0)
    w = check_number("window_ms", window_ms, low=1.0, high=600_000.0)
    if base.exit_at_ms is None:
        raise ValueError("base.exit_at_ms must be set (the shutdown comes from provider 0's exit)")
    sc = replace(base, hang_at_ms=base.exit_at_ms - hb, exit_kind="abrupt", call_mode="async", fix="none",
                 horizon_ms=base.exit_at_ms + w, window_ms=min(base.window_ms, base.exit_at_ms + w),
                 gc_sample_ms=min(base.gc_sample_ms, base.exit_at_ms + w))
    counts, earliest, latest_ok, shutdowns, burst, used = [], [], [], [], [], []
    for seed in range(n):
        env = simpy.Environment()
        m = start_machine(env, sc, seed)
        timed_out_t0 = []
        orig = m.notify_timeout

        def notify(call, _orig=orig, _acc=timed_out_t0):
            if not call.done and call.provider.index == 1:
                _acc.append(call.t0)
            _orig(call)

        m.notify_timeout = notify
        if run_bounded(env, sc.horizon_ms, sc.max_events).truncated:
            raise ValueError(
                f"base must run the experiment's {sc.horizon_ms:g} ms within max_events "
                f"({sc.max_events:,} events), got rate_per_s={sc.rate_per_s:g}: the run stopped at its cap"
            )
        sd = m.executor.shutdown_at_ms
        shutdowns.append(sd)
        if sd is None:
            continue
        lost = [c for c in m.futures.values() if c.lost and c.provider.index == 1]
        stuck = sorted(c.t0 for c in lost)
        counts.append(sum(1 for a in stuck if a < sd))
        fired = [c.timeout.fired_at_ms for c in lost if c.t0 < sd]
        burst.append(max(np.unique(np.round(fired, 6), return_counts=True)[1], default=0) if fired else 0)
        used.append(seed)
        earliest.append(stuck[0] if stuck else math.nan)
        latest_ok.append(max(timed_out_t0) if timed_out_t0 else math.nan)
    t0 = sc.leak_start_ms
    s_before = sc.share_of_hung(sc.exit_at_ms - 1.0)
    expected = sc.rate_per_s * s_before * (sc.exit_at_ms - t0) / 1000.0
    c = np.array(counts, dtype=float)
    typical = used[int(np.argmin(np.abs(c - np.median(c))))] if used else None
    outlier = used[int(np.argmax(np.abs(c - expected)))] if used else None
    return {
        "scenario": sc,
        "t0_ms": t0,
        "shutdown_ms": sc.exit_at_ms,
        "expected_before_shutdown": expected,
        "stuck_before_shutdown": c,
        "seed_list": np.array(used, dtype=int),
        "max_stuck_in_one_tick": np.array(burst, dtype=int),
        "typical_seed": typical,
        "outlier_seed": outlier,
        "earliest_stuck_ms": np.array(earliest, dtype=float),
        "latest_timed_out_ms": np.array(latest_ok, dtype=float),
        "shut_down_in": sum(1 for x in shutdowns if x is not None),
        "seeds": n,
    }


def shutdown_count(base: Scenario = SEED_INCIDENT, seeds: int = 40, after_ms: float = 1000.0) -> dict:
    """Over ``seeds`` runs that stop ``after_ms`` after provider 0's exit: in how many did the
    exit shut the shared executor down? Beside it, :func:`p_shutdown_at_kill` for a provider
    killed while answering normally (no stall)."""
    n = check_int("seeds", seeds, low=1, high=10_000)
    a = check_number("after_ms", after_ms, low=1.0, high=600_000.0)
    if base.exit_at_ms is None:
        raise ValueError("base.exit_at_ms must be set")
    h = base.exit_at_ms + a
    sc = replace(base, horizon_ms=h, window_ms=min(base.window_ms, h), gc_sample_ms=min(base.gc_sample_ms, h))
    hits = sum(1 for seed in range(n) if simulate(sc, seed).summary["executor_shutdown_s"] is not None)
    if sc.hung_share is None:
        lam0 = sc.rate_per_s / sc.providers  # random load balancing over all providers
    else:
        lam0 = sc.rate_per_s * (1.0 - sc.hung_share) / (sc.providers - 1)
    return {"shut_down": hits, "seeds": n, "p_closed_form": p_shutdown_at_kill(lam0, sc.service_ms),
            "rate_to_killed_per_s": lam0}


def compare_fixes(base: Scenario = SEED_INCIDENT, seed: int = 0, cap: int = 200, reuse=()) -> dict:
    """The seed's version and three remedies, each simulated: ``{label: Run}``.

    ``reuse``: runs already simulated; one whose scenario and seed match a variant is used as is.
    """
    c = check_int("cap", cap, low=1)
    seed = check_seed(seed)
    done = list(reuse)
    for r in done:
        if not isinstance(r, Run):
            raise ValueError(f"reuse must hold lost_timeouts.Run objects, got {type(r).__name__}")
    variants = {
        "2.7.12 (the seed)": replace(base, fix="none"),
        "fixed version (no shutdown)": replace(base, fix="no_shutdown"),
        "timeout inline if shut down": replace(base, fix="inline_timeout"),
        f"cap {c} pending calls per provider": replace(base, fix="none", max_outstanding=c),
    }
    out = {}
    for label, sc in variants.items():
        hit = next((r for r in done if r.scenario == sc and r.seed == seed), None)
        out[label] = hit if hit is not None else simulate(sc, seed)
    return out


def assumption_ranges(base: Scenario = SEED_INCIDENT, horizon_ms: float = 4 * 3_600_000.0) -> list[dict]:
    """For each number we assumed, the fluid model at the ends of a range, over ``horizon_ms``
    (4 h: a night): minutes from the hang until the machine is dead by the model's rule (None if
    not within the horizon), the closed-form minutes to fill the free heap (no GC feedback), and
    the calls in flight at the end with timeouts working. The lesson's result ("lost timeouts kill
    the machine, in a time set by free heap / leak; working ones keep it near Little's level")
    holds where ``minutes_after_hang`` is a number and ``fixed_in_flight`` stays small."""
    check_number("horizon_ms", horizon_ms, low=1000.0, high=_MAX_HORIZON_MS)
    ranges = [
        ("rate_per_s", 50.0, 400.0, {}),
        ("providers", 3, 20, {}),
        ("timeout_ms", 200.0, 5000.0, {}),
        ("service_ms", 5.0, 100.0, {}),
        ("heap_mb", 512.0, 2048.0, {}),
        ("base_live_mb", 100.0, 600.0, {}),
        ("retained_kb", 16.0, 256.0, {}),
        ("gc_cost", 0.005, 0.05, {}),
    ]
    rows = []
    for name, lo, hi, extra in ranges:
        for v in (lo, hi):
            kw = {name: v, **extra}
            if name == "rate_per_s":
                kw["node_capacity_per_s"] = max(base.node_capacity_per_s, 2.0 * v)
            sc = replace(base, horizon_ms=horizon_ms, **kw)
            broken = fluid(sc)
            fixed = fluid(replace(sc, fix="no_shutdown"))
            rows.append({
                "name": name,
                "value": v,
                "dead_s": broken["dead_s"],
                "minutes_after_hang": None if broken["dead_s"] is None or sc.hang_at_ms is None
                else (broken["dead_s"] - sc.hang_at_ms / 1000.0) / 60.0,
                "fill_min": (sc.heap_mb - sc.base_live_mb) / (sc.leak_per_s * sc.retained_kb / 1024.0) / 60.0
                if sc.leak_per_s > 0 else None,
                "fixed_in_flight": float(fixed["in_flight"][-1]),
            })
    return rows


def alert_time_s(run: Run, threshold: float | None = None) -> float | None:
    """When an alert on the in-flight count fires (first sample above ``threshold``; default:
    twice Little's healthy bound ``λ (timeout + tick)``). None if never."""
    sc = run.scenario
    thr = 2.0 * healthy_bound(sc.rate_per_s, sc.timeout_ms, sc.tick_ms) if threshold is None else (
        check_number("threshold", threshold, low=0.0)
    )
    idx = np.flatnonzero(run.samples["in_flight"] > thr)
    return float(run.samples["t"][idx[0]]) if idx.size else None


def cluster_view(serving, rate_per_s: float, capacity_per_s: float, b_nodes: int, b_leaking_nodes: int) -> dict:
    """What the other B machines see (the seed's graphs), closed form over a serving-share series.

    The ``b_leaking_nodes`` machines serve ``λ × serving`` each; the requests they cannot serve
    move to the ``b_nodes − b_leaking_nodes`` others (the upstream's load balancing and retries:
    an assumption). A healthy machine's latency is M/M/1: ``1000 / (μ − λ)`` ms (inf at μ ≤ λ).
    Returns arrays ``leaking_per_s``, ``healthy_per_s``, ``healthy_latency_ms``,
    ``leaking_latency_ms`` (the same at normal load, scaled by 1 / (1 − gc) there).
    """
    srv = np.clip(np.asarray(serving, dtype=float), 0.0, 1.0)
    lam = check_number("rate_per_s", rate_per_s, low=0.0, low_open=True)
    mu = check_number("capacity_per_s", capacity_per_s, low=0.0, low_open=True)
    n = check_int("b_nodes", b_nodes, low=1)
    k = check_int("b_leaking_nodes", b_leaking_nodes, low=0, high=n)
    leaking = lam * srv
    if n > k:
        healthy = (n * lam - k * leaking) / (n - k)
    else:
        healthy = np.full_like(srv, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        lat = np.where(healthy < mu, 1000.0 / (mu - healthy), np.inf)
    return {
        "leaking_per_s": leaking,
        "healthy_per_s": healthy,
        "healthy_latency_ms": lat,
        "normal_latency_ms": 1000.0 / (mu - lam) if lam < mu else math.inf,
    }
