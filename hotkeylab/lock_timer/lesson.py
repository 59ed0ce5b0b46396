"""05 · Helpers the notebook uses: load sweeps, the log reader, comparison tables, explore()."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from functools import lru_cache

import numpy as np

from ..validate import check_choice, check_int, check_number
from .closed_form import (
    lock_utilisation,
    lock_wait_pk_ms,
    saturated_hold_ms,
)
from .figures import (
    plot_run,
)
from .model import simulate
from .scenario import (
    DESIGNS,
    MAX_OFFERED_PER_S,
    SEED_INCIDENT,
    Scenario,
)


def sweep_offered(base: Scenario, loads_per_s, designs=DESIGNS, seed: int = 0, **kw) -> dict:
    """Run every design at every offered load (same seed); returns
    ``{design: {metric: array over loads}}`` with the metrics of :class:`.results.RunSummary`."""
    loads = [check_number("loads_per_s", x, low=0.0, high=MAX_OFFERED_PER_S) for x in loads_per_s]
    if not loads:
        raise ValueError("loads_per_s must list at least one offered load, got []")
    out = {}
    for d in designs:
        check_choice("designs", d, DESIGNS)
        rows = [
            simulate(replace(base, design=d, offered_per_s=x), seed, **kw).summary for x in loads
        ]
        out[d] = {k: np.asarray([r[k] for r in rows]) for k in rows[0] if k != "design"}
        out[d]["offered_per_s"] = np.asarray(loads)
    return out


_LOG_LINE = re.compile(r"^(\d\d):(\d\d):(\d\d\.\d+) req=(\d+) (\S+) ([a-z]+):")


def log_gaps(lines) -> dict:
    """Read an access-layer log (text lines as :meth:`Run.log_lines` writes them) the way the
    seed's team did: for each request, the time between each pair of its adjacent lines.

    Returns ``{"pairs": {"access → ratelimit": gaps_ms, ...}, "longest": (line_a, line_b,
    gap_ms), "unfinished": n}``: ``gaps_ms`` a numpy array per pair of adjacent components,
    ``longest`` the two adjacent lines of one request furthest apart, ``unfinished`` the
    requests whose last line is ``access: recv`` (still inside the gate when the log ends).
    """
    last = {}  # request -> (time ms, component, line)
    pairs: dict[str, list] = {}
    longest = ("", "", -1.0)
    for line in lines:
        m = _LOG_LINE.match(line)
        if not m:
            raise ValueError(f"lines must be access-layer log lines, got {line[:60]!r}")
        h, mi, sec, req, _, comp = m.groups()
        t = (int(h) * 3600 + int(mi) * 60 + float(sec)) * 1000.0
        prev = last.get(req)
        if prev is not None:
            gap = t - prev[0]
            pairs.setdefault(f"{prev[1]} → {comp}", []).append(gap)
            if gap > longest[2]:
                longest = (prev[2], line, gap)
        last[req] = (t, comp, line)
    unfinished = sum(1 for v in last.values() if v[1] == "access")
    return {
        "pairs": {k: np.asarray(v) for k, v in pairs.items()},
        "longest": longest,
        "unfinished": unfinished,
    }


def pk_comparison(
    key2_rates_per_s,
    seed: int = 0,
    *,
    time_duration_ms: float = 10.0,
    count: int = 1,
    horizon_ms: float = 120_000.0,
    warmup_ms: float = 5_000.0,
) -> dict:
    """The mutex as an M/D/1 server: key2 traffic only, a limiter with ``Qps = 0`` (every holder's
    timer fires, so each hold is ``lookup + count × TimeDuration``). Returns arrays ``key2_per_s``,
    ``rho``, ``sim_wait_ms`` (mean wait for the mutex of requests arriving after ``warmup_ms``)
    and ``pk_wait_ms`` (Pollaczek–Khinchine, infinite at ρ >= 1)."""
    rates = [
        check_number("key2_rates_per_s", x, low=0.0, low_open=True, high=MAX_OFFERED_PER_S)
        for x in key2_rates_per_s
    ]
    base = replace(
        SEED_INCIDENT,
        rate_per_s=0.0,
        start_full=False,
        key2_share=1.0,
        count=count,
        time_duration_ms=time_duration_ms,
        horizon_ms=horizon_ms,
        window_ms=min(horizon_ms, 1000.0),
    )
    hold = base.lookup_ms + base.timeout_ms
    sim_w, pk_w, rho = [], [], []
    for lam in rates:
        run = simulate(replace(base, offered_per_s=lam), seed)
        waits = run.lock_waits_ms(from_ms=warmup_ms)
        sim_w.append(float(waits.mean()) if len(waits) else math.nan)
        pk_w.append(lock_wait_pk_ms(lam, hold))
        rho.append(lock_utilisation(lam, hold))
    return {
        "key2_per_s": np.asarray(rates),
        "rho": np.asarray(rho),
        "sim_wait_ms": np.asarray(sim_w),
        "pk_wait_ms": np.asarray(pk_w),
        "hold_ms": hold,
    }


def per_machine_rho(
    key2_per_s: float,
    rate_per_s: float,
    machines: int,
    count: int,
    time_duration_ms: float,
    quota: str = "machine",
) -> float:
    """Utilisation of each machine's mutex (seed's design, bucket empty) when the key2 load is
    spread evenly over ``machines`` machines.

    ``quota="machine"``: every machine's limiter has Qps ``r`` - adding machines adds mutex
    capacity, and the convoy ends once ``ρ < 1``. ``quota="cluster"``: ``r`` is one quota split
    evenly (``r / machines`` each) - each machine's ρ stays the same (until the per-machine
    tick interval exceeds ``TimeDuration``): adding machines only spreads the convoy.
    """
    k = check_int("machines", machines, low=1)
    check_choice("quota", quota, ("machine", "cluster"))
    lam = check_number("key2_per_s", key2_per_s, low=0.0)
    r = check_number("rate_per_s", rate_per_s, low=0.0)
    r_k = r if quota == "machine" else r / k
    return lock_utilisation(lam / k, saturated_hold_ms(r_k, count, time_duration_ms))


@lru_cache(maxsize=16)
def _explore_run(sc: Scenario, seed: int):
    """The widget's run (cached: a slider moved back, or a redraw, does not simulate again; the
    same scenario and seed give the same run)."""
    return simulate(sc, seed, max_blocked=50_000)


def explore(
    offered_per_s: float = SEED_INCIDENT.offered_per_s,
    key2_share: float = SEED_INCIDENT.key2_share,
    count: int = SEED_INCIDENT.count,
    time_duration_ms: float = SEED_INCIDENT.time_duration_ms,
    rate_per_s: float = SEED_INCIDENT.rate_per_s,
    design: str = "seed",
    seed: int = 0,
    horizon_ms: float = 5000.0,
    plot: bool = True,
) -> dict:
    """The what-if widget's function: simulate one scenario, print its key numbers and draw
    :func:`plot_run` (if ``plot``), and return its summary (a dict) with the closed-form mutex
    utilisation ``rho_saturated`` (bucket empty, seed's design) beside it."""
    sc = replace(SEED_INCIDENT, offered_per_s=offered_per_s, key2_share=key2_share, count=count,
                 time_duration_ms=time_duration_ms, rate_per_s=rate_per_s, design=design, horizon_ms=horizon_ms)
    run = _explore_run(sc, seed)
    out = run.summary.as_dict()
    hold = saturated_hold_ms(sc.rate_per_s, sc.count, sc.time_duration_ms, sc.lookup_ms)
    out["rho_saturated"] = lock_utilisation(sc.key2_per_s, hold)
    if plot:
        from ..plotting import live_figure

        print(
            f"forwarded in time {out['admitted_per_s']:.1f}/s "
            f"({100 * out['business_share']:.0f}% of offered), passed after the client left "
            f"{out['client_gone_per_s']:.1f}/s, timer fired {out['timed_out_per_s']:.1f}/s, "
            f"refused at once {out['rejected_per_s']:.1f}/s, p99 {out['p99_ms']:.1f} ms, "
            f"blocked at the end {out['blocked_end']}, mutex rho with the bucket empty "
            f"{out['rho_saturated']:.2f}" + (" (run truncated)" if out["truncated"] else "")
        )
        # one figure kept between slider moves, its panels cleared and drawn again
        live = live_figure("05.explore", 3, 1, figsize=(8.0, 6.6), sharex=True, layout=None)
        live.replot(plot_run, run)
        live.show()
    return out
