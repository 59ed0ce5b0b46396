"""01 · The scenarios: the hot row under worker threads, the seed's group commit, and Poisson
transactions on the row lock (times in ms).

Each field's range is declared once, on the field (:func:`hotkeylab.validate.param`); every preset
line quotes the seed sentence it stands for, or says the value is assumed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .. import capacity
from ..validate import check_fields, check_number, param

# Event caps: the upper end of each model's ``max_events``, so that one run at its cap ends in
# about 10-15 s on the 2-core CI machine even under load (measured there with other work running:
# 25-40 µs per SimPy event for the closed loop and the group commit; about 0.7 µs and 80 bytes
# per arrival for the open loop's numpy engine, whose cap counts arrivals). A run that reaches its
# cap ends with ``status.truncated``.
MAX_EVENTS_THREADS = 300_000
MAX_EVENTS_GROUP_COMMIT = 500_000
MAX_ARRIVALS_OPEN_LOOP = 2_000_000
#: The open loop's SimPy engine stops at this many events whatever ``max_events`` allows (about
#: 40 µs per event once transactions pile up on the lock), also with ``status.truncated``.
MAX_EVENTS_OPEN_LOOP_SIMPY = 400_000
#: Upper end of the closed loop's times (ms) and counts per cycle: far beyond any real RTT or
#: transaction, and small enough that a cycle (round trips × RTT + statements × statement time)
#: stays a finite number the random start offsets can be drawn within.
MAX_CYCLE_PART = 1e6


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
    rtt_ms: float = param(0.5, low=0.0, high=MAX_CYCLE_PART)
    # "我们的单次耗时为4次rtt+2条SQL耗时+1次commit耗时": round trips of one cycle (begin/set
    # autocommit, SELECT … FOR UPDATE, UPDATE, COMMIT); each batchInsert chunk would add one
    round_trips: float = param(4, low=0.0, high=MAX_CYCLE_PART)
    # same sentence: 2 SQL statements + 1 commit = 3 statements, all executed while the lock is held
    statements: float = param(3, low=0.0, high=MAX_CYCLE_PART)
    # "commit和SQL耗时为0.3ms"
    statement_ms: float = param(0.3, low=0.0, high=MAX_CYCLE_PART)
    # "基本不存在时间交叠的空间(除了set autocommit和commit后的那仅有的RTT)": the round trips of the
    # cycle spent outside the lock, 1 (begin) + ½ (SELECT's way in) + ½ (COMMIT reply's way back)
    outside_round_trips: float = param(2, low=0.0)
    # "多线程无法突破MySQL锁等待导致的TPS上限": the number we vary, 1..32 worker threads
    threads: int = param(1, kind="int", low=1, high=10_000)
    # not in the seed: coefficient of variation of the hold time (0 = every hold is the same)
    hold_cv: float = param(0.0, low=0.0, high=10.0)
    # simulated time and the event cap that bound every run
    horizon_ms: float = param(1000.0, low=0.0, low_open=True)
    warmup_ms: float = param(100.0, low=0.0)
    max_events: int = param(MAX_EVENTS_THREADS, kind="int", low=1, high=MAX_EVENTS_THREADS)

    def __post_init__(self):
        check_fields(self)
        check_number("outside_round_trips", self.outside_round_trips, low=0.0, high=self.round_trips)
        check_number("warmup_ms", self.warmup_ms, low=0.0, high=self.horizon_ms, high_open=True)
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
    rate_per_s: float = param(600.0, low=0.0, high=1e6)
    # "以固定条数(最高20条)/固定时间间隔(最高20ms)的形式合并提交": at most 20 rows per batch …
    max_rows: int = param(20, kind="int", low=1, high=100_000)
    # … or at most 20 ms after the batch's first row
    max_wait_ms: float = param(20.0, low=0.0)
    # "在RTT为0.5ms的情况下平均耗时为16ms左右": one merged commit takes N = 16 ms on average …
    commit_ms: float = param(16.0, low=0.0, low_open=True)
    # … which we place at the mean batch of our 600/s load (an assumption: the seed gives no rows)
    rows_at_commit_ms: float = param(CALIBRATION_ROWS, low=0.0, low_open=True, high=100_000)
    # the part of N paid once per batch: the seed's transaction without batchInsert
    # ("首先不考虑batchInsert": 4 RTT + 2 SQL + 1 commit = 2.9 ms at RTT 0.5 ms); the rest grows
    # with the rows (an assumption; notebook 01 shows the range over which the verdict holds)
    per_batch_ms: float = param(capacity.lock_hold_ms(0.5), low=0.0)
    # "除了set autocommit和commit后的那仅有的RTT": 2 round trips of each cycle outside the lock
    outside_ms: float = param(2 * 0.5, low=0.0)
    # "对一个特定的hotKey采用的是单Server中的单线程处理的方案": one server …
    servers: int = param(1, kind="int", low=1, high=1000)
    # … and one thread on it
    threads_per_server: int = param(1, kind="int", low=1, high=1000)
    # simulated time, warm-up excluded from the summary, and the event cap
    horizon_ms: float = param(20_000.0, low=0.0, low_open=True)
    warmup_ms: float = param(2_000.0, low=0.0)
    window_ms: float = param(1_000.0, low=0.0, low_open=True)
    max_events: int = param(MAX_EVENTS_GROUP_COMMIT, kind="int", low=1, high=MAX_EVENTS_GROUP_COMMIT)

    def __post_init__(self):
        check_fields(self)
        check_number("per_batch_ms", self.per_batch_ms, low=0.0, high=self.commit_ms)
        check_number("outside_ms", self.outside_ms, low=0.0, high=self.per_batch_ms, high_open=True)
        check_number("warmup_ms", self.warmup_ms, low=0.0, high=self.horizon_ms, high_open=True)
        check_number("window_ms", self.window_ms, low=0.0, high=self.horizon_ms, low_open=True)

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
    rate_per_s: float = param(0.5 * capacity.tps_ceiling(HotRow().hold_ms), low=0.0, high=1e7)
    # the seed's row at "rtt为0.5ms", "0.3ms": of the 2.9 ms cycle, 2 RTT + 3 × 0.3 ms = 1.9 ms
    # hold the lock (SELECT reply, UPDATE round trip, COMMIT's way in, the statements)
    hold_ms: float = param(HotRow().hold_ms, low=0.0, low_open=True)
    # 0: every hold the same (M/D/1); 1: exponential holds (M/M/1)
    hold_cv: float = param(0.0, low=0.0, high=10.0)
    horizon_ms: float = param(60_000.0, low=0.0, low_open=True)
    warmup_ms: float = param(1_000.0, low=0.0)
    max_events: int = param(MAX_ARRIVALS_OPEN_LOOP, kind="int", low=1, high=MAX_ARRIVALS_OPEN_LOOP)

    def __post_init__(self):
        check_fields(self)
        check_number("warmup_ms", self.warmup_ms, low=0.0, high=self.horizon_ms, high_open=True)

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
