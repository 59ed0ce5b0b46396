"""10 · Capstone: your system. A team enters its own numbers once and gets the course's analysis.

Enter the numbers in a :class:`YourSystem` (a frozen dataclass, checked on creation), describe a
trigger with :class:`Trigger`, and call :func:`report`:

>>> from dataclasses import replace
>>> from hotkeylab.capstone import SYSTEM_A, Trigger, report
>>> mine = replace(SYSTEM_A, name="our ledger", normal_rate_per_s=400.0)
>>> r = report(mine, Trigger(), runs=False)       # closed forms only; runs=True adds the simulation
>>> round(r.capacity_per_s, 1), r.safe_queue_limit
(62.5, 6)

The report holds the lock hold and TPS ceiling (notebooks 01–02), the critical queue length M/N and
a safe QueueMaxSize (04 §3, §8), the bistable band of the retry policy in user requests/s and where
the normal load and the peak sit in it (04a), the closed form of the trigger (04 §1, 04a), and
runs of the trigger with and without the mitigations on the fast engine (a short clock: at most
120 s). :data:`CHECKLIST` collects the defences all five seeds teach, each with its notebook.

Only public APIs are used: :mod:`hotkeylab.capacity`, :mod:`hotkeylab.metastable` (``Scenario``,
``Window``, ``RetryPolicy``, ``PercentBudget``, ``simulate``, ``closed_forms``,
``effective_timeout_queue``) and its lesson helpers (``band_user_rates``, ``story``,
``small_multiples``), :mod:`hotkeylab.plotting`, :mod:`hotkeylab.validate`. Times are ms in
arguments (``*_ms``), seconds on plot axes and where a name ends in ``_s``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

import numpy as np

from . import capacity, plotting
from .metastable import (
    PercentBudget,
    RetryPolicy,
    Scenario,
    Window,
    closed_forms,
    effective_timeout_queue,
    lesson,
    simulate,
)
from .metastable.analysis import BLOCK_S, RECOVERY_SHARE
from .metastable.scenario import JITTERS
from .plotting import COLORS
from .validate import check_choice, check_int, check_number

__all__ = [
    "YourSystem",
    "Trigger",
    "Report",
    "SYSTEM_A",
    "SYSTEM_B",
    "TRIGGER_B",
    "BUDGET",
    "PEAK_START_S",
    "VARIANTS",
    "ZONES",
    "CHECKLIST",
    "ChecklistItem",
    "scenario",
    "report",
    "add_runs",
    "predict",
    "Prediction",
    "Condition",
    "SimCount",
    "combine",
    "variant_system",
    "turned_away_share",
    "attempts_after_rejection",
    "mm1k_blocking",
    "config_checks",
    "ConfigCheck",
    "CONFIG_RULES",
    "NEAR",
    "MIN_SEEDS",
    "VERDICTS",
    "band",
    "zone",
    "safe_retries",
    "plot_zones",
    "plot_runs",
    "checklist_markdown",
    "Dashboard",
    "dashboard_controls",
    "FIELDS",
    "FIELD_HELP",
    "systems_markdown",
]

#: The month-start peak starts this many seconds into every simulated run (as 04's short clock).
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
    rtt_ms=0.3,
    round_trips=10.0,
    statement_ms=7.0,  # N = 10 × 0.3 + 7 = 10 ms
    far_rtt_ms=1.5,
    batch_max_rows=20,
    batch_max_wait_ms=20.0,
    timeout_ms=500.0,
    retry_attempts=2,  # one retry
    retry_backoff_ms=100.0,
    retry_multiplier=2.0,
    retry_cap_ms=1_000.0,
    retry_jitter="full",
    retry_patience_ms=1_000.0,
    queue_limit=500,
    normal_rate_per_s=500.0,
    peak_factor=1.5,
    safety=0.5,
)
#: Team B's worst trigger: the primary 2.5× slower for 30 s (a second owner does not even build a
#: queue there: two owners still outrun its peak).
TRIGGER_B = Trigger(kind="slow_db", slow_factor=2.5)


# --------------------------------------------------------------------------- closed forms
def scenario(system: YourSystem, trigger: Trigger | None = None, *, queue_limit: int | None | str = "entered",
             budget: bool = False) -> Scenario:
    """The :class:`~hotkeylab.metastable.Scenario` of ``system`` under ``trigger`` (None: no
    trigger). ``queue_limit="entered"`` keeps the system's QueueMaxSize; an int or None replaces
    it. ``budget=True`` adds :data:`BUDGET` to the retries (unless the system has a budget)."""
    _check_system(system)
    trigger = Trigger() if trigger is None else trigger
    if not isinstance(trigger, Trigger):
        raise ValueError(f"trigger must be a capstone Trigger or None, got {trigger!r}")
    ql = system.queue_limit if queue_limit == "entered" else queue_limit
    if ql is not None:
        ql = check_int("queue_limit", ql, low=1)
    _check_trigger_fits(system, trigger)
    retry = system.retry_policy()
    if budget and retry.budget is None:
        retry = replace(retry, budget=BUDGET)
    w = trigger.window
    has = trigger.duration_s > 0
    return Scenario(
        user_rate_per_s=system.normal_rate_per_s,
        batch_max_rows=system.batch_max_rows,
        batch_max_wait_ms=system.batch_max_wait_ms,
        batch_ms=system.commit_ms,
        cross_batch_ms=system.commit_ms if system.far_commit_ms is None else system.far_commit_ms,
        timeout_ms=system.timeout_ms,
        retry=retry,
        queue_limit=ql,
        peak=Window(1e3 * PEAK_START_S, math.inf, system.peak_factor),
        second_owner=w if has and trigger.kind == "second_owner" else None,
        slow_db=w if has and trigger.kind == "slow_db" else None,
        horizon_ms=1e3 * trigger.horizon_s,
    )


def _check_system(system) -> None:
    if not isinstance(system, YourSystem):
        raise ValueError(f"system must be a YourSystem, got {type(system).__name__}")


def _check_trigger_fits(system: YourSystem, trigger: Trigger) -> None:
    if trigger.kind == "second_owner" and trigger.duration_s > 0 and system.far_commit_ms is None:
        raise ValueError(
            "trigger kind 'second_owner' needs the far owner's merged commit, which this system does not give: "
            "set measured_far_commit_ms, or far_rtt_ms with round_trips and rtt_ms; or use "
            "Trigger(kind='slow_db', slow_factor=...)")


def _budget_of(sc: Scenario) -> PercentBudget | None:
    b = sc.retry.budget
    return b if isinstance(b, PercentBudget) else None


def band(sc: Scenario) -> tuple[float, float]:
    """The bistable band in user requests/s for ``sc``'s single owner and retries.

    Upper edge: the user rate whose batches alone fill the thread. Lower edge: the rate at which
    the storm (each request sent ``R + 1`` times, R the retries that fit in the patience) still
    fills it: ``hi / (R + 1)`` (``lesson.band_user_rates``). A percentage budget caps the retries
    at ``p·λ + min_per_s``, so the storm also needs ``(1 + p)·λ + min ≥ hi``: the lower edge is
    the larger of the two."""
    lo, hi = lesson.band_user_rates(sc)
    b = _budget_of(sc)
    if b is not None:
        lo = max(lo, (hi - b.min_per_s) / (1.0 + b.percent))
    return min(lo, hi), hi


def zone(rate_per_s: float, band_edges: tuple[float, float]) -> str:
    """Which of :data:`ZONES` a user rate falls in."""
    lo, hi = band_edges
    r = check_number("rate_per_s", rate_per_s, low=0.0)
    if r >= hi:
        return ZONES[2]
    return ZONES[1] if r >= lo else ZONES[0]


def safe_retries(peak_rate_per_s: float, upper_edge_per_s: float) -> int | None:
    """The most retries per request that keep ``peak_rate_per_s`` below the band's lower edge
    ``upper / (R + 1)``; None if the peak is at or above the upper edge (no retry count helps)."""
    p = check_number("peak_rate_per_s", peak_rate_per_s, low=0.0, low_open=True)
    hi = check_number("upper_edge_per_s", upper_edge_per_s, low=0.0, low_open=True)
    if p >= hi:
        return None
    return max(0, math.ceil(hi / p - 1e-12) - 2)


# --------------------------------------------------------------------------- the prediction
#: A closed-form quantity closer than this (relative) to the edge it is compared with is "near":
#: the model's noise (Poisson users, jittered retries) can put the run on either side.
NEAR = 0.1
#: Fewest seeds behind a simulated verdict ("recovered in 20/20 seeds").
MIN_SEEDS = 20
#: Verdicts a report can give.
VERDICTS = ("recovers", "stuck", "near the edge", "disagree")


@dataclass(frozen=True)
class Condition:
    """One closed-form comparison behind a prediction: what is compared, whether it holds, and
    whether it is near its edge (``near``)."""

    key: str
    text: str
    holds: bool
    near: bool


@dataclass(frozen=True)
class Prediction:
    """The closed forms' prediction: ``verdict`` is "recovers", "stuck" or "near the edge".

    ``stuck = above ∨ (reaches ∧ lets ∧ ((in_band ∧ holds) ∨ slow_drain)) ∨ turned_away`` over the
    :attr:`conditions` (keys as named); "near the edge" when flipping one condition that is near
    its edge would change that answer (:attr:`flips`)."""

    verdict: str
    why: str
    conditions: tuple
    flips: tuple

    def condition(self, key: str) -> Condition:
        for c in self.conditions:
            if c.key == key:
                return c
        raise ValueError(f"key must be one of {[c.key for c in self.conditions]}, got {key!r}")


def _stuck(c: dict) -> bool:
    storm = c["in_band"] and c["holds"]
    return c["above"] or (c["reaches"] and c["lets"] and (storm or c["slow_drain"])) or c["turned_away"]


def _mean_delay_factor(jitter: str) -> float:
    return {"none": 1.0, "full": 0.5, "equal": 0.75, "decorrelated": 1.0}[jitter]


def attempts_after_rejection(system: YourSystem) -> float:
    """Attempts a user makes when every attempt is turned away at once (a full queue): the
    first plus every retry whose mean backoff still starts within the patience, capped by
    ``retry_attempts`` (and at 1,000 for an unbounded policy)."""
    _check_system(system)
    cap = min(system.retry_attempts, 1_000)
    t, k, attempts = 0.0, 0, 1
    f = _mean_delay_factor(system.retry_jitter)
    while attempts < cap:
        d = max(1.0, f * min(system.retry_cap_ms, system.retry_backoff_ms * system.retry_multiplier ** k))
        if t + d > system.retry_patience_ms:
            break
        t, k, attempts = t + d, k + 1, attempts + 1
    return float(attempts)


def mm1k_blocking(rho: float, k: int) -> float:
    """Share of arrivals an M/M/1/K queue turns away: ``(1 − ρ) ρ^K / (1 − ρ^(K+1))`` (1/(K+1)
    at ρ = 1). ``k`` counts the places, the one in service included (QueueMaxSize + 1)."""
    rho = check_number("rho", rho, low=0.0)
    k = check_int("k", k, low=1)
    if abs(rho - 1.0) < 1e-9:
        return 1.0 / (k + 1)
    if rho > 1.0:  # the same formula in 1/ρ, without overflow
        x = 1.0 / rho
        return (1.0 - x) / (1.0 - x ** (k + 1))
    return (1.0 - rho) * rho ** k / (1.0 - rho ** (k + 1))


def turned_away_share(system: YourSystem, rate_per_s: float | None = None) -> float:
    """Share of user requests a bounded queue turns away for good at ``rate_per_s`` (default: the
    peak) with normal commits: a batch that finds QueueMaxSize batches waiting is rejected
    (blocking from M/M/1/K, K = QueueMaxSize + 1, an approximation: real batches are more
    regular, so it errs high); a rejected request retries (:func:`attempts_after_rejection`),
    which adds load, up to the retry budget. Solved as a fixed point; 0 without a bound."""
    _check_system(system)
    if system.queue_limit is None:
        return 0.0
    lam = system.peak_rate_per_s if rate_per_s is None else check_number("rate_per_s", rate_per_s, low=0.0)
    mu = capacity.tps_ceiling(system.commit_ms)
    a = attempts_after_rejection(system)
    k = system.queue_limit + 1
    offered, p = lam, 0.0
    for _ in range(200):
        rho = capacity.batcher_batch_rate(min(offered, 1e6), system.batch_max_rows, system.batch_max_wait_ms) / mu
        p = mm1k_blocking(rho, k)
        amp = a if p >= 1.0 - 1e-12 else (1.0 - p ** a) / (1.0 - p)
        new = lam * amp
        if system.retry_budget_percent is not None:
            new = min(new, lam * (1.0 + system.retry_budget_percent) + BUDGET.min_per_s)
        if abs(new - offered) <= 1e-9 * max(1.0, offered):
            break
        offered = 0.5 * (offered + new)
    return float(p ** a)


def predict(system: YourSystem, trigger: Trigger | None = None) -> Prediction:
    """What the closed forms say happens to ``system`` under ``trigger`` (default: a second owner
    for 30 s), from five comparisons, each with its numbers (:class:`Condition`):

    - ``above``: the peak at or above the band's upper edge (capacity in user requests/s);
    - ``reaches``: during the trigger the queue reaches 04's timeout threshold (M − T − N̄)/N̄;
    - ``lets``: the queue limit lets a request wait past M (QueueMaxSize × N̄ + T + N_max > M);
    - ``in_band``: the peak at or above the band's lower edge (a storm feeds itself);
    - ``holds``: after the trigger the queue can hold a backlog past (M − T − N)/N (no bound, or
      QueueMaxSize above it), so the storm has somewhere to live;
    - ``slow_drain``: below the band the backlog left by the trigger still needs longer to drain to
      (M − T − N)/N than the run has left before its last 5-s block (the seed's "只能等积压队列慢慢
      消化"): within the horizon it has not recovered yet;
    - ``turned_away``: a bounded queue turns away ≥ 10% of the peak's requests for good
      (:func:`turned_away_share`), which already fails the 90% recovery yardstick.

    No condition is checked before another: the verdict is one formula over all of them."""
    _check_system(system)
    trigger = Trigger() if trigger is None else trigger
    sc = scenario(system, trigger)
    n, t_w, m = system.commit_ms, system.batch_max_wait_ms, system.timeout_ms
    lam = system.peak_rate_per_s
    lo, hi = band(sc)
    n_trig, n_max, cap_trig = _trigger_commits(system, trigger)
    d_peak = closed_forms(sc)["demand_peak"]
    growth = capacity.queue_growth_rate(d_peak, 0.0, cap_trig)
    threshold = effective_timeout_queue(sc, n_trig)
    dur = trigger.duration_s
    t_thr = threshold / growth if growth > 0 else math.inf
    lim = system.queue_limit
    lim_trig = (m - t_w - n_max) / n_trig  # largest QueueMaxSize that keeps the trigger's waits under M
    q_eff = capacity.timeout_queue_length(m, n, t_w)
    away = turned_away_share(system)
    share = 1.0 - RECOVERY_SHARE
    # the backlog at the end of the trigger, and how long it takes to drain while timed-out requests
    # are retried (R retries each, capped by a retry budget)
    backlog = min(math.inf if lim is None else lim, max(0.0, growth) * dur) if dur > 0 else 0.0
    r_storm = closed_forms(sc)["attempts_per_request_stuck"] - 1
    retried = lam * (r_storm + 1) if math.isfinite(r_storm) else 1e6
    if system.retry_budget_percent is not None:
        retried = min(retried, lam * (1.0 + system.retry_budget_percent) + BUDGET.min_per_s)
    net = capacity.tps_ceiling(n) - capacity.batcher_batch_rate(min(retried, 1e6), system.batch_max_rows, t_w)
    left_s = trigger.horizon_s - (trigger.start_s + dur) - BLOCK_S
    drain_s = 0.0 if backlog <= q_eff else (math.inf if net <= 0 else (backlog - q_eff) / net)

    def rel(a, b):
        return abs(a / b - 1.0) if b > 0 and math.isfinite(a) and math.isfinite(b) else math.inf

    conds = (
        Condition("above", f"peak {lam:.0f}/s {'≥' if lam >= hi else '<'} capacity {hi:.0f}/s (band's upper edge)",
                  lam >= hi, rel(lam, hi) < NEAR),
        Condition("reaches", "trigger never fills the queue (capacity stays above the peak's demand)" if growth <= 0
                  or dur <= 0 else (f"queue reaches the threshold {threshold:.2f} batches after {t_thr:.1f} s, "
                                    f"{'within' if t_thr <= dur else 'after'} the {dur:g}-s trigger"),
                  dur > 0 and t_thr <= dur, dur > 0 and rel(t_thr, dur) < NEAR),
        Condition("lets", "no queue bound: a request can wait past M" if lim is None else
                  (f"QueueMaxSize {lim} {'>' if lim > lim_trig else '≤'} (M − T − N_max)/N̄ = {lim_trig:.2f}: a "
                   f"request behind a full queue waits {lim * n_trig + t_w + n_max:.0f} ms "
                   f"{'>' if lim > lim_trig else '≤'} M"),
                  lim is None or lim > lim_trig, lim is not None and (rel(lim, lim_trig) < NEAR or abs(lim - lim_trig) <= 1)),
        Condition("in_band", f"peak {lam:.0f}/s {'≥' if lam >= lo else '<'} the band's lower edge {lo:.0f}/s"
                  + (" (R = ∞: no cap on attempts or patience, so any load can feed a storm)" if lo == 0 else ""),
                  lam >= lo, rel(lam, lo) < NEAR),
        Condition("holds", "no queue bound: a backlog can grow past (M − T − N)/N" if lim is None else
                  (f"QueueMaxSize {lim} {'>' if lim > q_eff else '≤'} (M − T − N)/N = {q_eff:.2f}"),
                  lim is None or lim > q_eff, lim is not None and (rel(lim, q_eff) < NEAR or abs(lim - q_eff) <= 1)),
        Condition("slow_drain", "no backlog above (M − T − N)/N to drain" if drain_s == 0 else
                  (f"the trigger's backlog ({backlog:.0f} batches) drains to {q_eff:.2f} in "
                   f"{drain_s:.1f} s {'>' if drain_s > left_s else '≤'} the {left_s:.0f} s the run has left"),
                  drain_s > left_s, 0 < drain_s and rel(drain_s, left_s) < NEAR),
        Condition("turned_away", "no queue bound: nothing turned away" if lim is None else
                  f"the bounded queue turns away {100 * away:.1f}% of the peak's requests for good "
                  f"({'≥' if away >= share else '<'} {100 * share:.0f}%)",
                  away >= share, lim is not None and share / 3 <= away <= 3 * share),
    )
    state = {c.key: c.holds for c in conds}
    stuck = _stuck(state)
    flips = tuple(c.key for c in conds if c.near and _stuck({**state, c.key: not c.holds}) != stuck)
    by = {c.key: c for c in conds}
    if stuck:
        if state["above"]:
            why = "the peak alone is above capacity (a queue bound turns timeouts into rejections but adds none)"
        elif state["turned_away"]:
            why = "the bounded queue turns too many requests away at the peak"
        elif not (state["in_band"] and state["holds"]):
            why = "the backlog the trigger leaves has not drained by the end of the run"
        else:
            why = "the trigger pushes the queue past the threshold, the queue can hold the storm, and the peak is in the band"
    else:
        reasons = []
        if not (state["reaches"] and state["lets"]):
            reasons.append("the trigger starts no timeouts" if not state["lets"] or not state["reaches"] else "")
        if not state["holds"]:
            reasons.append("after the trigger the queue bound is below the timeout threshold, so no storm can live")
        if not state["in_band"]:
            reasons.append("below the band a storm dies out")
        if state["reaches"] and state["lets"] and not state["slow_drain"] and by["slow_drain"].text[:2] != "no":
            reasons.append("the backlog drains in time")
        why = "; ".join(r for r in reasons if r)
    verdict = "near the edge" if flips else ("stuck" if stuck else "recovers")
    if flips:
        why = (f"{'stuck' if stuck else 'recovers'} by the closed forms ({why}), but "
               + ", ".join(by[k].text for k in flips) + " is within the model's noise")
    return Prediction(verdict, why, conds, flips)


def _trigger_commits(system: YourSystem, trigger: Trigger) -> tuple[float, float, float]:
    """(mean commit N̄, slowest commit N_max, capacity in commits/s) while the trigger lasts."""
    n = system.commit_ms
    if trigger.kind == "second_owner" and system.far_commit_ms is not None:
        far = system.far_commit_ms
        return (n + far) / 2.0, max(n, far), capacity.alternating_owners_tps([n, far])
    if trigger.kind == "second_owner":  # no trigger at all (duration 0) and no far owner entered
        return n, n, capacity.tps_ceiling(n)
    return n * trigger.slow_factor, n * trigger.slow_factor, capacity.tps_ceiling(n * trigger.slow_factor)


# --------------------------------------------------------------------------- simulated verdicts
@dataclass(frozen=True)
class SimCount:
    """One variant simulated over seeds 0…n−1: per-seed arrays and the count they support."""

    label: str
    recovered: np.ndarray
    served_share: np.ndarray
    timeouts: np.ndarray
    rejected: np.ndarray
    max_queue: np.ndarray
    recovery_time_s: np.ndarray  # nan where not recovered

    @property
    def n(self) -> int:
        return int(self.recovered.size)

    @property
    def k(self) -> int:
        return int(self.recovered.sum())

    @property
    def text(self) -> str:
        if self.k == self.n:
            return f"recovered in {self.n}/{self.n} seeds"
        if self.k == 0:
            return f"stuck in {self.n}/{self.n} seeds"
        return f"recovered in {self.k}/{self.n} seeds (knife-edge)"


def _count(label: str, runs: list) -> SimCount:
    arr = lambda f: np.array([f(r) for r in runs], dtype=float)  # noqa: E731
    return SimCount(
        label=label,
        recovered=np.array([bool(r.recovered) for r in runs]),
        served_share=arr(lambda r: r.summary["served_share"]),
        timeouts=arr(lambda r: r.summary["timeouts"]),
        rejected=arr(lambda r: r.summary["rejected"]),
        max_queue=arr(lambda r: r.summary["max_queue"]),
        recovery_time_s=arr(lambda r: math.nan if r.recovery_time_s is None else r.recovery_time_s),
    )


def combine(pred: Prediction, count: SimCount | None) -> tuple[str, str]:
    """``(verdict, sentence)`` from the closed forms' prediction and the seeds' count:

    - both say the same (all seeds agree, at least :data:`MIN_SEEDS`): that verdict;
    - the seeds disagree among themselves, or the closed forms are near an edge: "near the edge";
    - the closed forms are sure and every seed says the opposite: "disagree" (trust the
      simulation; the closed forms miss something there);
    - fewer than :data:`MIN_SEEDS` seeds: the prediction, with the count said to be too few."""
    if count is None:
        return pred.verdict, f"{pred.verdict} (closed forms only: {pred.why})"
    sim = "recovers" if count.k == count.n else ("stuck" if count.k == 0 else None)
    if count.n < MIN_SEEDS:
        return pred.verdict, (f"closed forms: {pred.verdict}; simulated: {count.text}, too few seeds for a "
                              f"verdict ({MIN_SEEDS} needed)")
    if sim is None:
        return "near the edge", f"near the edge: {count.text}; closed forms: {pred.why}"
    if pred.verdict == "near the edge":
        return "near the edge", f"near the edge: the closed forms are within noise ({pred.why}); simulated: {count.text}"
    if pred.verdict == sim:
        return sim, f"{sim}: {pred.why}; simulated: {count.text}"
    return "disagree", (f"the closed forms say {pred.verdict} ({pred.why}) but the simulation says {sim} "
                        f"({count.text}): trust the simulation")


# --------------------------------------------------------------------------- the report
@dataclass
class Report:
    """Everything :func:`report` computed for one system and trigger. Rates are per second,
    queues in merged batches, times in ms unless the name ends in ``_s``. Quantities that need a
    far owner are None when the system does not give one."""

    system: YourSystem
    trigger: Trigger
    scenario: Scenario
    commit_ms: float
    derived_commit_ms: float | None
    far_commit_ms: float | None
    capacity_per_s: float
    capacity_two_owners_per_s: float | None
    capacity_trigger_per_s: float
    demand_normal_per_s: float
    demand_peak_per_s: float
    rows_per_batch_peak: float
    critical_queue: float
    effective_queue: float
    safe_queue_limit: int
    worst_wait_safe_ms: float
    worst_wait_entered_ms: float | None
    safety_for_trigger: float
    retries_in_storm: float
    storm_demand_per_s: float
    band: tuple
    band_with_budget: tuple
    zone_normal: str
    zone_peak: str
    safe_retries: int | None
    trigger_growth_per_s: float
    trigger_threshold: float
    time_to_threshold_s: float
    trigger_reaches_threshold: bool
    turned_away_share: float
    predicted: Prediction
    predictions: dict = field(default_factory=dict)  # label → Prediction for every variant
    runs: dict = field(default_factory=dict)  # label → the seed-0 Run (figures)
    counts: dict = field(default_factory=dict)  # label → SimCount over the seeds

    @property
    def predicted_stuck(self) -> bool:
        return self.predicted.verdict == "stuck"

    @property
    def prediction(self) -> str:
        """The closed forms' prediction as one sentence: "stuck: …", "recovers: …", "near the edge: …"."""
        p = self.predicted
        return p.why if p.verdict == "near the edge" else f"{p.verdict}: {p.why}"

    def verdict(self, label: str = "as entered") -> tuple[str, str]:
        """``(verdict, sentence)`` for one variant: the prediction against its simulated count
        (:func:`combine`)."""
        check_choice("label", label, tuple(self.predictions))
        return combine(self.predictions[label], self.counts.get(label))

    # ------------------------------------------------------------------ runs
    def rows(self) -> list[dict]:
        """One row per simulated variant: the prediction, the count over seeds, the verdict, and
        medians over seeds (served in time, timeouts, rejected; the longest queue is the max)."""
        out = []
        for label, c in self.counts.items():
            run = self.runs[label]
            rt = c.recovery_time_s[~np.isnan(c.recovery_time_s)]
            out.append({
                "label": label,
                "queue_limit": run.scenario.queue_limit,
                "budget": run.scenario.retry.budget is not None,
                "predicted": self.predictions[label].verdict,
                "recovered_seeds": c.k,
                "seeds": c.n,
                "recovered": c.k == c.n,
                "verdict": self.verdict(label)[0],
                "recovery_time_s": float(np.median(rt)) if len(rt) else None,
                "served_share": float(np.median(c.served_share)),
                "served_min": float(np.min(c.served_share)),
                "served_max": float(np.max(c.served_share)),
                "timeouts": int(np.median(c.timeouts)),
                "timeouts_max": int(np.max(c.timeouts)),
                "rejected": int(np.median(c.rejected)),
                "max_queue": float(np.max(c.max_queue)),
            })
        return out

    def recovered(self) -> dict:
        """``{label: recovered in every seed}`` for every simulated variant."""
        return {label: c.k == c.n for label, c in self.counts.items()}

    # ------------------------------------------------------------------ rendering
    def closed_form_markdown(self) -> str:
        s, c = self.system, self
        lo, hi = c.band
        ql = "none" if s.queue_limit is None else f"{s.queue_limit}"
        if s.measured_commit_ms is None:
            derived = f"{s.round_trips:g} × {s.rtt_ms:g} + {s.statement_ms:g} = {c.derived_commit_ms:.1f} ms"
        elif c.derived_commit_ms is not None:
            derived = (f"measured {c.commit_ms:g} ms (your line {s.round_trips:g} × {s.rtt_ms:g} + "
                       f"{s.statement_ms:g} gives {c.derived_commit_ms:.1f})")
        else:
            derived = f"measured {c.commit_ms:g} ms"
        if math.isinf(c.retries_in_storm):
            r = "R = ∞: no cap on attempts and no patience, so the band's lower edge is 0"
        else:
            r = f"R = {c.retries_in_storm:g}"
        sr = "none: the users alone fill the thread" if c.safe_retries is None else f"{c.safe_retries}"
        ttt = "never (capacity still above the peak's demand)" if math.isinf(c.time_to_threshold_s) else (
            f"{c.time_to_threshold_s:.1f} s")
        if c.far_commit_ms is None:
            far = ("with a far owner", "not entered (no measured_far_commit_ms or far_rtt_ms)", "02, 03")
        else:
            how = "measured" if s.measured_far_commit_ms is not None else (
                f"N + {s.round_trips:g} × ({s.far_rtt_ms:g} − {s.rtt_ms:g})")
            far = (f"with a far owner (N = {c.far_commit_ms:.1f} ms, {how}), taking turns",
                   f"{c.capacity_two_owners_per_s:.1f} merged commits/s", "02, 03")
        rows = [
            ("merged commit N (lock hold)", derived, "01, 02"),
            ("TPS ceiling 1000 / N", f"{c.capacity_per_s:.1f} merged commits/s", "01"),
            far,
            ("user batches/s, normal → peak", f"{c.demand_normal_per_s:.1f} → {c.demand_peak_per_s:.1f} "
             f"({c.rows_per_batch_peak:.1f} rows each at the peak)", "01, 04 §1"),
            ("critical queue M / N", f"{c.critical_queue:.2f} batches", "04 §3"),
            ("timeouts start at (M − T − N) / N", f"{c.effective_queue:.2f} batches", "04 §3"),
            (f"safe QueueMaxSize ⌊M/N × {s.safety:g}⌋", f"{c.safe_queue_limit} batches (yours: {ql}); a request "
             f"behind a full queue waits ≤ {c.worst_wait_safe_ms:.0f} ms during the trigger", "04 §8"),
            ("largest safety that covers the trigger (M − T − N_max) / (N̄ · M/N)",
             f"{c.safety_for_trigger:.2f} (yours {s.safety:g}: {'✔' if s.safety <= c.safety_for_trigger else '✘'})",
             "04 §8"),
            ("retries per request in a storm", r, "04 §4"),
            ("bistable band (user requests/s)", f"{lo:.0f} – {hi:.0f}", "04a"),
            ("normal load / peak", f"{s.normal_rate_per_s:.0f}/s: {c.zone_normal}; "
             f"{s.peak_rate_per_s:.0f}/s: **{c.zone_peak}**", "04a"),
            ("most retries per request (no budget) that keep the peak below the band", sr, "04a"),
            (f"with a {100 * BUDGET.percent:.0f}% retry budget, lower edge",
             f"{c.band_with_budget[0]:.0f}/s", "04a"),
            ("turned away for good at the peak (bounded queue, M/M/1/K with retries)",
             "— (no bound)" if s.queue_limit is None else f"{100 * c.turned_away_share:.1f}%", "04 §8"),
            (f"trigger: {self.trigger.describe()}", f"capacity {c.capacity_trigger_per_s:.1f}/s, queue grows "
             f"{c.trigger_growth_per_s:+.2f} batches/s", "04 §1"),
            ("trigger reaches the timeout threshold after", f"{ttt} (threshold {c.trigger_threshold:.2f} batches)",
             "04a"),
        ]
        rows += [(f"`{cd.key}`", f"{'**true**' if cd.holds else 'false'}{' (near)' if cd.near else ''}: {cd.text}",
                  "") for cd in self.predicted.conditions]
        rows.append(("closed forms predict (stuck = above ∨ (reaches ∧ lets ∧ ((in_band ∧ holds) ∨ slow_drain)) "
                     "∨ turned_away)",
                     f"**{self.predicted.verdict}**: {self.predicted.why}", "04"))
        lines = [f"**{s.name}**", "", "| quantity | value | notebook |", "|---|---|---|"]
        lines += [f"| {a} | {b} | {n} |" for a, b, n in rows]
        d = s.defaulted()
        if d:
            lines += ["", "Left at the class defaults (check they are yours): "
                      + ", ".join(f"`{k}` = {_fmt(getattr(s, k))}" for k in d) + "."]
        return "\n".join(lines)

    def runs_markdown(self) -> str:
        if not self.counts:
            return "_no simulation (runs=False)_"
        head = ("| run | QueueMaxSize | retry budget | closed forms | simulated | verdict | served in time "
                "(median, range) | timeouts (median) | rejected (median) | max queue (batches) |")
        out = [head, "|---|---|---|---|---|---|---|---|---|---|"]
        for r in self.rows():
            ql = "none" if r["queue_limit"] is None else str(r["queue_limit"])
            c = self.counts[r["label"]]
            v = r["verdict"]
            out.append(f"| {r['label']} | {ql} | {'yes' if r['budget'] else 'no'} | {r['predicted']} | {c.text} | "
                       f"{v if v == 'recovers' else f'**{v}**'} | {100 * r['served_share']:.1f}% "
                       f"({100 * r['served_min']:.1f}–{100 * r['served_max']:.1f}%) | {r['timeouts']:,} | "
                       f"{r['rejected']:,} | {r['max_queue']:.0f} |")
        return "\n".join(out)

    def markdown(self) -> str:
        return self.closed_form_markdown() + "\n\n" + self.runs_markdown()

    def _repr_markdown_(self) -> str:
        return self.markdown()


def _fmt(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return "∞" if math.isinf(v) else f"{v:g}"
    return str(v)


def variant_system(system: YourSystem, label: str) -> YourSystem:
    """``system`` with one of :data:`VARIANTS` applied: "safe QueueMaxSize" sets the seed's
    ⌊M/N × safety⌋ (at least 1 batch), "retry budget" adds :data:`BUDGET`'s share (unless a budget
    is already entered), "both" does both."""
    check_choice("label", label, VARIANTS)
    changes = {}
    if label in ("safe QueueMaxSize", "both"):
        changes["queue_limit"] = max(1, capacity.safe_queue_limit(system.timeout_ms, system.commit_ms, system.safety))
    if label in ("retry budget", "both") and system.retry_budget_percent is None:
        changes["retry_budget_percent"] = BUDGET.percent
    return replace(system, **changes)


def report(system: YourSystem, trigger: Trigger | None = None, *, runs: bool | tuple = True,
           seeds: int = MIN_SEEDS) -> Report:
    """Compute the capstone report for ``system`` under ``trigger`` (default: a second owner for
    30 s). ``runs``: True simulates every :data:`VARIANTS` on the fast engine, a tuple of labels
    those, False none (closed forms only); each simulated variant runs seeds 0 … ``seeds`` − 1 and
    its verdict is the prediction against that count (:func:`combine`)."""
    _check_system(system)
    trigger = Trigger() if trigger is None else trigger
    if not isinstance(trigger, Trigger):
        raise ValueError(f"trigger must be a capstone Trigger or None, got {trigger!r}")
    seeds = check_int("seeds", seeds, low=1, high=1_000)
    sc = scenario(system, trigger)
    cf = closed_forms(sc)
    n = system.commit_ms
    lam_peak = system.peak_rate_per_s
    safe = capacity.safe_queue_limit(system.timeout_ms, n, system.safety)
    n_trig, n_max, cap_trig = _trigger_commits(system, trigger)
    threshold = effective_timeout_queue(sc, n_trig)
    growth = capacity.queue_growth_rate(cf["demand_peak"], 0.0, cap_trig)
    t_thr = threshold / growth if growth > 0 else math.inf
    edges = band(sc)
    edges_budget = band(replace(sc, retry=replace(sc.retry, budget=sc.retry.budget or BUDGET)))
    worst_entered = None if system.queue_limit is None else (
        system.queue_limit * n_trig + system.batch_max_wait_ms + n_max)
    far = system.far_commit_ms
    rep = Report(
        system=system,
        trigger=trigger,
        scenario=sc,
        commit_ms=n,
        derived_commit_ms=system.derived_commit_ms,
        far_commit_ms=far,
        capacity_per_s=cf["capacity_one_owner"],
        capacity_two_owners_per_s=None if far is None else cf["capacity_two_owners"],
        capacity_trigger_per_s=cap_trig,
        demand_normal_per_s=cf["demand_normal"],
        demand_peak_per_s=cf["demand_peak"],
        rows_per_batch_peak=capacity.batcher_mean_batch_size(lam_peak, system.batch_max_rows,
                                                             system.batch_max_wait_ms),
        critical_queue=cf["critical_queue"],
        effective_queue=cf["effective_queue_one_owner"],
        safe_queue_limit=safe,
        worst_wait_safe_ms=safe * n_trig + system.batch_max_wait_ms + n_max,
        worst_wait_entered_ms=worst_entered,
        safety_for_trigger=max(0.0, (system.timeout_ms - system.batch_max_wait_ms - n_max)
                               / (n_trig * capacity.critical_queue_length(system.timeout_ms, n))),
        retries_in_storm=cf["attempts_per_request_stuck"] - 1,
        storm_demand_per_s=cf["demand_stuck"],
        band=edges,
        band_with_budget=edges_budget,
        zone_normal=zone(system.normal_rate_per_s, edges),
        zone_peak=zone(lam_peak, edges),
        safe_retries=safe_retries(lam_peak, edges[1]),
        trigger_growth_per_s=growth,
        trigger_threshold=threshold,
        time_to_threshold_s=t_thr,
        trigger_reaches_threshold=trigger.duration_s > 0 and t_thr <= trigger.duration_s,
        turned_away_share=turned_away_share(system),
        predicted=predict(system, trigger),
    )
    for lab in VARIANTS:
        rep.predictions[lab] = predict(variant_system(system, lab), trigger)
    if runs is True:
        labels = VARIANTS
    elif runs is False or runs is None:
        labels = ()
    else:
        labels = tuple(runs)
    return add_runs(rep, labels, seeds=seeds)


def add_runs(rep: Report, labels=VARIANTS, *, seeds: int = MIN_SEEDS) -> Report:
    """Simulate the variants ``labels`` of ``rep`` over seeds 0 … ``seeds`` − 1 on the fast engine
    and add them to ``rep`` (in place; returned for chaining). Lets a notebook split the runs
    over cells."""
    if not isinstance(rep, Report):
        raise ValueError(f"rep must be a capstone Report, got {type(rep).__name__}")
    seeds = check_int("seeds", seeds, low=1, high=1_000)
    labels = (labels,) if isinstance(labels, str) else tuple(labels)
    for lab in labels:
        check_choice("runs", lab, VARIANTS)
    for lab in labels:
        variant = scenario(variant_system(rep.system, lab), rep.trigger)
        sims = [simulate(variant, engine="fast", seed=k) for k in range(seeds)]
        rep.runs[lab] = sims[0]
        rep.counts[lab] = _count(lab, sims)
    return rep


# --------------------------------------------------------------------------- figures
def plot_zones(rep: Report, ax=None, *, xmax: float | None = None):
    """Where the normal load and the peak sit: below the band (a storm dies out), in the bistable
    band (healthy until a trigger, then stuck), above capacity. User requests/s on the x axis."""
    if ax is None:
        _, ax = plotting.new_figure(height=1.5, layout="constrained")
    lo, hi = rep.band
    s = rep.system
    xmax = xmax or 1.25 * max(hi, s.peak_rate_per_s)
    ax.axvspan(0, lo, color=COLORS["recovered"], alpha=0.18, lw=0, label="below the band: a storm dies out")
    ax.axvspan(lo, hi, color=COLORS["trigger"], alpha=0.6, lw=0, label="bistable band: stuck once triggered")
    ax.axvspan(hi, xmax, color=COLORS["stuck"], alpha=0.18, lw=0, label="above capacity")
    blo = rep.band_with_budget[0]
    if blo > lo + 1e-9:
        ax.axvline(blo, color=COLORS["capacity"], ls=":", lw=1.5,
                   label=f"lower edge with a {100 * BUDGET.percent:.0f}% retry budget")
    ax.plot([s.normal_rate_per_s], [0.5], "o", color=COLORS["offered"], ms=9, label="normal load")
    ax.plot([s.peak_rate_per_s], [0.5], "v", color=COLORS["offered"], ms=10, label="peak")
    for x, dy in ((s.normal_rate_per_s, -18), (s.peak_rate_per_s, 10)):
        ax.annotate(f"{x:.0f}", (x, 0.5), xytext=(0, dy), textcoords="offset points", ha="center", fontsize=8,
                    color=COLORS["offered"])
    for x in (lo, hi):
        ax.annotate(f"{x:.0f}", (x, 1.0), xytext=(2, -10), textcoords="offset points", fontsize=8,
                    color=COLORS["capacity"])
    ax.set_xlim(0, xmax)
    ax.set_ylim(0, 1)
    ax.set_yticks([])
    ax.grid(False)
    ax.set_xlabel("user requests/s to the hot key")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.15), fontsize=8)
    return ax


