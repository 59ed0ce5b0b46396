"""01b · The hot row on a real database: a private MariaDB/InnoDB instance under the seed's transaction.

Notebook 01 models the hot row as a lock held for ``round trips × RTT + statements × SQL time``
(:func:`hotkeylab.capacity.lock_hold_ms`) and predicts that the row admits at most
``1000 / hold`` transactions per second however many threads push on it
(:func:`hotkeylab.capacity.tps_ceiling`). This module checks that against the real thing.

- :class:`Instance` starts a private ``mariadbd`` (temporary datadir, loopback only, a free port,
  no system service) and stops it by its pid file. A missing MariaDB raises
  :class:`MariaDBNotFound`, which says how to install it.
- :func:`run_experiment` runs the seed's transaction (seed 000, "SQL示意代码")::

      BEGIN;
      SELECT count FROM t_account WHERE account_id = 123 FOR UPDATE;   -- the row lock
      INSERT INTO t_trans VALUES (…), (…), …;                          -- batchInsert, 20 rows each
      UPDATE t_account SET count = count + <rows> WHERE account_id = 123;
      COMMIT;

  from ``threads`` client threads (PyMySQL, one connection each). The network is emulated on the
  client: a sleep of ``rtt_ms`` before every statement sent while the row lock is held (each
  INSERT, the UPDATE and the COMMIT), so the lock is held ``(inserts + 2)`` round trips, as it would
  be over a real link. That is notebook 01's account plus the INSERTs: the lock is taken when the
  SELECT executes and released when the COMMIT executes, so a real link holds it for the SELECT
  reply's way back (½ RTT), each INSERT (1), the UPDATE (1) and the COMMIT's way in (½); the sleeps
  place each whole RTT before a statement, which moves the half-trips but keeps their sum. Outside
  the lock a real link adds 2 RTT (``begin`` 1, the SELECT's way in ½, the COMMIT reply's way back
  ½); ``rtt_outside_lock=True`` sleeps one RTT before BEGIN and one before the SELECT for them. Each run records TPS, the measured hold (lock granted → COMMIT returned),
  the wait to acquire the lock, the COMMIT time, the measured length of the sleeps, and checks
  nothing was lost: rows the clients committed = the row's counter increase = rows in ``t_trans``.
- ``shared_row=False`` is the control: each worker updates its own row, so there is no hot row and
  TPS shows what the client and server can do without the lock.
- :func:`run_grid` sweeps threads × RTT × statements; ``python -m hotkeylab.db_lab`` (``make db-lab``)
  writes the results and the machine description to ``hotkeylab/data/db_lab_runs.csv`` and one run's
  lock grants and COMMIT returns to ``hotkeylab/data/db_lab_trace.csv``. Notebooks read those files
  (:func:`load_runs`, :func:`load_trace`) and run without a database.

Times are in ms in the API and the files. Two departures from the model are measured, not hidden:
InnoDB releases the row lock before the COMMIT's log flush returns to the client (see
:func:`early_release_fraction`), and ``time.sleep`` overshoots, so the model is fed the measured
sleep, not the nominal RTT.
"""

from __future__ import annotations

import atexit
import datetime as _dt
import math
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from . import capacity
from .csvdata import read_commented_csv, write_commented_csv
from .validate import check_choice, check_int, check_number

__all__ = [
    "MariaDBNotFound",
    "Instance",
    "Experiment",
    "RunResult",
    "TxnTrace",
    "find_mariadb",
    "available",
    "run_experiment",
    "run_grid",
    "quick_check",
    "early_release_fraction",
    "median_run",
    "statements_series",
    "ORDERS",
    "Parts",
    "measured_parts",
    "plot_hold_budget",
    "what_if_orders",
    "machine_description",
    "write_runs",
    "write_trace",
    "load_runs",
    "load_trace",
    "DATA_DIR",
    "RUNS_CSV",
    "TRACE_CSV",
    "INSTALL_HINT",
]

DATA_DIR = Path(__file__).resolve().parent / "data"
RUNS_CSV = DATA_DIR / "db_lab_runs.csv"
TRACE_CSV = DATA_DIR / "db_lab_trace.csv"

INSTALL_HINT = (
    "install MariaDB's server to run the live lab: `sudo apt-get install mariadb-server` "
    "(Debian/Ubuntu), `sudo dnf install mariadb-server` (Fedora) or `brew install mariadb` (macOS); "
    "no service needs to run, the lab starts its own private instance. The notebooks work without "
    "it, from the committed results in hotkeylab/data/."
)

_SBIN = ("/usr/sbin", "/usr/local/sbin", "/usr/libexec", "/opt/homebrew/bin", "/usr/local/bin")


class MariaDBNotFound(RuntimeError):
    """``mariadbd`` / ``mariadb-install-db`` (or the PyMySQL client) is not installed."""


