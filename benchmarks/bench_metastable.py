"""Speed of the metastable model, measured in one run (a benchmark, not a test).

Prints:
1. SimPy reference vs fast engine on SEED_INCIDENT (the seed's QueueMaxSize 250) and their ratio
   (goal ≥ 30×), and the same without the bound (the stuck state at the bound keeps ~1,100 refused
   attempts/s bouncing off it; the chunked path retries them inside the chunk, one by one in plain
   Python, so the bound still costs more than an unbounded queue);
2. a widget update (simulate + redraw a persistent figure) vs a bare redraw (goal ≤ 2×);
3. a phase diagram of ≥ 400 cells: fast engine over a process pool vs the SimPy engine
   (SimPy is timed on a sample of cells and scaled to the grid, said so in the output).

Run: ``make bench`` or ``.venv/bin/python benchmarks/bench_metastable.py [--quick]``.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import time
from dataclasses import replace

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402

from hotkeylab import sweep  # noqa: E402
from hotkeylab.metastable import SEED_INCIDENT, Window, simulate  # noqa: E402
from hotkeylab.metastable.lesson import WhatIf  # noqa: E402

# The phase-diagram cell: a compressed seed timeline (peak from 5 s, trigger from 10 s, 90 s in all).
CELL = replace(SEED_INCIDENT, horizon_ms=90_000.0, peak=Window(5_000.0, math.inf, 1.2))


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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer repeats and a smaller SimPy sample")
    args = ap.parse_args()
    rep = 1 if args.quick else 3
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}")

    # 1. engines on the seed incident
    for label, sc in (("SEED_INCIDENT", SEED_INCIDENT), ("SEED_INCIDENT, no bound", replace(SEED_INCIDENT, queue_limit=None))):
        t_fast = best_of(lambda sc=sc: simulate(sc, engine="fast", seed=0), rep)
        t_simpy = best_of(lambda sc=sc: simulate(sc, engine="simpy", seed=0), 1)
        print(f"[1] {label} ({sc.horizon_ms / 1000:.0f} s, QueueMaxSize {sc.queue_limit}): simpy {t_simpy:.2f} s, "
              f"fast {t_fast:.3f} s, ratio {t_simpy / t_fast:.1f}x (goal >= 30x)")

    # 2. the notebook's what-if widget: update (simulate + redraw) vs a bare redraw, same figure
    wi = WhatIf()
    wi.update(show=False)
    t_update = t_draw = math.inf
    for _ in range(2 * rep - 1):  # interleaved, the same number of each: load hits both alike
        t_update = min(t_update, best_of(lambda: wi.update(show=False), 1))
        t_draw = min(t_draw, best_of(lambda: wi.redraw(wi.last), 1))
    print(f"[2] widget (default what-if, {wi.last.scenario.horizon_ms / 1000:.0f} s simulated): update "
          f"{1000 * t_update:.0f} ms, bare redraw {1000 * t_draw:.0f} ms, ratio {t_update / t_draw:.1f}x (goal <= 2x)")

    # 3. phase diagram, 20 x 20 = 400 cells
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
    print(f"[3] phase diagram {grid.size} cells ({grid.mean():.0%} recovered): fast on {workers} processes "
          f"{t_grid_fast:.1f} s; simpy {t_sample:.1f} s for {n_sample} cells, scaled to {grid.size}: "
          f"{t_grid_simpy:.0f} s on one process; fast/simpy = 1/{t_grid_simpy / t_grid_fast:.0f} "
          f"(goal <= 1/20); simpy agreed on {agree}/{n_sample} sampled cells")


if __name__ == "__main__":
    main()
