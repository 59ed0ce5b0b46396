"""Verdicts over seeds: every "recovers" or "stays stuck" in notebooks 04 and 04a is a count.

One run is one sample of a random process. A verdict is therefore a count over :data:`SEEDS`
seeds ("stuck in 20/20 seeds"), and a count strictly between 0 and 20 is a knife-edge, said so.

The runs cost minutes of CPU (a stuck run at the seed's queue bound keeps ~2,000 attempts/s in
flight), more than a notebook may take. So ``make verdicts`` (``python -m
hotkeylab.metastable.verdicts``) runs every experiment of :data:`EXPERIMENTS` for seeds
0..19 and writes ``hotkeylab/data/verdicts_04.csv``; the notebooks read it. Each row carries
the fingerprint of its scenario, so a changed model or preset makes the file stale, and
``tests/test_verdicts.py`` fails until it is rewritten; the same test re-runs a sample of rows
and requires identical numbers.

>>> from hotkeylab.metastable import verdicts
>>> verdicts.load()["seed"].text                               # doctest: +SKIP
'stuck in 20/20 seeds'
"""

from __future__ import annotations

import csv
import hashlib
import math
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..sweep import run as sweep_run
from ..validate import check_choice
from . import simulate
from .mitigations import MITIGATIONS, mitigate, restart_scenario
from .presets import ACT_FOR_MS, ACT_MS, SHORT_INCIDENT
from .scenario import DEGRADED, NORMAL, SEED_INCIDENT, SEED_RETRY, RetryPolicy, Scenario, Window

__all__ = ["SEEDS", "DATA", "Experiment", "EXPERIMENTS", "Count", "fingerprint", "run_row", "compute",
           "write", "load", "HEALTHY_SHARE"]

SEEDS = 20
DATA = Path(__file__).resolve().parents[1] / "data" / "verdicts_04.csv"
#: A run with no end to its trigger (a second owner that stays) is "healthy" when it answers at
#: least this share of its user requests in time.
HEALTHY_SHARE = 0.99
#: Normal loads (requests/s) for "dormant at normal load, tipped by the +20% peak".
DORMANT_LOADS = (480.0, 500.0, 520.0, 540.0, 560.0, 580.0, 600.0, 620.0, 640.0)
#: Stretch factors for the seed's measure 2 (临时改变重试时间间隔).
STRETCH = (2.0, 4.0, 6.0, 10.0)
QUEUE_LIMITS = (6, 9, 12, 15, 25)
PATIENCE_MS = (150.0, 300.0, 450.0, 650.0, 1000.0)
INTERVAL_MS = (25.0, 50.0, 100.0)
#: The backoff sweep of notebook 04a: attempts × delay schedule × patience.
BACKOFF_ATTEMPTS = (2, 3, 5)
BACKOFF_KINDS = ("constant", "exponential")
BACKOFF_PATIENCE_MS = (300.0, math.inf)
COLUMNS = ("experiment", "fingerprint", "seed", "recovered", "recovery_time_s", "served_share",
           "end_share", "attempts_per_request", "rejected", "max_queue", "final_queue", "wasted_share",
           "truncated")


@dataclass(frozen=True)
class Experiment:
    """A named scenario and what its verdict means: ``"recovery"`` (recovered after the trigger,
    :attr:`Run.recovered`) or ``"healthy"`` (no trigger end: served ≥ :data:`HEALTHY_SHARE`)."""

    name: str
    label: str
    scenario: Scenario
    notebook: str = "04"
    measure: str = "recovery"


def _backoff_policy(attempts: int, kind: str, patience_ms: float) -> RetryPolicy:
    if kind == "constant":  # the seed's interval, 0–50 ms, with a cap on attempts
        return replace(SEED_RETRY, max_attempts=attempts, patience_ms=patience_ms)
    return RetryPolicy(max_attempts=attempts, base_ms=100.0, multiplier=2.0, cap_ms=1_000.0, jitter="full",
                       patience_ms=patience_ms)


