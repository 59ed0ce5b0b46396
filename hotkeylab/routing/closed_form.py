"""03 · Closed forms the models are checked against (tests and notebook 03).

- remapping when one of n servers leaves: :func:`remap_fraction_closed`;
- transient dual ownership while clients poll: :func:`dual_owner_share_closed`;
- owners sharing the row lock: batch rates, utilisation ρ, the critical and healthy loads, the
  band where "dormant, then the peak tips it" holds (:func:`seed_band`, :func:`split_band`), the
  timeout share (Kingman) and the lock's water-filling throughput (:func:`lock_throughput_closed`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from .. import capacity
from ..validate import check_choice, check_int, check_number
from .scenario import HEALTHY_SHARE, SCHEMES, LockScenario

__all__ = [
    "remap_fraction_closed", "dual_owner_share_closed", "demand_batches_per_s", "owner_batch_rates",
    "lock_utilisation", "mean_commit_ms", "timeout_queue", "critical_rate_per_s", "timeout_share_closed",
    "healthy_rate_per_s", "seed_band", "lock_throughput_closed", "split_band",
]


def remap_fraction_closed(n_servers: int, scheme: str = "modulo") -> float:
    """Expected share of keys whose owner changes when one of ``n_servers`` leaves.

    Modulo: a key keeps its owner only if ``h mod n`` and ``h mod (n−1)`` point at the same server.
    ``n`` and ``n − 1`` are coprime, so the pair is uniform over ``n(n−1)`` combinations and exactly
    ``n − 1`` of them keep the owner: ``1 − 1/n = (n−1)/n`` move. Consistent and rendezvous
    hashing move only the leaving server's keys: ``1/n``.
    """
    n = check_int("n_servers", n_servers, low=2)
    check_choice("scheme", scheme, SCHEMES)
    return (n - 1) / n if scheme == "modulo" else 1.0 / n



def dual_owner_share_closed(
    poll_ms: float, changes_per_min: float, n_clients: int, n_servers: int, scheme: str = "modulo"
) -> float:
    """Share of time a key has more than one owner, for rare changes (``λ · poll_ms ≪ 1``).

    After a change the ``J = n_clients`` clients switch at ``J`` independent times uniform in
    ``[0, P)``; two lists are in use from the first switch to the last,
    ``E[max − min] = P (J − 1) / (J + 1)``. A key has two owners in that window only if the change
    moved it (:func:`remap_fraction_closed`). So ``share ≈ ν · P (J − 1)/(J + 1) · remap``, with ν
    the change rate in changes per minute (``changes_per_min``, as in notebook 03) and P in the same
    time unit: the code converts ν to changes per ms (ν / 60 000) because P is given in ms.
    """
    p = check_number("poll_ms", poll_ms, low=0.0)
    nu_per_ms = check_number("changes_per_min", changes_per_min, low=0.0) / 60_000.0
    j = check_int("n_clients", n_clients, low=1)
    return nu_per_ms * p * (j - 1) / (j + 1) * remap_fraction_closed(n_servers, scheme)

def demand_batches_per_s(scenario: LockScenario, peak: bool = True) -> float:
    """Batches/s the batchers make at normal load or at the peak (sum over owners)."""
    lam = scenario.rate_per_s * (scenario.peak_factor if peak else 1.0)
    return float(sum(owner_batch_rates(scenario, lam)))


def owner_batch_rates(scenario: LockScenario, rate_per_s: float) -> np.ndarray:
    """Batches/s each owner receives at ``rate_per_s`` user requests (``capacity.batcher_batch_rate``).

    shared: one batcher makes r(λ) batches/s and deals them in turn, r(λ)/n each;
    per_owner: owner j's own batcher sees s_j λ and makes r(s_j λ).
    """
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    sc = scenario
    if sc.batchers == "shared":
        n = len(sc.owners_ms)
        return np.full(n, capacity.batcher_batch_rate(lam, sc.max_rows, sc.max_wait_ms) / n)
    return np.array([capacity.batcher_batch_rate(s * lam, sc.max_rows, sc.max_wait_ms) for s in sc.shares])


def lock_utilisation(scenario: LockScenario, rate_per_s: float) -> float:
    """Share of each second the row lock would be held: ``ρ = Σ_j r_j N_j / 1000``.

    The lock is work-conserving (it idles only when no batch waits), so the owners keep up
    exactly when ρ < 1. For the seed's shared batcher ρ = r(λ) · mean(N) / 1000.
    """
    r = owner_batch_rates(scenario, rate_per_s)
    return float(np.dot(r, np.asarray(scenario.owners_ms)) / 1000.0)


def mean_commit_ms(scenario: LockScenario, rate_per_s: float) -> float:
    """Mean lock hold per merged commit, weighted by each owner's batches: N̄ = Σ r_j N_j / Σ r_j."""
    r = owner_batch_rates(scenario, rate_per_s)
    if r.sum() == 0:
        return float(np.mean(scenario.owners_ms))
    return float(np.dot(r, np.asarray(scenario.owners_ms)) / r.sum())


