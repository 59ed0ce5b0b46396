"""Exercises of notebook 07 · Gateway cascade. Expected answers come from hotkeylab.gateway_cascade."""

from __future__ import annotations

import math

from .. import gateway_cascade as gw
from ..exercises import Mistake, numeric

_SC = gw.SEED_INCIDENT
SEED_CALLS_PER_MIN = 1_900_000.0  # "统计网关调用量峰值 190w+/min"
SEED_BACKLOG = 800_000_000.0  # "网关日志 JMQ 积压 8亿+"
EX1_POLL_MS = 2_000.0  # exercise 1: a later release polling every 2 s (the seed's polls every 5 s)
EX2_HIT = 0.8  # exercise 2's local cache (the notebook prints 0, 0.5 and 0.9, not this)
EX3_GATEWAY_LOOKUPS, EX3_HOSTS, EX3_READ_MS = 30_000.0, 20, 2.0  # exercise 3: lookups/s of the key at the gateway
EX6_NET_MS = 2.0  # exercise 6: a jimdb round trip twice the preset's 1 ms


def _jmq_calls_per_s() -> float:
    """Calls/s whose logs JMQ's connections just send: beyond it the logs queue in the heaps."""
    return _SC.jmq_msgs_per_s / _SC.logs_per_call


@numeric("07.clients_2s", rel=0.01, unit="clients",
         hint="The logs start queuing once the calls pass what JMQ sends (printed in the closed form); "
         "the other traffic takes part of that, the polls the rest: N = polls/s × 2 s.",
         mistakes=lambda: [
             Mistake(_jmq_calls_per_s() * EX1_POLL_MS / 1000.0 / _SC.calls_per_poll,
                     "that leaves out the gateway's other traffic: its calls log too, so fewer polls fill JMQ."),
             Mistake(gw.clients_for_calls_per_min(SEED_CALLS_PER_MIN, EX1_POLL_MS),
                     "that is the clients for the seed's 1.9 million calls/min; the logs pile up well before."),
         ])  # fmt: skip
def clients_2s() -> float:
    """Clients of a release polling every 2 s (``calls_per_poll`` calls each, the baseline still
    there) at which the call logs start piling up in the heaps: the calls reach what JMQ sends."""
    return gw.clients_for_calls_per_min(_jmq_calls_per_s() * 60.0, EX1_POLL_MS,
                                        baseline_per_min=_SC.baseline_per_s * 60.0,
                                        calls_per_poll=_SC.calls_per_poll)


def _plateau_calls_per_s() -> float:
    """Calls/s at the plateau, built from the clients: installs × calls per poll / interval + baseline."""
    return _SC.installs_max * _SC.calls_per_poll * 1000.0 / _SC.poll_interval_ms + _SC.baseline_per_s


@numeric("07.shard_ops_local_cache", rel=0.01, unit="ops/s",
         hint="First the calls/s: installs × calls per poll / polling interval, plus the other traffic. "
         "Then a local cache absorbs reads only: calls/s × (reads × (1 − h) + writes).",
         mistakes=lambda: [
             Mistake((_plateau_calls_per_s() - _SC.baseline_per_s)
                     * (_SC.check_reads_per_call * (1 - EX2_HIT) + _SC.monitor_writes_per_call),
                     "that leaves out the gateway's other traffic: its calls read token and pin and write "
                     "the counters too."),
             Mistake(_plateau_calls_per_s() * _SC.check_reads_per_call * (1 - EX2_HIT),
                     "that counts only the reads the cache misses; the monitoring writes still reach the shard."),
             Mistake(_plateau_calls_per_s() * (_SC.check_reads_per_call + _SC.monitor_writes_per_call) * (1 - EX2_HIT),
                     "that caches the writes too; a local cache can answer reads only."),
         ])  # fmt: skip
def shard_ops_local_cache() -> float:
    """Ops/s on the hot shard at the plateau (calls/s built from the installs, the polling interval
    and the other traffic) with a local cache of hit ratio 0.8 in front of the checks' reads,
    monitoring still writing to the same shard."""
    return gw.shard_load_per_s(_plateau_calls_per_s(), _SC.check_reads_per_call, _SC.monitor_writes_per_call, EX2_HIT)


