"""09 · Closed forms of a call's holding time under a timeout: the worker pool's capacity (§4)
and the core path with a bypassed non-core step (§6). Service times are gamma (shape 1:
exponential); SciPy is imported only for other shapes.
"""

from __future__ import annotations

import math

from .. import capacity
from ..validate import check_int, check_number, check_probability


def mean_capped_ms(service_ms: float, timeout_ms: float, shape: float = 1.0) -> float:
    """``E[min(X, T)]`` for a gamma service time X (mean ``service_ms``, shape ``k``):
    ``m·F_{k+1}(T) + T·(1 − F_k(T))``; for exponential service ``m·(1 − e^{−T/m})``."""
    m = check_number("service_ms", service_ms, low=0.0, low_open=True)
    t = check_number("timeout_ms", timeout_ms, low=0.0, allow_inf=True)
    k = check_number("shape", shape, low=0.0, low_open=True)
    if math.isinf(t):
        return m
    if k == 1.0:
        return m * -math.expm1(-t / m)
    from scipy.stats import gamma

    scale = m / k
    return float(m * gamma.cdf(t, a=k + 1, scale=scale) + t * gamma.sf(t, a=k, scale=scale))


def share_within(service_ms: float, timeout_ms: float, shape: float = 1.0) -> float:
    """``P(X <= T)``: the share of calls that answer before the timeout."""
    m = check_number("service_ms", service_ms, low=0.0, low_open=True)
    t = check_number("timeout_ms", timeout_ms, low=0.0, allow_inf=True)
    k = check_number("shape", shape, low=0.0, low_open=True)
    if math.isinf(t):
        return 1.0
    if k == 1.0:
        return -math.expm1(-t / m)
    from scipy.stats import gamma

    return float(gamma.cdf(t, a=k, scale=m / k))


def service_percentile_ms(service_ms: float, q: float, shape: float = 1.0) -> float:
    """The ``q`` quantile of the service time (e.g. q = 0.999: p99.9), from which to set a
    per-service timeout. Exponential: ``−m·ln(1 − q)``, 6.9 × the mean at p99.9."""
    m = check_number("service_ms", service_ms, low=0.0, low_open=True)
    p = check_number("q", q, low=0.0, high=1.0, high_open=True)
    k = check_number("shape", shape, low=0.0, low_open=True)
    if k == 1.0:
        return -m * math.log1p(-p)
    from scipy.stats import gamma

    return float(gamma.ppf(p, a=k, scale=m / k))


def holding_ms(service_ms: float, timeout_ms: float, hang_share: float, shape: float = 1.0) -> float:
    """Mean time a call holds a worker: ``(1 − h)·E[min(X, T)] + h·T``; the seed's
    ``(1 − h)·service + h·timeout`` when the timeout is far above the service time."""
    h = check_probability("hang_share", hang_share)
    t = check_number("timeout_ms", timeout_ms, low=0.0, low_open=True)
    return (1.0 - h) * mean_capped_ms(service_ms, t, shape) + h * t


def pool_capacity_per_s(
    workers: int, service_ms: float, timeout_ms: float, hang_share: float, shape: float = 1.0
) -> float:
    """Requests/s a saturated pool completes: ``workers × 1000 / holding_ms``. The seed's pool
    (100 workers, 5 s, 100 ms): 1000/s healthy, 20/s when every call hangs; 671, 290, 169 and
    39 per second at 1%, 5%, 10% and 50% hanging calls."""
    w = check_int("workers", workers, low=1)
    return w * capacity.tps_ceiling(holding_ms(service_ms, timeout_ms, hang_share, shape))


def async_capacity_per_s(
    workers: int, cpu_ms: float, max_inflight: int, holding_ms_: float
) -> float:
    """Requests/s with asynchronous I/O: the workers' CPU, ``workers × 1000 / cpu_ms``, or the
    in-flight limit, ``max_inflight × 1000 / holding`` (Little's law), whichever is lower.
    The user still waits ``holding`` per call."""
    w = check_int("workers", workers, low=1)
    c = check_number("cpu_ms", cpu_ms, low=0.0, low_open=True)
    m = check_int("max_inflight", max_inflight, low=1)
    h = check_number("holding_ms", holding_ms_, low=0.0, low_open=True)
    return min(w * 1000.0 / c, m * 1000.0 / h)


def _mix_holding(hang_share, fast_ms, fast_timeout_ms, slow_share, slow_ms, slow_timeout_ms, shape):
    """The checked slow share ``s`` and the fast and slow classes' holding times (ms) of a mix."""
    s = check_probability("slow_share", slow_share)
    hf = holding_ms(fast_ms, fast_timeout_ms, hang_share, shape)
    hs = holding_ms(slow_ms, slow_timeout_ms, hang_share, shape)
    return s, hf, hs


def shared_mix_capacity_per_s(
    workers: int, hang_share: float, fast_ms: float, fast_timeout_ms: float,
    slow_share: float, slow_ms: float, slow_timeout_ms: float, shape: float = 1.0,
) -> float:
    """Requests/s of a mix (a share ``slow_share`` of slow requests) through one shared pool:
    ``workers × 1000 / ((1 − s)·H_fast + s·H_slow)`` with each class's holding time."""
    s, hf, hs = _mix_holding(hang_share, fast_ms, fast_timeout_ms, slow_share, slow_ms, slow_timeout_ms, shape)
    return check_int("workers", workers, low=1) * 1000.0 / ((1.0 - s) * hf + s * hs)


def separated_mix_capacity_per_s(
    fast_workers: int, slow_workers: int, hang_share: float, fast_ms: float, fast_timeout_ms: float,
    slow_share: float, slow_ms: float, slow_timeout_ms: float, shape: float = 1.0,
) -> float:
    """Requests/s of the same mix through separate pools: the first pool to saturate limits it,
    ``min(w_fast / ((1 − s)·H_fast), w_slow / (s·H_slow)) × 1000``."""
    wf = check_int("fast_workers", fast_workers, low=1)
    ws = check_int("slow_workers", slow_workers, low=1)
    s, hf, hs = _mix_holding(hang_share, fast_ms, fast_timeout_ms, slow_share, slow_ms, slow_timeout_ms, shape)
    fast = math.inf if s == 1.0 else wf * 1000.0 / ((1.0 - s) * hf)
    slow = math.inf if s == 0.0 else ws * 1000.0 / (s * hs)
    return min(fast, slow)


def core_latency_ms(core_ms: float, report_mean_ms: float, timeout_ms: float | None) -> float:
    """Mean time of the core path (no queueing): ``core + E[min(R, T)]`` with R exponential
    (bypass after ``timeout_ms``), or ``core + E[R]`` for a blocking call (``timeout_ms=None``)."""
    c = check_number("core_ms", core_ms, low=0.0)
    r = check_number("report_mean_ms", report_mean_ms, low=0.0, low_open=True)
    if timeout_ms is None:
        return c + r
    return c + mean_capped_ms(r, timeout_ms)


def report_capacity_per_s(workers: int, core_ms: float, report_mean_ms: float, timeout_ms: float | None) -> float:
    """Requests/s the CGI's workers complete: ``workers × 1000 / core_latency_ms``."""
    return check_int("workers", workers, low=1) * capacity.tps_ceiling(
        core_latency_ms(core_ms, report_mean_ms, timeout_ms))
