"""07 · The gateway hosts: restarts, the call logs (sender threads → JMQ → ES), each host's JVM
(young GC, out of memory), and the gauges the alarms watch. Problem two of the postmortem
(问题二) and the hosts going down (服务器出现宕机) happen here."""

from __future__ import annotations

import math

import numpy as np

from .results import Gauges, Logs
from .scenario import MAX_UTIL, Scenario
from .state import World, _Hosts


def hosts_restart(w: World, sc: Scenario, t_ms: float) -> None:
    """Crashed hosts come back after ``restart_ms`` with an empty heap; the load balancer sends
    them calls again."""
    hosts = w.hosts
    if w.n_down and (hosts.down_until_ms[~hosts.up] <= t_ms).any():
        back = (~hosts.up) & (hosts.down_until_ms <= t_ms)
        hosts.up[back] = True
        w.n_up = int(np.count_nonzero(hosts.up))
        w.n_down = sc.hosts - w.n_up
        w.eff = sc.host_capacity_per_s * (1.0 - np.minimum(hosts.gc_share + hosts.thread_share, 1.0)) * hosts.up
        w.eff_sum = float(w.eff.sum())
        wup = hosts.weight * hosts.up
        w.share = wup / wup.sum()


def log_sender_step(hosts: _Hosts, sc: Scenario, logs: np.ndarray, send_cap: float) -> tuple[float, float]:
    """Call logs: each host queues its logs in the heap, at most ``log_buffer_mb`` of them (a
    bounded queue: logs beyond it are dropped); its share of the JMQ connections sends at most
    ``send_cap`` per step. Blocked senders pile up as threads (Little's law: threads = log rate ×
    time a log waits, capped at ``sender_threads_max``). Returns (messages sent, messages dropped)."""
    pending = hosts.pending + logs
    sent = np.minimum(pending, send_cap)
    pending = pending - sent
    bound = sc.log_buffer_mb * 1024.0 / sc.log_kb if sc.log_kb > 0 else math.inf
    dropped = np.maximum(0.0, pending - bound)
    hosts.pending = pending - dropped
    # threads = (logs/s) × (pending / send rate + 2 ms)
    busy = logs * (hosts.pending / max(send_cap, 1e-9) + 0.002 * 1000.0 / sc.step_ms)
    hosts.threads = np.minimum(float(sc.sender_threads_max), busy)
    return float(sent.sum()), float(dropped.sum())


def jvm_step(
    hosts: _Hosts, sc: Scenario, calls: np.ndarray, scan_mb: np.ndarray, scan_rows_mb: np.ndarray, t_ms: float
) -> tuple[float, np.ndarray]:
    """Each host's JVM: pending logs and the rows of running full scans (``scan_mb``) fill the old
    generation, so the young generation shrinks in proportion to the free heap (down to 1/16 of
    ``young_mb``) and collections come faster (``young GC/s = allocation / young``; the calls'
    garbage and the scan rows that arrived this step, ``scan_rows_mb``, are the allocation); each
    pauses ``gc_pause_ms``. A host whose heap is full dies (OOM) and restarts after ``restart_ms``
    with an empty heap (its pending logs are lost). Returns (logs lost, the hosts that died)."""
    dt_s = sc.step_ms / 1000.0
    room = sc.heap_mb - sc.live_mb
    free = room - hosts.pending * (sc.log_kb / 1024.0) - scan_mb
    young = ((sc.young_mb / room) * free).clip(sc.young_mb / 16.0, sc.young_mb)  # JVM keeps a minimum
    alloc = calls * (sc.alloc_kb_per_call / 1024.0 / dt_s) + scan_rows_mb / dt_s
    hosts.young_gc_per_s = alloc / young
    hosts.gc_share = np.minimum(0.95, hosts.young_gc_per_s * (sc.gc_pause_ms / 1000.0))
    hosts.thread_share = np.minimum(0.95, hosts.threads * sc.thread_cpu_share)
    dead = hosts.up & (free <= 0.0)
    if not dead.any():
        return 0.0, dead
    lost = float(hosts.pending[dead].sum())
    for arr in (hosts.pending, hosts.gc_share, hosts.thread_share, hosts.young_gc_per_s, hosts.threads):
        arr[dead] = 0.0
    hosts.up[dead] = False
    hosts.down_until_ms[dead] = t_ms + sc.step_ms + sc.restart_ms
    for i in np.flatnonzero(dead):
        hosts.crashes.append((t_ms + sc.step_ms, int(i)))
    return lost, dead


