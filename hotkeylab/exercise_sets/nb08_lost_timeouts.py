"""Exercises of notebook 08 · Lost timeouts. Expected answers come from hotkeylab.lost_timeouts."""

from __future__ import annotations

from .. import lost_timeouts as lt
from ..exercises import as_number, exercise, numeric

_SC = lt.SEED_INCIDENT


def _whole(exercise_id: str, unit: str, hint: str):
    """Decorator: register the function computing a whole-number answer, which must be met exactly."""

    def register(expected):
        @exercise(exercise_id)
        def check_answer(answer):
            k = expected()
            a = as_number(answer)
            if a is None:
                return False, f"expected a whole number of {unit}, got {answer!r}"
            if a == k:
                return True, f"{k} {unit}: right."
            return False, f"{a:g} {unit} is {'too high' if a > k else 'too low'}. {hint}"

        return expected

    return register


@numeric("08.healthy_in_flight", rel=0.02, unit="calls",
         hint="Little: L = λ W. A call to the hung provider lives timeout + half a tick on average; "
         "the others one service time.")  # fmt: skip
def healthy_in_flight() -> float:
    """200 calls/s, a fifth of them to the hung provider, timeout 2000 ms, service 20 ms, tick
    30 ms, timeouts working: mean calls in flight."""
    return lt.healthy_in_flight(200.0, 0.2, 2000.0, 20.0, 30.0)


@numeric("08.minutes_to_fill", rel=0.02, unit="min",
         hint="Leak in MB/s = λ_hung × KB per call / 1024, with λ_hung = λ / live providers.")
def minutes_to_fill_input() -> float:
    """Exercise 2's machine: 2048 MB heap, 256 MB base live data, 32 KB per stuck call, 100 calls/s
    over 8 live providers with one hung, no GC feedback. Minutes after the leak starts until the
    stuck futures fill the free heap."""
    per_s_mb = lt.leak_rate_per_s(100.0, 1.0 / 8.0) * 32.0 / 1024.0
    return (2048.0 - 256.0) / per_s_mb / 60.0


@_whole("08.wheel_rounds", "rounds", "Ticks to wait = floor(delay / tick); each round is one turn of 512 ticks.")
def wheel_rounds() -> int:
    """dubbo's wheel (30 ms × 512 slots): how many full rounds does a 40 s timeout wait (added
    right at a tick)?"""
    return lt.wheel_rounds(40_000.0)


SAFE_CAP_REFUSAL = 1e-6


@_whole("08.safe_cap", "calls",
        "Pending calls are Poisson with mean λ_hung × (timeout + tick); a call is refused if it finds "
        "cap or more pending. Use scipy.stats.poisson.ppf(1 - 1e-6, mean) + 1.")  # fmt: skip
def safe_cap(rate_per_s: float = 100.0, hung_share: float = 0.25, timeout_ms: float = 1000.0,
             tick_ms: float = 30.0, refusal: float = SAFE_CAP_REFUSAL) -> int:
    """Smallest cap with P(N >= cap) < refusal, N ~ Poisson(λ_hung × (timeout + tick)) calls pending
    on the hung provider (M/G/∞, worst case: every call lives timeout + one tick).

    The exercise (its defaults): 100 calls/s, a quarter to the hung provider, timeout 1000 ms, tick
    30 ms, Poisson arrivals: the smallest per-provider cap that refuses fewer than one call in a
    million while timeouts work (refused if it finds `cap` pending)."""
    from scipy.stats import poisson

    mean = lt.leak_rate_per_s(rate_per_s, hung_share) * (timeout_ms + tick_ms) / 1000.0
    return int(poisson.ppf(1.0 - refusal, mean)) + 1


@numeric("08.p_shutdown", rel=0.02, unit="",
         hint="closeChannel shuts the executor down only if a call is pending on the channel. The "
         "pending calls are Poisson with mean λ_p × S; you need P(at least one).")  # fmt: skip
def p_shutdown() -> float:
    """A provider gets 30 calls/s and answers in 50 ms on average (exponential). It is killed
    cleanly, with no stall. What is the probability that the kill shuts the executor down?"""
    return lt.p_shutdown_at_kill(30.0, 50.0)


@numeric("08.t0", rel=0.0002, unit="s",
         hint="A call's timeout is lost if it fires after the shutdown; it fires T plus half a tick, "
         "on average, after the call. And nothing leaks before the hang.")  # fmt: skip
def t0() -> float:
    """The hung provider hangs at 10 s; the executor is shut down at 60 s; timeout 3000 ms, tick
    30 ms. From when (in seconds) do calls to the hung provider leak, on average?"""
    return lt.leak_start(10_000.0, 60_000.0, 3000.0, 30.0) / 1000.0


@numeric("08.gc_cost_limit", rel=0.02, unit="",
         hint="At the model's threshold u = g / (g + k). The JVM needs u > 1 − 0.02. Solve for k.")
def gc_cost_limit() -> float:
    """In the model, the GC share is k u / (1 − u). The model calls the machine dead when GC takes
    98% of the time; the JVM throws 'GC overhead limit exceeded' only if, in addition, less than
    2% of the heap is free. Up to which k (gc_cost) does the JVM's rule hold at the moment the
    model calls the machine dead?"""
    g, f = lt.JVM_GC_TIME_LIMIT, lt.JVM_GC_HEAP_FREE_LIMIT
    return g * f / (1.0 - f)
