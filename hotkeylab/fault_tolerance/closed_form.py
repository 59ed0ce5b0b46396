"""09 · Closed forms of the practices' counts and probabilities: retries, the backup's load,
Erlang B for machines without a queue, ejection delay, duplicate gifts, isolation, a split store,
configuration checks and verification. The worker-pool formulas (a call's holding time under a
timeout) are in :mod:`.holding`.

Every function checks its arguments: bad input raises ValueError naming the parameter.
"""

from __future__ import annotations

import math

from .. import capacity
from ..validate import check_int, check_number, check_probability
from .common import MAX_WORKERS

#: The most servers a closed form spreads a load over (each costs one Erlang-B recursion).
MAX_SERVERS = 10_000
#: The most clicks :func:`gift_distribution` enumerates (its state grows with the square).
MAX_CLICKS = 1000


# --------------------------------------------------------------------------- 1 · retry
def backend_capacity_per_s(workers: int, service_ms: float) -> float:
    """Calls per second ``workers`` workers complete: ``workers × 1000 / service_ms``."""
    w = check_int("workers", workers, low=1)
    return w * capacity.tps_ceiling(service_ms)


def attempts_per_user(p_success: float, attempts: int, clicks: int = 1) -> float:
    """Expected backend calls per user request: clicks × calls per click.

    ``E = A(1 − p, attempts) × A((1 − p)^attempts, clicks)`` with ``A`` =
    :func:`hotkeylab.capacity.retry_amplification`: a click makes up to ``attempts`` calls; a
    user clicks again only when all of them failed. ``= attempts × clicks`` when every call fails.
    """
    p = check_probability("p_success", p_success)
    a = check_int("attempts", attempts, low=1)
    k = check_int("clicks", clicks, low=1)
    per_click = capacity.retry_amplification(1.0 - p, a)
    return per_click * capacity.retry_amplification((1.0 - p) ** a, k)


def user_success(p_success: float, attempts: int, clicks: int = 1) -> float:
    """Share of user requests that end in success: ``1 − (1 − p)^(attempts × clicks)``
    (:func:`hotkeylab.capacity.retry_success`). The seed: 95% with one retry gives 99.75%."""
    a = check_int("attempts", attempts, low=1)
    k = check_int("clicks", clicks, low=1)
    return capacity.retry_success(p_success, a * k)


def retry_load_per_s(users_per_s: float, p_success: float, attempts: int, clicks: int = 1) -> float:
    """Calls/s reaching the backend: ``users_per_s × attempts_per_user``."""
    lam = check_number("users_per_s", users_per_s, low=0.0)
    return lam * attempts_per_user(p_success, attempts, clicks)


def storm_sustains(users_per_s: float, capacity_per_s: float, attempts: int, clicks: int = 1) -> bool:
    """True if a retry storm, once every call times out, holds itself up: the calls made when
    all fail, ``users × attempts × clicks``, exceed the backend's capacity
    (:func:`hotkeylab.capacity.bistable_band`)."""
    mu = check_number("capacity_per_s", capacity_per_s, low=0.0, low_open=True)
    return retry_load_per_s(users_per_s, 0.0, attempts, clicks) > mu


# --------------------------------------------------------------------------- 2 · failover
def failover_latency_ms(service_ms: float, detect_ms: float) -> float:
    """Latency of a request that fails over: the time A takes to fail plus B's service,
    ``detect_ms + service_ms`` (queueing at B ignored)."""
    s = check_number("service_ms", service_ms, low=0.0)
    d = check_number("detect_ms", detect_ms, low=0.0)
    return d + s


def mean_latency_ms(service_ms: float, detect_ms: float, failover_share: float) -> float:
    """Mean latency when a share ``f`` of requests fails over: ``(1 − f)·S + f·(detect + S)``."""
    f = check_probability("failover_share", failover_share)
    return (1.0 - f) * check_number("service_ms", service_ms, low=0.0) + f * failover_latency_ms(
        service_ms, detect_ms
    )


def backup_utilisation(rate_per_s: float, service_ms: float, workers: int, failover_share: float) -> float:
    """Busy share of the backup's workers: ``f × λ × S / workers``."""
    f = check_probability("failover_share", failover_share)
    w = check_int("workers", workers, low=1)
    return f * capacity.utilisation(rate_per_s, service_ms) / w


def backup_mean_utilisation(
    rate_per_s: float, service_ms: float, workers: int, primary_down_share: float
) -> float:
    """Long-run busy share of an idle backup: it works only while the primary is down,
    ``down_share × λ × S / workers``; the rest of the time it is paid for and idle."""
    return backup_utilisation(rate_per_s, service_ms, workers, primary_down_share)


