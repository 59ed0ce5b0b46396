"""07 · Gateway cascade: a client release, a hot cache shard, and penetration to MySQL (seed 001).

The incident (JD 京麦 API gateway, a Saturday morning in 2015): a new client release polled the
order API every 5 s; as installs grew the gateway peaked at 1.9 million calls per minute. The
alarms came in this order: gateway performance (interfaces time out), gateway availability, Jimdb
(Redis) failover again and again, Jimdb connection lost, (DBA scales Jimdb up) Jimdb recovers,
gateway CPU surges and servers go down. Jstack then showed constant young GC, Jmap a SQL that scans
a MySQL table in full. The postmortem's four problems:

1. monitoring (performance and error counters) is written to Jimdb; the call surge makes one shard
   hot; it fails over again and again;
2. call logs go through JMQ to Elasticsearch; JMQ connections run short, messages pile up, the
   sending threads push the thread count up and the JVM into frequent young GC;
3. the access layer's defence checks (token and pin) read Jimdb; when Jimdb is unavailable the code
   goes *through* it to MySQL, which collapses;
4. a parameter-loss bug in the defence layer turns a query into a full-table scan: the last straw.

Model: a **time-stepped** simulation (one step = ``step_ms``, a fixed number of ``steps``) in which
one function per actor the postmortem names steps it (:func:`clients_step`, :func:`token_bucket_step`,
:func:`access_step`, :func:`jimdb_step`, :func:`mysql_step`, :func:`log_sender_step`,
:func:`jvm_step`); :func:`simulate` wires them together in code: clients → access layer (defence
checks, dispatch) → Jimdb hot shard / app layer → MySQL; monitoring → Jimdb; call logs → JMQ → ES;
the fallback *Jimdb unavailable → MySQL*. :data:`GATEWAY_GRAPH` describes the same dependencies for
the drawing (:func:`plot_graph`) only; the simulation does not read it. The seed draws Poisson
arrivals and the load balancer's uneven host weights.

The last straw (问题四) is modelled as a mechanism: a lost parameter turns a fallback lookup into a
full-table scan; MySQL runs every scan it accepts (a caller's timeout does not stop it) and the scan's
rows stream into the issuing host's heap (:class:`_Scans`), where the bounded log queue already
holds most of the room. The scans keep MySQL saturated (down, for its callers) after Jimdb recovers,
and their rows finish off the hosts.

Fixes (:class:`Fixes`, switches; parameters in :class:`Scenario`): the postmortem's five numbered
fixes (解决问题一 … 五: degrade monitoring; degrade logging; local JVM cache, the code-bug fix and
split Jimdb clusters; token-bucket admission; check the SQL for full scans; six switches here, as
the code-bug fix and the SQL check are one switch and the local cache is a hit ratio), the block of
the release at login (how the flood actually drained, 想一想), and two standard hot-key defences:
request coalescing (singleflight) and negative caching.

Ledger (requests): ``arrived = served + timed_out (waited too long in the access queue, or failed at a
dependency) + rejected (token bucket) + in_system (access queue at the end)``. Every node also keeps
its own flows (``in = out + dropped + Δstored``) in :attr:`Run.flows`.

Units: milliseconds in the API (``*_ms``), rates per second (``*_per_s``); windowed arrays have one
entry per step with ``t`` in seconds; plots use minutes because the incident lasts hours.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache

import numpy as np

from .plotting import COLORS, decorate, new_figure, shade
from .sim import Ledger, check_seed, make_rng
from .validate import check_choice, check_int, check_number, check_probability

__all__ = [
    "MIN_MS",
    "MAX_STEPS",
    "Node",
    "Edge",
    "Graph",
    "GATEWAY_GRAPH",
    "Fixes",
    "FIX_NAMES",
    "SEED_FIX_NAMES",
    "FIX_LABELS",
    "FIX_TARGETS",
    "Scenario",
    "SEED_INCIDENT",
    "SEED_ALARM_ORDER",
    "ALARM_TEXT",
    "with_fixes",
    "Run",
    "simulate",
    "clients_step",
    "token_bucket_step",
    "access_step",
    "jimdb_step",
    "mysql_step",
    "log_sender_step",
    "jvm_step",
    "clients_for_calls_per_min",
    "calls_per_min",
    "installs_at",
    "shard_load_per_s",
    "ttl_hit_ratio",
    "coalesced_rate_per_s",
    "coalesced_utilisation",
    "mm1_latency_ms",
    "backlog_growth_per_s",
    "hours_to_backlog",
    "heap_fill_s",
    "young_gc_per_s",
    "alarm_order_map",
    "OrderMap",
    "plot_order_map",
    "peak_loads",
    "KeyFetches",
    "simulate_key_fetches",
    "FixComparison",
    "default_variants",
    "compare_fixes",
    "LOCAL_CACHE_FIX_HIT",
    "node_utilisation",
    "plot_graph",
    "plot_graph_moments",
    "plot_timelines",
    "plot_fixes",
    "plot_compact",
    "explore",
]

MIN_MS = 60_000.0  # one minute in ms
MAX_STEPS = 200_000  # a run never takes more steps than this
COMPONENTS = ("gateway", "jimdb", "mysql", "jmq")
MAX_UTIL = 10.0  # utilisation reported when a component has no capacity left (all hosts down)


# --------------------------------------------------------------------------- closed forms
def clients_for_calls_per_min(
    calls_per_min: float,
    poll_interval_ms: float,
    *,
    baseline_per_min: float = 0.0,
    calls_per_poll: float = 1.0,
) -> float:
    """Clients that, each polling every ``poll_interval_ms``, add up to ``calls_per_min``:
    ``N = (calls_per_min − baseline_per_min) × poll_interval / 60 s / calls_per_poll``."""
    c = check_number("calls_per_min", calls_per_min, low=0.0)
    p = check_number("poll_interval_ms", poll_interval_ms, low=0.0, low_open=True)
    b = check_number("baseline_per_min", baseline_per_min, low=0.0, high=c)
    k = check_number("calls_per_poll", calls_per_poll, low=0.0, low_open=True)
    return (c - b) * p / MIN_MS / k


def calls_per_min(
    clients: float, poll_interval_ms: float, *, baseline_per_min: float = 0.0, calls_per_poll: float = 1.0
) -> float:
    """Calls per minute from ``clients`` polling every ``poll_interval_ms`` (plus a baseline)."""
    n = check_number("clients", clients, low=0.0)
    p = check_number("poll_interval_ms", poll_interval_ms, low=0.0, low_open=True)
    b = check_number("baseline_per_min", baseline_per_min, low=0.0)
    k = check_number("calls_per_poll", calls_per_poll, low=0.0, low_open=True)
    return n * k * MIN_MS / p + b


def shard_load_per_s(
    calls_per_s: float, reads_per_call: float, writes_per_call: float, hit_ratio: float = 0.0
) -> float:
    """Operations/s on the shard holding the hot key: reads that miss a local cache of hit ratio
    ``hit_ratio`` plus writes (a local cache does not absorb writes):
    ``λ × (reads × (1 − h) + writes)``."""
    lam = check_number("calls_per_s", calls_per_s, low=0.0)
    r = check_number("reads_per_call", reads_per_call, low=0.0)
    w = check_number("writes_per_call", writes_per_call, low=0.0)
    h = check_probability("hit_ratio", hit_ratio)
    return lam * (r * (1.0 - h) + w)


def ttl_hit_ratio(rate_per_s: float, ttl_ms: float) -> float:
    """Hit ratio of a local cache entry with a TTL for one key requested at ``rate_per_s``
    (Poisson): after each miss the next ``ttl`` is all hits, so ``h = λT / (1 + λT)``."""
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    ttl = check_number("ttl_ms", ttl_ms, low=0.0)
    x = lam * ttl / 1000.0
    return x / (1.0 + x)


def coalesced_rate_per_s(rate_per_s: float, hold_ms: float) -> float:
    """Backend calls/s for one key on one host when requests arriving while a call is in flight
    (singleflight, ``hold`` = fetch time) or while a cached entry is fresh (TTL cache or negative
    cache, ``hold`` = TTL) share it: a renewal cycle lasts ``hold + 1/λ``, so ``λ / (1 + λ·hold)``."""
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    hold = check_number("hold_ms", hold_ms, low=0.0)
    return lam / (1.0 + lam * hold / 1000.0)


def mm1_latency_ms(fixed_ms: float, capacity_per_s: float, utilisation: float, timeout_ms: float) -> float:
    """Mean response time of one operation: a fixed part (network round trip, for MySQL also the
    query's own execution) plus the M/M/1 time in a server of ``capacity_per_s``, whose service time
    is ``1/capacity``: ``fixed + (1000 / C) / (1 − u)`` ms, capped at the client's timeout (at or
    above full load every caller waits for the timeout).

    The service time is *not* the round trip: a shard that does 80,000 ops/s serves one in
    12.5 µs; a 1 ms round trip is spent on the wire, where no queue forms."""
    if utilisation >= 1.0:
        return timeout_ms
    return min(timeout_ms, fixed_ms + 1000.0 / capacity_per_s / (1.0 - utilisation))


def coalesced_utilisation(
    rate_per_key_per_s: float,
    callers: float,
    network_ms: float,
    capacity_per_s: float,
    other_per_s: float = 0.0,
    timeout_ms: float = math.inf,
) -> float:
    """Utilisation of a server whose hot-key reads are coalesced (singleflight) by ``callers``
    (hosts × keys), each seeing ``rate_per_key_per_s``, while ``other_per_s`` uncoalesced
    operations share it.

    A fetch lasts ``L = n + s / (1 − u)`` (``n`` = network round trip, ``s = 1/C`` the service
    time, see :func:`mm1_latency_ms`), and each caller sends ``λ / (1 + λL)``, so
    ``u = b + a / (1 + λL)`` with ``a`` = callers·λ/C, ``b`` = other/C. In ``x = 1 − u`` this is
    ``c₁x² − ((1 − b)c₁ − c₂ − a)x − (1 − b)c₂ = 0`` with ``c₁ = 1 + λn``, ``c₂ = λs``: one
    positive root (the product of the roots is negative). If the other load alone fills the
    server, callers wait for ``timeout_ms`` and each sends ``λ / (1 + λ·timeout)``."""
    lam = check_number("rate_per_key_per_s", rate_per_key_per_s, low=0.0)
    n = check_number("callers", callers, low=0.0)
    net = check_number("network_ms", network_ms, low=0.0)
    cap = check_number("capacity_per_s", capacity_per_s, low=0.0, low_open=True)
    other = check_number("other_per_s", other_per_s, low=0.0)
    tmo = check_number("timeout_ms", timeout_ms, low=0.0, low_open=True, allow_inf=True)
    a, b = n * lam / cap, other / cap
    if b >= 1.0:
        return b + n * lam / (1.0 + lam * tmo / 1000.0) / cap if math.isfinite(tmo) else b
    c1 = 1.0 + lam * net / 1000.0
    c2 = lam / cap  # λ × service time (1/C), both per second
    big_b = (1.0 - b) * c1 - c2 - a
    x = (big_b + math.sqrt(big_b * big_b + 4.0 * c1 * (1.0 - b) * c2)) / (2.0 * c1)
    return 1.0 - x


def backlog_growth_per_s(in_per_s: float, out_per_s: float) -> float:
    """How fast a queue grows when ``in`` exceeds ``out`` (0 when it does not)."""
    i = check_number("in_per_s", in_per_s, low=0.0)
    o = check_number("out_per_s", out_per_s, low=0.0)
    return max(0.0, i - o)


def hours_to_backlog(backlog: float, in_per_s: float, out_per_s: float) -> float:
    """Hours for a queue to reach ``backlog`` messages at constant rates (inf if it never does)."""
    b = check_number("backlog", backlog, low=0.0)
    g = backlog_growth_per_s(in_per_s, out_per_s)
    return math.inf if g == 0 else b / g / 3600.0


# --------------------------------------------------------------------------- the graph
@dataclass(frozen=True)
class Node:
    """One component: ``name`` (key), ``label`` (as drawn), ``xy`` (drawing position)."""

    name: str
    label: str
    xy: tuple[float, float]


@dataclass(frozen=True)
class Edge:
    """A dependency: ``kind`` is ``call`` (synchronous), ``async`` (queued) or ``fallback``
    (taken only when the target of the normal path is unavailable)."""

    src: str
    dst: str
    label: str = ""
    kind: str = "call"


@dataclass(frozen=True)
class Graph:
    """A small dependency graph: nodes and edges, no library needed."""

    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]

    def __post_init__(self):
        names = [n.name for n in self.nodes]
        if len(set(names)) != len(names):
            raise ValueError(f"nodes must have distinct names, got {names}")
        for e in self.edges:
            for end in (e.src, e.dst):
                if end not in names:
                    raise ValueError(f"edge endpoint must be one of {names}, got {end!r}")
            check_choice("kind", e.kind, ("call", "async", "fallback"))

    def node(self, name: str) -> Node:
        for n in self.nodes:
            if n.name == name:
                return n
        raise ValueError(f"name must be one of {[n.name for n in self.nodes]}, got {name!r}")

    def successors(self, name: str, kinds=("call", "async", "fallback")) -> list[str]:
        self.node(name)
        return [e.dst for e in self.edges if e.src == name and e.kind in kinds]


GATEWAY_GRAPH = Graph(
    nodes=(
        Node("clients", "clients\n(new release)", (0.9, 2.0)),
        Node("access", "access layer\ndefence checks", (3.5, 2.0)),
        Node("monitoring", "monitoring\nperf + errors", (3.5, 3.5)),
        Node("logs", "call logs\nsender threads", (3.5, 0.45)),
        Node("jimdb", "jimdb\nhot shard", (6.3, 3.5)),
        Node("jimdb_mon", "jimdb\nmonitoring cluster", (9.1, 3.5)),
        Node("app", "app layer", (6.3, 2.0)),
        Node("mysql", "mysql\ngateway db", (9.1, 2.0)),
        Node("jmq", "jmq", (6.3, 0.45)),
        Node("es", "es\nlog store", (9.1, 0.45)),
    ),
    edges=(
        Edge("clients", "access", "poll every 5 s"),
        Edge("access", "jimdb", "token, pin"),
        Edge("access", "monitoring", ""),
        Edge("monitoring", "jimdb", "writes"),
        Edge("monitoring", "jimdb_mon", "writes (split)"),
        Edge("access", "app", "dispatch"),
        Edge("app", "mysql", "sql"),
        Edge("access", "mysql", "fallback when jimdb is unavailable", "fallback"),
        Edge("access", "logs", ""),
        Edge("logs", "jmq", "", "async"),
        Edge("jmq", "es", "", "async"),
    ),
)


# --------------------------------------------------------------------------- scenario
FIX_NAMES = (
    "degrade_monitoring",
    "degrade_logging",
    "local_cache",
    "split_clusters",
    "token_bucket",
    "fix_full_scan",
    "block_release",
    "singleflight",
    "negative_cache",
)
#: the postmortem's own measures: its five numbered fixes as six switches (fix_full_scan covers the
#: code-bug fix of 解决问题三 and the SQL check of 解决问题五) and the login block of 想一想.
#: Singleflight and negative caching are standard extra defences, not the seed's.
SEED_FIX_NAMES = FIX_NAMES[:7]
FIX_LABELS = {
    "degrade_monitoring": "degrade monitoring",
    "degrade_logging": "degrade logging",
    "local_cache": "local jvm cache",
    "split_clusters": "split jimdb clusters",
    "token_bucket": "token bucket",
    "fix_full_scan": "full-scan fix",
    "block_release": "block release at login",
    "singleflight": "singleflight",
    "negative_cache": "negative cache",
}
#: the component (or ``clients``: offered calls) each fix is meant to relieve
FIX_TARGETS = {
    "degrade_monitoring": "jimdb",
    "degrade_logging": "jmq",
    "local_cache": "jimdb",
    "split_clusters": "jimdb",
    "token_bucket": "gateway",
    "fix_full_scan": "mysql",
    "block_release": "clients",
    "singleflight": "jimdb",
    "negative_cache": "mysql",
}


@dataclass(frozen=True)
class Fixes:
    """Switches, on from ``Scenario.fixes_at_ms``. The local cache is not a switch: it is
    ``Scenario.local_cache_hit_ratio`` (0 = none)."""

    degrade_monitoring: bool = False  # 解决问题一: stop writing monitoring data to jimdb
    degrade_logging: bool = False  # 解决问题二: blacklist the hot API's call logs
    split_clusters: bool = False  # 解决问题三: jimdb for logs/monitoring apart from the checks'
    token_bucket: bool = False  # 解决问题四: token-bucket admission of the hot API at the access layer
    fix_full_scan: bool = False  # 解决问题三/五: fix the parameter loss, check the SQL
    block_release: bool = False  # 想一想: the login logic refuses the release (how it drained)
    singleflight: bool = False  # coalesce concurrent misses of one key per host
    negative_cache: bool = False  # cache "not found" (the lost-parameter key) locally

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if not isinstance(v, bool):
                raise ValueError(f"{f.name} must be True or False, got {v!r}")

    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in fields(self) if getattr(self, f.name))


_SEED_PEAK_PER_MIN = 1_900_000.0  # "统计网关调用量峰值 190w+/min"
_SEED_DB_CPU = 0.85  # "网关数据库 CPU 使用率 85%"
_BASELINE_PER_S = 1_000.0  # assumption: the gateway's other traffic on a Saturday morning
_MYSQL_QPS = 20_000.0  # assumption


@dataclass(frozen=True)
class Scenario:
    """The gateway, its dependencies and the load. Times in ms, rates per s. Where the seed gives
    no number, the default is an assumption (said so in :data:`SEED_INCIDENT`)."""

    # clients
    installs_max: float = 150_000.0  # installs of the new release the ramp grows to
    poll_interval_ms: float = 5_000.0  # each client polls the order API this often
    calls_per_poll: float = 1.0  # gateway calls per poll
    baseline_per_s: float = _BASELINE_PER_S  # the gateway's other traffic
    ramp_mid_ms: float = 35 * MIN_MS  # installs reach half of installs_max here (logistic ramp)
    ramp_scale_ms: float = 7 * MIN_MS  # logistic scale: 10 % → 90 % of installs takes 4.4 × this
    client_timeout_ms: float = 3_000.0  # a call waiting this long in the access queue is lost
    # gateway hosts (access layer, app layer, monitoring and logging share them)
    hosts: int = 20
    host_capacity_per_s: float = 2_200.0  # calls/s one host's CPU handles at 100 % (no GC)
    lb_jitter: float = 0.04  # relative spread of the load balancer's per-host weights (seeded)
    base_latency_ms: float = 10.0  # a call's own work, without dependencies
    heap_mb: float = 4_096.0  # JVM heap per host
    live_mb: float = 1_024.0  # live data in the heap before pending logs
    young_mb: float = 512.0  # young generation with an empty old generation
    alloc_kb_per_call: float = 40.0  # garbage one call allocates
    gc_pause_ms: float = 100.0  # one young collection (stop the world)
    sender_threads_max: int = 200  # log sender threads a host can pile up
    thread_cpu_share: float = 0.0003  # CPU share one busy-switching thread costs
    restart_ms: float = 5 * MIN_MS  # a crashed host is back after this (empty heap)
    # jimdb (Redis)
    shard_ops_per_s: float = 80_000.0  # capacity of the shard holding the hot keys
    jimdb_net_ms: float = 1.0  # network round trip of one operation (service time is 1/capacity)
    jimdb_timeout_ms: float = 500.0  # client timeout of one jimdb operation
    check_reads_per_call: int = 2  # defence checks: token and pin
    monitor_writes_per_call: float = 2.0  # monitoring: performance and error counters
    failover_after_ms: float = 120_000.0  # an overloaded master is declared dead after this
    failover_ms: float = 30_000.0  # the shard is unavailable while the slave takes over
    dba_reaction_ms: float = 10 * MIN_MS  # DBA scales jimdb up this long after "connection lost"
    dba_capacity_factor: float = 2.0  # capacity after the DBA's scale-up (1 = no scale-up)
    # mysql (the gateway's database)
    mysql_qps: float = _MYSQL_QPS  # point queries/s at 100 % CPU
    mysql_query_ms: float = 2.0  # one point query's own time (network + execution), no queueing
    mysql_timeout_ms: float = 1_000.0  # a query slower than this has failed for its caller
    app_queries_per_call: float = 0.5  # share of calls whose app layer queries the gateway db
    param_loss_share: float = 0.002  # share of fallback lookups that lose the pin parameter
    full_scan_cost: float = 5_000.0  # a full-table scan costs this many point queries
    full_scan_ms: float = 2_000.0  # how long one full scan runs on an idle database
    full_scan_result_mb: float = 5.0  # rows a full scan streams into the issuing host's heap
    # logs
    logs_per_call: float = 1.0  # call logs per call
    log_kb: float = 2.0  # one pending log message in the heap
    log_buffer_mb: float = 2_048.0  # bound of a host's in-heap queue of pending logs (more: dropped)
    jmq_msgs_per_s: float = 15_000.0  # messages/s the gateway's JMQ connections can send
    es_docs_per_s: float = 2_000.0  # documents/s Elasticsearch indexes from JMQ
    # fixes (parameters; switches in ``fixes``)
    local_cache_hit_ratio: float = 0.0  # local JVM cache in front of jimdb (0 = none)
    token_bucket_per_s: float = 12_000.0  # order-API calls/s admitted when the token bucket is on
    token_burst: float = 2_000.0  # bucket depth beyond one step's tokens
    negative_cache_ttl_ms: float = 1_000.0  # TTL of a cached "not found"
    block_reaction_ms: float = 20 * MIN_MS  # the release is blocked this long after the 1st alarm
    drain_ms: float = 15 * MIN_MS  # time constant of blocked clients leaving (forced re-login)
    fixes: Fixes = field(default_factory=Fixes)
    fixes_at_ms: float = 0.0  # fixes (and the local cache) act from this time on
    # alarms
    perf_alarm_ms: float = 100.0  # performance alarm: mean latency above this
    availability_alarm: float = 0.99  # availability alarm: success ratio below this
    cpu_alarm: float = 0.9  # CPU alarm: a host's CPU above this
    young_gc_alarm_per_s: float = 1.0  # "young GC very frequent": collections/s above this
    alarm_hold_ms: float = 30_000.0  # a condition must hold this long to raise its alarm
    conn_lost_alarm_ms: float = 10_000.0  # jimdb unreachable this long: "connection lost"
    recovered_hold_ms: float = 120_000.0  # jimdb healthy this long after a failover: recovered
    # time
    step_ms: float = 1_000.0
    steps: int = 7_200

    def __post_init__(self):
        pos = {"low": 0.0, "low_open": True}
        check_number("installs_max", self.installs_max, low=0.0, high=1e8)
        check_number("poll_interval_ms", self.poll_interval_ms, low=100.0, high=3.6e6)
        check_number("calls_per_poll", self.calls_per_poll, low=0.0, high=100.0)
        check_number("baseline_per_s", self.baseline_per_s, low=0.0, high=1e7)
        check_number("ramp_mid_ms", self.ramp_mid_ms, low=0.0, high=1e9)
        check_number("ramp_scale_ms", self.ramp_scale_ms, **pos, high=1e9)
        check_number("client_timeout_ms", self.client_timeout_ms, **pos, high=1e7)
        object.__setattr__(self, "hosts", check_int("hosts", self.hosts, low=1, high=10_000))
        check_number("host_capacity_per_s", self.host_capacity_per_s, **pos, high=1e7)
        check_number("lb_jitter", self.lb_jitter, low=0.0, high=0.5)
        check_number("base_latency_ms", self.base_latency_ms, low=0.0, high=1e6)
        check_number("heap_mb", self.heap_mb, **pos, high=1e7)
        check_number("live_mb", self.live_mb, low=0.0, high=self.heap_mb, high_open=True)
        check_number("young_mb", self.young_mb, **pos, high=self.heap_mb)
        check_number("alloc_kb_per_call", self.alloc_kb_per_call, low=0.0, high=1e6)
        check_number("gc_pause_ms", self.gc_pause_ms, low=0.0, high=1e5)
        object.__setattr__(self, "sender_threads_max", check_int("sender_threads_max", self.sender_threads_max, low=0, high=100_000))
        check_number("thread_cpu_share", self.thread_cpu_share, low=0.0, high=1.0)
        check_number("restart_ms", self.restart_ms, low=0.0, high=1e9)
        check_number("shard_ops_per_s", self.shard_ops_per_s, **pos, high=1e9)
        check_number("jimdb_net_ms", self.jimdb_net_ms, low=0.0, high=1e5)
        check_number("jimdb_timeout_ms", self.jimdb_timeout_ms, low=self.jimdb_net_ms, low_open=True, high=1e6)
        object.__setattr__(self, "check_reads_per_call", check_int("check_reads_per_call", self.check_reads_per_call, low=1, high=100))
        check_number("monitor_writes_per_call", self.monitor_writes_per_call, low=0.0, high=100.0)
        check_number("failover_after_ms", self.failover_after_ms, low=0.0, high=1e9)
        check_number("failover_ms", self.failover_ms, low=0.0, high=1e9)
        check_number("dba_reaction_ms", self.dba_reaction_ms, low=0.0, allow_inf=True)
        check_number("dba_capacity_factor", self.dba_capacity_factor, low=1.0, high=1000.0)
        check_number("mysql_qps", self.mysql_qps, **pos, high=1e9)
        check_number("mysql_query_ms", self.mysql_query_ms, **pos, high=1e5)
        check_number("mysql_timeout_ms", self.mysql_timeout_ms, low=self.mysql_query_ms, high=1e6)
        check_probability("app_queries_per_call", self.app_queries_per_call)
        check_probability("param_loss_share", self.param_loss_share)
        check_number("full_scan_cost", self.full_scan_cost, low=1.0, high=1e9)
        check_number("full_scan_ms", self.full_scan_ms, low=1.0, high=1e7)
        check_number("full_scan_result_mb", self.full_scan_result_mb, low=0.0, high=1e5)
        check_number("logs_per_call", self.logs_per_call, low=0.0, high=100.0)
        check_number("log_kb", self.log_kb, low=0.0, high=1e5)
        check_number("log_buffer_mb", self.log_buffer_mb, low=0.0, high=1e7, allow_inf=True)
        check_number("jmq_msgs_per_s", self.jmq_msgs_per_s, **pos, high=1e9)
        check_number("es_docs_per_s", self.es_docs_per_s, low=0.0, high=1e9)
        check_probability("local_cache_hit_ratio", self.local_cache_hit_ratio)
        check_number("token_bucket_per_s", self.token_bucket_per_s, low=0.0, high=1e9)
        check_number("token_burst", self.token_burst, low=0.0, high=1e9)
        check_number("negative_cache_ttl_ms", self.negative_cache_ttl_ms, low=0.0, high=1e9)
        check_number("block_reaction_ms", self.block_reaction_ms, low=0.0, high=1e9)
        check_number("drain_ms", self.drain_ms, **pos, high=1e9)
        if not isinstance(self.fixes, Fixes):
            raise ValueError(f"fixes must be a Fixes instance, got {self.fixes!r}")
        check_number("fixes_at_ms", self.fixes_at_ms, low=0.0, high=1e10)
        check_number("perf_alarm_ms", self.perf_alarm_ms, **pos, high=1e7)
        check_probability("availability_alarm", self.availability_alarm)
        check_probability("cpu_alarm", self.cpu_alarm)
        check_number("young_gc_alarm_per_s", self.young_gc_alarm_per_s, **pos, high=1e6)
        check_number("alarm_hold_ms", self.alarm_hold_ms, low=0.0, high=1e9)
        check_number("conn_lost_alarm_ms", self.conn_lost_alarm_ms, low=0.0, high=1e9)
        check_number("recovered_hold_ms", self.recovered_hold_ms, low=0.0, high=1e9)
        check_number("step_ms", self.step_ms, low=10.0, high=60_000.0)
        object.__setattr__(self, "steps", check_int("steps", self.steps, low=1, high=MAX_STEPS))

    @property
    def horizon_ms(self) -> float:
        return self.step_ms * self.steps

    @property
    def peak_calls_per_s(self) -> float:
        """Calls/s once every install polls (the ramp's plateau)."""
        return self.installs_max * self.calls_per_poll * 1000.0 / self.poll_interval_ms + self.baseline_per_s


def installs_at(scenario: Scenario, t_ms) -> np.ndarray | float:
    """Installs of the release at ``t_ms`` (logistic ramp; vectorised over ``t_ms``)."""
    x = (np.asarray(t_ms, dtype=float) - scenario.ramp_mid_ms) / scenario.ramp_scale_ms
    out = scenario.installs_max / (1.0 + np.exp(np.minimum(700.0, -x)))
    return float(out) if np.ndim(out) == 0 else out


def _seed_incident() -> Scenario:
    # installs: 1.9 million calls per minute in all ("统计网关调用量峰值 190w+/min"), minus the
    # assumed baseline, each client polling every 5 s ("5 秒查询一次订单接口")
    installs = clients_for_calls_per_min(
        _SEED_PEAK_PER_MIN, 5_000.0, baseline_per_min=_BASELINE_PER_S * 60.0
    )
    peak_per_s = _SEED_PEAK_PER_MIN / 60.0
    return Scenario(
        installs_max=installs,  # "客户端升级数量上万后" + "190w+/min": computed, see above
        poll_interval_ms=5_000.0,  # "客户端发新版，有个逻辑是 5 秒查询一次订单接口"
        calls_per_poll=1.0,  # assumption: one gateway call per poll
        baseline_per_s=_BASELINE_PER_S,  # assumption: other traffic, a Saturday morning
        ramp_mid_ms=35 * MIN_MS,  # "记得是一个周六的早上": assumption, installs half-way at 35 min
        ramp_scale_ms=7 * MIN_MS,  # assumption: installs go from 10 % to 90 % in about 31 min
        client_timeout_ms=3_000.0,  # assumption
        hosts=20,  # assumption: 20 gateway hosts
        host_capacity_per_s=2_200.0,  # assumption: the hosts' CPU alone would carry the peak
        lb_jitter=0.04,  # assumption
        base_latency_ms=10.0,  # assumption
        heap_mb=4_096.0,  # assumption ("形成 jvm 频繁的 young gc": a JVM per host)
        live_mb=1_024.0,  # assumption
        young_mb=512.0,  # assumption
        alloc_kb_per_call=40.0,  # assumption
        gc_pause_ms=100.0,  # assumption
        sender_threads_max=200,  # "发送日志的线程造成服务器线程数高，线程切换": assumption 200
        thread_cpu_share=0.0003,  # assumption: 200 switching threads cost 6 % CPU
        restart_ms=5 * MIN_MS,  # "重启服务器已经无济于事": assumption, 5 min to restart
        shard_ops_per_s=80_000.0,  # "造成了 jimdb 的分片热点": assumption, one shard's capacity
        jimdb_net_ms=1.0,  # assumption: a round trip in one datacentre; service time is 1/capacity
        jimdb_timeout_ms=500.0,  # assumption
        check_reads_per_call=2,  # "防御校验逻辑中校验 token 和 pin 的业务依赖于 jimdb"
        monitor_writes_per_call=2.0,  # "监控包括网关性能和网关错误，而这些数据都是通过 jimdb 进行存储的"
        failover_after_ms=120_000.0,  # "jimdb 不停 failover": assumption, 2 min overloaded
        failover_ms=30_000.0,  # "Jimdb 出现 Connection Lost 报警": assumption, 30 s unavailable
        dba_reaction_ms=10 * MIN_MS,  # "联系 dba 对 Jimidb 进行扩容，并调大连接数": assumption 10 min
        dba_capacity_factor=2.0,  # "Jimdb 恢复": assumption, twice the capacity
        mysql_qps=_MYSQL_QPS,  # assumption
        mysql_query_ms=2.0,  # assumption
        mysql_timeout_ms=1_000.0,  # "网关应用层查询数据库中的 sql 大量超时": assumption, 1 s
        # "网关数据库 CPU 使用率 85%": app-layer queries per call that load MySQL to 85 % at the peak
        app_queries_per_call=_SEED_DB_CPU * _MYSQL_QPS / peak_per_s,
        param_loss_share=0.002,  # "网关防御层的一些代码 bug，造成参数丢失": assumption 0.2 %
        full_scan_cost=5_000.0,  # "形成查询数据库进行全库扫描": assumption, 5,000 point queries
        full_scan_ms=2_000.0,  # assumption
        full_scan_result_mb=5.0,  # "通过对 Jmap 进行分析，发现有 sql 会对 mysql 进行全表扫库": the rows were
        # in the gateway's heap; 5 MB (e.g. 50,000 rows of 100 B) is an assumption
        logs_per_call=1.0,  # "网关日调用量 8亿+" and "网关日志 JMQ 积压 8亿+": one log per call
        log_kb=2.0,  # assumption
        log_buffer_mb=2_048.0,  # assumption: the sender's bounded in-heap queue (2 of 3 GB free heap)
        jmq_msgs_per_s=15_000.0,  # "请求 jmq 的连接不足": assumption, what the connections send
        es_docs_per_s=2_000.0,  # "网关日志 ES 容量 2T": assumption, ES indexing rate
    )


#: the seed's numbers; every other value is an assumption (commented in ``_seed_incident``)
SEED_INCIDENT = _seed_incident()

#: the alarms in the order the postmortem lists them
SEED_ALARM_ORDER = (
    "performance",
    "availability",
    "jimdb_failover",
    "jimdb_connection_lost",
    "jimdb_recovered",
    "gateway_cpu",
    "host_down",
)
ALARM_TEXT = {
    "performance": "网关系统报出性能报警，各种接口超时 (performance alarm, interfaces time out)",
    "availability": "网关系统报出方法可用率报警 (availability alarm)",
    "jimdb_failover": "Jimdb 出现 failover 主从切换报警，而且相当频繁 (failover, again and again)",
    "jimdb_connection_lost": "Jimdb 出现 Connection Lost 报警 (connection lost)",
    "jimdb_recovered": "联系 dba 对 Jimidb 进行扩容 … Jimdb 恢复 (DBA scales up, jimdb recovers)",
    "gateway_cpu": "网关系统 CPU 使用率飙升 (gateway CPU surges)",
    "host_down": "服务器出现宕机 (servers go down)",
    "young_gc": "对 Jstack 进行分析，发现 youngGc 异常频繁 (young GC very frequent)",
    "full_scan": "通过对 Jmap 进行分析，发现有 sql 会对 mysql 进行全表扫库 (full-table scan)",
    "mysql_cpu": "网关数据库 CPU 使用率 85% (database CPU 85 %)",
    "mysql_down": "最终 mysql 恶化成服务宕机 (mysql degrades into an outage)",
}

#: the local cache hit ratio used for the "local_cache" fix (assumption)
LOCAL_CACHE_FIX_HIT = 0.95


def with_fixes(scenario: Scenario, names=(), *, at_ms: float | None = None) -> Scenario:
    """``scenario`` with the named fixes switched on (``local_cache`` sets the hit ratio to
    :data:`LOCAL_CACHE_FIX_HIT` unless the scenario already has one); ``at_ms`` sets ``fixes_at_ms``."""
    names = tuple(names)
    for n in names:
        check_choice("names", n, FIX_NAMES)
    switches = {n: True for n in names if n != "local_cache"}
    kw = {"fixes": replace(scenario.fixes, **switches)}
    if "local_cache" in names and scenario.local_cache_hit_ratio == 0.0:
        kw["local_cache_hit_ratio"] = LOCAL_CACHE_FIX_HIT
    if at_ms is not None:
        kw["fixes_at_ms"] = at_ms
    return replace(scenario, **kw)


# --------------------------------------------------------------------------- state of the actors
@dataclass
class _Shard:
    """A jimdb shard: capacity, and the failover state machine."""

    capacity_per_s: float
    down_until_ms: float = -1.0
    overloaded_ms: float = 0.0
    failovers: list = field(default_factory=list)

    def up(self, t_ms: float) -> bool:
        return t_ms >= self.down_until_ms


@dataclass
class _Hosts:
    """The gateway hosts (vectors, one entry per host)."""

    weight: np.ndarray
    up: np.ndarray
    down_until_ms: np.ndarray
    pending: np.ndarray  # log messages waiting in the heap for a JMQ connection
    gc_share: np.ndarray  # CPU share lost to young GC last step
    thread_share: np.ndarray  # CPU share lost to sender-thread switching last step
    young_gc_per_s: np.ndarray
    threads: np.ndarray
    crashes: list = field(default_factory=list)


@dataclass
class _Scans:
    """The full-table scans MySQL is running, in cohorts ``[progress at start, count per host]``.

    All running scans share MySQL alike (processor sharing), so each advances by the same amount a
    step and they finish in the order they started: ``progress`` counts scans' worth of work done
    per running scan since the run began; a cohort is done when it has advanced by 1. While a scan
    runs, its rows stream into the issuing host's heap (the JDBC driver buffers a whole result
    set), so a host holds ``result_mb × (progress − start)`` per running scan. A stream that keeps
    delivering rows never trips a read timeout: the caller gave up long ago, the thread and the rows
    stay until the scan ends or its host dies (MySQL then aborts it)."""

    n_hosts: int
    progress: float = 0.0
    cohorts: deque = field(default_factory=deque)
    count: np.ndarray = None  # running scans per host
    start_sum: np.ndarray = None  # Σ start progress of the running scans, per host

    def __post_init__(self):
        self.count = np.zeros(self.n_hosts)
        self.start_sum = np.zeros(self.n_hosts)

    def start(self, per_host: np.ndarray):
        if per_host.any():
            self.cohorts.append([self.progress, per_host.copy()])
            self.count += per_host
            self.start_sum += per_host * self.progress

    def advance(self, by: float) -> float:
        """Advance every running scan by ``by`` scans' worth; returns the scans that finished."""
        self.progress += by
        done = 0.0
        while self.cohorts and self.progress >= self.cohorts[0][0] + 1.0:
            p0, c = self.cohorts.popleft()
            done += float(c.sum())
            self.count -= c
            self.start_sum -= c * p0
        if not self.cohorts:
            self.count[:] = 0.0
            self.start_sum[:] = 0.0
        return done

    def held_mb(self, result_mb: float) -> np.ndarray:
        """Rows each host holds for its running scans (MB)."""
        return np.maximum(0.0, result_mb * (self.count * self.progress - self.start_sum))

    def abort(self, dead: np.ndarray) -> float:
        """The hosts in ``dead`` are gone: their scans stop. Returns how many."""
        gone = float(self.count[dead].sum())
        if gone:
            for c in self.cohorts:
                c[1][dead] = 0.0
            self.count[dead] = 0.0
            self.start_sum[dead] = 0.0
        return gone


@dataclass
class _Alarms:
    """Raise each alarm once: when its condition has held for its hold time."""

    since: dict = field(default_factory=dict)
    fired: dict = field(default_factory=dict)

    def update(self, name: str, condition: bool, t_end_ms: float, step_ms: float, hold_ms: float):
        if name in self.fired:
            return
        if condition:
            start = self.since.setdefault(name, t_end_ms - step_ms)
            if t_end_ms - start >= hold_ms:
                self.fired[name] = t_end_ms
        else:
            self.since.pop(name, None)


# --------------------------------------------------------------------------- the actors
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
    young = np.clip((sc.young_mb / room) * free, sc.young_mb / 16.0, sc.young_mb)  # JVM keeps a minimum
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


# --------------------------------------------------------------------------- results
_SERIES = (
    "t", "installs", "active", "arrivals", "admitted", "rejected", "processed", "served", "failed",
    "timeouts", "queue", "latency_ms", "availability", "hosts_up", "gateway_cpu", "gateway_cpu_max", "gateway_util",
    "gc_share", "young_gc_per_s", "threads", "heap_used", "jimdb_util", "jimdb_up", "jimdb_ops",
    "jimdb_mon_util", "jimdb_mon_up", "mysql_util", "mysql_work", "fallthrough", "full_scans",
    "logs", "pending", "jmq_util", "jmq_sent", "jmq_backlog", "es_indexed", "mysql_ok", "scans_running",
    "scan_mb_max", "logs_dropped",
)  # fmt: skip
_NODES = ("clients", "access", "monitoring", "jimdb", "jimdb_mon", "app", "mysql", "logs", "jmq", "es")


@dataclass
class Run:
    """One run. ``windows``: one entry per step (``t`` in s; counts per step, ``*_util`` as
    offered / capacity, ``gateway_cpu`` in [0, 1]). ``flows[node]``: ``in``, ``out``, ``dropped``,
    ``stored`` (level at the end of each step). ``alarms``: ``(name, t_ms)`` in firing order."""

    scenario: Scenario
    seed: int
    windows: dict
    flows: dict
    alarms: list
    failovers: list
    crashes: list
    events: dict
    ledger: Ledger

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

    def summary(self) -> dict:
        w, led = self.windows, self.ledger
        p = self.peaks()
        return {
            "peak_calls_per_min": p["clients"],
            "served_share": led.served / led.arrived if led.arrived else 1.0,
            "rejected_share": led.rejected / led.arrived if led.arrived else 0.0,
            "flood": self.outcome_shares(),
            "peak_gateway_util": p["gateway"],
            "peak_jimdb_util": p["jimdb"],
            "peak_mysql_util": p["mysql"],
            "peak_jmq_util": p["jmq"],
            "failovers": len(self.failovers),
            "host_crashes": len(self.crashes),
            "full_scans": float(w["full_scans"].sum()),
            "jmq_backlog_end": float(w["jmq_backlog"][-1]),
            "alarms": {n: t / MIN_MS for n, t in self.alarms},
        }


def _lb_weights(sc: Scenario, rng) -> np.ndarray:
    w = np.clip(1.0 + sc.lb_jitter * rng.standard_normal(sc.hosts), 0.5, 1.5)
    return w / w.sum()


def _installs(sc: Scenario, t_ms: float) -> float:
    return sc.installs_max / (1.0 + math.exp(min(700.0, -(t_ms - sc.ramp_mid_ms) / sc.ramp_scale_ms)))


def _order_decided(fired: dict, names=SEED_ALARM_ORDER) -> bool:
    """Is the order of the alarms ``names`` settled by what has ``fired`` so far: all of them
    fired, or one fired before an alarm that precedes it in ``names``?"""
    got = [n for n, _ in sorted(fired.items(), key=lambda kv: kv[1]) if n in names]
    return len(got) == len(names) or got != list(names[: len(got)])


def simulate(scenario: Scenario = SEED_INCIDENT, seed: int = 0, *, stop_when_order_decided: bool = False) -> Run:
    """Run ``scenario`` for ``scenario.steps`` steps with random stream ``seed``: Poisson arrivals
    and the load balancer's host weights come from it; everything else is deterministic.

    ``stop_when_order_decided``: end the run early once the order of :data:`SEED_ALARM_ORDER` can no
    longer change (all seven fired, or one fired out of place). The steps run are the same as in
    the full run, so :meth:`Run.alarm_order` is the same; the windows are shorter. For sweeps."""
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    if not isinstance(stop_when_order_decided, bool):
        raise ValueError(f"stop_when_order_decided must be True or False, got {stop_when_order_decided!r}")
    sc = scenario
    rng = make_rng(check_seed(seed))
    dt, dt_s, n_hosts = sc.step_ms, sc.step_ms / 1000.0, sc.hosts
    hosts = _Hosts(
        weight=_lb_weights(sc, rng),
        up=np.ones(n_hosts, dtype=bool),
        down_until_ms=np.zeros(n_hosts),
        pending=np.zeros(n_hosts),
        gc_share=np.zeros(n_hosts),
        thread_share=np.zeros(n_hosts),
        young_gc_per_s=np.zeros(n_hosts),
        threads=np.zeros(n_hosts),
    )
    shard, mon = _Shard(sc.shard_ops_per_s), _Shard(sc.shard_ops_per_s)
    running = _Scans(n_hosts)  # the full scans MySQL is running, per issuing host
    db_util = 0.0
    queue: deque = deque()
    q_len = 0
    timeout_steps = max(1, int(math.ceil(sc.client_timeout_ms / dt - 1e-9)))
    tokens = sc.token_bucket_per_s * dt_s + sc.token_burst
    alarms = _Alarms()
    led = Ledger()
    jmq_backlog = 0.0
    events: dict = {"dba_scaleup_ms": None, "block_at_ms": None, "stopped_at_ms": None}
    rows: list = []  # one tuple per step, in _SERIES order
    reads = sc.check_reads_per_call
    cap_h = sc.host_capacity_per_s
    eff = np.full(n_hosts, cap_h)  # calls/s each host can process (after GC and thread losses)
    eff_sum = float(eff.sum())
    share = hosts.weight.copy()
    n_up = n_hosts
    n_down = 0
    no_fix = Fixes()

    flow_rows: list = []  # per step: (in, out, dropped, stored) of each node in _NODES order
    n_fired = 0  # alarms fired so far (to test whether the order is decided only when it changes)

    for k in range(sc.steps):
        t = k * dt
        t_end = t + dt
        on = t >= sc.fixes_at_ms
        fx = sc.fixes if on else no_fix
        h = sc.local_cache_hit_ratio if on else 0.0

        # reactions: the DBA's scale-up; blocking the release at login
        lost_at = alarms.fired.get("jimdb_connection_lost")
        if events["dba_scaleup_ms"] is None and lost_at is not None and t >= lost_at + sc.dba_reaction_ms:
            events["dba_scaleup_ms"] = t
            shard.capacity_per_s *= sc.dba_capacity_factor
            mon.capacity_per_s *= sc.dba_capacity_factor
        first = alarms.fired.get("performance")
        if events["block_at_ms"] is None and fx.block_release and first is not None:
            events["block_at_ms"] = max(first + sc.block_reaction_ms, sc.fixes_at_ms)

        # clients and admission
        polls, other_calls, active = clients_step(sc, t, events["block_at_ms"], rng)
        arrivals = polls + other_calls
        if fx.token_bucket:  # a per-interface limit: the order API's polls only
            polls_in, tokens = token_bucket_step(tokens, polls, sc.token_bucket_per_s, sc.token_burst, dt)
        else:
            polls_in = polls
        admitted = polls_in + other_calls
        rejected = arrivals - admitted
        poll_share = polls_in / admitted if admitted else 0.0

        # crashed hosts come back after their restart
        if n_down and (hosts.down_until_ms[~hosts.up] <= t).any():
            back = (~hosts.up) & (hosts.down_until_ms <= t)
            hosts.up[back] = True
            n_up = int(np.count_nonzero(hosts.up))
            n_down = n_hosts - n_up
            eff = cap_h * (1.0 - np.minimum(hosts.gc_share + hosts.thread_share, 1.0)) * hosts.up
            eff_sum = float(eff.sum())
            wup = hosts.weight * hosts.up
            share = wup / wup.sum()

        # the access layer: FIFO queue, processed up to the hosts' capacity
        capacity = int(eff_sum * dt_s)
        processed, q_timeouts, wait = access_step(queue, k, admitted, capacity, timeout_steps)
        q_len += admitted - processed - q_timeouts
        wait_ms = wait * dt / processed if processed else 0.0
        calls_h = share * processed
        callers = max(n_up, 1) * reads  # hosts × keys: who coalesces with singleflight

        # jimdb: check reads that miss the local cache; monitoring writes
        miss = processed * reads * (1.0 - h)
        writes = 0.0 if fx.degrade_monitoring else processed * sc.monitor_writes_per_call
        split = fx.split_clusters
        other = 0.0 if split else writes
        if fx.singleflight and miss > 0 and shard.up(t):
            u_sf = coalesced_utilisation(
                miss / dt_s / callers, callers, sc.jimdb_net_ms, shard.capacity_per_s, other / dt_s,
                sc.jimdb_timeout_ms,
            )  # fmt: skip
            to_shard = max(0.0, u_sf * shard.capacity_per_s * dt_s - other)
        else:
            to_shard = miss
        jimdb_in = to_shard + other
        j_ok, j_util, j_up = jimdb_step(shard, sc, t, jimdb_in)
        if split:
            m_ok, m_util, m_up = jimdb_step(mon, sc, t, writes)
            mon_in = writes
        else:
            m_ok, m_util, m_up = j_ok, 0.0, j_up
            mon_in = 0.0

        # penetration: jimdb unavailable → the checks query MySQL; a share loses the pin
        fallthrough = 0.0 if j_up else miss
        pl_share = 0.0 if fx.fix_full_scan else sc.param_loss_share
        lost_param = fallthrough * pl_share
        points = fallthrough - lost_param
        scans = lost_param
        scan_ms = sc.full_scan_ms * max(1.0, db_util)  # how long a scan runs now (last step's load)
        hold = (scan_ms if fx.singleflight else 0.0) + (sc.negative_cache_ttl_ms if fx.negative_cache else 0.0)
        if lost_param > 0 and hold > 0:  # one key ("pin" = null) per host
            per_host = max(n_up, 1)
            scans = per_host * coalesced_rate_per_s(lost_param / dt_s / per_host, hold) * dt_s
        running.start(share * scans)  # each scan from the host that issued it
        j_pass = (h + (1.0 - h) * (j_ok if j_up else 1.0)) ** reads  # not timed out at jimdb
        app_q = processed * j_pass * sc.app_queries_per_call
        scan_demand = float(running.count.sum()) * sc.full_scan_cost * dt / sc.full_scan_ms
        if fx.singleflight and points > 0:
            u_db = coalesced_utilisation(
                points / dt_s / callers, callers, sc.mysql_query_ms, sc.mysql_qps,
                (app_q + scan_demand) / dt_s, sc.mysql_timeout_ms,
            )  # fmt: skip
            points_db = max(0.0, u_db * sc.mysql_qps * dt_s - app_q - scan_demand)
        else:
            points_db = points
        work = points_db + app_q
        held_before = running.held_mb(sc.full_scan_result_mb)
        db_ok, db_util, scans_done = mysql_step(sc, running, work)
        held = running.held_mb(sc.full_scan_result_mb)
        scan_rows = np.maximum(0.0, held - held_before)  # rows that streamed in this step (MB)
        work += scan_demand
        queries = points_db + scans + app_q

        # the calls' fate: every lookup must pass, then the app layer's query (if any)
        p_lookup = h + (1.0 - h) * (j_ok if j_up else (1.0 - pl_share) * db_ok)
        p_app = 1.0 - sc.app_queries_per_call * (1.0 - db_ok)
        p_ok = min(1.0, max(0.0, p_lookup**reads * p_app))
        served = int(rng.binomial(processed, p_ok)) if processed else 0
        failed = processed - served
        app_in = processed * j_pass

        # mean latency of a processed call (ms)
        lj = mm1_latency_ms(sc.jimdb_net_ms, shard.capacity_per_s, j_util, sc.jimdb_timeout_ms)
        ldb = mm1_latency_ms(sc.mysql_query_ms, sc.mysql_qps, db_util, sc.mysql_timeout_ms)
        per_lookup = lj if j_up else sc.jimdb_net_ms + ldb
        latency = wait_ms + sc.base_latency_ms + reads * (1.0 - h) * per_lookup + sc.app_queries_per_call * ldb

        # call logs → JMQ → ES; each host's JVM
        log_share = (1.0 - poll_share) if fx.degrade_logging else 1.0
        logs_h = calls_h * (sc.logs_per_call * log_share)
        logs_total = processed * sc.logs_per_call * log_share
        send_cap = sc.jmq_msgs_per_s * dt_s / max(n_up, 1)
        sent, logs_dropped = log_sender_step(hosts, sc, logs_h, send_cap)
        logs_lost, dead = jvm_step(hosts, sc, calls_h, held, scan_rows, t)
        scans_aborted = running.abort(dead) if dead.any() else 0.0
        logs_lost += logs_dropped
        if dead.any():
            n_up = int(np.count_nonzero(hosts.up))
            n_down = n_hosts - n_up
            wup = hosts.weight * hosts.up
            share = wup / wup.sum() if n_up else wup
        pending_total = float(hosts.pending.sum())
        jmq_backlog += sent
        indexed = min(jmq_backlog, sc.es_docs_per_s * dt_s)
        jmq_backlog -= indexed
        flow_rows.append((
            arrivals, admitted, rejected, 0.0,  # clients
            admitted, processed, q_timeouts, q_len,  # access
            writes, writes, 0.0, 0.0,  # monitoring
            jimdb_in, jimdb_in * j_ok, jimdb_in * (1.0 - j_ok), 0.0,  # jimdb
            mon_in, mon_in * m_ok, mon_in * (1.0 - m_ok), 0.0,  # jimdb_mon
            app_in, app_in * p_app, app_in * (1.0 - p_app), 0.0,  # app
            queries, (queries - scans) * db_ok + scans_done,  # mysql: point queries, scans
            (queries - scans) * (1.0 - db_ok) + scans_aborted, float(running.count.sum()),
            logs_total, sent, logs_lost, pending_total,  # logs
            sent, indexed, 0.0, jmq_backlog,  # jmq
            indexed, indexed, 0.0, 0.0,  # es
        ))  # fmt: skip

        # the ledger
        led.arrived += arrivals
        led.rejected += rejected
        led.served += served
        led.timed_out += q_timeouts + failed

        # the gauges the alarms watch
        loss = np.minimum(hosts.gc_share + hosts.thread_share, 1.0)
        eff = cap_h * (1.0 - loss) * hosts.up
        eff_sum = float(eff.sum())
        if n_up:
            cpu_h = np.minimum(1.0, calls_h * (1.0 / dt_s / cap_h) + loss)
            cpu = float(np.dot(cpu_h, hosts.up)) / n_up
            cpu_max = float((cpu_h * hosts.up).max())
            gc_mean = float(np.dot(hosts.gc_share, hosts.up)) / n_up
        else:
            cpu = cpu_max = gc_mean = 0.0
        g_util = min(admitted / dt_s / eff_sum, MAX_UTIL) if eff_sum > 0 else MAX_UTIL
        done = served + failed + q_timeouts + rejected
        avail = served / done if done else 1.0
        ygc = float(hosts.young_gc_per_s.max())

        a = alarms
        hold_a = sc.alarm_hold_ms
        a.update("performance", processed > 0 and latency > sc.perf_alarm_ms, t_end, dt, hold_a)
        a.update("availability", avail < sc.availability_alarm, t_end, dt, hold_a)
        failed_over = bool(shard.failovers or mon.failovers)
        a.update("jimdb_failover", failed_over, t_end, dt, 0.0)
        a.update("jimdb_connection_lost", not (j_up and m_up), t_end, dt, sc.conn_lost_alarm_ms)
        healthy = j_up and m_up and j_util < 1.0 and m_util < 1.0
        a.update("jimdb_recovered", failed_over and healthy, t_end, dt, sc.recovered_hold_ms)
        a.update("gateway_cpu", cpu_max >= sc.cpu_alarm, t_end, dt, hold_a)
        a.update("host_down", bool(hosts.crashes), t_end, dt, 0.0)
        a.update("young_gc", ygc >= sc.young_gc_alarm_per_s, t_end, dt, hold_a)
        a.update("full_scan", scans > 0, t_end, dt, 0.0)
        a.update("mysql_cpu", db_util >= _SEED_DB_CPU, t_end, dt, hold_a)
        a.update("mysql_down", db_ok < 0.5, t_end, dt, hold_a)
        n_fired_now = len(a.fired)

        rows.append((
            t / 1000.0, _installs(sc, t), active, arrivals, admitted, rejected, processed, served,
            failed, q_timeouts, q_len, latency if processed else math.nan, avail, n_up, cpu, cpu_max, g_util,
            gc_mean, ygc, float(hosts.threads.sum()),
            (sc.live_mb + float((hosts.pending * (sc.log_kb / 1024.0) + held).max())) / sc.heap_mb,
            j_util, j_up, jimdb_in / dt_s, m_util, m_up, db_util, work / dt_s, fallthrough / dt_s,
            scans, logs_total / dt_s, pending_total, logs_total / dt_s / sc.jmq_msgs_per_s,
            sent / dt_s, jmq_backlog, indexed, db_ok, float(running.count.sum()), float(held.max()),
            logs_dropped,
        ))  # fmt: skip
        if stop_when_order_decided and n_fired_now != n_fired and _order_decided(a.fired):
            events["stopped_at_ms"] = t_end
            break
        n_fired = n_fired_now

    led.in_system = q_len
    table = np.array(rows, dtype=float).reshape(len(rows), len(_SERIES))
    windows = {name: table[:, i].copy() for i, name in enumerate(_SERIES)}
    ft = np.array(flow_rows, dtype=float).reshape(len(flow_rows), 4 * len(_NODES))
    flows_np = {
        n: {key: ft[:, 4 * i + j].copy() for j, key in enumerate(("in", "out", "dropped", "stored"))}
        for i, n in enumerate(_NODES)
    }
    led.extra = {
        "failed_at_dependency": int(windows["failed"].sum()),
        "queue_timeouts": int(windows["timeouts"].sum()),
    }
    led.check()
    fired = sorted(alarms.fired.items(), key=lambda kv: kv[1])
    return Run(
        scenario=sc,
        seed=seed,
        windows=windows,
        flows=flows_np,
        alarms=fired,
        failovers=sorted(shard.failovers + mon.failovers),
        crashes=list(hosts.crashes),
        events=events,
        ledger=led,
    )


def peak_loads(scenario: Scenario = SEED_INCIDENT) -> dict:
    """Closed form: each component's load at the plateau (every install polling), before anything
    fails, as (load per s, capacity per s, utilisation)."""
    sc = scenario
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
    sc = scenario
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
    sc = scenario
    lam = sc.peak_calls_per_s if calls_per_s is None else check_number("calls_per_s", calls_per_s, low=0.0)
    held = check_number("held_mb", held_mb, low=0.0)
    room = sc.heap_mb - sc.live_mb
    free = room - min(room, sc.log_buffer_mb) - held
    young = min(max(sc.young_mb / room * free, sc.young_mb / 16.0), sc.young_mb)
    return lam / sc.hosts * sc.alloc_kb_per_call / 1024.0 / young


@dataclass(frozen=True)
class OrderMap:
    """Where the seed's alarm order comes out: ``counts[i, j]`` of ``n_seeds`` runs with
    ``heap_mb[i]`` and ``dba_reaction_ms[j]`` fire the seed's alarms in the seed's order (all of
    them: an alarm that never fires breaks the order). ``first_wrong[i, j]``: for seed 0, what
    broke it (the first alarm out of place or missing, ``""`` when the order holds)."""

    heap_mb: tuple
    dba_reaction_ms: tuple
    n_seeds: int
    counts: np.ndarray
    first_wrong: np.ndarray


def _first_wrong(order: list) -> str:
    for got, want in zip(order + [None] * len(SEED_ALARM_ORDER), SEED_ALARM_ORDER, strict=False):
        if got != want:
            return want
    return ""


def alarm_order_map(
    scenario: Scenario = SEED_INCIDENT, heap_mb=(3_072.0, 4_096.0, 5_120.0, 6_144.0),
    dba_reaction_ms=(2 * MIN_MS, 5 * MIN_MS, 10 * MIN_MS, 20 * MIN_MS), seeds=range(20),
) -> OrderMap:
    """Run ``scenario`` over a grid of JVM heap sizes × the DBA's reaction time, each cell over
    ``seeds``, and count the runs whose alarms come in the seed's order (:data:`SEED_ALARM_ORDER`)
    within ``scenario``'s horizon. Each run stops once its order is decided (same order as the full
    run, see :func:`simulate`)."""
    heaps = tuple(check_number("heap_mb", h, low=scenario.live_mb, low_open=True, high=1e7) for h in heap_mb)
    dbas = tuple(check_number("dba_reaction_ms", d, low=0.0, high=1e9) for d in dba_reaction_ms)
    seeds = [check_seed(s_) for s_ in seeds]
    if not seeds or not heaps or not dbas:
        raise ValueError("heap_mb, dba_reaction_ms and seeds must each hold at least one value")
    counts = np.zeros((len(heaps), len(dbas)), dtype=int)
    wrong = np.full((len(heaps), len(dbas)), "", dtype=object)
    for i, hm in enumerate(heaps):
        for j, d in enumerate(dbas):
            sc = replace(scenario, heap_mb=hm, dba_reaction_ms=d)
            for k, sd in enumerate(seeds):
                order = simulate(sc, sd, stop_when_order_decided=True).alarm_order()
                counts[i, j] += order == list(SEED_ALARM_ORDER)
                if k == 0:
                    wrong[i, j] = _first_wrong(order)
    return OrderMap(heaps, dbas, len(seeds), counts, wrong)


def plot_order_map(m: OrderMap, mark=None, ax=None):
    """The :class:`OrderMap` as a grid: each cell the count of runs (random seeds) in the seed's
    order (green = all, red = none), and where run 0 departs, its first alarm out of place;
    ``mark`` = (heap_mb, dba_reaction_ms) of the preset, outlined."""
    import matplotlib as mpl

    if ax is None:
        _, ax = new_figure(height=3.2)
    share = m.counts / m.n_seeds
    ax.imshow(share, cmap="RdYlGn", norm=mpl.colors.Normalize(0, 1), aspect="auto", origin="lower")
    short = {"jimdb_recovered": "recovered", "gateway_cpu": "cpu", "host_down": "host down",
             "jimdb_connection_lost": "conn. lost", "jimdb_failover": "failover"}  # fmt: skip
    for i in range(share.shape[0]):
        for j in range(share.shape[1]):
            txt = f"{m.counts[i, j]}/{m.n_seeds}"
            if m.first_wrong[i, j]:
                txt += f"\n(run 0: {short.get(m.first_wrong[i, j], m.first_wrong[i, j])})"
            ax.text(j, i, txt, ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(m.dba_reaction_ms)), [f"{d / MIN_MS:.0f}" for d in m.dba_reaction_ms])
    ax.set_yticks(range(len(m.heap_mb)), [f"{h / 1024:.1f}" for h in m.heap_mb])
    ax.set_xlabel("dba reaction after 'connection lost' (min)")
    ax.set_ylabel("jvm heap per host (GB)")
    ax.grid(False)
    if mark is not None:
        i = int(np.argmin([abs(h - mark[0]) for h in m.heap_mb]))
        j = int(np.argmin([abs(d - mark[1]) for d in m.dba_reaction_ms]))
        ax.add_patch(mpl.patches.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec="black", lw=2))
    return ax


