"""07 · The alarms in the order they fire, and the people who react to them: the DBA who scales
jimdb up after "connection lost", and the release blocked at login after the first alarm."""

from __future__ import annotations

from .scenario import _SEED_DB_CPU, SEED_ALARM_ORDER, Scenario
from .state import World


def dba_scaleup(w: World, sc: Scenario, t_ms: float) -> None:
    """The DBA (联系 dba 对 Jimidb 进行扩容): ``dba_reaction_ms`` after the "connection lost" alarm,
    every jimdb shard gets ``dba_capacity_factor`` times its capacity."""
    lost_at = w.alarms.fired.get("jimdb_connection_lost")
    if w.events["dba_scaleup_ms"] is None and lost_at is not None and t_ms >= lost_at + sc.dba_reaction_ms:
        w.events["dba_scaleup_ms"] = t_ms
        w.shard.capacity_per_s *= sc.dba_capacity_factor
        w.mon.capacity_per_s *= sc.dba_capacity_factor


def release_block(w: World, sc: Scenario, block_release: bool) -> None:
    """The fix of 想一想: ``block_reaction_ms`` after the first alarm (and not before the fixes are
    on) the login logic refuses the release; :func:`.model.clients_step` drains it."""
    first = w.alarms.fired.get("performance")
    if w.events["block_at_ms"] is None and block_release and first is not None:
        w.events["block_at_ms"] = max(first + sc.block_reaction_ms, sc.fixes_at_ms)


def alarms_step(w: World, sc: Scenario, t_end_ms: float, acc, lk, g, latency: float, scans: float, db) -> None:
    """Raise each alarm whose condition has held for its hold time (once): the seven the
    postmortem lists, then what jstack, jmap and the DBA saw."""
    a, dt, hold = w.alarms, sc.step_ms, sc.alarm_hold_ms
    a.update("performance", acc.processed > 0 and latency > sc.perf_alarm_ms, t_end_ms, dt, hold)
    a.update("availability", g.availability < sc.availability_alarm, t_end_ms, dt, hold)
    failed_over = bool(w.shard.failovers or w.mon.failovers)
    a.update("jimdb_failover", failed_over, t_end_ms, dt, 0.0)
    a.update("jimdb_connection_lost", not (lk.up and lk.mon_up), t_end_ms, dt, sc.conn_lost_alarm_ms)
    healthy = lk.up and lk.mon_up and lk.util < 1.0 and lk.mon_util < 1.0
    a.update("jimdb_recovered", failed_over and healthy, t_end_ms, dt, sc.recovered_hold_ms)
    a.update("gateway_cpu", g.cpu_max >= sc.cpu_alarm, t_end_ms, dt, hold)
    a.update("host_down", bool(w.hosts.crashes), t_end_ms, dt, 0.0)
    a.update("young_gc", g.young_gc_per_s >= sc.young_gc_alarm_per_s, t_end_ms, dt, hold)
    a.update("full_scan", scans > 0, t_end_ms, dt, 0.0)
    a.update("mysql_cpu", w.db_util >= _SEED_DB_CPU, t_end_ms, dt, hold)
    a.update("mysql_down", db.ok < 0.5, t_end_ms, dt, hold)


def order_decided(fired: dict, names=SEED_ALARM_ORDER) -> bool:
    """Is the order of the alarms ``names`` settled by what has ``fired`` so far: all of them
    fired, or one fired before an alarm that precedes it in ``names``?"""
    got = [n for n, _ in sorted(fired.items(), key=lambda kv: kv[1]) if n in names]
    return len(got) == len(names) or got != list(names[: len(got)])