# --------------------------------------------------------------------------- 3 · ejection
def erlang_b(workers: int, offered_erlangs: float) -> float:
    """Erlang B: share of calls refused by ``workers`` workers without a queue at offered load
    ``a = λ × S`` (in erlangs). Recursion ``B(0) = 1``, ``B(k) = a B(k−1) / (k + a B(k−1))``:
    ``workers`` steps, so ``workers`` is declared up to ``MAX_WORKERS`` (ValueError beyond), and
    the loop stops once ``B`` has underflowed to 0 (it stays 0)."""
    c = check_int("workers", workers, low=1, high=MAX_WORKERS)
    a = check_number("offered_erlangs", offered_erlangs, low=0.0)
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
        if b == 0.0:
            break
    return b


def server_success(rate_per_s: float, workers: int, service_ms: float) -> float:
    """Share of calls one machine answers at ``rate_per_s``: ``1 − B(workers, λS)``."""
    return 1.0 - erlang_b(workers, capacity.utilisation(rate_per_s, service_ms))


def pool_success(
    rate_per_s: float, in_rotation: int, workers: int, service_ms: float, dead: int = 0
) -> float:
    """Pool success rate when requests spread evenly over ``in_rotation`` machines of which
    ``dead`` answer nothing: ``(1 − dead / n) × server_success(λ / n)``. The seed's case, one
    of four dead and not ejected: 75%."""
    n = check_int("in_rotation", in_rotation, low=1)
    d = check_int("dead", dead, low=0, high=n)
    return (1.0 - d / n) * server_success(check_number("rate_per_s", rate_per_s, low=0.0) / n,
                                          workers, service_ms)


def ejection_delay_ms(fault_at_ms: float, check_interval_ms: float, threshold: float = 0.5) -> float:
    """How long after a machine dies the router ejects it.

    Checks run at multiples of the interval ``I`` and judge the calls of the last interval. A
    machine that dies a fraction ``u`` into an interval answered about ``u`` of that
    interval's calls (even traffic): it is ejected at the end of that interval if
    ``u < threshold``, else at the end of the next. Averaged over ``u`` the delay is one interval.
    """
    t = check_number("fault_at_ms", fault_at_ms, low=0.0)
    i = check_number("check_interval_ms", check_interval_ms, low=0.0, low_open=True)
    thr = check_probability("threshold", threshold)
    u = (t % i) / i
    end = (math.floor(t / i) + 1) * i
    return (end if u < thr else end + i) - t


def datacentre_loss_success(
    rate_per_s: float, servers: int, datacentres: int, workers: int, service_ms: float
) -> float:
    """Success rate once one whole datacentre is ejected: the load spreads over the
    ``servers × (1 − 1/datacentres)`` machines left, ``server_success(λ / remaining)``."""
    n = check_int("servers", servers, low=2, high=MAX_SERVERS)
    d = check_int("datacentres", datacentres, low=2, high=n)
    left = n - n // d
    return server_success(check_number("rate_per_s", rate_per_s, low=0.0) / left, workers, service_ms)


def datacentre_loss_max_rate(
    servers: int, datacentres: int, workers: int, service_ms: float, min_success: float = 0.99
) -> float:
    """The highest total load (requests/s) at which the machines left after losing one
    datacentre still answer ``min_success`` of the calls (bisection on
    :func:`datacentre_loss_success`, which falls with the load)."""
    m = check_probability("min_success", min_success)
    datacentre_loss_success(0.0, servers, datacentres, workers, service_ms)  # checks the rest
    lo, hi = 0.0, backend_capacity_per_s(workers, service_ms) * servers * 4
    for _ in range(60):
        mid = (lo + hi) / 2
        if datacentre_loss_success(mid, servers, datacentres, workers, service_ms) >= m:
            lo = mid
        else:
            hi = mid
    return lo


def cascade_successes(rate_per_s: float, servers: int, workers: int, service_ms: float) -> list:
    """Success rate of each machine when the load is spread over k = servers, servers − 1, …, 1
    machines. Under overload every ejection raises the others' load and lowers their success:
    once it is below the threshold at k − 1, one ejection takes the whole group down."""
    n = check_int("servers", servers, low=1, high=MAX_SERVERS)
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    return [server_success(lam / k, workers, service_ms) for k in range(n, 0, -1)]


