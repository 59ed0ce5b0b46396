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

    The merged commit (N, ``commit_ms``) is measured if you give ``measured_commit_ms``; otherwise
    it is derived as ``round_trips × rtt_ms + statement_ms`` (notebook 02's line, through
    ``capacity.lock_hold_ms``). An owner in another datacentre (``far_rtt_ms``) makes the same
    round trips at its own RTT.
    """

    name: str = "your system"
    # --- the merged commit under the hot row's lock (01, 02)
    rtt_ms: float = 0.5  #: RTT from the owning server to the primary database
    round_trips: float = 11.0  #: network round trips per merged commit while the row is locked
    statement_ms: float = 10.5  #: lock time per merged commit that does not depend on the RTT
    measured_commit_ms: float | None = None  #: measured N; None derives it from the three above
    far_rtt_ms: float = 1.5  #: RTT from the farthest datacentre a server could own the key from
    # --- the batcher (group commit, 01)
    batch_max_rows: int = 20  #: a batch closes at this many requests …
    batch_max_wait_ms: float = 20.0  #: … or this long after its first request
    # --- the client (04)
    timeout_ms: float = 200.0  #: M, the client's timeout per attempt
    retry_attempts: float = math.inf  #: attempts per request including the first (inf: no cap)
    retry_backoff_ms: float = 50.0  #: delay before the first retry
    retry_multiplier: float = 1.0  #: backoff growth per retry (1 = constant)
    retry_cap_ms: float = 50.0  #: largest delay
    retry_jitter: str = "full"  #: none | full | equal | decorrelated
    retry_patience_ms: float = math.inf  #: a user stops retrying this long after the first try
    retry_budget_percent: float | None = None  #: retry budget, share of first attempts (None: none)
    # --- the server and the traffic
    queue_limit: int | None = None  #: QueueMaxSize in merged batches waiting (None: no bound)
    normal_rate_per_s: float = 600.0  #: user requests/s to the hot key on a normal day
    peak_factor: float = 1.2  #: the peak's multiple of the normal load
    safety: float = 0.5  #: safety factor in QueueMaxSize < M/N × safety, 0 < safety <= 1

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        check_number("rtt_ms", self.rtt_ms, low=0.0, high=1_000.0)
        check_number("round_trips", self.round_trips, low=0.0, high=10_000.0)
        check_number("statement_ms", self.statement_ms, low=0.0, high=1e5)
        if self.measured_commit_ms is not None:
            check_number("measured_commit_ms", self.measured_commit_ms, low=0.0, low_open=True, high=1e5)
        elif self.round_trips * self.rtt_ms + self.statement_ms <= 0:
            raise ValueError(
                "round_trips × rtt_ms + statement_ms must be > 0 ms (the merged commit N), got "
                f"{self.round_trips!r} × {self.rtt_ms!r} + {self.statement_ms!r}; or give measured_commit_ms"
            )
        check_number("far_rtt_ms", self.far_rtt_ms, low=0.0, high=1_000.0)
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
            check_int("queue_limit", self.queue_limit, low=0, high=1_000_000)
        check_number("normal_rate_per_s", self.normal_rate_per_s, low=0.0, low_open=True, high=1e5)
        check_number("peak_factor", self.peak_factor, low=1.0, high=10.0)
        check_number("safety", self.safety, low=0.0, high=1.0, low_open=True)

    # ------------------------------------------------------------------ derived
    @property
    def derived_commit_ms(self) -> float:
        """``round_trips × rtt_ms + statement_ms`` (``capacity.lock_hold_ms`` with one "statement")."""
        return capacity.lock_hold_ms(self.rtt_ms, self.round_trips, statements=1, statement_ms=self.statement_ms)

    @property
    def commit_ms(self) -> float:
        """N: the measured merged commit if given, else the derived one."""
        return self.derived_commit_ms if self.measured_commit_ms is None else float(self.measured_commit_ms)

    @property
    def far_commit_ms(self) -> float:
        """A far owner's merged commit: N plus one ``far_rtt_ms − rtt_ms`` per round trip."""
        return max(1e-9, self.commit_ms + self.round_trips * (self.far_rtt_ms - self.rtt_ms))

    @property
    def peak_rate_per_s(self) -> float:
        return self.normal_rate_per_s * self.peak_factor

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
        ql = check_int("queue_limit", ql, low=0)
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
        cross_batch_ms=system.far_commit_ms,
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