def timeout_queue(scenario: LockScenario, rate_per_s: float | None = None) -> float:
    """Batches ahead at which a new request times out: ``(M − T − N̄)/N̄`` (``capacity.timeout_queue_length``).

    N̄ is :func:`mean_commit_ms` at ``rate_per_s`` (default: the normal load); for the shared
    batcher it is the plain mean, (16 + 27)/2 = 21.5 ms.
    """
    lam = scenario.rate_per_s if rate_per_s is None else rate_per_s
    return capacity.timeout_queue_length(scenario.timeout_ms, mean_commit_ms(scenario, lam), scenario.max_wait_ms)


def critical_rate_per_s(scenario: LockScenario, duration_s: float = math.inf) -> float:
    """User requests/s at which a peak of ``duration_s`` seconds starts to time out.

    ``duration_s = inf``: the load where ρ = 1. For a finite peak, the backlog of lock work grows
    at (ρ − 1) s per s from an empty queue, and a request times out once it exceeds
    M − T − N̄; served stays ≥ 99% while that takes at least 99% of the peak, so the edge is
    ρ = 1 + (M − T − N̄) / (990 · duration_s).
    """
    d = check_number("duration_s", duration_s, low=0.0, low_open=True, allow_inf=True)
    sc = scenario

    def excess(lam):
        edge = 1.0
        if not math.isinf(d):
            slack = max(0.0, sc.timeout_ms - sc.max_wait_ms - mean_commit_ms(sc, lam))
            edge += slack / (990.0 * d)
        return lock_utilisation(sc, lam) - edge

    lo, hi = 1e-6, 1e6
    if excess(hi) < 0:
        return math.inf
    for _ in range(200):  # bisection: ρ(λ) increases with λ
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if excess(mid) < 0 else (lo, mid)
        if hi / lo < 1 + 1e-12:
            break
    return hi


def _cycle_scv(rate_per_s: float, max_rows: int, max_wait_ms: float) -> float:
    """Squared coefficient of variation of one batcher's time between batches:
    cycle = Exp(λ) (wait for the first row) + min(T, S_{K−1}) (the open window)."""
    from scipy.stats import gamma

    lam = rate_per_s / 1000.0  # per ms
    if lam <= 0:
        return 1.0
    n, t = max_rows - 1, max_wait_ms
    if n == 0:
        m1, m2 = 0.0, 0.0
    else:
        sf = gamma.sf(t, a=n, scale=1 / lam)
        m1 = t * sf + n / lam * gamma.cdf(t, a=n + 1, scale=1 / lam)
        m2 = t * t * sf + n * (n + 1) / lam**2 * gamma.cdf(t, a=n + 2, scale=1 / lam)
    var = 1 / lam**2 + (m2 - m1 * m1)
    return float(var / (1 / lam + m1) ** 2)


def timeout_share_closed(scenario: LockScenario, rate_per_s: float) -> float:
    """Share of requests that wait longer for the lock than M − T − N̄ allows, in steady state.

    Heavy-traffic (Kingman) approximation for one lock fed by the batchers: mean wait
    ``W = ρ/(1 − ρ) · (c_a² + c_s²)/2 · S``, with the wait roughly exponential, so the share
    beyond x = M − T − N̄ is about ``ρ · exp(−ρ x / W)``; 1 when ρ ≥ 1.

    - shared batcher: one batcher's n consecutive batches go to the n owners in turn, so count in
      cycles of n batches: service Σ N (no variation), arrivals c_a² = c² / n;
    - per-owner batchers: batches of owner j arrive with their own cycle's c_j² (a timer batcher
      on a thin stream is nearly Poisson); the merged stream has c_a² ≈ Σ_j (r_j / r) c_j²
      (the asymptotic method), and the service is N_j with probability r_j / r.
    """
    sc = scenario
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    rho = lock_utilisation(sc, lam)
    if rho >= 1.0:
        return 1.0
    r = owner_batch_rates(sc, lam)
    if rho == 0.0:
        return 0.0
    n_ms = np.asarray(sc.owners_ms, dtype=float)
    if sc.batchers == "shared":
        n = len(n_ms)
        ca2 = _cycle_scv(lam, sc.max_rows, sc.max_wait_ms) / n
        cs2, s_ms = 0.0, float(n_ms.sum())
    else:
        p = r / r.sum()
        ca2 = float(sum(pj * _cycle_scv(x * lam, sc.max_rows, sc.max_wait_ms)
                        for pj, x in zip(p, sc.shares, strict=True) if pj > 0))
        s_ms = float(p @ n_ms)
        cs2 = float(p @ n_ms**2) / s_ms**2 - 1.0
    wait = rho / (1.0 - rho) * (ca2 + cs2) / 2.0 * s_ms
    x = max(0.0, sc.timeout_ms - sc.max_wait_ms - mean_commit_ms(sc, lam))
    return float(rho * math.exp(-rho * x / wait)) if wait > 0 else 0.0


