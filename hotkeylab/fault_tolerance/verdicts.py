"""09 · Verdicts counted over random seeds. A verdict in the notebook ("ejection overloads the
survivors", "both services fall") is a count over seeds 0 … n − 1, never one run's outcome. Each
helper runs the scenarios of one section with the same seed, applies the section's verdicts (plain
functions of the runs, named in the ``*_VERDICTS`` dicts) and returns how many runs each holds in.
"""

from __future__ import annotations

from dataclasses import replace
from operator import ge, gt, lt

from ..sim import is_no_data
from ..validate import check_int, check_number
from .closed_form import ejection_delay_ms
from .common import check_scenario
from .ejection import (
    SEED_DATACENTRES,
    SEED_EJECTION,
    SEED_EJECTION_OVERLOAD,
    EjectionScenario,
    simulate_ejection,
)
from .failover import SEED_FAILOVER, SEED_FAILOVER_SURGE, FailoverScenario, simulate_failover
from .isolation import SEED_ISOLATION, IsolationScenario, simulate_isolation

COUNT_SEEDS = 20


def count_runs(simulate, scenarios: dict, verdicts: dict, seeds: int = COUNT_SEEDS) -> dict:
    """Run every scenario in ``scenarios`` (name -> scenario) with ``simulate(sc, seed=k)`` for
    k = 0 … seeds − 1 and count, for each ``verdicts`` entry (name -> function of the dict of
    runs of one seed, returning a bool), the seeds in which it holds. Returns name -> count, and
    ``"runs"``: the number of seeds."""
    n = check_int("seeds", seeds, low=1, high=10_000)
    if not callable(simulate):
        raise ValueError(f"simulate must be a simulate_* function, got {simulate!r}")
    if not isinstance(scenarios, dict) or not scenarios:
        raise ValueError(f"scenarios must be a non-empty dict of name -> scenario, got {scenarios!r}")
    if not isinstance(verdicts, dict) or not verdicts:
        raise ValueError(f"verdicts must be a non-empty dict of name -> function, got {verdicts!r}")
    counts = dict.fromkeys(verdicts, 0)
    for k in range(n):
        runs = {name: simulate(sc, seed=k) for name, sc in scenarios.items()}
        for name, holds in verdicts.items():
            counts[name] += bool(holds(runs))
    counts["runs"] = n
    return counts


def near(count: int, runs: int) -> bool:
    """A count is *near* when more than a tenth of the runs went the other way (for 20 runs:
    3 … 17): the result sits close to its threshold and a plain yes/no would overstate it."""
    c = check_int("count", count, low=0)
    n = check_int("runs", runs, low=1)
    if c > n:
        raise ValueError(f"count must be at most runs={n}, got {c}")
    return 0.1 * n < c < 0.9 * n


def count_text(count: int, runs: int) -> str:
    """``"20/20 runs"``, or ``"11/20 runs (near)"`` when :func:`near`."""
    return f"{count}/{runs} runs{' (near)' if near(count, runs) else ''}"


def _holds(op, a, b) -> bool:
    """``op(a, b)``; False when either side is no data (None): a verdict needs its numbers."""
    return not (is_no_data(a) or is_no_data(b)) and bool(op(a, b))


def _recovered_half(lost: float, got: float, base: float) -> bool:
    """A fix recovers more than half of what ejection lost: ``got − lost > (base − lost) / 2``
    (False when any of them is no data)."""
    return not any(is_no_data(x) for x in (lost, got, base)) and got - lost > (base - lost) / 2


EJECTION_COUNT_HORIZON_MS = 18_000.0  # §3's overload counts: 7 s after the blip (the notebook says so)


EJECTION_VERDICTS = {
    # the light load: A ejected at the closed-form delay, no other machine ejected, A back
    # within one probe interval of its recovery, and the pool better off than without ejection
    "ejected on time": lambda r: r["ejection"].summary.first_ejection_delay_ms is not None  # none: not on time
    and abs(r["ejection"].summary.first_ejection_delay_ms - ejection_delay_ms(
        r["ejection"].scenario.bad_start_ms, r["ejection"].scenario.check_interval_ms,
        r["ejection"].scenario.threshold)) < 1.0,
    "only A ejected": lambda r: r["ejection"].summary["ejections"] == 1,
    "A back within a probe": lambda r: all(
        b * 1000 - r["ejection"].scenario.bad_end_ms <= r["ejection"].scenario.probe_interval_ms + 1.0
        for _, _, b in r["ejection"].log["ejections"]),
    "ejection helps": lambda r: _holds(gt, r["ejection"].summary["success_bad"], r["no ejection"].summary["success_bad"]),
}


OVERLOAD_VERDICTS = {
    # ejection overloads the survivors: more than A ejected, and the pool serves less after the
    # blip than the same load without ejection
    "ejection overloads": lambda r: r["ejection"].summary["ejections"] > 1
    and _holds(lt, r["ejection"].summary["success_after"], r["no ejection"].summary["success_after"]),
    "panic 50% enters panic": lambda r: r["panic 50%"].ledger.extra["panic_requests"] > 0,
    "panic 75% enters panic": lambda r: r["panic 75%"].ledger.extra["panic_requests"] > 0,
    # a panic threshold "holds" the group when it wins back more than half of what ejection lost
    "panic 50% holds": lambda r: _recovered_half(r["ejection"].summary["success_after"],
                                                 r["panic 50%"].summary["success_after"],
                                                 r["no ejection"].summary["success_after"]),
    "panic 75% holds": lambda r: _recovered_half(r["ejection"].summary["success_after"],
                                                 r["panic 75%"].summary["success_after"],
                                                 r["no ejection"].summary["success_after"]),
}


