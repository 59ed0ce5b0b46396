"""Closed forms shared by every notebook.

Units: milliseconds for times (``*_ms``), per second for rates (``*_per_s``, TPS). Every function
checks its input and raises ``ValueError`` naming the parameter and the allowed range.

The numbers of seed 000 (a hot row under MySQL strict two-phase locking) fall out of these:

>>> round(tps_ceiling(lock_hold_ms(0.5)), 1)        # the seed writes 345
344.8
>>> round(tps_ceiling(lock_hold_ms(1.5)), 1)        # the seed writes 144
144.9
>>> round(alternating_owners_tps([16, 27]), 1)     # the seed writes 46
46.5
>>> critical_queue_length(200, 16)
12.5
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from .validate import check_int, check_number, check_probability

__all__ = [
    "lock_hold_ms",
    "tps_ceiling",
    "fit_round_trips",
    "alternating_owners_tps",
    "critical_queue_length",
    "safe_queue_limit",
    "retry_success",
    "retry_amplification",
    "littles_law",
    "utilisation",
    "pk_mean_wait_ms",
    "md1_mean_wait_ms",
    "batcher_batch_rate",
    "batcher_mean_batch_size",
    "bistable_band",
    "queue_growth_rate",
    "closed_loop_tps",
    "extra_thread_gain",
]


# --------------------------------------------------------------------------- the hot row lock
def lock_hold_ms(
    rtt_ms: float, round_trips: float = 4, statements: float = 3, statement_ms: float = 0.3
) -> float:
    """One transaction's time, in ms: ``round_trips × rtt_ms + statements × statement_ms``.

    With the defaults this is the seed's sketch, "单次耗时为4次rtt+2条SQL耗时+1次commit耗时": 4 round
    trips and 3 statements (2 SQL + commit) of 0.3 ms; at RTT 0.5 ms, 2.9 ms. That is the whole
    *cycle* of one serial thread (begin to the COMMIT's reply), so ``1000 / cycle`` is one thread's
    rate (345 TPS). Under strict two-phase locking the row lock is held from the SELECT … FOR UPDATE
    executing to the COMMIT executing: 2 of the round trips (begin, and the SELECT's way in plus the
    COMMIT reply's way back) lie outside it (the seed's "除了set autocommit和commit后的那仅有的RTT").
    Pass ``round_trips − 2`` for the hold alone; :func:`closed_loop_tps` combines the two. The name
    is kept from before this distinction was drawn.
    """
    rtt = check_number("rtt_ms", rtt_ms, low=0.0)
    rt = check_number("round_trips", round_trips, low=0.0)
    st = check_number("statements", statements, low=0.0)
    sm = check_number("statement_ms", statement_ms, low=0.0)
    hold = rt * rtt + st * sm
    if hold <= 0:
        raise ValueError(
            "lock_hold_ms needs a positive hold time: round_trips × rtt_ms + statements × "
            f"statement_ms must be > 0, got {hold:g} (rtt_ms={rtt_ms!r}, round_trips={round_trips!r}, "
            f"statements={statements!r}, statement_ms={statement_ms!r})"
        )
    return hold


def tps_ceiling(hold_ms: float) -> float:
    """Most transactions per second one row lock admits: ``1000 / hold_ms``.

    Transactions on the same row never overlap under S2PL, so more threads cannot raise this.
    """
    hold = check_number("hold_ms", hold_ms, low=0.0, low_open=True)
    return 1000.0 / hold


def fit_round_trips(points: Iterable[Sequence[float]]) -> tuple[float, float]:
    """Least-squares line ``batch_ms = round_trips × rtt_ms + fixed_ms`` through measured points.

    ``points`` is ``[(rtt_ms, batch_ms), ...]`` with at least two distinct RTTs. Returns
    ``(round_trips, fixed_ms)``. The seed's two measurements (0.5 ms → 16 ms, 1.5 ms → 27 ms) give
    11 round trips and 10.5 ms that do not depend on the RTT.
    """
    pts = list(points)
    if len(pts) < 2:
        raise ValueError(f"points must hold at least 2 (rtt_ms, batch_ms) pairs, got {len(pts)}")
    xs, ys = [], []
    for i, p in enumerate(pts):
        if len(p) != 2:
            raise ValueError(f"points[{i}] must be a (rtt_ms, batch_ms) pair, got {p!r}")
        xs.append(check_number(f"points[{i}].rtt_ms", p[0], low=0.0))
        ys.append(check_number(f"points[{i}].batch_ms", p[1], low=0.0, low_open=True))
    x = np.asarray(xs)
    if np.ptp(x) == 0:
        raise ValueError(f"points must have at least 2 distinct rtt_ms values, got {sorted(set(xs))}")
    slope, intercept = np.polyfit(x, np.asarray(ys), 1)
    return float(slope), float(intercept)


def alternating_owners_tps(batch_ms: Sequence[float]) -> float:
    """Merged commits per second when several owners take turns on the hot row's lock.

    ``tps = 1000 / mean(batch_ms)``: the seed's simplification ("为简化计算这里假设两台机器交替获得热点锁
    各占一半处理批次"): each owner's whole merged commit counts as lock time and they alternate, so
    the lock serves one batch of each in ``sum(batch_ms)`` ms. Owners in datacentre B (16 ms) and
    C (27 ms) give 1000 / 21.5 = 46.5 merged commits/s. Counting the 2 round trips per commit that
    lie outside the lock (they overlap the other owner's hold) gives more: see
    :func:`hotkeylab.rtt.turn_taking_tps` (51.3/s). Notebooks 03 and 04 use this figure, the seed's.
    """
    times = list(batch_ms)
    if not times:
        raise ValueError("batch_ms must list at least one owner's batch time, got []")
    vals = [check_number(f"batch_ms[{i}]", t, low=0.0, low_open=True) for i, t in enumerate(times)]
    return 1000.0 * len(vals) / sum(vals)


# --------------------------------------------------------------------------- queues and timeouts
def critical_queue_length(timeout_ms: float, batch_ms: float) -> float:
    """The seed's critical queue length ``M / N`` in merged batches.

    A request that finds more than ``M / N`` batches ahead of it waits longer than the client's
    timeout M for a single-threaded consumer whose batches take N ms each, and times out although
    the server later processes it.
    """
    m = check_number("timeout_ms", timeout_ms, low=0.0, low_open=True, allow_inf=True)
    n = check_number("batch_ms", batch_ms, low=0.0, low_open=True)
    return m / n


def timeout_queue_length(timeout_ms: float, batch_ms: float, batch_wait_ms: float) -> float:
    """Batches ahead at which a new request times out: ``(M − T − N) / N``.

    The seed's condition is ``QueueSize × N < M`` (critical length M/N). A request also waits up to
    T ms in the batcher before its batch joins the queue, and then for its own commit N; counting
    both, it is answered in time only while ``Q × N + T + N ≤ M``. The one threshold the lessons
    use for "timeouts begin"; M/N stays the seed's rule for sizing QueueMaxSize. It is 0 when even
    an empty queue cannot answer in time (``M ≤ T + N``).
    """
    m = check_number("timeout_ms", timeout_ms, low=0.0, low_open=True, allow_inf=True)
    n = check_number("batch_ms", batch_ms, low=0.0, low_open=True)
    t = check_number("batch_wait_ms", batch_wait_ms, low=0.0)
    return max(0.0, (m - t - n) / n)


def safe_queue_limit(timeout_ms: float, batch_ms: float, safety: float) -> int:
    """``QueueMaxSize = floor(M / N × safety)`` batches, with ``0 < safety <= 1``.

    The seed's rule for a bounded queue: reject at the door rather than accept work that can only
    time out. ``safety`` leaves room for batches slower than N.
    """
    s = check_number("safety", safety, low=0.0, high=1.0, low_open=True)
    m = check_number("timeout_ms", timeout_ms, low=0.0, low_open=True)
    return math.floor(critical_queue_length(m, batch_ms) * s)


def queue_growth_rate(user_batches_per_s: float, retry_batches_per_s: float, service_batches_per_s: float) -> float:
    """The seed's queue growth rate in batches/s: ``(user + retry) − consumption``."""
    u = check_number("user_batches_per_s", user_batches_per_s, low=0.0)
    r = check_number("retry_batches_per_s", retry_batches_per_s, low=0.0)
    s = check_number("service_batches_per_s", service_batches_per_s, low=0.0)
    return u + r - s


def bistable_band(service_rate_per_s: float, retries: float) -> tuple[float, float]:
    """Offered loads ``(μ / (R + 1), μ)`` where a retry storm, once started, can sustain itself.

    Below μ the system is healthy if nothing has piled up. Once every request times out, each one
    is sent R + 1 times, so the load is (R + 1)·λ: if that exceeds μ the overload holds itself up
    after the trigger is gone. With unlimited retries (``retries=math.inf``) the lower edge is 0.
    """
    mu = check_number("service_rate_per_s", service_rate_per_s, low=0.0, low_open=True)
    r = check_number("retries", retries, low=0.0, allow_inf=True)
    return (0.0 if math.isinf(r) else mu / (r + 1.0), mu)


# --------------------------------------------------------------------------- retries
def _check_attempts(attempts) -> float:
    if isinstance(attempts, float) and math.isinf(attempts) and attempts > 0:
        return math.inf
    return float(check_int("attempts", attempts, low=1))


def retry_success(p_success: float, attempts: float) -> float:
    """Probability that at least one of ``attempts`` independent tries succeeds: ``1 − (1 − p)^a``.

    ``attempts`` counts the first try (1 = no retry); ``math.inf`` means retry until success.
    """
    p = check_probability("p_success", p_success)
    a = _check_attempts(attempts)
    if math.isinf(a):
        return 1.0 if p > 0 else 0.0
    return 1.0 - (1.0 - p) ** a


def retry_amplification(p_fail: float, attempts: float) -> float:
    """Expected tries per request when each fails with ``p_fail`` and at most ``attempts`` are made.

    ``E = 1 + p + p² + … + p^(a−1) = (1 − p^a) / (1 − p)``; ``= a`` when p = 1 (every try fails,
    the retry storm) and ``1 / (1 − p)`` for unlimited attempts.
    """
    p = check_probability("p_fail", p_fail)
    a = _check_attempts(attempts)
    if p == 1.0:
        return a
    if math.isinf(a):
        return 1.0 / (1.0 - p)
    return (1.0 - p**a) / (1.0 - p)


def littles_law(*, rate_per_s: float, time_in_system_ms: float) -> float:
    """Little's law ``L = λ × W``: mean number in the system (λ per second, W in ms)."""
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    w = check_number("time_in_system_ms", time_in_system_ms, low=0.0)
    return lam * w / 1000.0


def utilisation(rate_per_s: float, service_ms: float) -> float:
    """Offered utilisation ``ρ = λ × S`` of one server (λ per second, S in ms)."""
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    s = check_number("service_ms", service_ms, low=0.0, low_open=True)
    return lam * s / 1000.0


def pk_mean_wait_ms(rate_per_s: float, mean_service_ms: float, service_scv: float = 1.0) -> float:
    """Pollaczek–Khinchine mean wait in queue of an M/G/1 server, in ms.

    ``Wq = ρ × S × (1 + c²) / (2 (1 − ρ))`` with ρ = λS and c² the squared coefficient of
    variation of the service time (0 for constant service: M/D/1; 1 for exponential: M/M/1).
    Infinite when ρ >= 1.
    """
    rho = utilisation(rate_per_s, mean_service_ms)
    c2 = check_number("service_scv", service_scv, low=0.0)
    if rho >= 1.0:
        return math.inf
    return rho * mean_service_ms * (1.0 + c2) / (2.0 * (1.0 - rho))


def md1_mean_wait_ms(rate_per_s: float, service_ms: float) -> float:
    """M/D/1 mean wait in queue: Pollaczek–Khinchine with constant service (c² = 0)."""
    return pk_mean_wait_ms(rate_per_s, service_ms, 0.0)


# --------------------------------------------------------------------------- the batcher
def _batcher_window_ms(lam_per_ms: float, max_rows: int, max_wait_ms: float) -> float:
    """E[min(T, S_{k−1})]: how long a batch stays open after its first request (ms)."""
    from scipy.stats import gamma

    n = max_rows - 1
    if n == 0 or lam_per_ms == 0:
        return 0.0 if n == 0 else max_wait_ms
    T = max_wait_ms
    # E[min(T, S_n)] = T·P(S_n > T) + E[S_n; S_n <= T],  S_n ~ Gamma(n, λ);
    # E[S_n; S_n <= T] = (n / λ)·P(S_{n+1} <= T).
    p_n = gamma.cdf(T, a=n, scale=1.0 / lam_per_ms)
    p_n1 = gamma.cdf(T, a=n + 1, scale=1.0 / lam_per_ms)
    return float(T * (1.0 - p_n) + (n / lam_per_ms) * p_n1)


def batcher_batch_rate(rate_per_s: float, max_rows: int = 20, max_wait_ms: float = 20.0) -> float:
    """Merged batches per second that a group-commit batcher makes from Poisson requests.

    A batch opens at the first request after the previous one closed and closes at ``max_rows``
    requests or ``max_wait_ms`` after opening, whichever is first. One cycle lasts
    ``1/λ + E[min(T, S_{k−1})]`` (the wait for the first request, then the open window), so
    ``rate = 1 / (1/λ + E[min(T, S_{k−1})])`` with ``S_{k−1}`` the time of k − 1 more arrivals.
    At the seed's 600 requests/s almost every batch closes on the 20 ms timer: ≈ 46 batches/s,
    not 600 / 20 = 30.
    """
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    k = check_int("max_rows", max_rows, low=1)
    T = check_number("max_wait_ms", max_wait_ms, low=0.0)
    if lam == 0:
        return 0.0
    lam_ms = lam / 1000.0
    if lam_ms * max(T, 1.0) < 1e-17:  # the open window (<= T) is below the gap's rounding: one
        return lam  # request a batch (and 1/λ would overflow or divide by zero at subnormal rates)
    cycle_ms = 1.0 / lam_ms + _batcher_window_ms(lam_ms, k, T)
    return 1000.0 / cycle_ms


def batcher_mean_batch_size(rate_per_s: float, max_rows: int = 20, max_wait_ms: float = 20.0) -> float:
    """Mean requests per merged batch: ``λ / batch rate`` (every request lands in one batch)."""
    lam = check_number("rate_per_s", rate_per_s, low=0.0, low_open=True)
    return lam / batcher_batch_rate(lam, max_rows, max_wait_ms)


# --------------------------------------------------------------------------- one serial thread and the lock
def closed_loop_tps(threads: int, cycle_ms: float, hold_ms: float) -> float:
    """Transactions/s of ``threads`` serial threads on one row lock: ``min(n × 1000 / cycle, 1000 / hold)``.

    Each thread's cycle (begin → COMMIT reply) lasts ``cycle_ms``, of which ``hold_ms`` is spent
    holding the row lock; the rest (``cycle − hold``) can overlap with another thread's hold. Few
    threads are limited by their own cycle, many by the lock. For the seed's transaction
    (``"单次耗时为4次rtt+2条SQL耗时+1次commit耗时"``) one thread's cycle is :func:`lock_hold_ms`,
    2.9 ms at RTT 0.5 ms, so one thread runs at the seed's 344.8 TPS.
    """
    n = check_int("threads", threads, low=1)
    hold = check_number("hold_ms", hold_ms, low=0.0, low_open=True)
    cycle = check_number("cycle_ms", cycle_ms, low=hold)
    return min(n * 1000.0 / cycle, 1000.0 / hold)


def extra_thread_gain(cycle_ms: float, hold_ms: float, threads: int = 2) -> float:
    """Relative TPS gain of ``threads`` serial threads over one: ``min(n, cycle / hold) − 1``.

    Only the part of a cycle spent outside the lock can overlap with another thread's hold, so no
    number of threads gains more than ``cycle / hold − 1``. The seed's merged commit (16 ms at
    RTT 0.5 ms, of which 2 RTT = 1 ms outside the lock) gains at most 16 / 15 − 1 ≈ 6.7 %.
    """
    n = check_int("threads", threads, low=1)
    return closed_loop_tps(n, cycle_ms, hold_ms) / closed_loop_tps(1, cycle_ms, hold_ms) - 1.0
