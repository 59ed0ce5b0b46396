"""Speed of the metastable model, measured in one run (a benchmark, not a test).

Prints, all measured in this one run (the load average is printed first: the machine is shared,
so read the ratios, which are measured under the same load, rather than the seconds):

1. per scenario class (04a's mitigations on the short incident, 200 s simulated): SimPy reference
   vs fast engine, their ratio (goal ≥ 30×), whether every window array and ledger count is
   identical, which fast path ran (``chunked`` numpy or the event ``loop``), and attempts/s of
   the fast engine beside the physical limit: a numpy Lindley recursion
   ``W_{n+1} = max(0, W_n + S_n − A_n)`` over the same number of customers, measured here;
2. the 04 what-if widget: update (simulate + redraw the persistent figure) vs a bare redraw, for
   each retry policy and queue bound the widget offers (goal ≤ 2×);
3. the other notebooks' widgets, imported read-only: the widget callback at its defaults (its
   figures drawn) vs a bare redraw of the same figures; those over 2× are listed;
4. a phase diagram of ≥ 400 cells: fast engine over a process pool vs the SimPy engine
   (SimPy is timed on a sample of cells and scaled to the grid, said so in the output).

Run: ``make bench`` or ``.venv/bin/python benchmarks/bench_metastable.py [--quick]``.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import platform
import time
from dataclasses import replace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from hotkeylab import sweep  # noqa: E402
from hotkeylab.metastable import SEED_INCIDENT, Window, simulate  # noqa: E402
from hotkeylab.metastable.engine_chunked import eligible  # noqa: E402
from hotkeylab.metastable.lesson import RETRY_CHOICES, SHORT_INCIDENT, WhatIf, mitigate  # noqa: E402

# The phase-diagram cell: a compressed seed timeline (peak from 5 s, trigger from 10 s, 90 s in all).
CELL = replace(SEED_INCIDENT, horizon_ms=90_000.0, peak=Window(5_000.0, math.inf, 1.2))

#: The scenario classes of issue 21: the short incident (peak at 5 s, second owner 15–45 s, the
#: seed's QueueMaxSize 250) run for 200 s with one mitigation each.
BASE = replace(SHORT_INCIDENT, horizon_ms=200_000.0)
CLASSES = {
    "plain FIFO (no bound)": replace(BASE, queue_limit=None),
    "seed: QueueMaxSize 250": mitigate("none", BASE),
    "queue limit 6": replace(BASE, queue_limit=6),
    "CoDel": mitigate("codel", BASE),
    "adaptive LIFO": mitigate("adaptive_lifo", BASE),
    "deadline drop": mitigate("deadline_drop", BASE),
    "retry budget (percent)": mitigate("percent", BASE),
    "gRPC retry throttling": mitigate("grpc", BASE),
    "restart": mitigate("restart", BASE),
    "client adaptive throttle": mitigate("adaptive_throttle", BASE),
}

#: The other notebooks' widget callbacks at their defaults: (notebook, module, callable, kwargs).
OTHER_WIDGETS = [
    ("01b", "hotkeylab.db_lab", "what_if_orders", {}),
    ("02", "hotkeylab.rtt", "rtt_whatif", {}),
    ("03", "hotkeylab.routing", "explore", {}),
    ("03", "hotkeylab.routing", "explore_transient", {}),
    ("05", "hotkeylab.lock_timer", "explore", {}),
    ("06", "hotkeylab.pending_records", "explore", {}),
    ("07", "hotkeylab.gateway_cascade", "explore", {"plot": True}),
    ("08", "hotkeylab.lost_timeouts", "explore", {}),
    ("09", "hotkeylab.fault_tolerance", "explore_ejection", {"plot": True}),
    ("09", "hotkeylab.fault_tolerance", "explore_pool", {"plot": True}),
    ("10", "hotkeylab.capstone", "Dashboard.update", {"show": False}),
]


def cell(cross_batch_ms: float, duration_s: float, engine: str = "fast", seed: int = 0) -> bool:
    sc = replace(CELL, cross_batch_ms=cross_batch_ms, second_owner=Window(10_000.0, 10_000.0 + 1000.0 * duration_s))
    return simulate(sc, engine=engine, seed=seed).recovered


def best_of(fn, repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def identical(a, b) -> bool:
    """Every window array and every ledger count equal, bit for bit."""
    return (a.windows.keys() == b.windows.keys()
            and all(np.array_equal(a.windows[k], b.windows[k]) for k in a.windows)
            and a.ledger.as_dict() == b.ledger.as_dict()
            and a.attempt_ledger.as_dict() == b.attempt_ledger.as_dict()
            and a.server == b.server)


def lindley_rate(n: int, repeat: int) -> float:
    """Customers/s of the numpy Lindley recursion, the physical limit of a FIFO queue simulator:
    ``W = max(0, W + S − A)`` as a running maximum (W_n = X_n − min_{k<=n} X_k, X the cumsum of
    S − A), over ``n`` customers."""
    rng = np.random.default_rng(0)
    a = rng.exponential(1.0, n)
    s = rng.exponential(0.9, n)

    def lindley():
        x = np.concatenate([[0.0], np.cumsum(s - a)])
        return x - np.minimum.accumulate(x)

    return n / best_of(lindley, repeat)


def figures_of(result) -> list:
    from hotkeylab.plotting import LiveFigure

    figs = [plt.figure(k) for k in plt.get_fignums()]
    if LiveFigure.latest is not None:  # a widget's figure kept between slider moves, outside pyplot
        figs.append(LiveFigure.latest.fig)
    for cand in (result, getattr(result, "fig", None), getattr(result, "figure", None)):
        if hasattr(cand, "savefig") and cand not in figs:
            figs.append(cand)
    return figs


def draw(figs) -> None:
    for f in figs:
        f.canvas.draw()


def _clear_run_caches(mod) -> None:
    """Empty the widgets' run caches (``functools.lru_cache``) of ``mod``'s lesson, so that an
    update measures a new run, as after a slider move, not a cache hit."""
    from hotkeylab.plotting import LiveFigure

    LiveFigure.latest = None
    lesson = importlib.import_module(mod.__name__ + ".lesson") if hasattr(mod, "__path__") else mod
    for obj in vars(lesson).values():
        if callable(getattr(obj, "cache_clear", None)):
            obj.cache_clear()


def other_widget(module: str, name: str, kwargs: dict, repeat: int):
    """(update s, bare redraw s) of a function widget: the callback with its figures drawn (what
    the notebook shows after each change) vs drawing the same figures again."""
    mod = importlib.import_module(module)
    if "." in name:  # a method of an object the notebook keeps (the capstone dashboard)
        cls, meth = name.split(".")
        fn = getattr(getattr(mod, cls)(mod.SYSTEM_A), meth)
    else:
        fn = getattr(mod, name)
    t_up = math.inf
    figs: list = []
    for _ in range(repeat):
        plt.close("all")
        _clear_run_caches(mod)  # a slider moved to a new value: the run is not cached
        t0 = time.perf_counter()
        res = fn(**kwargs)
        figs = figures_of(res)
        draw(figs)
        t_up = min(t_up, time.perf_counter() - t0)
    if not figs:
        return t_up, None
    t_draw = best_of(lambda: draw(figs), repeat)
    plt.close("all")
    return t_up, t_draw


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer repeats and a smaller SimPy sample")
    args = ap.parse_args()
    rep = 1 if args.quick else 3
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, load average at start "
          f"{os.getloadavg()[0]:.2f} (shared machine: compare the ratios, each measured under the same load)")

    # 1. engines per scenario class
    simulate(replace(BASE, horizon_ms=10_000.0), engine="fast")  # imports and first-call costs
    rows = []
    for label, sc in CLASSES.items():
        fast = simulate(sc, engine="fast", seed=0)
        t_fast = best_of(lambda sc=sc: simulate(sc, engine="fast", seed=0), rep)
        t0 = time.perf_counter()
        ref = simulate(sc, engine="simpy", seed=0)
        t_simpy = time.perf_counter() - t0
        path = "chunked" if eligible(sc) else "loop"  # (it may still hand back a run to the loop)
        rows.append((label, t_simpy, t_fast, identical(fast, ref), path, fast.attempt_ledger.arrived))
    limit = lindley_rate(max(r[5] for r in rows), 5)
    print(f"\n[1] scenario classes, {BASE.horizon_ms / 1000:.0f} s simulated each (goal: fast >= 30x SimPy, "
          f"identical windows); numpy Lindley recursion limit measured now: {limit / 1e6:.1f} M customers/s")
    print(f"    {'class':26s} {'SimPy s':>8s} {'fast s':>7s} {'ratio':>7s}  identical  path     "
          f"{'attempts':>8s} {'attempts/s':>11s}  of Lindley")
    for label, ts, tf, same, path, n_att in rows:
        print(f"    {label:26s} {ts:8.2f} {tf:7.3f} {ts / tf:6.1f}x  {'yes' if same else 'NO':9s}  {path:7s}  "
              f"{n_att:8d} {n_att / tf / 1e6:9.2f} M  1/{limit / (n_att / tf):.0f}")
    below = [r[0] for r in rows if r[1] / r[2] < 30]
    print(f"    below 30x: {', '.join(below) if below else 'none'}")

    # 2. the 04 what-if widget, per retry policy and queue bound it offers
    print("\n[2] 04 what-if widget: update (simulate + redraw) vs bare redraw of the same figure (goal <= 2x)")
    wi = WhatIf()
    wi.update(show=False)
    options = [(r, None) for r in RETRY_CHOICES] + [(next(iter(RETRY_CHOICES)), q) for q in (6, 25, 250)]
    over = []
    for retry, q in options:
        kw = dict(retry=retry, queue_limit=q, show=False)
        wi.update(**kw)
        t_update = t_draw = math.inf
        for _ in range(2 * rep - 1):  # interleaved, the same number of each: load hits both alike
            t_update = min(t_update, best_of(lambda kw=kw: wi.update(**kw), 1))
            t_draw = min(t_draw, best_of(lambda: wi.redraw(wi.last), 1))
        label = f"{retry}" + (f", QueueMaxSize {q}" if q is not None else "")
        print(f"    {label:52s} update {1000 * t_update:5.0f} ms, redraw {1000 * t_draw:4.0f} ms, "
              f"ratio {t_update / t_draw:.1f}x")
        if t_update / t_draw > 2:
            over.append(label)
    print("    04a has no widget (its comparisons are static figures).")
    print(f"    over 2x: {', '.join(over) if over else 'none'}")

    # 3. the other notebooks' widgets
    print("\n[3] other notebooks' widgets at their defaults: callback + draw vs bare redraw (goal <= 2x)")
    over = []
    for nb, module, name, kw in OTHER_WIDGETS:
        label = f"{nb} {module.split('.')[-1]}.{name}"
        try:
            t_up, t_draw = other_widget(module, name, kw, rep)
        except Exception as exc:  # a benchmark reports, it does not stop
            print(f"    {label:40s} failed: {type(exc).__name__}: {exc}")
            continue
        if t_draw is None:
            print(f"    {label:40s} update {1000 * t_up:6.0f} ms, no figure found to redraw")
            continue
        print(f"    {label:40s} update {1000 * t_up:6.0f} ms, redraw {1000 * t_draw:5.0f} ms, "
              f"ratio {t_up / t_draw:.1f}x")
        if t_up / t_draw > 2:
            over.append(label)
    print(f"    over 2x: {', '.join(over) if over else 'none'}")

    # 4. phase diagram, 20 x 20 = 400 cells
    xs = np.linspace(16.0, 40.0, 20)  # cross-datacentre batch time (ms)
    ys = np.linspace(2.0, 40.0, 20)  # second-owner duration (s)
    t0 = time.perf_counter()
    grid = sweep.grid(cell, xs, ys, x="cross_batch_ms", y="duration_s", progress=False)
    t_grid_fast = time.perf_counter() - t0
    n_sample = 4 if args.quick else 10
    rng = np.random.default_rng(0)
    picks = rng.choice(grid.size, n_sample, replace=False)
    t0 = time.perf_counter()
    agree = 0
    for p in picks:
        i, j = divmod(int(p), len(xs))
        agree += cell(xs[j], ys[i], engine="simpy") == bool(grid[i, j])
    t_sample = time.perf_counter() - t0
    t_grid_simpy = t_sample / n_sample * grid.size
    workers = os.cpu_count() or 1
    print(f"\n[4] phase diagram {grid.size} cells ({grid.mean():.0%} recovered): fast on {workers} processes "
          f"{t_grid_fast:.1f} s; simpy {t_sample:.1f} s for {n_sample} cells, scaled to {grid.size}: "
          f"{t_grid_simpy:.0f} s on one process; fast/simpy = 1/{t_grid_simpy / t_grid_fast:.0f} "
          f"(goal <= 1/20); simpy agreed on {agree}/{n_sample} sampled cells")
    print(f"\nload average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