# --------------------------------------------------------------------------- the hot-key micro-model
@dataclass(frozen=True)
class KeyFetches:
    """Request-level result for one key on one host: ``fetch_rate_per_s`` backend calls/s and the
    share of requests answered without one (``hit_ratio``); ``closed_form_per_s`` beside it."""

    mode: str
    rate_per_s: float
    hold_ms: float
    arrivals: int
    fetches: int
    horizon_ms: float
    fetch_rate_per_s: float
    hit_ratio: float
    closed_form_per_s: float


def simulate_key_fetches(
    rate_per_s: float,
    hold_ms: float,
    *,
    mode: str = "singleflight",
    seed: int = 0,
    horizon_ms: float = 60_000.0,
    max_arrivals: int = 2_000_000,
) -> KeyFetches:
    """Poisson requests for one hot key on one host, request by request.

    - ``none``: every request calls the backend.
    - ``singleflight``: a request arriving while a call for the key is in flight (``hold_ms`` =
      fetch time) waits for it and shares its answer.
    - ``ttl``: a local cache entry (or a negative-cache entry for a key that does not exist) stays
      fresh ``hold_ms`` after the fetch that filled it.
    """
    lam = check_number("rate_per_s", rate_per_s, low=0.0, low_open=True, high=1e7)
    hold = check_number("hold_ms", hold_ms, low=0.0, high=1e9)
    check_choice("mode", mode, ("none", "singleflight", "ttl"))
    hz = check_number("horizon_ms", horizon_ms, low=0.0, low_open=True, high=1e9)
    cap = check_int("max_arrivals", max_arrivals, low=1, high=100_000_000)
    rng = make_rng(seed)
    expected = int(lam * hz / 1000.0 * 1.2) + 100
    gaps = rng.exponential(1000.0 / lam, size=min(expected, cap))
    times = np.cumsum(gaps)
    times = times[times < hz]
    fetches = 0
    busy_until = -math.inf
    if mode == "none":
        fetches = len(times)
    else:
        for t in times.tolist():
            if t >= busy_until:  # nothing in flight / cache stale: this request fetches
                fetches += 1
                busy_until = t + hold
    n = len(times)
    closed = lam if mode == "none" else coalesced_rate_per_s(lam, hold)
    return KeyFetches(
        mode=mode,
        rate_per_s=lam,
        hold_ms=hold,
        arrivals=n,
        fetches=fetches,
        horizon_ms=hz,
        fetch_rate_per_s=fetches / hz * 1000.0,
        hit_ratio=1.0 - fetches / n if n else 0.0,
        closed_form_per_s=closed,
    )


