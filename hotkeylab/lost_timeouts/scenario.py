"""08 · The scenario: dubbo's timer constants, the JVM's limits, and the consumer/provider setup of seed 002
(each preset line quotes its seed sentence or says the value is assumed).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..validate import check_fields, check_int, check_number, param

__all__ = [
    "Scenario",
    "SEED_INCIDENT",
    "HEALTHY",
    "DUBBO_TICK_MS",
    "DUBBO_SLOTS",
    "MODES",
    "EXIT_KINDS",
    "FIXES",
    "FIX_LABELS",
    "DEAD_GC_SHARE",
    "JVM_GC_TIME_LIMIT",
    "JVM_GC_HEAP_FREE_LIMIT",
    "GRACEFUL_WAIT_MS",
    "MAX_EVENTS",
]

#: dubbo's ``DefaultFuture`` timer: a ``HashedWheelTimer`` ticking every 30 ms ...
DUBBO_TICK_MS = 30.0
#: ... on a wheel of 512 slots (the timer's default), so one turn spans 15.36 s.
DUBBO_SLOTS = 512

MODES = ("async", "sync")
EXIT_KINDS = ("abrupt", "graceful")
FIXES = ("none", "no_shutdown", "inline_timeout")
FIX_LABELS = {
    "none": "2.7.12: executor shut down, timeouts lost",
    "no_shutdown": "fixed version: executor not shut down",
    "inline_timeout": "timeout runs inline when executor is shut down",
}
#: What the JVM does (HotSpot, Parallel collector): it throws ``OutOfMemoryError: GC overhead limit
#: exceeded`` when more than 98% of the time goes to GC (``-XX:GCTimeLimit=98``) *and* a collection
#: recovers less than 2% of the heap (``-XX:GCHeapFreeLimit=2``).
JVM_GC_TIME_LIMIT = 0.98
JVM_GC_HEAP_FREE_LIMIT = 0.02
#: Ours, not the JVM's: the model calls a machine *dead* from the first GC sample at which full GC
#: takes at least this share of its time (it then serves almost nothing). With ``gc_cost`` k this is
#: the heap occupancy ``heap_fraction_at_gc(0.98, k)``; the JVM's own rule is checked separately.
DEAD_GC_SHARE = 0.98
#: dubbo's wait for pending calls before a client closes its channel on a graceful removal
#: (``CommonConstants.DEFAULT_SERVER_SHUTDOWN_TIMEOUT``, used by ``DubboInvoker.destroy`` ->
#: ``HeaderExchangeChannel.close(timeout)``, which polls every 10 ms while futures are pending).
GRACEFUL_WAIT_MS = 10_000.0

_MAX_RATE = 100_000.0
_MAX_HORIZON_MS = 86_400_000.0


#: The event cap's upper end. The dearest events are the GC model's samples (about 22 us each at
#: ``gc_sample_ms=1`` on this 2-core machine under load), so one run of this many ends in about
#: 13 s and holds about 250 MB; the seed's quarter of an hour takes about 170 000.
MAX_EVENTS = 600_000


# =========================================================================== the leak
# Two closed forms the scenario's own reading below needs (:attr:`Scenario.leak_start_ms`,
# :attr:`Scenario.leak_per_s`); :mod:`.closed_form` re-exports them with the others.
def leak_rate_per_s(rate_per_s: float, hung_share: float) -> float:
    """Futures that never complete, per second, once timeouts are lost: ``λ_hung = λ × s``."""
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    return lam * check_number("hung_share", hung_share, low=0.0, high=1.0)


def leak_start(hang_at_ms: float, shutdown_ms: float, timeout_ms: float, tick_ms: float = DUBBO_TICK_MS) -> float:
    """When the leak starts (closed form): ``t0 = max(t_hang, t_shutdown − T − tick / 2)``.

    A call issued at ``a`` to the hung provider has its deadline at ``a + T``; the wheel fires it
    at the first tick after that, ``a + T + U`` with ``U`` uniform on (0, tick] (mean tick / 2).
    Its timeout is lost iff it fires after the shutdown: ``a > t_shutdown − T − U``. Calls issued
    before the hang were answered. So, on average, calls issued after ``t0`` leak.
    """
    h = check_number("hang_at_ms", hang_at_ms, low=0.0)
    sd = check_number("shutdown_ms", shutdown_ms, low=0.0)
    t = check_number("timeout_ms", timeout_ms, low=0.0, low_open=True)
    tk = check_number("tick_ms", tick_ms, low=0.0, low_open=True)
    return max(h, sd - t - tk / 2.0)



# =========================================================================== scenario
@dataclass(frozen=True)
class Scenario:
    """One machine of service B calling service C asynchronously, and what happens to C.

    Provider 0 of C exits at ``exit_at_ms`` (``abrupt``: ``kill -9``; ``graceful``: unregister,
    answer what is in flight, close); provider 1 hangs at ``hang_at_ms`` (process alive, never
    answers). Times in ms, rates per second, memory in MB (heap) and KB (per call).
    """

    rate_per_s: float = param(100.0, low=0.0, low_open=True, high=_MAX_RATE)  # upstream requests/s; one call to C each
    node_capacity_per_s: float = param(200.0, low=0.0, low_open=True, high=1e7)  # requests/s B serves without GC
    providers: int = param(5, kind="int", low=2, high=1000)  # machines of service C
    hung_share: float | None = param(None, kind="probability", optional=True)  # calls to provider 1 (None: 1/live)
    call_mode: str = param("async", kind="choice", choices=MODES)  # "async" | "sync"
    timeout_ms: float = param(1000.0, low=0.0, low_open=True, high=3_600_000.0)  # the call's timeout
    service_ms: float = param(20.0, low=0.0, low_open=True, high=3_600_000.0)  # mean answer time (exponential)
    exit_at_ms: float | None = param(60_000.0, low=0.0, optional=True)  # provider 0 leaves (None: never)
    exit_kind: str = param("abrupt", kind="choice", choices=EXIT_KINDS)  # "abrupt" (kill -9) | "graceful"
    exit_stall_ms: float = param(0.0, low=0.0, high=3_600_000.0)  # provider 0 stops answering this long before
    hang_at_ms: float | None = param(120_000.0, low=0.0, optional=True)  # provider 1 hangs (None: never)
    fix: str = param("none", kind="choice", choices=FIXES)  # "none" (2.7.12) | "no_shutdown" | "inline_timeout"
    max_outstanding: int | None = param(None, kind="int", low=1, optional=True)  # pending calls per provider
    tick_ms: float = param(DUBBO_TICK_MS, low=1.0, high=60_000.0)  # the timing wheel's tick (>= 1 ms)
    slots: int = param(DUBBO_SLOTS, kind="int", low=1, high=1 << 20)  # the timing wheel's slots
    heap_mb: float = param(1024.0, low=0.0, low_open=True, high=1e7)  # the JVM's maximum heap
    base_live_mb: float = param(256.0, low=0.0)  # live data without any leak (< heap_mb)
    retained_kb: float = param(64.0, low=0.0, high=1e7)  # memory one pending call keeps alive
    gc_cost: float = param(0.015, low=0.0, high=1e3)  # k in gc_fraction: GC share k u / (1 − u)
    gc_sample_ms: float = param(1000.0, low=1.0)  # how often the GC model re-reads the heap (<= horizon_ms)
    b_nodes: int = param(10, kind="int", low=1, high=100_000)  # machines of service B (cluster view)
    b_leaking_nodes: int = param(3, kind="int", low=0)  # of those, machines whose timeouts are lost (<= b_nodes)
    horizon_ms: float = param(900_000.0, low=0.0, low_open=True, high=_MAX_HORIZON_MS)  # simulated time
    window_ms: float = param(10_000.0, low=0.0, low_open=True)  # width of Run.windows (<= horizon_ms)
    max_events: int = param(MAX_EVENTS, kind="int", low=1, high=MAX_EVENTS)  # the event cap of one run

    def __post_init__(self):
        check_fields(self)
        check_number("base_live_mb", self.base_live_mb, low=0.0, high=self.heap_mb, high_open=True)
        check_number("gc_sample_ms", self.gc_sample_ms, low=1.0, high=self.horizon_ms)
        check_number("window_ms", self.window_ms, low=0.0, low_open=True, high=self.horizon_ms)
        check_int("b_leaking_nodes", self.b_leaking_nodes, low=0, high=self.b_nodes)

    # -- derived quantities (closed forms)
    def live_providers(self, t_ms: float) -> int:
        """Providers in the routing list at ``t_ms`` (provider 0 leaves it when it exits)."""
        gone = self.exit_at_ms is not None and t_ms >= self.exit_at_ms
        return self.providers - (1 if gone else 0)

    def share_of_hung(self, t_ms: float) -> float:
        """Share of calls routed to provider 1 (the one that hangs) at ``t_ms``."""
        if self.hung_share is not None:
            return self.hung_share
        return 1.0 / self.live_providers(t_ms)

    # The three properties below are the *closed form's* reading of the scenario, used by the
    # fluid model and the formulas. The simulation does not use them: there the shutdown and the
    # lost timeouts come out of ``close_channel`` and the executors.
    @property
    def executor_shutdown_ms(self) -> float | None:
        """Closed form's assumption: an abrupt exit with calls pending on the provider shuts the
        shared executor down at the exit (not with the fixed version)."""
        if self.exit_at_ms is None or self.exit_kind != "abrupt" or self.fix == "no_shutdown":
            return None
        return self.exit_at_ms

    @property
    def timeouts_lost_from_ms(self) -> float | None:
        """Closed form's assumption: from the shutdown on, async calls' timeout tasks are rejected
        (sync calls hand theirs to their own executor; the inline fix runs them on the timer)."""
        if self.call_mode != "async" or self.fix != "none":
            return None
        return self.executor_shutdown_ms

    @property
    def leak_start_ms(self) -> float | None:
        """:func:`leak_start` for this scenario; None if the closed form expects no leak."""
        lost = self.timeouts_lost_from_ms
        if lost is None or self.hang_at_ms is None:
            return None
        return leak_start(self.hang_at_ms, lost, self.timeout_ms, self.tick_ms)

    @property
    def leak_per_s(self) -> float:
        """``λ_hung`` once leaking (no GC feedback), 0 if nothing leaks."""
        t0 = self.leak_start_ms
        if t0 is None:
            return 0.0
        return leak_rate_per_s(self.rate_per_s, self.share_of_hung(max(t0, self.exit_at_ms or 0.0)))

    @property
    def base_heap_fraction(self) -> float:
        return self.base_live_mb / self.heap_mb


SEED_INCIDENT = Scenario(
    rate_per_s=100.0,  # "开了 3 个线程一直请求 provider" - B keeps calling C (rate assumed: 100/s)
    node_capacity_per_s=200.0,  # "剩余正常机器请求量激增，耗时增加" - B has headroom (assumed ρ = 0.5)
    providers=5,  # "只需要关注 A、B、C 三个服务" - C is a cluster (size assumed: 5)
    hung_share=None,  # dubbo's default random load balancing: each live provider gets 1 / live
    call_mode="async",  # "首先得是异步调用" / "异步调用得到业务方的确认"
    timeout_ms=1000.0,  # "如果超过设定的超时时间还未返回" (value assumed: dubbo's default 1000 ms)
    service_ms=20.0,  # a healthy C answers (mean assumed: 20 ms)
    exit_at_ms=60_000.0,  # "provider 非正常下线 … 物理机的故障导致的容器漂移" (time assumed)
    exit_kind="abrupt",  # "当 kill -9 掉第一个 provider 时，消费者全局 ExecutorService 被关闭"
    exit_stall_ms=2000.0,  # "物理机的故障导致的容器漂移": a failing machine stops answering first (assumed 2 s)
    hang_at_ms=120_000.0,  # "C 服务有一台机器在那个时间点附近僵死，无法处理请求，但进程又是存活的"
    fix="none",  # "dubbo version: 2.7.12" / "这个 bug 是 2.7.10 引入， 2.7.13 修复"
    max_outstanding=None,  # no cap: "如果请求一直发送，不超时，那是不是有可能撑爆内存？"
    tick_ms=DUBBO_TICK_MS,  # "HashedWheelTimer 是 dubbo 实现的一种时间轮" (dubbo: 30 ms tick)
    slots=DUBBO_SLOTS,  # the same timer's wheel: 512 slots
    heap_mb=1024.0,  # "内存上涨比较多，都达到了 80% 的水平线" (heap size assumed: 1 GB)
    base_live_mb=256.0,  # "当不触发这个问题时，内存是一直稳定在一个低水平上" (assumed 25%)
    retained_kb=64.0,  # each stuck DefaultFuture keeps its request and arguments (assumed 64 KB)
    gc_cost=0.015,  # "fullGC 时间上涨很多" (level assumed: 0.5% of the time in GC at 25% heap)
    gc_sample_ms=1000.0,  # the monitors' resolution (assumed 1 s)
    b_nodes=10,  # "B 服务有几台机器完全夯死，… 剩余正常机器请求量激增" (cluster size assumed)
    b_leaking_nodes=3,  # "有几台机器" - a few (assumed 3 of 10)
    horizon_ms=900_000.0,  # a quarter of an hour of the night
)

#: The same machine with the fixed version: the executor is not shut down, timeouts work.
HEALTHY = replace(SEED_INCIDENT, fix="no_shutdown")
