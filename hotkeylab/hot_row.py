"""01 · The hot row: one row lock under strict two-phase locking, and the seed's group commit.

Seed 000 (first half). System A keeps its hot keys in MySQL. Every transaction on a hot key starts
with ``SELECT … FOR UPDATE`` on the key's row and, under strict two-phase locking (S2PL), keeps
that row lock until ``COMMIT``. So the row admits one transaction at a time. The seed's
"单次耗时为4次rtt+2条SQL耗时+1次commit耗时" is the whole cycle of one serial thread
(:func:`hotkeylab.capacity.lock_hold_ms`, 2.9 ms at RTT 0.5 ms: 345 TPS); of its 4 round trips, 2
lie outside the lock (begin; the SELECT's way in and the COMMIT reply's way back), so the lock is
held ``2 × RTT + statements × SQL time`` and only the outside part can overlap with another
thread's hold (:func:`hotkeylab.capacity.closed_loop_tps`).

Three SimPy models, one process function per actor the seed names (times in ms throughout):

- :func:`simulate_threads` (closed loop): ``threads`` worker threads hammer the row
  (:func:`worker_thread`); the row lock is a ``simpy.Resource(capacity=1)``. One thread runs at
  ``1000 / cycle``; TPS plateaus at ``1000 / hold`` (:func:`hotkeylab.capacity.tps_ceiling`) while latency grows as
  ``threads × hold`` (Little's law). Lock-hold intervals are recorded for
  :func:`hotkeylab.plotting.lock_gantt`.
- :func:`simulate_group_commit`: the seed's business-level group commit. Poisson user requests
  (:func:`user_requests`, :func:`client`) go to a batcher (:func:`batcher`) that closes a batch at
  ``max_rows`` rows or ``max_wait_ms`` after its first row; a single hot-key thread per server
  (:func:`hot_key_thread`) commits the merged batches, one cycle of N(rows) ms each
  (:meth:`GroupCommit.n_ms`), of which the row lock is held all but the 2 round trips outside it.
  The batch rate agrees with :func:`hotkeylab.capacity.batcher_batch_rate`, the load with
  :func:`group_commit_rho`.
- :func:`simulate_open_loop`: Poisson transactions on the lock (M/D/1, or M/G/1 with
  ``hold_cv > 0``): the mean wait for the lock agrees with Pollaczek–Khinchine
  (:func:`hotkeylab.capacity.md1_mean_wait_ms`, :func:`hotkeylab.capacity.pk_mean_wait_ms`).
  Two engines: ``"simpy"`` (the reference) and ``"fast"`` (numpy Lindley recursion), identical
  waits from the same random stream.

Every run takes a ``seed``, ends in bounded time (horizon + event cap via
:func:`hotkeylab.sim.run_bounded`) and returns a result object with arrays, a balanced
:class:`hotkeylab.sim.Ledger` and a ``summary`` dict.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import simpy

from . import capacity, plotting, sim
from .validate import check_choice, check_int, check_number

__all__ = [
    "HotRow",
    "SEED_MERGED",
    "GroupCommit",
    "OpenLoop",
    "SEED_ROW",
    "SEED_ROW_CROSS_DC",
    "SEED_GROUP_COMMIT",
    "SEED_GROUP_COMMIT_FIXED_N",
    "CALIBRATION_ROWS",
    "group_commit_rho",
    "overload_share",
    "SEED_LOCK",
    "LockInterval",
    "ClosedLoopRun",
    "ThreadsSweep",
    "GroupCommitRun",
    "OpenLoopRun",
    "worker_thread",
    "user_requests",
    "client",
    "batcher",
    "hot_key_thread",
    "transaction",
    "simulate_threads",
    "sweep_threads",
    "closed_loop_tps",
    "closed_loop_latency_ms",
    "simulate_group_commit",
    "group_commit_batch_rate",
    "simulate_open_loop",
    "poisson_arrivals_ms",
    "plot_gantt",
    "plot_threads",
    "what_if_threads",
    "what_if_batching",
    "widget_threads",
    "widget_batching",
]


# =========================================================================== scenarios
@dataclass(frozen=True)
class HotRow:
    """Worker threads hammering one hot row in a closed loop (times in ms).

    One transaction, as the seed counts it ("单次耗时为4次rtt+2条SQL耗时+1次commit耗时"), is the
    whole cycle of one serial thread: ``cycle = round_trips × rtt_ms + statements × statement_ms``
    (:func:`hotkeylab.capacity.lock_hold_ms`), 2.9 ms at RTT 0.5 ms. The row lock is taken when
    ``SELECT … FOR UPDATE`` executes on the server and released when ``COMMIT`` executes there, so
    of the four round trips (begin, SELECT, UPDATE, COMMIT) two lie outside the lock: the begin
    round trip, the SELECT's way in (½ RTT) and the COMMIT reply's way back (½ RTT). The other two
    (SELECT reply ½, UPDATE 1, COMMIT request ½) and the statements are held:
    ``hold = cycle − outside_round_trips × rtt_ms``. Extra round trips (batchInsert chunks) are
    held too.
    """

    # "如果按照rtt为0.5ms … 计算" (application and primary in the same datacentre)
    rtt_ms: float = 0.5
    # "我们的单次耗时为4次rtt+2条SQL耗时+1次commit耗时": round trips of one cycle (begin/set
    # autocommit, SELECT … FOR UPDATE, UPDATE, COMMIT); each batchInsert chunk would add one
    round_trips: float = 4
    # same sentence: 2 SQL statements + 1 commit = 3 statements, all executed while the lock is held
    statements: float = 3
    # "commit和SQL耗时为0.3ms"
    statement_ms: float = 0.3
    # "基本不存在时间交叠的空间(除了set autocommit和commit后的那仅有的RTT)": the round trips of the
    # cycle spent outside the lock, 1 (begin) + ½ (SELECT's way in) + ½ (COMMIT reply's way back)
    outside_round_trips: float = 2
    # "多线程无法突破MySQL锁等待导致的TPS上限": the number we vary, 1..32 worker threads
    threads: int = 1
    # not in the seed: coefficient of variation of the hold time (0 = every hold is the same)
    hold_cv: float = 0.0
    # simulated time and the event cap that bound every run
    horizon_ms: float = 1000.0
    warmup_ms: float = 100.0
    max_events: int = 2_000_000

    def __post_init__(self):
        check_number("rtt_ms", self.rtt_ms, low=0.0)
        check_number("round_trips", self.round_trips, low=0.0)
        check_number("statements", self.statements, low=0.0)
        check_number("statement_ms", self.statement_ms, low=0.0)
        check_number("outside_round_trips", self.outside_round_trips, low=0.0, high=self.round_trips)
        object.__setattr__(self, "threads", check_int("threads", self.threads, low=1, high=10_000))
        check_number("hold_cv", self.hold_cv, low=0.0, high=10.0)
        check_number("horizon_ms", self.horizon_ms, low=0.0, low_open=True)
        check_number("warmup_ms", self.warmup_ms, low=0.0, high=self.horizon_ms, high_open=True)
        object.__setattr__(self, "max_events", check_int("max_events", self.max_events, low=1))
        self.cycle_ms  # noqa: B018  (raises ValueError if the cycle is zero)
        if self.hold_ms <= 0:
            raise ValueError(
                "HotRow needs a positive lock hold: (round_trips − outside_round_trips) × rtt_ms + "
                f"statements × statement_ms must be > 0, got {self.hold_ms:g} (rtt_ms={self.rtt_ms!r}, "
                f"round_trips={self.round_trips!r}, outside_round_trips={self.outside_round_trips!r}, "
                f"statements={self.statements!r}, statement_ms={self.statement_ms!r})"
            )

    @property
    def cycle_ms(self) -> float:
        """One serial thread's cycle, begin → COMMIT reply: the seed's "单次耗时"
        (:func:`hotkeylab.capacity.lock_hold_ms` with this row's numbers)."""
        return capacity.lock_hold_ms(self.rtt_ms, self.round_trips, self.statements, self.statement_ms)

    @property
    def outside_ms(self) -> float:
        """Time per cycle spent outside the lock (ms): ``outside_round_trips × rtt_ms``."""
        return self.outside_round_trips * self.rtt_ms

    @property
    def hold_ms(self) -> float:
        """Lock hold per transaction: ``cycle − outside`` = held round trips × RTT + statements."""
        return (self.round_trips - self.outside_round_trips) * self.rtt_ms + self.statements * self.statement_ms

    @property
    def before_lock_ms(self) -> float:
        """Outside time before the lock is taken: begin round trip + the SELECT's way in."""
        return self.outside_ms - self.after_lock_ms

    @property
    def after_lock_ms(self) -> float:
        """Outside time after the lock is released: the COMMIT reply's way back (½ RTT)."""
        return min(0.5, self.outside_round_trips) * self.rtt_ms


#: Rows in a merged batch of the mean size at our 600 requests/s with the seed's 20 rows / 20 ms
#: batcher (:func:`hotkeylab.capacity.batcher_mean_batch_size`): the batch whose commit takes the
#: seed's N = 16 ms in our calibration.
CALIBRATION_ROWS = capacity.batcher_mean_batch_size(600.0, 20, 20.0)


@dataclass(frozen=True)
class GroupCommit:
    """The seed's business-level group commit for one hot key (times in ms).

    A merged commit of ``r`` rows takes ``N(r) = per_batch_ms + per_row_ms × r``: a part paid once
    per batch (begin, SELECT … FOR UPDATE, UPDATE, COMMIT) and a part that grows with the rows
    (the batchInsert chunks). The line passes through ``N = commit_ms`` at ``rows_at_commit_ms``
    rows; ``per_batch_ms = commit_ms`` gives every batch the same N whatever its size. The hot-key
    thread's cycle is ``N(r)``; the row lock is held for ``N(r) − outside_ms``.
    """

    # not in the seed: user requests/s for the hot key; the calibration in the project notes is
    # healthy at 600/s ("大概高峰期比平时多20%流量" then gives the 720/s peak)
    rate_per_s: float = 600.0
    # "以固定条数(最高20条)/固定时间间隔(最高20ms)的形式合并提交": at most 20 rows per batch …
    max_rows: int = 20
    # … or at most 20 ms after the batch's first row
    max_wait_ms: float = 20.0
    # "在RTT为0.5ms的情况下平均耗时为16ms左右": one merged commit takes N = 16 ms on average …
    commit_ms: float = 16.0
    # … which we place at the mean batch of our 600/s load (an assumption: the seed gives no rows)
    rows_at_commit_ms: float = CALIBRATION_ROWS
    # the part of N paid once per batch: the seed's transaction without batchInsert
    # ("首先不考虑batchInsert": 4 RTT + 2 SQL + 1 commit = 2.9 ms at RTT 0.5 ms); the rest grows
    # with the rows (an assumption; notebook 01 shows the range over which the verdict holds)
    per_batch_ms: float = capacity.lock_hold_ms(0.5)
    # "除了set autocommit和commit后的那仅有的RTT": 2 round trips of each cycle outside the lock
    outside_ms: float = 2 * 0.5
    # "对一个特定的hotKey采用的是单Server中的单线程处理的方案": one server …
    servers: int = 1
    # … and one thread on it
    threads_per_server: int = 1
    # simulated time, warm-up excluded from the summary, and the event cap
    horizon_ms: float = 20_000.0
    warmup_ms: float = 2_000.0
    window_ms: float = 1_000.0
    max_events: int = 3_000_000

    def __post_init__(self):
        check_number("rate_per_s", self.rate_per_s, low=0.0, high=1e6)
        object.__setattr__(self, "max_rows", check_int("max_rows", self.max_rows, low=1, high=100_000))
        check_number("max_wait_ms", self.max_wait_ms, low=0.0)
        check_number("commit_ms", self.commit_ms, low=0.0, low_open=True)
        check_number("rows_at_commit_ms", self.rows_at_commit_ms, low=0.0, low_open=True, high=100_000)
        check_number("per_batch_ms", self.per_batch_ms, low=0.0, high=self.commit_ms)
        check_number("outside_ms", self.outside_ms, low=0.0, high=self.per_batch_ms, high_open=True)
        object.__setattr__(self, "servers", check_int("servers", self.servers, low=1, high=1000))
        object.__setattr__(self, "threads_per_server", check_int("threads_per_server", self.threads_per_server, low=1, high=1000))
        check_number("horizon_ms", self.horizon_ms, low=0.0, low_open=True)
        check_number("warmup_ms", self.warmup_ms, low=0.0, high=self.horizon_ms, high_open=True)
        check_number("window_ms", self.window_ms, low=0.0, high=self.horizon_ms, low_open=True)
        object.__setattr__(self, "max_events", check_int("max_events", self.max_events, low=1))

    @property
    def per_row_ms(self) -> float:
        """Cost of one more row in a merged commit (ms): ``(commit_ms − per_batch_ms) / rows_at_commit_ms``."""
        return (self.commit_ms - self.per_batch_ms) / self.rows_at_commit_ms

    def n_ms(self, rows) -> float:
        """N(rows): the cycle of one merged commit of ``rows`` rows, ``per_batch_ms + per_row_ms × rows``."""
        return self.per_batch_ms + self.per_row_ms * rows

    def with_fixed_share(self, share: float) -> GroupCommit:
        """The same scenario with ``share`` of the calibrated N paid per batch (0 < share <= 1;
        1 = the same N for every batch)."""
        f = check_number("share", share, low=0.0, high=1.0, low_open=True)
        return replace(self, per_batch_ms=max(f * self.commit_ms, self.outside_ms + 1e-9))


@dataclass(frozen=True)
class OpenLoop:
    """Poisson transactions on the hot row's lock (M/D/1; M/G/1 when ``hold_cv > 0``), in ms."""

    # transactions/s offered to the lock (set by load: rate = ρ × 1000 / hold_ms)
    rate_per_s: float = 0.5 * capacity.tps_ceiling(HotRow().hold_ms)
    # the seed's row at "rtt为0.5ms", "0.3ms": of the 2.9 ms cycle, 2 RTT + 3 × 0.3 ms = 1.9 ms
    # hold the lock (SELECT reply, UPDATE round trip, COMMIT's way in, the statements)
    hold_ms: float = HotRow().hold_ms
    # 0: every hold the same (M/D/1); 1: exponential holds (M/M/1)
    hold_cv: float = 0.0
    horizon_ms: float = 60_000.0
    warmup_ms: float = 1_000.0
    max_events: int = 5_000_000

    def __post_init__(self):
        check_number("rate_per_s", self.rate_per_s, low=0.0, high=1e7)
        check_number("hold_ms", self.hold_ms, low=0.0, low_open=True)
        check_number("hold_cv", self.hold_cv, low=0.0, high=10.0)
        check_number("horizon_ms", self.horizon_ms, low=0.0, low_open=True)
        check_number("warmup_ms", self.warmup_ms, low=0.0, high=self.horizon_ms, high_open=True)
        object.__setattr__(self, "max_events", check_int("max_events", self.max_events, low=1))

    @property
    def rho(self) -> float:
        """Offered utilisation of the lock, ρ = λ × hold."""
        return capacity.utilisation(self.rate_per_s, self.hold_ms)

    def at_load(self, rho: float, **changes) -> OpenLoop:
        """The same scenario with ``rate_per_s`` set so that ρ = ``rho``."""
        r = check_number("rho", rho, low=0.0)
        return replace(self, rate_per_s=r * 1000.0 / self.hold_ms, **changes)

    def closed_form_wait_ms(self) -> float:
        """Pollaczek–Khinchine mean wait for the lock (inf when ρ >= 1)."""
        return capacity.pk_mean_wait_ms(self.rate_per_s, self.hold_ms, self.hold_cv**2)


#: The seed's row at RTT 0.5 ms: a 2.9 ms cycle (one thread: 344.8 TPS, the seed's 345), of which
#: 1.9 ms hold the lock (ceiling 526.3 TPS for two threads or more).
SEED_ROW = HotRow()
#: "一旦rtt为1.5ms": the same row from the other datacentre (6.9 ms cycle, one thread 144.9 TPS).
SEED_ROW_CROSS_DC = HotRow(rtt_ms=1.5)
#: The seed's merged commit as one serial cycle: "在RTT为0.5ms的情况下平均耗时为16ms左右". The seed's
#: two measurements (16 ms at 0.5, 27 ms at 1.5) fit 11 round trips + 10.5 ms that do not depend on
#: the RTT (:func:`hotkeylab.capacity.fit_round_trips`); the 10.5 ms are written as 35 × 0.3 ms
#: (an assumption: all of it under the lock). Outside the lock the same 2 round trips as above.
SEED_MERGED = HotRow(round_trips=11, statements=35)
#: The seed's group commit: 20 rows / 20 ms, N = 16 ms at the mean batch (≈ 13 rows at 600/s),
#: of which 2.9 ms per batch and ≈ 1.0 ms per row; one server, one thread.
SEED_GROUP_COMMIT = GroupCommit()
#: The same with N = 16 ms for every batch whatever its rows (the account before N(rows)).
SEED_GROUP_COMMIT_FIXED_N = GroupCommit(per_batch_ms=16.0)
#: Poisson transactions on the seed's row at half its capacity.
SEED_LOCK = OpenLoop()


# =========================================================================== shared bits
@dataclass(frozen=True)
class LockInterval:
    """``owner`` holds (or waits for) the lock from ``start`` to ``end`` (ms)."""

    owner: str
    start: float
    end: float


def _holds(rng: np.random.Generator, mean_ms: float, cv: float, n: int) -> np.ndarray:
    """``n`` hold times with mean ``mean_ms`` and coefficient of variation ``cv`` (gamma)."""
    if cv == 0:
        return np.full(n, mean_ms)
    shape = 1.0 / cv**2
    return rng.gamma(shape, mean_ms / shape, size=n)


def _latency_stats(lat: np.ndarray) -> dict:
    if lat.size == 0:
        return {"mean_latency_ms": math.nan, "p50_latency_ms": math.nan, "p99_latency_ms": math.nan}
    return {
        "mean_latency_ms": float(lat.mean()),
        "p50_latency_ms": float(np.percentile(lat, 50)),
        "p99_latency_ms": float(np.percentile(lat, 99)),
    }


# =========================================================================== (a) closed loop
@dataclass
class ClosedLoopRun:
    """One closed-loop run: per-transaction arrays, lock intervals, ledger and summary."""

    scenario: HotRow
    seed: int
    status: sim.RunStatus
    ledger: sim.Ledger
    holds: list  # LockInterval: who holds the row when
    waits: list  # LockInterval: who waits for the row when
    outside: list  # LockInterval: who is on the network outside the lock when
    commit_ms: np.ndarray  # time each COMMIT reply reached its thread
    latency_ms: np.ndarray  # begin → COMMIT reply, transactions begun after warm-up
    wait_ms: np.ndarray  # time spent waiting for the lock, same transactions
    summary: dict = field(default_factory=dict)

    @property
    def tps(self) -> float:
        return self.summary["tps"]

    @property
    def mean_latency_ms(self) -> float:
        return self.summary["mean_latency_ms"]


class _Book:
    """Mutable counters shared by one run's processes."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


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
    book = _Book(begun=0, active=0, committed=0, commits=[], hold_iv=[], wait_iv=[], out_iv=[], lat=[], wait=[],
                 holding=None)
    cycle = sc.cycle_ms
    # enough hold draws for a thread that never waits; cycled if a run is longer
    per_thread = int(min(sc.horizon_ms / max(cycle, 1e-9) + 2, 200_000))
    offsets = rng.uniform(0.0, cycle, size=sc.threads)

    def start(name, offset, holds):
        yield env.timeout(offset)
        yield env.process(worker_thread(env, name, row_lock, sc, holds, book))

    for i in range(sc.threads):
        holds = _holds(rng, sc.hold_ms, sc.hold_cv, per_thread)
        env.process(start(f"thread {i + 1}", float(offsets[i]), holds))
    status = sim.run_bounded(env, sc.horizon_ms, sc.max_events)
    ledger = sim.Ledger(arrived=book.begun, served=book.committed, in_system=book.active).check()
    commits = np.asarray(book.commits)
    t_end_run = status.t_end_ms if status.truncated else sc.horizon_ms
    busy = sum(max(0.0, min(iv.end, t_end_run) - max(iv.start, sc.warmup_ms)) for iv in book.hold_iv)
    if book.holding is not None:  # the hold still running at the end
        busy += max(0.0, t_end_run - max(sc.warmup_ms, book.holding))
    t_end = status.t_end_ms if status.truncated else sc.horizon_ms
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
        **_latency_stats(lat),
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


def closed_loop_tps(scenario: HotRow, threads: int | None = None) -> float:
    """Closed form: ``min(threads × 1000 / cycle, 1000 / hold)`` transactions/s
    (:func:`hotkeylab.capacity.closed_loop_tps`).

    With few threads each one's own cycle limits it (one thread: ``1000 / cycle``, the seed's
    345 TPS); once the lock is never idle, the row's ceiling ``1000 / hold`` does, however many
    threads wait. Only the ``cycle − hold`` outside the lock can overlap with another thread's hold.
    """
    n = scenario.threads if threads is None else check_int("threads", threads, low=1)
    return capacity.closed_loop_tps(n, scenario.cycle_ms, scenario.hold_ms)


def closed_loop_latency_ms(scenario: HotRow, threads: int | None = None) -> float:
    """Little's law for the closed loop: latency ``W = threads / TPS`` (ms); at the plateau
    that is ``threads × hold``."""
    n = scenario.threads if threads is None else check_int("threads", threads, low=1)
    return n * 1000.0 / closed_loop_tps(scenario, n)


@dataclass
class ThreadsSweep:
    """TPS and latency against the number of worker threads, simulated and closed form."""

    scenario: HotRow
    threads: np.ndarray
    tps: np.ndarray
    latency_ms: np.ndarray
    tps_closed_form: np.ndarray
    latency_closed_form_ms: np.ndarray
    ceiling_tps: float
    runs: list = field(default_factory=list, repr=False)


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


# =========================================================================== (c) group commit
class _Request:
    __slots__ = ("t_arrive", "done")

    def __init__(self, t_arrive, done):
        self.t_arrive = t_arrive
        self.done = done


class _Batch:
    __slots__ = ("rows", "t_open", "t_close", "reason")

    def __init__(self, rows, t_open, t_close, reason):
        self.rows, self.t_open, self.t_close, self.reason = rows, t_open, t_close, reason


@dataclass
class GroupCommitRun:
    """One group-commit run: windowed series, per-batch and per-request arrays, ledger, summary.

    ``windows`` (per second unless noted): ``t`` (s), ``offered`` (requests/s), ``served`` (rows
    committed/s), ``batches`` (batches closed/s), ``queue`` (batches waiting, mean),
    ``lock_waiters`` (hot-key threads waiting for the row lock, mean).
    """

    scenario: GroupCommit
    seed: int
    status: sim.RunStatus
    ledger: sim.Ledger
    windows: dict
    batch_rows: np.ndarray  # rows per batch closed after warm-up
    batch_by_timer: np.ndarray  # True if that batch closed on the max_wait_ms timer
    batch_close_ms: np.ndarray  # when each of those batches closed
    latency_ms: np.ndarray  # client latency (arrival → commit) of requests after warm-up
    summary: dict = field(default_factory=dict)


def group_commit_batch_rate(scenario: GroupCommit) -> float:
    """Closed form: batches/s reaching the row lock, ``servers × batcher_batch_rate(λ / servers)``
    (each server's batcher sees its share of the Poisson requests)."""
    s = scenario.servers
    return float(s * capacity.batcher_batch_rate(scenario.rate_per_s / s, scenario.max_rows, scenario.max_wait_ms))


def group_commit_rho(scenario: GroupCommit) -> dict:
    """Closed form: how busy the hot-key threads and the row lock are, per unit time.

    With batch rate ``B`` (:func:`group_commit_batch_rate`) and every request landing in one batch,
    the rows cost ``λ × per_row_ms`` and the batches ``B × per_batch_ms`` per second, so

    - ``rho_thread = (B/s × per_batch_ms + λ/s × per_row_ms) / (1000 × k)`` for the k hot-key
      threads of each of the s servers (their cycles are the whole N);
    - ``rho_lock = (B × (per_batch_ms − outside_ms) + λ × per_row_ms) / 1000`` for the row lock
      (held for N − outside);
    - ``rho = max(rho_thread, rho_lock)``: the queue grows without bound once it reaches 1.

    Also ``mean_n_ms``, the mean N of a batch at this load.
    """
    sc = scenario
    b = group_commit_batch_rate(sc)
    lam = sc.rate_per_s
    thread = (b * sc.per_batch_ms + lam * sc.per_row_ms) / (1000.0 * sc.servers * sc.threads_per_server)
    lock = (b * (sc.per_batch_ms - sc.outside_ms) + lam * sc.per_row_ms) / 1000.0
    mean_n = sc.per_batch_ms + sc.per_row_ms * (lam / b) if b > 0 else sc.per_batch_ms
    return {"rho": max(thread, lock), "rho_thread": thread, "rho_lock": lock, "mean_n_ms": mean_n}


def overload_share(scenario: GroupCommit) -> float:
    """Closed form: the share of the calibrated N paid per batch above which this scenario's
    ``rho`` (:func:`group_commit_rho`) reaches 1. ``rho`` is linear in ``per_batch_ms`` within each
    of its two terms, so this solves both lines and keeps the smaller root; ``inf`` if no share
    in (0, 1] overloads it, 0 if every share does."""
    sc = scenario
    lo, hi = sc.outside_ms + 1e-6, sc.commit_ms
    roots = []
    for key in ("rho_thread", "rho_lock"):
        a = group_commit_rho(replace(sc, per_batch_ms=lo))[key]
        b = group_commit_rho(replace(sc, per_batch_ms=hi))[key]
        if a >= 1:
            roots.append(0.0)
        elif b > a:
            roots.append((lo + (1.0 - a) / (b - a) * (hi - lo)) / sc.commit_ms)
    inside = [r for r in roots if r <= 1.0]
    return min(inside) if inside else math.inf


def user_requests(env, sc: GroupCommit, rng, inboxes, book):
    """Poisson user requests for the hot key; clients hash to one of the servers."""
    mean_gap = 1000.0 / sc.rate_per_s if sc.rate_per_s > 0 else math.inf
    chunk = 4096
    while True:
        gaps = rng.exponential(mean_gap, size=chunk)
        where = rng.integers(0, len(inboxes), size=chunk)
        for g, s in zip(gaps, where, strict=True):
            yield env.timeout(float(g))
            env.process(client(env, inboxes[int(s)], book))


def client(env, inbox, book):
    """One user request: hand the row to the server's batcher, wait for its merged commit."""
    req = _Request(env.now, env.event())
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


def batcher(env, sc: GroupCommit, inbox, queue, book):
    """Close a batch at ``max_rows`` rows or ``max_wait_ms`` after its first row, whichever first."""
    while True:
        first = yield inbox.get()  # a batch opens with its first row …
        t_open = env.now
        timer = env.timeout(sc.max_wait_ms)  # … and its timer starts now
        rows = [first]
        reason = "rows"
        while len(rows) < sc.max_rows:
            get = inbox.get()
            yield get | timer
            if get.triggered:  # a row arrived (possibly at the same instant as the timer)
                rows.append(get.value)
            else:
                get.cancel()
                reason = "timer"
                break
        batch = _Batch(rows, t_open, env.now, reason)
        book.rec.count("batches", env.now)
        if env.now >= book.warmup_ms:
            book.batch_rows.append(len(rows))
            book.batch_timer.append(reason == "timer")
            book.batch_close.append(env.now)
        book.queued += 1
        book.rec.level("queue", env.now, book.queued)
        yield queue.put(batch)


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
    book = _Book(
        arrived=0, served=0, in_system=0, queued=0, waiters=0, busy=0.0, rec=rec,
        warmup_ms=sc.warmup_ms, lat=[], batch_rows=[], batch_timer=[], batch_wait=[], batch_close=[],
    )  # fmt: skip
    inboxes = []
    for _ in range(sc.servers):
        inbox, queue = simpy.Store(env), simpy.Store(env)
        inboxes.append(inbox)
        env.process(batcher(env, sc, inbox, queue, book))
        for _ in range(sc.threads_per_server):
            env.process(hot_key_thread(env, sc, queue, row_lock, book))
    if sc.rate_per_s > 0:
        env.process(user_requests(env, sc, rng, inboxes, book))
    status = sim.run_bounded(env, sc.horizon_ms, sc.max_events)
    rec.close(status.t_end_ms)
    ledger = sim.Ledger(arrived=book.arrived, served=book.served, in_system=book.in_system).check()
    t_end = status.t_end_ms if status.truncated else sc.horizon_ms
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
        **_latency_stats(lat),
    }
    return GroupCommitRun(
        scenario=sc, seed=seed, status=status, ledger=ledger, windows=w,
        batch_rows=rows, batch_by_timer=timer, batch_close_ms=np.asarray(book.batch_close), latency_ms=lat,
        summary=summary,
    )  # fmt: skip


