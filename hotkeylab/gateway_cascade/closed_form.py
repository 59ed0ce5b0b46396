"""07 · The closed forms: client arithmetic, shard load, coalescing, M/M/1 latency, backlogs. They
take numbers; the closed forms of a whole scenario at the ramp's plateau (loads, heap fill, young
GC) are in :mod:`.plateau`.

The simulation's own rules applied to a constant load are not a check of the simulation; the
tests compare each formula with a run in the regime where the formula's assumptions hold.
"""

from __future__ import annotations

import math

from ..validate import check_number, check_probability

MIN_MS = 60_000.0  # one minute in ms


def clients_for_calls_per_min(
    calls_per_min: float,
    poll_interval_ms: float,
    *,
    baseline_per_min: float = 0.0,
    calls_per_poll: float = 1.0,
) -> float:
    """Clients that, each polling every ``poll_interval_ms``, add up to ``calls_per_min``:
    ``N = (calls_per_min − baseline_per_min) × poll_interval / 60 s / calls_per_poll``."""
    c = check_number("calls_per_min", calls_per_min, low=0.0)
    p = check_number("poll_interval_ms", poll_interval_ms, low=0.0, low_open=True)
    b = check_number("baseline_per_min", baseline_per_min, low=0.0, high=c)
    k = check_number("calls_per_poll", calls_per_poll, low=0.0, low_open=True)
    return (c - b) * p / MIN_MS / k


def calls_per_min(
    clients: float, poll_interval_ms: float, *, baseline_per_min: float = 0.0, calls_per_poll: float = 1.0
) -> float:
    """Calls per minute from ``clients`` polling every ``poll_interval_ms`` (plus a baseline)."""
    n = check_number("clients", clients, low=0.0)
    p = check_number("poll_interval_ms", poll_interval_ms, low=0.0, low_open=True)
    b = check_number("baseline_per_min", baseline_per_min, low=0.0)
    k = check_number("calls_per_poll", calls_per_poll, low=0.0, low_open=True)
    return n * k * MIN_MS / p + b


def shard_load_per_s(
    calls_per_s: float, reads_per_call: float, writes_per_call: float, hit_ratio: float = 0.0
) -> float:
    """Operations/s on the shard holding the hot key: reads that miss a local cache of hit ratio
    ``hit_ratio`` plus writes (a local cache does not absorb writes):
    ``λ × (reads × (1 − h) + writes)``."""
    lam = check_number("calls_per_s", calls_per_s, low=0.0)
    r = check_number("reads_per_call", reads_per_call, low=0.0)
    w = check_number("writes_per_call", writes_per_call, low=0.0)
    h = check_probability("hit_ratio", hit_ratio)
    return lam * (r * (1.0 - h) + w)


def ttl_hit_ratio(rate_per_s: float, ttl_ms: float) -> float:
    """Hit ratio of a local cache entry with a TTL for one key requested at ``rate_per_s``
    (Poisson): after each miss the next ``ttl`` is all hits, so ``h = λT / (1 + λT)``."""
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    ttl = check_number("ttl_ms", ttl_ms, low=0.0)
    x = lam * ttl / 1000.0
    return x / (1.0 + x)


def coalesced_rate_per_s(rate_per_s: float, hold_ms: float) -> float:
    """Backend calls/s for one key on one host when requests arriving while a call is in flight
    (singleflight, ``hold`` = fetch time) or while a cached entry is fresh (TTL cache or negative
    cache, ``hold`` = TTL) share it: a renewal cycle lasts ``hold + 1/λ``, so ``λ / (1 + λ·hold)``."""
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    hold = check_number("hold_ms", hold_ms, low=0.0)
    return lam / (1.0 + lam * hold / 1000.0)