def ejection_counts(scenario: EjectionScenario = SEED_EJECTION, seeds: int = COUNT_SEEDS) -> dict:
    """§3 at light load (A dead): counts of :data:`EJECTION_VERDICTS` over ``seeds`` runs."""
    check_scenario("scenario", scenario, EjectionScenario)
    scs = {"no ejection": replace(scenario, ejection=False), "ejection": scenario}
    return count_runs(simulate_ejection, scs, EJECTION_VERDICTS, seeds)


def overload_counts(
    scenario: EjectionScenario = SEED_EJECTION_OVERLOAD, seeds: int = COUNT_SEEDS,
    horizon_ms: float = EJECTION_COUNT_HORIZON_MS, panic=(0.5, 0.75),
) -> dict:
    """§3 under overload (A's blip): counts of :data:`OVERLOAD_VERDICTS` over ``seeds`` runs of
    no ejection, ejection and ejection with panic thresholds 50% and 75%, each cut at
    ``horizon_ms`` (shorter than the figure's run, for speed)."""
    check_scenario("scenario", scenario, EjectionScenario)
    sc = replace(scenario, horizon_ms=horizon_ms)
    if len(tuple(panic)) != 2:
        raise ValueError(f"panic must be two panic thresholds, got {panic!r}")
    p50, p75 = panic
    scs = {"no ejection": replace(sc, ejection=False), "ejection": sc,
           "panic 50%": replace(sc, panic_threshold=p50), "panic 75%": replace(sc, panic_threshold=p75)}
    return count_runs(simulate_ejection, scs, OVERLOAD_VERDICTS, seeds)


DATACENTRE_VERDICTS = {
    "A and C answer 99%": lambda r: _holds(ge, r["ejection"].summary["success_bad_late"], 0.99),
    "only B ejected": lambda r: sorted(k for k, _, _ in r["ejection"].log["ejections"]) == [
        k for k in range(r["ejection"].scenario.servers) if r["ejection"].scenario.bad(k, r["ejection"].scenario.bad_start_ms)],
}


def datacentre_counts(scenario: EjectionScenario = SEED_DATACENTRES, seeds: int = COUNT_SEEDS) -> dict:
    """§7 datacentres: counts of :data:`DATACENTRE_VERDICTS` (ejection only) over ``seeds`` runs."""
    check_scenario("scenario", scenario, EjectionScenario)
    return count_runs(simulate_ejection, {"ejection": scenario}, DATACENTRE_VERDICTS, seeds)


FAILOVER_VERDICTS = {
    "crash: answered ≥ 99%": lambda r: _holds(ge, r["crash"].summary["success_down"], 0.99),
    # both fall: fewer than half answered once A's queue passed the timeout, both services busy
    "surge: both fall": lambda r: _holds(lt, r["surge"].summary["success_surge_settled"], 0.5)
    and _holds(gt, r["surge"].summary["util_a_surge"], 0.9) and _holds(gt, r["surge"].summary["util_b_surge"], 0.9),
}


def failover_counts(
    crash: FailoverScenario = SEED_FAILOVER, surge: FailoverScenario = SEED_FAILOVER_SURGE,
    seeds: int = COUNT_SEEDS, tail_ms: float = 2000.0,
) -> dict:
    """§2: counts of :data:`FAILOVER_VERDICTS` over ``seeds`` runs of the crash and the surge,
    each cut ``tail_ms`` after its fault window ends (a request is over within two timeouts)."""
    check_scenario("crash", crash, FailoverScenario)
    check_scenario("surge", surge, FailoverScenario)
    scs = {"crash": replace(crash, horizon_ms=min(crash.horizon_ms, crash.down_end_ms + tail_ms)),
           "surge": replace(surge, horizon_ms=min(surge.horizon_ms, surge.surge_end_ms + tail_ms))}
    return count_runs(simulate_failover, scs, FAILOVER_VERDICTS, seeds)


ISOLATION_VERDICTS = {
    "separated: deliveries ≥ 99%": lambda r: _holds(ge, r["separated"].summary["delivery_success_surge"], 0.99),
    "shared: deliveries < separated": lambda r: _holds(lt, r["shared pool"].summary["delivery_success_surge"],
                                                       r["separated"].summary["delivery_success_surge"]),
    "separated: queries < shared": lambda r: _holds(lt, r["separated"].summary["query_success_surge"],
                                                    r["shared pool"].summary["query_success_surge"]),
}


def isolation_counts(
    scenario: IsolationScenario = SEED_ISOLATION, seeds: int = COUNT_SEEDS, surge_ms: float = 4000.0
) -> dict:
    """§7 light/heavy: counts of :data:`ISOLATION_VERDICTS` over ``seeds`` runs of both designs.
    For speed each run's surge is cut to its first ``surge_ms`` (the summary leaves out the
    first 2 s, so 4 s leaves 2 s of surge measured) and the run ends one patience after it."""
    check_scenario("scenario", scenario, IsolationScenario)
    end = min(scenario.surge_end_ms, scenario.surge_start_ms + check_number("surge_ms", surge_ms, low=2500.0))
    sc = replace(scenario, surge_end_ms=end, horizon_ms=min(scenario.horizon_ms, end + scenario.patience_ms + 500.0))
    scs = {"shared pool": replace(sc, separated=False), "separated": replace(sc, separated=True)}
    return count_runs(simulate_isolation, scs, ISOLATION_VERDICTS, seeds)