# =========================================================================== finding MariaDB
def _which(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for d in _SBIN:
        p = Path(d) / name
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


def find_mariadb() -> tuple[str, str]:
    """Paths of ``(mariadbd, mariadb-install-db)``; :class:`MariaDBNotFound` saying how to install."""
    server = _which("mariadbd") or _which("mysqld")
    install = _which("mariadb-install-db") or _which("mysql_install_db")
    if server is None or install is None:
        missing = "mariadbd" if server is None else "mariadb-install-db"
        raise MariaDBNotFound(f"{missing} not found on PATH or in {', '.join(_SBIN[:2])}: {INSTALL_HINT}")
    return server, install


def _pymysql():
    try:
        import pymysql
    except ImportError as exc:  # pragma: no cover - the dev extra installs it
        raise MariaDBNotFound(
            "the PyMySQL client is not installed: `pip install pymysql` (it is in hotkeylab's [dev] extra)"
        ) from exc
    return pymysql


def available() -> tuple[bool, str]:
    """``(True, "")`` when a live experiment can run here, else ``(False, reason)``."""
    try:
        find_mariadb()
        _pymysql()
    except MariaDBNotFound as exc:
        return False, str(exc)
    return True, ""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# =========================================================================== the private instance
_LIVE: set = set()  # instances started and not yet stopped, stopped at interpreter exit


@atexit.register
def _stop_leftovers() -> None:  # pragma: no cover - only on an abnormal exit
    for inst in list(_LIVE):
        inst.stop()


class Instance:
    """A private MariaDB server: temporary datadir, 127.0.0.1 only, a free port, no system service.

    Use it as a context manager (``with Instance() as db: …``): it is stopped by its pid file and its
    datadir removed on exit, even after an error. ``database`` holds the lab's schema.
    """

    database = "hotkeylab"

    def __init__(self, startup_timeout_s: float = 60.0, buffer_pool_mb: int = 128):
        self.startup_timeout_s = check_number("startup_timeout_s", startup_timeout_s, low=1.0, high=600.0)
        self.buffer_pool_mb = check_int("buffer_pool_mb", buffer_pool_mb, low=16, high=65536)
        self.server, self.install_db = find_mariadb()
        self.pymysql = _pymysql()
        self.datadir: Path | None = None
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self.version = ""
        self.isolation = ""

    # ------------------------------------------------------------------ lifecycle
    @property
    def pid_file(self) -> Path:
        return self.datadir.parent / "mariadbd.pid"

    @property
    def error_log(self) -> Path:
        return self.datadir.parent / "error.log"

    def start(self) -> Instance:
        if self.proc is not None:
            return self
        root = Path(tempfile.mkdtemp(prefix="hotkeylab-mariadb-"))
        self.datadir = root / "data"
        as_root = hasattr(os, "geteuid") and os.geteuid() == 0
        user = ["--user=root"] if as_root else []
        init = subprocess.run(
            [self.install_db, "--no-defaults", f"--datadir={self.datadir}", *user,
             "--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve"],
            capture_output=True, text=True, timeout=300,
        )
        if init.returncode != 0:
            shutil.rmtree(root, ignore_errors=True)
            raise RuntimeError(f"mariadb-install-db failed ({init.returncode}): {init.stderr[-2000:]}")
        self.port = _free_port()
        cmd = [
            self.server, "--no-defaults", f"--datadir={self.datadir}", f"--socket={root / 'mysql.sock'}",
            f"--port={self.port}", "--bind-address=127.0.0.1", *user, "--skip-grant-tables",
            f"--pid-file={self.pid_file}", f"--log-error={self.error_log}", "--skip-name-resolve",
            f"--innodb-buffer-pool-size={self.buffer_pool_mb}M", "--innodb-flush-log-at-trx-commit=1",
            "--max-connections=600", "--innodb-lock-wait-timeout=50",
        ]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True, preexec_fn=_die_with_parent)
        _LIVE.add(self)
        deadline = time.monotonic() + self.startup_timeout_s
        while True:
            try:
                conn = self._connect(database=None)
                break
            except self.pymysql.err.OperationalError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    log = self.error_log.read_text(errors="replace")[-2000:] if self.error_log.exists() else ""
                    self.stop()
                    raise RuntimeError(f"mariadbd did not start: {log}") from None
                time.sleep(0.05)
        with conn.cursor() as cur:
            cur.execute("SELECT VERSION(), @@tx_isolation")
            self.version, self.isolation = cur.fetchone()
            cur.execute(f"CREATE DATABASE IF NOT EXISTS {self.database}")
        conn.close()
        return self

    def stop(self) -> None:
        """Stop the server by the pid in its pid file (SIGTERM, then SIGKILL) and remove its files."""
        if self.proc is None:
            return
        pid = self.proc.pid
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            pass
        for sig, wait_s in ((signal.SIGTERM, 30.0), (signal.SIGKILL, 10.0)):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(timeout=wait_s) if pid == self.proc.pid else _wait_gone(pid, wait_s)
                break
            except subprocess.TimeoutExpired:
                continue
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        _LIVE.discard(self)
        self.proc = None
        shutil.rmtree(self.datadir.parent, ignore_errors=True)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def __enter__(self) -> Instance:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ connections
    def _connect(self, database: str | None = "hotkeylab"):
        return self.pymysql.connect(host="127.0.0.1", port=self.port, user="root", password="",
                                    database=database, autocommit=False, connect_timeout=5)

    def connect(self):
        """A new PyMySQL connection to the lab's database (autocommit off)."""
        if not self.running:
            raise RuntimeError("the instance is not running: use `with Instance() as db:` or db.start()")
        return self._connect(self.database)

    def create_schema(self, accounts: int = 64) -> None:
        """The seed's tables: ``t_account`` (the hot key's row and its counter) and ``t_trans`` (流水)."""
        accounts = check_int("accounts", accounts, low=1, high=100_000)
        conn = self.connect()
        with conn.cursor() as cur:
            cur.execute(
                "CREATE TABLE IF NOT EXISTS t_account (account_id BIGINT PRIMARY KEY, "
                "count BIGINT NOT NULL DEFAULT 0) ENGINE=InnoDB"
            )
            cur.execute(
                "CREATE TABLE IF NOT EXISTS t_trans (id BIGINT AUTO_INCREMENT PRIMARY KEY, "
                "run_id INT NOT NULL, account_id BIGINT NOT NULL, worker INT NOT NULL, "
                "amount INT NOT NULL, KEY (run_id, account_id)) ENGINE=InnoDB"
            )
            cur.executemany("INSERT IGNORE INTO t_account (account_id, count) VALUES (%s, 0)",
                            [(HOT_ACCOUNT + i,) for i in range(accounts)])
        conn.commit()
        conn.close()


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, between fork and exec
    """On Linux, ask the kernel to SIGTERM the server when the process that started it dies, so a
    killed test run or notebook kernel leaves no server behind (atexit does not run on a kill)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except OSError:
            pass


def _wait_gone(pid: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    raise subprocess.TimeoutExpired(str(pid), timeout_s)


HOT_ACCOUNT = 123  # the seed's "where account_id=123"

#: where the transaction takes the hot row's lock (see :class:`Experiment`)
ORDERS = ("lock_first", "lock_last", "update_only")


def sleeps_under_lock(order: str, inserts: int) -> int:
    """Round trips (emulated RTTs) spent holding the lock, by statement order."""
    return {"lock_first": inserts + 2, "lock_last": 2, "update_only": 1}[check_choice("order", order, ORDERS)]


def statements_under_lock(order: str, inserts: int) -> int:
    """INSERT/UPDATE statements executed while holding the lock, by statement order."""
    return {"lock_first": inserts + 1, "lock_last": 1, "update_only": 0}[check_choice("order", order, ORDERS)]


# =========================================================================== the experiment
@dataclass(frozen=True)
class Experiment:
    """One run of the seed's transaction on the hot row (or, as a control, on one row per worker)."""

    threads: int = 8  # client threads, one connection each ("多线程无法突破MySQL锁等待导致的TPS上限")
    rtt_ms: float = 1.5  # emulated network RTT: a client sleep before each statement sent under the lock
    inserts: int = 1  # batchInsert statements per transaction ("分块1, 分块2 ……")
    rows_per_insert: int = 20  # rows per batchInsert: the seed's group commit of up to 20 rows
    duration_s: float = 3.0  # measured window, after the warm-up
    warmup_s: float = 0.3  # transactions that commit before this are not counted
    shared_row: bool = True  # False: the control experiment, each worker its own row
    # where the lock is taken: "lock_first" is the seed's transaction; "lock_last" sends the
    # INSERTs before SELECT … FOR UPDATE; "update_only" drops the SELECT and lets the UPDATE lock
    order: str = "lock_first"
    # also sleep one RTT before each statement sent *outside* the lock (BEGIN, the statement that
    # takes the lock, INSERTs sent before it): a fair network for comparing statement orders
    rtt_outside_lock: bool = False

    def __post_init__(self):
        check_int("threads", self.threads, low=1, high=256)
        check_number("rtt_ms", self.rtt_ms, low=0.0, high=100.0)
        check_int("inserts", self.inserts, low=0, high=100)
        check_int("rows_per_insert", self.rows_per_insert, low=1, high=1000)
        check_number("duration_s", self.duration_s, low=0.1, high=600.0)
        check_number("warmup_s", self.warmup_s, low=0.0, high=60.0)
        if not isinstance(self.shared_row, bool):
            raise ValueError(f"shared_row must be True or False, got {self.shared_row!r}")
        check_choice("order", self.order, ORDERS)
        if not isinstance(self.rtt_outside_lock, bool):
            raise ValueError(f"rtt_outside_lock must be True or False, got {self.rtt_outside_lock!r}")

    @property
    def round_trips_under_lock(self) -> int:
        """Statements sent while the lock is held, each costing one emulated RTT: every INSERT, the
        UPDATE and the COMMIT for "lock_first"; the UPDATE and the COMMIT for "lock_last"; the COMMIT
        for "update_only"."""
        return sleeps_under_lock(self.order, self.inserts)

    @property
    def statements_under_lock(self) -> int:
        """INSERT/UPDATE statements executed while the lock is held."""
        return statements_under_lock(self.order, self.inserts)

    @property
    def rows_per_txn(self) -> int:
        return self.inserts * self.rows_per_insert