# =========================================================================== (d) M/D/1 on the lock
@dataclass
class OpenLoopRun:
    """Poisson transactions on the lock: arrival and wait of every transaction that got the lock."""

    scenario: OpenLoop
    seed: int
    engine: str
    status: sim.RunStatus
    ledger: sim.Ledger
    arrival_ms: np.ndarray  # transactions that got the lock before the horizon
    wait_ms: np.ndarray  # their wait for the lock
    summary: dict = field(default_factory=dict)

    @property
    def mean_wait_ms(self) -> float:
        return self.summary["mean_wait_ms"]


def poisson_arrivals_ms(rng, rate_per_s: float, horizon_ms: float, max_count: int) -> tuple[np.ndarray, bool]:
    """Poisson arrival times in ``[0, horizon_ms)``, at most ``max_count`` of them.

    Returns ``(times, truncated)``; ``truncated`` if the cap stopped the stream before the horizon.
    """
    rate = check_number("rate_per_s", rate_per_s, low=0.0)
    horizon = check_number("horizon_ms", horizon_ms, low=0.0)
    cap = check_int("max_count", max_count, low=0)
    if rate == 0 or horizon == 0:
        return np.empty(0), False
    mean_gap = 1000.0 / rate
    parts, t, n = [], 0.0, 0
    while True:
        k = min(cap - n, max(1024, int(1.1 * (horizon - t) / mean_gap) + 64))
        if k <= 0:
            return (np.concatenate(parts) if parts else np.empty(0)), True
        ts = t + np.cumsum(rng.exponential(mean_gap, size=k))
        inside = ts[: np.searchsorted(ts, horizon)]
        parts.append(inside)
        n += inside.size
        if inside.size < k:
            return np.concatenate(parts), False
        t = float(ts[-1])


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


