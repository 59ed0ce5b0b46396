"""07 · Notebook helpers: the what-if widget's function (:func:`explore`)."""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from ..sim import check_seed
from ..validate import check_choice, check_number, check_probability
from .closed_form import calls_per_min
from .figures import plot_compact
from .model import simulate
from .results import Run
from .scenario import FIX_NAMES, SEED_INCIDENT, with_fixes


@lru_cache(maxsize=16)
def _explore_run(installs_max: float, poll_ms: float, hit: float, fixes: tuple, seed: int) -> Run:
    sc = replace(SEED_INCIDENT, installs_max=installs_max, poll_interval_ms=poll_ms, local_cache_hit_ratio=hit)
    return simulate(with_fixes(sc, fixes), seed)


def explore(
    installs_k: float = round(SEED_INCIDENT.installs_max / 1000.0),
    poll_s: float = SEED_INCIDENT.poll_interval_ms / 1000.0,
    hit_ratio: float = 0.0,
    fixes: tuple = (),
    seed: int = 0,
    plot: bool = True,
) -> dict:
    """The what-if widget's function: installs the release grows to (thousands), its polling
    interval (s), the local cache hit ratio, and the fixes switched on; runs the seed's scenario
    and draws :func:`plot_compact`. Returns the summary (peaks, alarms in minutes, the seed's
    alarms in firing order, shares of calls answered / refused / failed during the flood)."""
    inst = check_number("installs_k", installs_k, low=0.0, high=10_000.0)
    poll = check_number("poll_s", poll_s, low=0.1, high=3600.0)
    h = check_probability("hit_ratio", hit_ratio)
    names = tuple(sorted(n for n in fixes if n != "local_cache"))
    for n in names:
        check_choice("fixes", n, FIX_NAMES)
    run = _explore_run(inst * 1000.0, poll * 1000.0, h, names, check_seed(seed))
    sc = run.scenario
    out = run.summary.as_dict()
    out["alarm_order"] = run.alarm_order()
    out["peak_calls_per_min_closed_form"] = calls_per_min(
        sc.installs_max, sc.poll_interval_ms, baseline_per_min=sc.baseline_per_s * 60.0,
        calls_per_poll=sc.calls_per_poll,
    )  # fmt: skip
    if plot:
        from ..plotting import live_figure

        # one figure kept between slider moves, its panels cleared and drawn again (plot_compact
        # lays it out itself)
        live = live_figure("07.explore", 3, 1, figsize=(8.0, 6.6), sharex=True, layout=None)
        live.replot(plot_compact, run, tight=False)
        live.show()
    return out
