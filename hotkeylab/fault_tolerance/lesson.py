"""09 · Notebook helpers: the what-if widgets' functions (they draw with :mod:`.figures`)."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from .closed_form import pool_success
from .ejection import SEED_EJECTION, simulate_ejection
from .figures import plot_capacity_curve, plot_ejection
from .holding import pool_capacity_per_s
from .pool import SEED_POOL, measure_capacity


# the widgets' runs, cached: a slider moved back, or a redraw, does not simulate again (the same
# scenario and seed give the same run)
@lru_cache(maxsize=16)
def _ejection_run(sc, seed: int):
    return simulate_ejection(sc, seed)


@lru_cache(maxsize=16)
def _pool_capacity(sc, seed: int, target_completions: int) -> dict:
    return measure_capacity(sc, seed, target_completions=target_completions)


def explore_ejection(
    rate_per_s: float = SEED_EJECTION.rate_per_s,
    threshold: float = SEED_EJECTION.threshold,
    panic_threshold: float = 0.0,
    check_interval_ms: float = SEED_EJECTION.check_interval_ms,
    ejection: bool = True,
    seed: int = 0,
    horizon_ms: float = 30_000.0,
    plot: bool = True,
) -> dict:
    """The ejection widget's function: machine A dies from 10 s to 25 s under the chosen load.
    Runs the chosen router (and, for the figure, the same load without ejection), draws
    :func:`plot_ejection`, and returns the chosen run's summary with the closed forms beside it."""
    knobs = dict(rate_per_s=rate_per_s, threshold=threshold, panic_threshold=panic_threshold,
                 check_interval_ms=check_interval_ms, ejection=ejection, horizon_ms=horizon_ms)
    # machine A's fault ends with the run if the run is shorter than the fault
    sc = replace(SEED_EJECTION, **knobs, bad_end_ms=min(SEED_EJECTION.bad_end_ms, horizon_ms))
    run = _ejection_run(sc, seed)
    out = dict(run.summary)
    out["closed_no_ejection"] = pool_success(sc.rate_per_s, sc.servers, sc.workers, sc.service_ms, dead=1)
    out["closed_ejected"] = pool_success(sc.rate_per_s, sc.servers - 1, sc.workers, sc.service_ms)
    if plot:
        from ..plotting import live_figure

        label = "with ejection" if ejection else "without ejection"
        if panic_threshold > 0 and ejection:
            label += f", panic below {panic_threshold:.0%}"
        runs = {label: run}
        if ejection:
            runs = {"without ejection": _ejection_run(replace(sc, ejection=False), seed), **runs}
        # one figure per shape (a strip below for the run with ejection), kept between slider moves
        n, strip_h = int(ejection), max(1.0, 0.25 * sc.servers)
        live = live_figure(("09.ejection", n, strip_h), 1 + n, 1, figsize=(8.0, 2.8 + strip_h * n), layout=None,
                           gridspec_kw=dict(height_ratios=[2.6] + [strip_h] * n, hspace=0.5))
        live.fig.subplots_adjust(right=0.78)
        live.replot(plot_ejection, runs, None, tight=False)
        live.show()
    return out


def explore_pool(
    workers: int = SEED_POOL.workers,
    timeout_ms: float = SEED_POOL.timeout_ms,
    hang_share: float = 0.05,
    service_ms: float = SEED_POOL.service_ms,
    seed: int = 0,
    target_completions: int = 3000,
    plot: bool = True,
) -> dict:
    """The worker-pool widget's function: the closed-form capacity curve for these numbers,
    with a SimPy measurement at the chosen hang share; returns both numbers."""
    sc = replace(SEED_POOL, workers=workers, timeout_ms=timeout_ms, service_ms=service_ms,
                 hang_share=hang_share)
    m = _pool_capacity(sc, seed, target_completions)
    out = {
        "capacity_closed_per_s": m["closed_form_per_s"],
        "capacity_sim_per_s": m["capacity_per_s"],
        "holding_ms": m["holding_ms"],
        "healthy_per_s": pool_capacity_per_s(workers, service_ms, timeout_ms, 0.0),
        "all_hang_per_s": pool_capacity_per_s(workers, service_ms, timeout_ms, 1.0),
    }
    if plot:
        from ..plotting import live_figure

        live = live_figure("09.pool", figsize=(8.0, 3.4), layout=None)  # kept between slider moves
        live.replot(lambda ax: plot_capacity_curve(workers, service_ms, (timeout_ms,), ax=ax,
                                                   points={timeout_ms: [(hang_share, m["capacity_per_s"])]}))
        live.show()
    return out