def plot_runs(rep: Report, *, ncols: int = 2):
    """The simulated trigger, one small timeline per run (``lesson.small_multiples``)."""
    if not rep.runs:
        raise ValueError("runs must not be empty: call report(..., runs=True)")
    return lesson.small_multiples(rep.runs, ncols=min(ncols, len(rep.runs)))


# --------------------------------------------------------------------------- the checklist
@dataclass(frozen=True)
class ChecklistItem:
    """One defence: what to do, the seeds it comes from, the notebooks that teach it."""

    key: str
    text: str
    seeds: str
    notebooks: tuple


_NB = {
    "01": "01_hot_row", "02": "02_rtt_math", "03": "03_split_routing", "04": "04_metastable_retry_storm",
    "05": "05_lock_plus_timer", "06": "06_pending_records", "07": "07_gateway_cascade",
    "08": "08_lost_timeouts", "09": "09_fault_tolerance", "10": "10_capstone",
}

CHECKLIST: tuple[ChecklistItem, ...] = (
    ChecklistItem("config_checks", "Configuration checks run by a program (配置檢查系統), not a verbal "
                  "agreement (口頭約定): before a limit goes live, a checker refuses what breaks the rules below "
                  "(`capstone.config_checks(system, strict=True)`), and gains a rule after each incident.",
                  "003", ("10",)),
    ChecklistItem("bound_queues", "Bound every queue, the hidden ones too: pending rows in the database, "
                  "message-queue backlogs, lock waits, calls in flight, the batcher.", "000, 001, 002",
                  ("04", "06", "07", "08")),
    ChecklistItem("queue_limit", "QueueMaxSize < M/N × safety, with N the slowest commit you expect; a "
                  "limit sized for memory does not protect the clients' timeout.", "000", ("04",)),
    ChecklistItem("band", "Know your bistable band: the peak must sit below its lower edge, or a trigger "
                  "leaves you stuck.", "000", ("04",)),
    ChecklistItem("retries", "Retries capped, with exponential backoff and jitter, and a retry budget or "
                  "throttle: a cap and backoff alone do not reduce the work of a storm.", "000, 003",
                  ("04", "09")),
    ChecklistItem("degrade", "A way to degrade upstream (cut traffic at the source), and a rehearsed way to "
                  "drop the backlog (保增量降存量) where dropping is safe (资金安全).", "000, 001",
                  ("04", "07")),
    ChecklistItem("deadlines", "Deadlines propagated: the server skips work whose client has already given up.",
                  "000", ("04",)),
    ChecklistItem("lock_timer", "Never wait on a timer, a token or any I/O while holding a global lock.",
                  "004", ("05",)),
    ChecklistItem("timeouts_fire", "Timeouts that actually fire: test them, and alarm on calls in flight.",
                  "002", ("08",)),
    ChecklistItem("deployment", "Deployment checks (巡检): no owner of a hot key outside the primary's "
                  "datacentre; a routing change must not leave two owners.", "000", ("02", "03")),
    ChecklistItem("row_limits", "Row limits on batch scans, and a timeout that cancels the query, not just "
                  "the client's wait.", "000", ("06",)),
    ChecklistItem("threads", "More threads on one hot row add latency, not throughput: cut round trips "
                  "under the lock instead.", "000", ("01", "02")),
    ChecklistItem("hot_cache", "A hot cache key gets a local cache or request coalescing; a cache failure "
                  "must not fall through to the database unthrottled.", "001", ("07",)),
    ChecklistItem("idempotency", "A timed-out call may have succeeded: make writes idempotent (order ids).",
                  "003", ("09",)),
    ChecklistItem("isolation", "Non-core steps on short timeouts with a bypass; light and heavy traffic on "
                  "separate pools.", "001, 003", ("07", "09")),
    ChecklistItem("watch_growth", "Watch queue growth (production − consumption) and keep the scene (a heap "
                  "dump) before restarting.", "000, 002", ("04", "06", "08")),
)


