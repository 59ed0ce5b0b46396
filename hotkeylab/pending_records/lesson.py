"""06 · The notebook's explore() and its controls.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from ..validate import check_int, check_number
from .closed_form import (
    closed_forms,
)
from .figures import (
    plot_timeline,
)
from .model import (
    simulate,
)
from .scenario import (
    SEED_INCIDENT,
)


# --------------------------------------------------------------------------- widget
@lru_cache(maxsize=16)
def _explore_run(sc, seed: int):
    """The widget's run (cached: a slider moved back, or a redraw, does not simulate again; the
    same scenario and seed give the same run)."""
    return simulate(sc, seed)


def explore(
    replenish_s: float = SEED_INCIDENT.replenish_ms / 1000,
    row_limit: int = 0,
    batch_period_s: float = SEED_INCIDENT.batch_period_ms / 1000,
    batch_timeout_s: float = SEED_INCIDENT.batch_timeout_ms / 1000,
    db_slots: int = SEED_INCIDENT.db_slots,
    seed: int = 0,
    horizon_s: float = 2400.0,
    plot: bool = True,
) -> dict:
    """The what-if widget's function: the seed's incident with the inventory replenished at
    ``replenish_s``, a row limit (0: none), the batch's period and timeout and the primary's slots.
    Draws :func:`plot_timeline` and returns the run's summary with the closed forms beside it."""
    r = check_number("replenish_s", replenish_s, low=SEED_INCIDENT.stockout_ms / 1000, allow_inf=True)
    sc = replace(
        SEED_INCIDENT,
        replenish_ms=r * 1000.0,
        row_limit=check_int("row_limit", row_limit, low=0),
        batch_period_ms=check_number("batch_period_s", batch_period_s, low=0.1) * 1000.0,
        batch_timeout_ms=check_number("batch_timeout_s", batch_timeout_s, low=0.0, low_open=True) * 1000.0,
        db_slots=check_int("db_slots", db_slots, low=1),
        horizon_ms=check_number("horizon_s", horizon_s, low=1.0) * 1000.0,
    )
    run = _explore_run(sc, seed)  # at most sc.max_events events (truncated beyond)
    out = run.summary.as_dict()
    cf = closed_forms(sc)
    out.update({f"cf_{k}": v for k, v in cf.items()})
    if plot:
        from ..plotting import live_figure

        # one figure kept between slider moves, its panels cleared and drawn again
        live = live_figure("06.explore", 3, 1, figsize=(8.0, 6.3), sharex=True, layout=None)
        live.replot(plot_timeline, run)
        live.show()
    return out


def explore_controls() -> dict:
    """The widget's sliders (for ``ipywidgets.interactive(explore, **explore_controls())``), in
    the order: replenish time, row limit, batch period, batch timeout, database slots."""
    import ipywidgets as w

    style = {"description_width": "initial"}
    lay = w.Layout(width="420px")
    return {
        "replenish_s": w.FloatSlider(value=600.0, min=60.0, max=1800.0, step=30.0, description="replenished at (s)", style=style, layout=lay),
        "row_limit": w.IntSlider(value=0, min=0, max=10_000, step=500, description="row limit (0: none)", style=style, layout=lay),
        "batch_period_s": w.FloatSlider(value=30.0, min=10.0, max=120.0, step=5.0, description="batch period (s)", style=style, layout=lay),
        "batch_timeout_s": w.FloatSlider(value=30.0, min=5.0, max=120.0, step=5.0, description="batch timeout (s)", style=style, layout=lay),
        "db_slots": w.IntSlider(value=8, min=2, max=32, step=1, description="database slots", style=style, layout=lay),
        "seed": w.fixed(0),
        "horizon_s": w.fixed(2400.0),
        "plot": w.fixed(True),
    }
