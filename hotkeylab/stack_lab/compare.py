"""04b · The model beside each measured run, and the committed measurements.

Start reading at :func:`compare_turn`. The model is notebook 04's engine (``simulate(…,
engine="fast")``) on the scaled turn, fed the merged-commit times N_B and N_C measured on the stack
just before the run (01b's rule: feed the model what was measured, not the nominal). For each turn
it gives the model's verdict over :data:`SEEDS` seeds beside the measured run's verdict, both by
:func:`verdict` (04's ``recovery`` with its block scaled like every other time: :data:`BLOCK_S`),
and three times read the same way off both timelines (:func:`turn_times`):

- ``cross_s``: from the second owner's arrival until the queue first holds more than M/N batches;
- ``drain_s``: from the start of the degrade until the queue holds less than one batch;
- ``recover_s``: from the isolation until the run recovers (04's definition, :func:`verdict`).

``write_runs`` / ``load_runs`` keep the measurements in ``hotkeylab/data/stack_lab_runs.csv`` (one
row per measured run: its ledger, N_B, N_C) and ``stack_lab_timeline.csv`` (its windows).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from .. import capacity
from ..csvdata import read_commented_csv, write_commented_csv
from ..metastable import Scenario, Window, simulate
from ..validate import check_int, check_number
from .ledger import WINDOW_KEYS, Ledger
from .scenario import SCALE, TURNS, check_supported, scaled, turn_scenario
from .verdict import BLOCK_S, measured_verdict, verdict

__all__ = ["SEEDS", "TOLERANCE", "BLOCK_S", "MeasuredRun", "model_scenario", "verdict", "measured_verdict",
           "turn_times", "compare_turn", "write_runs", "load_runs", "RUNS_CSV", "TIMELINE_CSV", "storm_attempts_per_user",
           "post_degrade_load", "commit_dips", "with_stall", "stall_sweep", "threshold_factors",
           "commit_time_parts", "bounded_waits", "goodput_share", "drain_parts"]

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
RUNS_CSV = DATA_DIR / "stack_lab_runs.csv"
TIMELINE_CSV = DATA_DIR / "stack_lab_timeline.csv"
#: seeds of the model per turn (a verdict is a count over at least 20)
SEEDS = 20
#: a measured time agrees with the model when it is within this share of the model's median, or
#: inside the range the model's seeds span (ours: the stack is one run on a shared machine)
TOLERANCE = 0.3
_LEDGER_FIELDS = list(Ledger.__dataclass_fields__)


@dataclass
class MeasuredRun:
    """One measured run as stored: the turn, its scaled scenario, windows, ledger and N_B / N_C."""

    turn: str
    repeat: int
    scenario: Scenario
    windows: dict
    ledger: Ledger
    batch_ms_b: float
    batch_ms_c: float
    wall_s: float
    extra: dict


def scenario_of(turn: str, horizon_ms: float, scale: float = SCALE) -> Scenario:
    """The scaled scenario a stored run of ``turn`` with ``horizon_ms`` (stack clock) ran."""
    sc = turn_scenario(turn)
    return check_supported(scaled(replace(sc, horizon_ms=horizon_ms / scale), scale))


def model_scenario(run) -> Scenario:
    """The scenario the model runs beside ``run``: the stack's, with the measured N_B and N_C."""
    return replace(run.scenario, batch_ms=float(run.batch_ms_b), cross_batch_ms=float(run.batch_ms_c))


def _first(t, cond, after: float) -> float:
    idx = np.nonzero(cond & (t >= after))[0]
    return float(t[idx[0]]) if len(idx) else math.nan


def turn_times(sc: Scenario, windows: dict) -> dict:
    """``cross_s``, ``drain_s`` read off a timeline (NaN where the event does not happen), at the
    centre of the first window where it holds: a reading in steps of one window (3 s on the stack).
    M/N is ``sc.timeout_ms / sc.batch_ms``: :func:`compare_turn` passes the measured N_B for both."""
    t = np.asarray(windows["t"]) + sc.window_ms / 2000.0  # window centres
    q = np.asarray(windows["queue"])
    crit = capacity.critical_queue_length(sc.timeout_ms, sc.batch_ms)
    out = {"cross_s": math.nan, "drain_s": math.nan}
    if sc.second_owner is not None:
        start = sc.second_owner.start_ms / 1000.0
        out["cross_s"] = _first(t, q > crit, start) - start
    if sc.degrade is not None:
        start = sc.degrade.start_ms / 1000.0
        out["drain_s"] = _first(t, q < 1.0, start) - start
    return out