def _open_loop_simpy(sc, arrivals, holds):
    env = simpy.Environment()
    row_lock = simpy.Resource(env, capacity=1)
    book = _Book(in_system=0, served=0, arrived=0, starts=[], waits=[])

    def source():
        for a, h in zip(arrivals, holds, strict=True):
            yield env.timeout(float(a) - env.now)
            book.arrived += 1
            env.process(transaction(env, float(a), float(h), row_lock, book))

    env.process(source())
    status = sim.run_bounded(env, sc.horizon_ms, sc.max_events)
    ledger = sim.Ledger(arrived=book.arrived, served=book.served, in_system=book.in_system)
    return status, ledger, np.asarray(book.starts), np.asarray(book.waits)


def _open_loop_fast(sc, arrivals, holds, truncated):
    """Lindley recursion in numpy: end_i = C_i + max_{k<=i}(a_k − C_{k−1}), C = cumsum(holds)."""
    if arrivals.size == 0:
        status = sim.RunStatus(t_end_ms=sc.horizon_ms, events=0, truncated=truncated)
        return status, sim.Ledger(), np.empty(0), np.empty(0)
    c = np.cumsum(holds)
    c_prev = np.concatenate(([0.0], c[:-1]))
    end = c + np.maximum.accumulate(arrivals - c_prev)
    start = end - holds
    t_end = float(arrivals[-1]) if truncated else sc.horizon_ms
    got = start <= t_end  # got the lock before the run ended
    served = int(np.count_nonzero(end <= t_end))
    ledger = sim.Ledger(arrived=int(arrivals.size), served=served, in_system=int(arrivals.size) - served)
    status = sim.RunStatus(t_end_ms=t_end, events=int(arrivals.size), truncated=truncated)
    return status, ledger, arrivals[got], (start - arrivals)[got]


