"""05 · A token-bucket limiter waited on while holding the global mutex (seed 004).

The incident: the access layer kept being OOM-killed and customers saw mass timeouts, yet little
traffic reached the business layer. The cause was a QPS limiter::

    if val, exist := rateMap.Load(key1); exist {        // fast path: no mutex
        return true, val.(*RateLimit).Taken(count)
    }
    Lock.Lock()
    defer Lock.Unlock()                                  // held until the function returns ...
    ...
    if val, exist := rateMap.Load(key2); exist {        // most production traffic ends here
        return true, val.(*RateLimit).Taken(count)      // ... so Taken waits under the mutex
    }

and ``Taken(count)`` waits for ``count`` tokens from a buffered channel, or gives up when a timer
of ``count × TimeDuration`` fires. Under the mutex a key2 request holds the lock for microseconds
while tokens are in the bucket, and for up to ``count × TimeDuration`` once the bucket is empty:
"a single-lane road where the one car on it keeps stopping at the toll booth".

Model (SimPy, one process function per actor):

- :func:`source` - Poisson user requests; each picks the key1 or the key2 path.
- :func:`request` - one goroutine per request: the rate-limit gate under one of three designs.
- :func:`refill` - the limiter's ticker goroutine: one token into the channel every ``1/r``.
- :class:`ChannelBucket` - the seed's ``RateLimit``: ``BucketCh`` (a ``simpy.Store`` of capacity
  ``burst``) and :meth:`ChannelBucket.taken`, the seed's ``Taken`` (``AnyOf(timer, token)``).
- :class:`ReservationLimiter` - reservation semantics (golang.org/x/time/rate, Guava): no ticker,
  a reservation computed at once, then a sleep that holds nothing.
- the global mutex is a ``simpy.Resource(capacity=1)``.

Designs (``Scenario.design``):

- ``"seed"``: key2 takes the mutex, looks up, and calls ``Taken`` while still holding it.
- ``"fix"``: key2 looks the limiter up in the lock-free map (the mutex only guards creating a
  missing limiter, once) and calls ``Taken`` holding nothing.
- ``"reserve"``: as ``"fix"``, but the limiter reserves: if ``count`` tokens are available within
  the same ``count × TimeDuration`` budget, the request sleeps until then (holding nothing);
  otherwise it is refused at once, consuming nothing.

The client (assumed, the seed names no number): it gives up after ``client_timeout_ms``. Go's
``sync.Mutex`` cannot be cancelled and ``Taken`` does not watch the request's context, so the
goroutine stays blocked (and keeps its memory) after its client has gone; when it finally gets
its token it finds the context cancelled and the access layer drops it: the token is spent, the
business layer never sees the request (outcome ``CLIENT_GONE``).

Ledger: ``arrived = served (forwarded to the business layer while its client still waited)
+ timed_out (Taken's timer fired, or the client had gone when the request passed the gate)
+ rejected (refused at once) + in_system (still blocked when the run ends)``; ``extra`` splits
``timed_out`` into ``timer_fired`` and ``client_gone``.

The log: every request writes timestamped lines, as the seed's access layer would: ``access:
recv`` when it arrives, ``ratelimit: ...`` when the limiter code returns, ``proxy: ...`` when it
forwards or finds its client gone (:meth:`Run.log_lines`; :func:`log_gaps` reads them back).

Units: milliseconds in the API (``*_ms``), per second for rates (``*_per_s``); windowed arrays are
per second with window starts ``t`` in seconds.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

import numpy as np
import simpy

from . import capacity
from .plotting import COLORS, decorate, lock_gantt, new_figure
from .sim import Ledger, Recorder, RunStatus, check_seed, make_rng, run_bounded
from .validate import check_choice, check_int, check_number

__all__ = [
    "DESIGNS",
    "RESERVATIONS",
    "Scenario",
    "SEED_INCIDENT",
    "OFFLINE_TEST",
    "Run",
    "ChannelBucket",
    "ReservationLimiter",
    "source",
    "request",
    "refill",
    "simulate",
    "sweep_offered",
    "saturated_hold_ms",
    "saturated_hold_is_exact",
    "seed_business_share",
    "log_gaps",
    "LOG_TEXT",
    "seed_lock_capacity_per_s",
    "lock_utilisation",
    "convoy_growth_per_s",
    "lock_wait_pk_ms",
    "admitted_ceiling_per_s",
    "fixed_blocked_bound",
    "max_stable_key2_share",
    "per_machine_rho",
    "pk_comparison",
    "plot_lane",
    "plot_run",
    "plot_designs",
    "plot_convoy_vs_formula",
    "plot_sweep",
    "explore",
]

DESIGNS = ("seed", "fix", "reserve")
RESERVATIONS = ("xrate", "guava")
DESIGN_LABELS = {
    "seed": "(a) seed: Taken under the mutex",
    "fix": "(b) fix: Taken without the mutex",
    "reserve": "(c) reserve: refuse at once",
}
DESIGN_STYLE = {"seed": "-", "fix": "--", "reserve": ":"}
DESIGN_MARKER = {"seed": "o", "fix": "s", "reserve": "^"}

# outcome codes of one request
IN_SYSTEM, ADMITTED, TIMED_OUT, REJECTED, CLIENT_GONE = 0, 1, 2, 3, 4

# log line codes (what one request's handler prints) and their text
LOG_RECV, LOG_LIMIT_OK, LOG_LIMIT_TIMER, LOG_LIMIT_REFUSED, LOG_FORWARD, LOG_CANCELED = range(6)
LOG_TEXT = (
    "access: recv",
    "ratelimit: ok",
    'ratelimit: err="not get bucket"',
    "ratelimit: refused at once (no reservation within the budget)",
    "proxy: forwarded to the business layer",
    'proxy: err="context canceled" (client gone, request dropped)',
)

MAX_OFFERED_PER_S = 1_000_000.0
MAX_RATE_PER_S = 1_000_000.0
MAX_COUNT = 10_000
MAX_BURST = 10_000_000


# --------------------------------------------------------------------------- scenario
@dataclass(frozen=True)
class Scenario:
    """One load on one access-layer machine, and the gate's design. Times in ms, rates per s.

    The seed gives no numbers for the load, the Qps, ``count``, ``TimeDuration`` or the client's
    timeout; the defaults are assumptions: a production key2 load 1.5 times the key2 limiter's
    rate, so that a limiter that works passes most of the traffic (70 %) and the seed's
    observation that most of it never reached the business layer has to come from the bug.
    """

    offered_per_s: float = 1000.0  # user requests/s reaching the gate (Poisson)
    key2_share: float = 0.9  # share of requests on the key2 path (the rest: key1 fast path)
    rate_per_s: float = 600.0  # each limiter's Qps: tokens/s its ticker puts into BucketCh
    burst: int = 50  # BucketCh's capacity (tokens the bucket holds when full)
    count: int = 1  # tokens one request asks for: Taken(count)
    time_duration_ms: float = 10.0  # TimeDuration: Taken's timer is count × TimeDuration
    lookup_ms: float = 0.002  # time under the mutex for the map lookup (microseconds)
    design: str = "seed"  # "seed" | "fix" | "reserve"
    reservation: str = "xrate"  # for design "reserve": "xrate" (x/time/rate) | "guava"
    client_timeout_ms: float = 1000.0  # a client gives up after this long; a request passing
    # the gate later finds its context cancelled and is dropped (never forwarded)
    start_full: bool = True  # the limiter starts with a full bucket
    horizon_ms: float = 10_000.0  # simulated time
    window_ms: float = 250.0  # width of the windows in Run.windows

    def __post_init__(self):
        check_number("offered_per_s", self.offered_per_s, low=0.0, high=MAX_OFFERED_PER_S)
        check_number("key2_share", self.key2_share, low=0.0, high=1.0)
        check_number("rate_per_s", self.rate_per_s, low=0.0, high=MAX_RATE_PER_S)
        check_int("burst", self.burst, low=1, high=MAX_BURST)
        check_int("count", self.count, low=1, high=MAX_COUNT)
        check_number("time_duration_ms", self.time_duration_ms, low=0.0, low_open=True, high=1e7)
        check_number("lookup_ms", self.lookup_ms, low=0.0, high=1e4)
        check_choice("design", self.design, DESIGNS)
        check_choice("reservation", self.reservation, RESERVATIONS)
        check_number(
            "client_timeout_ms", self.client_timeout_ms, low=0.0, low_open=True, allow_inf=True
        )
        if not isinstance(self.start_full, bool):
            raise ValueError(f"start_full must be True or False, got {self.start_full!r}")
        check_number("horizon_ms", self.horizon_ms, low=0.0, low_open=True, high=1e8)
        check_number("window_ms", self.window_ms, low=0.0, low_open=True, high=self.horizon_ms)

    @property
    def key1_per_s(self) -> float:
        """Requests/s on the key1 fast path."""
        return self.offered_per_s * (1.0 - self.key2_share)

    @property
    def key2_per_s(self) -> float:
        """Requests/s on the key2 path (under the mutex in the seed's code)."""
        return self.offered_per_s * self.key2_share

    @property
    def timeout_ms(self) -> float:
        """Taken's timer: ``count × TimeDuration``."""
        return self.count * self.time_duration_ms


SEED_INCIDENT = Scenario(
    offered_per_s=1000.0,  # "首先，怀疑是流量过大引起的" - a load one suspects (value assumed)
    key2_share=0.9,  # "线上大部分情况需要用 key2 来获取 token，所以大部分请求都会进入加锁区域"
    rate_per_s=600.0,  # "这是一段 QPS 限流的逻辑，内部实现利用了令牌桶算法" (Qps value assumed:
    # key2 load 1.5 × Qps, so a working limiter would pass 70 % of the traffic)
    burst=50,  # BucketCh's buffer: "<-this.BucketCh" (size assumed)
    count=1,  # "rateLimit.Taken(count)" (count assumed 1)
    time_duration_ms=10.0,  # "time.NewTimer(time.Duration(count) * TimeDuration)" (assumed 10 ms)
    lookup_ms=0.002,  # "如果只是一个加锁，应该很快就能处理完" - the lookup itself is microseconds
    design="seed",  # "Lock.Lock(); defer Lock.Unlock()" then Taken - the wait holds the mutex
    client_timeout_ms=1000.0,  # "客户出现大面积的超时" - clients time out (1 s assumed)
)

OFFLINE_TEST = replace(
    SEED_INCIDENT,
    key2_share=0.1,  # "线下压测过程中，并没有发现类似的严重耗时问题，（怀疑是测试 case 没有覆盖到）"
)


# --------------------------------------------------------------------------- closed forms
def saturated_hold_ms(
    rate_per_s: float, count: int, time_duration_ms: float, lookup_ms: float = 0.0
) -> float:
    """Mean time a key2 request holds the mutex in the seed's design once the bucket is empty
    (every holder finds it empty and the next one is always waiting), ms.

    With ``τ = 1000 / r`` (the tick interval), ``L`` the lookup and ``W = L + count × TD`` (the
    lookup plus Taken's timer), every token the ticker makes goes to the current holder:

    - ``r = 0``: every timer fires, ``hold = W``;
    - ``W >= count × τ``: the holder takes the lock just after a tick (its predecessor's last
      token) and gets its ``count``-th token ``count`` ticks later; the lookup overlaps the wait,
      so ``hold = max(L, count × τ)``. The mutex passes exactly ``r / count`` requests/s;
    - ``count = 1``, ``W < τ``: holders time out one after another, ``W`` each, until a tick
      lands inside one: ``n = ceil(τ / W)`` holders per tick, ``hold = τ / n`` (one admitted,
      ``n − 1`` refused with "not get bucket");
    - ``count >= 2``, ``W < (count − 1) × τ``: no timer is long enough for ``count`` ticks;
      every holder times out, ``hold = W``, and every token is wasted;
    - ``count >= 2``, ``(count − 1) × τ <= W < count × τ``: whether a holder succeeds depends
      on where the ticks fall in its window; no closed form here. Returns ``W``, an upper bound
      on the mean hold (so ``1000 / W`` is a lower bound on the capacity): see
      :func:`saturated_hold_is_exact`.

    Exact (the simulation passes exactly ``1000 / hold`` holders per second) in every case but
    the last, up to ties (a tick at the very instant a timer fires).
    While the bucket has tokens the hold is ``L`` alone: microseconds.
    """
    r = check_number("rate_per_s", rate_per_s, low=0.0)
    c = check_int("count", count, low=1)
    td = check_number("time_duration_ms", time_duration_ms, low=0.0, low_open=True)
    lk = check_number("lookup_ms", lookup_ms, low=0.0)
    window = lk + c * td
    if r == 0:
        return window
    tau = 1000.0 / r
    if window >= c * tau:
        return max(lk, c * tau)
    if c == 1:
        return tau / math.ceil(tau / window)
    return window


def saturated_hold_is_exact(
    rate_per_s: float, count: int, time_duration_ms: float, lookup_ms: float = 0.0
) -> bool:
    """Whether :func:`saturated_hold_ms` is exact for these parameters (False only in the band
    ``count >= 2``, ``(count − 1) × τ <= lookup + count × TD < count × τ``, where it is a bound)."""
    r = check_number("rate_per_s", rate_per_s, low=0.0)
    c = check_int("count", count, low=1)
    td = check_number("time_duration_ms", time_duration_ms, low=0.0, low_open=True)
    lk = check_number("lookup_ms", lookup_ms, low=0.0)
    if r == 0 or c == 1:
        return True
    tau, window = 1000.0 / r, lk + c * td
    return window >= c * tau or window < (c - 1) * tau


def seed_lock_capacity_per_s(
    rate_per_s: float, count: int, time_duration_ms: float, lookup_ms: float = 0.0
) -> float:
    """Key2 requests/s the mutex passes in the seed's design when the bucket is empty:
    ``1000 / saturated_hold_ms`` (exactly ``r / count`` when ``lookup + count × TD >= count / r``:
    every holder then gets its tokens; otherwise some of those passed are refused)."""
    return capacity.tps_ceiling(saturated_hold_ms(rate_per_s, count, time_duration_ms, lookup_ms))


def lock_utilisation(key2_per_s: float, hold_ms: float) -> float:
    """Offered utilisation of the mutex ``ρ = λ2 × hold`` (a convoy forms when ρ >= 1)."""
    return capacity.utilisation(key2_per_s, hold_ms)


def convoy_growth_per_s(
    key2_per_s: float,
    rate_per_s: float,
    count: int,
    time_duration_ms: float,
    lookup_ms: float = 0.0,
) -> float:
    """How fast the requests blocked on the mutex pile up in the seed's design, per second:
    ``max(0, λ2 − seed_lock_capacity_per_s)``. After ``t`` seconds about ``growth × t`` are
    blocked, and a request arriving at ``t`` waits about ``(ρ − 1) × t`` for the mutex."""
    lam = check_number("key2_per_s", key2_per_s, low=0.0)
    return max(0.0, lam - seed_lock_capacity_per_s(rate_per_s, count, time_duration_ms, lookup_ms))


def lock_wait_pk_ms(key2_per_s: float, hold_ms: float, hold_scv: float = 0.0) -> float:
    """Mean wait for the mutex, M/G/1 Pollaczek–Khinchine, ms (infinite when ρ >= 1).

    Applies when the key2 requests arrive as a Poisson stream and the holds are independent of
    each other: e.g. when every holder finds the bucket empty and its timer fires (``r = 0``:
    hold = ``lookup + count × TimeDuration``, constant, ``hold_scv = 0``: M/D/1).
    """
    return capacity.pk_mean_wait_ms(key2_per_s, hold_ms, hold_scv)


def admitted_ceiling_per_s(offered_per_s: float, rate_per_s: float, count: int) -> float:
    """Upper bound on admitted requests/s through one limiter in the long run:
    ``min(λ, r / count)`` - whatever the design, a limiter hands out at most r tokens/s
    (plus one bucketful, ``burst``, once)."""
    lam = check_number("offered_per_s", offered_per_s, low=0.0)
    r = check_number("rate_per_s", rate_per_s, low=0.0)
    c = check_int("count", count, low=1)
    return min(lam, r / c)


def fixed_blocked_bound(offered_per_s: float, count: int, time_duration_ms: float) -> float:
    """Little's law bound on the mean number of blocked requests in designs ``"fix"`` and
    ``"reserve"``: nobody waits longer than ``count × TimeDuration``, so
    ``L = λ W <= λ × count × TimeDuration``, whatever the overload."""
    c = check_int("count", count, low=1)
    td = check_number("time_duration_ms", time_duration_ms, low=0.0, low_open=True)
    return capacity.littles_law(rate_per_s=offered_per_s, time_in_system_ms=c * td)


def max_stable_key2_share(
    offered_per_s: float,
    rate_per_s: float,
    count: int,
    time_duration_ms: float,
    lookup_ms: float = 0.0,
) -> float:
    """Largest key2 share the seed's design survives at this offered load (``ρ < 1`` once the
    bucket is empty): ``min(1, seed_lock_capacity_per_s / λ)``. A load test whose mix keeps the
    key2 share below this never sees the convoy."""
    lam = check_number("offered_per_s", offered_per_s, low=0.0, low_open=True)
    return min(1.0, seed_lock_capacity_per_s(rate_per_s, count, time_duration_ms, lookup_ms) / lam)


def seed_business_share(sc: Scenario, horizon_ms: float | None = None) -> dict:
    """What reaches the business layer in the seed's design, fluid FIFO convoy (count 1).

    The bucket starts full (``burst`` tokens) and drains at ``λ2 − r`` until ``t0 = burst /
    (λ2 − r)``; from then on key2 requests queue for the mutex, which passes ``μ = r`` per second
    (every holder waits one tick: requires ``lookup + TimeDuration >= 1000 / r``). With
    ``ρ = λ2 / μ > 1`` a request arriving at ``a >= t0`` passes the gate at ``t0 + ρ (a − t0)``,
    after waiting ``(ρ − 1)(a − t0)``. Its client (timeout M) is still there only if that wait is
    at most M: only key2 requests arriving before ``a* = t0 + M / (ρ − 1)`` are forwarded, and
    the last of them passes at ``t* = t0 + ρ M / (ρ − 1)``. After ``t*`` every token the key2
    limiter hands out goes to a request whose client has left, and the business layer sees only
    key1 traffic (the lock-free path, ``min(λ1, r)``).

    Returns ``t0_s``, ``a_star_s``, ``t_star_s`` (infinite when ``ρ <= 1``), ``rho``,
    ``run_share`` (forwarded / offered over ``[0, horizon]``, ignoring the few requests still in
    the gate at the end that will make it) and ``late_share`` (after ``t*``).
    """
    if not isinstance(sc, Scenario):
        raise ValueError(f"sc must be a lock_timer.Scenario, got {type(sc).__name__}")
    if sc.count != 1:
        raise ValueError(f"count must be 1 for seed_business_share, got {sc.count!r}")
    if sc.rate_per_s <= 0 or sc.lookup_ms + sc.time_duration_ms < 1000.0 / sc.rate_per_s:
        raise ValueError(
            f"rate_per_s must be > 0 with lookup_ms + time_duration_ms >= 1000 / rate_per_s "
            f"(every holder gets its token), got rate_per_s={sc.rate_per_s!r}"
        )
    t_end = sc.horizon_ms if horizon_ms is None else horizon_ms
    t_s = check_number("horizon_ms", t_end, low=0.0, low_open=True) / 1000.0
    lam, lam1, lam2, r = sc.offered_per_s, sc.key1_per_s, sc.key2_per_s, sc.rate_per_s
    m_s = sc.client_timeout_ms / 1000.0
    key1 = min(lam1, r) * t_s
    mu = seed_lock_capacity_per_s(r, 1, sc.time_duration_ms, sc.lookup_ms)
    rho = lam2 / mu
    if rho <= 1:
        share = (key1 + lam2 * t_s) / (lam * t_s) if lam > 0 else 0.0
        return dict(t0_s=math.inf, a_star_s=math.inf, t_star_s=math.inf, rho=rho,
                    run_share=share, late_share=share)
    t0 = sc.burst / (lam2 - r) if sc.start_full else 0.0
    a_star = t0 + m_s / (rho - 1)
    t_star = t0 + rho * m_s / (rho - 1)
    last_through = t0 + (t_s - t0) / rho if t_s > t0 else t_s  # the last arrival out by T
    key2 = lam2 * min(a_star, last_through, t_s)
    return dict(
        t0_s=t0,
        a_star_s=a_star,
        t_star_s=t_star,
        rho=rho,
        run_share=(key1 + key2) / (lam * t_s),
        late_share=min(lam1, r) / lam,
    )


# --------------------------------------------------------------------------- limiters
TOKEN = object()


class ChannelBucket:
    """The seed's ``RateLimit``: a buffered channel ``BucketCh`` of capacity ``burst`` that a ticker
    goroutine (:func:`refill`) fills at ``rate_per_s``; :meth:`taken` is the seed's ``Taken``."""

    def __init__(self, env: simpy.Environment, rate_per_s: float, burst: int, start_full: bool):
        self.env = env
        self.rate_per_s = rate_per_s
        self.burst = burst
        self.ch = simpy.Store(env, capacity=burst)  # BucketCh
        if start_full:
            self.ch.items.extend([TOKEN] * burst)
        self.handed_out = 0  # tokens received by some request
        self.wasted = 0  # tokens received by requests whose timer then fired

    def taken(self, count: int, time_duration_ms: float):
        """``Taken(count)``: a timer of ``count × TimeDuration``; ``count`` times, take a token or
        give up when the timer fires (``select`` on both). Returns ``(ok, tokens_received)``.

        Tokens received before the timer fires are not given back (the seed's code drops them).
        """
        env = self.env
        timer = env.timeout(count * time_duration_ms)  # time.NewTimer(count * TimeDuration)
        got = 0
        for _ in range(count):
            get = self.ch.get()  # case <-this.BucketCh
            yield get | timer  # select { token, timer }
            if get.triggered:  # a token (if both are ready, the token is already taken)
                got += 1
                self.handed_out += 1
            else:  # case <-timer.C: return errors.New("not get bucket")
                get.cancel()
                self.wasted += got
                return False, got
        return True, got


def refill(env: simpy.Environment, bucket: ChannelBucket):
    """The limiter's ticker goroutine: every ``1000 / r`` ms, put a token into ``BucketCh``
    unless it is full (``select { case ch <- token: default: }``)."""
    interval = 1000.0 / bucket.rate_per_s
    ch = bucket.ch
    while True:
        yield env.timeout(interval)
        if len(ch.items) < bucket.burst:
            ch.put(TOKEN)


class ReservationLimiter:
    """A limiter that reserves instead of waiting on a channel (no ticker, nothing held).

    ``style="xrate"`` follows golang.org/x/time/rate's ``Limiter.reserveN``: refill the tokens
    for the time elapsed (capped at ``burst``), subtract ``n`` (the count may go negative: a debt
    paid back by later arrivals), and the caller waits ``−tokens / r``; if that wait exceeds the
    caller's budget, or ``n > burst``, refuse and change nothing. ``Wait``/``WaitN`` do this
    with the context's deadline as the budget and then sleep; ``Allow`` is the budget-0 case;
    ``Reserve`` hands the delay to the caller.

    ``style="guava"`` follows Guava's ``SmoothBursty`` ``tryAcquire(permits, timeout)``: refuse
    at once when the next free ticket lies more than ``timeout`` ahead; otherwise wait until the
    next free ticket and push it ``permits / r`` further - the request's own permits are paid for
    by the *next* caller. (Real Guava starts with no stored permits; here ``start_full`` decides.)
    """

    def __init__(self, rate_per_s: float, burst: int, start_full: bool, style: str = "xrate"):
        self.rate_per_s = rate_per_s
        self.burst = burst
        self.style = check_choice("style", style, RESERVATIONS)
        self.tokens = float(burst) if start_full else 0.0
        self.last_ms = 0.0  # xrate: time of the last update
        self.next_free_ms = 0.0  # guava: the next free ticket
        self.handed_out = 0
        self.wasted = 0  # never: a refused caller consumes nothing

    def reserve(self, now_ms: float, n: int, max_wait_ms: float) -> tuple[bool, float]:
        """Try to reserve ``n`` tokens at ``now_ms`` waiting at most ``max_wait_ms``.
        Returns ``(ok, wait_ms)``; on refusal ``wait_ms`` is the wait that was too long."""
        r = self.rate_per_s
        if self.style == "xrate":
            if n > self.burst:
                return False, math.inf
            elapsed = max(0.0, now_ms - self.last_ms)
            tokens = (
                min(float(self.burst), self.tokens + elapsed * r / 1000.0) if r > 0 else self.tokens
            )
            tokens -= n
            if tokens >= 0:
                wait = 0.0
            else:
                wait = math.inf if r == 0 else -tokens * 1000.0 / r
            if wait > max_wait_ms:
                return False, wait
            self.tokens, self.last_ms = tokens, now_ms
            self.handed_out += n
            return True, wait
        # guava SmoothBursty
        if self.next_free_ms - max_wait_ms > now_ms:
            return False, self.next_free_ms - now_ms
        interval = math.inf if r == 0 else 1000.0 / r
        if now_ms > self.next_free_ms:  # resync: store the permits made while idle
            if r > 0:
                self.tokens = min(
                    float(self.burst), self.tokens + (now_ms - self.next_free_ms) / interval
                )
            self.next_free_ms = now_ms
        wait = self.next_free_ms - now_ms
        spend = min(float(n), self.tokens)
        fresh = n - spend
        if fresh > 0:
            self.next_free_ms += fresh * interval
        self.tokens -= spend
        self.handed_out += n
        return True, wait


# --------------------------------------------------------------------------- the model
@dataclass
class _Gate:
    """Shared state of one run: the mutex, the two limiters, the records."""

    env: simpy.Environment
    sc: Scenario
    mutex: simpy.Resource
    limiters: dict
    rec: Recorder
    arrive: list = field(default_factory=list)
    path: list = field(default_factory=list)
    lock_at: list = field(default_factory=list)
    unlock_at: list = field(default_factory=list)
    done_at: list = field(default_factory=list)
    outcome: list = field(default_factory=list)
    log_t: list = field(default_factory=list)  # the access layer's log: time, request, line
    log_req: list = field(default_factory=list)
    log_code: list = field(default_factory=list)
    max_blocked: int = 100_000
    crashed_at_ms: float = math.nan
    blocked: int = 0
    peak_blocked: int = 0

    def enter(self, i_path: int) -> int:
        i = len(self.arrive)
        t = self.env.now
        self.arrive.append(t)
        self.path.append(i_path)
        self.lock_at.append(math.nan)
        self.unlock_at.append(math.nan)
        self.done_at.append(math.nan)
        self.outcome.append(IN_SYSTEM)
        self.blocked += 1
        self.peak_blocked = max(self.peak_blocked, self.blocked)
        self.rec.count("offered", t)
        self.log(i, LOG_RECV)
        return i

    def log(self, i: int, code: int) -> None:
        """One line of the access layer's log: ``log.Printf`` with a timestamp."""
        self.log_t.append(self.env.now)
        self.log_req.append(i)
        self.log_code.append(code)

    def leave(self, i: int, outcome: int) -> None:
        t = self.env.now
        self.done_at[i] = t
        self.outcome[i] = outcome
        self.blocked -= 1
        name = {
            ADMITTED: "admitted",
            TIMED_OUT: "timeouts",
            REJECTED: "rejected",
            CLIENT_GONE: "client_gone",
        }[outcome]
        self.rec.count(name, t)

    def forward(self, i: int) -> None:
        """Past the limiter: forward to the business layer with the request's context. If the
        client gave up meanwhile, the context is cancelled and the call fails at once: the request
        is dropped (its token is spent all the same)."""
        if self.env.now - self.arrive[i] > self.sc.client_timeout_ms:
            self.log(i, LOG_CANCELED)
            self.leave(i, CLIENT_GONE)
        else:
            self.log(i, LOG_FORWARD)
            self.leave(i, ADMITTED)


def source(env: simpy.Environment, gate: _Gate, rng: np.random.Generator):
    """User requests: a Poisson stream at ``offered_per_s``; each goes down the key2 path with
    probability ``key2_share`` and spawns one :func:`request` goroutine. Stops when
    ``gate.max_blocked`` requests are blocked at once: the access layer is OOM-killed."""
    sc = gate.sc
    if sc.offered_per_s == 0:
        return
    mean_gap = 1000.0 / sc.offered_per_s
    block = 4096
    while True:
        gaps = rng.exponential(mean_gap, block)
        keys = rng.random(block) < sc.key2_share
        for gap, is_key2 in zip(gaps.tolist(), keys.tolist(), strict=True):
            yield env.timeout(gap)
            env.process(request(env, gate, 2 if is_key2 else 1))
            if gate.blocked >= gate.max_blocked:
                gate.crashed_at_ms = env.now
                return


def request(env: simpy.Environment, gate: _Gate, key: int):
    """One request's goroutine at the rate-limit gate.

    key1: the limiter is in the lock-free map, ``Taken`` without the mutex. key2 in the seed's
    design: ``Lock.Lock()``, look up, ``Taken`` - and only then ``Unlock`` (the ``defer``).
    key2 in the fixed designs: look up without the mutex, then wait (``"fix"``) or reserve
    (``"reserve"``) holding nothing. Then, past the limiter, :meth:`_Gate.forward`; nothing
    here watches the client: a request whose client has gone still waits for the mutex and
    still takes a token.
    """
    sc = gate.sc
    i = gate.enter(key)
    limiter = gate.limiters[key]
    if key == 2 and sc.design == "seed":
        req = gate.mutex.request()  # Lock.Lock()
        yield req
        gate.lock_at[i] = env.now
        if sc.lookup_ms > 0:
            yield env.timeout(sc.lookup_ms)  # RateLimitC / rateMap lookup
        ok, _ = yield from limiter.taken(sc.count, sc.time_duration_ms)
        gate.mutex.release(req)  # defer Lock.Unlock()
        gate.unlock_at[i] = env.now
    elif sc.design == "reserve":
        ok, wait = limiter.reserve(env.now, sc.count, sc.timeout_ms)
        if not ok:
            gate.log(i, LOG_LIMIT_REFUSED)
            gate.leave(i, REJECTED)
            return
        if wait > 0:
            yield env.timeout(wait)  # sleep until the reservation's time, holding nothing
    else:  # key1 (any design but reserve), or key2 in the fix
        ok, _ = yield from limiter.taken(sc.count, sc.time_duration_ms)
    if not ok:
        gate.log(i, LOG_LIMIT_TIMER)
        gate.leave(i, TIMED_OUT)
        return
    gate.log(i, LOG_LIMIT_OK)
    gate.forward(i)


@dataclass(frozen=True)
class Run:
    """What one simulation returns. Times in ms unless the name says otherwise.

    ``windows``: equal-length arrays - ``t`` (window start, s), ``offered``, ``admitted``
    (forwarded to the business layer while the client waited), ``client_gone`` (passed the gate
    after the client had left: dropped), ``timeouts`` (Taken's timer fired), ``rejected``
    (refused at once), all per second; ``blocked`` and ``lock_queue`` (time-averaged counts);
    ``mean_ms``/``p50_ms``/``p99_ms`` (time in the gate of the requests that finished in the
    window; NaN where none did). Per-request arrays: ``arrive_ms``, ``key``, ``lock_ms``,
    ``unlock_ms``, ``done_ms`` (NaN if still blocked), ``outcome`` (0 blocked, 1 admitted,
    2 timer fired, 3 refused at once, 4 client gone). The access layer's log: ``log_ms``,
    ``log_req``, ``log_code`` (one entry per line, in the order written; text by
    :meth:`log_lines`).
    """

    scenario: Scenario
    seed: int
    status: RunStatus
    crashed: bool  # stopped because the blocked requests reached max_blocked ("OOM")
    crashed_at_ms: float  # when they did (NaN if never); the run ends with that window
    t_end_ms: float
    ledger: Ledger
    windows: dict
    arrive_ms: np.ndarray
    key: np.ndarray
    lock_ms: np.ndarray
    unlock_ms: np.ndarray
    done_ms: np.ndarray
    outcome: np.ndarray
    peak_blocked: int
    tokens_handed_out: int
    tokens_wasted: int
    log_ms: np.ndarray
    log_req: np.ndarray
    log_code: np.ndarray

    @property
    def truncated(self) -> bool:
        """The run stopped before the horizon (event cap or blocked cap)."""
        return self.status.truncated or self.crashed

    @property
    def time_in_gate_ms(self) -> np.ndarray:
        """Time in the gate per request; for requests still blocked, their age at the end
        (a lower bound)."""
        end = np.where(np.isnan(self.done_ms), self.t_end_ms, self.done_ms)
        return end - self.arrive_ms

    def percentile_ms(self, q: float) -> float:
        """``q``-th percentile of :attr:`time_in_gate_ms` (blocked requests count with their age)."""
        v = self.time_in_gate_ms
        return float(np.percentile(v, q)) if len(v) else 0.0

    @property
    def blocked_end(self) -> int:
        """Requests still blocked when the run ended (goroutines alive, memory held)."""
        return int(self.ledger.in_system)

    @property
    def oldest_blocked_ms(self) -> float:
        """Age of the oldest request still blocked at the end (0 if none)."""
        m = np.isnan(self.done_ms)
        return float(self.t_end_ms - self.arrive_ms[m].min()) if m.any() else 0.0

    def rate_per_s(self, outcome, key: int | None = None, from_ms: float = 0.0) -> float:
        """Requests/s that finished with ``outcome`` (a code or a tuple of codes) at or after
        ``from_ms`` (all keys or one)."""
        m = np.isin(self.outcome, np.atleast_1d(outcome)) & (self.done_ms >= from_ms)
        if key is not None:
            m &= self.key == key
        span = self.t_end_ms - from_ms
        return float(m.sum() * 1000.0 / span) if span > 0 else 0.0

    @property
    def mean_blocked(self) -> float:
        """Time-average number of blocked requests over the run."""
        return float(self.time_in_gate_ms.sum() / self.t_end_ms) if self.t_end_ms > 0 else 0.0

    @property
    def late_share(self) -> float:
        """Share of requests that spent longer than the client's timeout in the gate (the client
        gave up; blocked requests count by their age)."""
        v = self.time_in_gate_ms
        return float((v > self.scenario.client_timeout_ms).mean()) if len(v) else 0.0

    def lock_waits_ms(self, from_ms: float = 0.0) -> np.ndarray:
        """Waits for the mutex of the key2 requests that got it and arrived after ``from_ms``."""
        m = ~np.isnan(self.lock_ms) & (self.arrive_ms >= from_ms)
        return self.lock_ms[m] - self.arrive_ms[m]

    def lock_holds_ms(self, from_ms: float = 0.0) -> np.ndarray:
        """Mutex hold times of the key2 requests that released it (arrived after ``from_ms``)."""
        m = ~np.isnan(self.unlock_ms) & (self.arrive_ms >= from_ms)
        return self.unlock_ms[m] - self.lock_ms[m]

    def log_lines(self, from_ms: float = 0.0, to_ms: float = math.inf) -> list[str]:
        """The access layer's log between ``from_ms`` and ``to_ms``, one string per line, in the
        order written: ``HH:MM:SS.ffffff req=NNNNNN keyK message`` (clock from the run's start)."""
        m = (self.log_ms >= from_ms) & (self.log_ms < to_ms)
        out = []
        for t, i, c in zip(
            self.log_ms[m].tolist(), self.log_req[m].tolist(), self.log_code[m].tolist(),
            strict=True,
        ):
            us = int(round(t * 1000.0))
            h, rest = divmod(us, 3_600_000_000)
            mi, rest = divmod(rest, 60_000_000)
            out.append(
                f"{h:02d}:{mi:02d}:{rest / 1e6:09.6f} req={i:06d} key{self.key[i]} {LOG_TEXT[c]}"
            )
        return out

    def summary(self) -> dict:
        """Key numbers of the run as a dict (rates per second, times in ms). ``admitted_per_s``
        counts the requests forwarded to the business layer while their client waited;
        ``business_share`` is that over the offered rate."""
        span = self.t_end_ms
        offered = self.ledger.arrived * 1000.0 / span if span else 0.0
        admitted = self.rate_per_s(ADMITTED)
        return {
            "design": self.scenario.design,
            "offered_per_s": offered,
            "admitted_per_s": admitted,
            "business_share": admitted / offered if offered else 0.0,
            "client_gone_per_s": self.rate_per_s(CLIENT_GONE),
            "timed_out_per_s": self.rate_per_s(TIMED_OUT),
            "rejected_per_s": self.rate_per_s(REJECTED),
            "p50_ms": self.percentile_ms(50),
            "p99_ms": self.percentile_ms(99),
            "blocked_end": self.blocked_end,
            "peak_blocked": self.peak_blocked,
            "mean_blocked": self.mean_blocked,
            "oldest_blocked_ms": self.oldest_blocked_ms,
            "late_share": self.late_share,
            "tokens_wasted": self.tokens_wasted,
            "truncated": self.truncated,
        }


def _level_windows(starts, ends, window_ms, n, t_end_ms):
    """Time-averaged number of open intervals ``[start, end)`` in each window (the windows after
    ``t_end_ms`` average over their part before it; empty ones are 0).

    ``F(b) = Σ max(0, min(end, b) − start)`` is the time spent before ``b``; the area in window
    ``k`` is ``F(b_{k+1}) − F(b_k)``, and ``Σ_{x_i < b} (b − x_i)`` comes from a sorted cumsum.
    """
    b = np.minimum(np.arange(n + 1) * window_ms, t_end_ms)

    def before(x):
        x = np.sort(x)
        c = np.concatenate([[0.0], np.cumsum(x)])
        k = np.searchsorted(x, b, side="left")
        return k * b - c[k]

    area = np.diff(before(np.asarray(starts, float)) - before(np.asarray(ends, float)))
    width = np.diff(b)
    return np.divide(area, width, out=np.zeros(n), where=width > 0)


def _window_stats(done_ms, sojourn_ms, window_ms, n):
    """Mean, p50 and p99 of the time in the gate of the requests finishing in each window."""
    mean = np.full(n, np.nan)
    p50 = np.full(n, np.nan)
    p99 = np.full(n, np.nan)
    m = ~np.isnan(done_ms)
    if not m.any():
        return mean, p50, p99
    idx = (done_ms[m] // window_ms).astype(int)
    soj = sojourn_ms[m]
    keep = idx < n
    idx, soj = idx[keep], soj[keep]
    order = np.argsort(idx, kind="stable")
    idx, soj = idx[order], soj[order]
    bounds = np.searchsorted(idx, np.arange(n + 1))
    for w in range(n):
        a, b = bounds[w], bounds[w + 1]
        if b > a:
            mean[w] = soj[a:b].mean()
            p50[w], p99[w] = np.percentile(soj[a:b], [50, 99])
    return mean, p50, p99


def simulate(
    scenario: Scenario = SEED_INCIDENT,
    seed: int = 0,
    *,
    max_events: int = 2_000_000,
    max_blocked: int = 100_000,
) -> Run:
    """Run the gate for ``scenario.horizon_ms`` with SimPy and return a :class:`Run`.

    Bounded for any parameters: at most ``max_events`` SimPy events (``status.truncated``), and
    once ``max_blocked`` requests are blocked at the same time the access layer is OOM-killed
    (``crashed``, ``crashed_at_ms``): no more arrivals, and the run ends with that window.
    Same ``seed``, same result.
    """
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a lock_timer.Scenario, got {type(scenario).__name__}")
    seed = check_seed(seed)
    max_events = check_int("max_events", max_events, low=1)
    max_blocked = check_int("max_blocked", max_blocked, low=1)
    sc = scenario
    rng = make_rng(seed)
    env = simpy.Environment()
    rec = Recorder(
        sc.horizon_ms,
        sc.window_ms,
        counters=("offered", "admitted", "client_gone", "timeouts", "rejected"),
    )
    if sc.design == "reserve":
        limiters = {
            k: ReservationLimiter(sc.rate_per_s, sc.burst, sc.start_full, sc.reservation)
            for k in (1, 2)
        }
    else:
        limiters = {k: ChannelBucket(env, sc.rate_per_s, sc.burst, sc.start_full) for k in (1, 2)}
        if sc.rate_per_s > 0:
            for b in limiters.values():
                env.process(refill(env, b))
    gate = _Gate(
        env=env,
        sc=sc,
        mutex=simpy.Resource(env, capacity=1),
        limiters=limiters,
        rec=rec,
        max_blocked=max_blocked,
    )
    env.process(source(env, gate, rng))

    # run window by window so that a blocked count past max_blocked stops the run ("OOM")
    events, crashed, truncated = 0, False, False
    t = 0.0
    while t < sc.horizon_ms:
        t = min(sc.horizon_ms, t + sc.window_ms)
        st = run_bounded(env, until_ms=t, max_events=max_events - events)
        events += st.events
        if st.truncated:
            truncated = True
            break
        if not math.isnan(gate.crashed_at_ms):
            crashed = True
            break
        if events >= max_events:
            truncated = env.peek() <= sc.horizon_ms
            break
    t_end = float(env.now) if (truncated or crashed) else sc.horizon_ms
    status = RunStatus(t_end_ms=t_end, events=events, truncated=truncated)
    arrive = np.asarray(gate.arrive, dtype=float)
    done = np.asarray(gate.done_at, dtype=float)
    outcome = np.asarray(gate.outcome, dtype=np.int8)
    w = rec.arrays(per_second=True)
    end = np.where(np.isnan(done), t_end, done)
    sojourn = end - arrive
    lock_at = np.asarray(gate.lock_at, dtype=float)
    key = np.asarray(gate.path, dtype=np.int8)
    n_w = len(w["t"])
    w["blocked"] = _level_windows(arrive, end, sc.window_ms, n_w, t_end)
    queued = key == 2 if sc.design == "seed" else np.zeros(len(arrive), dtype=bool)
    lock_end = np.where(np.isnan(lock_at), end, lock_at)
    w["lock_queue"] = _level_windows(arrive[queued], lock_end[queued], sc.window_ms, n_w, t_end)
    w["mean_ms"], w["p50_ms"], w["p99_ms"] = _window_stats(done, sojourn, sc.window_ms, len(w["t"]))
    timer_fired = int((outcome == TIMED_OUT).sum())
    client_gone = int((outcome == CLIENT_GONE).sum())
    ledger = Ledger(
        arrived=len(arrive),
        served=int((outcome == ADMITTED).sum()),
        timed_out=timer_fired + client_gone,
        rejected=int((outcome == REJECTED).sum()),
        in_system=int((outcome == IN_SYSTEM).sum()),
        extra={
            "timer_fired": timer_fired,
            "client_gone": client_gone,
            "peak_blocked": gate.peak_blocked,
        },
    )
    return Run(
        scenario=sc,
        seed=seed,
        status=status,
        crashed=crashed,
        crashed_at_ms=gate.crashed_at_ms,
        t_end_ms=t_end,
        ledger=ledger,
        windows=w,
        arrive_ms=arrive,
        key=key,
        lock_ms=lock_at,
        unlock_ms=np.asarray(gate.unlock_at, dtype=float),
        done_ms=done,
        outcome=outcome,
        peak_blocked=gate.peak_blocked,
        tokens_handed_out=sum(lim.handed_out for lim in limiters.values()),
        tokens_wasted=sum(lim.wasted for lim in limiters.values()),
        log_ms=np.asarray(gate.log_t, dtype=float),
        log_req=np.asarray(gate.log_req, dtype=np.int64),
        log_code=np.asarray(gate.log_code, dtype=np.int8),
    )


def sweep_offered(base: Scenario, loads_per_s, designs=DESIGNS, seed: int = 0, **kw) -> dict:
    """Run every design at every offered load (same seed); returns
    ``{design: {metric: array over loads}}`` with the metrics of :meth:`Run.summary`."""
    loads = [check_number("loads_per_s", x, low=0.0, high=MAX_OFFERED_PER_S) for x in loads_per_s]
    if not loads:
        raise ValueError("loads_per_s must list at least one offered load, got []")
    out = {}
    for d in designs:
        check_choice("designs", d, DESIGNS)
        rows = [
            simulate(replace(base, design=d, offered_per_s=x), seed, **kw).summary() for x in loads
        ]
        out[d] = {k: np.asarray([r[k] for r in rows]) for k in rows[0] if k != "design"}
        out[d]["offered_per_s"] = np.asarray(loads)
    return out


_LOG_LINE = re.compile(r"^(\d\d):(\d\d):(\d\d\.\d+) req=(\d+) (\S+) ([a-z]+):")


def log_gaps(lines) -> dict:
    """Read an access-layer log (text lines as :meth:`Run.log_lines` writes them) the way the
    seed's team did: for each request, the time between each pair of its adjacent lines.

    Returns ``{"pairs": {"access → ratelimit": gaps_ms, ...}, "longest": (line_a, line_b,
    gap_ms), "unfinished": n}``: ``gaps_ms`` a numpy array per pair of adjacent components,
    ``longest`` the two adjacent lines of one request furthest apart, ``unfinished`` the
    requests whose last line is ``access: recv`` (still inside the gate when the log ends).
    """
    last = {}  # request -> (time ms, component, line)
    pairs: dict[str, list] = {}
    longest = ("", "", -1.0)
    for line in lines:
        m = _LOG_LINE.match(line)
        if not m:
            raise ValueError(f"lines must be access-layer log lines, got {line[:60]!r}")
        h, mi, sec, req, _, comp = m.groups()
        t = (int(h) * 3600 + int(mi) * 60 + float(sec)) * 1000.0
        prev = last.get(req)
        if prev is not None:
            gap = t - prev[0]
            pairs.setdefault(f"{prev[1]} → {comp}", []).append(gap)
            if gap > longest[2]:
                longest = (prev[2], line, gap)
        last[req] = (t, comp, line)
    unfinished = sum(1 for v in last.values() if v[1] == "access")
    return {
        "pairs": {k: np.asarray(v) for k, v in pairs.items()},
        "longest": longest,
        "unfinished": unfinished,
    }


# --------------------------------------------------------------------------- figures
def plot_lane(run: Run, t0_ms: float, rows: int = 12, ax=None):
    """The single-lane road: the first ``rows`` key2 requests arriving after ``t0_ms``, one row
    each; pale = waiting for the mutex, green = holding it and admitted, red = holding it until
    Taken's timer fired. Time axis in ms from ``t0_ms``."""
    m = np.flatnonzero((run.key == 2) & (run.arrive_ms >= t0_ms) & ~np.isnan(run.unlock_ms))[:rows]
    if len(m) == 0:
        raise ValueError(
            f"t0_ms={t0_ms!r}: no key2 request arriving after it held the mutex in this run"
        )
    holds, colors = [], {}
    for j, i in enumerate(m):
        owner = f"req {j + 1}"
        holds.append((owner, run.lock_ms[i] - t0_ms, run.unlock_ms[i] - t0_ms))
        colors[owner] = COLORS["goodput"] if run.outcome[i] == ADMITTED else COLORS["timeouts"]
    if ax is None:
        _, ax = new_figure(height=0.6 + 0.28 * len(m))
    lock_gantt(holds, ax=ax, colors=colors)
    for j, i in enumerate(m):
        ax.broken_barh(
            [(run.arrive_ms[i] - t0_ms, run.lock_ms[i] - run.arrive_ms[i])],
            (j - 0.2, 0.4),
            facecolors=COLORS["queue"],
            alpha=0.3,
            lw=0,
        )
    from matplotlib.patches import Patch

    ax.legend(
        handles=[
            Patch(color=COLORS["queue"], alpha=0.3, label="waiting for the mutex"),
            Patch(color=COLORS["goodput"], label="holding it, then admitted"),
        ]
        + (
            [Patch(color=COLORS["timeouts"], label="holding it until the timer fired")]
            if any(c == COLORS["timeouts"] for c in colors.values())
            else []
        ),
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize=8,
    )
    decorate(ax, xlabel=f"time after t = {t0_ms / 1000:g} s (ms)", legend=False)
    return ax


def plot_run(run: Run, axes=None):
    """Three panels against time (s): offered, forwarded (client waiting), passed after the
    client had gone, timer fired, refused at once, per second, with the limiters' ceiling
    ``min(λ1, r/count) + min(λ2, r/count)``; requests blocked in the gate; p50 and p99 time in
    the gate of the requests finishing."""
    if axes is None:
        _, axes = new_figure(3, 1, height=2.2, sharex=True)
    w = run.windows
    t = w["t"] + run.scenario.window_ms / 2000.0
    a0, a1, a2 = axes
    a0.plot(t, w["offered"], color=COLORS["offered"], label="offered")
    a0.plot(t, w["admitted"], color=COLORS["goodput"], label="forwarded, client waiting")
    if w["client_gone"].any():
        a0.plot(t, w["client_gone"], color=COLORS["wasted"], label="passed, client gone")
    if w["timeouts"].any():
        a0.plot(t, w["timeouts"], color=COLORS["timeouts"], label="timer fired")
    if w["rejected"].any():
        a0.plot(t, w["rejected"], color=COLORS["rejected"], label="refused at once")
    sc = run.scenario
    ceiling = admitted_ceiling_per_s(
        sc.key1_per_s, sc.rate_per_s, sc.count
    ) + admitted_ceiling_per_s(sc.key2_per_s, sc.rate_per_s, sc.count)
    a0.axhline(
        ceiling, color=COLORS["capacity"], ls="--", lw=1.5, label="limiters' ceiling (closed form)"
    )
    decorate(a0, ylabel="requests/s", ylim=(0, None))
    a0.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    a1.plot(t, w["blocked"], color=COLORS["queue"], label="blocked in the gate")
    decorate(a1, ylabel="blocked requests", ylim=(0, None))
    a1.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    a2.plot(t, w["p99_ms"] / 1000, color=COLORS["latency"], label="p99")
    a2.plot(t, w["p50_ms"] / 1000, color=COLORS["latency"], ls="--", label="p50")
    decorate(a2, xlabel="time (s)", ylabel="time in gate (s)", ylim=(0, None))
    a2.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    a2.set_xlim(0, run.scenario.horizon_ms / 1000)
    return axes


def plot_designs(runs: dict, axes=None, labels: dict | None = None, floor: float = 0.1):
    """Blocked requests and the mean time in the gate (of the requests finishing) against
    time (s), one line style per run; log axes from ``floor`` up (smaller values drawn at the
    floor). ``runs`` maps a design name (or any key, with ``labels`` giving its legend text) to
    a :class:`Run`."""
    if axes is None:
        _, axes = new_figure(1, 2, height=3.2)
    from matplotlib.lines import Line2D

    a0, a1 = axes
    styles = ["-", "--", ":", "-."]
    handles, names = [], []
    for j, (d, run) in enumerate(runs.items()):
        w = run.windows
        t = w["t"] + run.scenario.window_ms / 2000.0
        label = (labels or {}).get(d, DESIGN_LABELS.get(d, str(d)))
        ls = DESIGN_STYLE.get(d, styles[j % len(styles)])
        a0.plot(t, _floored(w["blocked"], floor), color=COLORS["queue"], ls=ls)
        a1.plot(t, _floored(w["mean_ms"], floor), color=COLORS["latency"], ls=ls)
        handles.append(Line2D([], [], color="0.3", ls=ls))
        names.append(label)
    ws = [r.windows for r in runs.values()]
    _log_axis(a0, floor, _nanmin(w["blocked"] for w in ws), "blocked requests (log)")
    _log_axis(a1, floor, _nanmin(w["mean_ms"] for w in ws), "mean time in gate (ms, log)")
    decorate(a0, xlabel="time (s)", legend=False)
    decorate(a1, xlabel="time (s)", legend=False)
    a0.legend(handles, names, loc="lower right", fontsize=8, )
    return axes


def _floored(v, floor: float) -> np.ndarray:
    """Values for a log axis: those below ``floor`` (zeros included) drawn at ``floor``."""
    v = np.asarray(v, dtype=float)
    return np.where(np.isnan(v), np.nan, np.maximum(v, floor))


def _log_axis(ax, floor: float, raw_min: float, ylabel: str) -> None:
    """A log y axis from ``floor`` up (no "0" tick); the label says so when some value lay below
    the floor (``raw_min < floor``) and was drawn on it."""
    ax.set_yscale("log")
    ax.set_ylim(bottom=floor)
    if raw_min < floor:
        ylabel += f"\n(below {floor:g}: on the bottom edge)"
    ax.set_ylabel(ylabel)


def _nanmin(arrays) -> float:
    return min((float(np.nanmin(np.asarray(a, float), initial=np.inf)) for a in arrays), default=np.inf)


def plot_convoy_vs_formula(run: Run, axes=None):
    """The seed's design against its closed forms, time in s: blocked requests vs
    ``growth × t`` and the time in the gate of the key2 requests finishing vs ``(1 − 1/ρ) × t``
    (a FIFO convoy served at ``μ`` from t = 0: a request finishing at t arrived at ``μ t / λ2``)."""
    sc = run.scenario
    mu = seed_lock_capacity_per_s(sc.rate_per_s, sc.count, sc.time_duration_ms, sc.lookup_ms)
    growth = convoy_growth_per_s(
        sc.key2_per_s, sc.rate_per_s, sc.count, sc.time_duration_ms, sc.lookup_ms
    )
    rho = sc.key2_per_s / mu if mu > 0 else math.inf
    if axes is None:
        _, axes = new_figure(1, 2, height=3.0)
    a0, a1 = axes
    w = run.windows
    t = w["t"] + sc.window_ms / 2000.0
    tt = np.linspace(0, run.t_end_ms / 1000, 50)
    a0.plot(t, w["blocked"], color=COLORS["queue"], label="simulation")
    a0.plot(tt, growth * tt, color=COLORS["formula"], ls="--", lw=1.5, label="(λ2 − r/count) × t")
    k2 = run.key == 2
    mean2, _, _ = _window_stats(run.done_ms[k2], run.time_in_gate_ms[k2], sc.window_ms, len(t))
    a1.plot(t, mean2 / 1000, color=COLORS["latency"], label="simulation (key2, mean)")
    slope = max(0.0, 1 - 1 / rho) if rho > 0 else 0.0
    a1.plot(tt, slope * tt, color=COLORS["formula"], ls="--", lw=1.5, label="(1 − 1/ρ) × t")
    decorate(a0, xlabel="time (s)", ylabel="blocked requests", ylim=(0, None))
    decorate(a1, xlabel="time the request leaves the gate (s)", ylabel="time in gate (s)", ylim=(0, None))
    return axes


def plot_sweep(
    sw: dict, rate_per_s: float, key2_share: float, axes=None, p99_floor_ms: float = 0.01
):
    """Against offered load (requests/s): forwarded in time and not forwarded (timer fired,
    refused at once, or client gone) per second, p99 time in the gate (log, values below
    ``p99_floor_ms`` drawn at it), most requests blocked at once (log); one line style and
    marker per design, the same in every panel; colour is the quantity. Dashed grey: the load at
    which key2 alone reaches the limiter's rate, ``r / key2_share``."""
    if axes is None:
        fig, axes = new_figure(1, 3, height=3.6)
        fig.set_size_inches(9.0, 3.6)
    a0, a1, a2 = axes
    from matplotlib.lines import Line2D

    for d, s in sw.items():
        x = s["offered_per_s"]
        kw = dict(ls=DESIGN_STYLE[d], marker=DESIGN_MARKER[d], ms=4)
        a0.plot(x, s["admitted_per_s"], color=COLORS["goodput"], **kw)
        lost = s["timed_out_per_s"] + s["rejected_per_s"] + s["client_gone_per_s"]
        a0.plot(x, lost, color=COLORS["rejected"], **kw)
        a1.plot(x, _floored(s["p99_ms"], p99_floor_ms), color=COLORS["latency"], **kw)
        a2.plot(x, _floored(s["peak_blocked"], 1.0), color=COLORS["queue"], **kw)
    for ax in axes:
        if key2_share > 0:
            ax.axvline(rate_per_s / key2_share, color=COLORS["capacity"], ls="--", lw=1)
    _log_axis(a1, p99_floor_ms, _nanmin(s["p99_ms"] for s in sw.values()), "p99 time in gate (ms, log)")
    _log_axis(a2, 1.0, _nanmin(s["peak_blocked"] for s in sw.values()), "most blocked at once (log)")
    decorate(
        a0,
        xlabel="offered (requests/s)",
        ylabel="requests/s",
        legend=False,
        ylim=(0, None),
    )
    a0.text(
        0.03, 0.97, "green: forwarded in time\nbrown: not forwarded",
        transform=a0.transAxes, va="top", fontsize=8,
    )
    decorate(a1, xlabel="offered (requests/s)", legend=False)
    decorate(a2, xlabel="offered (requests/s)", legend=False)
    handles = [
        Line2D([], [], color="0.3", ls=DESIGN_STYLE[d], marker=DESIGN_MARKER[d], ms=4)
        for d in sw
    ]
    a0.figure.legend(
        handles, [DESIGN_LABELS[d] for d in sw], loc="lower center", ncol=3, fontsize=8,
        bbox_to_anchor=(0.5, -0.02), title="line style and marker: design (colour: quantity)",
        title_fontsize=8,
    )
    a0.figure.tight_layout(rect=(0, 0.12, 1, 1))
    return axes


def pk_comparison(
    key2_rates_per_s,
    seed: int = 0,
    *,
    time_duration_ms: float = 10.0,
    count: int = 1,
    horizon_ms: float = 120_000.0,
    warmup_ms: float = 5_000.0,
) -> dict:
    """The mutex as an M/D/1 server: key2 traffic only, a limiter with ``Qps = 0`` (every holder's
    timer fires, so each hold is ``lookup + count × TimeDuration``). Returns arrays ``key2_per_s``,
    ``rho``, ``sim_wait_ms`` (mean wait for the mutex of requests arriving after ``warmup_ms``)
    and ``pk_wait_ms`` (Pollaczek–Khinchine, infinite at ρ >= 1)."""
    rates = [
        check_number("key2_rates_per_s", x, low=0.0, low_open=True, high=MAX_OFFERED_PER_S)
        for x in key2_rates_per_s
    ]
    base = replace(
        SEED_INCIDENT,
        rate_per_s=0.0,
        start_full=False,
        key2_share=1.0,
        count=count,
        time_duration_ms=time_duration_ms,
        horizon_ms=horizon_ms,
        window_ms=min(horizon_ms, 1000.0),
    )
    hold = base.lookup_ms + base.timeout_ms
    sim_w, pk_w, rho = [], [], []
    for lam in rates:
        run = simulate(replace(base, offered_per_s=lam), seed)
        waits = run.lock_waits_ms(from_ms=warmup_ms)
        sim_w.append(float(waits.mean()) if len(waits) else math.nan)
        pk_w.append(lock_wait_pk_ms(lam, hold))
        rho.append(lock_utilisation(lam, hold))
    return {
        "key2_per_s": np.asarray(rates),
        "rho": np.asarray(rho),
        "sim_wait_ms": np.asarray(sim_w),
        "pk_wait_ms": np.asarray(pk_w),
        "hold_ms": hold,
    }


def per_machine_rho(
    key2_per_s: float,
    rate_per_s: float,
    machines: int,
    count: int,
    time_duration_ms: float,
    quota: str = "machine",
) -> float:
    """Utilisation of each machine's mutex (seed's design, bucket empty) when the key2 load is
    spread evenly over ``machines`` machines.

    ``quota="machine"``: every machine's limiter has Qps ``r`` - adding machines adds mutex
    capacity, and the convoy ends once ``ρ < 1``. ``quota="cluster"``: ``r`` is one quota split
    evenly (``r / machines`` each) - each machine's ρ stays the same (until the per-machine
    tick interval exceeds ``TimeDuration``): adding machines only spreads the convoy.
    """
    k = check_int("machines", machines, low=1)
    check_choice("quota", quota, ("machine", "cluster"))
    lam = check_number("key2_per_s", key2_per_s, low=0.0)
    r = check_number("rate_per_s", rate_per_s, low=0.0)
    r_k = r if quota == "machine" else r / k
    return lock_utilisation(lam / k, saturated_hold_ms(r_k, count, time_duration_ms))


def explore(
    offered_per_s: float = SEED_INCIDENT.offered_per_s,
    key2_share: float = SEED_INCIDENT.key2_share,
    count: int = SEED_INCIDENT.count,
    time_duration_ms: float = SEED_INCIDENT.time_duration_ms,
    rate_per_s: float = SEED_INCIDENT.rate_per_s,
    design: str = "seed",
    seed: int = 0,
    horizon_ms: float = 5000.0,
    plot: bool = True,
) -> dict:
    """The what-if widget's function: simulate one scenario, print its key numbers and draw
    :func:`plot_run` (if ``plot``), and return its summary (a dict) with the closed-form mutex
    utilisation ``rho_saturated`` (bucket empty, seed's design) beside it."""
    sc = replace(
        SEED_INCIDENT,
        offered_per_s=offered_per_s,
        key2_share=key2_share,
        count=count,
        time_duration_ms=time_duration_ms,
        rate_per_s=rate_per_s,
        design=design,
        horizon_ms=horizon_ms,
    )
    run = simulate(sc, seed, max_events=600_000, max_blocked=50_000)
    out = run.summary()
    hold = saturated_hold_ms(sc.rate_per_s, sc.count, sc.time_duration_ms, sc.lookup_ms)
    out["rho_saturated"] = lock_utilisation(sc.key2_per_s, hold)
    if plot:
        import matplotlib.pyplot as plt

        print(
            f"forwarded in time {out['admitted_per_s']:.1f}/s "
            f"({100 * out['business_share']:.0f}% of offered), passed after the client left "
            f"{out['client_gone_per_s']:.1f}/s, timer fired {out['timed_out_per_s']:.1f}/s, "
            f"refused at once {out['rejected_per_s']:.1f}/s, p99 {out['p99_ms']:.1f} ms, "
            f"blocked at the end {out['blocked_end']}, mutex rho with the bucket empty "
            f"{out['rho_saturated']:.2f}" + (" (run truncated)" if out["truncated"] else "")
        )
        axes = plot_run(run)
        axes[0].figure.tight_layout()
        plt.show()
    return out