@dataclass(frozen=True)
class TxnTrace:
    """One committed transaction, client clock, ms since the run started."""

    worker: int
    t_begin: float  # BEGIN sent
    t_lock: float  # SELECT … FOR UPDATE returned: the row lock is held
    t_commit_sent: float
    t_commit_done: float  # COMMIT returned (after the log flush)


@dataclass(frozen=True)
class RunResult:
    """What one run measured (means over the transactions that committed in the measured window)."""

    threads: int
    rtt_ms: float
    inserts: int
    rows_per_insert: int
    shared_row: bool
    order: str  # where the lock is taken (see Experiment)
    rtt_outside_lock: bool  # statements outside the lock also paid one emulated RTT
    duration_s: float  # the measured window
    committed: int  # transactions committed in the window
    tps: float
    hold_ms: float  # lock granted (SELECT … FOR UPDATE returned) → COMMIT returned
    acquire_ms: float  # SELECT … FOR UPDATE sent → returned: the wait for the row lock
    statement_ms: float  # one INSERT or UPDATE on loopback (for "update_only" the UPDATE also waits for the lock)
    commit_ms: float  # COMMIT sent → returned (includes the redo-log flush)
    sleep_ms: float  # measured length of one emulated-RTT sleep (nominal: rtt_ms)
    latency_ms: float  # BEGIN sent → COMMIT returned
    early_release: float  # handoffs where the next lock grant came before the previous COMMIT returned
    # nothing lost (whole run, warm-up included)
    begun: int
    total_committed: int
    rolled_back: int
    rows_committed: int  # rows the clients saw committed
    counter_delta: int  # increase of t_account.count on the rows used
    trans_rows: int  # rows in t_trans for this run

    @property
    def predicted_tps(self) -> float:
        """``1000 / hold``: the model's ceiling for this run's own measured hold (NaN if nothing
        committed in the measured window)."""
        if not (self.committed and math.isfinite(self.hold_ms) and self.hold_ms > 0):
            return float("nan")
        return capacity.tps_ceiling(self.hold_ms)

    def check(self) -> None:
        """Raise ``AssertionError`` unless every transaction is accounted for and no row was lost."""
        assert self.begun == self.total_committed + self.rolled_back, (
            f"begun {self.begun} != committed {self.total_committed} + rolled back {self.rolled_back}")
        assert self.rows_committed == self.counter_delta == self.trans_rows, (
            f"rows committed {self.rows_committed}, counter +{self.counter_delta}, t_trans {self.trans_rows}")