def simulate_open_loop(scenario: OpenLoop = SEED_LOCK, seed: int = 0, engine: str = "fast", **changes) -> OpenLoopRun:
    """Poisson transactions on the lock; mean wait beside Pollaczek–Khinchine.

    Both engines draw the same arrival times and hold times from ``seed`` and give the same waits
    (``"simpy"``: one process per transaction and a ``simpy.Resource(1)``; ``"fast"``: numpy).
    The mean wait counts transactions that arrived after ``warmup_ms`` and got the lock.
    """
    sc = replace(scenario, **changes) if changes else scenario
    seed = sim.check_seed(seed)
    engine = check_choice("engine", engine, {"simpy", "fast"})
    rng = sim.make_rng(seed)
    # the SimPy engine spends about 5 events per transaction; the fast engine counts arrivals
    cap = sc.max_events // 5 if engine == "simpy" else sc.max_events
    arrivals, truncated = poisson_arrivals_ms(rng, sc.rate_per_s, sc.horizon_ms, cap)
    holds = _holds(rng, sc.hold_ms, sc.hold_cv, arrivals.size)
    if engine == "simpy":
        status, ledger, starts, waits = _open_loop_simpy(sc, arrivals, holds)
        if truncated and not status.truncated:
            status = replace(status, truncated=True)
    else:
        status, ledger, starts, waits = _open_loop_fast(sc, arrivals, holds, truncated)
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


