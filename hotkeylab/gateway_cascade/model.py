"""07 · The gateway cascade's actors, top to bottom, then :func:`simulate`.

A time-stepped model: every step of ``step_ms`` the actors run in this order (the order is part
of the model: each reads what the ones before it left): the people reacting to alarms
(:func:`.alarms.dba_scaleup`, :func:`.alarms.release_block`) → :func:`clients_step` (the release
polls) → :func:`admission` (token bucket) → :func:`.hosts.hosts_restart` → :func:`gateway` (the
access queue) → :func:`cache_lookups` (jimdb: defence checks and monitoring) →
:func:`penetration` (jimdb unavailable: through to MySQL) → :func:`full_table_scan` (the lost
parameter) → :func:`gateway_db` (MySQL) → :func:`call_fate` and :func:`mean_latency_ms` →
:func:`.hosts.call_logs` (logs, JVMs, JMQ → ES) → :func:`.hosts.gauges` →
:func:`.alarms.alarms_step`.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from ..sim import check_seed, make_rng
from .alarms import alarms_step, dba_scaleup, order_decided, release_block
from .closed_form import coalesced_rate_per_s, coalesced_utilisation, mm1_ms
from .hosts import call_logs, gauges, hosts_restart
from .results import (
    Access,
    Admission,
    Database,
    FlowLog,
    Lookups,
    Penetration,
    Run,
    StepLog,
    record_flows,
    record_step,
)
from .scenario import SEED_INCIDENT, Fixes, Scenario, _installs
from .state import World, _Scans, _Shard


def clients_step(sc: Scenario, t_ms: float, block_at_ms: float | None, rng) -> tuple[int, int, float]:
    """The client release: installs grow; every active client polls the order API every
    ``poll_interval``. Once the release is blocked at login, new installs are refused and active
    clients leave as they are forced to log in again (time constant ``drain_ms``). Returns
    (order-API polls this step, other calls this step, active clients)."""
    active = _installs(sc, t_ms)
    if block_at_ms is not None and t_ms >= block_at_ms:
        active = min(active, _installs(sc, block_at_ms) * math.exp(-(t_ms - block_at_ms) / sc.drain_ms))
    dt_s = sc.step_ms / 1000.0
    polls = int(rng.poisson(active * sc.calls_per_poll * 1000.0 / sc.poll_interval_ms * dt_s))
    other = int(rng.poisson(sc.baseline_per_s * dt_s))
    return polls, other, active


def token_bucket_step(tokens: float, arrivals: int, rate_per_s: float, burst: float, step_ms: float):
    """Token-bucket admission: ``rate × step`` tokens per step, at most ``burst`` more saved up.
    Returns (admitted, tokens left)."""
    per_step = rate_per_s * step_ms / 1000.0
    tokens = min(tokens + per_step, per_step + burst)
    admitted = min(arrivals, int(tokens))
    return admitted, tokens - admitted



def admission(w: World, sc: Scenario, token_bucket: bool, polls: int, other_calls: int) -> Admission:
    """The access layer's admission. With the token bucket on (解决问题四, a per-interface limit)
    the order API's polls pass at ``token_bucket_per_s``, the rest are refused fast; other calls
    always pass."""
    arrivals = polls + other_calls
    if token_bucket:
        polls_in, w.tokens = token_bucket_step(w.tokens, polls, sc.token_bucket_per_s, sc.token_burst, sc.step_ms)
    else:
        polls_in = polls
    admitted = polls_in + other_calls
    return Admission(arrivals, admitted, arrivals - admitted, polls_in / admitted if admitted else 0.0)


def access_step(queue: deque, k: int, admitted: int, capacity: int, timeout_steps: int):
    """The access layer's queue (cohorts ``[step, count]``, FIFO): calls that have waited
    ``timeout_steps`` are lost (the client gave up), then up to ``capacity`` are processed.
    Returns (processed, timed out, total wait in steps of the processed)."""
    if admitted:
        queue.append([k, admitted])
    timed_out = 0
    while queue and k - queue[0][0] >= timeout_steps:
        timed_out += queue.popleft()[1]
    processed = wait = 0
    while queue and processed < capacity:
        take = min(queue[0][1], capacity - processed)
        processed += take
        wait += take * (k - queue[0][0])
        queue[0][1] -= take
        if queue[0][1] == 0:
            queue.popleft()
    return processed, timed_out, wait



def gateway(w: World, sc: Scenario, k: int, admitted: int, timeout_steps: int) -> Access:
    """The gateway hosts: one FIFO access queue (:func:`access_step`) in front of the hosts up,
    processed at what their CPUs have left after GC and thread switching; the load balancer
    spreads the processed calls over the hosts by weight."""
    capacity = int(w.eff_sum * (sc.step_ms / 1000.0))
    processed, timeouts, wait = access_step(w.queue, k, admitted, capacity, timeout_steps)
    w.q_len += admitted - processed - timeouts
    wait_ms = wait * sc.step_ms / processed if processed else 0.0
    callers = max(w.n_up, 1) * sc.check_reads_per_call  # hosts × keys: who coalesces with singleflight
    return Access(processed, timeouts, wait_ms, w.share * processed, callers)


def jimdb_step(shard: _Shard, sc: Scenario, t_ms: float, offered_ops: float) -> tuple[float, float, bool]:
    """The jimdb shard: utilisation ``u = offered / capacity``; at ``u ≥ 1`` only ``1/u`` of the
    operations succeed (the rest time out), and a master overloaded for ``failover_after_ms`` is
    declared dead: the slave takes over, the shard is unavailable for ``failover_ms`` (connections
    lost), then the new master faces the same load. Returns (success share, utilisation, up)."""
    dt = sc.step_ms
    u = offered_ops / (shard.capacity_per_s * dt / 1000.0)
    if not shard.up(t_ms):
        return 0.0, u, False
    if u >= 1.0:
        shard.overloaded_ms += dt
        if shard.overloaded_ms >= sc.failover_after_ms:
            shard.failovers.append(t_ms + dt)
            shard.down_until_ms = t_ms + dt + sc.failover_ms
            shard.overloaded_ms = 0.0
        return 1.0 / u, u, True
    shard.overloaded_ms = 0.0
    return 1.0, u, True



def cache_lookups(w: World, sc: Scenario, fx: Fixes, h: float, t_ms: float, acc: Access) -> Lookups:
    """Jimdb (问题一): each call's defence checks read ``check_reads_per_call`` keys (token, pin),
    those that miss the local cache (hit ratio ``h``) go to the hot shard; monitoring writes its
    counters to the same shard, or to its own cluster once the clusters are split. With
    singleflight, concurrent misses of one key on one host share one read."""
    dt_s = sc.step_ms / 1000.0
    miss = acc.processed * sc.check_reads_per_call * (1.0 - h)
    writes = 0.0 if fx.degrade_monitoring else acc.processed * sc.monitor_writes_per_call
    other = 0.0 if fx.split_clusters else writes
    if fx.singleflight and miss > 0 and w.shard.up(t_ms):
        u_sf = coalesced_utilisation(
            miss / dt_s / acc.callers, acc.callers, sc.jimdb_net_ms, w.shard.capacity_per_s, other / dt_s,
            sc.jimdb_timeout_ms,
        )  # fmt: skip
        to_shard = max(0.0, u_sf * w.shard.capacity_per_s * dt_s - other)
    else:
        to_shard = miss
    jimdb_in = to_shard + other
    ok, util, up = jimdb_step(w.shard, sc, t_ms, jimdb_in)
    if fx.split_clusters:
        m_ok, m_util, m_up = jimdb_step(w.mon, sc, t_ms, writes)
        mon_in = writes
    else:
        m_ok, m_util, m_up, mon_in = ok, 0.0, up, 0.0
    return Lookups(miss, writes, jimdb_in, ok, util, up, mon_in, m_ok, m_util, m_up)


def penetration(sc: Scenario, fix_full_scan: bool, lk: Lookups) -> Penetration:
    """Cache penetration (问题三): while the shard is unavailable the checks go *through* jimdb to
    MySQL; a share ``param_loss_share`` of these lookups lose the pin parameter (问题四, the code
    bug) and become full-table scans, the rest are point queries."""
    fallthrough = 0.0 if lk.up else lk.miss
    pl_share = 0.0 if fix_full_scan else sc.param_loss_share
    lost_param = fallthrough * pl_share
    return Penetration(fallthrough, pl_share, lost_param, fallthrough - lost_param)


def full_table_scan(w: World, sc: Scenario, fx: Fixes, lost_param: float) -> float:
    """The last straw (问题四): every lookup that lost its parameter starts a full-table scan on
    MySQL, from the host that issued it. All of them ask for one key ("pin" = null) per host, so
    singleflight (while a scan runs) and a negative cache (for its TTL) coalesce them. Returns the
    scans started this step."""
    dt_s = sc.step_ms / 1000.0
    scans = lost_param
    scan_ms = sc.full_scan_ms * max(1.0, w.db_util)  # how long a scan runs now (last step's load)
    hold = (scan_ms if fx.singleflight else 0.0) + (sc.negative_cache_ttl_ms if fx.negative_cache else 0.0)
    if lost_param > 0 and hold > 0:
        per_host = max(w.n_up, 1)
        scans = per_host * coalesced_rate_per_s(lost_param / dt_s / per_host, hold) * dt_s
    w.scans.start(w.share * scans)
    return scans


def mysql_step(sc: Scenario, scans: _Scans, work: float) -> tuple[float, float, float]:
    """MySQL: ``work`` in point-query units this step, plus the running full scans, each of which
    wants ``full_scan_cost`` units over ``full_scan_ms``. Utilisation ``u`` = demand / capacity. At
    ``u ≥ 1`` everything runs ``u`` times slower: only ``1/u`` of the point queries finish within
    the timeout, and every scan advances ``1/u`` as fast. Returns (success share of point queries,
    utilisation, scans finished this step)."""
    cap = sc.mysql_qps * sc.step_ms / 1000.0
    running = float(scans.count.sum())
    scan_work = running * sc.full_scan_cost * sc.step_ms / sc.full_scan_ms
    u = (work + scan_work) / cap
    speed = 1.0 if u <= 1.0 else 1.0 / u
    done = scans.advance(speed * sc.step_ms / sc.full_scan_ms) if running else 0.0
    return speed, u, done



def gateway_db(w: World, sc: Scenario, fx: Fixes, h: float, lk: Lookups, pen: Penetration, acc: Access) -> Database:
    """The gateway's MySQL: the app layer's queries (calls that passed jimdb), the fallback's point
    queries (coalesced with singleflight) and the running scans (:func:`mysql_step`); the rows of
    the running scans stream into the issuing hosts' heaps."""
    dt, dt_s = sc.step_ms, sc.step_ms / 1000.0
    j_pass = (h + (1.0 - h) * (lk.ok if lk.up else 1.0)) ** sc.check_reads_per_call  # not timed out at jimdb
    app_q = acc.processed * j_pass * sc.app_queries_per_call
    scan_demand = float(w.scans.count.sum()) * sc.full_scan_cost * dt / sc.full_scan_ms
    if fx.singleflight and pen.points > 0:
        u_db = coalesced_utilisation(
            pen.points / dt_s / acc.callers, acc.callers, sc.mysql_query_ms, sc.mysql_qps,
            (app_q + scan_demand) / dt_s, sc.mysql_timeout_ms,
        )  # fmt: skip
        points_db = max(0.0, u_db * sc.mysql_qps * dt_s - app_q - scan_demand)
    else:
        points_db = pen.points
    work = points_db + app_q
    held_before = w.scans.held_mb(sc.full_scan_result_mb)
    ok, w.db_util, done = mysql_step(sc, w.scans, work)
    held = w.scans.held_mb(sc.full_scan_result_mb)
    scan_rows = np.maximum(0.0, held - held_before)  # rows that streamed in this step (MB)
    return Database(j_pass, app_q, points_db, work + scan_demand, ok, done, held, scan_rows)


