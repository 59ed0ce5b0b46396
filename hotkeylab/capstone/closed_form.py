"""10 · Closed forms: the scenario your inputs build, the bistable band and its zones, and the prediction
from six closed-form comparisons.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .. import capacity
from ..metastable import (
    PercentBudget,
    Scenario,
    Window,
    closed_forms,
    effective_timeout_queue,
)
from ..metastable.analysis import BLOCK_S, RECOVERY_SHARE
from ..metastable.closed_form import band_user_rates
from ..validate import check_int, check_number
from .scenario import (
    BUDGET,
    PEAK_START_S,
    ZONES,
    Trigger,
    YourSystem,
)


# --------------------------------------------------------------------------- closed forms
def scenario(system: YourSystem, trigger: Trigger | None = None, *, queue_limit: int | None | str = "entered",
             budget: bool = False) -> Scenario:
    """The :class:`~hotkeylab.metastable.Scenario` of ``system`` under ``trigger`` (None: no
    trigger). ``queue_limit="entered"`` keeps the system's QueueMaxSize; an int or None replaces
    it. ``budget=True`` adds :data:`BUDGET` to the retries (unless the system has a budget)."""
    _check_system(system)
    trigger = Trigger() if trigger is None else trigger
    if not isinstance(trigger, Trigger):
        raise ValueError(f"trigger must be a capstone Trigger or None, got {trigger!r}")
    ql = system.queue_limit if queue_limit == "entered" else queue_limit
    if ql is not None:
        ql = check_int("queue_limit", ql, low=1)
    _check_trigger_fits(system, trigger)
    retry = system.retry_policy()
    if budget and retry.budget is None:
        retry = replace(retry, budget=BUDGET)
    w = trigger.window
    has = trigger.duration_s > 0
    return Scenario(
        user_rate_per_s=system.normal_rate_per_s,
        batch_max_rows=system.batch_max_rows,
        batch_max_wait_ms=system.batch_max_wait_ms,
        batch_ms=system.commit_ms,
        cross_batch_ms=system.commit_ms if system.far_commit_ms is None else system.far_commit_ms,
        timeout_ms=system.timeout_ms,
        retry=retry,
        queue_limit=ql,
        peak=Window(1e3 * PEAK_START_S, math.inf, system.peak_factor),
        second_owner=w if has and trigger.kind == "second_owner" else None,
        slow_db=w if has and trigger.kind == "slow_db" else None,
        horizon_ms=1e3 * trigger.horizon_s,
    )


def _check_system(system) -> None:
    if not isinstance(system, YourSystem):
        raise ValueError(f"system must be a YourSystem, got {type(system).__name__}")


def _check_trigger_fits(system: YourSystem, trigger: Trigger) -> None:
    if trigger.kind == "second_owner" and trigger.duration_s > 0 and system.far_commit_ms is None:
        raise ValueError(
            "trigger kind 'second_owner' needs the far owner's merged commit, which this system does not give: "
            "set measured_far_commit_ms, or far_rtt_ms with round_trips and rtt_ms; or use "
            "Trigger(kind='slow_db', slow_factor=...)")


def _budget_of(sc: Scenario) -> PercentBudget | None:
    b = sc.retry.budget
    return b if isinstance(b, PercentBudget) else None


def band(sc: Scenario) -> tuple[float, float]:
    """The bistable band in user requests/s for ``sc``'s single owner and retries.

    Upper edge: the user rate whose batches alone fill the thread. Lower edge: the rate at which
    the storm (each request sent ``R + 1`` times, R the retries that fit in the patience) still
    fills it: ``hi / (R + 1)`` (``metastable.closed_form.band_user_rates``). A percentage budget caps the retries
    at ``p·λ + min_per_s``, so the storm also needs ``(1 + p)·λ + min ≥ hi``: the lower edge is
    the larger of the two."""
    lo, hi = band_user_rates(sc)
    b = _budget_of(sc)
    if b is not None:
        lo = max(lo, (hi - b.min_per_s) / (1.0 + b.percent))
    return min(lo, hi), hi


def zone(rate_per_s: float, band_edges: tuple[float, float]) -> str:
    """Which of :data:`ZONES` a user rate falls in."""
    lo, hi = band_edges
    r = check_number("rate_per_s", rate_per_s, low=0.0)
    if r >= hi:
        return ZONES[2]
    return ZONES[1] if r >= lo else ZONES[0]


def safe_retries(peak_rate_per_s: float, upper_edge_per_s: float) -> int | None:
    """The most retries per request that keep ``peak_rate_per_s`` below the band's lower edge
    ``upper / (R + 1)``; None if the peak is at or above the upper edge (no retry count helps)."""
    p = check_number("peak_rate_per_s", peak_rate_per_s, low=0.0, low_open=True)
    hi = check_number("upper_edge_per_s", upper_edge_per_s, low=0.0, low_open=True)
    if p >= hi:
        return None
    return max(0, math.ceil(hi / p - 1e-12) - 2)


# --------------------------------------------------------------------------- the prediction
#: A closed-form quantity closer than this (relative) to the edge it is compared with is "near":
#: the model's noise (Poisson users, jittered retries) can put the run on either side.
NEAR = 0.1
#: Fewest seeds behind a simulated verdict ("recovered in 20/20 seeds").
MIN_SEEDS = 20
#: Verdicts a report can give.
VERDICTS = ("recovers", "stuck", "near the edge", "disagree")


@dataclass(frozen=True)
class Condition:
    """One closed-form comparison behind a prediction: what is compared, whether it holds, and
    whether it is near its edge (``near``)."""

    key: str
    text: str
    holds: bool
    near: bool


@dataclass(frozen=True)
class Prediction:
    """The closed forms' prediction: ``verdict`` is "recovers", "stuck" or "near the edge".

    ``stuck = above ∨ (reaches ∧ lets ∧ ((in_band ∧ holds) ∨ slow_drain)) ∨ turned_away`` over the
    :attr:`conditions` (keys as named); "near the edge" when flipping one condition that is near
    its edge would change that answer (:attr:`flips`)."""

    verdict: str
    why: str
    conditions: tuple
    flips: tuple

    def condition(self, key: str) -> Condition:
        for c in self.conditions:
            if c.key == key:
                return c
        raise ValueError(f"key must be one of {[c.key for c in self.conditions]}, got {key!r}")


def _stuck(c: dict) -> bool:
    storm = c["in_band"] and c["holds"]
    return c["above"] or (c["reaches"] and c["lets"] and (storm or c["slow_drain"])) or c["turned_away"]


def _mean_delay_factor(jitter: str) -> float:
    return {"none": 1.0, "full": 0.5, "equal": 0.75, "decorrelated": 1.0}[jitter]


def attempts_after_rejection(system: YourSystem) -> float:
    """Attempts a user makes when every attempt is turned away at once (a full queue): the
    first plus every retry whose mean backoff still starts within the patience, capped by
    ``retry_attempts`` (and at 1,000 for an unbounded policy)."""
    _check_system(system)
    cap = min(system.retry_attempts, 1_000)
    t, k, attempts = 0.0, 0, 1
    f = _mean_delay_factor(system.retry_jitter)
    while attempts < cap:
        d = max(1.0, f * min(system.retry_cap_ms, system.retry_backoff_ms * system.retry_multiplier ** k))
        if t + d > system.retry_patience_ms:
            break
        t, k, attempts = t + d, k + 1, attempts + 1
    return float(attempts)


def mm1k_blocking(rho: float, k: int) -> float:
    """Share of arrivals an M/M/1/K queue turns away: ``(1 − ρ) ρ^K / (1 − ρ^(K+1))`` (1/(K+1)
    at ρ = 1). ``k`` counts the places, the one in service included (QueueMaxSize + 1)."""
    rho = check_number("rho", rho, low=0.0)
    k = check_int("k", k, low=1)
    if abs(rho - 1.0) < 1e-9:
        return 1.0 / (k + 1)
    if rho > 1.0:  # the same formula in 1/ρ, without overflow
        x = 1.0 / rho
        return (1.0 - x) / (1.0 - x ** (k + 1))
    return (1.0 - rho) * rho ** k / (1.0 - rho ** (k + 1))


def turned_away_share(system: YourSystem, rate_per_s: float | None = None) -> float:
    """Share of user requests a bounded queue turns away for good at ``rate_per_s`` (default: the
    peak) with normal commits: a batch that finds QueueMaxSize batches waiting is rejected
    (blocking from M/M/1/K, K = QueueMaxSize + 1, an approximation: real batches are more
    regular, so it errs high); a rejected request retries (:func:`attempts_after_rejection`),
    which adds load, up to the retry budget. Solved as a fixed point; 0 without a bound."""
    _check_system(system)
    if system.queue_limit is None:
        return 0.0
    lam = system.peak_rate_per_s if rate_per_s is None else check_number("rate_per_s", rate_per_s, low=0.0)
    mu = capacity.tps_ceiling(system.commit_ms)
    a = attempts_after_rejection(system)
    k = system.queue_limit + 1
    offered, p = lam, 0.0
    for _ in range(200):
        rho = capacity.batcher_batch_rate(min(offered, 1e6), system.batch_max_rows, system.batch_max_wait_ms) / mu
        p = mm1k_blocking(rho, k)
        amp = a if p >= 1.0 - 1e-12 else (1.0 - p ** a) / (1.0 - p)
        new = lam * amp
        if system.retry_budget_percent is not None:
            new = min(new, lam * (1.0 + system.retry_budget_percent) + BUDGET.min_per_s)
        if abs(new - offered) <= 1e-9 * max(1.0, offered):
            break
        offered = 0.5 * (offered + new)
    return float(p ** a)


def predict(system: YourSystem, trigger: Trigger | None = None) -> Prediction:
    """What the closed forms say happens to ``system`` under ``trigger`` (default: a second owner
    for 30 s), from five comparisons, each with its numbers (:class:`Condition`):

    - ``above``: the peak at or above the band's upper edge (capacity in user requests/s);
    - ``reaches``: during the trigger the queue reaches 04's timeout threshold (M − T − N̄)/N̄;
    - ``lets``: the queue limit lets a request wait past M (QueueMaxSize × N̄ + T + N_max > M);
    - ``in_band``: the peak at or above the band's lower edge (a storm feeds itself);
    - ``holds``: after the trigger the queue can hold a backlog past (M − T − N)/N (no bound, or
      QueueMaxSize above it), so the storm has somewhere to live;
    - ``slow_drain``: below the band the backlog left by the trigger still needs longer to drain to
      (M − T − N)/N than the run has left before its last 5-s block (the seed's "只能等积压队列慢慢
      消化"): within the horizon it has not recovered yet;
    - ``turned_away``: a bounded queue turns away ≥ 10% of the peak's requests for good
      (:func:`turned_away_share`), which already fails the 90% recovery yardstick.

    No condition is checked before another: the verdict is one formula over all of them."""
    _check_system(system)
    trigger = Trigger() if trigger is None else trigger
    sc = scenario(system, trigger)
    n, t_w, m = system.commit_ms, system.batch_max_wait_ms, system.timeout_ms
    lam = system.peak_rate_per_s
    lo, hi = band(sc)
    n_trig, n_max, cap_trig = _trigger_commits(system, trigger)
    d_peak = closed_forms(sc)["demand_peak"]
    growth = capacity.queue_growth_rate(d_peak, 0.0, cap_trig)
    threshold = effective_timeout_queue(sc, n_trig)
    dur = trigger.duration_s
    t_thr = threshold / growth if growth > 0 else math.inf
    lim = system.queue_limit
    lim_trig = (m - t_w - n_max) / n_trig  # largest QueueMaxSize that keeps the trigger's waits under M
    q_eff = capacity.timeout_queue_length(m, n, t_w)
    away = turned_away_share(system)
    share = 1.0 - RECOVERY_SHARE
    # the backlog at the end of the trigger, and how long it takes to drain while timed-out requests
    # are retried (R retries each, capped by a retry budget)
    backlog = min(math.inf if lim is None else lim, max(0.0, growth) * dur) if dur > 0 else 0.0
    r_storm = closed_forms(sc)["attempts_per_request_stuck"] - 1
    retried = lam * (r_storm + 1) if math.isfinite(r_storm) else 1e6
    if system.retry_budget_percent is not None:
        retried = min(retried, lam * (1.0 + system.retry_budget_percent) + BUDGET.min_per_s)
    net = capacity.tps_ceiling(n) - capacity.batcher_batch_rate(min(retried, 1e6), system.batch_max_rows, t_w)
    left_s = trigger.horizon_s - (trigger.start_s + dur) - BLOCK_S
    drain_s = 0.0 if backlog <= q_eff else (math.inf if net <= 0 else (backlog - q_eff) / net)

    def rel(a, b):
        return abs(a / b - 1.0) if b > 0 and math.isfinite(a) and math.isfinite(b) else math.inf

    conds = (
        Condition("above", f"peak {lam:.0f}/s {'≥' if lam >= hi else '<'} capacity {hi:.0f}/s (band's upper edge)",
                  lam >= hi, rel(lam, hi) < NEAR),
        Condition("reaches", "trigger never fills the queue (capacity stays above the peak's demand)" if growth <= 0
                  or dur <= 0 else (f"queue reaches the threshold {threshold:.2f} batches after {t_thr:.1f} s, "
                                    f"{'within' if t_thr <= dur else 'after'} the {dur:g}-s trigger"),
                  dur > 0 and t_thr <= dur, dur > 0 and rel(t_thr, dur) < NEAR),
        Condition("lets", "no queue bound: a request can wait past M" if lim is None else
                  (f"QueueMaxSize {lim} {'>' if lim > lim_trig else '≤'} (M − T − N_max)/N̄ = {lim_trig:.2f}: a "
                   f"request behind a full queue waits {lim * n_trig + t_w + n_max:.0f} ms "
                   f"{'>' if lim > lim_trig else '≤'} M"),
                  lim is None or lim > lim_trig, lim is not None and (rel(lim, lim_trig) < NEAR or abs(lim - lim_trig) <= 1)),
        Condition("in_band", f"peak {lam:.0f}/s {'≥' if lam >= lo else '<'} the band's lower edge {lo:.0f}/s"
                  + (" (R = ∞: no cap on attempts or patience, so any load can feed a storm)" if lo == 0 else ""),
                  lam >= lo, rel(lam, lo) < NEAR),
        Condition("holds", "no queue bound: a backlog can grow past (M − T − N)/N" if lim is None else
                  (f"QueueMaxSize {lim} {'>' if lim > q_eff else '≤'} (M − T − N)/N = {q_eff:.2f}"),
                  lim is None or lim > q_eff, lim is not None and (rel(lim, q_eff) < NEAR or abs(lim - q_eff) <= 1)),
        Condition("slow_drain", "no backlog above (M − T − N)/N to drain" if drain_s == 0 else
                  (f"the trigger's backlog ({backlog:.0f} batches) drains to {q_eff:.2f} in "
                   f"{drain_s:.1f} s {'>' if drain_s > left_s else '≤'} the {left_s:.0f} s the run has left"),
                  drain_s > left_s, 0 < drain_s and rel(drain_s, left_s) < NEAR),
        Condition("turned_away", "no queue bound: nothing turned away" if lim is None else
                  f"the bounded queue turns away {100 * away:.1f}% of the peak's requests for good "
                  f"({'≥' if away >= share else '<'} {100 * share:.0f}%)",
                  away >= share, lim is not None and share / 3 <= away <= 3 * share),
    )
    state = {c.key: c.holds for c in conds}
    stuck = _stuck(state)
    flips = tuple(c.key for c in conds if c.near and _stuck({**state, c.key: not c.holds}) != stuck)
    by = {c.key: c for c in conds}
    if stuck:
        if state["above"]:
            why = "the peak alone is above capacity (a queue bound turns timeouts into rejections but adds none)"
        elif state["turned_away"]:
            why = "the bounded queue turns too many requests away at the peak"
        elif not (state["in_band"] and state["holds"]):
            why = "the backlog the trigger leaves has not drained by the end of the run"
        else:
            why = "the trigger pushes the queue past the threshold, the queue can hold the storm, and the peak is in the band"
    else:
        reasons = []
        if not (state["reaches"] and state["lets"]):
            reasons.append("the trigger starts no timeouts" if not state["lets"] or not state["reaches"] else "")
        if not state["holds"]:
            reasons.append("after the trigger the queue bound is below the timeout threshold, so no storm can live")
        if not state["in_band"]:
            reasons.append("below the band a storm dies out")
        if state["reaches"] and state["lets"] and not state["slow_drain"] and by["slow_drain"].text[:2] != "no":
            reasons.append("the backlog drains in time")
        why = "; ".join(r for r in reasons if r)
    verdict = "near the edge" if flips else ("stuck" if stuck else "recovers")
    if flips:
        why = (f"{'stuck' if stuck else 'recovers'} by the closed forms ({why}), but "
               + ", ".join(by[k].text for k in flips) + " is within the model's noise")
    return Prediction(verdict, why, conds, flips)


def _trigger_commits(system: YourSystem, trigger: Trigger) -> tuple[float, float, float]:
    """(mean commit N̄, slowest commit N_max, capacity in commits/s) while the trigger lasts."""
    n = system.commit_ms
    if trigger.kind == "second_owner" and system.far_commit_ms is not None:
        far = system.far_commit_ms
        return (n + far) / 2.0, max(n, far), capacity.alternating_owners_tps([n, far])
    if trigger.kind == "second_owner":  # no trigger at all (duration 0) and no far owner entered
        return n, n, capacity.tps_ceiling(n)
    return n * trigger.slow_factor, n * trigger.slow_factor, capacity.tps_ceiling(n * trigger.slow_factor)
