"""Exercises of notebook 05 · Lock plus timer. Expected answers come from hotkeylab.lock_timer."""

from __future__ import annotations

from dataclasses import replace

from .. import lock_timer as lt
from ..exercises import close_to, exercise

_SC = lt.SEED_INCIDENT


@exercise("05.t_star")
def _t_star(answer):
    """SEED_INCIDENT but clients that wait 3 s: when does the last key2 request reach the business
    layer (s after the start)?"""
    return close_to(
        answer,
        lt.seed_business_share(replace(_SC, client_timeout_ms=3000.0))["t_star_s"],
        rel=0.02,
        unit="s",
        hint="The bucket empties at t0 = burst / (λ2 − r); then a request arriving at a waits "
        "(ρ − 1)(a − t0) and passes at t0 + ρ (a − t0). Which arrival waits exactly M?",
    )


@exercise("05.log_gap_at_6s")
def _log_gap_at_6s(answer):
    """SEED_INCIDENT: a key2 request arrives at t = 6 s. How far apart are its ``access: recv`` and
    ``ratelimit: ok`` lines (s, fluid closed form)?"""
    cf = lt.seed_business_share(_SC)
    return close_to(
        answer,
        (cf["rho"] - 1.0) * (6.0 - cf["t0_s"]),
        rel=0.03,
        unit="s",
        hint="The gap between the two lines is its time in the gate: (ρ − 1)(a − t0) in a FIFO "
        "convoy served at r from t0 on.",
    )


@exercise("05.md1_wait")
def _md1_wait(answer):
    """Qps 0, count 2, TimeDuration 10 ms, 30 key2 requests/s: mean wait for the mutex (ms)."""
    hold = lt.saturated_hold_ms(0.0, 2, 10.0, _SC.lookup_ms)
    return close_to(
        answer,
        lt.lock_wait_pk_ms(30.0, hold),
        rel=0.02,
        unit="ms",
        hint="Every hold is lookup + count × TimeDuration (constant): M/D/1, c² = 0.",
    )


@exercise("05.safe_key2_share")
def _safe_key2_share(answer):
    """Offered 1000/s, r = 500/s, count 2, TimeDuration 10 ms: the largest key2 share the seed's
    design survives."""
    return close_to(
        answer,
        lt.max_stable_key2_share(1000.0, 500.0, 2, 10.0, _SC.lookup_ms),
        rel=0.02,
        hint="With count 2 each holder waits for two ticks: the mutex passes r / 2 requests/s.",
    )


@exercise("05.fix_bound")
def _fix_bound(answer):
    """Design (b) at 3000 requests/s, count 2, TimeDuration 10 ms: Little's bound on the mean
    number of blocked requests."""
    return close_to(
        answer,
        lt.fixed_blocked_bound(3000.0, 2, 10.0),
        rel=0.02,
        unit="requests",
        hint="Nobody waits longer than count × TimeDuration; L = λ W.",
    )
