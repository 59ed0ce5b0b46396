"""10 · Helpers the notebook uses: the checklist, seed 003's configuration checks, the dashboard widget and
its controls, tables of the systems' fields.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

import numpy as np

from .. import plotting
from ..plotting import COLORS
from ..validate import check_int
from .closed_form import (
    MIN_SEEDS,
    _check_system,
)
from .model import Report, _fmt, report
from .scenario import (
    SYSTEM_A,
    ZONES,
    Trigger,
    YourSystem,
)


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
class Dashboard(plotting.LiveFigure):
    """The capstone's what-if figure, kept between calls (a :class:`~hotkeylab.plotting.LiveFigure`):
    where the load sits in the band (top) and the simulated trigger as entered (bottom). Each call
    changes ``base`` with the sliders' values, runs :func:`report` with the run "as entered" only,
    and redraws the same figure.

    >>> d = Dashboard()                                                   # doctest: +SKIP
    >>> interactive(d.update, **dashboard_controls())                     # doctest: +SKIP
    """

    SERIES = ("offered", "retries", "goodput", "timeouts", "rejected")

    def __init__(self, base: YourSystem = SYSTEM_A, trigger: Trigger | None = None, seeds: int = 1):
        _check_system(base)
        self.base = base
        self.trigger = Trigger() if trigger is None else trigger
        self.seeds = check_int("seeds", seeds, low=1, high=1_000)
        super().__init__(2, 1, figsize=(8.0, 4.2), height_ratios=[1, 3.2], note_ax=1, note_xy=(0.99, 0.97),
                         note_ha="right")
        self.zax, self.ax = self.axes
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
        for s in self.SERIES:
            self.line(s, ax, color=COLORS[s], lw=2, label=plotting.LABELS[s])
        self.qax = plotting.queue_axis(ax)
        self.qline = self.qax.plot([], [], color=COLORS["queue"], lw=2, label=plotting.LABELS["queue"])[0]
        self.thr = self.qax.axhline(0, color=COLORS["queue"], ls="--", lw=1, label="timeouts start (closed form)")
        self.span = ax.axvspan(0, 1, color=COLORS["trigger"], alpha=0.35, lw=0, label="trigger", zorder=0)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("requests/s")
        plotting.merged_legend(ax, self.qax, loc="upper left", bbox_to_anchor=(1.15, 1.0), fontsize=8)
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
        self.redraw(rep)  # counts the call (``calls``)
        self.last = rep
        if show:
            self.show(self.summary(rep))
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
        self.set_lines(t, w)
        self.rescale_y(self.ax, (w[name] for name in self.lines))
        self.ax.set_xlim(0, rep.trigger.horizon_s)
        self.qline.set_data(t, w["queue"])
        self.thr.set_ydata([rep.effective_queue, rep.effective_queue])
        self.rescale_y(self.qax, (w["queue"],), floor=max(2.0 * rep.effective_queue, 1.0))
        self.no_data(self.ax, len(t) == 0)
        tr = rep.trigger
        self.span.set_x(tr.start_s)
        self.span.set_width(tr.duration_s)
        head = self.headline(rep)
        good = rep.predicted.verdict == "recovers" and run.recovered
        bad = rep.predicted.verdict == "stuck" and not run.recovered
        self.note(f"{head}\nthis run{plotting.cut_short(run)}: {100 * run.summary['served_share']:.0f}% served in time",
                  COLORS["recovered"] if good else (COLORS["stuck"] if bad else "black"))
        self.draw()


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