def _status(item: ChecklistItem, rep: Report | None) -> str:
    if rep is None:
        return ""
    s = rep.system
    if item.key == "queue_limit":
        if s.queue_limit is None:
            return f"✘ none (safe: {rep.safe_queue_limit})"
        ok = s.queue_limit <= rep.safe_queue_limit
        return f"{'✔' if ok else '✘'} {s.queue_limit} (safe: ≤ {rep.safe_queue_limit})"
    if item.key == "band":
        return f"{'✔' if rep.zone_peak == ZONES[0] else '✘'} peak {s.peak_rate_per_s:.0f}/s: {rep.zone_peak}"
    if item.key == "retries":
        capped = not math.isinf(s.retry_attempts)
        backoff = s.retry_multiplier > 1 and s.retry_jitter != "none"
        budget = s.retry_budget_percent is not None
        parts = [f"cap {'✔' if capped else '✘'}", f"backoff+jitter {'✔' if backoff else '✘'}",
                 f"budget {'✔' if budget else '✘'}"]
        return ", ".join(parts)
    if item.key == "deployment":
        if rep.capacity_two_owners_per_s is None:
            return "no far owner entered"
        return f"a far owner costs {rep.capacity_per_s - rep.capacity_two_owners_per_s:.1f} commits/s"
    if item.key == "config_checks":
        bad = [c.rule for c in config_checks(s, rep.trigger) if not c.ok]
        n = len(CONFIG_RULES)
        return f"✔ {n}/{n} rules pass" if not bad else f"✘ {len(bad)}/{n} fail: {', '.join(bad)}"
    return ""