# --------------------------------------------------------------------------- the report
@dataclass
class Report:
    """Everything :func:`report` computed for one system and trigger. Rates are per second,
    queues in merged batches, times in ms unless the name ends in ``_s``."""

    system: YourSystem
    trigger: Trigger
    scenario: Scenario
    commit_ms: float
    derived_commit_ms: float
    far_commit_ms: float
    capacity_per_s: float
    capacity_two_owners_per_s: float
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
    predicted_stuck: bool
    prediction: str
    runs: dict = field(default_factory=dict)

    # ------------------------------------------------------------------ runs
    def rows(self) -> list[dict]:
        """One row per run: recovered?, time to recover, served in time, timeouts, rejected,
        wasted share of commits, longest queue."""
        out = []
        for label, run in self.runs.items():
            s = run.summary
            out.append({
                "label": label,
                "queue_limit": run.scenario.queue_limit,
                "budget": run.scenario.retry.budget is not None,
                "recovered": bool(run.recovered),
                "recovery_time_s": run.recovery_time_s,
                "served_share": float(s["served_share"]),
                "timeouts": int(s["timeouts"]),
                "rejected": int(s["rejected"]),
                "wasted_share": float(s["wasted_share"]),
                "max_queue": float(s["max_queue"]),
            })
        return out

    def recovered(self) -> dict:
        """``{label: recovered}`` for every run."""
        return {label: bool(run.recovered) for label, run in self.runs.items()}

    # ------------------------------------------------------------------ rendering
    def closed_form_markdown(self) -> str:
        s, c = self.system, self
        lo, hi = c.band
        ql = "none" if s.queue_limit is None else f"{s.queue_limit}"
        derived = (f"{s.round_trips:g} × {s.rtt_ms:g} + {s.statement_ms:g} = {c.derived_commit_ms:.1f} ms"
                   if s.measured_commit_ms is None else
                   f"measured {c.commit_ms:g} ms (the line {s.round_trips:g} × {s.rtt_ms:g} + {s.statement_ms:g} "
                   f"gives {c.derived_commit_ms:.1f})")
        r = "∞" if math.isinf(c.retries_in_storm) else f"{c.retries_in_storm:g}"
        sr = "none: the users alone fill the thread" if c.safe_retries is None else f"{c.safe_retries}"
        ttt = "never (capacity still above the peak's demand)" if math.isinf(c.time_to_threshold_s) else (
            f"{c.time_to_threshold_s:.1f} s")
        rows = [
            ("merged commit N (lock hold)", derived, "01, 02"),
            ("TPS ceiling 1000 / N", f"{c.capacity_per_s:.1f} merged commits/s", "01"),
            ("with a far owner (N = " + f"{c.far_commit_ms:.1f} ms), taking turns",
             f"{c.capacity_two_owners_per_s:.1f} merged commits/s", "02, 03"),
            ("user batches/s, normal → peak", f"{c.demand_normal_per_s:.1f} → {c.demand_peak_per_s:.1f} "
             f"({c.rows_per_batch_peak:.1f} rows each at the peak)", "01, 04 §1"),
            ("critical queue M / N", f"{c.critical_queue:.2f} batches", "04 §3"),
            ("timeouts start at (M − T − N) / N", f"{c.effective_queue:.2f} batches", "04 §3"),
            (f"safe QueueMaxSize ⌊M/N × {s.safety:g}⌋", f"{c.safe_queue_limit} batches (yours: {ql}); a request "
             f"behind a full queue waits ≤ {c.worst_wait_safe_ms:.0f} ms", "04 §8"),
            ("largest safety that covers the trigger (M − T − N_max) / (N̄ · M/N)",
             f"{c.safety_for_trigger:.2f} (yours {s.safety:g}: {'✔' if s.safety <= c.safety_for_trigger else '✘'})",
             "04 §8"),
            ("retries per request in a storm", f"R = {r}", "04 §4"),
            ("bistable band (user requests/s)", f"{lo:.0f} – {hi:.0f}", "04a"),
            ("normal load / peak", f"{s.normal_rate_per_s:.0f}/s: {c.zone_normal}; "
             f"{s.peak_rate_per_s:.0f}/s: **{c.zone_peak}**", "04a"),
            ("most retries per request (no budget) that keep the peak below the band", sr, "04a"),
            (f"with a {100 * BUDGET.percent:.0f}% retry budget, lower edge",
             f"{c.band_with_budget[0]:.0f}/s", "04a"),
            (f"trigger: {self.trigger.describe()}", f"capacity {c.capacity_trigger_per_s:.1f}/s, queue grows "
             f"{c.trigger_growth_per_s:+.2f} batches/s", "04 §1"),
            ("trigger reaches the timeout threshold after", f"{ttt} (threshold {c.trigger_threshold:.2f} batches)",
             "04a"),
            ("closed forms predict", f"**{c.prediction.split(':')[0]}**:{c.prediction.split(':', 1)[1]}", "04"),
        ]
        lines = [f"**{s.name}**", "", "| quantity | value | notebook |", "|---|---|---|"]
        lines += [f"| {a} | {b} | {n} |" for a, b, n in rows]
        return "\n".join(lines)

    def runs_markdown(self) -> str:
        if not self.runs:
            return "_no simulation (runs=False)_"
        head = "| run | QueueMaxSize | retry budget | recovered? | time to recover (s) | served in time | timeouts | rejected | max queue (batches) |"
        out = [head, "|---|---|---|---|---|---|---|---|---|"]
        for r in self.rows():
            rt = "—" if r["recovery_time_s"] is None else f"{r['recovery_time_s']:.0f}"
            ql = "none" if r["queue_limit"] is None else str(r["queue_limit"])
            out.append(f"| {r['label']} | {ql} | {'yes' if r['budget'] else 'no'} | "
                       f"{'yes' if r['recovered'] else '**no**'} | {rt} | {100 * r['served_share']:.1f}% | "
                       f"{r['timeouts']:,} | {r['rejected']:,} | {r['max_queue']:.0f} |")
        return "\n".join(out)

    def markdown(self) -> str:
        return self.closed_form_markdown() + "\n\n" + self.runs_markdown()

    def _repr_markdown_(self) -> str:
        return self.markdown()


