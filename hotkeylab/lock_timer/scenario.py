"""05 · The scenario: one access-layer machine, its load and the gate's design (seed 004).

Each field's range is declared once, on the field; every preset line quotes the seed sentence it
stands for, or says the value is assumed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..validate import check_fields, check_number, param

__all__ = [
    "DESIGNS", "RESERVATIONS", "DESIGN_LABELS", "DESIGN_STYLE", "DESIGN_MARKER",
    "IN_SYSTEM", "ADMITTED", "TIMED_OUT", "REJECTED", "CLIENT_GONE",
    "LOG_RECV", "LOG_LIMIT_OK", "LOG_LIMIT_TIMER", "LOG_LIMIT_REFUSED", "LOG_FORWARD", "LOG_CANCELED", "LOG_TEXT",
    "MAX_OFFERED_PER_S", "MAX_RATE_PER_S", "MAX_COUNT", "MAX_BURST", "MAX_EVENTS",
    "Scenario", "SEED_INCIDENT", "OFFLINE_TEST",
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
#: The upper end of ``max_events``: a run at the cap ends in about 10-15 s on the 2-core CI machine
#: even under load (measured there with other work running: 12-25 µs per SimPy event, also with
#: 10^5 goroutines blocked on the mutex). A run that reaches it ends with ``status.truncated``.
MAX_EVENTS = 500_000


# --------------------------------------------------------------------------- scenario
@dataclass(frozen=True)
class Scenario:
    """One load on one access-layer machine, and the gate's design. Times in ms, rates per s.

    The seed gives no numbers for the load, the Qps, ``count``, ``TimeDuration`` or the client's
    timeout; the defaults are assumptions: a production key2 load 1.5 times the key2 limiter's
    rate, so that a limiter that works passes most of the traffic (70 %) and the seed's
    observation that most of it never reached the business layer has to come from the bug.
    """

    offered_per_s: float = param(1000.0, low=0.0, high=MAX_OFFERED_PER_S)
    # user requests/s reaching the gate (Poisson)
    key2_share: float = param(0.9, kind="probability")
    # share of requests on the key2 path (the rest: key1 fast path)
    rate_per_s: float = param(600.0, low=0.0, high=MAX_RATE_PER_S)
    # each limiter's Qps: tokens/s its ticker puts into BucketCh
    burst: int = param(50, kind="int", low=1, high=MAX_BURST)
    # BucketCh's capacity (tokens the bucket holds when full)
    count: int = param(1, kind="int", low=1, high=MAX_COUNT)  # tokens one request asks for: Taken(count)
    time_duration_ms: float = param(10.0, low=0.0, low_open=True, high=1e7)
    # TimeDuration: Taken's timer is count × TimeDuration
    lookup_ms: float = param(0.002, low=0.0, high=1e4)
    # time under the mutex for the map lookup (microseconds)
    design: str = param("seed", kind="choice", choices=DESIGNS)  # "seed" | "fix" | "reserve"
    reservation: str = param("xrate", kind="choice", choices=RESERVATIONS)
    # for design "reserve": "xrate" (x/time/rate) | "guava"
    client_timeout_ms: float = param(1000.0, low=0.0, low_open=True, allow_inf=True)
    # a client gives up after this long; a request passing the gate later finds its context
    # cancelled and is dropped (never forwarded)
    start_full: bool = param(True, kind="bool")  # the limiter starts with a full bucket
    horizon_ms: float = param(10_000.0, low=0.0, low_open=True, high=1e8)  # simulated time
    window_ms: float = param(250.0, low=0.0, low_open=True)  # width of the windows in Run.windows
    max_events: int = param(MAX_EVENTS, kind="int", low=1, high=MAX_EVENTS)  # SimPy events per run

    def __post_init__(self):
        check_fields(self)
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
