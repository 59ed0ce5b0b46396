"""Closed forms of notebooks 04 and 04a, beside the fluid model (:mod:`.fluid`) and the seed's
arithmetic (:func:`~hotkeylab.metastable.closed_forms` in :mod:`.analysis`).

- The bistable band (:func:`band_user_rates`) and the batcher inverted
  (:func:`user_rate_for_batches`).
- Draining: :func:`drain_time_s` (users only, no retries; the package's ``drain_time_s`` is
  :mod:`.analysis`'s, with every request still retried), :func:`storm_exit_s`,
  :func:`drain_edge_rate`.
- The work of a storm: :func:`storm_attempts` (from the retry policy's own rule),
  :func:`storm_demand`, :func:`attempts_ceiling`, :func:`stretch_needed` (the seed's measure 2).
- A restart's wave (:func:`restart_wave`, :func:`restart_limit_rate`) and the phase boundary
  (:func:`trigger_boundary_s`, :func:`trigger_boundary_grid`).

Pure arithmetic on a :class:`~hotkeylab.metastable.Scenario`: no simulation, no plotting.

>>> from hotkeylab.metastable.closed_form import storm_attempts
>>> from hotkeylab.metastable import SEED_RETRY
>>> storm_attempts(SEED_RETRY, 200.0)
2.0
"""

from __future__ import annotations

import math

import numpy as np

from .. import capacity
from ..validate import check_int, check_number
from .analysis import closed_forms, effective_timeout_queue
from .presets import SHORT_INCIDENT
from .scenario import SEED_INCIDENT, RetryPolicy, Scenario

__all__ = [
    "peak_rate",
    "user_rate_for_batches",
    "band_user_rates",
    "drain_time_s",
    "storm_attempts",
    "storm_demand",
    "attempts_ceiling",
    "storm_exit_s",
    "stretch_needed",
    "drain_edge_rate",
    "restart_wave",
    "restart_limit_rate",
    "trigger_boundary_s",
    "trigger_boundary_grid",
]


def _batch_rate(lam: float, sc: Scenario) -> float:
    return capacity.batcher_batch_rate(lam, sc.batch_max_rows, sc.batch_max_wait_ms)


def peak_rate(sc: Scenario = SHORT_INCIDENT) -> float:
    """User requests/s at the peak (the base rate times the peak's factor)."""
    return sc.user_rate_per_s * (sc.peak.factor if sc.peak is not None else 1.0)


def user_rate_for_batches(batches_per_s: float, sc: Scenario = SEED_INCIDENT) -> float:
    """The request rate (requests/s) from which the batcher makes ``batches_per_s`` merged batches
    per second (the inverse of ``capacity.batcher_batch_rate``, by bisection: the batch rate grows
    with the request rate); inf if none does."""
    b = check_number("batches_per_s", batches_per_s, low=0.0)
    if b == 0:
        return 0.0
    lo, hi = 1e-6, 1e6
    if _batch_rate(hi, sc) < b:
        return math.inf
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if _batch_rate(mid, sc) < b else (lo, mid)
        if hi / lo < 1 + 1e-12:
            break
    return 0.5 * (lo + hi)


def band_user_rates(sc: Scenario = SEED_INCIDENT, retries: float | None = None) -> tuple[float, float]:
    """The bistable band in user requests/s for the hot-key thread with one owner.

    Upper edge: the user rate whose batches alone fill the thread (``batcher_batch_rate(λ) = μ``).
    Lower edge: the user rate at which, once every attempt times out and each request is sent
    ``R + 1`` times, the batches still fill it (``batcher_batch_rate((R + 1) λ) = μ``). ``retries``
    defaults to the scenario's retries in the storm (``closed_forms``' attempts − 1).
    """
    mu = capacity.tps_ceiling(sc.batch_ms)
    if retries is None:
        retries = closed_forms(sc)["attempts_per_request_stuck"] - 1
    r = check_number("retries", retries, low=0.0, allow_inf=True)
    hi = user_rate_for_batches(mu, sc)
    lo = 0.0 if math.isinf(r) else hi / (r + 1.0)
    return lo, hi