def report(system: YourSystem, trigger: Trigger | None = None, *, runs: bool | tuple = True,
           seed: int = 0) -> Report:
    """Compute the capstone report for ``system`` under ``trigger`` (default: a second owner for
    30 s). ``runs``: True runs every :data:`VARIANTS` on the fast engine, a tuple of labels runs
    those, False none (closed forms only)."""
    _check_system(system)
    trigger = Trigger() if trigger is None else trigger
    sc = scenario(system, trigger)
    cf = closed_forms(sc)
    n = system.commit_ms
    lam_peak = system.peak_rate_per_s
    safe = capacity.safe_queue_limit(system.timeout_ms, n, system.safety)
    n_max = system.far_commit_ms if trigger.kind == "second_owner" else n * trigger.slow_factor
    # mean batch time while the trigger lasts, and the capacity it leaves
    if trigger.kind == "second_owner":
        n_trig = (n + system.far_commit_ms) / 2.0
        cap_trig = capacity.alternating_owners_tps([n, system.far_commit_ms])
    else:
        n_trig = n * trigger.slow_factor
        cap_trig = capacity.tps_ceiling(n_trig)
    threshold = effective_timeout_queue(sc, n_trig)
    growth = capacity.queue_growth_rate(cf["demand_peak"], 0.0, cap_trig)
    t_thr = threshold / growth if growth > 0 else math.inf
    reaches = t_thr <= trigger.duration_s
    edges = band(sc)
    edges_budget = band(replace(sc, retry=replace(sc.retry, budget=sc.retry.budget or BUDGET)))
    z_peak = zone(lam_peak, edges)
    worst_entered = None if system.queue_limit is None else (
        system.queue_limit * n_trig + system.batch_max_wait_ms + n_max)
    bounded = worst_entered is not None and worst_entered <= system.timeout_ms
    if bounded:
        stuck, why = False, (f"recovers: behind a full queue a request waits at most {worst_entered:.0f} ms ≤ M, "
                             "so none times out")
    elif z_peak == ZONES[2]:
        stuck, why = True, "stuck: the peak alone is above capacity"
    elif reaches and z_peak == ZONES[1]:
        stuck, why = True, "stuck: the trigger pushes the queue past the threshold and the peak is in the band"
    elif reaches:
        stuck, why = False, "recovers: timeouts during the trigger, but below the band the storm dies out"
    else:
        stuck, why = False, "recovers: the trigger is too short or too weak to reach the threshold"
    rep = Report(
        system=system,
        trigger=trigger,
        scenario=sc,
        commit_ms=n,
        derived_commit_ms=system.derived_commit_ms,
        far_commit_ms=system.far_commit_ms,
        capacity_per_s=cf["capacity_one_owner"],
        capacity_two_owners_per_s=cf["capacity_two_owners"],
        capacity_trigger_per_s=cap_trig,
        demand_normal_per_s=cf["demand_normal"],
        demand_peak_per_s=cf["demand_peak"],
        rows_per_batch_peak=capacity.batcher_mean_batch_size(lam_peak, system.batch_max_rows,
                                                             system.batch_max_wait_ms),
        critical_queue=cf["critical_queue"],
        effective_queue=cf["effective_queue_one_owner"],
        safe_queue_limit=safe,
        worst_wait_safe_ms=safe * n_trig + system.batch_max_wait_ms + n_max,
        safety_for_trigger=max(0.0, (system.timeout_ms - system.batch_max_wait_ms - n_max)
                               / (n_trig * capacity.critical_queue_length(system.timeout_ms, n))),
        retries_in_storm=cf["attempts_per_request_stuck"] - 1,
        storm_demand_per_s=cf["demand_stuck"],
        band=edges,
        band_with_budget=edges_budget,
        zone_normal=zone(system.normal_rate_per_s, edges),
        zone_peak=z_peak,
        safe_retries=safe_retries(lam_peak, edges[1]),
        trigger_growth_per_s=growth,
        trigger_threshold=threshold,
        time_to_threshold_s=t_thr,
        trigger_reaches_threshold=reaches,
        worst_wait_entered_ms=worst_entered,
        predicted_stuck=stuck,
        prediction=why,
    )
    if runs is True:
        labels = VARIANTS
    elif runs is False or runs is None:
        labels = ()
    else:
        labels = tuple(runs)
        for lab in labels:
            check_choice("runs", lab, VARIANTS)
    for lab in labels:
        variant = scenario(system, trigger,
                           queue_limit=safe if lab in ("safe QueueMaxSize", "both") else "entered",
                           budget=lab in ("retry budget", "both"))
        rep.runs[lab] = simulate(variant, engine="fast", seed=seed)
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
    "08": "08_lost_timeouts", "09": "09_fault_tolerance",
}