# --------------------------------------------------------------------------- comparisons
@dataclass
class FixComparison:
    """One row per variant: ``names`` (fixes on), ``label``, ``peaks`` (peak utilisation per
    component and peak calls/min), ``served_share``, ``host_crashes``, ``failovers``, ``runs``."""

    variants: list
    runs: dict

    def rows(self) -> list[dict]:
        out = []
        for label, names, *_ in self.variants:
            run = self.runs[label]
            s = run.summary()
            out.append({"label": label, "names": names, "peaks": run.peaks(), **s})
        return out


def default_variants() -> list[tuple[str, tuple]]:
    v = [("the incident", ())]
    v += [(FIX_LABELS[n], (n,)) for n in FIX_NAMES]
    v += [("seed's fixes together", SEED_FIX_NAMES), ("all together", FIX_NAMES)]
    return v


def compare_fixes(scenario: Scenario = SEED_INCIDENT, variants=None, seed: int = 0) -> FixComparison:
    """Run ``scenario`` with each variant's fixes (default: none, each fix alone, the seed's fixes
    together, all together). A variant is ``(label, fix names)`` or ``(label, fix names,
    {scenario field: value})``."""
    variants = default_variants() if variants is None else list(variants)
    runs = {}
    for label, names, *more in variants:
        sc = replace(scenario, **more[0]) if more else scenario
        runs[label] = simulate(with_fixes(sc, names), seed)
    return FixComparison(variants=variants, runs=runs)


