"""04 · Metastable retry storms (seed 000): the model, two engines, mitigations, analysis.

>>> from dataclasses import replace
>>> from hotkeylab.metastable import SEED_INCIDENT, RetryPolicy, simulate
>>> run = simulate(SEED_INCIDENT, engine="fast", seed=0)        # doctest: +SKIP
>>> run.recovered, run.ledger.check()                            # doctest: +SKIP
"""

from __future__ import annotations

from ..sim import check_seed
from ..validate import check_choice
from .analysis import closed_forms, drain_time_s, effective_timeout_queue, recovery, summarise
from .core import Run
from .scenario import (
    DEGRADED,
    NORMAL,
    SEED_INCIDENT,
    SEED_QUEUE_LIMIT,
    SEED_RETRY,
    AdaptiveThrottle,
    CoDel,
    GrpcThrottle,
    PercentBudget,
    RetryPolicy,
    Scenario,
    Window,
)

__all__ = [
    "Scenario",
    "Window",
    "RetryPolicy",
    "GrpcThrottle",
    "PercentBudget",
    "CoDel",
    "AdaptiveThrottle",
    "SEED_INCIDENT",
    "SEED_RETRY",
    "SEED_QUEUE_LIMIT",
    "NORMAL",
    "DEGRADED",
    "Run",
    "simulate",
    "closed_forms",
    "effective_timeout_queue",
    "drain_time_s",
    "recovery",
    "summarise",
]


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