# --------------------------------------------------------------------------- configuration checks
#: The rules :func:`config_checks` enforces: key → (what it checks, the seed sentence it comes from).
CONFIG_RULES = {
    "queue_bounded": ("QueueMaxSize is set", "000: 对队列或者等效形式都需要做一个严格的有界性保护"),
    "queue_below_m_over_n": ("QueueMaxSize ≤ ⌊M/N × safety⌋", "000: 队列最大长度QueueMaxSize < (M/N) * 安全系数"),
    "queue_covers_trigger": ("a full queue still answers within M while the trigger lasts",
                             "000: 安全系数是避免耗时极度升高后的buffer"),
    "retries_capped": ("a finite number of attempts", "000: 设定最大重试次数"),
    "backoff_grows": ("the retry delay grows (multiplier > 1)", "000: 逐渐拉长重试间隔，例如指数退避"),
    "jitter": ("the retry delay is random", "000: 重试间隔需要加上随机性"),
    "peak_below_band": ("the peak sits below the band's lower edge", "000: 亚稳态 (ours: the bistable band, 04a)"),
}


@dataclass(frozen=True)
class ConfigCheck:
    rule: str
    ok: bool
    detail: str


def config_checks(system: YourSystem, trigger: Trigger | None = None, *, strict: bool = False) -> list[ConfigCheck]:
    """Seed 003's 配置檢查系統 applied to seed 000's limits: check a configuration by program before
    it goes live, one :class:`ConfigCheck` per rule of :data:`CONFIG_RULES`. ``strict=True``
    raises ``ValueError`` naming every rule that fails (the way a release pipeline refuses it).
    The trigger (default: the report's default, or a 2× slow primary when no far owner is
    entered) sets the slowest commit the queue must cover."""
    _check_system(system)
    if trigger is None:
        trigger = Trigger() if system.far_commit_ms is not None else Trigger(kind="slow_db")
    rep = report(system, trigger, runs=False)
    safe, ql = rep.safe_queue_limit, system.queue_limit
    results = [
        ConfigCheck("queue_bounded", ql is not None, f"QueueMaxSize {_fmt(ql)}"),
        ConfigCheck("queue_below_m_over_n", ql is not None and ql <= safe, f"{_fmt(ql)} vs ⌊M/N × "
                    f"{system.safety:g}⌋ = {safe}"),
        ConfigCheck("queue_covers_trigger", ql is not None and rep.worst_wait_entered_ms <= system.timeout_ms,
                    "no bound" if ql is None else f"behind a full queue {rep.worst_wait_entered_ms:.0f} ms vs M = "
                    f"{system.timeout_ms:g} ms ({trigger.describe()})"),
        ConfigCheck("retries_capped", not math.isinf(system.retry_attempts), f"{_fmt(system.retry_attempts)} attempts"),
        ConfigCheck("backoff_grows", system.retry_multiplier > 1 or system.retry_attempts <= 1,
                    f"multiplier {system.retry_multiplier:g}"),
        ConfigCheck("jitter", system.retry_jitter != "none" or system.retry_attempts <= 1,
                    f"jitter {system.retry_jitter}"),
        ConfigCheck("peak_below_band", rep.zone_peak == ZONES[0], f"peak {system.peak_rate_per_s:.0f}/s: {rep.zone_peak}"),
    ]
    if strict:
        bad = [f"{c.rule} ({CONFIG_RULES[c.rule][0]}: {c.detail})" for c in results if not c.ok]
        if bad:
            raise ValueError(f"system {system.name!r} fails {len(bad)} configuration check(s): " + "; ".join(bad))
    return results