# --------------------------------------------------------------------------- figures
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


_UTIL_CMAP = "RdYlGn_r"
_UTIL_MAX = 1.5
_BOX_W, _BOX_H = 1.8, 0.8


def _border(c, other):
    """Where the segment from box centre ``c`` towards ``other`` leaves the box."""
    dx, dy = other[0] - c[0], other[1] - c[1]
    tx = (_BOX_W / 2) / abs(dx) if dx else math.inf
    ty = (_BOX_H / 2) / abs(dy) if dy else math.inf
    f = min(tx, ty)
    return c[0] + dx * f, c[1] + dy * f


def plot_graph(run: Run, t_ms: float, ax=None, *, graph: Graph = GATEWAY_GRAPH, note: str | None = None):
    """Draw the dependency graph at ``t_ms``, each box coloured by its utilisation (offered /
    capacity, mean of the last 10 s; red above 1), hatched grey when down. The fallback edge
    turns red while calls go through jimdb to MySQL. Returns the axis."""
    import matplotlib as mpl
    from matplotlib.patches import FancyBboxPatch

    if ax is None:
        _, ax = new_figure(height=2.8)
    util = node_utilisation(run, t_ms)
    cmap = mpl.colormaps[_UTIL_CMAP]
    norm = mpl.colors.Normalize(0.0, _UTIL_MAX)
    w, sc = run.windows, run.scenario
    k = min(int(t_ms // sc.step_ms), sc.steps - 1)
    split = sc.fixes.split_clusters and t_ms >= sc.fixes_at_ms
    for e in graph.edges:
        if (e.dst == "jimdb_mon" and not split) or (e.src == "monitoring" and e.dst == "jimdb" and split):
            continue
        c0, c1 = graph.node(e.src).xy, graph.node(e.dst).xy
        style = "--" if e.kind in ("fallback", "async") else "-"
        hot = e.kind == "fallback" and w["fallthrough"][k] > 0
        color = COLORS["timeouts"] if hot else "#555555"
        if e.kind == "fallback":  # under the app layer, bottom edge to bottom edge
            p0 = (c0[0] + 0.3, c0[1] - _BOX_H / 2)
            p1 = (c1[0] - 0.3, c1[1] - _BOX_H / 2)
            conn = "arc3,rad=0.1"
            lab_xy = ((p0[0] + p1[0]) / 2, p0[1] - 0.42)
        elif e.dst == "jimdb_mon":  # over the jimdb box
            p0 = (c0[0] + 0.3, c0[1] + _BOX_H / 2)
            p1 = (c1[0] - 0.3, c1[1] + _BOX_H / 2)
            conn = "arc3,rad=-0.2"
            lab_xy = ((p0[0] + p1[0]) / 2, p0[1] + 0.45)
        else:
            p0, p1 = _border(c0, c1), _border(c1, c0)
            conn = "arc3,rad=0"
            dx, dy = p1[0] - p0[0], p1[1] - p0[1]
            ln = math.hypot(dx, dy) or 1.0
            lab_xy = ((p0[0] + p1[0]) / 2 - 0.08 * dy / ln, (p0[1] + p1[1]) / 2 + 0.08 * dx / ln)
        ax.annotate(
            "", xy=p1, xytext=p0,
            arrowprops=dict(arrowstyle="-|>", color=color, lw=2 if hot else 1.2, ls=style,
                            shrinkA=0, shrinkB=0, connectionstyle=conn),
        )  # fmt: skip
        if e.label and e.src != "clients":
            va = "top" if e.kind == "fallback" else "bottom"
            ha = "right" if (e.kind == "call" and p0[0] != p1[0] and p0[1] != p1[1]) else "center"
            ax.text(*lab_xy, e.label, ha=ha, va=va, fontsize=7, color=color)
    for n in graph.nodes:
        u, down = util[n.name]
        x, y = n.xy
        hatch = None
        if n.name == "jimdb_mon" and not split:
            face, txt = "#f7f7f7", "(not split)"
        elif n.name == "clients":
            face = "#e8eef7"
            txt = f"{w['arrivals'][k] * MIN_MS / sc.step_ms / 1e6:.2f} M calls/min"
        elif down:
            face, txt, hatch = "#cccccc", "down", "xx"
        else:
            face, txt = cmap(norm(min(u, _UTIL_MAX))), f"{u:.2f}"
        ax.add_patch(
            FancyBboxPatch((x - _BOX_W / 2, y - _BOX_H / 2), _BOX_W, _BOX_H,
                           boxstyle="round,pad=0,rounding_size=0.1", fc=face, ec="#333333", lw=1, hatch=hatch)
        )  # fmt: skip
        ax.text(x, y + 0.13, n.label, ha="center", va="center", fontsize=7.5, linespacing=1.0)
        box = {"fc": "white", "ec": "none", "alpha": 0.8, "pad": 1} if hatch else None
        ax.text(x, y - 0.26, txt, ha="center", va="center", fontsize=8, fontweight="bold", bbox=box)
    ax.set_xlim(-0.05, 10.15)
    ax.set_ylim(-0.15, 4.25)
    ax.axis("off")
    label = note if note is not None else f"minute {t_ms / MIN_MS:.0f}"
    ax.text(-0.05, 4.25, label, ha="left", va="top", fontsize=9, fontweight="bold")
    return ax


def plot_graph_moments(run: Run, moments: list, *, graph: Graph = GATEWAY_GRAPH):
    """The graph at several ``(t_ms, note)`` moments, one row each, with a colour bar."""
    import matplotlib as mpl
    import matplotlib.pyplot as plt

    n = len(moments)
    fig, axes = plt.subplots(n, 1, figsize=(8.0, 2.75 * n + 0.5), squeeze=False)
    for ax, (t_ms, note) in zip(axes[:, 0], moments, strict=True):
        plot_graph(run, t_ms, ax, graph=graph, note=note)
    fig.subplots_adjust(left=0.01, right=0.99, top=0.99, bottom=0.45 / (2.75 * n + 0.5) + 0.04, hspace=0.05)
    cax = fig.add_axes((0.3, 0.025, 0.4, 0.012))
    sm = mpl.cm.ScalarMappable(norm=mpl.colors.Normalize(0.0, _UTIL_MAX), cmap=_UTIL_CMAP)
    cb = fig.colorbar(sm, cax=cax, orientation="horizontal", extend="max")
    cb.set_label(f"utilisation (offered / capacity); at {_UTIL_MAX:g} and above all the same red: read the number",
                 fontsize=8)
    cb.ax.tick_params(labelsize=7)
    return fig


def _alarm_lines(ax, run: Run, names=SEED_ALARM_ORDER, numbers=True):
    """Dotted red lines at the alarms; numbers (1 = first in the seed's list) above the axis,
    staggered when alarms come close together."""
    span = run.scenario.horizon_ms / MIN_MS
    last, level = -math.inf, 0
    for i, name in enumerate(names, 1):
        t = run.alarm_ms(name)
        if math.isnan(t):
            continue
        x = t / MIN_MS
        ax.axvline(x, color=COLORS["timeouts"], lw=0.8, ls=":", zorder=1)
        if numbers:
            level = level + 1 if x - last < 0.02 * span else 0
            last = x
            ax.annotate(str(i), (x, 1.0), xycoords=("data", "axes fraction"), xytext=(4 * level, 2 + 9 * level),
                        textcoords="offset points", color=COLORS["timeouts"], fontsize=8, ha="center", va="bottom")


def _fix_shade(ax, run: Run, label: bool):
    """Shade the time the fixes are on, when they come on during the run."""
    sc = run.scenario
    if (sc.fixes.names() or sc.local_cache_hit_ratio) and 0 < sc.fixes_at_ms < sc.horizon_ms:
        shade(ax, [(sc.fixes_at_ms / MIN_MS, sc.horizon_ms / MIN_MS)], kind="intervention",
              label="fixes on" if label else None)  # fmt: skip
        if label:
            ax.legend(loc="lower left", fontsize=8)


def plot_timelines(run: Run, *, alarms: bool = True):
    """Each component against time (min), the seed's alarms marked 1–7 as dotted lines."""
    import matplotlib.pyplot as plt

    w, sc = run.windows, run.scenario
    t = w["t"] / 60.0
    per_min = MIN_MS / sc.step_ms / 1e6
    fig, ax = plt.subplots(5, 1, figsize=(8.0, 10.5), sharex=True)
    fig.subplots_adjust(top=0.95)
    a = ax[0]
    a.plot(t, w["arrivals"] * per_min, color=COLORS["offered"], lw=2, label="calls")
    a.plot(t, w["served"] * per_min, color=COLORS["goodput"], lw=1.5, label="answered")
    if w["rejected"].any():
        a.plot(t, w["rejected"] * per_min, color=COLORS["rejected"], lw=1.5, label="rejected (token bucket)")
    a.axhline(_SEED_PEAK_PER_MIN / 1e6, color=COLORS["capacity"], ls="--", lw=1.2, label="seed: 1.9 M/min")
    decorate(a, ylabel="million calls/min", ylim=(0, None))
    a = ax[1]
    a.plot(t, w["gateway_cpu"] * 100, color=COLORS["offered"], lw=2, label="cpu, mean of live hosts")
    a.plot(t, w["gateway_cpu_max"] * 100, color=COLORS["offered"], lw=0.8, alpha=0.6, label="cpu, hottest host")
    a.plot(t, w["gc_share"] * 100, color=COLORS["wasted"], lw=1.5, label="young gc share of cpu")
    a.plot(t, w["hosts_up"] / sc.hosts * 100, color=COLORS["capacity"], lw=1.5, label=f"hosts up (% of {sc.hosts})")
    a.plot(t, w["heap_used"] * 100, color=COLORS["queue"], lw=1.5, ls="--", label="heap used, fullest host")
    decorate(a, ylabel="gateway (%)", ylim=(0, 135))
    a.set_yticks([0, 25, 50, 75, 100])
    a.legend(loc="upper left", fontsize=7, ncol=3)
    a = ax[2]
    a.plot(t, w["jimdb_util"], color=COLORS["offered"], lw=2, label="hot shard: offered / capacity")
    a.axhline(1.0, color=COLORS["capacity"], ls="--", lw=1.2)
    down = w["jimdb_up"] == 0
    spans = _spans(t, down)
    shade(a, spans, label="failover (unavailable)")
    decorate(a, ylabel="jimdb utilisation", ylim=(0, None))
    a = ax[3]
    a.plot(t, w["mysql_util"], color=COLORS["offered"], lw=2, label="offered / capacity")
    a.axhline(1.0, color=COLORS["capacity"], ls="--", lw=1.2)
    a.set_yscale("symlog", linthresh=1.0)
    scans = w["full_scans"] > 0
    if scans.any():
        a.plot(t[scans], np.full(scans.sum(), 0.05), "|", color=COLORS["timeouts"], ms=6, label="full scans")
    decorate(a, ylabel="mysql utilisation", ylim=(0, None))
    a = ax[4]
    a.plot(t, w["pending"] / 1e6, color=COLORS["queue"], lw=2, label="pending in gateway heaps")
    a.plot(t, w["jmq_backlog"] / 1e6, color=COLORS["queue"], lw=1.5, ls="--", label="jmq backlog (not in es)")
    bound = sc.log_buffer_mb * 1024.0 / sc.log_kb * sc.hosts / 1e6 if sc.log_kb > 0 else math.inf
    if math.isfinite(bound):
        a.axhline(bound, color=COLORS["queue"], lw=0.8, ls="-.", label="all log queues full")
    decorate(a, xlabel="time (min)", ylabel="call logs (million)", ylim=(0, None))
    a.legend(loc="upper left", fontsize=7)
    a2 = a.twinx()
    a2.plot(t, w["scans_running"] / 1e3, color=COLORS["timeouts"], lw=1.5, ls=":")
    a2.set_ylabel("full scans mysql runs (thousand)", color=COLORS["timeouts"], fontsize=8)
    a2.tick_params(axis="y", colors=COLORS["timeouts"], labelsize=8)
    a2.set_ylim(0, None)
    a2.grid(False)
    a2.spines["right"].set_visible(True)
    for a in ax:
        a.set_xlim(t[0], t[-1])
    if alarms:
        for a in ax:
            _alarm_lines(a, run, numbers=a is ax[0])
    for a in ax:
        _fix_shade(a, run, label=False)
    fig.tight_layout()
    return fig


def _spans(t, mask):
    """(start, end) runs of True in ``mask`` on axis ``t``."""
    out = []
    m = np.asarray(mask, dtype=bool)
    if not m.any():
        return out
    d = np.diff(np.concatenate([[0], m.astype(int), [0]]))
    starts, ends = np.flatnonzero(d == 1), np.flatnonzero(d == -1)
    step = t[1] - t[0] if len(t) > 1 else 1.0
    for s, e in zip(starts, ends, strict=True):
        out.append((t[s], t[e - 1] + step))
    return out


def plot_fixes(comparison: FixComparison):
    """Peak utilisation per component (left, colour = utilisation, red above 1) and the share of
    calls answered (right), one row per variant."""
    import matplotlib as mpl
    import matplotlib.pyplot as plt

    rows = comparison.rows()
    labels = [r["label"] for r in rows]
    cols = ["gateway", "jimdb", "mysql", "jmq"]
    m = np.array([[r["peaks"][c] for c in cols] for r in rows])
    fig, (a0, a1) = plt.subplots(1, 2, figsize=(8.0, 0.36 * len(rows) + 1.2), width_ratios=[1.5, 1])
    a0.imshow(np.minimum(m, _UTIL_MAX), cmap=_UTIL_CMAP, norm=mpl.colors.Normalize(0, _UTIL_MAX), aspect="auto")
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            v = m[i, j]
            big = cols[j] == "gateway" and v >= MAX_UTIL
            txt = f"≥{MAX_UTIL:.0f}" if big else (f"{v:.1f}" if v >= 10 else f"{v:.2f}")
            a0.text(j, i, txt, ha="center", va="center", fontsize=8)
    a0.set_xticks(range(len(cols)), [f"{c}" for c in cols])
    a0.set_yticks(range(len(labels)), labels)
    a0.xaxis.tick_top()
    a0.grid(False)
    a0.set_xlabel("peak utilisation (offered / capacity)")
    shares = np.array([[r["flood"][k] for k in ("answered", "refused", "failed")] for r in rows]) * 100
    left = np.zeros(len(rows))
    y = np.arange(len(rows))
    for j, (key, color) in enumerate(
        (("answered", COLORS["goodput"]), ("refused fast", COLORS["rejected"]), ("failed", COLORS["timeouts"]))
    ):
        a1.barh(y, shares[:, j], left=left, color=color, height=0.6, label=key)
        left += shares[:, j]
    for i, s_ in enumerate(shares[:, 0]):
        a1.text(2, i, f"{s_:.1f}", va="center", fontsize=8, color="white", fontweight="bold")
    a1.set_ylim(len(rows) - 0.5, -0.5)
    a1.set_yticks([])
    a1.set_xlim(0, 100)
    a1.legend(loc="upper center", bbox_to_anchor=(0.45, -0.16), ncol=2, fontsize=8)
    start = comparison.runs[rows[0]["label"]].scenario.ramp_mid_ms / MIN_MS
    a1.set_xlabel(f"calls from minute {start:.0f} on (%)")
    fig.tight_layout()
    return fig


def plot_compact(run: Run, ax=None):
    """Three panels for the widget: calls (answered, refused, failed), the gateway (hottest host's
    CPU, hosts up) and the utilisation of jimdb, MySQL and JMQ; the seed's alarms dotted."""
    import matplotlib.pyplot as plt

    w, sc = run.windows, run.scenario
    t = w["t"] / 60.0
    per_min = MIN_MS / sc.step_ms / 1e6
    if ax is None:
        fig, ax = plt.subplots(3, 1, figsize=(8.0, 6.6), sharex=True)
    fig = ax[0].figure
    a = ax[0]
    a.plot(t, w["arrivals"] * per_min, color=COLORS["offered"], lw=2, label="calls")
    a.plot(t, w["served"] * per_min, color=COLORS["goodput"], lw=1.5, label="answered")
    a.plot(t, (w["failed"] + w["timeouts"]) * per_min, color=COLORS["timeouts"], lw=1.2, label="failed")
    if w["rejected"].any():
        a.plot(t, w["rejected"] * per_min, color=COLORS["rejected"], lw=1.2, label="refused fast")
    decorate(a, ylabel="million calls/min", ylim=(0, None))
    a.legend(loc="upper left", fontsize=8)
    a = ax[1]
    a.plot(t, w["gateway_cpu_max"] * 100, color="#000000", lw=1.5, label="cpu, hottest host")
    a.plot(t, w["hosts_up"] / sc.hosts * 100, color="#7f7f7f", lw=1.5, ls="--", label=f"hosts up (% of {sc.hosts})")
    decorate(a, ylabel="gateway (%)", ylim=(0, 105))
    a.legend(loc="lower left", fontsize=8)
    a = ax[2]
    a.plot(t, np.minimum(w["jimdb_util"], 3), color="#000000", lw=1.5, label="jimdb hot shard")
    a.plot(t, np.minimum(w["mysql_util"], 3), color="#000000", lw=1.2, ls="--", label="mysql (clipped at 3)")
    a.plot(t, np.minimum(w["jmq_util"], 3), color="#7f7f7f", lw=1.5, ls=":", label="jmq")
    a.axhline(1.0, color=COLORS["capacity"], lw=1, ls="-", alpha=0.5)
    decorate(a, xlabel="time (min)", ylabel="offered / capacity (≤ 3)", ylim=(0, 3.7))
    a.legend(loc="upper left", fontsize=8, ncol=3)
    for a in ax:
        a.set_xlim(t[0], t[-1])
        _alarm_lines(a, run, numbers=a is ax[0])
        _fix_shade(a, run, label=a is ax[1])
    fig.tight_layout()
    return ax


@lru_cache(maxsize=16)
def _explore_run(installs_max: float, poll_ms: float, hit: float, fixes: tuple, seed: int) -> Run:
    sc = replace(SEED_INCIDENT, installs_max=installs_max, poll_interval_ms=poll_ms, local_cache_hit_ratio=hit)
    return simulate(with_fixes(sc, fixes), seed)


def explore(
    installs_k: float = round(SEED_INCIDENT.installs_max / 1000.0),
    poll_s: float = SEED_INCIDENT.poll_interval_ms / 1000.0,
    hit_ratio: float = 0.0,
    fixes: tuple = (),
    seed: int = 0,
    plot: bool = True,
) -> dict:
    """The what-if widget's function: installs the release grows to (thousands), its polling
    interval (s), the local cache hit ratio, and the fixes switched on; runs the seed's scenario
    and draws :func:`plot_compact`. Returns the summary (peaks, alarms in minutes, the seed's
    alarms in firing order, shares of calls answered / refused / failed during the flood)."""
    inst = check_number("installs_k", installs_k, low=0.0, high=10_000.0)
    poll = check_number("poll_s", poll_s, low=0.1, high=3600.0)
    h = check_probability("hit_ratio", hit_ratio)
    names = tuple(sorted(n for n in fixes if n != "local_cache"))
    for n in names:
        check_choice("fixes", n, FIX_NAMES)
    run = _explore_run(inst * 1000.0, poll * 1000.0, h, names, check_seed(seed))
    sc = run.scenario
    out = run.summary()
    out["alarm_order"] = run.alarm_order()
    out["peak_calls_per_min_closed_form"] = calls_per_min(
        sc.installs_max, sc.poll_interval_ms, baseline_per_min=sc.baseline_per_s * 60.0,
        calls_per_poll=sc.calls_per_poll,
    )  # fmt: skip
    if plot:
        import matplotlib.pyplot as plt

        plot_compact(run)
        plt.show()
    return out
