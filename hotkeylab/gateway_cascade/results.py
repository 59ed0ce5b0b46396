"""07 · What a run returns: named per-step columns (:class:`StepLog`), per-node flows
(:class:`FlowLog`) and :class:`Run`, with the summaries the notebook prints."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .. import sim
from ..sim import Ledger, RunStatus
from ..validate import check_number
from .scenario import MIN_MS, SEED_ALARM_ORDER, Scenario, _installs

_SERIES = (
    "t", "installs", "active", "arrivals", "admitted", "rejected", "processed", "served", "failed",
    "timeouts", "queue", "latency_ms", "availability", "hosts_up", "gateway_cpu", "gateway_cpu_max", "gateway_util",
    "gc_share", "young_gc_per_s", "threads", "heap_used", "jimdb_util", "jimdb_up", "jimdb_ops",
    "jimdb_mon_util", "jimdb_mon_up", "mysql_util", "mysql_work", "fallthrough", "full_scans",
    "logs", "pending", "jmq_util", "jmq_sent", "jmq_backlog", "es_indexed", "mysql_ok", "scans_running",
    "scan_mb_max", "logs_dropped",
)  # fmt: skip
_NODES = ("clients", "access", "monitoring", "jimdb", "jimdb_mon", "app", "mysql", "logs", "jmq", "es")


class StepLog:
    """One value per column and step, by name: :meth:`add` takes every column of :data:`_SERIES`
    as a keyword, in that order, once per step; :meth:`arrays` returns ``{column: float array}``."""

    def __init__(self, names=_SERIES):
        self.names = tuple(names)
        self._keys = dict.fromkeys(self.names).keys()
        self.rows = []

    def add(self, **values):
        if values.keys() != self._keys or tuple(values) != self.names:
            missing = sorted(set(self.names) - set(values))
            extra = sorted(set(values) - set(self.names))
            raise ValueError(
                f"a step must record every column once, in the order of the log: missing {missing}, unknown {extra}"
            )
        self.rows.append(tuple(values.values()))

    def _table(self) -> np.ndarray:
        """The rows as one float array: ``[step, column, …]``."""
        return np.array(self.rows, dtype=float).reshape(len(self.rows), len(self.names), -1)

    def arrays(self) -> dict:
        table = self._table()
        return {name: table[:, j, 0].copy() for j, name in enumerate(self.names)}


class FlowLog(StepLog):
    """Per node and step: ``in``, ``out``, ``dropped`` and ``stored`` (level at the end of the step).
    :meth:`add` takes every node of :data:`_NODES` as a keyword, once per step, each a tuple
    ``(in, out, dropped, stored)``; :meth:`arrays` returns ``{node: {key: float array}}``."""

    KEYS = ("in", "out", "dropped", "stored")

    def __init__(self, nodes=_NODES):
        super().__init__(nodes)

    def arrays(self) -> dict:
        table = self._table()
        return {node: {key: table[:, i, j].copy() for j, key in enumerate(self.KEYS)}
                for i, node in enumerate(self.names)}  # fmt: skip


# --------------------------------------------------------------------------- what each actor reports per step
class Admission(NamedTuple):
    arrivals: int  # calls that arrived (polls + other traffic)
    admitted: int  # calls the token bucket let in
    rejected: int  # polls refused fast
    poll_share: float  # share of the admitted calls that are order-API polls


class Access(NamedTuple):
    processed: int  # calls the hosts processed
    timeouts: int  # calls whose client gave up in the access queue
    wait_ms: float  # mean wait in the queue of a processed call
    calls_h: np.ndarray  # processed calls per host
    callers: int  # hosts up × keys: who coalesces with singleflight


class Lookups(NamedTuple):
    miss: float  # check reads that miss the local cache
    writes: float  # monitoring writes
    jimdb_in: float  # operations offered to the hot shard
    ok: float  # their success share
    util: float  # the hot shard's utilisation
    up: bool  # the hot shard is available
    mon_in: float  # writes offered to the monitoring cluster (split clusters only)
    mon_ok: float
    mon_util: float
    mon_up: bool


class Penetration(NamedTuple):
    fallthrough: float  # lookups that went through jimdb to MySQL
    param_loss_share: float  # share of them that lost the pin parameter
    lost_param: float  # lookups that lost it: full-table scans
    points: float  # the others: point queries


class Database(NamedTuple):
    j_pass: float  # share of calls not timed out at jimdb (their app layer queries MySQL)
    app_q: float  # the app layer's point queries
    points_db: float  # the fallback's point queries MySQL receives
    work: float  # point-query units MySQL was asked for, the scans' included
    ok: float  # success share of a point query
    scans_done: float  # full scans that finished this step
    held: np.ndarray  # scan rows each host holds (MB)
    scan_rows: np.ndarray  # scan rows that streamed in this step (MB)


class Logs(NamedTuple):
    total: float  # call logs written
    sent: float  # sent to JMQ
    dropped: float  # dropped at a full log queue
    lost: float  # dropped, or lost with a crashed host's heap
    scans_aborted: float  # full scans aborted with their crashed host
    pending: float  # logs waiting in the heaps
    indexed: float  # indexed by ES


class Gauges(NamedTuple):
    cpu: float  # mean CPU of the hosts up
    cpu_max: float  # the hottest host's CPU
    gc_mean: float  # mean young-GC share of CPU
    util: float  # admitted calls / what the hosts can process
    availability: float  # served / finished
    young_gc_per_s: float  # the most collecting host's young GC/s


def record_step(log: StepLog, sc: Scenario, w, t_ms, active, adm, acc, lk, pen, scans, db, served, failed,
                latency, logs, g) -> None:
    """One row of the windows, by column name (``w`` is the :class:`~.state.World` after the step)."""
    dt_s = sc.step_ms / 1000.0
    h = w.hosts
    log.add(
        t=t_ms / 1000.0, installs=_installs(sc, t_ms), active=active, arrivals=adm.arrivals,
        admitted=adm.admitted, rejected=adm.rejected, processed=acc.processed, served=served, failed=failed,
        timeouts=acc.timeouts, queue=w.q_len, latency_ms=latency if acc.processed else math.nan,
        availability=g.availability, hosts_up=w.n_up, gateway_cpu=g.cpu, gateway_cpu_max=g.cpu_max,
        gateway_util=g.util, gc_share=g.gc_mean, young_gc_per_s=g.young_gc_per_s, threads=float(h.threads.sum()),
        heap_used=(sc.live_mb + float((h.pending * (sc.log_kb / 1024.0) + db.held).max())) / sc.heap_mb,
        jimdb_util=lk.util, jimdb_up=lk.up, jimdb_ops=lk.jimdb_in / dt_s, jimdb_mon_util=lk.mon_util,
        jimdb_mon_up=lk.mon_up, mysql_util=w.db_util, mysql_work=db.work / dt_s,
        fallthrough=pen.fallthrough / dt_s, full_scans=scans, logs=logs.total / dt_s, pending=logs.pending,
        jmq_util=logs.total / dt_s / sc.jmq_msgs_per_s, jmq_sent=logs.sent / dt_s, jmq_backlog=w.jmq_backlog,
        es_indexed=logs.indexed, mysql_ok=db.ok, scans_running=float(w.scans.count.sum()),
        scan_mb_max=float(db.held.max()), logs_dropped=logs.dropped,
    )  # fmt: skip


def record_flows(flows: FlowLog, w, adm, acc, lk, db, scans, p_app, logs) -> None:
    """Each node's ``in, out, dropped, stored`` this step; ``in = out + dropped + Δstored``."""
    app_in = acc.processed * db.j_pass
    queries = db.points_db + scans + db.app_q  # mysql: point queries and scans
    mysql_ok = (queries - scans) * db.ok + db.scans_done
    mysql_dropped = (queries - scans) * (1.0 - db.ok) + logs.scans_aborted
    flows.add(
        clients=(adm.arrivals, adm.admitted, adm.rejected, 0.0),
        access=(adm.admitted, acc.processed, acc.timeouts, w.q_len),
        monitoring=(lk.writes, lk.writes, 0.0, 0.0),
        jimdb=(lk.jimdb_in, lk.jimdb_in * lk.ok, lk.jimdb_in * (1.0 - lk.ok), 0.0),
        jimdb_mon=(lk.mon_in, lk.mon_in * lk.mon_ok, lk.mon_in * (1.0 - lk.mon_ok), 0.0),
        app=(app_in, app_in * p_app, app_in * (1.0 - p_app), 0.0),
        mysql=(queries, mysql_ok, mysql_dropped, float(w.scans.count.sum())),
        logs=(logs.total, logs.sent, logs.lost, logs.pending),
        jmq=(logs.sent, logs.indexed, 0.0, w.jmq_backlog),
        es=(logs.indexed, logs.indexed, 0.0, 0.0),
    )


