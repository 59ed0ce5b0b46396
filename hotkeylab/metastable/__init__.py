"""04 · Metastable retry storms (seed 000): a hot key's queue passes the client timeout and
stays there after the trigger is gone.

The seed's incident: the month-start peak (+20%) while the key's row lock is shared with a second
owner in datacentre C (merged commits of 27 ms instead of N = 16 ms); the queue on the hot-key
thread grows past M/N, every attempt times out and is retried, and after C is isolated the retries
alone keep the thread full ("只能等积压队列慢慢消化"). A retry storm is a metastable state: the
same load is healthy from below and stuck from above.

Where to start reading
----------------------
1. :mod:`.model` (model.py, the SimPy engine): the actors (users, client, batcher, hot-key thread,
   restarter), one process function each; :mod:`.state` holds the rules and counts both engines
   share (:mod:`.arrivals` and :mod:`.rng` the seeded random draws), :mod:`.scenario` the parameters with their seed sentences and the presets.
2. :mod:`.analysis` (the seed's arithmetic: ``closed_forms``, the recovery criterion),
   :mod:`.closed_form` (the bistable band, drain times, the storm's work, a restart's wave, the
   phase boundary) and :mod:`.fluid` (the fluid model and its fixed points).
3. For the notebooks: :mod:`.presets` (the short clock), :mod:`.mitigations` (the fixes compared),
   :mod:`.experiments` (phase cells, hysteresis, the drain from the bound), :mod:`.verdicts`
   (counts over 20 seeds, committed as a CSV), the figures (:mod:`.figures`,
   :mod:`.figures_story`, :mod:`.figures_phase`, :mod:`.figures_survey`) and :mod:`.widgets`.
   :mod:`.lesson` (notebook 04) and :mod:`.survey` (notebook 04a) gather these names.
The fast engines (:mod:`.engine_fast`, :mod:`.engine_chunked`) are tuned for speed and give the
same windows for the same scenario and seed; read them last, if at all. Figures, mitigations,
experiments and widgets load on first use (they import matplotlib, tqdm or ipywidgets).

>>> from dataclasses import replace
>>> from hotkeylab.metastable import SEED_INCIDENT, RetryPolicy, simulate
>>> run = simulate(SEED_INCIDENT, engine="fast", seed=0)        # doctest: +SKIP
>>> run.recovered, run.ledger.check()                            # doctest: +SKIP
"""

from __future__ import annotations

from ..lazy import lazy_exports
from ..sim import check_seed
from ..validate import check_choice
from . import closed_form, scenario
from .closed_form import *  # noqa: F403  (its __all__: the closed forms of notebooks 04 and 04a)

# isort: split
# after closed_form: the package's drain_time_s is analysis's (every request still retried)
from .analysis import closed_forms, drain_time_s, effective_timeout_queue, recovery, summarise
from .core import Run
from .presets import ACT_FOR_MS, ACT_MS, FULL_QUEUE_600, SHORT_INCIDENT
from .scenario import *  # noqa: F403  (its __all__: the scenario, its parts and the presets)
from .scenario import Scenario  # (named: simulate checks its argument against it)

# the fixes, the live experiments, figures and the widget load on first use (tqdm, matplotlib, ipywidgets)
_LAZY = {
    **dict.fromkeys(("MITIGATIONS", "GROUPS", "Mitigation", "mitigate", "compare", "comparison_rows",
                     "comparison_markdown", "restart_scenario", "restart_run"), "mitigations"),
    **dict.fromkeys(("drain_from_bound", "queue_at", "cell_scenario", "phase_cell", "hysteresis_point",
                     "hysteresis"), "experiments"),
    **dict.fromkeys(("story", "story_panels", "onset", "small_multiples"), "figures_story"),
    **dict.fromkeys(("phase_figure", "plot_phase_load", "plot_hysteresis"), "figures_phase"),
    **dict.fromkeys(("plot_survey", "plot_backoff", "plot_restart_zoom"), "figures_survey"),
    **dict.fromkeys(("pipeline_diagram", "incident_figure", "batcher_rate_figure", "verdict_table"), "figures"),
    **dict.fromkeys(("WhatIf", "whatif_controls"), "widgets"),
}

__all__ = [
    *scenario.__all__,
    "Run",
    "simulate",
    "closed_forms",
    "effective_timeout_queue",
    "drain_time_s",
    "recovery",
    "summarise",
    "SHORT_INCIDENT",
    "ACT_MS",
    "ACT_FOR_MS",
    "FULL_QUEUE_600",
    *(name for name in closed_form.__all__ if name != "drain_time_s"),
    *_LAZY,
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())


def simulate(scenario: Scenario, engine: str = "fast", seed: int = 0) -> Run:
    """Run ``scenario`` with ``engine`` (``"fast"`` or ``"simpy"``) and ``seed``.

    Same scenario and seed give the same windows in both engines. The run ends at the horizon or
    at the event cap (``run.truncated``), whichever comes first.
    """
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a metastable Scenario, got {type(scenario).__name__}")
    check_choice("engine", engine, ("fast", "simpy"))
    seed = check_seed(seed)
    if engine == "fast":
        from .engine_fast import run_fast

        return run_fast(scenario, seed)
    from .engine_simpy import run_simpy

    return run_simpy(scenario, seed)