def drain_time_s(queue_batches: float, user_rate_per_s: float, sc: Scenario = SEED_INCIDENT) -> float:
    """Seconds to empty ``queue_batches`` while users keep sending ``user_rate_per_s`` (no retries):
    ``Q / (μ − batches from users)``; inf if the users alone fill the thread."""
    q = check_number("queue_batches", queue_batches, low=0.0)
    lam = check_number("user_rate_per_s", user_rate_per_s, low=0.0)
    growth = capacity.queue_growth_rate(_batch_rate(lam, sc), 0.0, capacity.tps_ceiling(sc.batch_ms))
    return math.inf if growth >= 0 else q / -growth


# --------------------------------------------------------------------------- the work of a storm
def _delays(p: RetryPolicy, k: int, u: np.ndarray, prev: np.ndarray) -> np.ndarray:
    """The k-th retry delay (ms, before stretch and floor) for uniforms ``u``."""
    if p.jitter == "decorrelated":
        lo = p.base_ms
        hi = np.maximum(lo, 3.0 * np.where(prev > 0, prev, lo))
        return np.minimum(p.cap_ms, lo + u * (hi - lo))
    d0 = min(p.cap_ms, p.base_ms * p.multiplier ** (k - 1))
    return {"none": np.full(u.size, d0), "full": u * d0, "equal": 0.5 * d0 + 0.5 * d0 * u}[p.jitter]


def storm_attempts(policy: RetryPolicy, timeout_ms: float, *, stretch: float = 1.0, samples: int = 200_000,
                   seed: int = 0) -> float:
    """Mean attempts per user request when every attempt times out after ``timeout_ms`` (M).

    The policy's own rule, as :class:`RetryPolicy` states it: attempt k + 1 starts at
    ``k·M + D_1 + … + D_k``, where ``D_k`` is the k-th delay (backoff, jitter, at least
    ``min_delay_ms``, times ``stretch``, the seed's measure 2); the user stops at
    ``max_attempts`` or once the next attempt would start more than ``patience_ms`` after the first.
    Delays are random, so the mean is taken over ``samples`` draws with a fixed ``seed`` (the same
    draws for every ``stretch``, so the result falls monotonically as ``stretch`` grows). With no
    patience the count is ``max_attempts`` (inf if that is unlimited). Rejected attempts, which fail
    at once rather than after M, are not counted: this is the storm's work with timeouts only.
    """
    m = check_number("timeout_ms", timeout_ms, low=0.0, low_open=True)
    f = check_number("stretch", stretch, low=1e-3, high=1e3)
    n = check_int("samples", samples, low=1)
    p = policy
    if math.isinf(p.patience_ms):
        return float(p.max_attempts)
    k_max = int(min(p.max_attempts - 1, math.floor(p.patience_ms / m)))  # each retry costs at least M
    if k_max <= 0:
        return 1.0
    u = np.random.default_rng(seed).random((k_max, n))
    start = np.zeros(n)
    alive = np.ones(n, dtype=bool)
    prev = np.zeros(n)
    attempts = np.ones(n)
    for k in range(1, k_max + 1):
        d = _delays(p, k, u[k - 1], prev)
        prev = d  # the unstretched delay, as the client remembers it for decorrelated jitter
        start = start + m + np.maximum(p.min_delay_ms, d * f)
        alive &= start <= p.patience_ms
        attempts += alive
    return float(attempts.mean())


def storm_demand(sc: Scenario, attempts: float) -> float:
    """Merged batches/s the batcher makes when each user request at the peak is sent ``attempts``
    times: ``batcher_batch_rate(λ_peak × attempts)`` (retries mostly fill existing batches)."""
    a = check_number("attempts", attempts, low=0.0)
    return _batch_rate(min(peak_rate(sc) * a, 1e6), sc)