# --------------------------------------------------------------------------- 5 · duplicates
def gift_distribution(
    p_ok: float,
    p_connect_fail: float,
    p_read_lost: float,
    p_read_delivered: float,
    clicks: int,
    read_cap: int | None = None,
) -> dict:
    """Exact distribution of the gifts one user receives, by enumerating the clicks.

    Per call: ``p_ok`` answers in time (a gift, the user stops), ``p_connect_fail`` fails with
    no gift, ``p_read_lost`` times out with no gift, ``p_read_delivered`` times out and delivers
    later (a gift, but the user sees a failure). The user clicks while failing, at most
    ``clicks`` times; with ``read_cap`` AMS refuses a click once the user has had that many read
    timeouts. Returns ``{"pmf": {gifts: prob}, "mean_gifts", "duplicates" (E[max(0, g − 1)]),
    "no_gift", "calls"}``.
    """
    ps = [check_probability(n, v) for n, v in (
        ("p_ok", p_ok), ("p_connect_fail", p_connect_fail), ("p_read_lost", p_read_lost),
        ("p_read_delivered", p_read_delivered))]
    if abs(sum(ps) - 1.0) > 1e-9:
        raise ValueError(f"p_ok + p_connect_fail + p_read_lost + p_read_delivered must be 1, got {sum(ps):g}")
    a, c, r0, r1 = ps
    k = check_int("clicks", clicks, low=1, high=MAX_CLICKS)
    cap = None if read_cap is None else check_int("read_cap", read_cap, low=1, high=MAX_CLICKS)
    alive = {(0, 0): 1.0}  # (read timeouts, gifts) -> probability, still clicking
    pmf: dict = {}
    calls = 0.0
    for _ in range(k):
        nxt: dict = {}
        for (reads, gifts), p in alive.items():
            if cap is not None and reads >= cap:  # AMS refuses: "可能已发货"
                pmf[gifts] = pmf.get(gifts, 0.0) + p
                continue
            calls += p
            pmf[gifts + 1] = pmf.get(gifts + 1, 0.0) + p * a
            for key, q in (((reads, gifts), c), ((reads + 1, gifts), r0), ((reads + 1, gifts + 1), r1)):
                if q:
                    nxt[key] = nxt.get(key, 0.0) + p * q
        alive = nxt
    for (_, gifts), p in alive.items():
        pmf[gifts] = pmf.get(gifts, 0.0) + p
    mean = sum(g * p for g, p in pmf.items())
    dup = sum(max(0, g - 1) * p for g, p in pmf.items())
    return {"pmf": dict(sorted(pmf.items())), "mean_gifts": mean, "duplicates": dup,
            "no_gift": pmf.get(0, 0.0), "calls": calls}


# --------------------------------------------------------------------------- 7 · isolation
def shared_pool_success(query_erlangs: float, delivery_erlangs: float, workers: int) -> float:
    """Fluid approximation of the share of requests a shared FIFO pool with impatient users
    serves: 1 while the offered work fits, else ``workers / (query + delivery work)``, the
    same share for both classes (FIFO does not know which request matters)."""
    q = check_number("query_erlangs", query_erlangs, low=0.0)
    d = check_number("delivery_erlangs", delivery_erlangs, low=0.0)
    w = check_int("workers", workers, low=1)
    total = q + d
    return 1.0 if total <= w else w / total


def separated_success(erlangs: float, workers: int) -> float:
    """The same fluid approximation for one class in its own pool: ``min(1, workers / work)``."""
    return shared_pool_success(erlangs, 0.0, workers)


def storage_split(utilisation: float, stores: int, p_down: float) -> dict:
    """One store split into ``stores`` independently deployed stores of the same size (the seed's
    "从1个分离为3个"), the load spread evenly (an assumption). Returns per-store utilisation
    ``ρ / k``; mean response in units of the service time for one server with a queue (M/M/1,
    ``1 / (1 − ρ)``); the share of the data one store failure takes down (``1 / k``); with each
    store down on a given day with probability ``p`` independently: the chance that everything is
    down (``p^k``), that something is down (``1 − (1 − p)^k``) and the expected share of the data
    down, ``p`` whatever ``k``: splitting shrinks the blast radius, not the expected loss."""
    rho = check_number("utilisation", utilisation, low=0.0, high=1.0, high_open=True)
    k = check_int("stores", stores, low=1, high=1000)
    p = check_probability("p_down", p_down)
    return {
        "utilisation": rho / k,
        "response_in_service_times": 1.0 / (1.0 - rho / k),
        "blast_radius": 1.0 / k,
        "p_all_down": p**k,
        "p_any_down": 1.0 - (1.0 - p) ** k,
        "expected_share_down": p,
    }


# --------------------------------------------------------------------------- 8 · business checks
def check_gift_config(daily_limit: int, pool_gifts: int) -> list:
    """The configuration check's gift rule (one of the seed's "数十种业务的搭配检查规则"):
    a daily limit above the gift's resource pool is refused before the config goes live. Returns
    the list of violations (empty: the config may be published)."""
    lim = check_int("daily_limit", daily_limit, low=0)
    pool = check_int("pool_gifts", pool_gifts, low=0)
    if lim > pool:
        return [f"daily_limit {lim} exceeds the resource pool of {pool} gifts: claim {pool + 1} would fail"]
    return []


def unverified_launches(activities: int, gifts_per_activity: int, p_verify: float) -> float:
    """Expected activities launched with at least one gift nobody claimed for real, when the
    verification is an oral agreement ("口头约定") and each gift is verified with probability
    ``p`` independently: ``activities × (1 − p^gifts)``. A program gate leaves none."""
    a = check_int("activities", activities, low=0)
    g = check_int("gifts_per_activity", gifts_per_activity, low=1)
    p = check_probability("p_verify", p_verify)
    return a * (1.0 - p**g)