# =========================================================================== figures and widgets
def plot_gantt(run: ClosedLoopRun, *, t_max_ms: float | None = None, max_threads: int = 12, ax=None):
    """Who holds the row when (solid bars, via :func:`hotkeylab.plotting.lock_gantt`), who waits
    for it (hatched) and who is on the network outside the lock (thin pale bars: begin, the
    SELECT's way in, the COMMIT reply's way back), for the first ``t_max_ms`` ms of a closed-loop
    run and the first ``max_threads`` threads."""
    from matplotlib.patches import Patch

    t_max = run.scenario.horizon_ms if t_max_ms is None else t_max_ms
    shown = [f"thread {i}" for i in range(1, min(run.scenario.threads, max_threads) + 1)]
    row = {o: i for i, o in enumerate(shown)}
    # a zero-length interval per thread gives every shown thread its row, in order
    holds = [LockInterval(o, 0.0, 0.0) for o in shown]
    holds += [iv for iv in run.holds if iv.start < t_max and iv.owner in row]
    if ax is None:
        _, ax = plotting.new_figure(height=0.8 + 0.35 * len(shown))
    plotting.lock_gantt(holds, ax=ax, colors=dict.fromkeys(shown, plotting.COLORS["owner_b"]))
    for iv in run.outside:
        if iv.start < t_max and iv.owner in row and iv.end > iv.start:
            ax.broken_barh([(iv.start, min(iv.end, t_max) - iv.start)], (row[iv.owner] - 0.12, 0.24),
                           facecolors=plotting.COLORS["owner_b"], alpha=0.3, lw=0)
    for iv in run.waits:
        if iv.start < t_max and iv.owner in row:
            ax.broken_barh(
                [(iv.start, min(iv.end, t_max) - iv.start)], (row[iv.owner] - 0.2, 0.4),
                facecolors="none", edgecolor=plotting.COLORS["capacity"], hatch="////", lw=0.5,
            )  # fmt: skip
    ax.set_xlim(0, t_max)
    if len(shown) > 8:
        ax.tick_params(axis="y", labelsize=7)
    hidden = run.scenario.threads - len(shown)
    drawn_waits = any(iv.start < t_max and iv.owner in row for iv in run.waits)
    drawn_outside = any(iv.start < t_max and iv.owner in row and iv.end > iv.start for iv in run.outside)
    ax.legend(
        handles=[Patch(color=plotting.COLORS["owner_b"], label="holds the row lock")]
        + ([Patch(facecolor="none", edgecolor=plotting.COLORS["capacity"], hatch="////", label="waits for it")]
           if drawn_waits else [])
        + ([Patch(color=plotting.COLORS["owner_b"], alpha=0.3, label="outside the lock (network)")]
           if drawn_outside else [])
        + ([Patch(color="none", label=f"({hidden} more threads not shown)")] if hidden > 0 else []),
        loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8,
    )  # fmt: skip
    return ax