def early_release_fraction(trace: list[TxnTrace]) -> float:
    """Fraction of lock handoffs where the next transaction held the lock before the previous
    transaction's COMMIT had returned to its client: InnoDB released the row lock before the
    COMMIT's log flush finished. NaN with fewer than two transactions."""
    tr = sorted(trace, key=lambda x: x.t_lock)
    pairs = [(a, b) for a, b in zip(tr, tr[1:], strict=False) if a.worker != b.worker]
    if not pairs:
        return float("nan")
    return sum(b.t_lock < a.t_commit_done for a, b in pairs) / len(pairs)


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


def run_experiment(db: Instance, exp: Experiment = Experiment(), *, keep_trace: bool = False):
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


ONE_THREAD_REPEATS = 3  # the model's input (the one-thread hold) is measured this many times per RTT


def standard_grid(duration_s: float = 3.0) -> list[Experiment]:
    """``make db-lab``'s grid: the hot row at threads × RTT (the one-thread run repeated
    :data:`ONE_THREAD_REPEATS` times, spread over the grid, since it is the model's input), a
    statements series, and the control."""
    exps = []
    for rtt in (0.0, 0.5, 1.5, 3.0):
        for n in (1, 2, 4, 8, 16, 32):
            exps.append(Experiment(threads=n, rtt_ms=rtt, inserts=1, duration_s=duration_s))
    for k in (0, 2, 4, 8):
        exps.append(Experiment(threads=8, rtt_ms=1.5, inserts=k, duration_s=duration_s))
    for k in (1, 4):  # the fixes (take the lock later, or let the UPDATE take it), every statement paying the RTT
        for order in ORDERS:
            for n in (1, 8):
                exps.append(Experiment(threads=n, rtt_ms=1.5, inserts=k, order=order, rtt_outside_lock=True,
                                       duration_s=duration_s))
    for _ in range(ONE_THREAD_REPEATS - 1):
        for rtt in (0.0, 0.5, 1.5, 3.0):
            exps.append(Experiment(threads=1, rtt_ms=rtt, inserts=1, duration_s=duration_s))
    for rtt in (0.0, 0.5, 1.5, 3.0):
        for n in (1, 2, 4, 8, 16, 32):
            exps.append(Experiment(threads=n, rtt_ms=rtt, inserts=1, duration_s=duration_s, shared_row=False))
    return exps


