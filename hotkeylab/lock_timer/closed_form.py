"""05 · Closed forms: the mutex's capacity, the convoy's growth, the limiter's ceiling.

Each formula is checked against the simulation in tests/test_lock_timer.py.
"""

from __future__ import annotations

import math

from .. import capacity
from ..validate import check_int, check_number
from .scenario import Scenario

__all__ = [
    "saturated_hold_ms", "saturated_hold_is_exact", "seed_lock_capacity_per_s", "lock_utilisation",
    "convoy_growth_per_s", "lock_wait_pk_ms", "admitted_ceiling_per_s", "fixed_blocked_bound",
    "max_stable_key2_share", "seed_business_share",
]


# --------------------------------------------------------------------------- closed forms
def saturated_hold_ms(
    rate_per_s: float, count: int, time_duration_ms: float, lookup_ms: float = 0.0
) -> float:
    """Mean time a key2 request holds the mutex in the seed's design once the bucket is empty
    (every holder finds it empty and the next one is always waiting), ms.

    With ``τ = 1000 / r`` (the tick interval), ``L`` the lookup and ``W = L + count × TD`` (the
    lookup plus Taken's timer), every token the ticker makes goes to the current holder:

    - ``r = 0``: every timer fires, ``hold = W``;
    - ``W >= count × τ``: the holder takes the lock just after a tick (its predecessor's last
      token) and gets its ``count``-th token ``count`` ticks later; the lookup overlaps the wait,
      so ``hold = max(L, count × τ)``. The mutex passes exactly ``r / count`` requests/s;
    - ``count = 1``, ``W < τ``: holders time out one after another, ``W`` each, until a tick
      lands inside one: ``n = ceil(τ / W)`` holders per tick, ``hold = τ / n`` (one admitted,
      ``n − 1`` refused with "not get bucket");
    - ``count >= 2``, ``W < (count − 1) × τ``: no timer is long enough for ``count`` ticks;
      every holder times out, ``hold = W``, and every token is wasted;
    - ``count >= 2``, ``(count − 1) × τ <= W < count × τ``: whether a holder succeeds depends
      on where the ticks fall in its window; no closed form here. Returns ``W``, an upper bound
      on the mean hold (so ``1000 / W`` is a lower bound on the capacity): see
      :func:`saturated_hold_is_exact`.

    Exact (the simulation passes exactly ``1000 / hold`` holders per second) in every case but
    the last, up to ties (a tick at the very instant a timer fires).
    While the bucket has tokens the hold is ``L`` alone: microseconds.
    """
    r = check_number("rate_per_s", rate_per_s, low=0.0)
    c = check_int("count", count, low=1)
    td = check_number("time_duration_ms", time_duration_ms, low=0.0, low_open=True)
    lk = check_number("lookup_ms", lookup_ms, low=0.0)
    window = lk + c * td
    if r == 0:
        return window
    tau = 1000.0 / r
    if window >= c * tau:
        return max(lk, c * tau)
    if c == 1:
        return tau / math.ceil(tau / window)
    return window


def saturated_hold_is_exact(
    rate_per_s: float, count: int, time_duration_ms: float, lookup_ms: float = 0.0
) -> bool:
    """Whether :func:`saturated_hold_ms` is exact for these parameters (False only in the band
    ``count >= 2``, ``(count − 1) × τ <= lookup + count × TD < count × τ``, where it is a bound)."""
    r = check_number("rate_per_s", rate_per_s, low=0.0)
    c = check_int("count", count, low=1)
    td = check_number("time_duration_ms", time_duration_ms, low=0.0, low_open=True)
    lk = check_number("lookup_ms", lookup_ms, low=0.0)
    if r == 0 or c == 1:
        return True
    tau, window = 1000.0 / r, lk + c * td
    return window >= c * tau or window < (c - 1) * tau


def seed_lock_capacity_per_s(
    rate_per_s: float, count: int, time_duration_ms: float, lookup_ms: float = 0.0
) -> float:
    """Key2 requests/s the mutex passes in the seed's design when the bucket is empty:
    ``1000 / saturated_hold_ms`` (exactly ``r / count`` when ``lookup + count × TD >= count / r``:
    every holder then gets its tokens; otherwise some of those passed are refused)."""
    return capacity.tps_ceiling(saturated_hold_ms(rate_per_s, count, time_duration_ms, lookup_ms))


def lock_utilisation(key2_per_s: float, hold_ms: float) -> float:
    """Offered utilisation of the mutex ``ρ = λ2 × hold`` (a convoy forms when ρ >= 1)."""
    return capacity.utilisation(key2_per_s, hold_ms)


def convoy_growth_per_s(
    key2_per_s: float,
    rate_per_s: float,
    count: int,
    time_duration_ms: float,
    lookup_ms: float = 0.0,
) -> float:
    """How fast the requests blocked on the mutex pile up in the seed's design, per second:
    ``max(0, λ2 − seed_lock_capacity_per_s)``. After ``t`` seconds about ``growth × t`` are
    blocked, and a request arriving at ``t`` waits about ``(ρ − 1) × t`` for the mutex."""
    lam = check_number("key2_per_s", key2_per_s, low=0.0)
    return max(0.0, lam - seed_lock_capacity_per_s(rate_per_s, count, time_duration_ms, lookup_ms))


