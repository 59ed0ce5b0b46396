"""01 · The hot row's three models: the actors the seed names, one SimPy process function each,
then the ``simulate_*`` functions that wire them up (times in ms throughout).

Actors, top to bottom:

- the closed loop: :func:`worker_thread` (a worker thread hammering the row), started by
  :func:`thread_start` at a random offset;
- the group commit: :func:`user_requests` (Poisson users), :func:`client` (one request waiting
  for its merged commit), the kernel's :func:`~hotkeylab.batcher.batcher` (closes a batch at
  ``max_rows`` or ``max_wait_ms``; :func:`hand_over` puts it on the queue), :func:`hot_key_thread`
  (commits the merged batches under the row lock);
- the open loop: :func:`transaction_source` (Poisson transactions) and :func:`transaction`.

The row lock is a ``simpy.Resource(capacity=1)`` in every model (S2PL: taken when ``SELECT … FOR
UPDATE`` executes, released when ``COMMIT`` executes). No matplotlib here.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import partial

import numpy as np
import simpy

from .. import capacity, sim
from ..batcher import batcher
from ..validate import check_choice, check_int
from .closed_form import (
    closed_loop_latency_ms,
    closed_loop_tps,
    group_commit_batch_rate,
    group_commit_rho,
)
from .fast import hold_times, open_loop_fast, poisson_arrivals_ms
from .results import (
    Batch,
    Book,
    ClosedLoopRun,
    GroupCommitRun,
    LockInterval,
    OpenLoopRun,
    Request,
    ThreadsSweep,
    latency_stats,
)
from .scenario import (
    MAX_EVENTS_OPEN_LOOP_SIMPY,
    SEED_GROUP_COMMIT,
    SEED_LOCK,
    SEED_ROW,
    GroupCommit,
    HotRow,
    OpenLoop,
)


# =========================================================================== actors
def worker_thread(env, name, row_lock, sc: HotRow, holds, book):
    """One worker thread, one cycle after another: begin and the SELECT's way in (outside the lock)
    → ``SELECT … FOR UPDATE`` executes (lock) → held round trips and statements → ``COMMIT``
    executes (unlock) → the COMMIT reply's way back (outside the lock)."""
    k = 0
    while True:
        t_begin = env.now
        book.begun += 1
        book.active += 1
        yield env.timeout(sc.before_lock_ms)  # begin / set autocommit round trip + SELECT's way in
        book.out_iv.append(LockInterval(name, t_begin, env.now))
        with row_lock.request() as select_for_update:  # S2PL: the row lock is taken here …
            t_ask = env.now
            yield select_for_update
            t_got = book.holding = env.now
            hold = holds[k % len(holds)]
            k += 1
            yield env.timeout(hold)  # SELECT reply, UPDATE round trip, COMMIT's way in; statements
        # … and released when COMMIT executes on the server
        t_release = env.now
        book.holding = None
        book.hold_iv.append(LockInterval(name, t_got, t_release))
        if t_got > t_ask:
            book.wait_iv.append(LockInterval(name, t_ask, t_got))
        yield env.timeout(sc.after_lock_ms)  # the COMMIT reply's way back to the client
        book.out_iv.append(LockInterval(name, t_release, env.now))
        book.active -= 1
        book.committed += 1
        book.commits.append(env.now)
        if t_begin >= sc.warmup_ms:
            book.lat.append(env.now - t_begin)
            book.wait.append(t_got - t_ask)


def thread_start(env, offset_ms, thread):
    """Start one worker thread ``offset_ms`` into the run (threads start at random offsets)."""
    yield env.timeout(offset_ms)
    yield env.process(thread)


def user_requests(env, sc: GroupCommit, rng, inboxes, book):
    """Poisson user requests for the hot key (:class:`hotkeylab.sim.PoissonSource`); clients hash
    to one of the servers."""
    source = sim.PoissonSource(rng, sc.rate_per_s)
    chunk = 4096
    while True:
        gaps = source.gaps(chunk)  # the gaps of the next 4096 users, then which server each calls
        where = rng.integers(0, len(inboxes), size=chunk)
        for g, s in zip(gaps, where, strict=True):
            yield env.timeout(float(g))
            env.process(client(env, inboxes[int(s)], book))


def client(env, inbox, book):
    """One user request: hand the row to the server's batcher, wait for its merged commit."""
    req = Request(env.now, env.event())
    book.arrived += 1
    book.in_system += 1
    book.rec.count("offered", env.now)
    yield inbox.put(req)
    yield req.done
    book.in_system -= 1
    book.served += 1
    book.rec.count("served", env.now)
    if req.t_arrive >= book.warmup_ms:
        book.lat.append(env.now - req.t_arrive)