def compare_turn(run, seeds: int = SEEDS) -> dict:
    """The measured run beside the model's ``seeds`` runs on the same (scaled, measured-N) scenario."""
    sc = model_scenario(run)
    models = [simulate(sc, engine="fast", seed=k) for k in range(seeds)]
    rec, rec_s = measured_verdict(run)
    mv = [verdict(m) for m in models]  # the model judged as the stack is, not by its own run.recovered
    mt = [turn_times(sc, m.windows) | {"recover_s": v[1]} for m, v in zip(models, mv, strict=True)]
    real = turn_times(sc, run.windows) | {"recover_s": rec_s}  # M/N from the measured N_B, as the model's
    row = {"turn": run.turn, "real_recovered": rec, "model_recovered": sum(v[0] for v in mv),
           "seeds": seeds, "real_served": run.ledger.served_users / max(1, run.ledger.users),
           "model_served": float(np.median([m.summary["served_share"] for m in models])),
           "real_wasted_share": run.ledger.wasted_share,
           "model_wasted_share": float(np.median([m.summary["wasted_share"] for m in models])),
           "real_max_queue": float(np.max(run.windows["queue"])),
           "model_max_queue": float(np.median([np.max(m.windows["queue"]) for m in models]))}
    for key in ("cross_s", "drain_s", "recover_s"):
        vals = np.array([x[key] if x[key] is not None else math.nan for x in mt], dtype=float)
        r = real[key] if real[key] is not None else math.nan
        med = float(np.nanmedian(vals)) if np.isfinite(vals).any() else math.nan
        lo = float(np.nanmin(vals)) if np.isfinite(vals).any() else math.nan
        hi = float(np.nanmax(vals)) if np.isfinite(vals).any() else math.nan
        row[f"real_{key}"], row[f"model_{key}"], row[f"model_{key}_range"] = r, med, (lo, hi)
        if math.isnan(r) and math.isnan(med):
            row[f"agree_{key}"] = None  # the event happens in neither
        elif math.isnan(r) or math.isnan(med):
            row[f"agree_{key}"] = False
        else:
            row[f"agree_{key}"] = bool(lo - 1e-9 <= r <= hi + 1e-9 or abs(r - med) <= TOLERANCE * max(med, 1.0))
    row["agree_verdict"] = rec == (row["model_recovered"] * 2 > seeds)
    row["model_unanimous"] = row["model_recovered"] in (0, seeds)
    row["models"] = models
    return row


# --------------------------------------------------------------------------- files
RUN_FIELDS = ["turn", "repeat", "scale", "horizon_ms", "batch_ms_b", "batch_ms_c", "compute_ms", "seed",
              "wall_s", *_LEDGER_FIELDS]


def write_runs(runs, machine: dict, runs_path: Path = RUNS_CSV, timeline_path: Path = TIMELINE_CSV):
    """Write measured runs (orchestrate.Measured or MeasuredRun) to the two CSVs."""
    scale = float(machine.get("scale", SCALE))
    rows, lines = [], []
    for r in runs:
        rows.append({"turn": r.turn, "repeat": r.repeat, "scale": scale, "horizon_ms": r.scenario.horizon_ms,
                     "batch_ms_b": r.batch_ms_b, "batch_ms_c": r.batch_ms_c,
                     "compute_ms": r.extra.get("compute_ms", math.nan), "seed": r.extra.get("seed", 0),
                     "wall_s": r.wall_s, **{k: getattr(r.ledger, k) for k in _LEDGER_FIELDS}})
        for i in range(len(r.windows["t"])):
            lines.append({"turn": r.turn, "repeat": r.repeat, **{k: float(r.windows[k][i]) for k in WINDOW_KEYS}})
    write_commented_csv(Path(runs_path), machine, RUN_FIELDS, rows)
    write_commented_csv(Path(timeline_path), machine, ["turn", "repeat", *WINDOW_KEYS], lines)
    return runs_path, timeline_path


