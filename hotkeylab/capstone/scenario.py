"""10 · Your system: the inputs of the capstone (your hot key, your clients, a trigger) and the presets
SYSTEM_A and SYSTEM_B.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

from .. import capacity
from ..metastable import (
    PercentBudget,
    RetryPolicy,
    Window,
)
from ..metastable.scenario import JITTERS
from ..validate import check_choice, check_int, check_number

PEAK_START_S = 5.0
#: The retry budget tried as a mitigation: 04's percentage budget (Finagle's ``RetryBudget``):
#: retries at most 20% of first attempts plus 10/s, over 10 s.
BUDGET = PercentBudget(percent=0.2, min_per_s=10.0, ttl_ms=10_000.0)
#: Runs of the simulated trigger: label → what is changed on top of the system as entered.
VARIANTS = ("as entered", "safe QueueMaxSize", "retry budget", "both")
#: Where a load can sit relative to the bistable band.
ZONES = ("below the band", "in the bistable band", "above capacity")


# --------------------------------------------------------------------------- the inputs
@dataclass(frozen=True)
class YourSystem:
    """One hot key of your system, in the seed's terms: users → batcher → one hot-key thread →
    merged commit under the row lock. Every field is checked on creation (``ValueError`` naming the
    field, the value and the allowed range).

    Three fields have no default, because no other system's number can stand in for yours: M
    (``timeout_ms``), the load (``normal_rate_per_s``) and the attempts per request
    (``retry_attempts``, ``math.inf`` for no cap). The merged commit N (``commit_ms``) is
    ``measured_commit_ms`` if you give it, else ``round_trips × rtt_ms + statement_ms`` (notebook
    02's line, through ``capacity.lock_hold_ms``): give one or the other. A far owner's commit
    (the seed's second owner in another datacentre) is ``measured_far_commit_ms``, or follows from
    ``far_rtt_ms`` with ``round_trips`` and ``rtt_ms``; without either, the report has no far owner
    and the ``second_owner`` trigger is refused. Defaults elsewhere are neutral (no batcher, no
    peak, no queue bound); :meth:`defaulted` lists the fields you left at them, and the report says
    so.
    """

    name: str = "your system"
    # --- the merged commit under the hot row's lock (01, 02)
    rtt_ms: float | None = None  #: RTT from the owning server to the primary database
    round_trips: float | None = None  #: network round trips per merged commit while the row is locked
    statement_ms: float | None = None  #: lock time per merged commit that does not depend on the RTT
    measured_commit_ms: float | None = None  #: measured N; None derives it from the three above
    far_rtt_ms: float | None = None  #: RTT from the farthest datacentre a server could own the key from
    measured_far_commit_ms: float | None = None  #: measured merged commit of an owner in that datacentre
    # --- the batcher (group commit, 01)
    batch_max_rows: int = 1  #: a batch closes at this many requests (1: no batcher) …
    batch_max_wait_ms: float = 0.0  #: … or this long after its first request
    # --- the client (04)
    timeout_ms: float | None = None  #: M, the client's timeout per attempt (required)
    retry_attempts: float | None = None  #: attempts per request including the first (inf: no cap; required)
    retry_backoff_ms: float = 50.0  #: delay before the first retry
    retry_multiplier: float = 1.0  #: backoff growth per retry (1 = constant)
    retry_cap_ms: float = 50.0  #: largest delay
    retry_jitter: str = "full"  #: none | full | equal | decorrelated
    retry_patience_ms: float = math.inf  #: a user stops retrying this long after the first try
    retry_budget_percent: float | None = None  #: retry budget, share of first attempts (None: none)
    # --- the server and the traffic
    queue_limit: int | None = None  #: QueueMaxSize in merged batches waiting (None: no bound)
    normal_rate_per_s: float | None = None  #: user requests/s to the hot key on a normal day (required)
    peak_factor: float = 1.0  #: the peak's multiple of the normal load (1: no peak)
    safety: float = 0.5  #: safety factor in QueueMaxSize < M/N × safety, 0 < safety <= 1

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        for req, what in (("timeout_ms", "M, your client's timeout per attempt in ms"),
                          ("normal_rate_per_s", "user requests/s to the hot key on a normal day"),
                          ("retry_attempts", "attempts per request including the first; math.inf for no cap")):
            if getattr(self, req) is None:
                raise ValueError(f"{req} is required ({what}), got None")
        for name, high in (("rtt_ms", 1_000.0), ("round_trips", 10_000.0), ("statement_ms", 1e5),
                           ("far_rtt_ms", 1_000.0)):
            if getattr(self, name) is not None:
                check_number(name, getattr(self, name), low=0.0, high=high)
        for name in ("measured_commit_ms", "measured_far_commit_ms"):
            if getattr(self, name) is not None:
                check_number(name, getattr(self, name), low=0.0, low_open=True, high=1e5)
        if self.measured_commit_ms is None:
            missing = [k for k in ("round_trips", "rtt_ms", "statement_ms") if getattr(self, k) is None]
            if missing:
                raise ValueError(f"measured_commit_ms is None and {', '.join(missing)} "
                                 f"{'is' if len(missing) == 1 else 'are'} None: give measured_commit_ms, or all "
                                 "of round_trips, rtt_ms and statement_ms (N = round_trips × rtt_ms + statement_ms)")
            if self.round_trips * self.rtt_ms + self.statement_ms <= 0:
                raise ValueError(
                    "round_trips × rtt_ms + statement_ms must be > 0 ms (the merged commit N), got "
                    f"{self.round_trips!r} × {self.rtt_ms!r} + {self.statement_ms!r}; or give measured_commit_ms")
        if self.far_rtt_ms is not None and self.measured_far_commit_ms is None and (
                self.round_trips is None or self.rtt_ms is None):
            raise ValueError(f"far_rtt_ms = {self.far_rtt_ms!r} needs round_trips and rtt_ms (the far owner makes "
                             "the same round trips at its own RTT), or give measured_far_commit_ms instead")
        check_int("batch_max_rows", self.batch_max_rows, low=1, high=10_000)
        check_number("batch_max_wait_ms", self.batch_max_wait_ms, low=0.0, high=10_000.0)
        check_number("timeout_ms", self.timeout_ms, low=0.0, low_open=True, high=1e6)
        floor_ms = self.commit_ms + self.batch_max_wait_ms
        if self.timeout_ms <= floor_ms:
            raise ValueError(
                f"timeout_ms must be > commit_ms + batch_max_wait_ms = {floor_ms:g} ms (else every request "
                f"times out even with an empty queue), got {self.timeout_ms!r}"
            )
        if not (isinstance(self.retry_attempts, float) and math.isinf(self.retry_attempts) and self.retry_attempts > 0):
            check_int("retry_attempts", self.retry_attempts, low=1, high=1_000)
        check_number("retry_backoff_ms", self.retry_backoff_ms, low=0.0, high=1e6)
        check_number("retry_multiplier", self.retry_multiplier, low=1.0, high=100.0)
        check_number("retry_cap_ms", self.retry_cap_ms, low=0.0, high=1e7)
        check_choice("retry_jitter", self.retry_jitter, JITTERS)
        check_number("retry_patience_ms", self.retry_patience_ms, low=0.0, allow_inf=True)
        if self.retry_budget_percent is not None:
            check_number("retry_budget_percent", self.retry_budget_percent, low=0.0, high=10.0)
        if self.queue_limit is not None:
            # 0 would be a loss system (every batch that finds the thread busy is turned away): the
            # closed forms below describe a queue, so the capstone refuses it rather than guess.
            check_int("queue_limit", self.queue_limit, low=1, high=1_000_000)
        check_number("normal_rate_per_s", self.normal_rate_per_s, low=0.0, low_open=True, high=1e5)
        check_number("peak_factor", self.peak_factor, low=1.0, high=10.0)
        check_number("safety", self.safety, low=0.0, high=1.0, low_open=True)

    # ------------------------------------------------------------------ derived
    @property
    def derived_commit_ms(self) -> float | None:
        """``round_trips × rtt_ms + statement_ms`` (``capacity.lock_hold_ms`` with one
        "statement"); None unless all three are given."""
        if None in (self.round_trips, self.rtt_ms, self.statement_ms):
            return None
        return capacity.lock_hold_ms(self.rtt_ms, self.round_trips, statements=1, statement_ms=self.statement_ms)

    @property
    def commit_ms(self) -> float:
        """N: the measured merged commit if given, else the derived one."""
        return self.derived_commit_ms if self.measured_commit_ms is None else float(self.measured_commit_ms)

    @property
    def far_commit_ms(self) -> float | None:
        """A far owner's merged commit: measured if given, else N plus one ``far_rtt_ms − rtt_ms``
        per round trip; None if neither was entered."""
        if self.measured_far_commit_ms is not None:
            return float(self.measured_far_commit_ms)
        if self.far_rtt_ms is None:
            return None
        return max(1e-9, self.commit_ms + self.round_trips * (self.far_rtt_ms - self.rtt_ms))

    @property
    def peak_rate_per_s(self) -> float:
        return self.normal_rate_per_s * self.peak_factor

    def defaulted(self) -> tuple[str, ...]:
        """The fields still at the class default (not entered, or entered as the default), other
        than the optional inputs whose default means "not given" (None)."""
        out = []
        for f in fields(self):
            if f.name == "name" or f.default is None:
                continue
            if getattr(self, f.name) == f.default:
                out.append(f.name)
        return tuple(out)

    def retry_policy(self) -> RetryPolicy:
        """The client's retries as a :class:`~hotkeylab.metastable.RetryPolicy`."""
        budget = None
        if self.retry_budget_percent is not None:
            budget = replace(BUDGET, percent=float(self.retry_budget_percent))
        return RetryPolicy(max_attempts=self.retry_attempts, base_ms=self.retry_backoff_ms,
                           multiplier=self.retry_multiplier, cap_ms=self.retry_cap_ms, jitter=self.retry_jitter,
                           patience_ms=self.retry_patience_ms, budget=budget)


@dataclass(frozen=True)
class Trigger:
    """What goes wrong, on a short clock: the peak starts at :data:`PEAK_START_S`, the trigger at
    ``start_s`` for ``duration_s``, the run ends at ``horizon_s`` (at most 120 s).

    ``kind="second_owner"``: a server in the far datacentre owns the key too and the two take turns
    on the row lock (seed 000, notebook 03); ``kind="slow_db"``: every merged commit takes
    ``slow_factor`` times longer (the seed's "主库突然IO尖刺或者其他处理变慢")."""

    kind: str = "second_owner"
    start_s: float = 15.0
    duration_s: float = 30.0
    slow_factor: float = 2.0
    horizon_s: float = 120.0

    def __post_init__(self):
        check_choice("kind", self.kind, ("second_owner", "slow_db"))
        check_number("horizon_s", self.horizon_s, low=20.0, high=120.0)
        check_number("start_s", self.start_s, low=0.0, high=self.horizon_s - 10.0)
        check_number("duration_s", self.duration_s, low=0.0, high=self.horizon_s - 10.0 - self.start_s)
        check_number("slow_factor", self.slow_factor, low=1.0, high=100.0)

    @property
    def window(self) -> Window:
        return Window(1e3 * self.start_s, 1e3 * (self.start_s + self.duration_s),
                      self.slow_factor if self.kind == "slow_db" else 1.0)

    def describe(self) -> str:
        what = "a second owner in the far datacentre" if self.kind == "second_owner" else (
            f"merged commits {self.slow_factor:g}× slower")
        return f"{what} from {self.start_s:g} s for {self.duration_s:g} s"


#: Seed 000's system A, as notebooks 01–04 model it. The merged commit is derived from notebook 02's
#: line through the two measurements; with the default :class:`Trigger` the simulated scenario is
#: exactly notebook 04's short clock (``lesson.SHORT_INCIDENT``).
SYSTEM_A = YourSystem(
    name="system A (seed 000)",
    rtt_ms=0.5,  # "机房B内应用和主库的rtt在0.5ms左右" — B to the primary
    round_trips=11.0,  # fitted in 02 through "RTT为1.5ms…27ms左右" and "RTT为0.5ms…16ms左右"
    statement_ms=10.5,  # the same fit's intercept: 11 × 0.5 + 10.5 = 16 ms
    far_rtt_ms=1.5,  # "机房C内应用和主库的rtt在1.5ms" — the server scaled out in C by mistake
    batch_max_rows=20,  # "以固定条数(最高20条)"
    batch_max_wait_ms=20.0,  # "固定时间间隔(最高20ms)"
    timeout_ms=200.0,  # "图中以超时时间 200ms 为例" — M
    retry_attempts=math.inf,  # "导致上游无限的进行重试"
    retry_backoff_ms=50.0,  # retry interval drawn in 0–50 ms (assumed, as in 04)
    retry_multiplier=1.0,  # no backoff: "逐渐拉长重试间隔" is only a later fix
    retry_cap_ms=50.0,
    retry_jitter="full",
    retry_patience_ms=300.0,  # assumed user patience, as in 04 (one retry after a 200 ms timeout)
    queue_limit=250,  # "这个队列长度设置的远大于临界QueueSize" — far above M/N (250 assumed, as in 04)
    normal_rate_per_s=600.0,  # calibrated in 04 (the seed gives batch TPS only)
    peak_factor=1.2,  # "月初…大概高峰期比平时多20%流量"
    safety=0.5,  # the seed's 安全系数, 0 < s < 1; 0.5 as in 04 §8
)

#: A second, different team (invented for the capstone): an inventory hot key one rack from its
#: primary, with a batchInsert in one statement, a 500 ms timeout and one capped, backed-off retry,
#: a busier peak, and a QueueMaxSize sized for memory, not for M. Its numbers keep the peak below
#: the bistable band.
SYSTEM_B = YourSystem(
    name="team B: inventory",
    # the merged commit: N = 10 × 0.3 + 7 = 10 ms; a far owner would be 1.5 ms away
    rtt_ms=0.3, round_trips=10.0, statement_ms=7.0, far_rtt_ms=1.5,
    # the batcher, as the seed's
    batch_max_rows=20, batch_max_wait_ms=20.0,
    # the client: one retry, backed off, within a second's patience
    timeout_ms=500.0, retry_attempts=2, retry_backoff_ms=100.0, retry_multiplier=2.0, retry_cap_ms=1_000.0,
    retry_jitter="full", retry_patience_ms=1_000.0,
    # the server and the traffic
    queue_limit=500, normal_rate_per_s=500.0, peak_factor=1.5, safety=0.5,
)
#: Team B's worst trigger: the primary 2.5× slower for 30 s (a second owner does not even build a
#: queue there: two owners still outrun its peak).
TRIGGER_B = Trigger(kind="slow_db", slow_factor=2.5)
