"""01b · The measured transactions: client threads running the seed's transaction on a private
MariaDB (see the package docstring for the statements and the emulated RTT).

Start reading at :func:`_work`, one client thread's loop (BEGIN, the statements in the experiment's
order with an emulated RTT before each one sent under the lock, COMMIT), then
:func:`run_experiment`, which starts the threads on their own connections, stops them after the
warm-up and the measured window, and checks that nothing was lost. :func:`run_grid` and
:func:`quick_check` run several experiments.
"""

from __future__ import annotations

import threading
import time

from .instance import Instance
from .results import RunResult, TxnTrace, early_release_fraction
from .scenario import HOT_ACCOUNT, Experiment

__all__ = ["run_experiment", "run_grid", "quick_check"]


class _Worker:
    def __init__(self, wid: int, account: int):
        self.wid, self.account = wid, account
        self.trace: list[TxnTrace] = []
        self.begun = self.committed = self.rolled_back = self.rows = 0
        self.sleep_total = 0.0
        self.sleeps = 0
        self.stmt_total = 0.0
        self.stmts = 0
        self.error: BaseException | None = None


def _work(conn, w: _Worker, exp: Experiment, run_id: int, t0: float, stop: threading.Event) -> None:
    now = time.perf_counter
    rtt_s = exp.rtt_ms / 1000.0
    values = ", ".join(["(%s, %s, %s, %s)"] * exp.rows_per_insert)
    insert_sql = f"INSERT INTO t_trans (run_id, account_id, worker, amount) VALUES {values}"
    params = [v for _ in range(exp.rows_per_insert) for v in (run_id, w.account, w.wid, 1)]
    update_sql = "UPDATE t_account SET count = count + %s WHERE account_id = %s"
    select_sql = "SELECT count FROM t_account WHERE account_id = %s FOR UPDATE"
    rows = exp.rows_per_txn

    def rtt_out():  # the network outside the lock, only when asked for
        if exp.rtt_outside_lock:
            rtt()

    def rtt():  # the network, emulated: before each statement sent while the lock is held
        if rtt_s > 0:
            s0 = now()
            time.sleep(rtt_s)
            w.sleep_total += now() - s0
            w.sleeps += 1

    def stmt(sql, args):
        s0 = now()
        cur.execute(sql, args)
        w.stmt_total += now() - s0
        w.stmts += 1

    try:
        cur = conn.cursor()
        while not stop.is_set():
            w.begun += 1
            tb = now()
            try:
                rtt_out()
                cur.execute("BEGIN")
                if exp.order == "lock_first":  # the seed: lock, then INSERTs and UPDATE under it
                    rtt_out()
                    cur.execute(select_sql, (w.account,))
                    cur.fetchone()
                    tl = now()
                    for _ in range(exp.inserts):
                        rtt()
                        stmt(insert_sql, params)
                    rtt()
                    stmt(update_sql, (rows, w.account))
                elif exp.order == "lock_last":  # INSERTs first, then lock, UPDATE
                    for _ in range(exp.inserts):
                        rtt_out()
                        stmt(insert_sql, params)
                    rtt_out()
                    cur.execute(select_sql, (w.account,))
                    cur.fetchone()
                    tl = now()
                    rtt()
                    stmt(update_sql, (rows, w.account))
                else:  # update_only: INSERTs first; the UPDATE takes the lock itself
                    for _ in range(exp.inserts):
                        rtt_out()
                        stmt(insert_sql, params)
                    rtt_out()
                    stmt(update_sql, (rows, w.account))
                    tl = now()
                rtt()
                tc = now()
                conn.commit()
                td = now()
            except Exception:
                conn.rollback()
                w.rolled_back += 1
                continue
            w.committed += 1
            w.rows += rows
            ms = 1000.0
            w.trace.append(TxnTrace(w.wid, (tb - t0) * ms, (tl - t0) * ms, (tc - t0) * ms, (td - t0) * ms))
        cur.close()
    except BaseException as exc:  # reported by run_experiment, never swallowed
        w.error = exc


_RUN_IDS = iter(range(1, 1 << 30))