def call_fate(sc: Scenario, h: float, lk: Lookups, pen: Penetration, db: Database, processed: int, rng):
    """A processed call is answered if every lookup passes (local cache, jimdb, or MySQL when
    jimdb is down and the parameter is intact), then the app layer's query (if any). Returns
    (served, failed, the app layer's success share)."""
    p_lookup = h + (1.0 - h) * (lk.ok if lk.up else (1.0 - pen.param_loss_share) * db.ok)
    p_app = 1.0 - sc.app_queries_per_call * (1.0 - db.ok)
    p_ok = min(1.0, max(0.0, p_lookup**sc.check_reads_per_call * p_app))
    served = int(rng.binomial(processed, p_ok)) if processed else 0
    return served, processed - served, p_app


def mean_latency_ms(w: World, sc: Scenario, h: float, lk: Lookups, wait_ms: float) -> float:
    """Mean latency of a processed call: its queue wait, its own work, the lookups (jimdb, or
    the round trip then MySQL when jimdb is down) and the app layer's query, each the M/M/1 time
    of :func:`.closed_form.mm1_latency_ms` (its formula :func:`.closed_form.mm1_ms`: the
    arguments come from the scenario, checked once when it was built)."""
    lj = mm1_ms(sc.jimdb_net_ms, w.shard.capacity_per_s, lk.util, sc.jimdb_timeout_ms)
    ldb = mm1_ms(sc.mysql_query_ms, sc.mysql_qps, w.db_util, sc.mysql_timeout_ms)
    per_lookup = lj if lk.up else sc.jimdb_net_ms + ldb
    reads = sc.check_reads_per_call
    return wait_ms + sc.base_latency_ms + reads * (1.0 - h) * per_lookup + sc.app_queries_per_call * ldb