def plot_threads(sweep: ThreadsSweep, *, axes=None, mark: int | None = None):
    """TPS and latency against worker threads: simulation (dots) and closed form (lines)."""
    if axes is None:
        _, axes = plotting.new_figure(1, 2, height=3.2)
    a1, a2 = axes
    a1.plot(sweep.threads, sweep.tps_closed_form, color=plotting.COLORS["formula"], lw=2, alpha=0.5,
            label="closed form")  # fmt: skip
    a1.plot(sweep.threads, sweep.tps, "o", color=plotting.COLORS["goodput"], ms=4, label="simulation")
    a1.axhline(sweep.ceiling_tps, color=plotting.COLORS["capacity"], ls="--", lw=1.5,
               label=f"ceiling 1000 / hold = {sweep.ceiling_tps:.1f}")  # fmt: skip
    a1.axhline(1000.0 / sweep.scenario.cycle_ms, color=plotting.COLORS["capacity"], ls=":", lw=1.5,
               label=f"one thread: 1000 / cycle = {1000.0 / sweep.scenario.cycle_ms:.1f}")  # fmt: skip
    plotting.decorate(a1, xlabel="worker threads", ylabel="transactions/s", ylim=(0, sweep.ceiling_tps * 1.25))
    a2.plot(sweep.threads, sweep.latency_closed_form_ms, color=plotting.COLORS["formula"], lw=2, alpha=0.5,
            label="Little's law: threads / TPS")  # fmt: skip
    a2.plot(sweep.threads, sweep.latency_ms, "o", color=plotting.COLORS["latency"], ms=4, label="simulation")
    plotting.decorate(a2, xlabel="worker threads", ylabel="latency per transaction (ms)", ylim=(0, None))
    if mark is not None:
        i = int(np.argmin(np.abs(sweep.threads - mark)))
        for ax, y in ((a1, sweep.tps[i]), (a2, sweep.latency_ms[i])):
            ax.plot([sweep.threads[i]], [y], "o", ms=11, mfc="none", mec="black", mew=1.5)
    return axes