def run_experiment(db: Instance, exp: Experiment = Experiment(), *, keep_trace: bool = False):  # noqa: B008 (frozen)
    """Run one experiment on a started :class:`Instance`; returns :class:`RunResult`
    (and the list of :class:`TxnTrace` in the measured window when ``keep_trace``)."""
    if not isinstance(exp, Experiment):
        raise ValueError(f"exp must be an Experiment, got {type(exp).__name__}")
    db.create_schema(accounts=max(64, exp.threads))
    run_id = next(_RUN_IDS)
    accounts = [HOT_ACCOUNT if exp.shared_row else HOT_ACCOUNT + i for i in range(exp.threads)]
    admin = db.connect()

    def counters() -> int:
        with admin.cursor() as cur:
            cur.execute("SELECT COALESCE(SUM(count), 0) FROM t_account WHERE account_id IN %s",
                        (tuple(set(accounts)),))
            v = int(cur.fetchone()[0])
        admin.commit()
        return v

    before = counters()
    conns = [db.connect() for _ in range(exp.threads)]
    workers = [_Worker(i, a) for i, a in enumerate(accounts)]
    stop = threading.Event()
    t0 = time.perf_counter()
    threads = [threading.Thread(target=_work, args=(c, w, exp, run_id, t0, stop), daemon=True)
               for c, w in zip(conns, workers, strict=True)]
    for th in threads:
        th.start()
    time.sleep(exp.warmup_s + exp.duration_s)
    stop.set()
    for th in threads:
        th.join(timeout=120)
    for c in conns:
        c.close()
    errors = [w.error for w in workers if w.error is not None]
    if errors:
        raise RuntimeError(f"a client thread failed: {errors[0]!r}") from errors[0]
    if any(th.is_alive() for th in threads):
        raise RuntimeError("a client thread did not finish within 120 s of the stop signal")
    delta = counters() - before
    with admin.cursor() as cur:
        cur.execute("SELECT COUNT(*) FROM t_trans WHERE run_id = %s", (run_id,))
        trans_rows = int(cur.fetchone()[0])
    admin.commit()
    admin.close()

    lo, hi = exp.warmup_s * 1000.0, (exp.warmup_s + exp.duration_s) * 1000.0
    window = [t for w in workers for t in w.trace if lo <= t.t_commit_done < hi]

    def mean(xs):
        xs = list(xs)
        return sum(xs) / len(xs) if xs else float("nan")

    sleeps = sum(w.sleeps for w in workers)
    stmts = sum(w.stmts for w in workers)
    result = RunResult(
        threads=exp.threads, rtt_ms=exp.rtt_ms, inserts=exp.inserts, rows_per_insert=exp.rows_per_insert,
        shared_row=exp.shared_row, order=exp.order,
        rtt_outside_lock=exp.rtt_outside_lock, duration_s=exp.duration_s, committed=len(window),
        tps=len(window) / exp.duration_s,
        hold_ms=mean(t.t_commit_done - t.t_lock for t in window),
        acquire_ms=mean(t.t_lock - t.t_begin for t in window),
        statement_ms=1000.0 * sum(w.stmt_total for w in workers) / stmts if stmts else float("nan"),
        commit_ms=mean(t.t_commit_done - t.t_commit_sent for t in window),
        sleep_ms=1000.0 * sum(w.sleep_total for w in workers) / sleeps if sleeps else 0.0,
        latency_ms=mean(t.t_commit_done - t.t_begin for t in window),
        early_release=early_release_fraction(window) if exp.shared_row else float("nan"),
        begun=sum(w.begun for w in workers), total_committed=sum(w.committed for w in workers),
        rolled_back=sum(w.rolled_back for w in workers), rows_committed=sum(w.rows for w in workers),
        counter_delta=delta, trans_rows=trans_rows,
    )
    result.check()
    if keep_trace:
        return result, sorted(window, key=lambda t: t.t_lock)
    return result


def run_grid(db: Instance, experiments, *, progress=None) -> list[RunResult]:
    """Run each :class:`Experiment` in turn; ``progress(i, n, result)`` is called after each."""
    experiments = list(experiments)
    out = []
    for i, exp in enumerate(experiments):
        out.append(run_experiment(db, exp))
        if progress is not None:
            progress(i + 1, len(experiments), out[-1])
    return out


def quick_check(db: Instance | None = None, *, rtt_ms: float = 1.5, threads=(1, 2, 8),
                duration_s: float = 1.0) -> list[RunResult]:
    """A short live experiment (a few seconds): the hot row at ``rtt_ms`` for each thread count.
    Starts (and stops) a private instance unless one is given."""
    exps = [Experiment(threads=n, rtt_ms=rtt_ms, duration_s=duration_s, warmup_s=0.2) for n in threads]
    if db is not None:
        return run_grid(db, exps)
    with Instance() as own:
        return run_grid(own, exps)
