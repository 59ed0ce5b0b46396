"""07 · The scenario: the gateway, its dependencies, the load and the fixes (seed 001).

Each field's range is declared once, on the field (``param``); every line of
:func:`_seed_incident` quotes the seed sentence it stands for, or says the value is assumed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

import numpy as np

from ..validate import check_choice, check_fields, check_int, check_number, param
from .closed_form import MIN_MS, clients_for_calls_per_min

#: the most steps of one run: a step costs about 130 µs of CPU with 20 hosts and 330 µs with
#: 10,000 (measured on the 2-core CI machine while it ran other work), so a run takes at most
#: about 8 s of CPU and ends in ~20 s even on a loaded machine
MAX_STEPS = 25_000
#: the most ``hosts × steps`` of one run: the running full scans keep one number per host for
#: every step that started some, so this bounds their memory (8 bytes each: 160 MB)
MAX_HOST_STEPS = 20_000_000
COMPONENTS = ("gateway", "jimdb", "mysql", "jmq")
MAX_UTIL = 10.0  # utilisation reported when a component has no capacity left (all hosts down)

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

    degrade_monitoring: bool = param(False, kind="bool")  # 解决问题一: stop writing monitoring data to jimdb
    degrade_logging: bool = param(False, kind="bool")  # 解决问题二: blacklist the hot API's call logs
    split_clusters: bool = param(False, kind="bool")  # 解决问题三: jimdb for logs/monitoring apart from the checks'
    token_bucket: bool = param(False, kind="bool")  # 解决问题四: token-bucket admission of the hot API
    fix_full_scan: bool = param(False, kind="bool")  # 解决问题三/五: fix the parameter loss, check the SQL
    block_release: bool = param(False, kind="bool")  # 想一想: the login logic refuses the release (how it drained)
    singleflight: bool = param(False, kind="bool")  # coalesce concurrent misses of one key per host
    negative_cache: bool = param(False, kind="bool")  # cache "not found" (the lost-parameter key) locally

    def __post_init__(self):
        check_fields(self)

    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in fields(self) if getattr(self, f.name))


_SEED_PEAK_PER_MIN = 1_900_000.0  # "统计网关调用量峰值 190w+/min"
_SEED_DB_CPU = 0.85  # "网关数据库 CPU 使用率 85%"
_BASELINE_PER_S = 1_000.0  # assumption: the gateway's other traffic on a Saturday morning
_MYSQL_QPS = 20_000.0  # assumption
_POS = {"low": 0.0, "low_open": True}  # a range "> 0"


@dataclass(frozen=True)
class Scenario:
    """The gateway, its dependencies and the load. Times in ms, rates per s. Where the seed gives
    no number, the default is an assumption (said so in :data:`SEED_INCIDENT`)."""

    # clients
    installs_max: float = param(150_000.0, low=0.0, high=1e8)  # installs the release's ramp grows to
    poll_interval_ms: float = param(5_000.0, low=100.0, high=3.6e6)  # each client polls the order API this often
    calls_per_poll: float = param(1.0, low=0.0, high=100.0)  # gateway calls per poll
    baseline_per_s: float = param(_BASELINE_PER_S, low=0.0, high=1e7)  # the gateway's other traffic
    ramp_mid_ms: float = param(35 * MIN_MS, low=0.0, high=1e9)  # installs reach half of installs_max here
    ramp_scale_ms: float = param(7 * MIN_MS, **_POS, high=1e9)  # logistic scale: 10 % → 90 % takes 4.4 × this
    client_timeout_ms: float = param(3_000.0, **_POS, high=1e7)  # a call waiting this long in the queue is lost
    # gateway hosts (access layer, app layer, monitoring and logging share them)
    hosts: int = param(20, kind="int", low=1, high=10_000)
    host_capacity_per_s: float = param(2_200.0, **_POS, high=1e7)  # calls/s one host's CPU handles (no GC)
    lb_jitter: float = param(0.04, low=0.0, high=0.5)  # relative spread of the load balancer's host weights
    base_latency_ms: float = param(10.0, low=0.0, high=1e6)  # a call's own work, without dependencies
    heap_mb: float = param(4_096.0, **_POS, high=1e7)  # JVM heap per host
    live_mb: float = param(1_024.0, low=0.0, high=1e7)  # live data in the heap before pending logs (< heap_mb)
    young_mb: float = param(512.0, **_POS, high=1e7)  # young generation with an empty old one (<= heap_mb)
    alloc_kb_per_call: float = param(40.0, low=0.0, high=1e6)  # garbage one call allocates
    gc_pause_ms: float = param(100.0, low=0.0, high=1e5)  # one young collection (stop the world)
    sender_threads_max: int = param(200, kind="int", low=0, high=100_000)  # log sender threads a host piles up
    thread_cpu_share: float = param(0.0003, low=0.0, high=1.0)  # CPU share one busy-switching thread costs
    restart_ms: float = param(5 * MIN_MS, low=0.0, high=1e9)  # a crashed host is back after this (empty heap)
    # jimdb (Redis)
    shard_ops_per_s: float = param(80_000.0, **_POS, high=1e9)  # capacity of the shard holding the hot keys
    jimdb_net_ms: float = param(1.0, low=0.0, high=1e5)  # round trip of one operation (service time 1/capacity)
    jimdb_timeout_ms: float = param(500.0, **_POS, high=1e6)  # client timeout of one operation (> jimdb_net_ms)
    check_reads_per_call: int = param(2, kind="int", low=1, high=100)  # defence checks: token and pin
    monitor_writes_per_call: float = param(2.0, low=0.0, high=100.0)  # monitoring: performance and error counters
    failover_after_ms: float = param(120_000.0, low=0.0, high=1e9)  # an overloaded master is declared dead after this
    failover_ms: float = param(30_000.0, low=0.0, high=1e9)  # the shard is unavailable while the slave takes over
    dba_reaction_ms: float = param(10 * MIN_MS, low=0.0, allow_inf=True)  # DBA scales up this long after "lost"
    dba_capacity_factor: float = param(2.0, low=1.0, high=1000.0)  # capacity after the scale-up (1 = none)
    # mysql (the gateway's database)
    mysql_qps: float = param(_MYSQL_QPS, **_POS, high=1e9)  # point queries/s at 100 % CPU
    mysql_query_ms: float = param(2.0, **_POS, high=1e5)  # one point query's own time, no queueing
    mysql_timeout_ms: float = param(1_000.0, **_POS, high=1e6)  # slower than this: failed (>= mysql_query_ms)
    app_queries_per_call: float = param(0.5, kind="probability")  # share of calls whose app layer queries the db
    param_loss_share: float = param(0.002, kind="probability")  # share of fallback lookups that lose the pin
    full_scan_cost: float = param(5_000.0, low=1.0, high=1e9)  # a full-table scan costs this many point queries
    full_scan_ms: float = param(2_000.0, low=1.0, high=1e7)  # how long one full scan runs on an idle database
    full_scan_result_mb: float = param(5.0, low=0.0, high=1e5)  # rows a scan streams into the issuing host's heap
    # logs
    logs_per_call: float = param(1.0, low=0.0, high=100.0)  # call logs per call
    log_kb: float = param(2.0, low=0.0, high=1e5)  # one pending log message in the heap
    log_buffer_mb: float = param(2_048.0, low=0.0, high=1e7, allow_inf=True)  # a host's in-heap log queue bound
    jmq_msgs_per_s: float = param(15_000.0, **_POS, high=1e9)  # messages/s the JMQ connections can send
    es_docs_per_s: float = param(2_000.0, low=0.0, high=1e9)  # documents/s Elasticsearch indexes from JMQ
    # fixes (parameters; switches in ``fixes``)
    local_cache_hit_ratio: float = param(0.0, kind="probability")  # local JVM cache in front of jimdb (0 = none)
    token_bucket_per_s: float = param(12_000.0, low=0.0, high=1e9)  # order-API calls/s the token bucket admits
    token_burst: float = param(2_000.0, low=0.0, high=1e9)  # bucket depth beyond one step's tokens
    negative_cache_ttl_ms: float = param(1_000.0, low=0.0, high=1e9)  # TTL of a cached "not found"
    block_reaction_ms: float = param(20 * MIN_MS, low=0.0, high=1e9)  # release blocked this long after 1st alarm
    drain_ms: float = param(15 * MIN_MS, **_POS, high=1e9)  # time constant of blocked clients leaving
    fixes: Fixes = field(default_factory=Fixes)  # the switches (a Fixes instance, checked below)
    fixes_at_ms: float = param(0.0, low=0.0, high=1e10)  # fixes (and the local cache) act from this time on
    # alarms
    perf_alarm_ms: float = param(100.0, **_POS, high=1e7)  # performance alarm: mean latency above this
    availability_alarm: float = param(0.99, kind="probability")  # availability alarm: success ratio below this
    cpu_alarm: float = param(0.9, kind="probability")  # CPU alarm: a host's CPU above this
    young_gc_alarm_per_s: float = param(1.0, **_POS, high=1e6)  # "young GC very frequent": collections/s above
    alarm_hold_ms: float = param(30_000.0, low=0.0, high=1e9)  # a condition must hold this long to raise its alarm
    conn_lost_alarm_ms: float = param(10_000.0, low=0.0, high=1e9)  # jimdb unreachable this long: "connection lost"
    recovered_hold_ms: float = param(120_000.0, low=0.0, high=1e9)  # jimdb healthy this long after a failover
    # time
    step_ms: float = param(1_000.0, low=10.0, high=60_000.0)
    steps: int = param(7_200, kind="int", low=1, high=MAX_STEPS)

    def __post_init__(self):
        check_fields(self)
        if not isinstance(self.fixes, Fixes):
            raise ValueError(f"fixes must be a Fixes instance, got {self.fixes!r}")
        # the ranges that depend on another field
        check_number("live_mb", self.live_mb, low=0.0, high=self.heap_mb, high_open=True)
        check_number("young_mb", self.young_mb, **_POS, high=self.heap_mb)
        check_number("jimdb_timeout_ms", self.jimdb_timeout_ms, low=self.jimdb_net_ms, low_open=True, high=1e6)
        check_number("mysql_timeout_ms", self.mysql_timeout_ms, low=self.mysql_query_ms, high=1e6)
        check_int("hosts × steps", self.hosts * self.steps, high=MAX_HOST_STEPS)

    @property
    def horizon_ms(self) -> float:
        return self.step_ms * self.steps

    @property
    def peak_calls_per_s(self) -> float:
        """Calls/s once every install polls (the ramp's plateau)."""
        return self.installs_max * self.calls_per_poll * 1000.0 / self.poll_interval_ms + self.baseline_per_s


def installs_at(scenario: Scenario, t_ms) -> np.ndarray | float:
    """Installs of the release at ``t_ms`` (logistic ramp; vectorised over ``t_ms``)."""
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a Scenario, got {type(scenario).__name__}")
    allowed = "a number or an array of numbers, none of them NaN"
    try:
        t = np.asarray(t_ms, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"t_ms must be {allowed}, got {t_ms!r}") from None
    if isinstance(t_ms, bool) or np.isnan(t).any():
        raise ValueError(f"t_ms must be {allowed}, got {t_ms!r}")
    x = (t - scenario.ramp_mid_ms) / scenario.ramp_scale_ms
    out = scenario.installs_max / (1.0 + np.exp(np.minimum(700.0, -x)))
    return float(out) if np.ndim(out) == 0 else out


def _installs(sc: Scenario, t_ms: float) -> float:
    """:func:`installs_at` for one time, unchecked (the simulation's inner loop)."""
    return sc.installs_max / (1.0 + math.exp(min(700.0, -(t_ms - sc.ramp_mid_ms) / sc.ramp_scale_ms)))


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
    "jimdb_recovered": "联系 dba 对 Jimidb 进行扩容，并调大连接数 / Jimdb 恢复 "
                       "(DBA scales jimdb up and raises its connection limit; jimdb recovers)",
    "gateway_cpu": "网关系统 CPU 使用率飙升 (gateway CPU surges)",
    "host_down": "服务器出现宕机 (servers go down)",
    "young_gc": "对 Jstack 进行分析，发现 youngGc 异常频繁 (young GC abnormally frequent)",
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