def checklist_markdown(*reports: Report, link_prefix: str = "") -> str:
    """The checklist as a markdown table, each line linking the notebooks that teach it; one
    status column per report (headed by its system's name) for the lines its numbers answer."""
    for r in reports:
        if not isinstance(r, Report):
            raise ValueError(f"reports must be capstone Reports, got {type(r).__name__}")
    head = "| # | check | seeds | notebooks |" + "".join(f" {r.system.name} |" for r in reports)
    out = [head, "|---|---|---|---|" + "---|" * len(reports)]
    for k, item in enumerate(CHECKLIST, 1):
        links = ", ".join(f"[{nb}]({link_prefix}{_NB[nb]}.ipynb)" for nb in item.notebooks)
        row = f"| {k} | {item.text} | {item.seeds} | {links} |"
        row += "".join(f" {_status(item, r)} |" for r in reports)
        out.append(row)
    return "\n".join(out)


# --------------------------------------------------------------------------- the widget
class Dashboard:
    """The capstone's what-if figure, kept between calls: where the load sits in the band (top)
    and the simulated trigger as entered (bottom). Each call changes ``base`` with the sliders'
    values, runs :func:`report` with the run "as entered" only, and redraws the same figure.

    >>> d = Dashboard()                                                   # doctest: +SKIP
    >>> interactive(d.update, **dashboard_controls())                     # doctest: +SKIP
    """

    SERIES = ("offered", "retries", "goodput", "timeouts", "rejected")

    def __init__(self, base: YourSystem = SYSTEM_A, trigger: Trigger | None = None, seeds: int = 1):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        _check_system(base)
        self.base = base
        self.trigger = Trigger() if trigger is None else trigger
        self.seeds = check_int("seeds", seeds, low=1, high=1_000)
        self.fig = Figure(figsize=(8.0, 4.2), layout="constrained")
        FigureCanvasAgg(self.fig)
        self.zax, self.ax = self.fig.subplots(2, 1, height_ratios=[1, 3.2])
        z = self.zax
        self.spans = [z.axvspan(0, 1, color=COLORS[c], alpha=a, lw=0, label=lab) for c, a, lab in (
            ("recovered", 0.18, "below the band"), ("trigger", 0.6, "bistable band"),
            ("stuck", 0.18, "above capacity"))]
        self.m_normal = z.plot([0], [0.5], "o", color=COLORS["offered"], ms=9, label="normal load")[0]
        self.m_peak = z.plot([0], [0.5], "v", color=COLORS["offered"], ms=10, label="peak")[0]
        z.set_ylim(0, 1)
        z.set_yticks([])
        z.grid(False)
        z.set_xlabel("user requests/s to the hot key")
        z.legend(loc="upper left", bbox_to_anchor=(1.15, 1.25), fontsize=8)
        ax = self.ax
        self.lines = {s: ax.plot([], [], color=COLORS[s], lw=2, label=plotting.LABELS[s])[0] for s in self.SERIES}
        self.qax = plotting.queue_axis(ax)
        self.qline = self.qax.plot([], [], color=COLORS["queue"], lw=2, label=plotting.LABELS["queue"])[0]
        self.thr = self.qax.axhline(0, color=COLORS["queue"], ls="--", lw=1, label="timeouts start (closed form)")
        self.span = ax.axvspan(0, 1, color=COLORS["trigger"], alpha=0.35, lw=0, label="trigger", zorder=0)
        self.verdict = ax.text(0.99, 0.97, "", transform=ax.transAxes, ha="right", va="top", fontsize=9,
                               bbox=dict(facecolor="white", alpha=0.85, lw=0))
        ax.set_xlabel("time (s)")
        ax.set_ylabel("requests/s")
        plotting.merged_legend(ax, self.qax, loc="upper left", bbox_to_anchor=(1.15, 1.0), fontsize=8)
        self.calls = 0
        self.last: Report | None = None

    def system(self, normal_rate_per_s=None, peak_factor=None, timeout_ms=None, rtt_ms=None,
               retry_patience_ms=None, queue_limit="entered") -> YourSystem:
        """``base`` with the given inputs replaced (None keeps the base's value)."""
        changes = {k: v for k, v in dict(normal_rate_per_s=normal_rate_per_s, peak_factor=peak_factor,
                                         timeout_ms=timeout_ms, rtt_ms=rtt_ms,
                                         retry_patience_ms=retry_patience_ms).items() if v is not None}
        if queue_limit != "entered":
            changes["queue_limit"] = queue_limit
        return replace(self.base, **changes)

    def update(self, normal_rate_per_s=None, peak_factor=None, timeout_ms=None, rtt_ms=None,
               retry_patience_ms=None, queue_limit="entered", trigger_s=None,
               show: bool = True) -> Report:
        """Report on the changed system (closed forms + the run as entered) and redraw."""
        system = self.system(normal_rate_per_s, peak_factor, timeout_ms, rtt_ms, retry_patience_ms, queue_limit)
        trig = self.trigger if trigger_s is None else replace(self.trigger, duration_s=trigger_s)
        rep = report(system, trig, runs=("as entered",), seeds=self.seeds)
        self.redraw(rep)
        self.calls += 1
        self.last = rep
        if show:
            from IPython.display import Markdown, display

            display(self.fig)
            display(Markdown(self.summary(rep)))
        return rep

    __call__ = update

    @staticmethod
    def headline(rep: Report) -> str:
        """The verdict line: the closed forms' prediction against the run(s) drawn. With fewer than
        :data:`MIN_SEEDS` seeds a run is a sample, not a verdict, and the line says so."""
        c = rep.counts["as entered"]
        p = rep.predicted.verdict
        if c.n >= MIN_SEEDS:
            return rep.verdict()[0]
        sim = "recovers" if c.k == c.n else ("stuck" if c.k == 0 else "near the edge")
        agree = "agrees" if p == sim else "disagrees: near the edge"
        return f"closed forms: {p}; {'seed 0' if c.n == 1 else f'{c.n} seeds'}: {sim} ({agree})"

    @staticmethod
    def summary(rep: Report) -> str:
        c = rep.counts["as entered"]
        lo, hi = rep.band
        more = "" if c.n >= MIN_SEEDS else (f" One run is a sample: `report(system, trigger)` counts "
                                            f"{MIN_SEEDS} seeds.")
        return (f"**{Dashboard.headline(rep)}**: {100 * float(np.median(c.served_share)):.1f}% of user requests "
                f"answered in time. N = {rep.commit_ms:.1f} ms, ceiling {rep.capacity_per_s:.1f} commits/s; M/N = "
                f"{rep.critical_queue:.1f}, safe QueueMaxSize {rep.safe_queue_limit}; band {lo:.0f}–{hi:.0f} "
                f"requests/s, peak {rep.system.peak_rate_per_s:.0f}/s {rep.zone_peak}. Closed forms: "
                f"{rep.prediction}.{more}")

    def redraw(self, rep: Report) -> None:
        s = rep.system
        lo, hi = rep.band
        xmax = 1.25 * max(hi, s.peak_rate_per_s)
        for span, (a, b) in zip(self.spans, ((0, lo), (lo, hi), (hi, xmax)), strict=True):
            span.set_x(a)
            span.set_width(b - a)
        self.m_normal.set_xdata([s.normal_rate_per_s])
        self.m_peak.set_xdata([s.peak_rate_per_s])
        self.zax.set_xlim(0, xmax)
        run = rep.runs["as entered"]
        w = run.windows
        t = w["t"]
        ymax = 1.0
        for name, line in self.lines.items():
            line.set_data(t, w[name])
            ymax = max(ymax, float(np.max(w[name])))
        self.ax.set_ylim(0, 1.1 * ymax)
        self.ax.set_xlim(0, rep.trigger.horizon_s)
        self.qline.set_data(t, w["queue"])
        self.thr.set_ydata([rep.effective_queue, rep.effective_queue])
        self.qax.set_ylim(0, 1.1 * max(float(np.max(w["queue"])), 2.0 * rep.effective_queue, 1.0))
        tr = rep.trigger
        self.span.set_x(tr.start_s)
        self.span.set_width(tr.duration_s)
        head = self.headline(rep)
        self.verdict.set_text(f"{head}\nthis run: {100 * run.summary['served_share']:.0f}% served in time")
        good = rep.predicted.verdict == "recovers" and run.recovered
        bad = rep.predicted.verdict == "stuck" and not run.recovered
        self.verdict.set_color(COLORS["recovered"] if good else (COLORS["stuck"] if bad else "black"))
        self.fig.canvas.draw()