def _read(path: Path) -> tuple[dict, list[dict]]:
    return read_commented_csv(path, "run `make stack-lab` (python -m hotkeylab.stack_lab)")


def load_runs(runs_path: Path = RUNS_CSV, timeline_path: Path = TIMELINE_CSV) -> tuple[dict, list[MeasuredRun]]:
    """``(machine, runs)`` from the committed CSVs, in the order of :data:`TURNS` (no database)."""
    machine, rows = _read(runs_path)
    _, lines = _read(timeline_path)
    out = []
    for r in rows:
        turn, rep = r["turn"], int(r["repeat"])
        if turn not in TURNS:
            raise ValueError(f"{Path(runs_path).name}: unknown turn {turn!r}, expected one of {TURNS}")
        mine = [x for x in lines if x["turn"] == turn and int(x["repeat"]) == rep]
        windows = {k: np.array([float(x[k]) for x in mine]) for k in WINDOW_KEYS}
        led = Ledger(**{k: int(r[k]) for k in _LEDGER_FIELDS})
        sc = scenario_of(turn, float(r["horizon_ms"]), float(r["scale"]))
        if len(windows["t"]) != int(math.ceil(sc.horizon_ms / sc.window_ms)):
            raise ValueError(f"{Path(timeline_path).name}: turn {turn} repeat {rep} has {len(windows['t'])} "
                             f"windows, its scenario needs {int(math.ceil(sc.horizon_ms / sc.window_ms))}")
        out.append(MeasuredRun(turn, rep, sc, windows, led, float(r["batch_ms_b"]), float(r["batch_ms_c"]),
                               float(r["wall_s"]), {"compute_ms": float(r["compute_ms"]), "seed": int(r["seed"])}))
    out.sort(key=lambda m: (TURNS.index(m.turn), m.repeat))
    return machine, out


# --------------------------------------------------------------------------- closed forms for the departure
def batch_demand(sc: Scenario, rate_per_s: float, servers: int = 1, c_share: float = 0.5) -> float:
    """Merged batches/s the users make (``capacity.batcher_batch_rate``): with one batcher (04's
    model) or, ``servers=2``, with B and C batching their own share of the users (the stack)."""
    if servers == 1:
        return capacity.batcher_batch_rate(rate_per_s, sc.batch_max_rows, sc.batch_max_wait_ms)
    shares = (1.0 - c_share, c_share)
    return sum(capacity.batcher_batch_rate(rate_per_s * s, sc.batch_max_rows, sc.batch_max_wait_ms)
               for s in shares if s > 0)


def growth_closed_form(run, servers: int, c_share: float = 0.5) -> float:
    """Queue growth (batches/s) at the start of the trigger, before any retry: users' batch demand
    at the peak minus what two owners taking turns commit, ``1000 / mean(N_B, N_C)``."""
    sc = model_scenario(run)
    lam = sc.user_rate_per_s * (sc.peak.factor if sc.peak is not None else 1.0)
    mu = capacity.alternating_owners_tps([sc.batch_ms, sc.cross_batch_ms])
    return batch_demand(sc, lam, servers, c_share) - mu


def measured_growth(sc: Scenario, windows: dict, low: float = 1.0, high_share: float = 0.8) -> float:
    """Queue growth (batches/s) read off a timeline: a straight line through the windows of the
    second-owner phase whose queue lies between ``low`` and ``high_share`` of the phase's highest."""
    t = np.asarray(windows["t"]) + sc.window_ms / 2000.0
    q = np.asarray(windows["queue"])
    if sc.second_owner is None:
        return math.nan
    inside = (t * 1000.0 >= sc.second_owner.start_ms) & (t * 1000.0 < sc.second_owner.end_ms)
    if not inside.any():
        return math.nan
    top = q[inside].max()
    keep = inside & (q >= low) & (q <= high_share * top)
    if keep.sum() < 2:
        return math.nan
    return float(np.polyfit(t[keep], q[keep], 1)[0])


