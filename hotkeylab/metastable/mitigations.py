"""The fixes notebooks 04 and 04a compare: each a function from a scenario to a scenario, run on
the short clock (:data:`~.presets.SHORT_INCIDENT`) and tabulated side by side.

>>> from hotkeylab.metastable import mitigations
>>> runs = mitigations.compare(["none", "restart"])                  # doctest: +SKIP
>>> mitigations.comparison_markdown(mitigations.comparison_rows(runs))  # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from .. import capacity
from ..sweep import run as sweep_run
from ..validate import check_choice, check_number
from . import simulate
from .presets import ACT_FOR_MS, ACT_MS, SAFETY, SHORT_INCIDENT, STRETCH_FACTOR
from .scenario import (
    AdaptiveThrottle,
    CoDel,
    GrpcThrottle,
    PercentBudget,
    RetryPolicy,
    Scenario,
    Window,
)

__all__ = ["Mitigation", "MITIGATIONS", "GROUPS", "backoff_policy", "mitigate", "run_mitigation", "compare",
           "comparison_rows", "comparison_markdown", "restart_scenario", "restart_run"]


@dataclass(frozen=True)
class Mitigation:
    """A fix applied to a scenario: ``apply(scenario) -> scenario``.

    ``kind`` is ``"intervention"`` (an operator acts at :data:`~.presets.ACT_MS`, after isolation)
    or ``"protection"`` (always on, before the trigger). ``source`` names where the idea comes from.
    """

    label: str
    kind: str
    source: str
    apply: Callable[[Scenario], Scenario]


def backoff_policy(jitter: str, patience_ms: float = math.inf) -> RetryPolicy:
    """3 attempts, exponential backoff from 100 ms (×2, capped at 1 s) with ``jitter``."""
    return RetryPolicy(max_attempts=3, base_ms=100.0, multiplier=2.0, cap_ms=1_000.0, jitter=jitter,
                       patience_ms=patience_ms)


def _safe_limit(sc: Scenario) -> int:
    return capacity.safe_queue_limit(sc.timeout_ms, sc.batch_ms, SAFETY)


def _acting(field: str, factor: float | None = None) -> Callable[[Scenario], Scenario]:
    """An intervention: ``field`` set to the window when operators act (:data:`ACT_MS`, for
    :data:`ACT_FOR_MS`)."""
    win = Window(ACT_MS, ACT_MS + ACT_FOR_MS) if factor is None else Window(ACT_MS, ACT_MS + ACT_FOR_MS, factor)
    return lambda sc: replace(sc, **{field: win})


def _retry(**changes) -> Callable[[Scenario], Scenario]:
    return lambda sc: replace(sc, retry=replace(sc.retry, **changes))


def _set(**changes) -> Callable[[Scenario], Scenario]:
    return lambda sc: replace(sc, **changes)


_CODEL = CoDel(target_ms=5.0, interval_ms=100.0)

#: Every mitigation the notebook compares, in the order of its table. Names are the keys.
MITIGATIONS: dict[str, Mitigation] = {
    "none": Mitigation("none (the incident: isolation only)", "—", "seed 000", lambda sc: sc),
    "degrade": Mitigation("degrade upstream for 30 s", "intervention", "seed 000 (what the team did)",
                          _acting("degrade", 0.0)),
    "restart": Mitigation("restart the server (queue cleared)", "intervention", "seed 000 (措施 1)",
                          _set(restart_at_ms=ACT_MS)),
    "stretch": Mitigation(f"retry interval ×{STRETCH_FACTOR:g} for 30 s", "intervention",
                          "seed 000 (措施 2: 临时改变重试时间间隔)", _acting("stretch_retries", STRETCH_FACTOR)),
    "suppress": Mitigation("switch retries off for 30 s", "intervention", "— (the limit of measure 2)",
                           _acting("suppress_retries")),
    "no_retries": Mitigation("no retries", "protection", "—", _set(retry=RetryPolicy(max_attempts=1))),
    "backoff_none": Mitigation("3 attempts, exponential backoff, no jitter", "protection", "Brooker 2015",
                               _set(retry=backoff_policy("none"))),
    "backoff_full": Mitigation("3 attempts, exponential backoff, full jitter", "protection", "Brooker 2015",
                               _set(retry=backoff_policy("full"))),
    "backoff_equal": Mitigation("3 attempts, exponential backoff, equal jitter", "protection", "Brooker 2015",
                                _set(retry=backoff_policy("equal"))),
    "backoff_decorrelated": Mitigation("3 attempts, decorrelated jitter", "protection", "Brooker 2015",
                                       _set(retry=backoff_policy("decorrelated"))),
    "queue_limit": Mitigation(f"bounded queue at the safe limit (safety {SAFETY:g})", "protection",
                              "seed 000 (事前防范)", lambda sc: replace(sc, queue_limit=_safe_limit(sc))),
    "deadline_drop": Mitigation("server drops requests past their deadline", "protection", "—",
                                _set(deadline_drop=True)),
    "adaptive_lifo": Mitigation("adaptive LIFO", "protection", "Maurer 2015", _set(discipline="adaptive_lifo")),
    "codel": Mitigation("CoDel (target 5 ms, interval 100 ms)", "protection", "Maurer 2015", _set(codel=_CODEL)),
    "lifo_codel": Mitigation("adaptive LIFO + CoDel", "protection", "Maurer 2015",
                             _set(discipline="adaptive_lifo", codel=_CODEL)),
    "grpc": Mitigation("gRPC retry throttling (10 tokens, ratio 0.1)", "protection", "gRFC A6",
                       _retry(budget=GrpcThrottle(10.0, 0.1))),
    "percent": Mitigation("retry budget 20% + 10/s over 10 s", "protection", "Finagle RetryBudget",
                          _retry(budget=PercentBudget(0.2, 10.0, 10_000.0))),
    "leader": Mitigation("leader/follower group commit (no 20 ms timer)", "protection",
                         "MySQL binlog group commit", _set(batcher="leader")),
    "adaptive_throttle": Mitigation("client-side adaptive throttling (K = 2, 2 min)", "protection",
                                    "Google SRE ch. 21",
                                    _set(client_throttle=AdaptiveThrottle(k=2.0, window_ms=120_000.0))),
}

#: The mitigations of :data:`MITIGATIONS` by what they act on, in notebook 04a's order.
GROUPS: dict[str, tuple[str, ...]] = {
    "operators act after isolation": ("degrade", "restart", "stretch", "suppress"),
    "clients send less": ("no_retries", "backoff_none", "backoff_full", "backoff_equal", "backoff_decorrelated",
                          "grpc", "percent", "adaptive_throttle"),
    "the server protects itself": ("queue_limit", "deadline_drop", "adaptive_lifo", "codel", "lifo_codel"),
    "the batcher": ("leader",),
}


def mitigate(name: str, scenario: Scenario = SHORT_INCIDENT) -> Scenario:
    """``scenario`` with mitigation ``name`` (a key of :data:`MITIGATIONS`) applied."""
    check_choice("mitigation", name, tuple(MITIGATIONS))
    return MITIGATIONS[name].apply(scenario)


def run_mitigation(name: str, scenario: Scenario = SHORT_INCIDENT, seed: int = 0):
    """One run of ``scenario`` with mitigation ``name`` on the fast engine (module-level, so a
    process pool can call it)."""
    return simulate(mitigate(name, scenario), engine="fast", seed=seed)


def compare(names: Iterable[str], scenario: Scenario = SHORT_INCIDENT, seed: int = 0, executor=None) -> dict:
    """Run each mitigation in ``names`` on ``scenario`` with ``seed``: ``{name: run}``, through
    :func:`hotkeylab.sweep.run` (``executor=None``: a process pool; ``"serial"``: in-process)."""
    names = list(names)
    for n in names:
        check_choice("mitigation", n, tuple(MITIGATIONS))
    params = [{"name": n, "scenario": scenario, "seed": seed} for n in names]
    runs = sweep_run(run_mitigation, params, executor=executor, progress=False)
    return dict(zip(names, runs, strict=True))


def comparison_rows(runs: dict, labels: dict | None = None) -> list[dict]:
    """One row per run: label, kind, recovered, time to recover (s after the trigger ended),
    share of user requests served in time, goodput lost (user requests), wasted share of the
    commits, retries sent, attempts rejected."""
    rows = []
    for name, run in runs.items():
        s = run.summary
        mit = MITIGATIONS.get(name)
        rows.append({
            "name": name,
            "label": (labels or {}).get(name, mit.label if mit else name),
            "kind": mit.kind if mit else "",
            "source": mit.source if mit else "",
            "recovered": bool(s["recovered"]),
            "recovery_time_s": s["recovery_time_s"],
            "served_share": float(s["served_share"]),
            "goodput_lost": int(s["goodput_lost"]),
            "wasted_share": float(s["wasted_share"]),
            "wasted_rows": int(s["wasted_rows"]),
            "retries": int(s["retries"]),
            "rejected": int(s["rejected"]),
            "max_queue": float(s["max_queue"]),
        })
    return rows


def comparison_markdown(rows: list[dict], *, source: bool = True) -> str:
    """A markdown table of :func:`comparison_rows`."""
    head = ["mitigation", "kind", "recovered?", "time to recover (s)", "served in time",
            "goodput lost (requests)", "wasted commits", "retries", "rejected", "max queue (batches)"]
    if source:
        head.append("source")
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        rt = "—" if r["recovery_time_s"] is None else f"{r['recovery_time_s']:.0f}"
        cells = [r["label"], r["kind"], "yes" if r["recovered"] else "**no**", rt,
                 f"{100 * r['served_share']:.1f}%", f"{r['goodput_lost']:,}", f"{100 * r['wasted_share']:.1f}%",
                 f"{r['retries']:,}", f"{r['rejected']:,}", f"{r['max_queue']:.0f}"]
        if source:
            cells.append(r["source"])
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


# --------------------------------------------------------------------------- the restart, up close
def restart_scenario(patience_ms: float = 300.0, window_ms: float = 1_000.0, after_ms: float = 20_000.0) -> Scenario:
    """The short incident with the seed's retries at ``patience_ms`` and a restart (queue cleared)
    when operators act (:data:`~.presets.ACT_MS`), run ``after_ms`` past it, in windows of ``window_ms``."""
    sc = SHORT_INCIDENT
    p = check_number("patience_ms", patience_ms, low=0.0)
    return replace(sc, retry=replace(sc.retry, patience_ms=p), restart_at_ms=ACT_MS,
                   horizon_ms=ACT_MS + check_number("after_ms", after_ms, low=5_000.0),
                   window_ms=check_number("window_ms", window_ms, low=10.0, high=5_000.0))


def restart_run(patience_ms: float = 300.0, seed: int = 0, window_ms: float = 1_000.0):
    """One run of :func:`restart_scenario` on the fast engine."""
    return simulate(restart_scenario(patience_ms, window_ms), engine="fast", seed=seed)