def _experiments() -> dict[str, Experiment]:
    S, act, act_for = SHORT_INCIDENT, ACT_MS, ACT_FOR_MS
    ex = [
        Experiment("seed", "the seed's incident: isolation only", SEED_INCIDENT),
        Experiment("seed_unbounded", "… with no queue bound", replace(SEED_INCIDENT, queue_limit=None)),
        Experiment("seed_owner_queues", "… with a queue per owner (C drains after isolation)",
                   replace(SEED_INCIDENT, owner_queues=True)),
        Experiment("seed_rerouted", "… the key rerouted to another C server for 15 s more",
                   replace(SEED_INCIDENT, second_owner=replace(SEED_INCIDENT.second_owner,
                                                               end_ms=SEED_INCIDENT.second_owner.end_ms + 15_000.0))),
        Experiment("degraded", "degrade upstream (what the team did)", DEGRADED),
        Experiment("normal", "the peak with one owner (no second owner)", NORMAL),
    ]
    for lam in DORMANT_LOADS:
        ex.append(Experiment(f"dormant_{lam:.0f}", f"two owners at {lam:.0f}/s, no peak, 300 s",
                             replace(SEED_INCIDENT, user_rate_per_s=lam, peak=None,
                                     second_owner=Window(0.0, math.inf), horizon_ms=300_000.0),
                             measure="healthy"))
        ex.append(Experiment(f"tipped_{lam:.0f}", f"the seed's incident at {lam:.0f}/s normal load",
                             replace(SEED_INCIDENT, user_rate_per_s=lam)))
    ex += [
        Experiment("short", "short clock: isolation only", S),
        Experiment("short_degrade", "degrade upstream for 30 s", mitigate("degrade", S)),
        Experiment("short_restart", "restart the server (queue cleared)", mitigate("restart", S)),
        Experiment("short_restart_patience_600", "restart, users with 600 ms of patience",
                   restart_scenario(600.0), notebook="04a"),
        Experiment("short_no_retries", "no retries", replace(S, retry=RetryPolicy(max_attempts=1))),
        Experiment("short_leader", "leader/follower group commit (no timer)", replace(S, batcher="leader")),
    ]
    for f in STRETCH:
        ex.append(Experiment(f"short_stretch_{f:g}", f"retry interval ×{f:g} for 30 s (seed measure 2)",
                             replace(S, stretch_retries=Window(act, act + act_for, f))))
    for q in QUEUE_LIMITS:
        ex.append(Experiment(f"short_queue_limit_{q}", f"QueueMaxSize {q} batches", replace(S, queue_limit=q)))
    for p in PATIENCE_MS:
        ex.append(Experiment(f"short_patience_{p:.0f}", f"user patience {p:.0f} ms",
                             replace(S, retry=replace(S.retry, patience_ms=p))))
    for b in INTERVAL_MS:
        ex.append(Experiment(f"short_interval_{b:.0f}", f"retry interval 0–{b:.0f} ms",
                             replace(S, retry=replace(S.retry, base_ms=b, cap_ms=b))))
    for name, m in MITIGATIONS.items():
        ex.append(Experiment(f"mit_{name}", m.label, m.apply(S), notebook="04a"))
    for a in BACKOFF_ATTEMPTS:
        for kind in BACKOFF_KINDS:
            for p in BACKOFF_PATIENCE_MS:
                pname = "inf" if math.isinf(p) else f"{p:.0f}"
                ex.append(Experiment(f"backoff_{a}_{kind}_{pname}", f"{a} attempts, {kind} delays, patience {pname} ms",
                                     replace(S, retry=_backoff_policy(a, kind, p)), notebook="04a"))
    return {e.name: e for e in ex}


#: Every experiment whose verdict a notebook states, by name.
EXPERIMENTS: dict[str, Experiment] = _experiments()


def fingerprint(sc: Scenario) -> str:
    """12 hex digits of the scenario's repr: changes whenever a preset or a field does."""
    return hashlib.sha1(repr(sc).encode()).hexdigest()[:12]


def _end_share(run) -> float:
    w = run.windows
    o, g = np.asarray(w["offered"][-10:]), np.asarray(w["goodput"][-10:])
    return float(g.sum() / o.sum()) if o.sum() > 0 else float("nan")


def run_row(name: str, seed: int) -> dict:
    """One run of experiment ``name`` with ``seed`` on the fast engine, as a CSV row."""
    check_choice("experiment", name, tuple(EXPERIMENTS))
    e = EXPERIMENTS[name]
    run = simulate(e.scenario, engine="fast", seed=seed)
    run.check()
    s = run.summary
    led = run.attempt_ledger
    return {
        "experiment": name,
        "fingerprint": fingerprint(e.scenario),
        "seed": int(seed),
        "recovered": int(bool(run.recovered)),
        "recovery_time_s": "" if run.recovery_time_s is None else repr(float(run.recovery_time_s)),
        "served_share": repr(float(s["served_share"])),
        "end_share": repr(_end_share(run)),
        "attempts_per_request": repr(led.arrived / run.ledger.arrived if run.ledger.arrived else 0.0),
        "rejected": int(s["rejected"]),
        "max_queue": repr(float(s["max_queue"])),
        "final_queue": repr(float(run.windows["queue"][-1])),
        "wasted_share": repr(float(s["wasted_share"])),
        "truncated": int(bool(s["truncated"])),
    }