def attempts_ceiling(sc: Scenario = SHORT_INCIDENT) -> float:
    """The most attempts per user request the hot-key thread carries at the peak: the request rate
    whose batches fill it (``batcher_batch_rate(x) = 1000/N``, the bistable band's upper edge)
    divided by the users' rate at the peak. A storm sending more than this sustains itself."""
    return user_rate_for_batches(capacity.tps_ceiling(sc.batch_ms), sc) / peak_rate(sc)


def storm_exit_s(sc: Scenario, queue_batches: float, attempts: float, user_rate_per_s: float | None = None) -> float:
    """Seconds until a storm with ``queue_batches`` waiting falls back below the timeout threshold
    ``(M − T − N)/N`` while each user request (``user_rate_per_s``, default the peak rate) is sent
    ``attempts`` times: ``(Q − Q_eff) / (μ − batcher_batch_rate(attempts × λ))``; inf if that
    demand fills the thread (the storm sustains itself)."""
    q = check_number("queue_batches", queue_batches, low=0.0)
    a = check_number("attempts", attempts, low=0.0)
    lam = peak_rate(sc) if user_rate_per_s is None else check_number("user_rate_per_s", user_rate_per_s, low=0.0)
    excess = q - effective_timeout_queue(sc)
    if excess <= 0:
        return 0.0  # already below the threshold: no storm to leave
    mu = capacity.tps_ceiling(sc.batch_ms)
    demand = _batch_rate(min(lam * a, 1e6), sc)
    if demand >= mu:
        return math.inf
    return excess / (mu - demand)


def stretch_needed(sc: Scenario, queue_batches: float, window_s: float) -> float:
    """Smallest factor for the seed's measure 2 (every retry delay × factor) with which a window of
    ``window_s`` seconds takes a storm with ``queue_batches`` waiting back below the threshold, by
    :func:`storm_attempts` and :func:`storm_exit_s` (bisection over the factor); inf if even
    ×1000 does not."""
    w = check_number("window_s", window_s, low=0.0, low_open=True)

    def ok(f):
        a = storm_attempts(sc.retry, sc.timeout_ms, stretch=f)
        return storm_exit_s(sc, queue_batches, a) <= w

    lo, hi = 1.0, 1000.0
    if ok(lo):
        return lo
    if not ok(hi):
        return math.inf
    for _ in range(40):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def drain_edge_rate(sc: Scenario, queue_batches: float, within_s: float, attempts: float) -> float:
    """The user rate (requests/s, at the peak) below which a storm with ``queue_batches`` waiting
    and ``attempts`` per request falls below the timeout threshold within ``within_s`` seconds:
    the solution of ``storm_exit_s = within_s``. Below the bistable band's lower edge a storm dies
    out, but near that edge slowly: this is the load at which it dies out *in time*."""
    w = check_number("within_s", within_s, low=0.0, low_open=True)
    a = check_number("attempts", attempts, low=0.0, low_open=True)
    q = max(0.0, check_number("queue_batches", queue_batches, low=0.0) - effective_timeout_queue(sc))
    target = capacity.tps_ceiling(sc.batch_ms) - q / w
    return user_rate_for_batches(max(0.0, target), sc) / a