def dashboard_controls(base: YourSystem = SYSTEM_A) -> dict:
    """Controls for ``ipywidgets.interactive(Dashboard(base).update, **dashboard_controls(base))``.
    Children order: normal load, peak factor, M, RTT, patience, QueueMaxSize, trigger duration."""
    import ipywidgets as widgets

    style = {"description_width": "190px"}
    layout = widgets.Layout(width="480px")

    def fs(value, lo, hi, step, desc):
        return widgets.FloatSlider(value=value, min=lo, max=hi, step=step, description=desc, style=style,
                                   layout=layout, continuous_update=False)

    patience = base.retry_patience_ms if not math.isinf(base.retry_patience_ms) else 2_000.0
    rtt = (fs(base.rtt_ms, 0.1, 3.0, 0.1, "RTT to the primary (ms)") if base.rtt_ms is not None
           and base.measured_commit_ms is None else widgets.fixed(None))
    ql_opts = [("as entered", "entered"), ("none", None)] + [(str(k), k) for k in (3, 6, 9, 12, 25, 100)]
    return {
        "normal_rate_per_s": fs(base.normal_rate_per_s, 50.0, 1500.0, 10.0, "normal load (user requests/s)"),
        "peak_factor": fs(base.peak_factor, 1.0, 2.0, 0.05, "peak factor"),
        "timeout_ms": fs(base.timeout_ms, 100.0, 1000.0, 10.0, "M: client timeout (ms)"),
        "rtt_ms": rtt,
        "retry_patience_ms": fs(patience, 0.0, 2000.0, 50.0, "user patience (ms)"),
        "queue_limit": widgets.Dropdown(options=ql_opts, value="entered", description="QueueMaxSize (batches)",
                                        style=style, layout=layout),
        "trigger_s": fs(Trigger().duration_s, 0.0, 60.0, 5.0, "trigger duration (s)"),
        "show": widgets.fixed(True),
    }


