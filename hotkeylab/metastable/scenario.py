"""The metastable retry storm as data: a frozen :class:`Scenario` and its parts.

Times are milliseconds, rates per second. Variants are made with ``dataclasses.replace``:

>>> from dataclasses import replace
>>> no_retries = replace(SEED_INCIDENT, retry=RetryPolicy(max_attempts=1))
>>> bounded = replace(SEED_INCIDENT, queue_limit=6)      # QueueMaxSize, in merged batches
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from ..validate import check_choice, check_int, check_number

__all__ = [
    "Window",
    "RetryPolicy",
    "GrpcThrottle",
    "PercentBudget",
    "CoDel",
    "AdaptiveThrottle",
    "Scenario",
    "SEED_RETRY",
    "SEED_INCIDENT",
    "SEED_QUEUE_LIMIT",
    "NORMAL",
    "DEGRADED",
    "JITTERS",
    "BATCHERS",
]

JITTERS = ("none", "full", "equal", "decorrelated")
BATCHERS = ("timer", "leader")
#: The largest :attr:`Window.factor` (load, batch-time or retry-delay multiplier).
WINDOW_FACTOR_MAX = 1e3
#: The shortest retry delay :attr:`RetryPolicy.min_delay_ms` may set (1 µs).
MIN_DELAY_MS = 1e-3


@dataclass(frozen=True)
class Window:
    """A time window ``[start_ms, end_ms)`` with a ``factor`` whose meaning the field using it
    says (load multiplier, batch-time multiplier, share of traffic kept). ``end_ms`` may be inf."""

    start_ms: float
    end_ms: float
    factor: float = 1.0

    def __post_init__(self):
        check_number("Window.start_ms", self.start_ms, low=0.0)
        check_number("Window.end_ms", self.end_ms, low=self.start_ms, allow_inf=True)
        # at most ×1000, as stretch_retries: a peak or a slow database past that leaves every
        # declared range behind (600 requests/s × 1000 is already 6e5/s, a 16 ms commit 16 s),
        # and the arrival draw and the event cap are sized for rates up to user_rate_per_s's 1e6/s
        check_number("Window.factor", self.factor, low=0.0, high=WINDOW_FACTOR_MAX)

    def contains(self, t_ms: float) -> bool:
        return self.start_ms <= t_ms < self.end_ms


@dataclass(frozen=True)
class GrpcThrottle:
    """gRPC retry throttling (gRFC A6): a token count starts at ``max_tokens``; every failed
    attempt takes 1 token, every success gives back ``token_ratio``; retries are allowed only
    while the count is above ``max_tokens / 2``. One bucket stands for the whole client fleet."""

    max_tokens: float = 10.0
    token_ratio: float = 0.1

    def __post_init__(self):
        check_number("GrpcThrottle.max_tokens", self.max_tokens, low=0.0, low_open=True)
        check_number("GrpcThrottle.token_ratio", self.token_ratio, low=0.0, low_open=True)


@dataclass(frozen=True)
class PercentBudget:
    """A percentage retry budget (Finagle's ``RetryBudget``, like Envoy's ``retry_budget``):
    over the last ``ttl_ms``, retries may be at most ``min_per_s × ttl`` plus ``percent`` of the
    first attempts sent. Retries over budget are not sent."""

    percent: float = 0.2
    min_per_s: float = 10.0
    ttl_ms: float = 10_000.0

    def __post_init__(self):
        check_number("PercentBudget.percent", self.percent, low=0.0)
        check_number("PercentBudget.min_per_s", self.min_per_s, low=0.0)
        check_number("PercentBudget.ttl_ms", self.ttl_ms, low=1.0)


@dataclass(frozen=True)
class RetryPolicy:
    """How the upstream client retries a failed attempt (timed out or rejected).

    - ``max_attempts``: attempts per user request including the first (``math.inf``: no limit,
      as the seed's upstream). ``1`` means no retry.
    - backoff before retry *k* (k = 1 for the first retry): ``d = min(cap_ms, base_ms × multiplier^(k−1))``,
      then jitter: ``none`` → d; ``full`` → U(0, d); ``equal`` → d/2 + U(0, d/2);
      ``decorrelated`` → min(cap_ms, U(base_ms, 3 × previous delay)) (Brooker, AWS Architecture
      Blog, "Exponential Backoff and Jitter", 2015). Every delay is at least ``min_delay_ms`` so a
      rejection can never spin at one instant.
    - ``patience_ms``: the user stops retrying once the next attempt would start more than this
      after the first one (the bound any real caller has; inf for none).
    - ``budget``: ``None``, a :class:`GrpcThrottle` or a :class:`PercentBudget`.
    """

    max_attempts: float = math.inf
    base_ms: float = 50.0
    multiplier: float = 1.0
    cap_ms: float = 50.0
    jitter: str = "full"
    min_delay_ms: float = 1.0
    patience_ms: float = math.inf
    budget: GrpcThrottle | PercentBudget | None = None

    def __post_init__(self):
        if not (isinstance(self.max_attempts, float) and math.isinf(self.max_attempts) and self.max_attempts > 0):
            object.__setattr__(self, "max_attempts", check_int("RetryPolicy.max_attempts", self.max_attempts, low=1))
        check_number("RetryPolicy.base_ms", self.base_ms, low=0.0)
        check_number("RetryPolicy.multiplier", self.multiplier, low=1.0)
        check_number("RetryPolicy.cap_ms", self.cap_ms, low=0.0)
        check_choice("RetryPolicy.jitter", self.jitter, JITTERS)
        # at least 1 µs: a delay below the float spacing of the clock (1e-300 ms) would retry at
        # the same instant forever, each rejection burning an event at one time (issue #20); 1 µs
        # is far above that spacing at the longest horizon (3.6e7 ms: spacing 7.5e-9 ms)
        check_number("RetryPolicy.min_delay_ms", self.min_delay_ms, low=MIN_DELAY_MS)
        check_number("RetryPolicy.patience_ms", self.patience_ms, low=0.0, allow_inf=True)
        if self.budget is not None and not isinstance(self.budget, GrpcThrottle | PercentBudget):
            raise ValueError(
                f"RetryPolicy.budget must be None, GrpcThrottle or PercentBudget, got {self.budget!r}"
            )

    @property
    def retries(self) -> float:
        """Most retries per request (``max_attempts − 1``; inf for no limit)."""
        return self.max_attempts - 1


@dataclass(frozen=True)
class CoDel:
    """Controlled delay at the server queue, in the form Facebook describes ("Fail at Scale",
    ACM Queue 2015) and Envoy/Folly use: if the queue has not been empty during the last
    ``interval_ms``, a batch that waited more than ``target_ms`` is dropped (its requests get a
    fast rejection); while the queue empties regularly, batches may wait up to ``interval_ms``."""

    target_ms: float = 5.0
    interval_ms: float = 100.0

    def __post_init__(self):
        check_number("CoDel.target_ms", self.target_ms, low=0.0, low_open=True)
        check_number("CoDel.interval_ms", self.interval_ms, low=self.target_ms)


@dataclass(frozen=True)
class AdaptiveThrottle:
    """Client-side adaptive throttling (Google SRE book, ch. 21): over the last ``window_ms`` the
    client counts ``requests`` (attempts it wanted to send) and ``accepts`` (attempts answered in
    time) and rejects a new attempt locally with probability
    ``max(0, (requests − k × accepts) / (requests + 1))``."""

    k: float = 2.0
    window_ms: float = 120_000.0

    def __post_init__(self):
        check_number("AdaptiveThrottle.k", self.k, low=1.0)
        check_number("AdaptiveThrottle.window_ms", self.window_ms, low=1.0)


@dataclass(frozen=True)
class Scenario:
    """One hot key of system A: users → batcher → the hot-key thread's queue → merged commit.

    Pipeline: Poisson user requests (``user_rate_per_s``) enter the business group-commit batcher,
    which closes a batch at ``batch_max_rows`` requests or ``batch_max_wait_ms`` after its first
    request; the single hot-key thread commits batches one at a time, each taking ``batch_ms``
    (N). A client gives up on an attempt ``timeout_ms`` (M) after sending it although the server
    may still process it later (wasted work), and retries by ``retry``.

    Triggers (windows on the timeline): ``peak`` multiplies the user rate; ``second_owner`` makes
    a second server in another datacentre take turns on the row lock, alternate batches taking
    ``cross_batch_ms``; its end is the isolation of the bad servers; ``slow_db`` multiplies the
    batch time. Interventions: ``degrade`` keeps only ``factor`` of new user requests (0 = cut
    upstream); ``restart_at_ms`` clears the server's queue and batcher; ``suppress_retries`` makes
    clients give up instead of retrying.

    ``batcher``: ``"timer"`` is the seed's business group commit, a batch closes at K rows or T ms
    after its first row whether or not the thread is busy; ``"leader"`` is a leader/follower group
    commit (as MySQL's binlog group commit): rows that arrive while the thread commits join the
    next batch, which closes when the thread is free (or at K rows); no timer.

    ``owner_queues``: with a second owner, ``False`` keeps one queue and alternates the batch
    times (the seed's "两台机器交替获得热点锁各占一半处理批次"); ``True`` gives server C its own
    queue and thread: during ``second_owner`` every other closed batch goes to C's queue, both
    threads take turns on the row lock while both have work, and after isolation C gets no new
    batches but still commits its backlog at ``cross_batch_ms`` each (the seed's second reason).

    ``stretch_retries``: the seed's measure 2, "临时改变重试时间间隔": inside the window every retry
    delay is multiplied by ``factor``.

    Server protections: ``queue_limit`` (QueueMaxSize, in merged batches waiting; a batch that
    finds the queue full is rejected), ``deadline_drop`` (skip requests that cannot be answered
    before their client's deadline), ``discipline`` (``"fifo"`` or ``"adaptive_lifo"``: newest
    batch first while the queue is overloaded), ``codel``; client side: ``client_throttle``.
    """

    user_rate_per_s: float = 600.0
    batch_max_rows: int = 20
    batch_max_wait_ms: float = 20.0
    batch_ms: float = 16.0
    cross_batch_ms: float = 27.0
    timeout_ms: float = 200.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    queue_limit: int | None = None
    deadline_drop: bool = False
    discipline: str = "fifo"
    codel: CoDel | None = None
    client_throttle: AdaptiveThrottle | None = None
    peak: Window | None = None
    second_owner: Window | None = None
    slow_db: Window | None = None
    degrade: Window | None = None
    restart_at_ms: float | None = None
    suppress_retries: Window | None = None
    stretch_retries: Window | None = None
    batcher: str = "timer"
    owner_queues: bool = False
    horizon_ms: float = 600_000.0
    window_ms: float = 1_000.0
    warmup_ms: float = 5_000.0
    max_events: int = 6_000_000

    def __post_init__(self):
        check_number("user_rate_per_s", self.user_rate_per_s, low=0.0, high=1e6)
        object.__setattr__(self, "batch_max_rows", check_int("batch_max_rows", self.batch_max_rows, low=1, high=10_000))
        check_number("batch_max_wait_ms", self.batch_max_wait_ms, low=0.0, high=1e6)
        check_number("batch_ms", self.batch_ms, low=0.0, low_open=True, high=1e6)
        check_number("cross_batch_ms", self.cross_batch_ms, low=0.0, low_open=True, high=1e6)
        check_number("timeout_ms", self.timeout_ms, low=0.0, low_open=True, allow_inf=True)
        if not isinstance(self.retry, RetryPolicy):
            raise ValueError(f"retry must be a RetryPolicy, got {self.retry!r}")
        if self.queue_limit is not None:
            object.__setattr__(self, "queue_limit", check_int("queue_limit", self.queue_limit, low=0))
        if not isinstance(self.deadline_drop, bool):
            raise ValueError(f"deadline_drop must be True or False, got {self.deadline_drop!r}")
        check_choice("discipline", self.discipline, ("fifo", "adaptive_lifo"))
        for name, kind in (
            ("codel", CoDel),
            ("client_throttle", AdaptiveThrottle),
            ("peak", Window),
            ("second_owner", Window),
            ("slow_db", Window),
            ("degrade", Window),
            ("suppress_retries", Window),
            ("stretch_retries", Window),
        ):
            v = getattr(self, name)
            if v is not None and not isinstance(v, kind):
                raise ValueError(f"{name} must be None or a {kind.__name__}, got {v!r}")
        if self.degrade is not None and self.degrade.factor > 1:
            raise ValueError(f"degrade.factor is the share of user traffic kept, in [0, 1], got {self.degrade.factor}")
        if self.slow_db is not None and self.slow_db.factor <= 0:
            raise ValueError(f"slow_db.factor multiplies the batch time and must be > 0, got {self.slow_db.factor}")
        if self.restart_at_ms is not None:
            check_number("restart_at_ms", self.restart_at_ms, low=0.0)
        check_choice("batcher", self.batcher, BATCHERS)
        if not isinstance(self.owner_queues, bool):
            raise ValueError(f"owner_queues must be True or False, got {self.owner_queues!r}")
        if self.owner_queues and (self.discipline != "fifo" or self.codel is not None or self.deadline_drop
                                  or self.batcher != "timer"):
            raise ValueError("owner_queues models two FIFO servers with the seed's timer batcher: use it with "
                             f"discipline='fifo', no codel, no deadline_drop and batcher='timer' (got "
                             f"discipline={self.discipline!r}, codel={self.codel!r}, "
                             f"deadline_drop={self.deadline_drop!r}, batcher={self.batcher!r})")
        if self.stretch_retries is not None and not 1e-3 <= self.stretch_retries.factor <= 1e3:
            raise ValueError(f"stretch_retries.factor multiplies the retry delay, in [0.001, 1000], "
                             f"got {self.stretch_retries.factor}")
        check_number("horizon_ms", self.horizon_ms, low=1.0, high=3.6e7)
        check_number("window_ms", self.window_ms, low=1.0, high=self.horizon_ms)
        check_number("warmup_ms", self.warmup_ms, low=0.0, high=self.horizon_ms)
        object.__setattr__(self, "max_events", check_int("max_events", self.max_events, low=1))

    # ------------------------------------------------------------------ derived quantities
    @property
    def trigger_window(self) -> tuple[float, float] | None:
        """``(start_ms, end_ms)`` spanning the capacity triggers (second owner, slow database)."""
        ws = [w for w in (self.second_owner, self.slow_db) if w is not None]
        if not ws:
            return None
        return min(w.start_ms for w in ws), max(w.end_ms for w in ws)

    def user_rate_at(self, t_ms: float) -> float:
        """User requests per second at time ``t_ms`` (before degrading)."""
        f = self.peak.factor if self.peak is not None and self.peak.contains(t_ms) else 1.0
        return self.user_rate_per_s * f

    def batch_ms_at(self, t_ms: float, turn: int) -> float:
        """Commit time of a batch started at ``t_ms``; ``turn`` counts batches started, so with
        a second owner active the odd turns are the cross-datacentre owner's."""
        n = self.batch_ms
        if self.second_owner is not None and self.second_owner.contains(t_ms) and turn % 2 == 1:
            n = self.cross_batch_ms
        if self.slow_db is not None and self.slow_db.contains(t_ms):
            n *= self.slow_db.factor
        return n

    def with_(self, **changes) -> Scenario:
        """``dataclasses.replace`` as a method, for chaining in notebooks."""
        return replace(self, **changes)


#: The seed's upstream: "导致上游无限的进行重试" (the upstream retried without limit). The retry
#: interval and the user's patience are assumptions (the seed gives neither): an interval drawn in
#: 0–50 ms, and a user who stops once the next attempt would start more than 300 ms after the first,
#: which after a 200 ms timeout leaves room for one retry. A literal "no limit" needs some bound on
#: how long a request lives; notebook 04's assumptions table shows how the verdicts move with it.
SEED_RETRY = RetryPolicy(
    max_attempts=math.inf,  # "导致上游无限的进行重试" — no cap on attempts
    base_ms=50.0,  # retry interval up to 50 ms (assumed; the seed gives no interval)
    multiplier=1.0,  # no backoff: the seed lists "逐渐拉长重试间隔" only as a later fix
    cap_ms=50.0,
    jitter="full",  # interval drawn uniformly in 0–50 ms (assumed)
    patience_ms=300.0,  # assumed: the user stops 300 ms after the first try
)

#: The seed's QueueMaxSize: "这个队列长度设置的远大于临界QueueSize…也导致了很多请求被队列拒绝" (set
#: far above the critical queue length; it rejected many requests). The seed gives no number:
#: 250 batches = 20 × M/N is assumed (notebook 04 shows any bound from 15 batches up gives the
#: same verdict).
SEED_QUEUE_LIMIT = 250

#: Seed 000 as calibrated, on the seed's order of events: the second owner in datacentre C has been
#: there all along ("十几天前扩容", scaled out ten-plus days before) and the system copes at normal
#: load; the month-start peak ("月初…大概高峰期比平时多20%流量") arrives at 30 s and tips it; the C
#: servers are isolated at 90 s; nothing else is done. It stays stuck.
SEED_INCIDENT = Scenario(
    user_rate_per_s=600.0,  # normal user traffic to the hot key (calibrated; the seed gives batch TPS only)
    batch_max_rows=20,  # "以固定条数(最高20条)" — at most 20 rows per merged commit
    batch_max_wait_ms=20.0,  # "固定时间间隔(最高20ms)" — or at most 20 ms
    batch_ms=16.0,  # "RTT为0.5ms的情况下平均耗时为16ms左右" — N in the primary's datacentre
    cross_batch_ms=27.0,  # "RTT为1.5ms的情况下…平均耗时为27ms左右" — N across datacentres
    timeout_ms=200.0,  # "图中以超时时间 200ms 为例" — M (the seed's example value)
    retry=SEED_RETRY,
    queue_limit=SEED_QUEUE_LIMIT,  # "远大于临界QueueSize" — far above M/N = 12.5 (250 assumed)
    peak=Window(30_000.0, math.inf, 1.2),  # "月初…大概高峰期比平时多20%流量" — +20% at 30 s
    second_owner=Window(0.0, 90_000.0),  # B and C take turns on the row lock; isolation at 90 s
    horizon_ms=240_000.0,
)

#: Normal day: no second owner (the month-start peak still comes).
NORMAL = replace(SEED_INCIDENT, second_owner=None)

#: What the team did: degrade the upstream (cut user traffic to the hot key) for 60 s, 30 s after
#: the isolation, then restore it ("最后是通过降级生产端对hotKey的请求才让故障得以消除"; the times
#: are assumed).
DEGRADED = replace(SEED_INCIDENT, degrade=Window(120_000.0, 180_000.0, 0.0))