def hand_over(env, queue, book, rows, t_open, by_timer):
    """The ``close`` of the server's :func:`~hotkeylab.batcher.batcher` (the kernel's group commit:
    a batch at ``max_rows`` rows or ``max_wait_ms`` after its first row): record the closed batch
    and put it on the server's batch queue for its hot-key thread."""
    book.rec.count("batches", env.now)
    if env.now >= book.warmup_ms:
        book.batch_rows.append(len(rows))
        book.batch_timer.append(by_timer)
        book.batch_close.append(env.now)
    book.queued += 1
    book.rec.level("queue", env.now, book.queued)
    return queue.put(Batch(rows, t_open, env.now, "timer" if by_timer else "rows"))


def hot_key_thread(env, sc: GroupCommit, queue, row_lock, book):
    """Poll the server's batch queue; commit each merged batch in one cycle of N(rows) ms, of which
    the row lock is held N − ``outside_ms`` (begin and the SELECT's way in before it, the COMMIT
    reply's way back after it: ¾ and ¼ of ``outside_ms``, i.e. 1½ and ½ RTT)."""
    after = sc.outside_ms / 4.0
    while True:
        batch = yield queue.get()
        t_pick = env.now
        book.queued -= 1
        book.rec.level("queue", env.now, book.queued)
        n = sc.n_ms(len(batch.rows))  # batchInsert chunks grow with the rows; the rest does not
        yield env.timeout(sc.outside_ms - after)  # begin / set autocommit, the SELECT's way in
        book.waiters += 1
        book.rec.level("lock_waiters", env.now, book.waiters)
        t_ask = env.now
        with row_lock.request() as select_for_update:  # S2PL: lock the hot row …
            yield select_for_update
            book.waiters -= 1
            book.rec.level("lock_waiters", env.now, book.waiters)
            if batch.t_close >= book.warmup_ms:
                book.batch_wait.append(t_pick - batch.t_close + env.now - t_ask)  # queue + lock wait
            t0 = env.now
            yield env.timeout(n - sc.outside_ms)  # SELECT reply, batchInsert chunks, UPDATE, COMMIT in
        book.busy += max(0.0, env.now - max(t0, book.warmup_ms))  # … released when COMMIT executes
        yield env.timeout(after)  # the COMMIT reply's way back
        for r in batch.rows:
            r.done.succeed()


def transaction_source(env, arrivals, holds, row_lock, book):
    """Poisson transactions on the lock: one :func:`transaction` per drawn arrival and hold."""
    for a, h in zip(arrivals, holds, strict=True):
        yield env.timeout(float(a) - env.now)
        book.arrived += 1
        env.process(transaction(env, float(a), float(h), row_lock, book))


def transaction(env, t_arrive, hold, row_lock, book):
    """One open-loop transaction: wait for the row lock, hold it, commit."""
    book.in_system += 1
    with row_lock.request() as select_for_update:
        yield select_for_update
        book.starts.append(t_arrive)
        book.waits.append(env.now - t_arrive)
        yield env.timeout(hold)
    book.in_system -= 1
    book.served += 1


# =========================================================================== runs
def simulate_threads(scenario: HotRow = SEED_ROW, seed: int = 0, **changes) -> ClosedLoopRun:
    """Run ``scenario.threads`` worker threads on the row until ``horizon_ms`` (or the event cap).

    Threads start at random offsets within one cycle (the only use of ``seed`` when
    ``hold_cv == 0``). TPS counts COMMIT replies after ``warmup_ms``; latency is begin → COMMIT
    reply.
    """
    sc = replace(scenario, **changes) if changes else scenario
    seed = sim.check_seed(seed)
    rng = sim.make_rng(seed)
    env = simpy.Environment()
    row_lock = simpy.Resource(env, capacity=1)
    book = Book(begun=0, active=0, committed=0, commits=[], hold_iv=[], wait_iv=[], out_iv=[], lat=[], wait=[],
                 holding=None)
    cycle = sc.cycle_ms
    # enough hold draws for a thread that never waits, and no more than the event cap can use
    # (each cycle costs several events); cycled if a run is longer
    per_thread = int(min(sc.horizon_ms / max(cycle, 1e-9) + 2, 200_000, sc.max_events / sc.threads + 2))
    offsets = rng.uniform(0.0, cycle, size=sc.threads)

    for i in range(sc.threads):
        holds = hold_times(rng, sc.hold_ms, sc.hold_cv, per_thread)
        thread = worker_thread(env, f"thread {i + 1}", row_lock, sc, holds, book)
        env.process(thread_start(env, float(offsets[i]), thread))
    status = sim.run_bounded(env, sc.horizon_ms, sc.max_events)
    ledger = sim.Ledger(arrived=book.begun, served=book.committed, in_system=book.active).check()
    commits = np.asarray(book.commits)
    t_end_run = status.t_end_ms
    busy = sum(max(0.0, min(iv.end, t_end_run) - max(iv.start, sc.warmup_ms)) for iv in book.hold_iv)
    if book.holding is not None:  # the hold still running at the end
        busy += max(0.0, t_end_run - max(sc.warmup_ms, book.holding))
    t_end = status.t_end_ms
    span = max(t_end - sc.warmup_ms, 1e-9)
    n_after = int(np.count_nonzero(commits >= sc.warmup_ms))
    lat = np.asarray(book.lat)
    summary = {
        "threads": sc.threads,
        "cycle_ms": sc.cycle_ms,
        "hold_ms": sc.hold_ms,
        "outside_ms": sc.outside_ms,
        "tps": 1000.0 * n_after / span,
        "lock_busy_share": busy / span,
        "lock_busy_share_closed_form": closed_loop_tps(sc) * sc.hold_ms / 1000.0,
        "tps_closed_form": closed_loop_tps(sc),
        "tps_ceiling": capacity.tps_ceiling(sc.hold_ms),
        "latency_closed_form_ms": closed_loop_latency_ms(sc),
        "mean_wait_ms": float(np.mean(book.wait)) if book.wait else math.nan,
        **latency_stats(lat),
    }
    return ClosedLoopRun(
        scenario=sc,
        seed=seed,
        status=status,
        ledger=ledger,
        holds=book.hold_iv,
        waits=book.wait_iv,
        outside=book.out_iv,
        commit_ms=commits,
        latency_ms=lat,
        wait_ms=np.asarray(book.wait),
        summary=summary,
    )