def mm1_latency_ms(fixed_ms: float, capacity_per_s: float, utilisation: float, timeout_ms: float) -> float:
    """Mean response time of one operation: a fixed part (network round trip, for MySQL also the
    query's own execution) plus the M/M/1 time in a server of ``capacity_per_s``, whose service time
    is ``1/capacity``: ``fixed + (1000 / C) / (1 − u)`` ms, capped at the client's timeout (at or
    above full load every caller waits for the timeout).

    The service time is *not* the round trip: a shard that does 80,000 ops/s serves one in
    12.5 µs; a 1 ms round trip is spent on the wire, where no queue forms."""
    fixed = check_number("fixed_ms", fixed_ms, low=0.0)
    cap = check_number("capacity_per_s", capacity_per_s, low=0.0, low_open=True, allow_inf=True)
    u = check_number("utilisation", utilisation, low=0.0, allow_inf=True)
    tmo = check_number("timeout_ms", timeout_ms, low=0.0, low_open=True, allow_inf=True)
    return mm1_ms(fixed, cap, u, tmo)


def mm1_ms(fixed_ms: float, capacity_per_s: float, utilisation: float, timeout_ms: float) -> float:
    """The formula of :func:`mm1_latency_ms` without its argument checks, for the model: its
    arguments are a scenario's fields, checked once when the scenario is built (their declared
    ranges keep them in range), and a utilisation the model computes (>= 0), so the two latencies
    of every step skip four checks each."""
    if utilisation >= 1.0:
        return timeout_ms
    return min(timeout_ms, fixed_ms + 1000.0 / capacity_per_s / (1.0 - utilisation))


def coalesced_utilisation(
    rate_per_key_per_s: float,
    callers: float,
    network_ms: float,
    capacity_per_s: float,
    other_per_s: float = 0.0,
    timeout_ms: float = math.inf,
) -> float:
    """Utilisation of a server whose hot-key reads are coalesced (singleflight) by ``callers``
    (hosts × keys), each seeing ``rate_per_key_per_s``, while ``other_per_s`` uncoalesced
    operations share it.

    A fetch lasts ``L = n + s / (1 − u)`` (``n`` = network round trip, ``s = 1/C`` the service
    time, see :func:`mm1_latency_ms`), and each caller sends ``λ / (1 + λL)``, so
    ``u = b + a / (1 + λL)`` with ``a`` = callers·λ/C, ``b`` = other/C. In ``x = 1 − u`` this is
    ``c₁x² − ((1 − b)c₁ − c₂ − a)x − (1 − b)c₂ = 0`` with ``c₁ = 1 + λn``, ``c₂ = λs``: one
    positive root (the product of the roots is negative). If the other load alone fills the
    server, callers wait for ``timeout_ms`` and each sends ``λ / (1 + λ·timeout)``."""
    lam = check_number("rate_per_key_per_s", rate_per_key_per_s, low=0.0)
    n = check_number("callers", callers, low=0.0)
    net = check_number("network_ms", network_ms, low=0.0)
    cap = check_number("capacity_per_s", capacity_per_s, low=0.0, low_open=True)
    other = check_number("other_per_s", other_per_s, low=0.0)
    tmo = check_number("timeout_ms", timeout_ms, low=0.0, low_open=True, allow_inf=True)
    a, b = n * lam / cap, other / cap
    if b >= 1.0:
        return b + n * lam / (1.0 + lam * tmo / 1000.0) / cap if math.isfinite(tmo) else b
    c1 = 1.0 + lam * net / 1000.0
    c2 = lam / cap  # λ × service time (1/C), both per second
    big_b = (1.0 - b) * c1 - c2 - a
    x = (big_b + math.sqrt(big_b * big_b + 4.0 * c1 * (1.0 - b) * c2)) / (2.0 * c1)
    return 1.0 - x


def backlog_growth_per_s(in_per_s: float, out_per_s: float) -> float:
    """How fast a queue grows when ``in`` exceeds ``out`` (0 when it does not)."""
    i = check_number("in_per_s", in_per_s, low=0.0)
    o = check_number("out_per_s", out_per_s, low=0.0)
    return max(0.0, i - o)


def hours_to_backlog(backlog: float, in_per_s: float, out_per_s: float) -> float:
    """Hours for a queue to reach ``backlog`` messages at constant rates (inf if it never does)."""
    b = check_number("backlog", backlog, low=0.0)
    g = backlog_growth_per_s(in_per_s, out_per_s)
    return math.inf if g == 0 else b / g / 3600.0
