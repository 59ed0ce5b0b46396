"""``python -m hotkeylab.stack_lab`` (``make stack-lab``): measure the four turns on the real stack
and rewrite ``hotkeylab/data/stack_lab_runs.csv`` and ``stack_lab_timeline.csv``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .. import db_lab
from .compare import RUNS_CSV, TIMELINE_CSV, load_runs, write_runs
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


def append_runs(old_machine: dict, old_runs: list, machine: dict, new_runs: list) -> tuple[dict, list]:
    """The stored runs with ``new_runs`` added as further repeats of their turns: a new run of a
    turn is numbered after the turn's last stored repeat (its load generator's seed is kept as
    measured). The stored header is kept; one line describes the added runs and their machine."""
    last = {}
    for r in old_runs:
        last[r.turn] = max(last.get(r.turn, -1), r.repeat)
    nxt = dict(last)
    for r in new_runs:
        nxt[r.turn] = nxt.get(r.turn, -1) + 1
        r.repeat = nxt[r.turn]
    turns = sorted({r.turn for r in new_runs})
    added = (f"{len(new_runs)} runs of {', '.join(turns)} (repeats "
             f"{', '.join(f'{t} {last.get(t, -1) + 1}-{nxt[t]}' for t in turns)}, load generator seeds "
             f"{sorted({r.extra.get('seed', 0) for r in new_runs})}) measured {machine.get('measured', '?')} on "
             f"{machine.get('cpu', '?')}, {machine.get('cores', '?')} cores, load_1min "
             f"{machine.get('load_1min_at_start', '?')} at start and {machine.get('load_1min_at_end', '?')} at end, "
             f"{machine.get('wall_s_total', '?')} s")
    out = dict(old_machine)
    k = 1
    while f"appended_{k}" in out:
        k += 1
    out[f"appended_{k}"] = added
    return out, list(old_runs) + list(new_runs)


def main(argv=None) -> int:
    from .orchestrate import Stack, run_turn

    ap = argparse.ArgumentParser(description="Measure 04b's four turns on a real stack and write the CSVs.")
    ap.add_argument("--turns", nargs="*", default=list(TURNS), choices=TURNS)
    ap.add_argument("--repeats", type=int, default=1, help="measured runs per turn (default 1)")
    ap.add_argument("--out", type=Path, default=RUNS_CSV.parent, help="folder for the CSVs")
    ap.add_argument("--append", action="store_true",
                    help="keep the runs stored in --out and add these as further repeats of their turns")
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
    if args.append:
        m, runs = append_runs(*load_runs(args.out / RUNS_CSV.name, args.out / TIMELINE_CSV.name), m, runs)
    write_runs(runs, m, args.out / RUNS_CSV.name, args.out / TIMELINE_CSV.name)
    print(f"wrote {args.out / RUNS_CSV.name} and {args.out / TIMELINE_CSV.name} ({len(runs)} runs) "
          f"in {time.monotonic() - t_all:.0f} s")
    bad = [r for r in runs if r.ledger.problems()]
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