def sweep_threads(scenario: HotRow = SEED_ROW, threads=range(1, 33), seed: int = 0) -> ThreadsSweep:
    """:func:`simulate_threads` for every thread count in ``threads`` (same seed each)."""
    ns = [check_int("threads", n, low=1, high=10_000) for n in threads]
    if not ns:
        raise ValueError("threads must list at least one thread count, got []")
    runs = [simulate_threads(replace(scenario, threads=n), seed) for n in ns]
    return ThreadsSweep(
        scenario=scenario,
        threads=np.asarray(ns),
        tps=np.array([r.tps for r in runs]),
        latency_ms=np.array([r.mean_latency_ms for r in runs]),
        tps_closed_form=np.array([closed_loop_tps(scenario, n) for n in ns]),
        latency_closed_form_ms=np.array([closed_loop_latency_ms(scenario, n) for n in ns]),
        ceiling_tps=capacity.tps_ceiling(scenario.hold_ms),
        runs=runs,
    )


def simulate_group_commit(scenario: GroupCommit = SEED_GROUP_COMMIT, seed: int = 0, **changes) -> GroupCommitRun:
    """Run the seed's group commit until ``horizon_ms`` (or the event cap).

    Summary: ``batch_rate_per_s`` (batches closed/s after warm-up) beside its closed form,
    ``timer_share`` (batches closed by the timer), ``mean_batch_rows``, ``rows_per_s`` committed,
    client latency (mean, p50, p99), ``lock_utilisation`` (measured) beside ``rho_lock``, and
    ``rho``, ``rho_thread`` (closed forms, :func:`group_commit_rho`), ``mean_n_ms`` (mean N of the
    batches, beside ``mean_n_closed_form_ms``), ``mean_queue_batches``, ``mean_lock_waiters``, ``mean_batch_wait_ms`` (a
    closed batch's wait in the queue and for the lock).
    """
    sc = replace(scenario, **changes) if changes else scenario
    seed = sim.check_seed(seed)
    rng = sim.make_rng(seed)
    env = simpy.Environment()
    row_lock = simpy.Resource(env, capacity=1)
    rec = sim.Recorder(
        sc.horizon_ms, sc.window_ms, counters=("offered", "served", "batches"), levels=("queue", "lock_waiters")
    )
    book = Book(
        arrived=0, served=0, in_system=0, queued=0, waiters=0, busy=0.0, rec=rec,
        warmup_ms=sc.warmup_ms, lat=[], batch_rows=[], batch_timer=[], batch_wait=[], batch_close=[],
    )  # fmt: skip
    inboxes = []
    for _ in range(sc.servers):
        inbox, queue = simpy.Store(env), simpy.Store(env)
        inboxes.append(inbox)
        env.process(batcher(env, inbox, sc.max_rows, sc.max_wait_ms, partial(hand_over, env, queue, book)))
        for _ in range(sc.threads_per_server):
            env.process(hot_key_thread(env, sc, queue, row_lock, book))
    if sc.rate_per_s > 0:
        env.process(user_requests(env, sc, rng, inboxes, book))
    status = sim.run_bounded(env, sc.horizon_ms, sc.max_events)
    rec.close(status.t_end_ms)
    ledger = sim.Ledger(arrived=book.arrived, served=book.served, in_system=book.in_system).check()
    t_end = status.t_end_ms
    span_s = max(t_end - sc.warmup_ms, 1e-9) / 1000.0
    rows = np.asarray(book.batch_rows, dtype=int)
    timer = np.asarray(book.batch_timer, dtype=bool)
    lat = np.asarray(book.lat)
    w = rec.arrays()
    after = w["t"] * 1000.0 >= sc.warmup_ms
    rate_cf = group_commit_batch_rate(sc)
    rho = group_commit_rho(sc)
    summary = {
        "batch_rate_per_s": rows.size / span_s,
        "batch_rate_closed_form": rate_cf,
        "timer_share": float(timer.mean()) if timer.size else math.nan,
        "mean_batch_rows": float(rows.mean()) if rows.size else math.nan,
        "rows_per_s": float(w["served"][after].mean()) if after.any() else math.nan,
        "lock_utilisation": book.busy / (span_s * 1000.0),
        "rho": rho["rho"],
        "rho_thread": rho["rho_thread"],
        "rho_lock": rho["rho_lock"],
        "mean_n_ms": float(sc.n_ms(rows).mean()) if rows.size else math.nan,
        "mean_n_closed_form_ms": rho["mean_n_ms"],
        "mean_queue_batches": float(w["queue"][after].mean()) if after.any() else math.nan,
        "mean_lock_waiters": float(w["lock_waiters"][after].mean()) if after.any() else math.nan,
        "mean_batch_wait_ms": float(np.mean(book.batch_wait)) if book.batch_wait else math.nan,
        **latency_stats(lat),
    }
    return GroupCommitRun(
        scenario=sc, seed=seed, status=status, ledger=ledger, windows=w,
        batch_rows=rows, batch_by_timer=timer, batch_close_ms=np.asarray(book.batch_close), latency_ms=lat,
        summary=summary,
    )  # fmt: skip


