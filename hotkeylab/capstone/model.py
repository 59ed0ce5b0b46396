"""10 · Simulated verdicts over random seeds, combined with the prediction into the report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from .. import capacity
from ..metastable import (
    Scenario,
    closed_forms,
    effective_timeout_queue,
    simulate,
)
from ..validate import check_choice, check_int
from .closed_form import (
    MIN_SEEDS,
    Prediction,
    _check_system,
    _trigger_commits,
    band,
    predict,
    safe_retries,
    scenario,
    turned_away_share,
    zone,
)
from .scenario import (
    BUDGET,
    VARIANTS,
    Trigger,
    YourSystem,
)


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