@numeric("07.singleflight_rate", rel=0.02, unit="reads/s",
         hint="Each host coalesces only the lookups it sees itself: λ = gateway lookups / hosts. One read "
         "is in flight for 2 ms, then the next arrival starts a new one: λ / (1 + λ·L).",
         mistakes=lambda: [
             Mistake(gw.coalesced_rate_per_s(EX3_GATEWAY_LOOKUPS, EX3_READ_MS),
                     "that coalesces the whole gateway as one caller; each host has its own reads in flight."),
             Mistake(EX3_HOSTS * gw.coalesced_rate_per_s(EX3_GATEWAY_LOOKUPS / EX3_HOSTS, EX3_READ_MS),
                     "that is the whole gateway's reads; the question asks for one host's."),
         ])  # fmt: skip
def singleflight_rate() -> float:
    """The gateway sees 30,000 lookups/s of the hot key, spread evenly over 20 hosts; a jimdb read
    takes 2 ms. With singleflight on every host, how many reads/s does one host send for the key?"""
    return gw.coalesced_rate_per_s(EX3_GATEWAY_LOOKUPS / EX3_HOSTS, EX3_READ_MS)


def _drain_per_s() -> float:
    """Net logs/s leaving JMQ once only the other traffic is left: ES indexes, the baseline logs."""
    return _SC.es_docs_per_s - _SC.baseline_per_s * _SC.logs_per_call


@numeric("07.hours_to_backlog", rel=0.02, unit="h",
         hint="The backlog shrinks at (out − in) per second: Elasticsearch indexes, and the gateway's "
         "other traffic still sends its logs; divide and convert seconds to hours.",
         mistakes=lambda: [
             Mistake(SEED_BACKLOG / _SC.es_docs_per_s / 3600.0,
                     "that empties JMQ at Elasticsearch's full rate; the other traffic's logs keep arriving."),
         ])  # fmt: skip
def hours_to_backlog() -> float:
    """The flood is over, only the other traffic is left (one log per call). JMQ holds the seed's
    800 million logs and Elasticsearch indexes ``es_docs_per_s``: hours until JMQ is empty."""
    return SEED_BACKLOG / _drain_per_s() / 3600.0


@numeric("07.slowest_poll", rel=0.02, unit="s",
         hint="The shard fills at capacity / (reads × (1 − h) + writes) calls/s; the installs' polls "
         "must supply that minus the baseline: T = installs / polls per second.")  # fmt: skip
def slowest_poll() -> float:
    """With a local cache of hit ratio 0.9 and monitoring on the same shard: the longest polling
    interval (s) at which the seed's installs still offer the hot shard more than its capacity."""
    per_call = _SC.check_reads_per_call * (1 - 0.9) + _SC.monitor_writes_per_call
    saturating_calls = _SC.shard_ops_per_s / per_call  # calls/s that fill the shard
    polls = saturating_calls - _SC.baseline_per_s
    return _SC.installs_max * _SC.calls_per_poll / polls


@numeric("07.singleflight_latency", rel=0.02, unit="ms",
         hint="The longer round trip coalesces more, so the fixed point moves: recompute u with "
         "coalesced_utilisation(network_ms=2). The shard serves one op in 1/C = 12.5 µs and an op "
         "spends (1/C)/(1 − u) queued there; the 2 ms round trip comes on top.")  # fmt: skip
def singleflight_latency() -> float:
    """Singleflight on every host at the plateau (monitoring still on the shard), but a jimdb round
    trip of 2 ms instead of 1: the mean latency (ms) of one jimdb read, 2 ms of network plus the
    shard's M/M/1 time at its fixed point."""
    lam = _SC.peak_calls_per_s / _SC.hosts
    callers = _SC.hosts * _SC.check_reads_per_call
    u = gw.coalesced_utilisation(lam, callers, EX6_NET_MS, _SC.shard_ops_per_s,
                                 _SC.peak_calls_per_s * _SC.monitor_writes_per_call)
    return gw.mm1_latency_ms(EX6_NET_MS, _SC.shard_ops_per_s, u, math.inf)


@numeric("07.scans_to_oom", rel=0.02, unit="scans",
         hint="With logging degraded the log queue stays empty: free heap = heap − live data; each "
         "scan would hold its whole result set just before it returns.",
         mistakes=lambda: [
             Mistake((_SC.heap_mb - _SC.live_mb - _SC.log_buffer_mb) / _SC.full_scan_result_mb,
                     "that is with a full log queue; with the hot API's logs degraded the queue stays empty."),
         ])  # fmt: skip
def scans_to_oom() -> float:
    """Logging degraded, so a host's log queue stays empty: how many whole result sets of full
    scans (``full_scan_result_mb`` each, a fraction is fine) fill the rest of its heap?"""
    return (_SC.heap_mb - _SC.live_mb) / _SC.full_scan_result_mb