def _open_loop_simpy(sc, arrivals, holds, max_events):
    env = simpy.Environment()
    row_lock = simpy.Resource(env, capacity=1)
    book = Book(in_system=0, served=0, arrived=0, starts=[], waits=[])
    env.process(transaction_source(env, arrivals, holds, row_lock, book))
    status = sim.run_bounded(env, sc.horizon_ms, max_events)
    ledger = sim.Ledger(arrived=book.arrived, served=book.served, in_system=book.in_system)
    return status, ledger, np.asarray(book.starts), np.asarray(book.waits)


def simulate_open_loop(scenario: OpenLoop = SEED_LOCK, seed: int = 0, engine: str = "fast", **changes) -> OpenLoopRun:
    """Poisson transactions on the lock; mean wait beside Pollaczek–Khinchine.

    Both engines draw the same arrival times and hold times from ``seed`` and give the same waits
    (``"simpy"``: one process per transaction and a ``simpy.Resource(1)``; ``"fast"``: numpy).
    The mean wait counts transactions that arrived after ``warmup_ms`` and got the lock.
    ``max_events`` caps the fast engine's arrivals; the SimPy engine stops after
    ``min(max_events, MAX_EVENTS_OPEN_LOOP_SIMPY)`` events. Either ends with ``status.truncated``
    if its cap stopped it before the horizon.
    """
    sc = replace(scenario, **changes) if changes else scenario
    seed = sim.check_seed(seed)
    engine = check_choice("engine", engine, {"simpy", "fast"})
    rng = sim.make_rng(seed)
    # the fast engine counts arrivals; the SimPy engine counts events (about 5 per transaction),
    # at most MAX_EVENTS_OPEN_LOOP_SIMPY of them
    simpy_events = min(sc.max_events, MAX_EVENTS_OPEN_LOOP_SIMPY)
    cap = simpy_events // 5 if engine == "simpy" else sc.max_events
    arrivals, truncated = poisson_arrivals_ms(rng, sc.rate_per_s, sc.horizon_ms, cap)
    holds = hold_times(rng, sc.hold_ms, sc.hold_cv, arrivals.size)
    if engine == "simpy":
        status, ledger, starts, waits = _open_loop_simpy(sc, arrivals, holds, simpy_events)
        if truncated and not status.truncated:
            status = replace(status, truncated=True)
    else:
        status, ledger, starts, waits = open_loop_fast(sc, arrivals, holds, truncated)
    ledger.check()
    keep = starts >= sc.warmup_ms
    w = waits[keep]
    summary = {
        "rho": sc.rho,
        "samples": int(w.size),
        "mean_wait_ms": float(w.mean()) if w.size else math.nan,
        "closed_form_wait_ms": sc.closed_form_wait_ms(),
        "p99_wait_ms": float(np.percentile(w, 99)) if w.size else math.nan,
    }
    return OpenLoopRun(
        scenario=sc, seed=seed, engine=engine, status=status, ledger=ledger,
        arrival_ms=starts, wait_ms=waits, summary=summary,
    )  # fmt: skip
