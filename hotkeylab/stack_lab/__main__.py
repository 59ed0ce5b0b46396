"""``python -m hotkeylab.stack_lab`` (``make stack-lab``): measure the four turns on the real stack
and rewrite ``hotkeylab/data/stack_lab_runs.csv`` and ``stack_lab_timeline.csv``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .. import db_lab
from .compare import RUNS_CSV, TIMELINE_CSV, write_runs
from .scenario import TURNS, StackConfig


def machine(st, config: StackConfig, repeats: int) -> dict:
    m = db_lab.machine_description(st.db)
    m["client"] = "grpcio (Python, asyncio) over TCP on 127.0.0.1; RTT emulated by a server-side time.sleep"
    try:
        from importlib.metadata import version

        m["grpcio"] = version("grpcio")
    except ImportError:  # pragma: no cover
        m["grpcio"] = "absent"
    m["scale"] = f"{config.scale:g}"
    m["repeats"] = str(repeats)
    return m


def main(argv=None) -> int:
    from .orchestrate import Stack, run_turn

    ap = argparse.ArgumentParser(description="Measure 04b's four turns on a real stack and write the CSVs.")
    ap.add_argument("--turns", nargs="*", default=list(TURNS), choices=TURNS)
    ap.add_argument("--repeats", type=int, default=1, help="measured runs per turn (default 1)")
    ap.add_argument("--out", type=Path, default=RUNS_CSV.parent, help="folder for the CSVs")
    args = ap.parse_args(argv)
    if args.repeats < 1 or args.repeats > 20:
        ap.error(f"--repeats must be in 1..20, got {args.repeats}")
    config = StackConfig()
    try:
        stack = Stack(config)
    except db_lab.MariaDBNotFound as exc:
        print(f"stack-lab: {exc}", file=sys.stderr)
        return 2
    t_all = time.monotonic()
    runs = []
    with stack as st:
        m = machine(st, config, args.repeats)
        for turn in args.turns:
            for rep in range(args.repeats):
                r = run_turn(st, turn, repeat=rep)
                led = r.ledger
                print(f"{turn:8s} repeat {rep}: {r.wall_s:6.1f} s  N_B={r.batch_ms_b:5.1f} ms N_C={r.batch_ms_c:5.1f} ms  "
                      f"users={led.users} served={led.served_users} rows={led.db_rows} wasted={led.wasted} "
                      f"ledger={'ok' if not led.problems() else '; '.join(led.problems())}", flush=True)
                runs.append(r)
        m["load_1min_at_end"] = db_lab._loadavg()
    m["wall_s_total"] = f"{time.monotonic() - t_all:.0f}"
    write_runs(runs, m, args.out / RUNS_CSV.name, args.out / TIMELINE_CSV.name)
    print(f"wrote {args.out / RUNS_CSV.name} and {args.out / TIMELINE_CSV.name} ({len(runs)} runs) "
          f"in {time.monotonic() - t_all:.0f} s")
    bad = [r for r in runs if r.ledger.problems()]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