def healthy_rate_per_s(scenario: LockScenario) -> float:
    """Largest user load at which :func:`timeout_share_closed` stays below 1 − HEALTHY_SHARE (1%)."""
    hi = critical_rate_per_s(scenario)
    lo = 0.0
    while hi - lo > 1e-4 * hi:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if timeout_share_closed(scenario, mid) < 1.0 - HEALTHY_SHARE else (lo, mid)
    return lo


def seed_band(scenario: LockScenario, duration_s: float = math.inf, variability: bool = False) -> tuple[float, float]:
    """Normal loads λ that reproduce "dormant, then the peak tips it": ``[λ*/peak, λ*)``.

    Dormant: the normal load fits (λ < λ*); tipped: the peak does not (peak × λ ≥ λ*). λ* is the
    fluid edge ρ = 1 (:func:`critical_rate_per_s`, for a peak of ``duration_s``), or with
    ``variability=True`` the load where 1% of requests time out in steady state
    (:func:`healthy_rate_per_s`). The band is empty when ``peak_factor <= 1``.
    """
    star = healthy_rate_per_s(scenario) if variability else critical_rate_per_s(scenario, duration_s)
    return (star / scenario.peak_factor, star) if scenario.peak_factor > 1 else (star, star)


def lock_throughput_closed(demands_per_s: Sequence[float], owners_ms: Sequence[float]) -> np.ndarray:
    """Merged commits/s each owner gets from one first-come-first-served row lock.

    Each owner's thread holds at most one request on the lock, so while several owners are
    backlogged the lock serves them in turn, one commit each. Owners whose demand is below that
    equal share get all of it; the backlogged ones share the rest equally (water-filling): find x
    with ``Σ_{r_j < x} r_j N_j + x Σ_{r_j ≥ x} N_j = 1000`` and give owner j ``min(r_j, x)``. When
    ``Σ r_j N_j ≤ 1000`` everyone gets its demand. Two backlogged owners of 16 and 27 ms: x =
    1000/43 each, 46.5 in all (``capacity.alternating_owners_tps``).
    """
    r = np.array([check_number(f"demands_per_s[{i}]", v, low=0.0) for i, v in enumerate(demands_per_s)])
    n = np.array([check_number(f"owners_ms[{i}]", v, low=0.0, low_open=True) for i, v in enumerate(owners_ms)])
    if len(r) != len(n) or len(r) == 0:
        raise ValueError(f"demands_per_s and owners_ms must be non-empty and the same length, got {len(r)} and {len(n)}")
    if np.dot(r, n) <= 1000.0:
        return r
    order = np.argsort(r)
    used = 0.0
    for k, j in enumerate(order):
        x = (1000.0 - used) / n[order[k:]].sum()
        if r[j] >= x:
            return np.minimum(r, x)
        used += r[j] * n[j]
    return r  # not reached: Σ r N > 1000 means some owner is backlogged


def split_band(scenario: LockScenario, rate_per_s: float, owner: int = 1,
               variability: bool = False) -> tuple[float, float]:
    """Per-owner batchers at normal load ``rate_per_s``: the shares of user requests from ``owner``'s
    region (the rest from owner 0's) for which "dormant, then the peak tips it" holds.

    ``(c_lo, c_hi)``: with share c the normal load fits while c < c_hi and the peak does not fit
    once c ≥ c_lo (ρ grows with the slow owner's share). Searched over c in [0, 0.5]; ``(nan, nan)``
    when no share in that range reproduces the seed.
    """
    sc = replace(scenario, batchers="per_owner", split=None) if scenario.batchers != "per_owner" else scenario
    n = len(sc.owners_ms)
    check_int("owner", owner, low=1, high=n - 1)
    lam = check_number("rate_per_s", rate_per_s, low=0.0, low_open=True)

    def at(c):
        shares = [0.0] * n
        shares[0], shares[owner] = 1.0 - c, c
        return replace(sc, split=tuple(shares))

    def star(c):
        return healthy_rate_per_s(at(c)) if variability else critical_rate_per_s(at(c))

    def edge(load):  # smallest c whose edge load is at or below `load`
        lo, hi = 0.0, 0.5
        if star(hi) > load:
            return math.nan
        if star(lo) <= load:
            return 0.0
        while hi - lo > 1e-5:
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if star(mid) > load else (lo, mid)
        return hi

    c_lo, c_hi = edge(lam * sc.peak_factor), edge(lam)
    if math.isnan(c_lo) or (not math.isnan(c_hi) and c_hi <= c_lo):
        return (math.nan, math.nan)
    return (c_lo, 0.5 if math.isnan(c_hi) else c_hi)

