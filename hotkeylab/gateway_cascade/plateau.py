"""07 · The closed forms of a whole scenario at the ramp's plateau (every install polling): each
component's load, how long a host's log queue takes to fill, and the young GC rate once it is full.
The tests compare each with a run of the step model (:mod:`.model`) where its assumptions hold.
"""

from __future__ import annotations

import math

from ..validate import check_number
from .closed_form import backlog_growth_per_s, shard_load_per_s
from .scenario import SEED_INCIDENT, Scenario


def _check_scenario(scenario) -> Scenario:
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a gateway_cascade.Scenario, got {type(scenario).__name__}")
    return scenario


def peak_loads(scenario: Scenario = SEED_INCIDENT) -> dict:
    """Closed form: each component's load at the plateau (every install polling), before anything
    fails, as (load per s, capacity per s, utilisation)."""
    sc = _check_scenario(scenario)
    lam = sc.peak_calls_per_s
    jimdb = shard_load_per_s(lam, sc.check_reads_per_call, sc.monitor_writes_per_call, sc.local_cache_hit_ratio)
    gateway_cap = sc.hosts * sc.host_capacity_per_s
    return {
        "gateway": (lam, gateway_cap, lam / gateway_cap),
        "jimdb": (jimdb, sc.shard_ops_per_s, jimdb / sc.shard_ops_per_s),
        "mysql": (lam * sc.app_queries_per_call, sc.mysql_qps, lam * sc.app_queries_per_call / sc.mysql_qps),
        "jmq": (lam * sc.logs_per_call, sc.jmq_msgs_per_s, lam * sc.logs_per_call / sc.jmq_msgs_per_s),
        "es": (min(lam * sc.logs_per_call, sc.jmq_msgs_per_s), sc.es_docs_per_s,
               min(lam * sc.logs_per_call, sc.jmq_msgs_per_s) / max(sc.es_docs_per_s, 1e-9)),
    }  # fmt: skip


def heap_fill_s(scenario: Scenario = SEED_INCIDENT, calls_per_s: float | None = None) -> float:
    """Closed form: seconds until a host's pending logs reach its log buffer (``log_buffer_mb``, or
    the free heap if that is smaller) at a constant load (``calls_per_s``, default the plateau)
    shared evenly by all hosts: space / (log excess per host × log size). inf if JMQ keeps up."""
    sc = _check_scenario(scenario)
    lam = sc.peak_calls_per_s if calls_per_s is None else check_number("calls_per_s", calls_per_s, low=0.0)
    excess = backlog_growth_per_s(lam * sc.logs_per_call, sc.jmq_msgs_per_s) / sc.hosts
    if excess == 0 or sc.log_kb == 0:
        return math.inf
    space_mb = min(sc.heap_mb - sc.live_mb, sc.log_buffer_mb)
    return space_mb * 1024.0 / sc.log_kb / excess


def young_gc_per_s(scenario: Scenario = SEED_INCIDENT, calls_per_s: float | None = None, held_mb: float = 0.0) -> float:
    """Closed form: young collections per second on one host whose log buffer is full and which
    also holds ``held_mb`` of scan rows, at ``calls_per_s`` (default the plateau) shared evenly:
    allocation / young generation, the young generation shrinking with the free heap."""
    sc = _check_scenario(scenario)
    lam = sc.peak_calls_per_s if calls_per_s is None else check_number("calls_per_s", calls_per_s, low=0.0)
    held = check_number("held_mb", held_mb, low=0.0)
    room = sc.heap_mb - sc.live_mb
    free = room - min(room, sc.log_buffer_mb) - held
    young = min(max(sc.young_mb / room * free, sc.young_mb / 16.0), sc.young_mb)
    return lam / sc.hosts * sc.alloc_kb_per_call / 1024.0 / young