def lock_wait_pk_ms(key2_per_s: float, hold_ms: float, hold_scv: float = 0.0) -> float:
    """Mean wait for the mutex, M/G/1 Pollaczek–Khinchine, ms (infinite when ρ >= 1).

    Applies when the key2 requests arrive as a Poisson stream and the holds are independent of
    each other: e.g. when every holder finds the bucket empty and its timer fires (``r = 0``:
    hold = ``lookup + count × TimeDuration``, constant, ``hold_scv = 0``: M/D/1).
    """
    return capacity.pk_mean_wait_ms(key2_per_s, hold_ms, hold_scv)


def admitted_ceiling_per_s(offered_per_s: float, rate_per_s: float, count: int) -> float:
    """Upper bound on admitted requests/s through one limiter in the long run:
    ``min(λ, r / count)`` - whatever the design, a limiter hands out at most r tokens/s
    (plus one bucketful, ``burst``, once)."""
    lam = check_number("offered_per_s", offered_per_s, low=0.0)
    r = check_number("rate_per_s", rate_per_s, low=0.0)
    c = check_int("count", count, low=1)
    return min(lam, r / c)


def fixed_blocked_bound(offered_per_s: float, count: int, time_duration_ms: float) -> float:
    """Little's law bound on the mean number of blocked requests in designs ``"fix"`` and
    ``"reserve"``: nobody waits longer than ``count × TimeDuration``, so
    ``L = λ W <= λ × count × TimeDuration``, whatever the overload."""
    c = check_int("count", count, low=1)
    td = check_number("time_duration_ms", time_duration_ms, low=0.0, low_open=True)
    return capacity.littles_law(rate_per_s=offered_per_s, time_in_system_ms=c * td)


def max_stable_key2_share(
    offered_per_s: float,
    rate_per_s: float,
    count: int,
    time_duration_ms: float,
    lookup_ms: float = 0.0,
) -> float:
    """Largest key2 share the seed's design survives at this offered load (``ρ < 1`` once the
    bucket is empty): ``min(1, seed_lock_capacity_per_s / λ)``. A load test whose mix keeps the
    key2 share below this never sees the convoy."""
    lam = check_number("offered_per_s", offered_per_s, low=0.0, low_open=True)
    return min(1.0, seed_lock_capacity_per_s(rate_per_s, count, time_duration_ms, lookup_ms) / lam)


def seed_business_share(sc: Scenario, horizon_ms: float | None = None) -> dict:
    """What reaches the business layer in the seed's design, fluid FIFO convoy (count 1).

    The bucket starts full (``burst`` tokens) and drains at ``λ2 − r`` until ``t0 = burst /
    (λ2 − r)``; from then on key2 requests queue for the mutex, which passes ``μ = r`` per second
    (every holder waits one tick: requires ``lookup + TimeDuration >= 1000 / r``). With
    ``ρ = λ2 / μ > 1`` a request arriving at ``a >= t0`` passes the gate at ``t0 + ρ (a − t0)``,
    after waiting ``(ρ − 1)(a − t0)``. Its client (timeout M) is still there only if that wait is
    at most M: only key2 requests arriving before ``a* = t0 + M / (ρ − 1)`` are forwarded, and
    the last of them passes at ``t* = t0 + ρ M / (ρ − 1)``. After ``t*`` every token the key2
    limiter hands out goes to a request whose client has left, and the business layer sees only
    key1 traffic (the lock-free path, ``min(λ1, r)``).

    Returns ``t0_s``, ``a_star_s``, ``t_star_s`` (infinite when ``ρ <= 1``), ``rho``,
    ``run_share`` (forwarded / offered over ``[0, horizon]``, ignoring the few requests still in
    the gate at the end that will make it) and ``late_share`` (after ``t*``).
    """
    if not isinstance(sc, Scenario):
        raise ValueError(f"sc must be a lock_timer.Scenario, got {type(sc).__name__}")
    if sc.count != 1:
        raise ValueError(f"count must be 1 for seed_business_share, got {sc.count!r}")
    if sc.rate_per_s <= 0 or sc.lookup_ms + sc.time_duration_ms < 1000.0 / sc.rate_per_s:
        raise ValueError(
            f"rate_per_s must be > 0 with lookup_ms + time_duration_ms >= 1000 / rate_per_s "
            f"(every holder gets its token), got rate_per_s={sc.rate_per_s!r}"
        )
    t_end = sc.horizon_ms if horizon_ms is None else horizon_ms
    t_s = check_number("horizon_ms", t_end, low=0.0, low_open=True) / 1000.0
    lam, lam1, lam2, r = sc.offered_per_s, sc.key1_per_s, sc.key2_per_s, sc.rate_per_s
    m_s = sc.client_timeout_ms / 1000.0
    key1 = min(lam1, r) * t_s
    mu = seed_lock_capacity_per_s(r, 1, sc.time_duration_ms, sc.lookup_ms)
    rho = lam2 / mu
    if rho <= 1:
        share = (key1 + lam2 * t_s) / (lam * t_s) if lam > 0 else 0.0
        return dict(t0_s=math.inf, a_star_s=math.inf, t_star_s=math.inf, rho=rho,
                    run_share=share, late_share=share)
    t0 = sc.burst / (lam2 - r) if sc.start_full else 0.0
    a_star = t0 + m_s / (rho - 1)
    t_star = t0 + rho * m_s / (rho - 1)
    last_through = t0 + (t_s - t0) / rho if t_s > t0 else t_s  # the last arrival out by T
    key2 = lam2 * min(a_star, last_through, t_s)
    return dict(
        t0_s=t0,
        a_star_s=a_star,
        t_star_s=t_star,
        rho=rho,
        run_share=(key1 + key2) / (lam * t_s),
        late_share=min(lam1, r) / lam,
    )