def what_if_threads(rtt_ms: float = 0.5, round_trips: float = 4, threads: int = 8, statement_ms: float = 0.3,
                    seed: int = 0, show: bool = True) -> dict:  # fmt: skip
    """Widget callback: the hot row with these numbers (``round_trips`` per cycle, 2 of them outside
    the lock); draws the lock Gantt of the first ``6 × cycle`` ms and TPS/latency vs threads 1..32;
    returns the run's summary for ``threads``."""
    sc = replace(SEED_ROW, rtt_ms=rtt_ms, round_trips=round_trips, statement_ms=statement_ms, threads=threads)
    sweep = sweep_threads(sc, threads=sorted({1, 2, 4, 8, 16, 32, int(threads)}), seed=seed)
    run = sweep.runs[list(sweep.threads).index(int(threads))]
    if show:
        import matplotlib.pyplot as plt

        fig = plt.figure(figsize=(9, 5.6))
        g = fig.add_gridspec(2, 2, height_ratios=(1.1, 1))
        plot_gantt(run, t_max_ms=min(sc.horizon_ms, 6 * sc.cycle_ms), ax=fig.add_subplot(g[0, :]))
        plot_threads(sweep, axes=(fig.add_subplot(g[1, 0]), fig.add_subplot(g[1, 1])), mark=int(threads))
        fig.tight_layout()
    return dict(run.summary)


