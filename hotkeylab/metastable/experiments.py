"""The live experiments of notebooks 04 and 04a, each a module-level function (a process pool can
pickle it): the drain from the seed's queue bound, the queue at a moment, one phase-diagram cell,
and the hysteresis ramp. They call :func:`~hotkeylab.metastable.simulate` on the fast engine and
return numbers or arrays; :mod:`.figures_phase` draws them."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np

from ..sweep import run as sweep_run
from ..validate import check_choice, check_number
from . import simulate
from .mitigations import MITIGATIONS, mitigate
from .presets import FULL_QUEUE_600
from .readings import mean_between
from .scenario import SEED_INCIDENT, Scenario, Window

__all__ = ["drain_from_bound", "queue_at", "PHASE_TRIGGER_START_MS", "PHASE_AFTER_MS", "cell_scenario",
           "phase_cell", "HYST_HIGH_PER_S", "HYST_OVERLOAD_MS", "HYST_SETTLE_MS", "HYST_MEASURE_MS",
           "hysteresis_point", "hysteresis"]


# --------------------------------------------------------------------------- draining the bound
def drain_from_bound(seeds: Iterable[int] = range(20), sc: Scenario = FULL_QUEUE_600) -> dict:
    """Run ``sc`` (default :data:`~.presets.FULL_QUEUE_600`) for each seed on the fast engine and
    read, from the end of its trigger: the queue then, whether the queue empties before the horizon
    and when (the first 1-s window whose mean queue is below half a batch), and the attempts
    rejected at the bound afterwards. Returns numpy arrays keyed ``queue_at_end``, ``drained``,
    ``drain_s`` (nan where it never empties), ``rejected_after``, ``last_rejected_s`` (the end of
    the last window after the trigger with a rejection, 0 if none), ``seeds``, and
    ``horizon_after_s`` (the seconds from the trigger's end to the horizon: the longest drain the
    run could see)."""
    seeds = list(seeds)
    if not seeds:
        raise ValueError("seeds must list at least one seed, got []")
    end_s = sc.trigger_window[1] / 1e3 if sc.trigger_window else 0.0
    out = {"queue_at_end": [], "drained": [], "drain_s": [], "rejected_after": [], "last_rejected_s": []}
    for s_ in seeds:
        run = simulate(sc, engine="fast", seed=s_)
        w = run.windows
        k = int(round(end_s * 1000.0 / sc.window_ms))
        q = np.asarray(w["queue"], float)
        out["queue_at_end"].append(float(q[k - 1]) if k > 0 else float(q[0]))
        below = np.nonzero(q[k:] < 0.5)[0]
        out["drained"].append(bool(len(below)))
        out["drain_s"].append(float(below[0] * sc.window_ms / 1e3) if len(below) else math.nan)
        out["rejected_after"].append(float(np.sum(w["rejected"][k:])))
        rej = np.nonzero(np.asarray(w["rejected"][k:]) > 0)[0]
        out["last_rejected_s"].append(float((rej[-1] + 1) * sc.window_ms / 1e3) if len(rej) else 0.0)
    res = {key: np.asarray(v) for key, v in out.items()}
    res["seeds"] = np.asarray(seeds)
    res["horizon_after_s"] = sc.horizon_ms / 1e3 - end_s
    return res


def queue_at(sc: Scenario, t_s: float, seeds: Iterable[int] = range(3)) -> np.ndarray:
    """The mean queue (batches) in the 1-s window ending at ``t_s`` for each seed, each run
    simulated only up to ``t_s``: what follows cannot change what came before (a run is a prefix of
    any longer one), so this equals the same window of the full run, at a fraction of the cost."""
    t = check_number("t_s", t_s, low=sc.window_ms / 1e3, high=sc.horizon_ms / 1e3)
    k = int(round(t * 1000.0 / sc.window_ms))
    short = replace(sc, horizon_ms=k * sc.window_ms)
    return np.asarray([float(simulate(short, seed=s_).windows["queue"][k - 1]) for s_ in seeds])


# --------------------------------------------------------------------------- phase-diagram cells
PHASE_TRIGGER_START_MS = 10_000.0
PHASE_AFTER_MS = 40_000.0


def cell_scenario(cross_batch_ms: float = 27.0, duration_s: float = 30.0, user_rate_per_s: float = 600.0,
                  mitigation: str = "none", slow_factor: float | None = None) -> Scenario:
    """One phase-diagram cell: the peak (+20%) from 5 s, a trigger from 10 s lasting ``duration_s``
    (a second owner with ``cross_batch_ms`` batches, or a database ``slow_factor`` times slower),
    then 40 s to show whether it recovers. ``mitigation`` is a protection from
    :data:`~.mitigations.MITIGATIONS` (interventions need an operator and are not swept)."""
    check_number("duration_s", duration_s, low=0.0, high=3600.0)
    check_choice("mitigation", mitigation, tuple(MITIGATIONS))
    start = PHASE_TRIGGER_START_MS
    end = start + 1000.0 * duration_s
    sc = replace(
        SEED_INCIDENT,
        user_rate_per_s=check_number("user_rate_per_s", user_rate_per_s, low=0.0, high=1e5),
        peak=Window(5_000.0, math.inf, 1.2),
        second_owner=None if slow_factor is not None else Window(start, max(end, start)),
        cross_batch_ms=check_number("cross_batch_ms", cross_batch_ms, low=0.0, low_open=True),
        slow_db=None if slow_factor is None else Window(start, end, check_number("slow_factor", slow_factor,
                                                                                  low=0.0, low_open=True)),
        horizon_ms=end + PHASE_AFTER_MS,
    )
    if MITIGATIONS[mitigation].kind == "intervention":
        raise ValueError(f"mitigation must be a protection (always on) for a sweep, got {mitigation!r}")
    return mitigate(mitigation, sc)


def phase_cell(cross_batch_ms: float = 27.0, duration_s: float = 30.0, user_rate_per_s: float = 600.0,
               mitigation: str = "none", seed: int = 0) -> float:
    """1.0 if the cell (:func:`cell_scenario`) recovers on the fast engine, else 0.0. Module-level
    so a process pool can pickle it for :func:`hotkeylab.sweep.grid`."""
    run = simulate(cell_scenario(cross_batch_ms, duration_s, user_rate_per_s, mitigation), engine="fast", seed=seed)
    return 1.0 if run.recovered else 0.0


# --------------------------------------------------------------------------- hysteresis
HYST_HIGH_PER_S = 1_500.0
HYST_OVERLOAD_MS = 3_000.0
HYST_SETTLE_MS = 37_000.0
HYST_MEASURE_MS = 20_000.0


def hysteresis_point(user_rate_per_s: float, direction: str = "up", seed: int = 0) -> float:
    """Goodput (user requests/s answered in time) at a constant load, measured over the last 20 s.

    ``direction="up"``: the load arrives from below: the system starts empty and healthy, as after
    a slow ramp up. ``"down"``: it arrives from above: 20 s at :data:`HYST_HIGH_PER_S` requests/s
    (past the thread's capacity: a queue and a storm build), then the load steps down to
    ``user_rate_per_s`` for 60 s. No trigger, the seed's retries, one owner.
    """
    lam = check_number("user_rate_per_s", user_rate_per_s, low=1.0, high=1e5)
    check_choice("direction", direction, ("up", "down"))
    horizon = HYST_OVERLOAD_MS + HYST_SETTLE_MS + HYST_MEASURE_MS
    peak = Window(0.0, HYST_OVERLOAD_MS, HYST_HIGH_PER_S / lam) if direction == "down" else None
    sc = replace(SEED_INCIDENT, user_rate_per_s=lam, peak=peak, second_owner=None, horizon_ms=horizon,
                 warmup_ms=0.0)
    run = simulate(sc, engine="fast", seed=seed)
    return mean_between(run, "goodput", (horizon - HYST_MEASURE_MS) / 1e3, horizon / 1e3)


def hysteresis(loads: Sequence[float], seed: int = 0, executor="serial") -> dict:
    """Goodput at each load arriving from below (``up``) and from above (``down``)."""
    params = [{"user_rate_per_s": float(x), "direction": d, "seed": seed} for d in ("up", "down") for x in loads]
    vals = sweep_run(hysteresis_point, params, executor=executor, progress=False)
    n = len(loads)
    return {"offered": np.asarray(loads, float), "up": np.asarray(vals[:n]), "down": np.asarray(vals[n:])}