CHECKLIST: tuple[ChecklistItem, ...] = (
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
                  "drop the backlog (保增量降存量) where dropping is safe (资金安全).", "000, 001, 003",
                  ("04", "07", "09")),
    ChecklistItem("deadlines", "Deadlines propagated: the server skips work whose client has already given up.",
                  "000, 003", ("04", "09")),
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
        return f"a far owner costs {rep.capacity_per_s - rep.capacity_two_owners_per_s:.1f} commits/s"
    return ""


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

    def __init__(self, base: YourSystem = SYSTEM_A, trigger: Trigger | None = None):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        _check_system(base)
        self.base = base
        self.trigger = Trigger() if trigger is None else trigger
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
               retry_patience_ms=None, queue_limit="entered", trigger_s=None, seed: int = 0,
               show: bool = True) -> Report:
        """Report on the changed system (closed forms + the run as entered) and redraw."""
        system = self.system(normal_rate_per_s, peak_factor, timeout_ms, rtt_ms, retry_patience_ms, queue_limit)
        trig = self.trigger if trigger_s is None else replace(self.trigger, duration_s=trigger_s)
        rep = report(system, trig, runs=("as entered",), seed=seed)
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
    def summary(rep: Report) -> str:
        run = rep.runs["as entered"]
        lo, hi = rep.band
        verdict = "**recovered**" if run.recovered else "**stuck**"
        return (f"{verdict}: {100 * run.summary['served_share']:.1f}% of user requests answered in time. "
                f"N = {rep.commit_ms:.1f} ms, ceiling {rep.capacity_per_s:.1f} commits/s; M/N = "
                f"{rep.critical_queue:.1f}, safe QueueMaxSize {rep.safe_queue_limit}; band {lo:.0f}–{hi:.0f} "
                f"requests/s, peak {rep.system.peak_rate_per_s:.0f}/s {rep.zone_peak}; closed forms predict "
                f"{'stuck' if rep.predicted_stuck else 'recovery'}.")

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
        self.verdict.set_text(f"{'recovered' if run.recovered else 'stuck'}: "
                              f"{100 * run.summary['served_share']:.0f}% served in time")
        self.verdict.set_color(COLORS["recovered" if run.recovered else "stuck"])
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
    ql_opts = [("as entered", "entered"), ("none", None)] + [(str(k), k) for k in (3, 6, 9, 12, 25, 100)]
    return {
        "normal_rate_per_s": fs(base.normal_rate_per_s, 50.0, 1500.0, 10.0, "normal load (user requests/s)"),
        "peak_factor": fs(base.peak_factor, 1.0, 2.0, 0.05, "peak factor"),
        "timeout_ms": fs(base.timeout_ms, 100.0, 1000.0, 10.0, "M: client timeout (ms)"),
        "rtt_ms": fs(base.rtt_ms, 0.1, 3.0, 0.1, "RTT to the primary (ms)"),
        "retry_patience_ms": fs(patience, 0.0, 2000.0, 50.0, "user patience (ms)"),
        "queue_limit": widgets.Dropdown(options=ql_opts, value="entered", description="QueueMaxSize (batches)",
                                        style=style, layout=layout),
        "trigger_s": fs(Trigger().duration_s, 0.0, 60.0, 5.0, "trigger duration (s)"),
        "seed": widgets.fixed(0),
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
    "batch_max_rows": "a batch closes at this many requests …",
    "batch_max_wait_ms": "… or this long after its first request (ms)",
    "timeout_ms": "M: the client's timeout per attempt (ms)",
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
