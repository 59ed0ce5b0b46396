"""08 · The timing wheel measured: a wheel caught mid-turn, the work of one tick, how late timeouts fire.
"""

from __future__ import annotations

import numpy as np

from ..sim import PoissonSource, make_rng
from ..validate import check_int, check_number
from .closed_form import wheel_span_ms
from .scenario import (
    _MAX_HORIZON_MS,
    _MAX_RATE,
    DUBBO_SLOTS,
    DUBBO_TICK_MS,
)
from .timer import _ST_INIT, HashedWheelTimer

__all__ = [
    "demo_wheel",
    "measure_tick_work",
    "measure_lateness",
]


# =========================================================================== wheel experiments
#: The most ticks and the most calls one wheel experiment simulates (bounds its time: about a
#: second of Python per million; the notebook's largest uses about 10^4 ticks and 10^4 calls).
MAX_WHEEL_TICKS = 2_000_000
MAX_WHEEL_CALLS = 2_000_000


def _check_wheel_work(span_ms: float, tick_ms: float, calls: float, what: str) -> None:
    """Refuse (ValueError) an experiment that would run more than the caps above."""
    tick = check_number("tick_ms", tick_ms, low=1.0, high=3_600_000.0)
    ticks = span_ms / tick
    if ticks > MAX_WHEEL_TICKS:
        raise ValueError(f"{what} / tick_ms must be <= {MAX_WHEEL_TICKS:,} ticks, got {span_ms:g} ms / {tick:g} ms")
    if calls > MAX_WHEEL_CALLS:
        raise ValueError(f"rate_per_s × {what} must be <= {MAX_WHEEL_CALLS:,} calls, got about {calls:,.0f}")


def _check_calls(rate_per_s, timeout_ms, long_timeout_ms, long_share) -> float:
    """Check the calls that feed a wheel (:func:`_calls`); returns the rate."""
    lam = check_number("rate_per_s", rate_per_s, low=0.0, low_open=True, high=_MAX_RATE)
    check_number("timeout_ms", timeout_ms, low=0.0, high=3_600_000.0)
    check_number("long_timeout_ms", long_timeout_ms, low=0.0, high=3_600_000.0)
    check_number("long_share", long_share, low=0.0, high=1.0)
    return lam


def _calls(rng, rate_per_s: float, timeout_ms: float, long_timeout_ms: float, long_share: float):
    """Calls arriving at ``rate_per_s`` (Poisson): ``(issue time, timeout)`` pairs, a share
    ``long_share`` of them with ``long_timeout_ms``, the others ``timeout_ms``."""
    t = 0.0
    gaps = PoissonSource(rng, rate_per_s, block=1)  # one gap at a time: each call also draws its timeout
    while True:
        t += gaps.next_gap()
        yield t, (long_timeout_ms if rng.random() < long_share else timeout_ms)


def demo_wheel(
    rate_per_s: float = 100.0,
    timeout_ms: float = 1000.0,
    long_timeout_ms: float = 20_000.0,
    long_share: float = 0.1,
    at_ms: float = 2000.0,
    seed: int = 0,
    tick_ms: float = DUBBO_TICK_MS,
    slots: int = DUBBO_SLOTS,
) -> HashedWheelTimer:
    """A wheel caught at ``at_ms`` after calls arrived at ``rate_per_s`` (Poisson), a share
    ``long_share`` of them with a long timeout (more than one turn: they carry rounds)."""
    lam = _check_calls(rate_per_s, timeout_ms, long_timeout_ms, long_share)
    at = check_number("at_ms", at_ms, low=0.0, low_open=True, high=_MAX_HORIZON_MS)
    _check_wheel_work(at, tick_ms, lam * at / 1000.0, "at_ms")
    wheel = HashedWheelTimer(tick_ms, slots)
    for t, d in _calls(make_rng(seed), lam, timeout_ms, long_timeout_ms, long_share):
        if t > at_ms:
            break
        wheel.advance_to(t)
        wheel.new_timeout(None, d, t)
    wheel.advance_to(at_ms)
    wheel.advance()  # file the pending ones so the picture shows them
    return wheel


