"""10 · Figures: the zones of the band, the runs of the report.
"""

from __future__ import annotations

from .. import plotting
from ..metastable.figures_story import small_multiples
from ..plotting import COLORS
from .model import Report
from .scenario import (
    BUDGET,
)


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
    """The simulated trigger, one small timeline per run (``metastable.figures_story.small_multiples``)."""
    if not rep.runs:
        raise ValueError("runs must not be empty: call report(..., runs=True)")
    return small_multiples(rep.runs, ncols=min(ncols, len(rep.runs)))
