"""Reading a run: recovered or stuck, how long it took, what it cost; and the closed forms
of the seed's argument, each computable from a :class:`~.scenario.Scenario`."""

from __future__ import annotations

import math

import numpy as np

from .. import capacity
from ..validate import check_number
from .scenario import Scenario

__all__ = [
    "RECOVERY_SHARE",
    "BLOCK_S",
    "recovery",
    "summarise",
    "closed_forms",
    "effective_timeout_queue",
    "drain_time_s",
]

#: Recovered means the users are served in time again: goodput at least this share of the user
#: requests offered in the same block …
RECOVERY_SHARE = 0.9
#: … measured over blocks of this many seconds, so one unlucky second does not decide.
BLOCK_S = 5.0


def _blocks(run):
    w = run.windows
    per = max(1, int(round(BLOCK_S * 1000.0 / run.scenario.window_ms)))
    n = len(w["t"]) // per
    g = np.asarray(w["goodput"][: n * per]).reshape(n, per).sum(axis=1)
    o = np.asarray(w["offered"][: n * per]).reshape(n, per).sum(axis=1)
    t0 = np.asarray(w["t"][: n * per]).reshape(n, per)[:, 0]
    return t0, g, o, per * run.scenario.window_ms / 1000.0


def recovery(run) -> tuple[bool, float | None]:
    """``(recovered, seconds from the end of the trigger to recovery)``.

    A 5-s block *passes* when goodput (user requests answered within M) is at least 90% of the user
    requests offered in it. Recovered means: some block after the trigger passes, and every later
    block up to the horizon passes too. The yardstick is what users offer, not the run's own
    pre-trigger goodput, so a run overloaded from the start (goodput ≈ 0 before and after) is never
    recovered; and since a share is at most 1, passing also means goodput is back to ≥ 90% of its
    pre-trigger share. Blocks with almost no user traffic (< 10% of the median block, e.g. while
    degraded) neither pass nor fail, but the last block must carry traffic and pass. With no
    trigger, recovered means healthy in every block after the warm-up. A run cut by the event cap
    is not recovered.
    """
    if run.truncated:
        return False, None
    sc: Scenario = run.scenario
    t0, g, o, width = _blocks(run)
    if len(t0) == 0:
        return False, None
    trig = sc.trigger_window
    warm = sc.warmup_ms / 1000.0
    end_s = min(trig[1] / 1000.0, run.status.t_end_ms / 1000.0) if trig else warm
    busy = o >= 0.1 * max(1.0, np.median(o[o > 0])) if (o > 0).any() else o > 0
    ok = np.where(busy, g >= RECOVERY_SHARE * o, True)
    after = t0 + width > end_s  # blocks that end after the trigger
    idx = np.nonzero(after)[0]
    if len(idx) == 0 or not busy[-1] or not ok[-1]:
        return False, None
    # the first block after the trigger from which every later block passes
    bad_after = [k for k in idx if not ok[k]]
    first_ok = idx[0] if not bad_after else bad_after[-1] + 1
    if first_ok >= len(t0):
        return False, None
    return True, max(0.0, float(t0[first_ok] - end_s)) if bad_after else 0.0


def summarise(run) -> dict:
    """One row for a comparison table: recovered?, time to recover, goodput lost, wasted work."""
    w = run.windows
    dt = run.scenario.window_ms / 1000.0
    led = run.ledger
    served_share = led.served / led.arrived if led.arrived else 1.0
    return {
        "recovered": run.recovered,
        "recovery_time_s": run.recovery_time_s,
        "user_requests": led.arrived,
        "served_share": served_share,
        "goodput_lost": led.arrived - led.served,
        "timeouts": int(round(w["timeouts"].sum() * dt)),
        "retries": int(round(w["retries"].sum() * dt)),
        "rejected": int(round(w["rejected"].sum() * dt)),
        "wasted_rows": run.server["wasted"],
        "committed_rows": run.server["committed"],
        "wasted_share": run.server["wasted"] / run.server["committed"] if run.server["committed"] else 0.0,
        "max_queue": float(np.max(w["queue"])) if len(w["queue"]) else 0.0,
        "truncated": run.truncated,
    }


def effective_timeout_queue(sc: Scenario, batch_ms: float | None = None) -> float:
    """Batches ahead at which a new request times out, counting its own wait in the batcher
    (up to ``batch_max_wait_ms``) and its own commit: ``(M − T − N) / N``. Below M/N."""
    n = sc.batch_ms if batch_ms is None else batch_ms
    return capacity.timeout_queue_length(sc.timeout_ms, n, sc.batch_max_wait_ms)


def closed_forms(sc: Scenario) -> dict:
    """The seed's arithmetic for a scenario (batches/s unless said otherwise).

    Demand in batches comes from :func:`capacity.batcher_batch_rate` (most batches close on the
    20 ms timer, so λ/20 would understate it). Once every attempt times out, each user request is
    sent ``attempts_per_request_stuck`` times (retries that fit in the user's patience); the storm
    sustains itself when that demand exceeds one owner's capacity: the batcher's version of the
    bistable band μ/(R+1) < λ < μ."""
    mu_one = capacity.tps_ceiling(sc.batch_ms)
    mu_two = capacity.alternating_owners_tps([sc.batch_ms, sc.cross_batch_ms])
    lam_normal = capacity.batcher_batch_rate(sc.user_rate_per_s, sc.batch_max_rows, sc.batch_max_wait_ms)
    peak = sc.peak.factor if sc.peak is not None else 1.0
    lam_peak = capacity.batcher_batch_rate(sc.user_rate_per_s * peak, sc.batch_max_rows, sc.batch_max_wait_ms)
    retries = sc.retry.retries
    if sc.retry.patience_ms < math.inf:
        # a retry can only start within the patience: after a timeout at M, retry k starts near k·M
        retries = min(retries, max(0, math.floor(sc.retry.patience_ms / sc.timeout_ms)))
    attempts = retries + 1
    lam_storm = capacity.batcher_batch_rate(
        min(sc.user_rate_per_s * peak * attempts, 1e6), sc.batch_max_rows, sc.batch_max_wait_ms
    )
    return {
        "capacity_one_owner": mu_one,
        "capacity_two_owners": mu_two,
        "demand_normal": lam_normal,
        "demand_peak": lam_peak,
        "critical_queue": capacity.critical_queue_length(sc.timeout_ms, sc.batch_ms),
        "effective_queue_one_owner": effective_timeout_queue(sc),
        "effective_queue_two_owners": effective_timeout_queue(sc, (sc.batch_ms + sc.cross_batch_ms) / 2),
        "growth_two_owners": capacity.queue_growth_rate(lam_peak, 0.0, mu_two),
        "attempts_per_request_stuck": attempts,
        "demand_stuck": lam_storm,
        "growth_stuck": capacity.queue_growth_rate(lam_storm, 0.0, mu_one),
        "storm_sustains": lam_storm > mu_one,
    }


def drain_time_s(sc: Scenario, queue_batches: float) -> float:
    """Seconds for the server to drain ``queue_batches`` while every request still times out
    and is retried: ``Q / (μ − retried demand)``; inf when the storm sustains itself. The seed's
    "只能等积压队列慢慢消化" made quantitative."""
    q = check_number("queue_batches", queue_batches, low=0.0)
    growth = closed_forms(sc)["growth_stuck"]
    return math.inf if growth >= 0 else q / -growth