def _lb_weights(sc: Scenario, rng) -> np.ndarray:
    """The load balancer's uneven per-host weights (the run's first random draws)."""
    w = np.clip(1.0 + sc.lb_jitter * rng.standard_normal(sc.hosts), 0.5, 1.5)
    return w / w.sum()


def simulate(scenario: Scenario = SEED_INCIDENT, seed: int = 0, *, stop_when_order_decided: bool = False) -> Run:
    """Run ``scenario`` for ``scenario.steps`` steps with random stream ``seed``: Poisson arrivals,
    the load balancer's host weights and each step's answered calls come from it; everything else
    is deterministic.

    ``stop_when_order_decided``: end the run early once the order of :data:`SEED_ALARM_ORDER` can no
    longer change (all seven fired, or one fired out of place). The steps run are the same as in
    the full run, so :meth:`Run.alarm_order` is the same; the windows are shorter. For sweeps."""
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    if not isinstance(stop_when_order_decided, bool):
        raise ValueError(f"stop_when_order_decided must be True or False, got {stop_when_order_decided!r}")
    sc = scenario
    rng = make_rng(check_seed(seed))
    w = World.start(sc, _lb_weights(sc, rng))
    timeout_steps = max(1, int(math.ceil(sc.client_timeout_ms / sc.step_ms - 1e-9)))
    log, flows, led, no_fix = StepLog(), FlowLog(), w.ledger, Fixes()
    n_fired = 0  # alarms fired so far (the order is tested only when it changes)
    for k in range(sc.steps):
        t = k * sc.step_ms
        on = t >= sc.fixes_at_ms
        fx, h = (sc.fixes, sc.local_cache_hit_ratio) if on else (no_fix, 0.0)
        dba_scaleup(w, sc, t)
        release_block(w, sc, fx.block_release)
        polls, other_calls, active = clients_step(sc, t, w.events["block_at_ms"], rng)
        adm = admission(w, sc, fx.token_bucket, polls, other_calls)
        hosts_restart(w, sc, t)
        acc = gateway(w, sc, k, adm.admitted, timeout_steps)
        lk = cache_lookups(w, sc, fx, h, t, acc)
        pen = penetration(sc, fx.fix_full_scan, lk)
        scans = full_table_scan(w, sc, fx, pen.lost_param)
        db = gateway_db(w, sc, fx, h, lk, pen, acc)
        served, failed, p_app = call_fate(sc, h, lk, pen, db, acc.processed, rng)
        latency = mean_latency_ms(w, sc, h, lk, acc.wait_ms)
        logs = call_logs(w, sc, fx.degrade_logging, acc, adm.poll_share, db, t)
        record_flows(flows, w, adm, acc, lk, db, scans, p_app, logs)
        led.arrived += adm.arrivals
        led.rejected += adm.rejected
        led.served += served
        led.timed_out += acc.timeouts + failed
        g = gauges(w, sc, adm, acc, served, failed)
        alarms_step(w, sc, t + sc.step_ms, acc, lk, g, latency, scans, db)
        record_step(log, sc, w, t, active, adm, acc, lk, pen, scans, db, served, failed, latency, logs, g)
        n_fired_now = len(w.alarms.fired)
        if stop_when_order_decided and n_fired_now != n_fired and order_decided(w.alarms.fired):
            w.events["stopped_at_ms"] = t + sc.step_ms
            break
        n_fired = n_fired_now
    return _finish(sc, seed, w, log, flows)


def _finish(sc: Scenario, seed: int, w: World, log: StepLog, flows: FlowLog) -> Run:
    """The run's result: windows and flows as arrays, the ledger closed and checked."""
    led = w.ledger
    led.in_system = w.q_len
    windows = log.arrays()
    led.extra = {
        "failed_at_dependency": int(windows["failed"].sum()),
        "queue_timeouts": int(windows["timeouts"].sum()),
    }
    led.check()
    return Run(
        scenario=sc,
        seed=seed,
        windows=windows,
        flows=flows.arrays(),
        alarms=sorted(w.alarms.fired.items(), key=lambda kv: kv[1]),
        failovers=sorted(w.shard.failovers + w.mon.failovers),
        crashes=list(w.hosts.crashes),
        events=w.events,
        ledger=led,
    )
