"""``python -m hotkeylab.db_lab`` (``make db-lab``): measure the hot row on a private MariaDB and
rewrite ``hotkeylab/data/db_lab_runs.csv`` and ``db_lab_trace.csv``."""

from __future__ import annotations

import sys
from pathlib import Path

from .files import (
    DATA_DIR,
    RUNS_CSV,
    TRACE_CSV,
    _loadavg,
    machine_description,
    write_runs,
    write_trace,
)
from .instance import Instance, MariaDBNotFound
from .model import run_experiment, run_grid
from .scenario import TRACE_RUN, standard_grid


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m hotkeylab.db_lab", description="Measure the hot row on a private MariaDB and write the CSVs.")
    ap.add_argument("--duration", type=float, default=3.0, help="measured seconds per run (default 3)")
    ap.add_argument("--out", type=Path, default=DATA_DIR, help="folder for the CSVs")
    args = ap.parse_args(argv)
    try:
        db = Instance()
    except MariaDBNotFound as exc:
        print(f"db-lab: {exc}", file=sys.stderr)
        return 2
    with db:
        machine = machine_description(db)
        grid = standard_grid(args.duration)

        def progress(i, n, r):
            kind = "hot row" if r.shared_row else "control"
            print(f"[{i:2d}/{n}] {kind:7s} threads={r.threads:2d} rtt={r.rtt_ms:3.1f} ms inserts={r.inserts} "
                  f"tps={r.tps:7.1f} hold={r.hold_ms:6.2f} ms 1000/hold={r.predicted_tps:7.1f}", flush=True)

        results = run_grid(db, grid, progress=progress)
        res, trace = run_experiment(db, TRACE_RUN, keep_trace=True)
        machine["load_1min_at_end"] = _loadavg()
        write_runs(results, args.out / RUNS_CSV.name, machine)
        write_trace(trace, args.out / TRACE_CSV.name, machine)
        print(f"wrote {args.out / RUNS_CSV.name} ({len(results)} runs) and {args.out / TRACE_CSV.name} "
              f"({len(trace)} transactions, early release {res.early_release:.1%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
