"""Notebook 04 · Metastable retry storms: the names the notebook reads as ``lesson.<name>``.

The helpers live by what they are, and are gathered here so the notebook (and notebook 10) need
one import:

- :mod:`.presets`: the short clock (``SHORT_INCIDENT``), when operators act, ``FULL_QUEUE_600``;
- :mod:`.closed_form`: the bistable band, drain times, a restart's wave, the phase boundary;
- :mod:`.readings`: slopes, means and first crossings of a run's windows;
- :mod:`.mitigations`: the fixes, run and tabulated side by side;
- :mod:`.experiments`: the drain from the bound, phase-diagram cells, the hysteresis ramp;
- :mod:`.figures_story`, :mod:`.figures_phase`: the figures, taking results as data;
- :mod:`.widgets`: the what-if widget.

What is defined here is only :func:`load_verdicts`, the committed counts over seeds refused when
stale. Times are ms in arguments (``*_ms``) and seconds on plot axes and where a name ends in ``_s``.

>>> from hotkeylab.metastable import lesson, simulate
>>> run = simulate(lesson.SHORT_INCIDENT)                   # doctest: +SKIP
>>> lesson.story(run)                                       # doctest: +SKIP
"""

from __future__ import annotations

from . import verdicts
from .closed_form import (
    band_user_rates,
    drain_time_s,
    restart_limit_rate,
    restart_wave,
    trigger_boundary_s,
)
from .experiments import (
    HYST_HIGH_PER_S,
    HYST_MEASURE_MS,
    HYST_OVERLOAD_MS,
    HYST_SETTLE_MS,
    PHASE_AFTER_MS,
    PHASE_TRIGGER_START_MS,
    cell_scenario,
    drain_from_bound,
    hysteresis,
    hysteresis_point,
    phase_cell,
    queue_at,
)
from .figures_phase import phase_figure, plot_hysteresis
from .figures_story import STORY_SERIES, onset, small_multiples, story, story_panels
from .mitigations import (
    MITIGATIONS,
    Mitigation,
    backoff_policy,
    compare,
    comparison_markdown,
    comparison_rows,
    mitigate,
    run_mitigation,
)
from .presets import ACT_FOR_MS, ACT_MS, FULL_QUEUE_600, SAFETY, SHORT_INCIDENT, STRETCH_FACTOR
from .readings import (
    first_below,
    first_time,
    mean_between,
    slope,
    timeout_share_vs_queue,
    windows_of,
)
from .widgets import (
    RETRY_CHOICES,
    WHATIF_HORIZON_MS,
    WHATIF_RETRY,
    WHATIF_START_MS,
    WhatIf,
    WhatIfResult,
    whatif_controls,
)

__all__ = [
    "SHORT_INCIDENT",
    "FULL_QUEUE_600",
    "drain_from_bound",
    "queue_at",
    "load_verdicts",
    "ACT_MS",
    "ACT_FOR_MS",
    "SAFETY",
    "STRETCH_FACTOR",
    "Mitigation",
    "MITIGATIONS",
    "backoff_policy",
    "mitigate",
    "windows_of",
    "STORY_SERIES",
    "story",
    "story_panels",
    "onset",
    "slope",
    "first_time",
    "first_below",
    "mean_between",
    "timeout_share_vs_queue",
    "band_user_rates",
    "drain_time_s",
    "restart_wave",
    "restart_limit_rate",
    "run_mitigation",
    "compare",
    "comparison_rows",
    "comparison_markdown",
    "small_multiples",
    "PHASE_TRIGGER_START_MS",
    "PHASE_AFTER_MS",
    "cell_scenario",
    "phase_cell",
    "trigger_boundary_s",
    "phase_figure",
    "HYST_HIGH_PER_S",
    "HYST_OVERLOAD_MS",
    "HYST_SETTLE_MS",
    "HYST_MEASURE_MS",
    "hysteresis_point",
    "hysteresis",
    "plot_hysteresis",
    "WhatIf",
    "WhatIfResult",
    "whatif_controls",
    "RETRY_CHOICES",
    "WHATIF_RETRY",
    "WHATIF_START_MS",
    "WHATIF_HORIZON_MS",
]

#: The old private name of :func:`~.mitigations.backoff_policy` (tests/test_metastable_parts.py uses it).
_backoff = backoff_policy


def load_verdicts() -> dict:
    """The committed verdicts over seeds (:func:`.verdicts.load`); raises RuntimeError if any row
    is stale, i.e. the model or a preset changed since they were computed (run ``make verdicts``)."""
    v = verdicts.load()
    stale = sorted(name for name, c in v.items() if c.stale)
    if stale:
        raise RuntimeError(f"verdicts_04.csv is stale for {stale[:5]}…: run `make verdicts`")
    return v
