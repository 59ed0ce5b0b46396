"""Exercises of notebook 05 · Lock plus timer. Expected answers come from hotkeylab.lock_timer."""

from __future__ import annotations

from .. import lock_timer as lt
from ..exercises import close_to, exercise

_SC = lt.SEED_INCIDENT


@exercise("05.convoy_after_10s")
def _convoy_after_10s(answer):
    """Seed's design, SEED_INCIDENT numbers: requests blocked after 10 s (closed form)."""
    growth = lt.convoy_growth_per_s(
        _SC.key2_per_s, _SC.rate_per_s, _SC.count, _SC.time_duration_ms, _SC.lookup_ms
    )
    return close_to(
        answer,
        growth * 10.0,
        rel=0.05,
        unit="requests",
        hint="The mutex passes r / count key2 requests/s once the bucket is empty; the rest pile up.",
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
