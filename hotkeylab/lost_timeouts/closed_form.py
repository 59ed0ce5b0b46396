"""08 · Closed forms: the wheel's span and rounds, calls in flight when healthy, the leak's rate and start
t₀, GC's share of time, and a fluid model of the leak.
"""

from __future__ import annotations

import math

import numpy as np

from .. import capacity
from ..validate import check_int, check_number
from .scenario import (  # leak_start and leak_rate_per_s live with the scenario that reads them
    DEAD_GC_SHARE,
    DUBBO_SLOTS,
    DUBBO_TICK_MS,
    SEED_INCIDENT,
    Scenario,
    leak_rate_per_s,
    leak_start,
)

__all__ = [
    "wheel_span_ms",
    "wheel_rounds",
    "healthy_in_flight",
    "healthy_bound",
    "leak_rate_per_s",
    "leak_start",
    "p_shutdown_at_kill",
    "leaked_calls",
    "gc_fraction",
    "heap_fraction_at_gc",
    "fluid",
]


# =========================================================================== closed forms
def wheel_span_ms(tick_ms: float = DUBBO_TICK_MS, slots: int = DUBBO_SLOTS) -> float:
    """One turn of the wheel: ``tick_ms × slots`` (15 360 ms for dubbo's 30 ms × 512)."""
    return check_number("tick_ms", tick_ms, low=0.0, low_open=True) * check_int("slots", slots, low=1)


def wheel_rounds(delay_ms: float, tick_ms: float = DUBBO_TICK_MS, slots: int = DUBBO_SLOTS) -> int:
    """Full turns a timeout of ``delay_ms`` waits when filed right at a tick (wheel started at 0,
    added at time 0): ``floor(delay / tick) // slots``."""
    d = check_number("delay_ms", delay_ms, low=0.0)
    tk = check_number("tick_ms", tick_ms, low=0.0, low_open=True)
    s = check_int("slots", slots, low=1)
    return int(math.floor(d / tk)) // s


def healthy_in_flight(
    rate_per_s: float,
    hung_share: float,
    timeout_ms: float,
    service_ms: float,
    tick_ms: float = DUBBO_TICK_MS,
) -> float:
    """Little's law for the calls in flight when timeouts work: ``L = λ × W`` with
    ``W = (1 − s) × service + s × (timeout + tick / 2)``.

    A call to the hung provider (share ``s``) lives until its timeout fires, on average half a
    tick after its deadline (the wheel fires at the first tick after the deadline). Calls to the
    healthy providers live one service time (exponential, mean ``service_ms`` << timeout).
    """
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    s = check_number("hung_share", hung_share, low=0.0, high=1.0)
    t = check_number("timeout_ms", timeout_ms, low=0.0, low_open=True)
    sv = check_number("service_ms", service_ms, low=0.0, low_open=True)
    tk = check_number("tick_ms", tick_ms, low=0.0, low_open=True)
    ok_ms = sv * (1.0 - math.exp(-(t + tk / 2.0) / sv))  # E[min(S, timeout)] ≈ service
    w = (1.0 - s) * ok_ms + s * (t + tk / 2.0)
    return capacity.littles_law(rate_per_s=lam, time_in_system_ms=w)


def healthy_bound(rate_per_s: float, timeout_ms: float, tick_ms: float = DUBBO_TICK_MS) -> float:
    """The most calls in flight, on average, when timeouts work: ``λ × (timeout + tick)``
    (no call outlives its deadline by more than one tick)."""
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    t = check_number("timeout_ms", timeout_ms, low=0.0, low_open=True)
    tk = check_number("tick_ms", tick_ms, low=0.0, low_open=True)
    return capacity.littles_law(rate_per_s=lam, time_in_system_ms=t + tk)


def p_shutdown_at_kill(rate_per_s: float, service_ms: float) -> float:
    """Chance that a provider killed while answering normally holds at least one pending call
    (so ``closeChannel`` shuts the executor down): ``1 − exp(−λ_p × S)``.

    The calls pending on a provider form an M/G/∞ queue (Poisson arrivals at ``λ_p``, each
    pending one service time, mean ``S``): their number is Poisson with mean ``λ_p S``.
    """
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    sv = check_number("service_ms", service_ms, low=0.0)
    return 1.0 - math.exp(-lam * sv / 1000.0)


def leaked_calls(rate_per_s: float, hung_share: float, t_ms: float, leak_start_ms: float) -> float:
    """Futures stuck at time ``t_ms`` (no GC feedback): ``λ_hung × (t − t0)`` after ``t0``."""
    t = check_number("t_ms", t_ms, low=0.0)
    t0 = check_number("leak_start_ms", leak_start_ms, low=0.0)
    return leak_rate_per_s(rate_per_s, hung_share) * max(0.0, t - t0) / 1000.0