# --------------------------------------------------------------------------- a restart's wave
def restart_wave(sc: Scenario, user_rate_per_s: float | None = None) -> dict:
    """What a restart in the middle of a storm leaves behind, by the seed's arithmetic.

    A restart empties the queue but not the clients. In the storm every attempt times out, so a
    user retries every ``M + d`` ms (``d`` the mean retry delay) while within its patience P: it
    makes ``R = floor(P / (M + d))`` retries. At the restart each live request has one attempt in
    flight, which the restart destroys; all but the last attempts come back as retries within
    ``M + d``: about ``λ · R · (M + d)`` rows. Together with the ``λ · (M + d)`` new rows of that
    span, the batches made (``batcher_batch_rate``) minus what the thread commits is the backlog
    the wave leaves; above the effective threshold ``(M − T − N) / N`` the new requests time out
    again and the storm restarts. A rough estimate (the wave is spread, not a block): it names the
    mechanism and the order of magnitude, the simulation decides.
    """
    lam = peak_rate(sc)
    if user_rate_per_s is not None:
        lam = check_number("user_rate_per_s", user_rate_per_s, low=0.0)
    pol = sc.retry
    d = pol.base_ms / 2.0 if pol.jitter == "full" else pol.base_ms
    span_ms = sc.timeout_ms + d
    r = 0 if pol.max_attempts <= 1 else pol.retries
    if not math.isinf(pol.patience_ms):
        r = min(r, math.floor(pol.patience_ms / span_ms))
    wave_rows = math.inf if math.isinf(r) else lam * r * span_ms / 1000.0
    new_rows = lam * span_ms / 1000.0
    mu = capacity.tps_ceiling(sc.batch_ms)
    if math.isinf(wave_rows):
        backlog = math.inf
    else:
        rate = (wave_rows + new_rows) / (span_ms / 1000.0)
        batches = _batch_rate(rate, sc) * span_ms / 1000.0
        backlog = max(0.0, batches - mu * span_ms / 1000.0)
    threshold = effective_timeout_queue(sc)
    return {
        "user_rate_per_s": lam,
        "retries_per_request": math.inf if math.isinf(r) else r,
        "span_ms": span_ms,
        "wave_rows": wave_rows,
        "new_rows": new_rows,
        "backlog_batches": backlog,
        "threshold_batches": threshold,
        "restart_works": backlog < threshold,
    }


def restart_limit_rate(sc: Scenario) -> float:
    """The user rate (requests/s) above which :func:`restart_wave` says a restart rebuilds the
    storm for ``sc``'s retry policy (bisection; inf if never below 1e5 requests/s)."""
    def bad(lam):
        return not restart_wave(sc, lam)["restart_works"]

    lo, hi = 1.0, 1e5
    if not bad(hi):
        return math.inf
    if bad(lo):
        return lo
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if bad(mid) else (mid, hi)
    return 0.5 * (lo + hi)


# --------------------------------------------------------------------------- the phase boundary
def trigger_boundary_s(cross_batch_ms, sc: Scenario = SEED_INCIDENT, user_rate_per_s: float | None = None,
                       queue_batches: float | None = None):
    """Closed form for the phase boundary: how long a second owner with ``cross_batch_ms`` batches
    must last for the queue to reach ``queue_batches`` (default: the effective timeout threshold
    with two owners), growing at ``user batches at the peak − two-owner capacity``. inf where the
    two owners still keep up. Vectorised over ``cross_batch_ms``."""
    lam = sc.user_rate_per_s if user_rate_per_s is None else user_rate_per_s
    peak = sc.peak.factor if sc.peak is not None else 1.0
    demand = _batch_rate(lam * peak, sc)
    xs = np.atleast_1d(np.asarray(cross_batch_ms, dtype=float))
    out = np.empty_like(xs)
    for k, x in enumerate(xs):
        mu2 = capacity.alternating_owners_tps([sc.batch_ms, x])
        q = effective_timeout_queue(sc, (sc.batch_ms + x) / 2) if queue_batches is None else queue_batches
        g = demand - mu2
        out[k] = q / g if g > 0 else math.inf
    return out if np.ndim(cross_batch_ms) else float(out[0])


def trigger_boundary_grid(xs: np.ndarray, user_rates: np.ndarray, sc: Scenario) -> np.ndarray:
    """:func:`trigger_boundary_s` on a grid (rows: user rates, columns: C's batch times), in numpy."""
    peak = sc.peak.factor if sc.peak is not None else 1.0
    demand = np.array([_batch_rate(lam * peak, sc) for lam in user_rates])[:, None]
    n_bar = (sc.batch_ms + xs) / 2.0
    mu2 = 1000.0 / n_bar
    q = np.maximum(0.0, (sc.timeout_ms - sc.batch_max_wait_ms - n_bar) / n_bar)[None, :]
    g = demand - mu2[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(g > 0, q / np.where(g > 0, g, 1.0), np.inf)
