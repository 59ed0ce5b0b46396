"""Notebook 04's what-if widget: a persistent figure (:class:`WhatIf`) redrawn by each call with
a fast-engine run of the chosen load, trigger, timeout, batch time, queue bound, retry policy and
patience, and its controls (:func:`whatif_controls`, ipywidgets). The verdict comes from the run
(``run.recovered``); the closed forms beside it are :func:`~hotkeylab.metastable.closed_forms`
and :func:`.closed_form.band_user_rates`.

>>> from ipywidgets import interactive                                 # doctest: +SKIP
>>> interactive(WhatIf().update, **whatif_controls())                  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from .. import plotting
from ..plotting import COLORS
from ..validate import check_choice, check_int, check_number
from . import simulate
from .analysis import closed_forms
from .closed_form import band_user_rates
from .figures import log_queue_axis
from .mitigations import backoff_policy
from .scenario import (
    SEED_INCIDENT,
    SEED_RETRY,
    GrpcThrottle,
    PercentBudget,
    RetryPolicy,
    Scenario,
    Window,
)

__all__ = ["RETRY_CHOICES", "WHATIF_RETRY", "WHATIF_START_MS", "WHATIF_HORIZON_MS", "WHATIF_MAX_EVENTS",
           "WhatIfResult", "WhatIf", "whatif_controls"]

#: Retry policies offered by the widget, by label.
RETRY_CHOICES: dict[str, RetryPolicy] = {
    "seed: retry after 0–50 ms, no cap": SEED_RETRY,
    "no retries": RetryPolicy(max_attempts=1),
    "3 attempts, backoff + full jitter": backoff_policy("full"),
    "seed + gRPC throttling": replace(SEED_RETRY, budget=GrpcThrottle(10.0, 0.1)),
    "seed + 20% retry budget": replace(SEED_RETRY, budget=PercentBudget(0.2, 10.0, 10_000.0)),
}
WHATIF_RETRY = "seed: retry after 0–50 ms, no cap"
WHATIF_START_MS = 10_000.0
WHATIF_HORIZON_MS = 120_000.0
#: The widget's event cap. The default settings use 0.33 M events, 1400/s 0.69 M; the busiest
#: slider settings (1400/s with M = 50 ms, or patience 2 s) would run to the scenario's cap
#: (:data:`~.scenario.MAX_EVENTS`: 18 s and 349 MB at the largest load the widget takes, 1e5/s,
#: measured on 2 loaded cores): too long for a slider. At this cap a run ends in ~13 s (1e5/s, measured on 2 loaded cores), and the
#: figure says where it stopped.
WHATIF_MAX_EVENTS = 750_000


@dataclass
class WhatIfResult:
    """What the widget computed: the run, its closed forms, and the headline numbers."""

    scenario: Scenario
    run: object
    closed: dict
    recovered: bool
    served_share: float
    wasted_share: float
    max_queue: float
    band: tuple
    extras: dict = field(default_factory=dict)

    def _repr_markdown_(self) -> str:
        c = self.closed
        verdict = "**recovered**" if self.recovered else "**stuck**"
        return (
            f"{verdict}{_cut_short(self.run)}: {100 * self.served_share:.1f}% of user requests answered in time, "
            f"{100 * self.wasted_share:.1f}% of commits wasted, longest queue {self.max_queue:.0f} batches. "
            f"Closed forms: capacity {c['capacity_one_owner']:.1f} batches/s (one owner), "
            f"{c['capacity_two_owners']:.1f} (two owners); user batches {c['demand_normal']:.1f}/s; "
            f"timeouts start near {c['effective_queue_one_owner']:.1f} batches (M/N = {c['critical_queue']:.1f}); "
            f"bistable band {self.band[0]:.0f}–{self.band[1]:.0f} requests/s."
        )


def _cut_short(run) -> str:
    """`` (stopped at the event cap, …)`` for a truncated run, else nothing (:func:`plotting.cut_short`)."""
    return plotting.cut_short(run)


class WhatIf(plotting.LiveFigure):
    """The what-if figure, kept between calls (a :class:`~hotkeylab.plotting.LiveFigure`): each
    call simulates on the fast engine, updates the lines' data and the shaded trigger, and redraws
    the same figure.

    >>> wi = WhatIf()                                                     # doctest: +SKIP
    >>> interactive(wi.update, **whatif_controls())                       # doctest: +SKIP
    """

    SERIES = ("offered", "retries", "goodput", "timeouts", "rejected")

    def __init__(self):
        super().__init__(figsize=(8.0, 3.4))
        ax = self.ax
        # each window's value is drawn over its second (steps), so nothing seems to move before it happens
        for s in self.SERIES:
            self.line(s, color=COLORS[s], lw=2, label=plotting.LABELS[s], drawstyle="steps-post")
        # the users' line on top, dashed black, so the retries (often equal to it) cannot hide it
        # retries (often equal to the users) as a wide light band under the users' dashed line:
        # both stay visible
        self.lines["offered"].set(color="black", ls=(0, (4, 2)), lw=1.3, zorder=5)
        self.lines["retries"].set(lw=5.0, alpha=0.45)
        self.qax = plotting.queue_axis(ax, "queue (batches, log; floor = 0)")
        # symlog: the ~10-batch threshold stays visible beside 1000s; ticks at powers of ten only
        log_queue_axis(self.qax, 10.0)
        self.qline = self.qax.plot([], [], color=COLORS["queue"], lw=2, label="queue (batches, right axis)",
                                   drawstyle="steps-post")[0]
        # the threshold belongs to the right (queue) axis: drawn from the middle to the right edge only,
        # in the queue's colour, with its value written beside the right axis
        self.thr = self.qax.plot([0.5, 1.0], [0, 0], color=COLORS["queue"], ls="--", lw=1.2,
                                 transform=self.qax.get_yaxis_transform(),
                                 label="timeouts start, one owner (right axis)")[0]
        self.thr_text = self.qax.text(0.995, 0, "", transform=self.qax.get_yaxis_transform(), ha="right",
                                      va="bottom", fontsize=7, color=COLORS["queue"])
        self.span = ax.axvspan(WHATIF_START_MS / 1e3, 40.0, color=COLORS["trigger"], alpha=0.35, lw=0,
                               label="second owner (trigger)", zorder=0)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("requests/s")
        self._legend_kw = dict(loc="upper left", bbox_to_anchor=(1.15, 1.0), fontsize=8)
        plotting.merged_legend(ax, self.qax, **self._legend_kw)
        ax.set_xlim(0, WHATIF_HORIZON_MS / 1e3)
        self.last: WhatIfResult | None = None

    def scenario(self, user_rate_per_s: float = 720.0, cross_batch_ms: float = 27.0, trigger_s: float = 30.0,
                 timeout_ms: float = 200.0, batch_ms: float = 16.0, queue_limit: int | None = None,
                 retry: str = WHATIF_RETRY, patience_ms: float = 300.0) -> Scenario:
        """The scenario the widget runs: constant load, a second owner from 10 s for ``trigger_s``;
        ``patience_ms`` replaces the retry policy's patience (a user stops once the next attempt
        would start more than this after the first: with M = 200 ms, 300 ms leaves room for one
        retry, 100 ms for none)."""
        check_number("trigger_s", trigger_s, low=0.0, high=(WHATIF_HORIZON_MS - WHATIF_START_MS) / 1e3)
        check_choice("retry", retry, tuple(RETRY_CHOICES))
        check_number("patience_ms", patience_ms, low=0.0, high=60_000.0)
        if queue_limit is not None:
            check_int("queue_limit", queue_limit, low=0)
        end = WHATIF_START_MS + 1e3 * trigger_s
        return replace(
            SEED_INCIDENT,
            user_rate_per_s=check_number("user_rate_per_s", user_rate_per_s, low=0.0, high=1e5),
            peak=None,
            batch_ms=check_number("batch_ms", batch_ms, low=0.0, low_open=True),
            cross_batch_ms=check_number("cross_batch_ms", cross_batch_ms, low=0.0, low_open=True),
            timeout_ms=check_number("timeout_ms", timeout_ms, low=0.0, low_open=True),
            second_owner=Window(WHATIF_START_MS, end) if trigger_s > 0 else None,
            queue_limit=queue_limit,
            retry=replace(RETRY_CHOICES[retry], patience_ms=patience_ms),
            horizon_ms=WHATIF_HORIZON_MS,
            max_events=WHATIF_MAX_EVENTS,
        )

    def update(self, user_rate_per_s: float = 720.0, cross_batch_ms: float = 27.0, trigger_s: float = 30.0,
               timeout_ms: float = 200.0, batch_ms: float = 16.0, queue_limit: int | None = None,
               retry: str = WHATIF_RETRY, patience_ms: float = 300.0, seed: int = 0,
               show: bool = True) -> WhatIfResult:
        """Simulate the what-if scenario and redraw the persistent figure (displayed if ``show``)."""
        sc = self.scenario(user_rate_per_s, cross_batch_ms, trigger_s, timeout_ms, batch_ms, queue_limit, retry,
                           patience_ms)
        run = simulate(sc, engine="fast", seed=seed)
        cf = closed_forms(sc)
        band = band_user_rates(sc)
        res = WhatIfResult(sc, run, cf, bool(run.recovered), float(run.summary["served_share"]),
                           float(run.summary["wasted_share"]), float(run.summary["max_queue"]), band)
        self.redraw(res)  # counts the call (``calls``)
        self.last = res
        if show:
            self.show(res._repr_markdown_())
        return res

    __call__ = update

    def redraw(self, res: WhatIfResult) -> None:
        """Put ``res``'s run into the figure's lines and draw it."""
        w = res.run.windows
        self.set_lines(w["t"], w)
        self.rescale_y(self.ax, (w[s] for s in self.lines))
        self.qline.set_data(w["t"], w["queue"])
        thr = res.closed["effective_queue_one_owner"]
        self.thr.set_ydata([thr, thr])
        self.thr_text.set_y(thr)
        self.thr_text.set_text(f"timeouts start: {thr:.1f} batches →")
        log_queue_axis(self.qax, 2.0 * max(float(np.max(w["queue"])), 2.0 * thr, 1.0))
        # the legend lists only what is drawn: a series that stayed at zero (no rejections) drops out
        shown = [ln for s, ln in self.lines.items() if s in ("offered", "goodput") or np.any(w[s] > 0)]
        for ln in self.lines.values():
            ln.set_visible(ln in shown)
        hs = shown + [self.span, self.qline, self.thr]
        self.ax.legend(hs, [h.get_label() for h in hs], **self._legend_kw)
        so = res.scenario.second_owner
        a, b = (so.start_ms / 1e3, so.end_ms / 1e3) if so is not None else (0.0, 0.0)
        self.span.set_x(a)
        self.span.set_width(b - a)
        self.note(f"{'recovered' if res.recovered else 'stuck'}{_cut_short(res.run)}: "
                  f"{100 * res.served_share:.0f}% served in time", COLORS["recovered" if res.recovered else "stuck"])
        self.draw()


def whatif_controls() -> dict:
    """Controls for ``ipywidgets.interactive(WhatIf().update, **whatif_controls())``. Children
    order: load, C's batch time, trigger duration, M, N, queue limit, retry policy, patience."""
    import ipywidgets as widgets

    style = {"description_width": "170px"}
    layout = widgets.Layout(width="480px")

    def fs(value, lo, hi, step, desc):
        return widgets.FloatSlider(value=value, min=lo, max=hi, step=step, description=desc, style=style,
                                   layout=layout, continuous_update=False)

    return {
        "user_rate_per_s": fs(720.0, 200.0, 1400.0, 20.0, "load (user requests/s)"),
        "cross_batch_ms": fs(27.0, 16.0, 60.0, 1.0, "C's batch time (ms)"),
        "trigger_s": fs(30.0, 0.0, 60.0, 5.0, "trigger duration (s)"),
        "timeout_ms": fs(200.0, 50.0, 1000.0, 10.0, "M: client timeout (ms)"),
        "batch_ms": fs(16.0, 4.0, 40.0, 1.0, "N: batch time in B (ms)"),
        "queue_limit": widgets.Dropdown(options=[("none", None)] + [(str(k), k) for k in (3, 6, 9, 12, 25, 100)]
                                        + [("250 (≈ the seed's, assumed)", 250)],
                                        value=None, description="QueueMaxSize (batches)", style=style, layout=layout),
        "retry": widgets.Dropdown(options=list(RETRY_CHOICES), value=WHATIF_RETRY,
                                  description="retry policy", style=style, layout=layout),
        "patience_ms": fs(300.0, 100.0, 2000.0, 50.0, "user patience (ms)"),
        "seed": widgets.fixed(0),
        "show": widgets.fixed(True),
    }