def host_crashes(w: World, sc: Scenario, calls_h, held, scan_rows, t_ms: float) -> tuple[float, float]:
    """Each host's JVM (:func:`jvm_step`); a host that dies takes its running full scans with it
    (MySQL aborts them) and leaves the load balancer. Returns (logs lost, scans aborted)."""
    logs_lost, dead = jvm_step(w.hosts, sc, calls_h, held, scan_rows, t_ms)
    scans_aborted = w.scans.abort(dead) if dead.any() else 0.0
    if dead.any():
        w.n_up = int(np.count_nonzero(w.hosts.up))
        w.n_down = sc.hosts - w.n_up
        wup = w.hosts.weight * w.hosts.up
        w.share = wup / wup.sum() if w.n_up else wup
    return logs_lost, scans_aborted


def call_logs(w: World, sc: Scenario, degrade_logging: bool, acc, poll_share: float, db, t_ms: float) -> Logs:
    """The call logs of the processed calls (none for the hot API's polls once logging is degraded):
    :func:`log_sender_step` on every host, then the JVMs (:func:`host_crashes`), then JMQ hands
    what it got to ES, which indexes at most ``es_docs_per_s``; the rest is JMQ's backlog."""
    dt_s = sc.step_ms / 1000.0
    log_share = (1.0 - poll_share) if degrade_logging else 1.0
    logs_h = acc.calls_h * (sc.logs_per_call * log_share)
    total = acc.processed * sc.logs_per_call * log_share
    send_cap = sc.jmq_msgs_per_s * dt_s / max(w.n_up, 1)
    sent, dropped = log_sender_step(w.hosts, sc, logs_h, send_cap)
    lost, scans_aborted = host_crashes(w, sc, acc.calls_h, db.held, db.scan_rows, t_ms)
    lost += dropped
    pending = float(w.hosts.pending.sum())
    w.jmq_backlog += sent
    indexed = min(w.jmq_backlog, sc.es_docs_per_s * dt_s)
    w.jmq_backlog -= indexed
    return Logs(total, sent, dropped, lost, scans_aborted, pending, indexed)


def gauges(w: World, sc: Scenario, adm, acc, served: int, failed: int) -> Gauges:
    """What the monitoring sees at the end of the step: CPU per host (the calls' work plus the
    share lost to GC and thread switching), utilisation, availability, young GC. Also sets each
    host's capacity for the next step (what GC and the threads leave of its CPU)."""
    hosts, dt_s, cap_h = w.hosts, sc.step_ms / 1000.0, sc.host_capacity_per_s
    loss = np.minimum(hosts.gc_share + hosts.thread_share, 1.0)
    w.eff = cap_h * (1.0 - loss) * hosts.up
    w.eff_sum = float(w.eff.sum())
    if w.n_up:
        cpu_h = np.minimum(1.0, acc.calls_h * (1.0 / dt_s / cap_h) + loss)
        cpu = float(np.dot(cpu_h, hosts.up)) / w.n_up
        cpu_max = float((cpu_h * hosts.up).max())
        gc_mean = float(np.dot(hosts.gc_share, hosts.up)) / w.n_up
    else:
        cpu = cpu_max = gc_mean = 0.0
    util = min(adm.admitted / dt_s / w.eff_sum, MAX_UTIL) if w.eff_sum > 0 else MAX_UTIL
    done = served + failed + acc.timeouts + adm.rejected
    avail = served / done if done else 1.0
    return Gauges(cpu, cpu_max, gc_mean, util, avail, float(hosts.young_gc_per_s.max()))
