"""The metastable retry storm as data: a frozen :class:`Scenario` and its parts.

Times are milliseconds, rates per second. Variants are made with ``dataclasses.replace``:

>>> from dataclasses import replace
>>> no_retries = replace(SEED_INCIDENT, retry=RetryPolicy(max_attempts=1))
>>> bounded = replace(SEED_INCIDENT, queue_limit=6)      # QueueMaxSize, in merged batches
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from ..sim import MAX_WINDOWS
from ..validate import check_fields, check_int, check_number, param

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
    "DISCIPLINES",
    "MAX_EVENTS",
]

JITTERS = ("none", "full", "equal", "decorrelated")
BATCHERS = ("timer", "leader")
DISCIPLINES = ("fifo", "adaptive_lifo")
#: The largest :attr:`Window.factor` (load, batch-time or retry-delay multiplier).
WINDOW_FACTOR_MAX = 1e3
#: The shortest retry delay :attr:`RetryPolicy.min_delay_ms` may set (1 µs).
MIN_DELAY_MS = 1e-3
#: The largest :attr:`Scenario.max_events`, and the presets' own cap. Sized from what the verdict
#: experiments need (``short_patience_1000``: 2.18–2.28 M events over its 20 seeds, the most of any
#: experiment; 5 % above its largest) and from the cost per event measured on this machine (issue
#: #20): the event loop holds ~110 bytes per event in typed arrays (per request, per attempt, the
#: retries waiting), so a run at the cap stays under 500 MB; its time is 4–15 µs per event.
MAX_EVENTS = 2_400_000


@dataclass(frozen=True)
class _Part:
    """A part of a scenario (a window, a retry policy, a protection): on creation its declared
    ranges are checked (:func:`~hotkeylab.validate.check_fields`), the message naming the class
    (``Window.factor must be … got 1001``), since the same field names recur in several parts."""

    def __post_init__(self):
        try:
            check_fields(self)
        except ValueError as err:
            raise ValueError(f"{type(self).__name__}.{err}") from None


@dataclass(frozen=True)
class Window(_Part):
    """A time window ``[start_ms, end_ms)`` with a ``factor`` whose meaning the field using it
    says (load multiplier, batch-time multiplier, share of traffic kept). ``end_ms`` may be inf."""

    start_ms: float = param(low=0.0)
    end_ms: float = param(low=0.0, allow_inf=True)
    # at most ×1000, as stretch_retries: a peak or a slow database past that leaves every
    # declared range behind (600 requests/s × 1000 is already 6e5/s, a 16 ms commit 16 s),
    # and the arrival draw and the event cap are sized for rates up to user_rate_per_s's 1e6/s
    factor: float = param(1.0, low=0.0, high=WINDOW_FACTOR_MAX)

    def __post_init__(self):
        super().__post_init__()
        check_number("Window.end_ms", self.end_ms, low=self.start_ms, allow_inf=True)

    def contains(self, t_ms: float) -> bool:
        return self.start_ms <= t_ms < self.end_ms


@dataclass(frozen=True)
class GrpcThrottle(_Part):
    """gRPC retry throttling (gRFC A6): a token count starts at ``max_tokens``; every failed
    attempt takes 1 token, every success gives back ``token_ratio``; retries are allowed only
    while the count is above ``max_tokens / 2``. One bucket stands for the whole client fleet."""

    max_tokens: float = param(10.0, low=0.0, low_open=True)
    token_ratio: float = param(0.1, low=0.0, low_open=True)


@dataclass(frozen=True)
class PercentBudget(_Part):
    """A percentage retry budget (Finagle's ``RetryBudget``, like Envoy's ``retry_budget``):
    over the last ``ttl_ms``, retries may be at most ``min_per_s × ttl`` plus ``percent`` of the
    first attempts sent. Retries over budget are not sent."""

    percent: float = param(0.2, low=0.0)
    min_per_s: float = param(10.0, low=0.0)
    ttl_ms: float = param(10_000.0, low=1.0)


@dataclass(frozen=True)
class RetryPolicy(_Part):
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

    # an integer >= 1, or inf (checked as a number here, as an integer below)
    max_attempts: float = param(math.inf, low=1.0, allow_inf=True)
    base_ms: float = param(50.0, low=0.0)
    multiplier: float = param(1.0, low=1.0)
    cap_ms: float = param(50.0, low=0.0)
    jitter: str = param("full", kind="choice", choices=JITTERS)
    # at least 1 µs: a delay below the float spacing of the clock (1e-300 ms) would retry at
    # the same instant forever, each rejection burning an event at one time (issue #20); 1 µs
    # is far above that spacing at the longest horizon (3.6e7 ms: spacing 7.5e-9 ms)
    min_delay_ms: float = param(1.0, low=MIN_DELAY_MS)
    patience_ms: float = param(math.inf, low=0.0, allow_inf=True)
    budget: GrpcThrottle | PercentBudget | None = None

    def __post_init__(self):
        attempts = self.max_attempts  # before check_fields makes a given int a float
        super().__post_init__()
        if not math.isinf(self.max_attempts):
            object.__setattr__(self, "max_attempts", check_int("RetryPolicy.max_attempts", attempts, low=1))
        if self.budget is not None and not isinstance(self.budget, GrpcThrottle | PercentBudget):
            raise ValueError(
                f"RetryPolicy.budget must be None, GrpcThrottle or PercentBudget, got {self.budget!r}"
            )

    @property
    def retries(self) -> float:
        """Most retries per request (``max_attempts − 1``; inf for no limit)."""
        return self.max_attempts - 1


@dataclass(frozen=True)
class CoDel(_Part):
    """Controlled delay at the server queue, in the form Facebook describes ("Fail at Scale",
    ACM Queue 2015) and Envoy/Folly use: if the queue has not been empty during the last
    ``interval_ms``, a batch that waited more than ``target_ms`` is dropped (its requests get a
    fast rejection); while the queue empties regularly, batches may wait up to ``interval_ms``."""

    target_ms: float = param(5.0, low=0.0, low_open=True)
    interval_ms: float = param(100.0, low=0.0, low_open=True)

    def __post_init__(self):
        super().__post_init__()
        check_number("CoDel.interval_ms", self.interval_ms, low=self.target_ms)


@dataclass(frozen=True)
class AdaptiveThrottle(_Part):
    """Client-side adaptive throttling (Google SRE book, ch. 21): over the last ``window_ms`` the
    client counts ``requests`` (attempts it wanted to send) and ``accepts`` (attempts answered in
    time) and rejects a new attempt locally with probability
    ``max(0, (requests − k × accepts) / (requests + 1))``."""

    k: float = param(2.0, low=1.0)
    window_ms: float = param(120_000.0, low=1.0)


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

    user_rate_per_s: float = param(600.0, low=0.0, high=1e6)
    batch_max_rows: int = param(20, kind="int", low=1, high=10_000)
    batch_max_wait_ms: float = param(20.0, low=0.0, high=1e6)
    batch_ms: float = param(16.0, low=0.0, low_open=True, high=1e6)
    cross_batch_ms: float = param(27.0, low=0.0, low_open=True, high=1e6)
    timeout_ms: float = param(200.0, low=0.0, low_open=True, allow_inf=True)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    queue_limit: int | None = param(None, kind="int", low=0, optional=True)
    deadline_drop: bool = param(False, kind="bool")
    discipline: str = param("fifo", kind="choice", choices=DISCIPLINES)
    codel: CoDel | None = None
    client_throttle: AdaptiveThrottle | None = None
    peak: Window | None = None
    second_owner: Window | None = None
    slow_db: Window | None = None
    degrade: Window | None = None
    restart_at_ms: float | None = param(None, low=0.0, optional=True)
    suppress_retries: Window | None = None
    stretch_retries: Window | None = None
    batcher: str = param("timer", kind="choice", choices=BATCHERS)
    owner_queues: bool = param(False, kind="bool")
    horizon_ms: float = param(600_000.0, low=1.0, high=3.6e7)
    window_ms: float = param(1_000.0, low=1.0, high=3.6e7)
    warmup_ms: float = param(5_000.0, low=0.0, high=3.6e7)
    max_events: int = param(MAX_EVENTS, kind="int", low=1, high=MAX_EVENTS)

    def __post_init__(self):
        check_fields(self)
        if not isinstance(self.retry, RetryPolicy):
            raise ValueError(f"retry must be a RetryPolicy, got {self.retry!r}")
        for name, kind in _PARTS.items():
            v = getattr(self, name)
            if v is not None and not isinstance(v, kind):
                raise ValueError(f"{name} must be None or a {kind.__name__}, got {v!r}")
        if self.degrade is not None and self.degrade.factor > 1:
            raise ValueError(f"degrade.factor is the share of user traffic kept, in [0, 1], got {self.degrade.factor}")
        if self.slow_db is not None and self.slow_db.factor <= 0:
            raise ValueError(f"slow_db.factor multiplies the batch time and must be > 0, got {self.slow_db.factor}")
        if self.owner_queues and (self.discipline != "fifo" or self.codel is not None or self.deadline_drop
                                  or self.batcher != "timer"):
            raise ValueError("owner_queues models two FIFO servers with the seed's timer batcher: use it with "
                             f"discipline='fifo', no codel, no deadline_drop and batcher='timer' (got "
                             f"discipline={self.discipline!r}, codel={self.codel!r}, "
                             f"deadline_drop={self.deadline_drop!r}, batcher={self.batcher!r})")
        if self.stretch_retries is not None and not 1e-3 <= self.stretch_retries.factor <= 1e3:
            raise ValueError(f"stretch_retries.factor multiplies the retry delay, in [0.001, 1000], "
                             f"got {self.stretch_retries.factor}")
        # the windows: at most the horizon, and at most MAX_WINDOWS of them (the Recorder's bound,
        # which the chunked engine, binning without a Recorder, must keep too)
        check_number("window_ms", self.window_ms, low=max(1.0, self.horizon_ms / MAX_WINDOWS), high=self.horizon_ms)
        check_number("warmup_ms", self.warmup_ms, low=0.0, high=self.horizon_ms)

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


#: The parts a scenario may hold, by field: each None or an instance of its class.
_PARTS = {"codel": CoDel, "client_throttle": AdaptiveThrottle, "peak": Window, "second_owner": Window,
          "slow_db": Window, "degrade": Window, "suppress_retries": Window, "stretch_retries": Window}


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