def measure_tick_work(
    rate_per_s: float = 100.0,
    timeout_ms: float = 1000.0,
    long_timeout_ms: float = 20_000.0,
    long_share: float = 0.1,
    duration_ms: float = 60_000.0,
    seed: int = 0,
    tick_ms: float = DUBBO_TICK_MS,
    slots: int = DUBBO_SLOTS,
) -> dict:
    """What one tick of the wheel costs, measured: calls arrive at ``rate_per_s`` (Poisson, a share
    ``long_share`` with ``long_timeout_ms``, the others ``timeout_ms``), none answered (every
    timeout fires: the worst case). For each tick after the first ``long_timeout_ms`` + one
    turn (steady state) we count the timeouts the tick *touches*: the new ones it files from the
    pending list plus every timeout in the one bucket it visits (expired, or a round taken off),
    and the timeouts live in the wheel at that tick (what a timer that checks every pending
    timeout each tick would touch). Returns arrays ``touched`` and ``live``."""
    lam = _check_calls(rate_per_s, timeout_ms, long_timeout_ms, long_share)
    dur = check_number("duration_ms", duration_ms, low=1.0, high=3_600_000.0)
    warm = max(timeout_ms, long_timeout_ms) + wheel_span_ms(tick_ms, slots)
    _check_wheel_work(warm + dur, tick_ms, lam * (warm + dur) / 1000.0, "(warm-up + duration_ms)")
    wheel = HashedWheelTimer(tick_ms, slots)
    touched, live = [], []
    calls = _calls(make_rng(seed), lam, timeout_ms, long_timeout_ms, long_share)
    t, d = next(calls)
    while wheel.next_tick_ms <= warm + dur:
        while t < wheel.next_tick_ms:
            wheel.new_timeout(None, d, t)
            t, d = next(calls)
        if wheel.next_tick_ms > warm:
            bucket = wheel._buckets[wheel.tick % wheel.slots]
            filed = sum(1 for x in wheel._pending if x.state == _ST_INIT)
            in_bucket_after_filing = len(bucket) + sum(
                1 for x in wheel._pending if x.state == _ST_INIT and wheel._fire_tick(x.deadline_ms) <= wheel.tick)
            touched.append(filed + in_bucket_after_filing)
            live.append(wheel.live)
        wheel.advance()
    return {"touched": np.array(touched), "live": np.array(live)}


def measure_lateness(
    n: int = 2000,
    max_delay_ms: float = 40_000.0,
    seed: int = 0,
    tick_ms: float = DUBBO_TICK_MS,
    slots: int = DUBBO_SLOTS,
) -> np.ndarray:
    """Add ``n`` timeouts at random times with random delays (up to ``max_delay_ms``, so some
    wait more than one turn), run the wheel until all fired, and return ``fired − deadline`` (ms)
    for each: never negative, never more than one tick."""
    k = check_int("n", n, low=1, high=1_000_000)
    dmax = check_number("max_delay_ms", max_delay_ms, low=0.0, high=3_600_000.0)
    _check_wheel_work(10_000.0 + dmax, tick_ms, 0.0, "(10 s + max_delay_ms)")
    rng = make_rng(seed)
    wheel = HashedWheelTimer(tick_ms, slots)
    adds = np.sort(rng.uniform(0.0, 10_000.0, k))
    delays = rng.uniform(0.0, dmax, k)
    handles = []
    for t, d in zip(adds.tolist(), delays.tolist(), strict=True):
        wheel.advance_to(t)
        handles.append(wheel.new_timeout(None, d, t))
    while wheel.live:
        wheel.advance()
    return np.array([h.fired_at_ms - h.deadline_ms for h in handles])