TRACE_RUN = Experiment(threads=4, rtt_ms=1.5, inserts=1)  # the run whose lock grants are kept


def quick_check(db: Instance | None = None, *, rtt_ms: float = 1.5, threads=(1, 2, 8),
                duration_s: float = 1.0) -> list[RunResult]:
    """A short live experiment (a few seconds): the hot row at ``rtt_ms`` for each thread count.
    Starts (and stops) a private instance unless one is given."""
    exps = [Experiment(threads=n, rtt_ms=rtt_ms, duration_s=duration_s, warmup_s=0.2) for n in threads]
    if db is not None:
        return run_grid(db, exps)
    with Instance() as own:
        return run_grid(own, exps)


# =========================================================================== the model beside the measurements
def repeats(runs, rtt_ms: float, threads: int = 1, inserts: int = 1, shared_row: bool = True,
            order: str = "lock_first", rtt_outside_lock: bool = False) -> list[RunResult]:
    """Every run of one configuration (the one-thread hot-row run is measured several times)."""
    return [r for r in runs if r.shared_row == shared_row and r.rtt_ms == rtt_ms
            and r.inserts == inserts and r.threads == threads and r.order == order
            and r.rtt_outside_lock == rtt_outside_lock]


def median_run(group: list[RunResult]) -> RunResult:
    """The run with the median hold (the lower middle one for an even count) among the runs that
    measured one. A run commits nothing inside its measuring window (its hold is NaN) when a COMMIT's
    log flush or the client stalls longer than the window on a loaded machine; such a run is left
    out, because NaN sorts anywhere and could stand for the group. None measured: ValueError."""
    measured = [r for r in group if math.isfinite(r.hold_ms)]
    if not measured:
        raise ValueError(f"group must hold at least one run that measured a lock hold, got {len(group)} run(s) "
                         "with none committed inside the measuring window")
    return sorted(measured, key=lambda r: r.hold_ms)[(len(measured) - 1) // 2]


def hot_runs(runs, rtt_ms: float, inserts: int = 1, order: str = "lock_first",
             rtt_outside_lock: bool = False) -> dict[int, RunResult]:
    """The hot-row runs at one RTT, statement count and order, by thread count; where a
    configuration was repeated, the run with the median hold stands for it."""
    groups: dict[int, list[RunResult]] = {}
    for r in runs:
        if (r.shared_row and math.isclose(r.rtt_ms, rtt_ms) and r.inserts == inserts and r.order == order
                and r.rtt_outside_lock == rtt_outside_lock):
            groups.setdefault(r.threads, []).append(r)
    return {n: median_run(g) for n, g in sorted(groups.items())}


def statements_series(runs, threads: int = 8, rtt_ms: float = 1.5) -> list[RunResult]:
    """The seed-order hot-row runs at one thread count and RTT, one per batchInsert count
    (``make db-lab`` measures 0, 1, 2, 4 and 8 at 8 threads, RTT 1.5 ms), sorted by INSERTs."""
    return sorted((r for r in runs if r.shared_row and r.threads == threads and math.isclose(r.rtt_ms, rtt_ms)
                   and r.order == "lock_first" and not r.rtt_outside_lock), key=lambda r: r.inserts)


def control_runs(runs, rtt_ms: float) -> dict[int, RunResult]:
    """The control runs (one row per worker, the seed's order) at one RTT, by thread count."""
    return {r.threads: r for r in runs if not r.shared_row and r.rtt_ms == rtt_ms and r.order == "lock_first"
            and not r.rtt_outside_lock}


def outside_ms(one: RunResult) -> float:
    """Time per transaction spent outside the lock (BEGIN and the SELECT's trip), from a one-thread run.
    Without ``rtt_outside_lock`` these carry no emulated RTT; on a real link they would add 2 RTT."""
    return one.latency_ms - one.hold_ms


def predicted_tps(one: RunResult, threads: int) -> float:
    """Notebook 01's closed loop fed with the one-thread run's measured times:
    ``min(threads × 1000 / (hold + outside), 1000 / hold)``."""
    n = check_int("threads", threads, low=1)
    return min(n * 1000.0 / (one.hold_ms + outside_ms(one)), capacity.tps_ceiling(one.hold_ms))


def predicted_latency_ms(one: RunResult, threads: int) -> float:
    """Little's law for the closed loop: ``threads × 1000 / TPS`` with the predicted TPS."""
    return threads * 1000.0 / predicted_tps(one, threads)


def hold_from_parts_ms(r: RunResult, *, nominal: bool = False) -> float:
    """The hold rebuilt from its parts: ``round trips under the lock × sleep + statements under the
    lock × statement + commit`` (for the seed's order ``(inserts + 2) × sleep + (inserts + 1) ×
    statement + commit``); ``nominal=True`` uses the nominal RTT instead of the measured sleep."""
    sleep = r.rtt_ms if nominal else r.sleep_ms
    return (sleeps_under_lock(r.order, r.inserts) * sleep
            + statements_under_lock(r.order, r.inserts) * r.statement_ms + r.commit_ms)


def plateau_tps(runs, rtt_ms: float, inserts: int = 1) -> float:
    """Mean TPS of the hot-row runs with two threads or more (the plateau)."""
    vals = [r.tps for n, r in hot_runs(runs, rtt_ms, inserts).items() if n >= 2]
    if not vals:
        raise ValueError(f"no hot-row runs with >= 2 threads at rtt_ms={rtt_ms}, inserts={inserts}")
    return sum(vals) / len(vals)


# =========================================================================== pictures
def _measured_vs_model(ax, runs, rtts, value, model, label):
    """One colour per RTT: the hot-row runs' ``value(run)`` as dots, ``model(one_thread_run, n)`` as a
    line over 1..max threads. Returns the colours used."""
    import matplotlib.pyplot as plt

    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colors = []
    for i, rtt in enumerate(rtts):
        hot = hot_runs(runs, rtt)
        ns = sorted(hot)
        c = cycle[i % len(cycle)]
        colors.append(c)
        ax.plot(ns, [value(hot[n]) for n in ns], "o", color=c, label=label.format(rtt=rtt))
        fine = list(range(1, max(ns) + 1))
        ax.plot(fine, [model(hot[1], n) for n in fine], "-", color=c, lw=2, alpha=0.6)
    return colors


def plot_tps_vs_threads(runs, rtts=(0.5, 1.5, 3.0), *, ax=None, control: bool = True):
    """Measured TPS vs threads on the hot row (dots), the model fed with the one-thread run (line),
    and the control on one row per worker (open squares, dashed, same colour per RTT)."""
    from . import plotting

    if ax is None:
        _, ax = plotting.new_figure(height=3.6)
    colors = _measured_vs_model(ax, runs, rtts, lambda r: r.tps, predicted_tps,
                                "hot row, RTT {rtt:g} ms (measured)")
    for c, rtt in zip(colors, rtts, strict=True):
        own = control_runs(runs, rtt)
        if control and own:
            ms = sorted(own)
            ax.plot(ms, [own[n].tps for n in ms], "s--", color=c, lw=1, alpha=0.5, mfc="white",
                    label=f"own row per worker, RTT {rtt:g} ms")
    ax.plot([], [], "-", color="0.4", lw=2, alpha=0.6, label="model: min(1000 n / (hold + outside), 1000 / hold)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks([1, 2, 4, 8, 16, 32], ["1", "2", "4", "8", "16", "32"])
    lo, hi = ax.get_ylim()
    ticks = [t for t in (50, 100, 200, 500, 1000, 2000, 5000) if lo <= t <= hi]
    ax.set_yticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    plotting.decorate(ax, xlabel="client threads", ylabel="committed transactions/s")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return ax


def plot_latency_vs_threads(runs, rtts=(0.5, 1.5, 3.0), *, ax=None):
    """Measured latency (BEGIN → COMMIT returned) vs threads, and Little's law from the model."""
    from . import plotting

    if ax is None:
        _, ax = plotting.new_figure(height=3.2)
    _measured_vs_model(ax, runs, rtts, lambda r: r.latency_ms, predicted_latency_ms, "RTT {rtt:g} ms (measured)")
    ax.plot([], [], "-", color="0.4", lw=2, alpha=0.6, label="model: n × 1000 / model TPS (Little's law)")
    plotting.decorate(ax, xlabel="client threads", ylabel="latency per transaction (ms)")
    return ax


def plot_trace(trace, *, start_ms: float | None = None, span_ms: float = 40.0, ax=None):
    """Lock grants as the client saw them, on a timeline: one row per worker, a bar from the lock
    grant (SELECT … FOR UPDATE returned to the client) to COMMIT returned, the COMMIT itself hatched, and a dotted line
    at each grant. Where a bar starts before the previous one ends, InnoDB had already released the
    row lock while that COMMIT was still flushing."""
    import matplotlib.pyplot as plt

    from . import plotting

    tr = sorted(trace, key=lambda t: t.t_lock)
    if not tr:
        raise ValueError("trace is empty")
    t0 = tr[len(tr) // 2].t_lock if start_ms is None else float(start_ms)
    sel = [t for t in tr if t.t_lock < t0 + span_ms and t.t_commit_done > t0]
    ivs = [(f"worker {t.worker}", t.t_lock, t.t_commit_done) for t in sel]
    workers = sorted({t.worker for t in sel})
    owners = [f"worker {w}" for w in workers]
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colors = {f"worker {w}": cycle[w % len(cycle)] for w in workers}
    if ax is None:
        _, ax = plotting.new_figure(height=0.6 + 0.45 * len(owners))
    ax = plotting.lock_gantt(ivs, ax=ax, owners=owners, colors=colors)
    for t in sel:
        y = owners.index(f"worker {t.worker}")
        ax.broken_barh([(t.t_commit_sent, t.t_commit_done - t.t_commit_sent)], (y - 0.35, 0.7),
                       facecolors="none", edgecolor="black", hatch="////", lw=0.5)
        if t0 <= t.t_lock < t0 + span_ms:
            ax.axvline(t.t_lock, color="0.3", lw=0.6, ls=":")
    ax.set_xlim(t0, t0 + span_ms)
    ax.ticklabel_format(axis="x", useOffset=False, style="plain")
    ax.set_xlabel("time since the run started, client clock (ms)")
    return ax


def first_early_handoff(trace, after_ms: float = -math.inf) -> tuple[TxnTrace, TxnTrace]:
    """The first pair (previous, next), with the previous lock granted at or after ``after_ms``, where
    the next lock grant came before the previous COMMIT returned."""
    tr = sorted(trace, key=lambda t: t.t_lock)
    for a, b in zip(tr, tr[1:], strict=False):
        if a.t_lock >= after_ms and a.worker != b.worker and b.t_lock < a.t_commit_done:
            return a, b
    raise ValueError("no early handoff in this trace")


# =========================================================================== what if: other statement orders
@dataclass(frozen=True)
class Parts:
    """What one round trip, one statement and one COMMIT cost on the lab's machine (ms)."""

    overshoot_ms: float  # a time.sleep(RTT) lasts RTT + this
    statement_ms: float
    commit_ms: float
    base_outside_ms: float = 0.0  # outside the lock with no emulated RTT: BEGIN, the locking statement

    def hold_ms(self, rtt_ms: float, inserts: int, order: str = "lock_first") -> float:
        """The model's hold for a transaction: round trips under the lock × (RTT + overshoot) +
        statements under the lock × statement + COMMIT."""
        rtt = check_number("rtt_ms", rtt_ms, low=0.0, high=100.0)
        k = check_int("inserts", inserts, low=0, high=100)
        return (sleeps_under_lock(order, k) * (rtt + self.overshoot_ms)
                + statements_under_lock(order, k) * self.statement_ms + self.commit_ms)

    def outside_ms(self, rtt_ms: float, inserts: int, order: str = "lock_first") -> float:
        """Time per transaction outside the lock when every statement pays the RTT: BEGIN and the
        statement that takes the lock, plus the INSERTs sent before it (``lock_last``, ``update_only``)."""
        k = check_int("inserts", inserts, low=0, high=100)
        before = 0 if check_choice("order", order, ORDERS) == "lock_first" else k
        return (2 + before) * (rtt_ms + self.overshoot_ms) + before * self.statement_ms + self.base_outside_ms

    def tps(self, rtt_ms: float, inserts: int, order: str = "lock_first", threads: int = 1) -> float:
        """Notebook 01's closed loop: ``min(threads × 1000 / (hold + outside), 1000 / hold)``."""
        n = check_int("threads", threads, low=1)
        hold = self.hold_ms(rtt_ms, inserts, order)
        return min(n * 1000.0 / (hold + self.outside_ms(rtt_ms, inserts, order)), capacity.tps_ceiling(hold))

    def knee_threads(self, rtt_ms: float, inserts: int, order: str = "lock_first") -> float:
        """Committer threads needed to keep the lock busy: ``(hold + outside) / hold``."""
        hold = self.hold_ms(rtt_ms, inserts, order)
        return (hold + self.outside_ms(rtt_ms, inserts, order)) / hold


def measured_parts(runs) -> Parts:
    """Mean overshoot, statement, COMMIT and outside-the-lock times of the one-thread hot-row runs
    with RTT > 0 (RTT emulated under the lock only)."""
    ones = [r for r in runs if r.shared_row and r.threads == 1 and r.order == "lock_first" and r.rtt_ms > 0
            and not r.rtt_outside_lock]
    if not ones:
        raise ValueError("no one-thread hot-row runs with rtt_ms > 0 in these runs")
    n = len(ones)
    return Parts(sum(r.sleep_ms - r.rtt_ms for r in ones) / n, sum(r.statement_ms for r in ones) / n,
                 sum(r.commit_ms for r in ones) / n, sum(outside_ms(r) for r in ones) / n)


ORDER_LABELS = {
    "lock_first": "the seed: SELECT … FOR UPDATE first",
    "lock_last": "INSERTs first, then lock",
    "update_only": "INSERTs first, UPDATE takes the lock",
}


def plot_hold_budget(runs, rtt_ms: float = 1.5, inserts: int = 4, *, ax=None):
    """The hold of each statement order, split into round trips, statements and COMMIT (model, from
    :func:`measured_parts`), with ``1000 / hold`` written at the end of each bar, and a diamond at the
    row's turnover ``1000 / TPS`` measured with 8 threads where the lab ran that configuration (every
    statement paying the RTT)."""
    from . import plotting

    parts = measured_parts(runs)
    if ax is None:
        _, ax = plotting.new_figure(height=2.4)
    colors = (plotting.COLORS["offered"], plotting.COLORS["retries"], plotting.COLORS["goodput"])
    marked = False
    for y, order in enumerate(ORDERS):
        segs = [sleeps_under_lock(order, inserts) * (rtt_ms + parts.overshoot_ms),
                statements_under_lock(order, inserts) * parts.statement_ms, parts.commit_ms]
        left = 0.0
        for seg, c, lab in zip(segs, colors, ("round trips", "statements", "COMMIT"), strict=True):
            ax.barh(y, seg, left=left, color=c, label=lab if y == 0 else None, height=0.6)
            left += seg
        hits = [r for r in runs if r.shared_row and r.order == order and r.inserts == inserts
                and r.threads == 8 and math.isclose(r.rtt_ms, rtt_ms) and r.rtt_outside_lock]
        x_text = left
        if hits:
            ax.plot(1000.0 / hits[0].tps, y, "D", color="black", ms=6,
                    label=None if marked else "the row's turnover measured with 8 threads (1000 / TPS)")
            marked = True
            x_text = max(left, 1000.0 / hits[0].tps)
        ax.text(x_text, y, f"   {capacity.tps_ceiling(left):.0f} TPS (model)", va="center", fontsize=9)
    ax.set_yticks(range(len(ORDERS)), [ORDER_LABELS[o] for o in ORDERS])
    ax.invert_yaxis()
    ax.set_xlim(0, ax.get_xlim()[1] * 1.3)
    plotting.decorate(ax, xlabel=f"lock hold (ms) at RTT {rtt_ms:g} ms, {inserts} batchInsert statements",
                      legend=False)
    ax.legend(fontsize=8, loc="lower right")
    return ax


def what_if_orders(rtt_ms: float = 1.5, inserts: int = 4):
    """Widget body: the hold budget of the three statement orders for your RTT and INSERT count."""
    import matplotlib.pyplot as plt

    plot_hold_budget(load_runs()[1], rtt_ms, inserts)
    plt.show()


# =========================================================================== files
def machine_description(db: Instance | None = None) -> dict:
    """Where the numbers were measured: CPU, cores, OS, Python, PyMySQL and MariaDB versions."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        from importlib.metadata import version

        pymysql_version = version("pymysql")
    except ImportError:  # pragma: no cover
        pymysql_version = "absent"
    return {
        "measured": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "pymysql": pymysql_version,
        "mariadb": db.version if db is not None else "",
        "client": "PyMySQL over TCP on 127.0.0.1; RTT emulated by a client-side time.sleep",
        "innodb_flush_log_at_trx_commit": "1",
        "isolation": db.isolation if db is not None else "",
        "load_1min_at_start": _loadavg(),
    }


def _loadavg() -> str:
    """The 1-minute load average (runnable processes), so readers see how busy the machine was."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except (OSError, AttributeError):  # pragma: no cover - not on every OS
        return "unknown"


_RUN_FIELDS = [f.name for f in fields(RunResult)]
_TRACE_FIELDS = [f.name for f in fields(TxnTrace)]


def _write(path: Path, machine: dict, names: list[str], rows: list[dict]) -> Path:
    return write_commented_csv(path, machine, names, rows)


def write_runs(results: list[RunResult], path=RUNS_CSV, machine: dict | None = None) -> Path:
    return _write(path, machine or machine_description(), _RUN_FIELDS, [asdict(r) for r in results])


def write_trace(trace: list[TxnTrace], path=TRACE_CSV, machine: dict | None = None,
                exp: Experiment = TRACE_RUN) -> Path:
    m = dict(machine or machine_description())
    m["trace_run"] = f"threads={exp.threads} rtt_ms={exp.rtt_ms} inserts={exp.inserts}"
    return _write(path, m, _TRACE_FIELDS, [asdict(t) for t in trace])


def _read(path: Path) -> tuple[dict, list[dict]]:
    return read_commented_csv(path, f"run `make db-lab` to measure it ({INSTALL_HINT})")


def _convert(cls, row: dict):
    out = {}
    for f in fields(cls):
        v = row[f.name]
        if f.type in ("int", int):
            out[f.name] = int(v)
        elif f.type in ("bool", bool):
            out[f.name] = v == "True"
        elif f.type in ("str", str):
            out[f.name] = v
        else:
            out[f.name] = float(v)
    return cls(**out)


def load_runs(path=RUNS_CSV) -> tuple[dict, list[RunResult]]:
    """``(machine, results)`` from the committed CSV (no database needed)."""
    machine, rows = _read(path)
    return machine, [_convert(RunResult, r) for r in rows]


def load_trace(path=TRACE_CSV) -> tuple[dict, list[TxnTrace]]:
    machine, rows = _read(path)
    return machine, [_convert(TxnTrace, r) for r in rows]


# =========================================================================== make db-lab
def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description="Measure the hot row on a private MariaDB and write the CSVs.")
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