# --------------------------------------------------------------------------- the degrade relapse
def storm_attempts_per_user(sc: Scenario) -> tuple[int, int]:
    """Attempts one user request makes when every attempt times out, as ``(fewest, most)``.

    Retry k (k ≥ 1) starts after k timeouts and k delays, and is sent while that is within the
    patience (the load generator's rule, 04's model's): always when ``k (M + cap) ≤ patience``,
    never when ``k (M + min_delay) > patience``. Equal bounds mean every user makes that many."""
    r, m = sc.retry, sc.timeout_ms
    if math.isinf(r.patience_ms) or math.isinf(m):
        raise ValueError(f"storm_attempts_per_user needs a finite patience and timeout, got patience_ms="
                         f"{r.patience_ms}, timeout_ms={m}")
    if r.multiplier != 1.0:
        raise ValueError(f"storm_attempts_per_user needs retry.multiplier 1 (the seed's: no backoff), got {r.multiplier}")
    longest = max(min(r.base_ms, r.cap_ms), r.min_delay_ms)
    lo = 1 + int(r.patience_ms // (m + longest))
    hi = 1 + int(r.patience_ms // (m + r.min_delay_ms))
    if not math.isinf(r.max_attempts):
        lo, hi = min(lo, int(r.max_attempts)), min(hi, int(r.max_attempts))
    return lo, hi


def post_degrade_load(run) -> dict:
    """Closed forms for the configuration after the degrade, on the stack and in 04's model alike.

    After the isolation the load generator sends every user to B, whose batcher and thread carry
    them alone; 04's model (``owner_queues``) has one batcher and B's thread: the same
    configuration. Healthy, the users make ``batch_demand(λ)`` batches/s; in the storm every user
    comes ``a`` times (:func:`storm_attempts_per_user`), ``batch_demand(a λ)``; B commits 1000/N_B."""
    sc = model_scenario(run)
    lam = sc.user_rate_per_s * (sc.peak.factor if sc.peak is not None else 1.0)
    lo, hi = storm_attempts_per_user(sc)
    mu = capacity.tps_ceiling(sc.batch_ms)
    return {"rate_per_s": lam, "capacity_per_s": mu, "healthy_per_s": batch_demand(sc, lam),
            "storm_attempts": (lo, hi), "storm_per_s": batch_demand(sc, lam * lo),
            "rows_per_batch_healthy": capacity.batcher_mean_batch_size(lam, sc.batch_max_rows, sc.batch_max_wait_ms),
            "rows_per_batch_storm": capacity.batcher_mean_batch_size(lam * lo, sc.batch_max_rows,
                                                                     sc.batch_max_wait_ms)}


def commit_dips(sc: Scenario, windows: dict) -> list[tuple[float, float, float]]:
    """Windows that start healthy at the peak, one owner, traffic on, and commit fewer batches than
    the users make: ``(t_s, batches/s committed, batches/s the users made)`` for each such window,
    largest shortfall first. *Starts healthy*: the window before had no timeout, no rejection and
    less than one batch waiting. The users' batches are ``batch_demand`` of the window's offered rate."""
    t = np.asarray(windows["t"], dtype=float)
    b, o = np.asarray(windows["batches"], dtype=float), np.asarray(windows["offered"], dtype=float)
    to, rj, q = (np.asarray(windows[k], dtype=float) for k in ("timeouts", "rejected", "queue"))
    out = []
    for i in range(1, len(t)):
        t_ms = t[i] * 1000.0
        ends_ms = t_ms + sc.window_ms
        if sc.peak is None or not sc.peak.start_ms <= t_ms or ends_ms > sc.horizon_ms:
            continue
        if any(w is not None and w.start_ms < ends_ms and t_ms - sc.window_ms < w.end_ms
               for w in (sc.second_owner, sc.degrade, sc.slow_db)):
            continue
        if to[i - 1] > 0 or rj[i - 1] > 0 or q[i - 1] >= 1.0 or o[i] <= 0:
            continue
        demand = batch_demand(sc, float(o[i]))
        if b[i] < demand:
            out.append((float(t[i]), float(b[i]), demand))
    return sorted(out, key=lambda x: x[1] - x[2])


def with_stall(run, start_s: float, end_s: float, factor: float) -> Scenario:
    """The model's scenario beside ``run`` with every merged commit started in ``[start_s, end_s)``
    (stack clock) taking ``factor`` × its N: 04's ``slow_db``, a slow stretch of commits."""
    check_number("factor", factor, low=1.0, high=100.0)
    sc = model_scenario(run)
    check_number("start_s", start_s, low=0.0, high=sc.horizon_ms / 1000.0)
    check_number("end_s", end_s, low=start_s, low_open=True, high=sc.horizon_ms / 1000.0)
    return replace(sc, slow_db=Window(start_s * 1000.0, end_s * 1000.0, float(factor)))


def stall_sweep(run, start_s: float, end_s: float, factors, seeds: int = SEEDS) -> list[int]:
    """For each stretch factor: how many of ``seeds`` model runs recover (:func:`verdict`) when every
    commit started in ``[start_s, end_s)`` takes factor × N (:func:`with_stall`)."""
    check_int("seeds", seeds, low=1, high=200)
    fs = [check_number("factors[]", f, low=1.0, high=100.0) for f in factors]
    if not fs:
        raise ValueError("factors must list at least one stretch factor (each in [1, 100]), got []")
    out = []
    for f in fs:
        sc = with_stall(run, start_s, end_s, f)
        out.append(sum(verdict(simulate(sc, engine="fast", seed=k))[0] for k in range(seeds)))
    return out


def threshold_factors(factors, recovered, seeds: int = SEEDS) -> tuple[float, float] | None:
    """``(lo, hi)``: adjacent factors (ascending) where the verdict flips from most seeds
    recovering at ``lo`` to at most half at ``hi``; None when it never flips."""
    check_int("seeds", seeds, low=1, high=200)
    fs = [float(f) for f in factors]
    ks = [check_int("recovered[]", k, low=0, high=seeds) for k in recovered]
    if len(fs) != len(ks) or len(fs) < 2:
        raise ValueError(f"factors and recovered must have the same length (at least 2), got {len(fs)} and {len(ks)}")
    if any(fs[i + 1] <= fs[i] for i in range(len(fs) - 1)):
        raise ValueError(f"factors must be strictly ascending, got {fs}")
    flips = [i for i in range(len(fs) - 1) if 2 * ks[i] > seeds >= 2 * ks[i + 1]]
    return (fs[flips[0]], fs[flips[0] + 1]) if flips else None


# --------------------------------------------------------------------------- lesson numbers (notebook 04b)
def commit_time_parts(run, rtt_ms: float, round_trips: int, target_ms: float) -> dict:
    """How B's merged commit time is made (orchestrate's calibration): the bare commit (RTT slept
    before each of ``round_trips``, SQL executed, no filler) is measured, then the filler slept under
    the lock (``compute_ms``: ours, standing in for the seed's "内部一堆计算" and the batchInserts'
    execution) is set to ``target_ms`` − bare, and N_B measured again with it. ``sql_ms`` is what the bare commit took
    beyond the slept RTTs: statement execution, driver and sleep overshoot, measured together."""
    rtt = check_number("rtt_ms", rtt_ms, low=0.0, high=1000.0)
    n = check_int("round_trips", round_trips, low=1, high=1000)
    target = check_number("target_ms", target_ms, low=0.0, low_open=True, high=10_000.0)
    compute = float(run.extra["compute_ms"])
    bare = target - compute
    return {"rtt_total_ms": n * rtt, "compute_ms": compute, "bare_ms": bare, "sql_ms": bare - n * rtt,
            "target_ms": target, "measured_ms": float(run.batch_ms_b), "remeasured_minus_target_ms":
            float(run.batch_ms_b) - target}


def bounded_waits(run) -> dict:
    """The longest wait in a full bounded queue (``queue_limit`` batches per server), against M.

    One owner: the batch waits ``limit × N_B``. Two owners alternating the hot row's lock (the
    trigger): each batch ahead in its own server's queue also lets one of the other server's go
    first, so ``limit × (N_B + N_C)``. ``*_total_ms`` adds the batcher's wait T and the batch's own
    commit (N_B; for two owners C's N_C, the slower): the time an unlucky attempt needs."""
    sc = model_scenario(run)
    if sc.queue_limit is None:
        raise ValueError(f"bounded_waits needs a run with a queue_limit, got turn {run.turn!r} with none")
    lim, nb, nc, t = sc.queue_limit, sc.batch_ms, sc.cross_batch_ms, sc.batch_max_wait_ms
    return {"limit": lim, "timeout_ms": sc.timeout_ms, "one_owner_ms": lim * nb, "two_owners_ms": lim * (nb + nc),
            "one_owner_total_ms": lim * nb + nb + t, "two_owners_total_ms": lim * (nb + nc) + nc + t}


def goodput_share(sc: Scenario, windows: dict, start_s: float, end_s: float) -> float:
    """Attempts answered in time per user request offered, over the windows that start in
    ``[start_s, end_s)`` (stack clock): the served share of that stretch (NaN if nobody came)."""
    h = sc.horizon_ms / 1000.0
    check_number("start_s", start_s, low=0.0, high=h)
    check_number("end_s", end_s, low=start_s, low_open=True, high=h)
    t = np.asarray(windows["t"], dtype=float)
    keep = (t >= start_s) & (t < end_s)
    offered = float(np.sum(np.asarray(windows["offered"])[keep]))
    return float(np.sum(np.asarray(windows["goodput"])[keep])) / offered if offered > 0 else math.nan


def drain_parts(run) -> dict:
    """The drain after the degrade, piece by piece (stack clock, seconds).

    - ``closed_s``: the exercise's closed form, the queue (B + C) in the window where the degrade
      starts, committed at 1000 / N_B;
    - ``turns_s``: B's own queue there at N_B each, plus one N_C for each batch C still holds (C's
      thread takes the lock in turns with B until its backlog is gone);
    - ``rate_per_s``: batches/s committed in the windows wholly inside the drain (after the first,
      while the queue of the next window is still above one batch), against 1000 / N_B;
    - ``last_commit_s``: the start of the last window that committed batches, plus its batches at
      ``rate_per_s``: when the last batch committed;
    - ``reading_s``: what :func:`turn_times` reports (centre of the first window below one batch)."""
    sc = model_scenario(run)
    if sc.degrade is None:
        raise ValueError(f"drain_parts needs a run with a degrade, got turn {run.turn!r} with none")
    w_s = sc.window_ms / 1000.0
    t = np.asarray(run.windows["t"], dtype=float)
    q, qb, qc = (np.asarray(run.windows[k], dtype=float) for k in ("queue", "queue_b", "queue_c"))
    bat = np.asarray(run.windows["batches"], dtype=float)
    start, end = sc.degrade.start_ms / 1000.0, sc.degrade.end_ms / 1000.0
    k = int(np.searchsorted(t, start))
    inside = [i for i in range(k + 1, len(t) - 1) if t[i + 1] < end and q[i + 1] >= 1.0]
    rate = float(np.mean(bat[inside])) if inside else math.nan
    busy = [i for i in range(k, len(t)) if t[i] < end and bat[i] > 0]
    last = float(t[busy[-1]] + bat[busy[-1]] * w_s / rate - start) if busy and inside else math.nan
    return {"start_s": start, "queue": float(q[k]), "queue_b": float(qb[k]), "queue_c": float(qc[k]),
            "capacity_per_s": capacity.tps_ceiling(sc.batch_ms), "closed_s": float(q[k]) * sc.batch_ms / 1000.0,
            "turns_s": float(qb[k] * sc.batch_ms + qc[k] * sc.cross_batch_ms) / 1000.0, "rate_per_s": rate,
            "at_rate_s": float(qb[k] / rate + qc[k] * sc.cross_batch_ms / 1000.0), "last_commit_s": last,
            "reading_s": turn_times(sc, run.windows)["drain_s"], "window_s": w_s,
            "patience_s": sc.retry.patience_ms / 1000.0}
