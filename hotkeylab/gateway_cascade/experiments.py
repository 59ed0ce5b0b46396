"""07 · Experiments over many runs: where the seed's alarm order holds (:func:`alarm_order_map`)
and the fixes compared (:func:`compare_fixes`)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..sim import check_seed
from ..validate import check_number
from .model import simulate
from .scenario import (
    FIX_LABELS,
    FIX_NAMES,
    MIN_MS,
    SEED_ALARM_ORDER,
    SEED_FIX_NAMES,
    SEED_INCIDENT,
    Scenario,
    with_fixes,
)


@dataclass(frozen=True)
class OrderMap:
    """Where the seed's alarm order comes out: ``counts[i, j]`` of ``n_seeds`` runs with
    ``heap_mb[i]`` and ``dba_reaction_ms[j]`` fire the seed's alarms in the seed's order (all of
    them: an alarm that never fires breaks the order). ``first_wrong[i, j]``: for seed 0, what
    broke it (the first alarm out of place or missing, ``""`` when the order holds)."""

    heap_mb: tuple
    dba_reaction_ms: tuple
    n_seeds: int
    counts: np.ndarray
    first_wrong: np.ndarray


def _first_wrong(order: list) -> str:
    for got, want in zip(order + [None] * len(SEED_ALARM_ORDER), SEED_ALARM_ORDER, strict=False):
        if got != want:
            return want
    return ""


def alarm_order_map(
    scenario: Scenario = SEED_INCIDENT, heap_mb=(3_072.0, 4_096.0, 5_120.0, 6_144.0),
    dba_reaction_ms=(2 * MIN_MS, 5 * MIN_MS, 10 * MIN_MS, 20 * MIN_MS), seeds=range(20),
) -> OrderMap:
    """Run ``scenario`` over a grid of JVM heap sizes × the DBA's reaction time, each cell over
    ``seeds``, and count the runs whose alarms come in the seed's order (:data:`SEED_ALARM_ORDER`)
    within ``scenario``'s horizon. Each run stops once its order is decided (same order as the full
    run, see :func:`simulate`)."""
    heaps = tuple(check_number("heap_mb", h, low=scenario.live_mb, low_open=True, high=1e7) for h in heap_mb)
    dbas = tuple(check_number("dba_reaction_ms", d, low=0.0, high=1e9) for d in dba_reaction_ms)
    seeds = [check_seed(s_) for s_ in seeds]
    if not seeds or not heaps or not dbas:
        raise ValueError("heap_mb, dba_reaction_ms and seeds must each hold at least one value")
    counts = np.zeros((len(heaps), len(dbas)), dtype=int)
    wrong = np.full((len(heaps), len(dbas)), "", dtype=object)
    for i, hm in enumerate(heaps):
        for j, d in enumerate(dbas):
            sc = replace(scenario, heap_mb=hm, dba_reaction_ms=d)
            for k, sd in enumerate(seeds):
                order = simulate(sc, sd, stop_when_order_decided=True).alarm_order()
                counts[i, j] += order == list(SEED_ALARM_ORDER)
                if k == 0:
                    wrong[i, j] = _first_wrong(order)
    return OrderMap(heaps, dbas, len(seeds), counts, wrong)



@dataclass
class FixComparison:
    """One row per variant: ``names`` (fixes on), ``label``, ``peaks`` (peak utilisation per
    component and peak calls/min), ``served_share``, ``host_crashes``, ``failovers``, ``runs``."""

    variants: list
    runs: dict

    def rows(self) -> list[dict]:
        out = []
        for label, names, *_ in self.variants:
            run = self.runs[label]
            s = run.summary.as_dict()
            out.append({"label": label, "names": names, "peaks": run.peaks(), **s})
        return out


def default_variants() -> list[tuple[str, tuple]]:
    v = [("the incident", ())]
    v += [(FIX_LABELS[n], (n,)) for n in FIX_NAMES]
    v += [("seed's fixes together", SEED_FIX_NAMES), ("all together", FIX_NAMES)]
    return v


def compare_fixes(scenario: Scenario = SEED_INCIDENT, variants=None, seed: int = 0) -> FixComparison:
    """Run ``scenario`` with each variant's fixes (default: none, each fix alone, the seed's fixes
    together, all together). A variant is ``(label, fix names)`` or ``(label, fix names,
    {scenario field: value})``."""
    variants = default_variants() if variants is None else list(variants)
    runs = {}
    for label, names, *more in variants:
        sc = replace(scenario, **more[0]) if more else scenario
        runs[label] = simulate(with_fixes(sc, names), seed)
    return FixComparison(variants=variants, runs=runs)

