"""Exercises of notebook 05 · Lock plus timer. Expected answers come from hotkeylab.lock_timer."""

from __future__ import annotations

from dataclasses import replace

from .. import lock_timer as lt
from ..exercises import numeric

_SC = lt.SEED_INCIDENT


@numeric("05.t_star", rel=0.02, unit="s",
         hint="The bucket empties at t0 = burst / (λ2 − r); then a request arriving at a waits "
         "(ρ − 1)(a − t0) and passes at t0 + ρ (a − t0). Which arrival waits exactly M?")  # fmt: skip
def t_star() -> float:
    """SEED_INCIDENT but clients that wait 3 s: when does the last key2 request reach the business
    layer (s after the start)?"""
    return lt.seed_business_share(replace(_SC, client_timeout_ms=3000.0))["t_star_s"]


@numeric("05.log_gap_at_6s", rel=0.03, unit="s",
         hint="The gap between the two lines is its time in the gate: (ρ − 1)(a − t0) in a FIFO "
         "convoy served at r from t0 on.")  # fmt: skip
def log_gap_at_6s() -> float:
    """SEED_INCIDENT: a key2 request arrives at t = 6 s. How far apart are its ``access: recv`` and
    ``ratelimit: ok`` lines (s, fluid closed form)?"""
    cf = lt.seed_business_share(_SC)
    return (cf["rho"] - 1.0) * (6.0 - cf["t0_s"])


@numeric("05.md1_wait", rel=0.02, unit="ms",
         hint="Every hold is lookup + count × TimeDuration (constant): M/D/1, c² = 0.")
def md1_wait() -> float:
    """Qps 0, count 2, TimeDuration 10 ms, 30 key2 requests/s: mean wait for the mutex (ms)."""
    return lt.lock_wait_pk_ms(30.0, lt.saturated_hold_ms(0.0, 2, 10.0, _SC.lookup_ms))


@numeric("05.safe_key2_share", rel=0.02,
         hint="With count 2 each holder waits for two ticks: the mutex passes r / 2 requests/s.")
def safe_key2_share() -> float:
    """Offered 1000/s, r = 500/s, count 2, TimeDuration 10 ms: the largest key2 share the seed's
    design survives."""
    return lt.max_stable_key2_share(1000.0, 500.0, 2, 10.0, _SC.lookup_ms)


@numeric("05.fix_bound", rel=0.02, unit="requests", hint="Nobody waits longer than count × TimeDuration; L = λ W.")
def fix_bound() -> float:
    """Design (b) at 3000 requests/s, count 2, TimeDuration 10 ms: Little's bound on the mean
    number of blocked requests."""
    return lt.fixed_blocked_bound(3000.0, 2, 10.0)