#: The fields of :class:`YourSystem`, in order (for tables of a system's numbers).
FIELDS = tuple(f.name for f in fields(YourSystem))

#: What each field of :class:`YourSystem` means, with its unit.
FIELD_HELP = {
    "name": "what the system is called",
    "rtt_ms": "RTT from the owning server to the primary (ms)",
    "round_trips": "network round trips per merged commit while the row is locked",
    "statement_ms": "lock time per merged commit that does not depend on the RTT (ms)",
    "measured_commit_ms": "measured merged commit N (ms); empty: derived from the three above",
    "far_rtt_ms": "RTT from the farthest datacentre a server could own the key from (ms)",
    "measured_far_commit_ms": "measured merged commit of an owner in that datacentre (ms); empty: derived",
    "batch_max_rows": "a batch closes at this many requests …",
    "batch_max_wait_ms": "… or this long after its first request (ms)",
    "timeout_ms": "M: the client's timeout per attempt (ms); required",
    "retry_attempts": "attempts per request, the first included (inf: no cap)",
    "retry_backoff_ms": "delay before the first retry (ms)",
    "retry_multiplier": "backoff growth per retry (1: constant)",
    "retry_cap_ms": "largest retry delay (ms)",
    "retry_jitter": "none, full, equal or decorrelated",
    "retry_patience_ms": "a user stops retrying this long after the first try (ms)",
    "retry_budget_percent": "retry budget as a share of first attempts (empty: none)",
    "queue_limit": "QueueMaxSize in merged batches (empty: no bound)",
    "normal_rate_per_s": "user requests/s to the hot key on a normal day",
    "peak_factor": "the peak's multiple of the normal load",
    "safety": "safety factor in QueueMaxSize < M/N × safety",
}


def systems_markdown(*systems: YourSystem) -> str:
    """A markdown table of the systems' numbers side by side, one row per field."""
    for s in systems:
        _check_system(s)

    def fmt(v):
        if v is None:
            return "—"
        if isinstance(v, float):
            return "∞" if math.isinf(v) else f"{v:g}"
        return str(v)

    out = ["| field | meaning | " + " | ".join(s.name for s in systems) + " |",
           "|---|---|" + "---|" * len(systems)]
    for name in FIELDS[1:]:
        out.append(f"| `{name}` | {FIELD_HELP[name]} | " + " | ".join(fmt(getattr(s, name)) for s in systems) + " |")
    out.append("| N | the merged commit used (ms) | " + " | ".join(f"{s.commit_ms:g}" for s in systems) + " |")
    return "\n".join(out)