@dataclass(frozen=True)
class RunSummary(sim.Summary):
    """The key numbers of a :class:`Run` (utilisations as offered / capacity)."""

    peak_calls_per_min: float
    """most calls in one minute (rolling, calls/min)"""
    served_share: float
    """calls answered / arrived (0-1; 1 when none arrived)"""
    rejected_share: float
    """calls refused fast by the token bucket / arrived (0-1; 0 when none arrived)"""
    flood: dict
    """shares of the calls from ramp_mid_ms on: ``answered``, ``refused``, ``failed`` (0-1)"""
    peak_gateway_util: float
    """peak utilisation of the gateway hosts"""
    peak_jimdb_util: float
    """peak utilisation of the hot jimdb shard"""
    peak_mysql_util: float
    """peak utilisation of MySQL"""
    peak_jmq_util: float
    """peak utilisation of JMQ"""
    failovers: int
    """jimdb failovers (count)"""
    host_crashes: int
    """gateway hosts crashed (count)"""
    full_scans: float
    """full-table scans started (count)"""
    jmq_backlog_end: float
    """JMQ messages waiting at the end (messages)"""
    alarms: dict
    """when each alarm fired (min)"""


@dataclass
class Run(sim.Run):
    """One run. ``windows``: one entry per step (``t`` in s; counts per step, ``*_util`` as
    offered / capacity, ``gateway_cpu`` in [0, 1]). ``flows[node]``: ``in``, ``out``, ``dropped``,
    ``stored`` (level at the end of each step). ``alarms``: ``(name, t_ms)`` in firing order.
    ``summary``: :class:`RunSummary`. The model is time-stepped: it always runs all ``steps``, so
    ``status`` reports the horizon and the steps as events."""

    Summary = RunSummary

    scenario: Scenario
    seed: int
    windows: dict
    flows: dict
    alarms: list
    failovers: list
    crashes: list
    events: dict
    ledger: Ledger

    @property
    def status(self) -> RunStatus:
        return RunStatus(t_end_ms=self.scenario.horizon_ms, events=len(self.windows["t"]), truncated=False)

    def alarm_ms(self, name: str) -> float:
        """When alarm ``name`` fired (nan if it never did)."""
        for n, t in self.alarms:
            if n == name:
                return t
        return math.nan

    def alarm_order(self, names=SEED_ALARM_ORDER) -> list[str]:
        """The alarms among ``names`` that fired, in the order they fired."""
        return [n for n, _ in self.alarms if n in names]

    def peaks(self) -> dict:
        """Peak utilisation (offered / capacity) of each component, and peak calls per minute."""
        w = self.windows
        per_min = int(round(MIN_MS / self.scenario.step_ms))
        arr = w["arrivals"]
        roll = np.convolve(arr, np.ones(per_min), mode="valid") if len(arr) >= per_min else arr * per_min
        jimdb = np.maximum(w["jimdb_util"], 0.0)
        return {
            "gateway": float(w["gateway_util"].max()),
            "jimdb": float(jimdb.max()),
            "mysql": float(w["mysql_util"].max()),
            "jmq": float(w["jmq_util"].max()),
            "clients": float(roll.max()),
        }

    def outcome_shares(self, from_ms: float | None = None) -> dict:
        """Shares of the calls arriving from ``from_ms`` on (default: ``ramp_mid_ms``, when half the
        installs poll) that were answered, refused fast (token bucket) and failed (timed out in the
        access queue or failed at a dependency)."""
        w, sc = self.windows, self.scenario
        start = min(sc.ramp_mid_ms, sc.horizon_ms) if from_ms is None else from_ms
        check_number("from_ms", start, low=0.0, high=sc.horizon_ms)
        sl = slice(int(start // sc.step_ms), None)
        arrived = w["arrivals"][sl].sum()
        if arrived == 0:
            return {"answered": 1.0, "refused": 0.0, "failed": 0.0}
        answered = w["served"][sl].sum() / arrived
        refused = w["rejected"][sl].sum() / arrived
        return {"answered": answered, "refused": refused, "failed": max(0.0, 1.0 - answered - refused)}

    def summarise(self) -> RunSummary:
        w, led = self.windows, self.ledger
        p = self.peaks()
        return RunSummary(
            peak_calls_per_min=p["clients"],
            served_share=led.served / led.arrived if led.arrived else 1.0,
            rejected_share=led.rejected / led.arrived if led.arrived else 0.0,
            flood=self.outcome_shares(),
            peak_gateway_util=p["gateway"],
            peak_jimdb_util=p["jimdb"],
            peak_mysql_util=p["mysql"],
            peak_jmq_util=p["jmq"],
            failovers=len(self.failovers),
            host_crashes=len(self.crashes),
            full_scans=float(w["full_scans"].sum()),
            jmq_backlog_end=float(w["jmq_backlog"][-1]),
            alarms={n: t / MIN_MS for n, t in self.alarms},
        )


def node_utilisation(run: Run, t_ms: float) -> dict:
    """Each graph node's utilisation at ``t_ms`` (mean over the surrounding 10 s) and whether
    it is down: ``{node: (utilisation or nan, down)}``."""
    w, sc = run.windows, run.scenario
    t = check_number("t_ms", t_ms, low=0.0, high=sc.horizon_ms)
    k = min(int(t // sc.step_ms), sc.steps - 1)
    span = max(1, int(10_000 // sc.step_ms))
    sl = slice(max(0, k - span + 1), k + 1)

    def m(name):
        return float(np.nanmean(w[name][sl]))

    split = (sc.fixes.split_clusters and t >= sc.fixes_at_ms)
    g = m("gateway_cpu")
    all_down = w["hosts_up"][k] == 0
    return {
        "clients": (math.nan, False),
        "access": (g, bool(all_down)),
        "monitoring": (g, bool(all_down)),
        "logs": (m("threads") / max(1, sc.sender_threads_max * sc.hosts), bool(all_down)),
        "jimdb": (m("jimdb_util"), not bool(w["jimdb_up"][k])),
        "jimdb_mon": ((m("jimdb_mon_util"), not bool(w["jimdb_mon_up"][k])) if split else (math.nan, False)),
        "app": (g, bool(all_down)),
        "mysql": (m("mysql_util"), False),
        "jmq": (m("jmq_util"), False),
        "es": (m("jmq_sent") / max(sc.es_docs_per_s, 1e-9), False),
    }