def what_if_batching(rate_per_s: float = 600, max_rows: int = 20, max_wait_ms: float = 20,
                     commit_ms: float = 16, servers: int = 1,
                     fixed_share: float = SEED_GROUP_COMMIT.per_batch_ms / SEED_GROUP_COMMIT.commit_ms,
                     seed: int = 0, show: bool = True) -> dict:  # fmt: skip
    """Widget callback: the group commit with these numbers for 10 simulated seconds (N =
    ``commit_ms`` at the calibration batch, ``fixed_share`` of it paid per batch); draws the
    batch-size histogram and the client-latency histogram; returns the run's summary."""
    sc = replace(
        SEED_GROUP_COMMIT, rate_per_s=rate_per_s, max_rows=max_rows, max_wait_ms=max_wait_ms,
        commit_ms=commit_ms, per_batch_ms=commit_ms, servers=servers, horizon_ms=10_000.0, warmup_ms=1_000.0,
    ).with_fixed_share(fixed_share)  # fmt: skip
    run = simulate_group_commit(sc, seed)
    s = run.summary
    if show:
        fig, (a1, a2) = plotting.new_figure(1, 2, height=3.2)
        if run.batch_rows.size:
            bins = np.arange(0.5, max(run.batch_rows.max(), sc.max_rows) + 1.5)
            a1.hist(run.batch_rows, bins=bins, color=plotting.COLORS["queue"], alpha=0.8)
        a1.axvline(sc.max_rows, color=plotting.COLORS["capacity"], ls="--", lw=1.5, label="max_rows")
        plotting.decorate(a1, xlabel="rows per batch", ylabel="batches")
        if run.latency_ms.size:
            a2.hist(run.latency_ms, bins=40, color=plotting.COLORS["latency"], alpha=0.8)
            a2.axvline(s["mean_latency_ms"], color="black", lw=1.5, label=f"mean {s['mean_latency_ms']:.1f} ms")
        plotting.decorate(a2, xlabel="client latency (ms)", ylabel="requests")
        state = "OVERLOADED, the queue grows" if s["rho"] >= 1 else "stable"
        fig.text(
            0.01, 0.99,
            f"{s['batch_rate_per_s']:.1f} batches/s (formula {s['batch_rate_closed_form']:.1f}), "
            f"{100 * s['timer_share']:.0f}% closed by the timer, ρ (closed form) = {s['rho']:.2f}: {state}",
            va="top", fontsize=9,
        )  # fmt: skip
        fig.tight_layout(rect=(0, 0, 1, 0.93))
    return dict(s)


def widget_threads():
    """The notebook's what-if widget over :func:`what_if_threads` (RTT, round trips, threads)."""
    import ipywidgets as w

    style = {"description_width": "110px"}
    return w.interactive(
        what_if_threads,
        {"manual": False},
        rtt_ms=w.FloatSlider(value=0.5, min=0.1, max=3.0, step=0.1, description="RTT (ms)", style=style),
        round_trips=w.IntSlider(value=4, min=2, max=20, description="round trips", style=style),
        threads=w.IntSlider(value=8, min=1, max=32, description="worker threads", style=style),
        statement_ms=w.fixed(0.3),
        seed=w.fixed(0),
        show=w.fixed(True),
    )


def widget_batching():
    """The notebook's what-if widget over :func:`what_if_batching` (load, batch limits, N, the share
    of N paid per batch, servers)."""
    import ipywidgets as w

    style = {"description_width": "110px"}
    return w.interactive(
        what_if_batching,
        {"manual": False},
        rate_per_s=w.IntSlider(value=600, min=100, max=1500, step=50, description="requests/s", style=style),
        max_rows=w.IntSlider(value=20, min=1, max=40, description="max_rows", style=style),
        max_wait_ms=w.IntSlider(value=20, min=0, max=60, description="max_wait_ms", style=style),
        commit_ms=w.IntSlider(value=16, min=2, max=40, description="N (ms)", style=style),
        fixed_share=w.FloatSlider(value=round(SEED_GROUP_COMMIT.per_batch_ms / SEED_GROUP_COMMIT.commit_ms, 2),
                                  min=0.1, max=1.0, step=0.01, description="per-batch share", style=style),
        servers=w.IntSlider(value=1, min=1, max=3, description="servers", style=style),
        seed=w.fixed(0),
        show=w.fixed(True),
    )
