"""06 · The model: the actors of the incident, one SimPy process each (orders, the replenisher, the batch
job and its runs, the business traffic, the health checker), then :func:`simulate`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import simpy

from ..sim import Ledger, PoissonSource, Recorder, RunStatus, check_seed, make_rng, run_bounded
from ..validate import check_int
from .closed_form import (
    batch_time_ms,
)
from .database import Database, Job
from .records import PendingStore, RecordLedger
from .results import BatchRun, Run
from .scenario import (
    BUSINESS,
    IN_SYSTEM,
    INF,
    MAX_ROWS,
    OK,
    PROBE,
    PROCESS,
    REFUSED,
    REJECTED,
    SCAN,
    SEED_INCIDENT,
    SERVED,
    TIMED_OUT,
    Scenario,
)

__all__ = [
    "order_source", "replenisher", "batch_job", "batch_run", "slow_query", "business_traffic",
    "business_query", "health_checker", "simulate", "measure_batch", "MAX_ON_PRIMARY",
]


#: A run stops (truncated) once more queries than this wait on the primary: each holds its
#: client's SimPy process (about 2 KB), so the cap bounds a run's memory as ``max_events`` bounds
#: its time. The incident's primary never holds more than a few dozen.
MAX_ON_PRIMARY = 50_000
_CHECK_EVERY = 10_000  # events between two looks at the primary's queue

# --------------------------------------------------------------------------- the actors
@dataclass
class _Model:
    """Shared state of one run: the store of pending records, the primary, the records."""

    env: simpy.Environment
    sc: Scenario
    store: PendingStore
    db: Database
    rec: Recorder
    in_stock: bool = True
    created: int = 0
    completed_direct: int = 0
    completed_batch: int = 0
    cancelled: int = 0
    retries_failed: int = 0
    peak_backlog: int = 0
    runs: list = field(default_factory=list)
    slow_log: list = field(default_factory=list)
    scans: list = field(default_factory=list)
    arrive: list = field(default_factory=list)
    outcome: list = field(default_factory=list)
    probes: int = 0
    probe_failures: int = 0

    def backlog_changed(self) -> None:
        self.peak_backlog = max(self.peak_backlog, self.store.total)
        self.rec.level("backlog", self.env.now, self.store.total)


def order_source(env: simpy.Environment, m: _Model, rng: np.random.Generator):
    """Orders on the inventory hot key, drawn per tick (a Poisson count). Each creates a record:
    in stock it completes, except a small share that stays pending; out of stock every order
    stays pending ("hotKey无法处理成功留下pending记录")."""
    sc = m.sc
    lam = sc.orders_per_s * sc.order_tick_ms / 1000.0
    while True:
        yield env.timeout(sc.order_tick_ms)
        n = int(rng.poisson(lam))
        k = int(rng.binomial(n, sc.normal_pending_share)) if m.in_stock else n
        m.created += n
        m.completed_direct += n - k
        if k:
            m.store.add(env.now, k)
            m.backlog_changed()
        m.rec.count("orders", env.now, n)
        m.rec.count("pending_created", env.now, k)


def replenisher(env: simpy.Environment, m: _Model):
    """The inventory runs out at ``stockout_ms`` and is replenished at ``replenish_ms``."""
    sc = m.sc
    if math.isinf(sc.stockout_ms):
        return
    yield env.timeout(sc.stockout_ms)
    m.in_stock = False
    if math.isinf(sc.replenish_ms):
        return
    yield env.timeout(sc.replenish_ms - sc.stockout_ms)
    m.in_stock = True


def slow_query(env: simpy.Environment, m: _Model, job: Job, run: BatchRun):
    """A scan's SQL on the primary: it lives until it is done or its primary dies, whether or not
    its batch run still waits ("批处理产生的慢SQL … 累积巨量的慢SQL")."""
    m.scans.append(job)
    outcome = yield job.done
    if outcome != REJECTED:  # refused during a failover: it never ran
        m.slow_log.append((job.submitted_ms, job.started_ms, env.now, outcome, run.start_ms))


def _retry_rows(m: _Model, segs: list) -> None:
    """A chunk committed on the primary: each row is retried on the hot key. Expired rows are
    cancelled; in stock the rest complete; out of stock they stay pending."""
    now = m.env.now
    sc = m.sc
    for a, b, t in segs:
        if now - t > sc.order_expiry_ms:
            m.cancelled += (n := m.store.remove(a, b))
            m.rec.count("cancelled", now, n)
        elif m.in_stock:
            m.completed_batch += (n := m.store.remove(a, b))
            m.rec.count("completed_batch", now, n)
        else:
            m.retries_failed += b - a
    m.backlog_changed()


def batch_run(env: simpy.Environment, m: _Model, row_limit: int):
    """One run of the batch job: scan the pending records in the time range (``LIMIT row_limit``
    if set), then retry the rows read, a chunk per transaction, until done or the run's timeout.

    At the timeout the run gives up - but its SQL does not stop: a scan still running (or waiting
    for a slot) runs on as a :func:`slow_query`; a chunk in flight still commits.
    """
    sc = m.sc
    store, db = m.store, m.db
    deadline = env.timeout(sc.batch_timeout_ms) if math.isfinite(sc.batch_timeout_ms) else env.event()
    give_up_ms = env.now + sc.batch_timeout_ms
    t_from = env.now - sc.scan_range_ms
    backlog = store.count(t_from)
    read = backlog if row_limit == 0 else min(backlog, row_limit)
    work = sc.scan_fixed_ms + sc.scan_ms_per_row * read
    run = BatchRun(start_ms=env.now, row_limit=row_limit, backlog=backlog, rows_read=read, scan_ms=work)
    m.runs.append(run)
    cursor, bound = store.first_id(t_from), store.next_id  # the scan's snapshot
    scan = db.submit(SCAN, work)
    env.process(slow_query(env, m, scan, run))
    yield scan.done | deadline
    if not scan.done.triggered:
        run.outcome, run.end_ms = "timeout", env.now
        return
    if scan.done.value != OK:
        run.outcome, run.end_ms = scan.done.value, env.now
        return
    run.scan_end_ms = env.now
    while run.rows_retried < read:
        if env.now >= give_up_ms:  # (a Timeout counts as triggered from its creation)
            run.outcome = "timeout"
            break
        segs, cursor = store.take(cursor, min(sc.chunk_rows, read - run.rows_retried), bound)
        n = sum(b - a for a, b, _ in segs)
        if n == 0:
            break
        chunk = db.submit(PROCESS, n * sc.process_ms_per_row)
        chunk.done.callbacks.append(lambda ev, segs=segs: ev.value == OK and _retry_rows(m, segs))
        yield chunk.done | deadline
        if not chunk.done.triggered:
            run.outcome = "timeout"
            break
        if chunk.done.value != OK:
            run.outcome = chunk.done.value
            break
        run.rows_retried += n
    if run.outcome == "running":
        run.outcome = "done"
    run.end_ms = env.now


def batch_job(env: simpy.Environment, m: _Model):
    """The scheduler: a :func:`batch_run` every ``batch_period_ms``, whether or not the last one
    finished. Fix 2 stops starting runs at ``stop_batch_ms``; fix 3 starts them again at
    ``limit_from_ms`` with ``fix_row_limit``."""
    sc = m.sc
    while True:
        yield env.timeout(sc.batch_period_ms)
        now = env.now
        if now >= sc.limit_from_ms:
            env.process(batch_run(env, m, sc.fix_row_limit))
        elif now < sc.stop_batch_ms:
            env.process(batch_run(env, m, sc.row_limit))


def business_query(env: simpy.Environment, m: _Model, work_ms: float):
    """One business query: waits for the answer or its client timeout, whichever comes first."""
    sc = m.sc
    i = len(m.arrive)
    t0 = env.now
    m.arrive.append(t0)
    m.outcome.append(IN_SYSTEM)
    m.rec.count("offered", t0)
    job = m.db.submit(BUSINESS, work_ms)
    timer = env.timeout(sc.business_timeout_ms) if math.isfinite(sc.business_timeout_ms) else env.event()
    yield job.done | timer
    if job.done.triggered:
        if job.done.value == OK:
            m.outcome[i] = SERVED
            m.rec.count("served", env.now)
            m.rec.count("latency_sum", env.now, env.now - t0)
        else:
            m.outcome[i] = REFUSED
            m.rec.count("rejected", env.now)
    else:
        m.db.withdraw(job)
        m.outcome[i] = TIMED_OUT
        m.rec.count("timeouts", env.now)


def business_traffic(env: simpy.Environment, m: _Model, rng: np.random.Generator):
    """The other business on the same primary: Poisson queries with exponential work."""
    sc = m.sc
    if sc.business_per_s <= 0:
        return
    gaps = PoissonSource(rng, sc.business_per_s, block=1)  # one gap at a time: each query then draws its work
    while True:
        yield env.timeout(gaps.next_gap())
        env.process(business_query(env, m, rng.exponential(sc.business_ms)))


def health_checker(env: simpy.Environment, m: _Model):
    """Probes the primary every ``health_interval_ms``; after ``health_failures`` probes in a row
    without an answer within ``health_timeout_ms`` it declares the primary dead and fails over
    ("数据库整体被拖垮导致主从切换"), then waits for the new primary."""
    sc, db = m.sc, m.db
    fails = 0
    while True:
        yield env.timeout(sc.health_interval_ms)
        m.probes += 1
        probe = db.submit(PROBE, sc.probe_ms)
        yield probe.done | env.timeout(sc.health_timeout_ms)
        if probe.done.triggered and probe.done.value == OK:
            fails = 0
            continue
        db.withdraw(probe)
        fails += 1
        m.probe_failures += 1
        if fails >= sc.health_failures:
            fails = 0
            db.fail_over()
            yield env.timeout(sc.failover_ms)


def _run(env: simpy.Environment, sc: Scenario, db: Database) -> RunStatus:
    """Step the model to the horizon, at most ``sc.max_events`` events, stopping early (truncated)
    once more than :data:`MAX_ON_PRIMARY` queries wait on the primary: the two caps that bound a
    run's time and its memory (every waiting query holds its client's process)."""
    events = 0
    while True:
        st = run_bounded(env, until_ms=sc.horizon_ms, max_events=min(_CHECK_EVERY, sc.max_events - events))
        events += st.events
        if not st.truncated:  # reached the horizon
            return RunStatus(t_end_ms=sc.horizon_ms, events=events, truncated=False)
        if events >= sc.max_events or len(db.queue) > MAX_ON_PRIMARY:
            return RunStatus(t_end_ms=st.t_end_ms, events=events, truncated=True)


def simulate(scenario: Scenario = SEED_INCIDENT, seed: int = 0, *, max_events: int | None = None) -> Run:
    """Run the incident with SimPy for ``scenario.horizon_ms`` and return a :class:`Run`.

    Bounded for any parameters: at most ``scenario.max_events`` SimPy events (``max_events``, if
    given, replaces it); a run that hits the cap ends early with ``run.truncated``. Same ``seed``,
    same result; each actor draws from its own stream, so variants of a scenario see the same
    orders and business queries.
    """
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a pending_records.Scenario, got {type(scenario).__name__}")
    seed = check_seed(seed)
    sc = scenario if max_events is None else replace(scenario, max_events=max_events)
    rng_orders, rng_business = make_rng(seed).spawn(2)
    env = simpy.Environment()
    rec = Recorder(
        sc.horizon_ms,
        sc.window_ms,
        counters=("offered", "served", "timeouts", "rejected"),
        weighted=("orders", "pending_created", "completed_batch", "cancelled", "latency_sum"),
        levels=("backlog", "slow_sql", "busy", "db_queue"),
    )
    m = _Model(env=env, sc=sc, store=PendingStore(), db=Database(env, sc.db_slots, sc.failover_ms, rec), rec=rec)
    if sc.initial_backlog:
        m.store.add(0.0, sc.initial_backlog)
        m.created += sc.initial_backlog
        m.backlog_changed()
    env.process(order_source(env, m, rng_orders))
    env.process(replenisher(env, m))
    env.process(batch_job(env, m))
    env.process(business_traffic(env, m, rng_business))
    env.process(health_checker(env, m))
    status = _run(env, sc, m.db)
    t_end = status.t_end_ms
    rec.close(t_end)

    w = rec.arrays(per_second=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        w["latency_ms"] = np.where(w["served"] > 0, w["latency_sum"] / np.maximum(w["served"], 1e-300), np.nan)
    w["goodput"] = w["served"]
    outcome = np.asarray(m.outcome, dtype=np.int8)
    ledger = Ledger(
        arrived=len(outcome),
        served=int((outcome == SERVED).sum()),
        timed_out=int((outcome == TIMED_OUT).sum()),
        rejected=int((outcome == REFUSED).sum()),
        in_system=int((outcome == IN_SYSTEM).sum()),
        extra={"probes": m.probes, "probe_failures": m.probe_failures},
    )
    records = RecordLedger(
        created=m.created,
        completed=m.completed_direct + m.completed_batch,
        pending=m.store.total,
        cancelled=m.cancelled,
        extra={
            "completed_at_once": m.completed_direct,
            "completed_by_batch": m.completed_batch,
            "failed_retries": m.retries_failed,
        },
    )
    # scans still on the primary at the end: logged as running to the end
    slow = list(m.slow_log) + [
        (j.submitted_ms, j.started_ms, t_end, "running", math.nan) for j in m.scans if j.state in ("running", "queued")
    ]
    slow.sort(key=lambda x: x[0])
    fo = np.asarray(m.db.failovers, dtype=float).reshape(-1, 2)
    return Run(
        scenario=sc,
        seed=seed,
        status=status,
        windows=w,
        ledger=ledger,
        records=records,
        failovers_ms=fo[:, 0],
        promoted_ms=fo[:, 1],
        runs=m.runs,
        slow_sql=slow,
        peak_backlog=m.peak_backlog,
        peak_slow_sql=m.db.peak_slow,
        probes=m.probes,
        probe_failures=m.probe_failures,
    )


#: An idle primary for :func:`measure_batch`: no orders, no business, no stockout, no expiry, no
#: run timeout, and no probe within the run.
_IDLE = {
    "orders_per_s": 0.0,
    "business_per_s": 0.0,
    "stockout_ms": INF,
    "replenish_ms": INF,
    "order_expiry_ms": INF,
    "batch_timeout_ms": INF,
    "health_interval_ms": 1e8,
    "order_tick_ms": 3_600_000.0,
}


def measure_batch(sc: Scenario, backlog: int, row_limit: int = 0, seed: int = 0) -> BatchRun:
    """One batch run, measured: ``backlog`` pending records on an idle primary (no orders, no
    business, no timeout), one run. Returns its :class:`BatchRun` (``end_ms − start_ms`` is the
    batch time, ``scan_end_ms − start_ms`` the scan time)."""
    if not isinstance(sc, Scenario):
        raise ValueError(f"sc must be a pending_records.Scenario, got {type(sc).__name__}")
    b = check_int("backlog", backlog, low=0, high=MAX_ROWS)
    k = check_int("row_limit", row_limit, low=0, high=MAX_ROWS)
    need = batch_time_ms(b, k, sc.scan_fixed_ms, sc.scan_ms_per_row, sc.process_ms_per_row)
    period = need + 100.0
    probe = replace(
        sc,
        **_IDLE,
        initial_backlog=b,
        row_limit=k,
        batch_period_ms=period,  # one run only: the second would start after the horizon
        horizon_ms=period + need + 0.5,
        window_ms=period + need + 0.5,
    )
    run = simulate(probe, seed)
    if run.truncated:  # the run's chunks need more events than the scenario's cap
        raise ValueError(
            f"backlog must be measurable within max_events ({sc.max_events:,} events), got {b:,} rows "
            f"retried {sc.chunk_rows:,} a chunk: the run stopped at its cap"
        )
    return run.runs[0]