def compute(names: Iterable[str] | None = None, seeds: int = SEEDS, executor=None, progress: bool = True) -> list[dict]:
    """Rows for ``names`` (default: all) × seeds 0..seeds−1, through :func:`hotkeylab.sweep.run`
    (a process pool by default) with a tqdm bar."""
    names = list(EXPERIMENTS) if names is None else list(names)
    params = [{"name": n, "seed": s} for n in names for s in range(seeds)]
    return sweep_run(run_row, params, executor=executor, progress=progress, label="verdicts")


def write(rows: list[dict], path: Path = DATA, cpu_s: float | None = None) -> Path:
    """Write ``rows`` with a header naming what made them."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        f.write("# verdicts over seeds for notebooks 04 and 04a: python -m hotkeylab.metastable.verdicts\n")
        f.write(f"# seeds 0..{SEEDS - 1}; fast engine; numpy {np.__version__}; python {sys.version.split()[0]}"
                + (f"; {cpu_s:.0f} s wall" if cpu_s is not None else "") + "\n")
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow(r)
    return path


@dataclass(frozen=True)
class Count:
    """An experiment's runs over seeds, and the verdict they support."""

    name: str
    label: str
    measure: str
    recovered: np.ndarray  # bool per seed
    served_share: np.ndarray
    end_share: np.ndarray
    attempts_per_request: np.ndarray
    rejected: np.ndarray
    max_queue: np.ndarray
    recovery_time_s: np.ndarray  # nan where not recovered
    stale: bool

    @property
    def n(self) -> int:
        return int(self.recovered.size)

    @property
    def ok(self) -> np.ndarray:
        """Per seed: recovered (``measure="recovery"``) or healthy (``"healthy"``)."""
        if self.measure == "healthy":
            return self.served_share >= HEALTHY_SHARE
        return self.recovered

    @property
    def k(self) -> int:
        return int(self.ok.sum())

    @property
    def knife_edge(self) -> bool:
        return 0 < self.k < self.n

    @property
    def text(self) -> str:
        """``"recovered in 20/20 seeds"``, ``"stuck in 20/20 seeds"``, or the knife-edge count."""
        good, bad = ("healthy", "not healthy") if self.measure == "healthy" else ("recovered", "stuck")
        if self.k == self.n:
            return f"{good} in {self.n}/{self.n} seeds"
        if self.k == 0:
            return f"{bad} in {self.n}/{self.n} seeds"
        return f"{good} in {self.k}/{self.n} seeds (knife-edge)"

    def share_range(self, field: str = "served_share") -> str:
        """``"83–86%"``: the range over seeds of a share column."""
        x = getattr(self, field)
        return f"{100 * np.nanmin(x):.0f}–{100 * np.nanmax(x):.0f}%"


def load(path: Path = DATA) -> dict[str, Count]:
    """The committed verdicts, one :class:`Count` per experiment. ``stale`` is True where the
    file's fingerprint differs from the experiment's scenario today (rerun ``make verdicts``)."""
    rows: dict[str, list[dict]] = {}
    with Path(path).open() as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            rows.setdefault(r["experiment"], []).append(r)
    out = {}
    for name, rs in rows.items():
        if name not in EXPERIMENTS:
            continue
        e = EXPERIMENTS[name]
        rs.sort(key=lambda r: int(r["seed"]))

        def col(key: str, conv: Callable = float, rs=rs) -> np.ndarray:
            return np.array([conv(r[key]) if r[key] != "" else math.nan for r in rs])

        out[name] = Count(
            name, e.label, e.measure,
            recovered=col("recovered", int).astype(bool), served_share=col("served_share"),
            end_share=col("end_share"), attempts_per_request=col("attempts_per_request"),
            rejected=col("rejected"), max_queue=col("max_queue"), recovery_time_s=col("recovery_time_s"),
            stale=any(r["fingerprint"] != fingerprint(e.scenario) for r in rs),
        )
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m hotkeylab.metastable.verdicts [name ...]``: recompute (all, or the named
    experiments, keeping the other rows) and rewrite the CSV."""
    argv = sys.argv[1:] if argv is None else argv
    t0 = time.perf_counter()
    names = argv or list(EXPERIMENTS)
    for n in names:
        check_choice("experiment", n, tuple(EXPERIMENTS))
    rows = compute(names)
    if argv and DATA.exists():
        with DATA.open() as f:
            keep = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))
                    if r["experiment"] not in set(names) and r["experiment"] in EXPERIMENTS]
        rows = keep + rows
    order = {n: i for i, n in enumerate(EXPERIMENTS)}
    rows.sort(key=lambda r: (order[r["experiment"]], int(r["seed"])))
    path = write(rows, cpu_s=time.perf_counter() - t0)
    print(f"wrote {len(rows)} rows to {path} in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
