"""Notebook 04a · Retry storms: the mitigations surveyed.

The verdicts come from the committed counts (:mod:`.verdicts`); this module turns them into the
survey's table (:func:`survey_rows`, :func:`survey_markdown`) and the backoff sweep's arrays
(:func:`backoff_grid`). The arithmetic that explains them lives in :mod:`.closed_form`
(``storm_attempts``, ``storm_demand``, ``attempts_ceiling``, ``storm_exit_s``, ``stretch_needed``,
``drain_edge_rate``), the restart runs in :mod:`.mitigations` and the figures in
:mod:`.figures_survey` and :mod:`.figures_phase`; their names are re-exported here, so the
notebook reads ``survey.<name>`` for all of 04a's helpers.

>>> from hotkeylab.metastable import SEED_RETRY, survey
>>> survey.storm_attempts(SEED_RETRY, 200.0)
2.0
"""

from __future__ import annotations

import math

import numpy as np

from .closed_form import (
    attempts_ceiling,
    drain_edge_rate,
    peak_rate,
    storm_attempts,
    storm_demand,
    storm_exit_s,
    stretch_needed,
    user_rate_for_batches,
)
from .figures_phase import plot_phase_load
from .figures_survey import (
    plot_backoff,
    plot_restart_zoom,
    plot_survey,
    restart_zoom_clipped,
    restart_zoom_top,
)
from .mitigations import GROUPS, MITIGATIONS, restart_run, restart_scenario
from .verdicts import BACKOFF_ATTEMPTS, BACKOFF_KINDS, BACKOFF_PATIENCE_MS, EXPERIMENTS

__all__ = [
    "GROUPS",
    "peak_rate",
    "storm_attempts",
    "storm_demand",
    "attempts_ceiling",
    "user_rate_for_batches",
    "storm_exit_s",
    "stretch_needed",
    "drain_edge_rate",
    "restart_scenario",
    "restart_run",
    "share_text",
    "survey_rows",
    "survey_markdown",
    "plot_survey",
    "backoff_grid",
    "plot_backoff",
    "plot_restart_zoom",
    "restart_zoom_top",
    "restart_zoom_clipped",
    "plot_phase_load",
]


# --------------------------------------------------------------------------- the survey table
def share_text(count, field: str = "served_share") -> str:
    """``Count.share_range`` as text, one value when the range is a single percent (``"100%"``)."""
    x = 100 * getattr(count, field)
    lo, hi = f"{np.nanmin(x):.0f}", f"{np.nanmax(x):.0f}"
    return f"{lo}%" if lo == hi else f"{lo}–{hi}%"


def survey_rows(V: dict) -> list[dict]:
    """One row per mitigation of :data:`GROUPS` (and ``"none"`` first): its label, kind, source,
    the verdict over seeds (``Count.text``), the ranges of served and end shares, mean attempts."""
    rows = []
    for group, names in {"the incident": ("none",), **GROUPS}.items():
        for name in names:
            c = V[f"mit_{name}"]
            m = MITIGATIONS[name]
            rows.append({"name": name, "group": group, "label": m.label, "kind": m.kind, "source": m.source,
                         "k": c.k, "n": c.n, "text": c.text, "knife_edge": c.knife_edge,
                         "served": share_text(c, "served_share"), "end": share_text(c, "end_share"),
                         "attempts": float(np.mean(c.attempts_per_request)), "stale": c.stale})
    return rows


def survey_markdown(rows: list[dict]) -> str:
    """A markdown table of :func:`survey_rows`."""
    head = ["mitigation", "acts on", "source", "verdict over seeds", "served in time (range)",
            "goodput / offered, last 10 s (range)", "attempts per user request (mean)"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        verdict = f"**{r['text']}**" if r["knife_edge"] else r["text"]
        out.append(f"| {r['label']} | {r['group']} | {r['source']} | {verdict} | {r['served']} | {r['end']} | "
                   f"{r['attempts']:.2f} |")
    return "\n".join(out)


# --------------------------------------------------------------------------- the backoff sweep
def backoff_grid(V: dict) -> dict:
    """The backoff sweep as arrays: rows (attempts, kind), columns patience; recovered counts, seeds,
    mean attempts per user request (simulated, whole run) and :func:`storm_attempts` (closed form)."""
    rows = [(a, k) for a in BACKOFF_ATTEMPTS for k in BACKOFF_KINDS]
    cols = ["inf" if math.isinf(p) else f"{p:.0f}" for p in BACKOFF_PATIENCE_MS]
    shape = (len(rows), len(cols))
    k, n, sim, closed = (np.zeros(shape) for _ in range(4))
    for i, (a, kind) in enumerate(rows):
        for j, p in enumerate(cols):
            name = f"backoff_{a}_{kind}_{p}"
            c = V[name]
            k[i, j], n[i, j] = c.k, c.n
            sim[i, j] = float(np.mean(c.attempts_per_request))
            sc = EXPERIMENTS[name].scenario
            closed[i, j] = storm_attempts(sc.retry, sc.timeout_ms)
    return {"rows": rows, "cols": cols, "k": k, "n": n, "sim": sim, "closed": closed}