def gc_fraction(heap_used_fraction: float, gc_cost: float) -> float:
    """Share of time in full GC when live data fills ``u`` of the heap: ``min(1, k u / (1 − u))``.

    The simple model: a full GC runs each time the free heap ``(1 − u) H`` fills with promoted
    objects (so their frequency grows as ``1 / (1 − u)``) and each one marks the live data
    (so its pause grows as ``u``). ``k`` (``gc_cost``) sets the level at normal occupancy.
    """
    u = check_number("heap_used_fraction", heap_used_fraction, low=0.0)
    k = check_number("gc_cost", gc_cost, low=0.0)
    if u >= 1.0:
        return 1.0
    return min(1.0, k * u / (1.0 - u))


def heap_fraction_at_gc(gc_share: float, gc_cost: float) -> float:
    """The heap occupancy at which the GC share reaches ``gc_share``: ``u = g / (g + k)``."""
    g = check_number("gc_share", gc_share, low=0.0, high=1.0)
    k = check_number("gc_cost", gc_cost, low=0.0)
    if g == 0.0:
        return 0.0
    return g / (g + k)


# =========================================================================== fluid model
def fluid(scenario: Scenario = SEED_INCIDENT, dt_ms: float | None = None) -> dict:
    """The closed forms integrated over time with the GC feedback (no randomness, milliseconds
    of CPU): stuck futures grow at ``λ × serving × s`` once the leak starts; the in-flight count
    is that plus Little's ``λ W``; heap, GC share, serving share and CPU follow.

    Steps of ``dt_ms`` (default ``gc_sample_ms``, as the simulation re-reads the heap). Returns
    arrays ``t`` (s), ``in_flight``, ``stuck``, ``heap_mb``, ``gc``, ``cpu``, ``serving`` and
    the times (s) ``gc50_s`` (GC share first ≥ 50%) and ``dead_s`` (≥ ``DEAD_GC_SHARE``, ours),
    None if never.
    """
    sc = scenario
    if not isinstance(sc, Scenario):
        raise ValueError(f"scenario must be a lost_timeouts.Scenario, got {type(sc).__name__}")
    dt = sc.gc_sample_ms if dt_ms is None else check_number("dt_ms", dt_ms, low=1.0, high=sc.horizon_ms)
    n = int(math.floor(sc.horizon_ms / dt + 1e-9))
    t0 = sc.leak_start_ms
    lam = sc.rate_per_s
    mu = sc.node_capacity_per_s
    cap = math.inf if sc.max_outstanding is None else float(sc.max_outstanding)
    hung_w = sc.timeout_ms + sc.tick_ms / 2.0
    ok_w = sc.service_ms
    out = {k: np.zeros(n) for k in ("t", "in_flight", "stuck", "heap_mb", "gc", "cpu", "serving")}
    stuck = 0.0
    serving = 1.0
    for i in range(n):
        t = i * dt
        s = sc.share_of_hung(t)
        hung = sc.hang_at_ms is not None and t >= sc.hang_at_ms
        leaking = t0 is not None and t >= t0
        served = lam * serving
        if hung and not leaking:
            little = served * ((1.0 - s) * ok_w + min(s * hung_w, cap * 1000.0 / max(served, 1e-12))) / 1000.0
        elif hung:
            little = served * (1.0 - s) * ok_w / 1000.0
        else:
            little = served * ok_w / 1000.0
        in_flight = stuck + little
        heap = sc.base_live_mb + in_flight * sc.retained_kb / 1024.0
        g = gc_fraction(heap / sc.heap_mb, sc.gc_cost)
        serving = min(1.0, (1.0 - g) * mu / lam)
        for k, v in (("t", t / 1000.0), ("in_flight", in_flight), ("stuck", stuck), ("heap_mb", heap),
                     ("gc", g), ("cpu", min(1.0, g + serving * lam / mu)), ("serving", serving)):
            out[k][i] = v
        if t0 is not None:
            overlap = max(0.0, (t + dt) - max(t, t0))
            if sc.hang_at_ms is not None:
                overlap = min(overlap, max(0.0, (t + dt) - max(t, sc.hang_at_ms)))
            stuck = min(cap, stuck + lam * serving * s * overlap / 1000.0)

    def first(mask):
        idx = np.flatnonzero(mask)
        return float(out["t"][idx[0]]) if idx.size else None

    out["gc50_s"] = first(out["gc"] >= 0.5)
    out["dead_s"] = first(out["gc"] >= DEAD_GC_SHARE)
    return out
