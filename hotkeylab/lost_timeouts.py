"""08 · Lost timeouts: when timeout tasks cannot run, in-flight calls pile up until the heap is full
(seed 002).

The incident: several machines of service B hung one night; memory and full-GC time had risen on
them, and the remaining B machines took a surge of requests at a higher latency. B's log held::

    [dubbo-future-timeout-thread-1] WARN ...HashedWheelTimer$HashedWheelTimeout
    -  [DUBBO] An exception was thrown by TimerTask., dubbo version: 2.7.12, ...
    java.util.concurrent.RejectedExecutionException: Task ...DefaultFuture$TimeoutCheckTask$$Lambda...
    rejected from java.util.concurrent.ThreadPoolExecutor@...[Terminated, pool size = 0, ...]

The seed traces it to dubbo issue 8172 / PR 8188 (a bug it dates to 2.7.10 and fixed in 2.7.13).
In 2.7.12, ``DefaultFuture.closeChannel`` (run when a connection to a provider closes) shuts down
the executor of every future still pending on that channel, then fails the future. An
asynchronous call's future holds the consumer's shared executor, so after an abrupt exit with
calls in flight, every later timeout task is rejected; ``HashedWheelTimeout.expire()`` catches the
exception and only logs it. A call whose provider answers still completes; a call to a provider
that hangs (process alive, never answers) never completes, and its future stays in memory. A
synchronous call's future holds its own ``ThreadlessExecutor`` (the shared one is never shut
down); a graceful removal waits for the channel's pending calls to drain before it closes it. The
seed's three conditions (asynchronous calls, an abrupt provider exit, a hung provider) come out of
these mechanisms, not from a branch on them.

dubbo has two consumer executors (a global one, then ``SHARED_EXECUTOR``); the model merges them
into one. The model's death threshold (``DEAD_GC_SHARE``) is ours; the JVM's GC overhead limit is
checked separately (``jvm_oom_s``).

Model (one SimPy process function per actor):

- :func:`consumer` - one machine of service B: upstream requests arrive (Poisson); each request B
  serves makes one call to service C, registers its future and a timeout in the timing wheel.
- :func:`provider` - one machine of service C: answers after a service time, unless it has exited
  or hangs; its process plays its lifecycle (a stall, then an abrupt or graceful exit; or a hang).
- :func:`timer_worker` - the wheel's worker thread: ticks every ``tick_ms`` and expires due timeouts.
- :func:`executor_worker` - the shared executor that runs the timeout notifications.
- :func:`gc` - the JVM heap and its collector: live data sets the share of time spent in full GC,
  which takes CPU and serving capacity away from the machine.
- :class:`HashedWheelTimer` - the timing wheel itself (tick 30 ms, 512 slots in dubbo's
  ``DefaultFuture`` timer), a real small data structure: add, cancel, expire, rounds.

Closed forms beside it: Little's law for the healthy in-flight count (``λ × W``, bounded by
``λ × (timeout + tick)``), the leak ``λ_hung × t``, the GC share ``k u / (1 − u)`` and a fluid
model (:func:`fluid`) that integrates them with the GC feedback, fast enough for the widget.

Ledger of calls to C: ``arrived = served (answered) + timed_out (the timeout task ran) + rejected
(refused by an outstanding-call cap, failed on a closed connection, or no provider left) +
in_system (futures still pending)``.

Units: milliseconds in the API (``*_ms``), rates per second (``*_per_s``), memory in MB (``*_mb``)
or KB (``*_kb``); windows and samples carry time ``t`` in seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import simpy

from . import capacity
from .plotting import COLORS, decorate, new_figure
from .sim import Ledger, Recorder, RunStatus, check_seed, make_rng, run_bounded
from .validate import check_choice, check_int, check_number

__all__ = [
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
    "leak_start",
    "p_shutdown_at_kill",
    "t0_experiment",
    "plot_t0_timeline",
    "assumption_ranges",
    "shutdown_count",
    "WheelTimeout",
    "HashedWheelTimer",
    "RejectedExecution",
    "Scenario",
    "SEED_INCIDENT",
    "HEALTHY",
    "Run",
    "consumer",
    "provider",
    "timer_worker",
    "executor_worker",
    "gc",
    "simulate",
    "wheel_rounds",
    "wheel_span_ms",
    "healthy_in_flight",
    "healthy_bound",
    "leak_rate_per_s",
    "leaked_calls",
    "gc_fraction",
    "heap_fraction_at_gc",
    "fluid",
    "conditions_table",
    "compare_fixes",
    "alert_time_s",
    "cluster_view",
    "demo_wheel",
    "measure_lateness",
    "plot_wheel",
    "plot_monitors",
    "plot_leak",
    "plot_cluster",
    "plot_fixes",
    "explore",
    "widget",
    "Machine",
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


# =========================================================================== the timing wheel
_ST_INIT, _ST_CANCELLED, _ST_EXPIRED = 0, 1, 2


class WheelTimeout:
    """One timer in a :class:`HashedWheelTimer` (Netty/dubbo's ``HashedWheelTimeout``).

    ``deadline_ms`` is absolute; ``fired_at_ms`` is set when it expires. ``cancel()`` stops it.
    """

    __slots__ = ("timer", "deadline_ms", "task", "remaining_rounds", "state", "slot", "key", "fired_at_ms")

    def __init__(self, timer, deadline_ms, task, key):
        self.timer = timer
        self.deadline_ms = deadline_ms
        self.task = task
        self.remaining_rounds = 0
        self.state = _ST_INIT
        self.slot = None
        self.key = key
        self.fired_at_ms = None

    @property
    def is_cancelled(self) -> bool:
        return self.state == _ST_CANCELLED

    @property
    def is_expired(self) -> bool:
        return self.state == _ST_EXPIRED

    def cancel(self) -> bool:
        """Stop this timer; False if it already expired or was cancelled."""
        return self.timer.cancel(self)

    def __repr__(self) -> str:
        state = ("pending", "cancelled", "expired")[self.state]
        return f"WheelTimeout(deadline_ms={self.deadline_ms:g}, {state}, rounds={self.remaining_rounds})"


class HashedWheelTimer:
    """A hashed timing wheel: ``slots`` buckets, one visited every ``tick_ms``.

    As in Netty's ``HashedWheelTimer`` (which dubbo copies): a new timeout waits in a pending list
    until the next tick, which files it in bucket ``c mod slots``, where tick ``c`` is the first
    tick strictly after its deadline, with ``remaining_rounds = (c − current tick) // slots`` full
    turns to wait. Each tick visits one bucket: timeouts with no rounds left expire, the others
    lose one round. So a timeout never fires before its deadline and at most one tick after it,
    and adding or cancelling one costs O(1) whatever the number of timers.

    Time is driven by the caller: tick ``k`` (0-based) happens at ``start_ms + (k + 1) × tick_ms``;
    :meth:`advance` processes the next tick and returns what expired, in order.
    """

    def __init__(self, tick_ms: float = DUBBO_TICK_MS, slots: int = DUBBO_SLOTS, start_ms: float = 0.0):
        self.tick_ms = check_number("tick_ms", tick_ms, low=0.0, low_open=True, high=3_600_000.0)
        self.slots = check_int("slots", slots, low=1, high=1 << 20)
        self.start_ms = check_number("start_ms", start_ms, low=0.0)
        self.tick = 0  # ticks processed so far
        self._buckets = [{} for _ in range(self.slots)]
        self._pending: list[WheelTimeout] = []
        self._seq = 0
        self.live = 0  # timeouts neither expired nor cancelled

    # -- time
    def tick_time_ms(self, k: int) -> float:
        """When tick ``k`` (0-based) happens."""
        return self.start_ms + (k + 1) * self.tick_ms

    @property
    def next_tick_ms(self) -> float:
        """When the next tick (the one :meth:`advance` processes) happens."""
        return self.tick_time_ms(self.tick)

    @property
    def last_tick_ms(self) -> float:
        """When the last processed tick happened (``start_ms`` before the first)."""
        return self.start_ms + self.tick * self.tick_ms

    def _fire_tick(self, deadline: float) -> int:
        """The first tick strictly after ``deadline`` (guarded against float rounding)."""
        c = max(0, math.floor((deadline - self.start_ms) / self.tick_ms))
        while self.tick_time_ms(c) <= deadline:
            c += 1
        while c > 0 and self.tick_time_ms(c - 1) > deadline:
            c -= 1
        return c

    # -- add / cancel / expire
    def new_timeout(self, task, delay_ms: float, now_ms: float) -> WheelTimeout:
        """Schedule ``task`` to expire ``delay_ms`` after ``now_ms``; returns its handle.

        ``now_ms`` must lie between the last processed tick and the next one (the caller drives
        time and must :meth:`advance` the wheel when a tick is due).
        """
        delay = check_number("delay_ms", delay_ms, low=0.0)
        now = check_number("now_ms", now_ms, low=self.last_tick_ms, high=self.next_tick_ms)
        self._seq += 1
        t = WheelTimeout(self, now + delay, task, self._seq)
        self._pending.append(t)
        self.live += 1
        return t

    def cancel(self, timeout: WheelTimeout) -> bool:
        """Cancel a pending timeout (it will never fire); False if it expired or was cancelled."""
        if timeout.timer is not self:
            raise ValueError("timeout must belong to this timer")
        if timeout.state != _ST_INIT:
            return False
        timeout.state = _ST_CANCELLED
        self.live -= 1
        if timeout.slot is not None:
            del self._buckets[timeout.slot][timeout.key]
            timeout.slot = None
        return True

    def advance(self) -> list[WheelTimeout]:
        """Process the next tick: file pending timeouts into buckets, then expire the due ones
        in the current bucket. Returns the expired timeouts (their ``fired_at_ms`` set)."""
        k = self.tick
        now = self.tick_time_ms(k)
        slots = self.slots
        if self._pending:
            for t in self._pending:
                if t.state != _ST_INIT:
                    continue
                c = self._fire_tick(t.deadline_ms)
                t.remaining_rounds = (c - k) // slots
                t.slot = max(c, k) % slots
                self._buckets[t.slot][t.key] = t
            self._pending = []
        bucket = self._buckets[k % slots]
        expired = []
        if bucket:
            for key in list(bucket):
                t = bucket[key]
                if t.remaining_rounds <= 0:
                    del bucket[key]
                    t.state = _ST_EXPIRED
                    t.slot = None
                    t.fired_at_ms = now
                    expired.append(t)
                else:
                    t.remaining_rounds -= 1
        self.live -= len(expired)
        self.tick = k + 1
        return expired

    def advance_to(self, now_ms: float) -> list[WheelTimeout]:
        """Process every tick due at or before ``now_ms``; returns all expired timeouts in order."""
        now = check_number("now_ms", now_ms, low=0.0)
        out = []
        while self.next_tick_ms <= now:
            out.extend(self.advance())
        return out

    # -- looking inside
    def occupancy(self) -> tuple[np.ndarray, np.ndarray]:
        """Per slot: timeouts due this turn (no rounds left) and timeouts waiting more turns.
        Pending (not yet filed) timeouts are not counted."""
        now_ = np.zeros(self.slots, dtype=int)
        later = np.zeros(self.slots, dtype=int)
        for i, b in enumerate(self._buckets):
            for t in b.values():
                if t.remaining_rounds <= 0:
                    now_[i] += 1
                else:
                    later[i] += 1
        return now_, later


# =========================================================================== closed forms
def wheel_span_ms(tick_ms: float = DUBBO_TICK_MS, slots: int = DUBBO_SLOTS) -> float:
    """One turn of the wheel: ``tick_ms × slots`` (15 360 ms for dubbo's 30 ms × 512)."""
    return check_number("tick_ms", tick_ms, low=0.0, low_open=True) * check_int("slots", slots, low=1)


def wheel_rounds(delay_ms: float, tick_ms: float = DUBBO_TICK_MS, slots: int = DUBBO_SLOTS) -> int:
    """Full turns a timeout of ``delay_ms`` waits when filed right at a tick (wheel started at 0,
    added at time 0): ``floor(delay / tick) // slots``."""
    d = check_number("delay_ms", delay_ms, low=0.0)
    tk = check_number("tick_ms", tick_ms, low=0.0, low_open=True)
    s = check_int("slots", slots, low=1)
    return int(math.floor(d / tk)) // s


def healthy_in_flight(
    rate_per_s: float,
    hung_share: float,
    timeout_ms: float,
    service_ms: float,
    tick_ms: float = DUBBO_TICK_MS,
) -> float:
    """Little's law for the calls in flight when timeouts work: ``L = λ × W`` with
    ``W = (1 − s) × service + s × (timeout + tick / 2)``.

    A call to the hung provider (share ``s``) lives until its timeout fires, on average half a
    tick after its deadline (the wheel fires at the first tick after the deadline). Calls to the
    healthy providers live one service time (exponential, mean ``service_ms`` << timeout).
    """
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    s = check_number("hung_share", hung_share, low=0.0, high=1.0)
    t = check_number("timeout_ms", timeout_ms, low=0.0, low_open=True)
    sv = check_number("service_ms", service_ms, low=0.0, low_open=True)
    tk = check_number("tick_ms", tick_ms, low=0.0, low_open=True)
    ok_ms = sv * (1.0 - math.exp(-(t + tk / 2.0) / sv))  # E[min(S, timeout)] ≈ service
    w = (1.0 - s) * ok_ms + s * (t + tk / 2.0)
    return capacity.littles_law(rate_per_s=lam, time_in_system_ms=w)


def healthy_bound(rate_per_s: float, timeout_ms: float, tick_ms: float = DUBBO_TICK_MS) -> float:
    """The most calls in flight, on average, when timeouts work: ``λ × (timeout + tick)``
    (no call outlives its deadline by more than one tick)."""
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    t = check_number("timeout_ms", timeout_ms, low=0.0, low_open=True)
    tk = check_number("tick_ms", tick_ms, low=0.0, low_open=True)
    return capacity.littles_law(rate_per_s=lam, time_in_system_ms=t + tk)


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


def p_shutdown_at_kill(rate_per_s: float, service_ms: float) -> float:
    """Chance that a provider killed while answering normally holds at least one pending call
    (so ``closeChannel`` shuts the executor down): ``1 − exp(−λ_p × S)``.

    The calls pending on a provider form an M/G/∞ queue (Poisson arrivals at ``λ_p``, each
    pending one service time, mean ``S``): their number is Poisson with mean ``λ_p S``.
    """
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    sv = check_number("service_ms", service_ms, low=0.0)
    return 1.0 - math.exp(-lam * sv / 1000.0)


def leaked_calls(rate_per_s: float, hung_share: float, t_ms: float, leak_start_ms: float) -> float:
    """Futures stuck at time ``t_ms`` (no GC feedback): ``λ_hung × (t − t0)`` after ``t0``."""
    t = check_number("t_ms", t_ms, low=0.0)
    t0 = check_number("leak_start_ms", leak_start_ms, low=0.0)
    return leak_rate_per_s(rate_per_s, hung_share) * max(0.0, t - t0) / 1000.0


def gc_fraction(heap_used_fraction: float, gc_cost: float) -> float:
    """Share of time in full GC when live data fills ``u`` of the heap: ``min(1, k u / (1 − u))``.

    The simple model: a full GC runs each time the free heap ``(1 − u) H`` fills with promoted
    objects (so their frequency grows as ``1 / (1 − u)``) and each one marks the live data
    (so its pause grows as ``u``). ``k`` (``gc_cost``) sets the level at normal occupancy.
    """
    u = check_number("heap_used_fraction", heap_used_fraction, low=0.0)
    k = check_number("gc_cost", gc_cost, low=0.0)
    if u >= 1.0:
        return 1.0
    return min(1.0, k * u / (1.0 - u))


def heap_fraction_at_gc(gc_share: float, gc_cost: float) -> float:
    """The heap occupancy at which the GC share reaches ``gc_share``: ``u = g / (g + k)``."""
    g = check_number("gc_share", gc_share, low=0.0, high=1.0)
    k = check_number("gc_cost", gc_cost, low=0.0)
    if g == 0.0:
        return 0.0
    return g / (g + k)


# =========================================================================== scenario
def _opt_number(name, value, **kw):
    return None if value is None else check_number(name, value, **kw)


@dataclass(frozen=True)
class Scenario:
    """One machine of service B calling service C asynchronously, and what happens to C.

    Provider 0 of C exits at ``exit_at_ms`` (``abrupt``: ``kill -9``; ``graceful``: unregister,
    answer what is in flight, close); provider 1 hangs at ``hang_at_ms`` (process alive, never
    answers). Times in ms, rates per second, memory in MB (heap) and KB (per call).
    """

    rate_per_s: float = 100.0  # upstream requests/s reaching this B machine; one call to C each
    node_capacity_per_s: float = 200.0  # requests/s this B machine serves at most without GC
    providers: int = 5  # machines of service C
    hung_share: float | None = None  # share of calls routed to provider 1 (None: random, 1/live)
    call_mode: str = "async"  # "async" | "sync"
    timeout_ms: float = 1000.0  # the call's timeout
    service_ms: float = 20.0  # mean answer time of a healthy provider (exponential)
    exit_at_ms: float | None = 60_000.0  # provider 0 leaves (None: never)
    exit_kind: str = "abrupt"  # "abrupt" (kill -9) | "graceful"
    exit_stall_ms: float = 0.0  # provider 0 stops answering this long before it exits
    hang_at_ms: float | None = 120_000.0  # provider 1 hangs (None: never)
    fix: str = "none"  # "none" (2.7.12) | "no_shutdown" | "inline_timeout"
    max_outstanding: int | None = None  # cap on pending calls per provider (None: no cap)
    tick_ms: float = DUBBO_TICK_MS  # the timing wheel's tick
    slots: int = DUBBO_SLOTS  # the timing wheel's slots
    heap_mb: float = 1024.0  # the JVM's maximum heap
    base_live_mb: float = 256.0  # live data without any leak
    retained_kb: float = 64.0  # memory one pending call keeps alive (future, request, arguments)
    gc_cost: float = 0.015  # k in gc_fraction: GC share k u / (1 − u)
    gc_sample_ms: float = 1000.0  # how often the GC model re-reads the heap
    b_nodes: int = 10  # machines of service B (cluster view)
    b_leaking_nodes: int = 3  # of those, machines whose timeouts are lost (cluster view)
    horizon_ms: float = 900_000.0  # simulated time
    window_ms: float = 10_000.0  # width of Run.windows

    def __post_init__(self):
        check_number("rate_per_s", self.rate_per_s, low=0.0, low_open=True, high=_MAX_RATE)
        check_number("node_capacity_per_s", self.node_capacity_per_s, low=0.0, low_open=True, high=1e7)
        object.__setattr__(self, "providers", check_int("providers", self.providers, low=2, high=1000))
        _opt_number("hung_share", self.hung_share, low=0.0, high=1.0)
        check_choice("call_mode", self.call_mode, MODES)
        check_number("timeout_ms", self.timeout_ms, low=0.0, low_open=True, high=3_600_000.0)
        check_number("service_ms", self.service_ms, low=0.0, low_open=True, high=3_600_000.0)
        _opt_number("exit_at_ms", self.exit_at_ms, low=0.0)
        check_choice("exit_kind", self.exit_kind, EXIT_KINDS)
        check_number("exit_stall_ms", self.exit_stall_ms, low=0.0, high=3_600_000.0)
        _opt_number("hang_at_ms", self.hang_at_ms, low=0.0)
        check_choice("fix", self.fix, FIXES)
        if self.max_outstanding is not None:
            object.__setattr__(self, "max_outstanding", check_int("max_outstanding", self.max_outstanding, low=1))
        check_number("tick_ms", self.tick_ms, low=0.0, low_open=True, high=60_000.0)
        object.__setattr__(self, "slots", check_int("slots", self.slots, low=1, high=1 << 20))
        check_number("heap_mb", self.heap_mb, low=0.0, low_open=True, high=1e7)
        check_number("base_live_mb", self.base_live_mb, low=0.0, high=self.heap_mb, high_open=True)
        check_number("retained_kb", self.retained_kb, low=0.0, high=1e7)
        check_number("gc_cost", self.gc_cost, low=0.0, high=1e3)
        check_number("horizon_ms", self.horizon_ms, low=0.0, low_open=True, high=_MAX_HORIZON_MS)
        check_number("gc_sample_ms", self.gc_sample_ms, low=1.0, high=self.horizon_ms)
        check_number("window_ms", self.window_ms, low=0.0, low_open=True, high=self.horizon_ms)
        object.__setattr__(self, "b_nodes", check_int("b_nodes", self.b_nodes, low=1, high=100_000))
        object.__setattr__(self, "b_leaking_nodes", check_int("b_leaking_nodes", self.b_leaking_nodes, low=0, high=self.b_nodes))

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


# =========================================================================== the SimPy model
class RejectedExecution(RuntimeError):
    """``java.util.concurrent.RejectedExecutionException``: a task handed to a shut-down executor."""


class _Call:
    """One call to C: its ``DefaultFuture`` (pending until answered, timed out or failed) and the
    executor the future hands its timeout notification to."""

    __slots__ = ("id", "provider", "t0", "timeout", "done", "lost", "executor")

    def __init__(self, cid, provider, t0, executor):
        self.id = cid
        self.provider = provider
        self.t0 = t0
        self.timeout = None
        self.done = False
        self.lost = False
        self.executor = executor


class _Provider:
    __slots__ = ("index", "state", "calls")

    def __init__(self, index):
        self.index = index
        self.state = "up"  # "up" | "hung" | "gone"
        self.calls: dict[int, _Call] = {}


class _Executor:
    """The consumer's shared ``ExecutorService``: a task queue drained by :func:`executor_worker`."""

    def __init__(self, env):
        self.queue = simpy.Store(env)
        self.shutdown_at_ms = None

    @property
    def is_shutdown(self) -> bool:
        return self.shutdown_at_ms is not None

    def execute(self, call):
        if self.shutdown_at_ms is not None:
            raise RejectedExecution("Task DefaultFuture$TimeoutCheckTask rejected from ThreadPoolExecutor[Terminated]")
        self.queue.put(call)

    def shutdown(self, now):
        if self.shutdown_at_ms is None:
            self.shutdown_at_ms = now


class _ThreadlessExecutor:
    """dubbo's ``ThreadlessExecutor`` for one synchronous call: while the calling thread waits,
    ``execute`` queues the task for that thread, which runs it. ``shutdownNow`` only wakes the
    waiting thread; the shared executor is not touched."""

    __slots__ = ("m", "shutdown_at_ms")

    def __init__(self, m):
        self.m = m
        self.shutdown_at_ms = None

    @property
    def is_shutdown(self) -> bool:
        return self.shutdown_at_ms is not None

    def execute(self, call):
        self.m.notify_timeout(call)  # the waiting caller drains its own queue

    def shutdown(self, now):
        if self.shutdown_at_ms is None:
            self.shutdown_at_ms = now


class _Blocks:
    """Random numbers drawn in blocks (one numpy call per 4096 draws)."""

    def __init__(self, rng, kind, scale=1.0, size=4096):
        self.rng, self.kind, self.scale, self.size = rng, kind, scale, size
        self.buf, self.i = [], 0

    def __call__(self):
        if self.i >= len(self.buf):
            if self.kind == "exp":
                self.buf = self.rng.exponential(self.scale, self.size).tolist()
            else:
                self.buf = self.rng.random(self.size).tolist()
            self.i = 0
        x = self.buf[self.i]
        self.i += 1
        return x


class Machine:
    """The state of one B machine (the consumer) and of the C providers it calls."""

    def __init__(self, env, sc: Scenario, seed: int):
        self.env, self.sc = env, sc
        streams = make_rng(seed).spawn(4)
        self.gap = _Blocks(streams[0], "exp", 1000.0 / sc.rate_per_s)
        self.u_serve = _Blocks(streams[1], "uniform")
        self.u_route = _Blocks(streams[2], "uniform")
        self.service = _Blocks(streams[3], "exp", sc.service_ms)
        self.providers = [_Provider(i) for i in range(sc.providers)]
        self.live = list(self.providers)
        self.futures: dict[int, _Call] = {}  # DefaultFuture.FUTURES
        self.wheel: HashedWheelTimer | None = None  # started by the first call, as in dubbo
        self.executor = _Executor(env)
        self.ledger = Ledger(extra={"refused_by_cap": 0, "failed_on_disconnect": 0, "no_provider": 0})
        self.rec = Recorder(
            sc.horizon_ms,
            sc.window_ms,
            counters=("offered", "calls", "served", "timeouts", "rejected", "lost", "shed"),
            levels=("in_flight", "heap_mb", "gc", "cpu"),
        )
        self.t_calls = self.rec.times("calls")
        self.t_served = self.rec.times("served")
        self.serving = 1.0  # share of upstream requests the machine can serve (GC pauses)
        self.cid = 0
        self.lost_timeouts = 0
        self.stuck = 0  # pending futures whose timeout task was rejected
        self.first_lost_ms = None
        self.dead_at_ms = None
        self.jvm_oom_at_ms = None
        self.dump = None
        self.area = 0.0  # ∫ in-flight dt (for the time-average)
        self.t_last = 0.0
        self.sojourn_sum = 0.0
        self.sojourn_max = 0.0
        self.samples = {k: [] for k in ("t", "in_flight", "stuck", "heap_mb", "gc", "cpu", "serving")}

    # -- bookkeeping
    def _touch(self, now):
        self.area += len(self.futures) * (now - self.t_last)
        self.t_last = now

    def _finish(self, call, now):
        """Complete a future: it leaves FUTURES and its provider's channel."""
        self._touch(now)
        call.done = True
        if call.lost:
            self.stuck -= 1
        del self.futures[call.id]
        del call.provider.calls[call.id]
        d = now - call.t0
        self.sojourn_sum += d
        if d > self.sojourn_max:
            self.sojourn_max = d

    # -- the consumer's call path (DefaultFuture.newFuture + timeoutCheck)
    def send_request(self, now):
        sc = self.sc
        self.ledger.arrived += 1
        self.t_calls.append(now)
        live = self.live
        if not live:
            self.ledger.rejected += 1
            self.ledger.extra["no_provider"] += 1
            self.rec.count("rejected", now)
            return
        p = self._route(live)
        if sc.max_outstanding is not None and len(p.calls) >= sc.max_outstanding:
            self.ledger.rejected += 1
            self.ledger.extra["refused_by_cap"] += 1
            self.rec.count("rejected", now)
            return
        self._touch(now)
        self.cid += 1
        call = _Call(self.cid, p, now, self.callback_executor())
        self.futures[call.id] = call
        p.calls[call.id] = call
        if self.wheel is None:
            self.wheel = HashedWheelTimer(sc.tick_ms, sc.slots, start_ms=now)
            self.env.process(timer_worker(self.env, self))
        call.timeout = self.wheel.new_timeout(call, sc.timeout_ms, now)
        if p.state == "up":  # a hung provider accepts the call and never answers
            ev = self.env.timeout(self.service())
            ev.callbacks.append(lambda _ev, c=call: self.on_response(c))

    def callback_executor(self):
        """``AbstractInvoker.getCallbackExecutor``: a synchronous call gets its own
        ``ThreadlessExecutor``; an asynchronous one gets the consumer's shared executor."""
        if self.sc.call_mode == "sync":
            return _ThreadlessExecutor(self)
        return self.executor

    def _route(self, live):
        u = self.u_route()
        s = self.sc.hung_share
        if s is None or len(live) == 1 or self.providers[1] not in live:
            return live[int(u * len(live))]
        if u < s:
            return self.providers[1]
        others = [p for p in live if p.index != 1]
        return others[min(len(others) - 1, int((u - s) / (1.0 - s) * len(others)))]

    def on_response(self, call):
        """DefaultFuture.received: the answer completes the future and cancels its timeout."""
        if call.done or call.provider.state == "hung":
            return  # failed already, or the provider hung before answering
        now = self.env.now
        call.timeout.cancel()
        self._finish(call, now)
        self.ledger.served += 1
        self.t_served.append(now)

    # -- the timeout path (HashedWheelTimeout.expire -> TimeoutCheckTask.run)
    def expire(self, timeout):
        """``HashedWheelTimeout.expire()``: run the task; an exception is only logged."""
        try:
            self.timeout_check_task(timeout.task)
        except RejectedExecution:
            now = self.env.now
            self.lost_timeouts += 1  # logger.warn("An exception was thrown by TimerTask.", t)
            timeout.task.lost = True  # nothing will ever time this future out
            self.stuck += 1
            if self.first_lost_ms is None:
                self.first_lost_ms = now
            self.rec.count("lost", now)

    def timeout_check_task(self, call):
        """``DefaultFuture.TimeoutCheckTask.run``: if the future is not done, hand the timeout
        notification to the future's executor (``future.getExecutor().execute(...)``)."""
        if call.done:
            return
        if call.executor.is_shutdown and self.sc.fix == "inline_timeout":
            self.notify_timeout(call)  # the defence: run it on the timer thread
        else:
            call.executor.execute(call)  # raises RejectedExecution once shut down

    def notify_timeout(self, call):
        if call.done:
            return
        now = self.env.now
        self._finish(call, now)
        self.ledger.timed_out += 1
        self.rec.count("timeouts", now)

    # -- a provider leaves
    def unregister(self, p: _Provider):
        """The provider leaves the routing list: no new call goes to it."""
        if p in self.live:
            self.live.remove(p)

    def close_channel(self, p: _Provider):
        """``DefaultFuture.closeChannel`` (2.7.12): for each future still pending on the channel,
        shut its executor down (the bug; removed in 2.7.13), then fail it (``CHANNEL_INACTIVE``)."""
        now = self.env.now
        p.state = "gone"
        for call in list(p.calls.values()):
            if self.sc.fix != "no_shutdown":
                call.executor.shutdown(now)  # futureExecutor.shutdownNow()
            call.timeout.cancel()  # DefaultFuture.received -> t.cancel()
            self._finish(call, now)
            self.ledger.rejected += 1
            self.ledger.extra["failed_on_disconnect"] += 1
            self.rec.count("rejected", now)

    # -- heap and GC
    def heap_mb(self) -> float:
        return self.sc.base_live_mb + len(self.futures) * self.sc.retained_kb / 1024.0

    def sample(self, now):
        sc = self.sc
        heap = self.heap_mb()
        g = gc_fraction(heap / sc.heap_mb, sc.gc_cost)
        self.serving = min(1.0, (1.0 - g) * sc.node_capacity_per_s / sc.rate_per_s)
        cpu = min(1.0, g + self.serving * sc.rate_per_s / sc.node_capacity_per_s)
        s = self.samples
        for k, v in (("t", now / 1000.0), ("in_flight", len(self.futures)), ("stuck", self.stuck),
                     ("heap_mb", heap), ("gc", g), ("cpu", cpu), ("serving", self.serving)):
            s[k].append(v)
        for k, v in (("in_flight", len(self.futures)), ("heap_mb", heap), ("gc", g), ("cpu", cpu)):
            self.rec.level(k, now, v)
        if g >= DEAD_GC_SHARE and self.dead_at_ms is None:
            self.dead_at_ms = now  # ours: the model's "dead" threshold
            self.dump = self.heap_dump(now)
        free = 1.0 - heap / sc.heap_mb
        if g > JVM_GC_TIME_LIMIT and free < JVM_GC_HEAP_FREE_LIMIT and self.jvm_oom_at_ms is None:
            self.jvm_oom_at_ms = now  # the JVM's rule: > 98% of the time in GC and < 2% recovered

    def heap_dump(self, now) -> dict:
        """What ``-XX:+HeapDumpOnOutOfMemoryError`` would keep: the pending futures, by provider
        and by age."""
        by_provider = {p.index: len(p.calls) for p in self.providers}
        ages = np.array([now - c.t0 for c in self.futures.values()], dtype=float)
        return {
            "t_s": now / 1000.0,
            "futures": len(self.futures),
            "heap_mb": self.heap_mb(),
            "retained_mb": len(self.futures) * self.sc.retained_kb / 1024.0,
            "by_provider": by_provider,
            "older_than_timeout": int(np.sum(ages > self.sc.timeout_ms + self.sc.tick_ms)),
            "oldest_s": float(ages.max() / 1000.0) if ages.size else 0.0,
        }


def consumer(env, m: Machine):
    """Machine B: upstream requests arrive (Poisson, ``rate_per_s``); the ones it can serve
    (``serving``: the share GC pauses leave it) each make one call to C."""
    gap, u = m.gap, m.u_serve
    offered = m.rec.times("offered")
    shed = m.rec.times("shed")
    while True:
        yield env.timeout(gap())
        now = env.now
        offered.append(now)
        if m.serving < 1.0 and u() >= m.serving:
            shed.append(now)
            continue
        m.send_request(now)


def provider(env, m: Machine, p: _Provider):
    """Machine ``p`` of C. Answers are scheduled when a call arrives (see ``send_request``); this
    process plays the provider's lifecycle.

    Provider 1 hangs at ``hang_at_ms`` (process alive, answers nothing from then on, not even
    calls it holds). Provider 0 stops answering ``exit_stall_ms`` before ``exit_at_ms``, then exits:

    - ``abrupt`` (``kill -9``): the connection drops; the consumer's ``disconnected`` handler
      calls ``close_channel`` at once, with whatever is pending on it.
    - ``graceful``: it unregisters; the consumer stops routing to it, then
      ``HeaderExchangeChannel.close(timeout)`` polls every 10 ms while futures are pending on the
      channel (they are answered or time out), for at most ``GRACEFUL_WAIT_MS``, then closes it.
    """
    sc = m.sc
    if p.index == 0 and sc.exit_at_ms is not None:
        stall_at = max(0.0, sc.exit_at_ms - sc.exit_stall_ms)
        if sc.exit_stall_ms > 0.0:
            yield env.timeout(stall_at)
            p.state = "hung"
        yield env.timeout(sc.exit_at_ms - env.now)
        m.unregister(p)
        if sc.exit_kind == "graceful":
            start = env.now
            while p.calls and env.now - start < GRACEFUL_WAIT_MS:
                yield env.timeout(10.0)
        m.close_channel(p)
    elif p.index == 1 and sc.hang_at_ms is not None:
        yield env.timeout(sc.hang_at_ms)
        p.state = "hung"


def timer_worker(env, m: Machine):
    """The wheel's worker thread (``dubbo-future-timeout-thread-1``): sleeps to the next tick,
    advances the wheel and expires what is due."""
    wheel = m.wheel
    while True:
        yield env.timeout(wheel.next_tick_ms - env.now)
        for t in wheel.advance():
            m.expire(t)


def executor_worker(env, m: Machine):
    """The shared executor's thread: runs each timeout notification handed to it."""
    q = m.executor.queue
    while True:
        call = yield q.get()
        m.notify_timeout(call)


def gc(env, m: Machine):
    """The JVM: every ``gc_sample_ms`` the live data (base + retained × pending futures) sets the
    share of time in full GC; the rest of the time serves requests. Records the monitors."""
    while True:
        m.sample(env.now)
        yield env.timeout(m.sc.gc_sample_ms)


@dataclass
class Run:
    """One simulated machine. ``windows``: per-second counters over ``window_ms`` windows
    (``offered``, ``calls``, ``served``, ``timeouts``, ``rejected``, ``lost``, ``shed``) and
    time-weighted levels (``in_flight``, ``heap_mb``, ``gc``, ``cpu``); ``samples``: the GC
    process's readings every ``gc_sample_ms`` (``t`` in s, ``stuck`` = pending futures whose
    timeout task was rejected: nothing will ever time them out); ``dump``: what a heap dump would hold when the machine is dead by the model's rule (``DEAD_GC_SHARE``; None if never)."""

    scenario: Scenario
    seed: int
    windows: dict
    samples: dict
    ledger: Ledger
    status: RunStatus
    summary: dict = field(default_factory=dict)
    dump: dict | None = None


def simulate(scenario: Scenario = SEED_INCIDENT, seed: int = 0, *, max_events: int = 3_000_000) -> Run:
    """Run the SimPy model of one B machine to ``scenario.horizon_ms`` (or ``max_events``)."""
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a lost_timeouts.Scenario, got {type(scenario).__name__}")
    seed = check_seed(seed)
    cap = check_int("max_events", max_events, low=1)
    sc = scenario
    env = simpy.Environment()
    m = Machine(env, sc, seed)
    env.process(gc(env, m))
    for p in m.providers:
        env.process(provider(env, m, p))
    env.process(executor_worker(env, m))
    env.process(consumer(env, m))
    status = run_bounded(env, sc.horizon_ms, cap)
    t_end = max(status.t_end_ms, 1e-9)
    if status.truncated is False and status.t_end_ms < sc.horizon_ms:
        t_end = sc.horizon_ms
    m._touch(t_end)
    m.rec.close(t_end)
    m.ledger.in_system = len(m.futures)
    m.ledger.check()
    samples = {k: np.asarray(v, dtype=float) for k, v in m.samples.items()}
    windows = m.rec.arrays()
    calls = m.ledger.arrived
    open_sojourn = sum(t_end - c.t0 for c in m.futures.values())
    stuck_end = m.stuck
    hung = m.providers[1]
    gcs = samples["gc"]
    summary = {
        "t_end_s": t_end / 1000.0,
        "truncated": status.truncated,
        "calls": calls,
        "call_rate_per_s": calls / (t_end / 1000.0),
        "mean_in_flight": m.area / t_end,
        "little_in_flight": (calls / (t_end / 1000.0)) * ((m.sojourn_sum + open_sojourn) / calls / 1000.0)
        if calls
        else 0.0,
        "max_sojourn_ms": m.sojourn_max,
        "in_flight_end": len(m.futures),
        "stuck_end": stuck_end,
        "stuck_on_hung": sum(1 for c in hung.calls.values() if c.lost),
        "leaks": stuck_end > 0,
        "lost_timeouts": m.lost_timeouts,
        "first_lost_s": None if m.first_lost_ms is None else m.first_lost_ms / 1000.0,
        "executor_shutdown_s": None if m.executor.shutdown_at_ms is None else m.executor.shutdown_at_ms / 1000.0,
        "heap_end_mb": m.heap_mb(),
        "heap_end_pct": 100.0 * m.heap_mb() / sc.heap_mb,
        "gc_max": float(gcs.max()) if gcs.size else 0.0,
        "dead_s": None if m.dead_at_ms is None else m.dead_at_ms / 1000.0,
        "jvm_oom_s": None if m.jvm_oom_at_ms is None else m.jvm_oom_at_ms / 1000.0,
        "served": m.ledger.served,
        "timed_out": m.ledger.timed_out,
        "rejected": m.ledger.rejected,
        **{k: v for k, v in m.ledger.extra.items()},
    }
    return Run(sc, seed, windows, samples, m.ledger, status, summary, m.dump)


# =========================================================================== fluid model
def fluid(scenario: Scenario = SEED_INCIDENT, dt_ms: float | None = None) -> dict:
    """The closed forms integrated over time with the GC feedback (no randomness, milliseconds
    of CPU): stuck futures grow at ``λ × serving × s`` once the leak starts; the in-flight count
    is that plus Little's ``λ W``; heap, GC share, serving share and CPU follow.

    Steps of ``dt_ms`` (default ``gc_sample_ms``, as the simulation re-reads the heap). Returns
    arrays ``t`` (s), ``in_flight``, ``stuck``, ``heap_mb``, ``gc``, ``cpu``, ``serving`` and
    the times (s) ``gc50_s`` (GC share first ≥ 50%) and ``dead_s`` (≥ ``DEAD_GC_SHARE``, ours),
    None if never.
    """
    sc = scenario
    if not isinstance(sc, Scenario):
        raise ValueError(f"scenario must be a lost_timeouts.Scenario, got {type(sc).__name__}")
    dt = sc.gc_sample_ms if dt_ms is None else check_number("dt_ms", dt_ms, low=1.0, high=sc.horizon_ms)
    n = int(math.floor(sc.horizon_ms / dt + 1e-9))
    t0 = sc.leak_start_ms
    lam = sc.rate_per_s
    mu = sc.node_capacity_per_s
    cap = math.inf if sc.max_outstanding is None else float(sc.max_outstanding)
    hung_w = sc.timeout_ms + sc.tick_ms / 2.0
    ok_w = sc.service_ms
    out = {k: np.zeros(n) for k in ("t", "in_flight", "stuck", "heap_mb", "gc", "cpu", "serving")}
    stuck = 0.0
    serving = 1.0
    for i in range(n):
        t = i * dt
        s = sc.share_of_hung(t)
        hung = sc.hang_at_ms is not None and t >= sc.hang_at_ms
        leaking = t0 is not None and t >= t0
        served = lam * serving
        if hung and not leaking:
            little = served * ((1.0 - s) * ok_w + min(s * hung_w, cap * 1000.0 / max(served, 1e-12))) / 1000.0
        elif hung:
            little = served * (1.0 - s) * ok_w / 1000.0
        else:
            little = served * ok_w / 1000.0
        in_flight = stuck + little
        heap = sc.base_live_mb + in_flight * sc.retained_kb / 1024.0
        g = gc_fraction(heap / sc.heap_mb, sc.gc_cost)
        serving = min(1.0, (1.0 - g) * mu / lam)
        for k, v in (("t", t / 1000.0), ("in_flight", in_flight), ("stuck", stuck), ("heap_mb", heap),
                     ("gc", g), ("cpu", min(1.0, g + serving * lam / mu)), ("serving", serving)):
            out[k][i] = v
        if t0 is not None:
            overlap = max(0.0, (t + dt) - max(t, t0))
            if sc.hang_at_ms is not None:
                overlap = min(overlap, max(0.0, (t + dt) - max(t, sc.hang_at_ms)))
            stuck = min(cap, stuck + lam * serving * s * overlap / 1000.0)

    def first(mask):
        idx = np.flatnonzero(mask)
        return float(out["t"][idx[0]]) if idx.size else None

    out["gc50_s"] = first(out["gc"] >= 0.5)
    out["dead_s"] = first(out["gc"] >= DEAD_GC_SHARE)
    return out


# =========================================================================== analyses
def conditions_table(
    base: Scenario = SEED_INCIDENT, seed: int = 0, horizon_ms: float = 240_000.0, fix: str = "none"
) -> list[dict]:
    """Simulate the 8 combinations of the seed's three conditions (asynchronous calls, an abrupt
    provider exit, a hung provider) and report, from each run: when the shared executor was shut
    down (None: never), lost timeout tasks (WARN lines), stuck futures at the end, and whether it
    leaks. Nothing here is predicted: the rows come out of ``close_channel`` and the executors."""
    check_choice("fix", fix, FIXES)
    h = check_number("horizon_ms", horizon_ms, low=1000.0, high=_MAX_HORIZON_MS)
    rows = []
    for is_async in (True, False):
        for abrupt in (True, False):
            for hung in (True, False):
                sc = replace(
                    base,
                    call_mode="async" if is_async else "sync",
                    exit_kind="abrupt" if abrupt else "graceful",
                    hang_at_ms=base.hang_at_ms if hung else None,
                    fix=fix,
                    horizon_ms=h,
                    window_ms=min(base.window_ms, h),
                    gc_sample_ms=min(base.gc_sample_ms, h),
                )
                run = simulate(sc, seed)
                s = run.summary
                rows.append(
                    {
                        "async": is_async,
                        "abrupt_exit": abrupt,
                        "hung_provider": hung,
                        "shutdown_s": s["executor_shutdown_s"],
                        "lost_timeouts": s["lost_timeouts"],
                        "stuck_end": s["stuck_end"],
                        "in_flight_end": s["in_flight_end"],
                        "failed_on_disconnect": s["failed_on_disconnect"],
                        "leaks": s["leaks"],
                    }
                )
    return rows


def t0_experiment(
    base: Scenario = SEED_INCIDENT, hang_before_ms: float = 30_000.0, seeds: int = 20, window_ms: float = 5000.0
) -> dict:
    """Test :func:`leak_start` against the simulation when the hang comes *before* the shutdown.

    Provider 1 hangs ``hang_before_ms`` before provider 0's abrupt exit; the run stops a little
    after the shutdown. Per seed we record the stuck calls (their timeout rejected) issued before
    the shutdown, and the issue times of the earliest stuck call and of the latest call that timed
    out. The closed form expects ``λ s (t_shutdown − t0) = λ s (T + tick / 2)`` stuck calls issued
    before the shutdown, and ``t0`` between those two issue times.

    Also per seed (``seed_list``): ``max_stuck_in_one_tick``, the most of those stuck calls whose
    timeouts fired at one and the same tick (a burst of calls routed to the hung provider);
    ``typical_seed`` (count nearest the median) and ``outlier_seed`` (farthest from the closed
    form) name the seeds :func:`plot_t0_timelines` draws.
    """
    n = check_int("seeds", seeds, low=1, high=1000)
    hb = check_number("hang_before_ms", hang_before_ms, low=0.0, high=base.exit_at_ms or 0.0)
    w = check_number("window_ms", window_ms, low=1.0, high=600_000.0)
    if base.exit_at_ms is None:
        raise ValueError("base.exit_at_ms must be set (the shutdown comes from provider 0's exit)")
    sc = replace(base, hang_at_ms=base.exit_at_ms - hb, exit_kind="abrupt", call_mode="async", fix="none",
                 horizon_ms=base.exit_at_ms + w, window_ms=min(base.window_ms, base.exit_at_ms + w),
                 gc_sample_ms=min(base.gc_sample_ms, base.exit_at_ms + w))
    counts, earliest, latest_ok, shutdowns, burst, used = [], [], [], [], [], []
    for seed in range(n):
        env = simpy.Environment()
        m = Machine(env, sc, seed)
        timed_out_t0 = []
        orig = m.notify_timeout

        def notify(call, _orig=orig, _acc=timed_out_t0):
            if not call.done and call.provider.index == 1:
                _acc.append(call.t0)
            _orig(call)

        m.notify_timeout = notify
        env.process(gc(env, m))
        for p in m.providers:
            env.process(provider(env, m, p))
        env.process(executor_worker(env, m))
        env.process(consumer(env, m))
        run_bounded(env, sc.horizon_ms, 3_000_000)
        sd = m.executor.shutdown_at_ms
        shutdowns.append(sd)
        if sd is None:
            continue
        lost = [c for c in m.futures.values() if c.lost and c.provider.index == 1]
        stuck = sorted(c.t0 for c in lost)
        counts.append(sum(1 for a in stuck if a < sd))
        fired = [c.timeout.fired_at_ms for c in lost if c.t0 < sd]
        burst.append(max(np.unique(np.round(fired, 6), return_counts=True)[1], default=0) if fired else 0)
        used.append(seed)
        earliest.append(stuck[0] if stuck else math.nan)
        latest_ok.append(max(timed_out_t0) if timed_out_t0 else math.nan)
    t0 = sc.leak_start_ms
    s_before = sc.share_of_hung(sc.exit_at_ms - 1.0)
    expected = sc.rate_per_s * s_before * (sc.exit_at_ms - t0) / 1000.0
    c = np.array(counts, dtype=float)
    typical = used[int(np.argmin(np.abs(c - np.median(c))))] if used else None
    outlier = used[int(np.argmax(np.abs(c - expected)))] if used else None
    return {
        "scenario": sc,
        "t0_ms": t0,
        "shutdown_ms": sc.exit_at_ms,
        "expected_before_shutdown": expected,
        "stuck_before_shutdown": c,
        "seed_list": np.array(used, dtype=int),
        "max_stuck_in_one_tick": np.array(burst, dtype=int),
        "typical_seed": typical,
        "outlier_seed": outlier,
        "earliest_stuck_ms": np.array(earliest, dtype=float),
        "latest_timed_out_ms": np.array(latest_ok, dtype=float),
        "shut_down_in": sum(1 for x in shutdowns if x is not None),
        "seeds": n,
    }


def shutdown_count(base: Scenario = SEED_INCIDENT, seeds: int = 40, after_ms: float = 1000.0) -> dict:
    """Over ``seeds`` runs that stop ``after_ms`` after provider 0's exit: in how many did the
    exit shut the shared executor down? Beside it, :func:`p_shutdown_at_kill` for a provider
    killed while answering normally (no stall)."""
    n = check_int("seeds", seeds, low=1, high=10_000)
    a = check_number("after_ms", after_ms, low=1.0, high=600_000.0)
    if base.exit_at_ms is None:
        raise ValueError("base.exit_at_ms must be set")
    h = base.exit_at_ms + a
    sc = replace(base, horizon_ms=h, window_ms=min(base.window_ms, h), gc_sample_ms=min(base.gc_sample_ms, h))
    hits = sum(1 for seed in range(n) if simulate(sc, seed).summary["executor_shutdown_s"] is not None)
    if sc.hung_share is None:
        lam0 = sc.rate_per_s / sc.providers  # random load balancing over all providers
    else:
        lam0 = sc.rate_per_s * (1.0 - sc.hung_share) / (sc.providers - 1)
    return {"shut_down": hits, "seeds": n, "p_closed_form": p_shutdown_at_kill(lam0, sc.service_ms),
            "rate_to_killed_per_s": lam0}


def compare_fixes(base: Scenario = SEED_INCIDENT, seed: int = 0, cap: int = 200, reuse=()) -> dict:
    """The seed's version and three remedies, each simulated: ``{label: Run}``.

    ``reuse``: runs already simulated; one whose scenario and seed match a variant is used as is.
    """
    c = check_int("cap", cap, low=1)
    seed = check_seed(seed)
    done = list(reuse)
    for r in done:
        if not isinstance(r, Run):
            raise ValueError(f"reuse must hold lost_timeouts.Run objects, got {type(r).__name__}")
    variants = {
        "2.7.12 (the seed)": replace(base, fix="none"),
        "fixed version (no shutdown)": replace(base, fix="no_shutdown"),
        "timeout inline if shut down": replace(base, fix="inline_timeout"),
        f"cap {c} pending calls per provider": replace(base, fix="none", max_outstanding=c),
    }
    out = {}
    for label, sc in variants.items():
        hit = next((r for r in done if r.scenario == sc and r.seed == seed), None)
        out[label] = hit if hit is not None else simulate(sc, seed)
    return out


def assumption_ranges(base: Scenario = SEED_INCIDENT, horizon_ms: float = 4 * 3_600_000.0) -> list[dict]:
    """For each number we assumed, the fluid model at the ends of a range, over ``horizon_ms``
    (4 h: a night): minutes from the hang until the machine is dead by the model's rule (None if
    not within the horizon), the closed-form minutes to fill the free heap (no GC feedback), and
    the calls in flight at the end with timeouts working. The lesson's result ("lost timeouts kill
    the machine, in a time set by free heap / leak; working ones keep it near Little's level")
    holds where ``minutes_after_hang`` is a number and ``fixed_in_flight`` stays small."""
    check_number("horizon_ms", horizon_ms, low=1000.0, high=_MAX_HORIZON_MS)
    ranges = [
        ("rate_per_s", 50.0, 400.0, {}),
        ("providers", 3, 20, {}),
        ("timeout_ms", 200.0, 5000.0, {}),
        ("service_ms", 5.0, 100.0, {}),
        ("heap_mb", 512.0, 2048.0, {}),
        ("base_live_mb", 100.0, 600.0, {}),
        ("retained_kb", 16.0, 256.0, {}),
        ("gc_cost", 0.005, 0.05, {}),
    ]
    rows = []
    for name, lo, hi, extra in ranges:
        for v in (lo, hi):
            kw = {name: v, **extra}
            if name == "rate_per_s":
                kw["node_capacity_per_s"] = max(base.node_capacity_per_s, 2.0 * v)
            sc = replace(base, horizon_ms=horizon_ms, **kw)
            broken = fluid(sc)
            fixed = fluid(replace(sc, fix="no_shutdown"))
            rows.append({
                "name": name,
                "value": v,
                "dead_s": broken["dead_s"],
                "minutes_after_hang": None if broken["dead_s"] is None or sc.hang_at_ms is None
                else (broken["dead_s"] - sc.hang_at_ms / 1000.0) / 60.0,
                "fill_min": (sc.heap_mb - sc.base_live_mb) / (sc.leak_per_s * sc.retained_kb / 1024.0) / 60.0
                if sc.leak_per_s > 0 else None,
                "fixed_in_flight": float(fixed["in_flight"][-1]),
            })
    return rows


def alert_time_s(run: Run, threshold: float | None = None) -> float | None:
    """When an alert on the in-flight count fires (first sample above ``threshold``; default:
    twice Little's healthy bound ``λ (timeout + tick)``). None if never."""
    sc = run.scenario
    thr = 2.0 * healthy_bound(sc.rate_per_s, sc.timeout_ms, sc.tick_ms) if threshold is None else (
        check_number("threshold", threshold, low=0.0)
    )
    idx = np.flatnonzero(run.samples["in_flight"] > thr)
    return float(run.samples["t"][idx[0]]) if idx.size else None


def cluster_view(serving, rate_per_s: float, capacity_per_s: float, b_nodes: int, b_leaking_nodes: int) -> dict:
    """What the other B machines see (the seed's graphs), closed form over a serving-share series.

    The ``b_leaking_nodes`` machines serve ``λ × serving`` each; the requests they cannot serve
    move to the ``b_nodes − b_leaking_nodes`` others (the upstream's load balancing and retries:
    an assumption). A healthy machine's latency is M/M/1: ``1000 / (μ − λ)`` ms (inf at μ ≤ λ).
    Returns arrays ``leaking_per_s``, ``healthy_per_s``, ``healthy_latency_ms``,
    ``leaking_latency_ms`` (the same at normal load, scaled by 1 / (1 − gc) there).
    """
    srv = np.clip(np.asarray(serving, dtype=float), 0.0, 1.0)
    lam = check_number("rate_per_s", rate_per_s, low=0.0, low_open=True)
    mu = check_number("capacity_per_s", capacity_per_s, low=0.0, low_open=True)
    n = check_int("b_nodes", b_nodes, low=1)
    k = check_int("b_leaking_nodes", b_leaking_nodes, low=0, high=n)
    leaking = lam * srv
    if n > k:
        healthy = (n * lam - k * leaking) / (n - k)
    else:
        healthy = np.full_like(srv, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        lat = np.where(healthy < mu, 1000.0 / (mu - healthy), np.inf)
    return {
        "leaking_per_s": leaking,
        "healthy_per_s": healthy,
        "healthy_latency_ms": lat,
        "normal_latency_ms": 1000.0 / (mu - lam) if lam < mu else math.inf,
    }


# =========================================================================== plots
def _event_lines(ax, sc: Scenario):
    if sc.exit_at_ms is not None:
        ax.axvline(sc.exit_at_ms / 1000.0, color=COLORS["capacity"], ls=":", lw=1.5,
                   label=f"provider 0 exits ({sc.exit_kind})")
    if sc.hang_at_ms is not None:
        ax.axvline(sc.hang_at_ms / 1000.0, color=COLORS["stuck"], ls=":", lw=1.5, label="provider 1 hangs")


def demo_wheel(
    rate_per_s: float = 100.0,
    timeout_ms: float = 1000.0,
    long_timeout_ms: float = 20_000.0,
    long_share: float = 0.1,
    at_ms: float = 2000.0,
    seed: int = 0,
    tick_ms: float = DUBBO_TICK_MS,
    slots: int = DUBBO_SLOTS,
) -> HashedWheelTimer:
    """A wheel caught at ``at_ms`` after calls arrived at ``rate_per_s`` (Poisson), a share
    ``long_share`` of them with a long timeout (more than one turn: they carry rounds)."""
    lam = check_number("rate_per_s", rate_per_s, low=0.0, low_open=True)
    check_number("long_share", long_share, low=0.0, high=1.0)
    check_number("at_ms", at_ms, low=0.0, low_open=True)
    rng = make_rng(seed)
    wheel = HashedWheelTimer(tick_ms, slots)
    t = 0.0
    while True:
        t += rng.exponential(1000.0 / lam)
        if t > at_ms:
            break
        wheel.advance_to(t)
        d = long_timeout_ms if rng.random() < long_share else timeout_ms
        wheel.new_timeout(None, d, t)
    wheel.advance_to(at_ms)
    wheel.advance()  # file the pending ones so the picture shows them
    return wheel


def measure_tick_work(
    rate_per_s: float = 100.0,
    timeout_ms: float = 1000.0,
    long_timeout_ms: float = 20_000.0,
    long_share: float = 0.1,
    duration_ms: float = 60_000.0,
    seed: int = 0,
    tick_ms: float = DUBBO_TICK_MS,
    slots: int = DUBBO_SLOTS,
) -> dict:
    """What one tick of the wheel costs, measured: calls arrive at ``rate_per_s`` (Poisson, a share
    ``long_share`` with ``long_timeout_ms``, the others ``timeout_ms``), none answered (every
    timeout fires: the worst case). For each tick after the first ``long_timeout_ms`` + one
    turn (steady state) we count the timeouts the tick *touches*: the new ones it files from the
    pending list plus every timeout in the one bucket it visits (expired, or a round taken off),
    and the timeouts live in the wheel at that tick (what a timer that checks every pending
    timeout each tick would touch). Returns arrays ``touched`` and ``live``."""
    lam = check_number("rate_per_s", rate_per_s, low=0.0, low_open=True, high=_MAX_RATE)
    check_number("long_share", long_share, low=0.0, high=1.0)
    dur = check_number("duration_ms", duration_ms, low=1.0, high=3_600_000.0)
    rng = make_rng(seed)
    wheel = HashedWheelTimer(tick_ms, slots)
    warm = max(timeout_ms, long_timeout_ms) + wheel_span_ms(tick_ms, slots)
    touched, live = [], []
    t = rng.exponential(1000.0 / lam)
    while wheel.next_tick_ms <= warm + dur:
        while t < wheel.next_tick_ms:
            d = long_timeout_ms if rng.random() < long_share else timeout_ms
            wheel.new_timeout(None, d, t)
            t += rng.exponential(1000.0 / lam)
        if wheel.next_tick_ms > warm:
            bucket = wheel._buckets[wheel.tick % wheel.slots]
            filed = sum(1 for x in wheel._pending if x.state == _ST_INIT)
            in_bucket_after_filing = len(bucket) + sum(
                1 for x in wheel._pending if x.state == _ST_INIT and wheel._fire_tick(x.deadline_ms) <= wheel.tick)
            touched.append(filed + in_bucket_after_filing)
            live.append(wheel.live)
        wheel.advance()
    return {"touched": np.array(touched), "live": np.array(live)}


def measure_lateness(
    n: int = 2000,
    max_delay_ms: float = 40_000.0,
    seed: int = 0,
    tick_ms: float = DUBBO_TICK_MS,
    slots: int = DUBBO_SLOTS,
) -> np.ndarray:
    """Add ``n`` timeouts at random times with random delays (up to ``max_delay_ms``, so some
    wait more than one turn), run the wheel until all fired, and return ``fired − deadline`` (ms)
    for each: never negative, never more than one tick."""
    k = check_int("n", n, low=1, high=1_000_000)
    dmax = check_number("max_delay_ms", max_delay_ms, low=0.0)
    rng = make_rng(seed)
    wheel = HashedWheelTimer(tick_ms, slots)
    adds = np.sort(rng.uniform(0.0, 10_000.0, k))
    delays = rng.uniform(0.0, dmax, k)
    handles = []
    for t, d in zip(adds.tolist(), delays.tolist(), strict=True):
        wheel.advance_to(t)
        handles.append(wheel.new_timeout(None, d, t))
    while wheel.live:
        wheel.advance()
    return np.array([h.fired_at_ms - h.deadline_ms for h in handles])


def plot_wheel(wheel: HashedWheelTimer, ax=None):
    """The wheel as a clock: one bar per slot, its height the timeouts filed there; purple: due
    in this turn, grey: waiting one or more turns (rounds); the hand: the current tick."""
    if ax is None:
        _, ax = new_figure(height=4.6, subplot_kw={"projection": "polar"})
        ax.figure.set_size_inches(5.0, 4.6)
    now_, later = wheel.occupancy()
    n = wheel.slots
    theta = 2 * np.pi * np.arange(n) / n
    width = 2 * np.pi / n
    ax.set_theta_zero_location("N")
    ax.set_theta_direction(-1)
    ax.bar(theta, now_, width=width, color=COLORS["queue"], edgecolor=COLORS["queue"], lw=1.0,
           label="due this turn", align="edge")
    ax.bar(theta, later, width=width, bottom=now_, color=COLORS["capacity"], edgecolor=COLORS["capacity"],
           lw=1.0, label="≥ 1 round to go", align="edge")
    hand = 2 * np.pi * (wheel.tick % n) / n
    top = max(1, int((now_ + later).max()))
    ax.plot([hand, hand], [0, top * 1.1], color=COLORS["timeouts"], lw=2, label="current tick")
    ax.set_xticks(2 * np.pi * np.arange(0, n, n // 8) / n, [str(i) for i in range(0, n, n // 8)])
    ax.set_rlabel_position(250)
    ax.tick_params(labelsize=8)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.06), ncol=3, fontsize=8)
    return ax


def plot_t0_timeline(exp: dict, ax=None, seed_index: int = 0, legend: bool = True, label: str | None = None):
    """The t0 picture: one seed of :func:`t0_experiment`. Each call to the hung provider issued
    near the boundary is a bar from its issue time (dot) to the tick that fires its timeout
    (bar end); green ones fired before the shutdown (timed out), red ones after it (rejected:
    stuck). The dashed line is the closed form's t0 on the issue-time axis."""
    sc = exp["scenario"]
    k = check_int("seed_index", seed_index, low=0, high=exp["seeds"] - 1)
    if ax is None:
        _, ax = new_figure(height=3.6)
    sd = exp["shutdown_ms"]
    t0 = exp["t0_ms"]
    lo, hi = t0 - 400.0, sd + 300.0
    horizon = hi + sc.timeout_ms + 3 * sc.tick_ms
    env = simpy.Environment()
    m = Machine(env, replace(sc, horizon_ms=horizon, window_ms=min(sc.window_ms, horizon),
                             gc_sample_ms=min(sc.gc_sample_ms, horizon)), k)
    env.process(gc(env, m))
    for p in m.providers:
        env.process(provider(env, m, p))
    env.process(executor_worker(env, m))
    env.process(consumer(env, m))
    calls = []
    orig = m.send_request

    def send(now, _orig=orig):
        before = m.cid
        _orig(now)
        c = m.futures.get(m.cid) if m.cid != before else None
        if c is not None and c.provider.index == 1 and lo <= now <= hi:
            calls.append(c)

    m.send_request = send
    run_bounded(env, horizon, 3_000_000)
    for i, c in enumerate(calls):
        fire = c.timeout.fired_at_ms
        color = COLORS["stuck"] if c.lost else COLORS["recovered"]
        x = (np.array([c.t0, fire]) - sd) / 1000.0
        ax.plot(x, [i, i], color=color, lw=2, solid_capstyle="butt")
        ax.plot(x[0], i, marker="o", color=color, ms=3)
    ax.axvline(0.0, color=COLORS["capacity"], ls=":", lw=1.5, label="shutdown (provider 0 dropped)")
    ax.axvline((t0 - sd) / 1000.0, color=COLORS["formula"], ls="--", lw=1.5,
               label="t0 = t_shutdown − T − tick/2")
    ax.plot([], [], color=COLORS["recovered"], lw=2, marker="o", ms=3,
            label="call (dot) → its timeout fires before the shutdown: timed out")
    ax.plot([], [], color=COLORS["stuck"], lw=2, marker="o", ms=3,
            label="call (dot) → its timeout fires after it: rejected, stuck")
    decorate(ax, xlabel="time relative to the shutdown (s)", ylabel="calls to the hung provider\n(in issue order)",
             legend=False)
    ax.set_yticks([])
    if label is not None:
        ax.text(0.01, 0.97, label, transform=ax.transAxes, ha="left", va="top", fontsize=8)
    if legend:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, fontsize=7)
    return ax


def plot_t0_timelines(exp: dict, axes=None):
    """:func:`plot_t0_timeline` for two seeds of :func:`t0_experiment`, on shared axes: the
    typical one (stuck count nearest the median) on top, the one farthest from the closed form
    below, each labelled with its count and its largest burst in one tick."""
    if axes is None:
        _, axes = new_figure(2, 1, height=2.9, sharex=True)
    seeds = list(exp["seed_list"])
    picks = (("typical", exp["typical_seed"]), ("farthest from\nthe closed form", exp["outlier_seed"]))
    for i, (ax, (what, seed)) in enumerate(zip(axes, picks, strict=True)):
        j = seeds.index(seed)
        lab = (f"seed {seed}, {what}:\n{exp['stuck_before_shutdown'][j]:.0f} stuck calls issued before\n"
               f"the shutdown (closed form {exp['expected_before_shutdown']:.1f});\n"
               f"at most {exp['max_stuck_in_one_tick'][j]} of them fired at one tick")
        plot_t0_timeline(exp, ax=ax, seed_index=seed, legend=i == len(axes) - 1, label=lab)
        if i < len(axes) - 1:
            ax.set_xlabel("")
    return axes


def plot_monitors(run: Run, axes=None):
    """The seed's monitors on one B machine: calls in flight, heap used, time in full GC and CPU."""
    if axes is None:
        _, axes = new_figure(3, 1, height=1.9, sharex=True)
    s = run.samples
    sc = run.scenario
    t = s["t"]
    axes[0].plot(t, s["in_flight"], color=COLORS["queue"], label="calls in flight (futures)")
    decorate(axes[0], ylabel="calls")
    axes[1].plot(t, 100 * s["heap_mb"] / sc.heap_mb, color=COLORS["queue"], label="heap used")
    axes[1].plot(t, 100 * s["gc"], color=COLORS["wasted"], label="time in full GC")
    decorate(axes[1], ylabel="% of heap / of time", ylim=(0, 105))
    axes[2].plot(t, 100 * s["cpu"], color=COLORS["capacity"], label="cpu")
    axes[2].plot(t, 100 * s["serving"], color=COLORS["goodput"], label="requests served (% of offered)")
    decorate(axes[2], xlabel="time (s)", ylabel="%", ylim=(0, 105))
    for i, ax in enumerate(axes):
        _event_lines(ax, sc)
        handles, labels = ax.get_legend_handles_labels()
        keep = [j for j, lab in enumerate(labels) if i == 0 or not lab.startswith("provider")]
        ax.legend([handles[j] for j in keep], [labels[j] for j in keep], fontsize=8,
                  loc="upper left", bbox_to_anchor=(0.0, 0.9 if i == 2 else 1.0))
    return axes


def plot_leak(broken: Run, healthy: Run, axes=None):
    """In-flight calls: healthy (bounded by Little) vs broken (growing as λ_hung × t), with the
    closed forms dashed. Left: the whole range; right: zoomed on Little's level.

    The two runs share their random stream, so they are the same run until the hang: the broken
    one is drawn first and wider, the healthy one on top, and Little's level on top of both."""
    if axes is None:
        _, axes = new_figure(1, 2, height=3.2)
    sc = broken.scenario
    hs = healthy.scenario
    bound = healthy_bound(hs.rate_per_s, hs.timeout_ms, hs.tick_ms)
    t_hang = hs.hang_at_ms if hs.hang_at_ms is not None else 0.0
    little = healthy_in_flight(hs.rate_per_s, hs.share_of_hung(t_hang), hs.timeout_ms, hs.service_ms, hs.tick_ms)
    t = broken.samples["t"]
    t0 = sc.leak_start_ms
    for ax, lw in zip(axes, (2.0, 3.0), strict=True):
        ax.plot(broken.samples["t"], broken.samples["in_flight"], color=COLORS["stuck"], lw=lw, zorder=2,
                label="timeouts lost (2.7.12)")
        ax.plot(healthy.samples["t"], healthy.samples["in_flight"], color=COLORS["recovered"], lw=1.2, zorder=3,
                label="timeouts work (fixed)")
        ax.axhline(bound, color=COLORS["capacity"], ls="-.", lw=1.5, zorder=4,
                   label=f"Little's bound λ (T + tick) = {bound:.0f}")
        _event_lines(ax, sc)
    if t0 is not None:
        line = [leaked_calls(sc.rate_per_s, sc.share_of_hung(t0), x * 1000.0, t0) for x in t]
        axes[0].plot(t, line, ls="--", color=COLORS["formula"], lw=1.5, zorder=4,
                     label="λ_hung × (t − t0), no GC feedback")
    if hs.hang_at_ms is not None:
        axes[1].plot([hs.hang_at_ms / 1000.0, t[-1]], [little, little], ls="--", color="black", lw=2.0, zorder=5,
                     label=f"Little: λ W = {little:.1f}")
    top = max(float(broken.samples["in_flight"].max()), bound) * 1.1
    decorate(axes[0], xlabel="time (s)", ylabel="calls in flight", ylim=(0, top), legend=False)
    decorate(axes[1], xlabel="time (s)", ylabel="calls in flight (zoom)", ylim=(0, 2.0 * bound), legend=False)
    axes[0].legend(loc="upper left", fontsize=7)
    axes[1].legend(loc="upper right", fontsize=7)
    return axes


def plot_cluster(run: Run, axes=None):
    """The seed's graphs: requests per B machine (leaking vs the others) and the others' latency."""
    sc = run.scenario
    view = cluster_view(run.samples["serving"], sc.rate_per_s, sc.node_capacity_per_s, sc.b_nodes,
                        sc.b_leaking_nodes)
    t = run.samples["t"]
    if axes is None:
        _, axes = new_figure(2, 1, height=2.2, sharex=True)
    axes[0].plot(t, view["healthy_per_s"], color=COLORS["offered"],
                 label=f"each of the {sc.b_nodes - sc.b_leaking_nodes} other machines")
    axes[0].plot(t, view["leaking_per_s"], color=COLORS["stuck"],
                 label=f"each of the {sc.b_leaking_nodes} leaking machines")
    axes[0].axhline(sc.node_capacity_per_s, color=COLORS["capacity"], ls="--", lw=1.5, label="capacity of a machine")
    decorate(axes[0], ylabel="requests/s", ylim=(0, sc.node_capacity_per_s * 1.1))
    lat = np.where(np.isfinite(view["healthy_latency_ms"]), view["healthy_latency_ms"], np.nan)
    axes[1].plot(t, lat, color=COLORS["latency"], label="latency on the other machines (M/M/1)")
    decorate(axes[1], xlabel="time (s)", ylabel="latency (ms)", ylim=(0, None))
    for i, ax in enumerate(axes):
        _event_lines(ax, sc)
        handles, labels = ax.get_legend_handles_labels()
        keep = [j for j, lab in enumerate(labels) if i == 1 or not lab.startswith("provider")]
        ax.legend([handles[j] for j in keep], [labels[j] for j in keep], fontsize=8,
                  loc="lower left" if i == 0 else "upper left")
    return axes


def log_calls_axis(ax, top: float, label: str = "calls in flight (log scale)"):
    """A log axis for call counts from 1 up: a labelled tick at every power of ten up to the
    first at or above ``top`` (plain numbers: 1, 10, 100, 1 000, …), unlabelled minor ticks, and
    nothing below 1 (a sample with no call in flight is left out of the line, not drawn at 0).
    Returns the decade ticks."""
    from matplotlib.ticker import FixedLocator, LogLocator, NullFormatter

    hi = max(1, math.ceil(math.log10(max(float(top), 10.0)) - 1e-9))
    ticks = [10.0**k for k in range(hi + 1)]
    ax.set_yscale("log", nonpositive="mask")
    ax.set_ylim(1.0, ticks[-1] * 1.05)
    ax.yaxis.set_major_locator(FixedLocator(ticks))
    ax.set_yticklabels([f"{t:,.0f}" for t in ticks])
    ax.yaxis.set_minor_locator(LogLocator(base=10.0, subs=tuple(range(2, 10))))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel(label)
    return ticks


_FIX_STYLE = {  # colour, line style, width, z-order
    0: (COLORS["stuck"], "-", 2.0, 2),
    1: (COLORS["recovered"], "-", 1.5, 4),
    2: (COLORS["goodput"], "-", 5.0, 3),  # drawn wide and pale under the fixed version it equals
    3: (COLORS["rejected"], "--", 2.0, 5),
}


def plot_fixes(runs: dict, axes=None):
    """Calls in flight (log scale) and heap used under each remedy (from :func:`compare_fixes`),
    as means over the runs' windows (``window_ms``), so that the Poisson noise of a few calls in
    flight does not hide the levels. Until the hang all four runs are the same run.

    The inline-timeout run equals the fixed version (same random stream; only the thread that
    notifies the timeout differs), so it is drawn wide and pale under it: the two show as one
    green line with a pale edge."""
    if axes is None:
        _, axes = new_figure(1, 2, height=3.2)
    top = 1.0
    for i, (label, run) in enumerate(runs.items()):
        color, ls, lw, z = _FIX_STYLE.get(i, (COLORS["capacity"], "-.", 2.0, 2))
        alpha = 0.35 if lw > 2.0 else 1.0
        if i == 2:
            label = "timeout inline (same run as fixed)"
        w = run.windows
        t = w["t"] + run.scenario.window_ms / 2000.0  # each window's mean drawn at its centre
        top = max(top, float(w["in_flight"].max()))
        for ax, y in ((axes[0], w["in_flight"]), (axes[1], 100 * w["heap_mb"] / run.scenario.heap_mb)):
            ax.plot(t, y, color=color, ls=ls, lw=lw, alpha=alpha, zorder=z, label=label)
    win_s = next(iter(runs.values())).scenario.window_ms / 1000.0
    log_calls_axis(axes[0], top, label=f"calls in flight, {win_s:g}-s mean (log scale)")
    decorate(axes[0], xlabel="time (s)", legend=False)
    decorate(axes[1], xlabel="time (s)", ylabel=f"heap used, {win_s:g}-s mean (%)", ylim=(0, 105), legend=False)
    axes[1].legend(loc="upper left", fontsize=7)  # one legend for both panels (same styles)
    return axes


def explore(
    rate_per_s: float = SEED_INCIDENT.rate_per_s,
    hung_share: float = 0.25,
    heap_mb: float = SEED_INCIDENT.heap_mb,
    timeout_ms: float = SEED_INCIDENT.timeout_ms,
    plot: bool = True,
) -> dict:
    """The what-if widget: the fluid model of one B machine with lost timeouts vs working ones.

    Returns the key numbers: ``leak_per_s`` (λ_hung), ``healthy_in_flight`` (Little),
    ``gc50_s`` and ``dead_s`` (None if never within the horizon), ``heap_end_pct``.
    """
    sc = replace(
        SEED_INCIDENT,
        rate_per_s=rate_per_s,
        hung_share=hung_share,
        heap_mb=heap_mb,
        base_live_mb=min(SEED_INCIDENT.base_live_mb, 0.5 * heap_mb),
        timeout_ms=timeout_ms,
        node_capacity_per_s=max(SEED_INCIDENT.node_capacity_per_s, 2.0 * rate_per_s),
    )
    broken = fluid(sc)
    fixed = fluid(replace(sc, fix="no_shutdown"))
    out = {
        "leak_per_s": sc.leak_per_s,
        "healthy_in_flight": healthy_in_flight(sc.rate_per_s, hung_share, sc.timeout_ms, sc.service_ms, sc.tick_ms),
        "fixed_in_flight_end": float(fixed["in_flight"][-1]),
        "in_flight_end": float(broken["in_flight"][-1]),
        "gc50_s": broken["gc50_s"],
        "dead_s": broken["dead_s"],
        "heap_end_pct": 100.0 * float(broken["heap_mb"][-1]) / sc.heap_mb,
    }
    if plot:
        import matplotlib.pyplot as plt

        fig, axes = new_figure(1, 2, height=3.0)
        t = broken["t"]
        # equal until the hang: the working line dashed on top, so that both show
        axes[0].plot(t, broken["in_flight"], color=COLORS["stuck"], label="timeouts lost")
        axes[0].plot(t, fixed["in_flight"], color=COLORS["recovered"], ls="--", label="timeouts work")
        log_calls_axis(axes[0], max(float(broken["in_flight"].max()), float(fixed["in_flight"].max())))
        decorate(axes[0], xlabel="time (s)", legend=False)
        axes[1].plot(t, 100 * broken["heap_mb"] / sc.heap_mb, color=COLORS["queue"], label="heap used")
        axes[1].plot(t, 100 * broken["gc"], color=COLORS["wasted"], label="time in full GC")
        axes[1].plot(t, 100 * fixed["heap_mb"] / sc.heap_mb, color=COLORS["recovered"], ls="--",
                     label="heap used, timeouts work")
        decorate(axes[1], xlabel="time (s)", ylabel="% of heap / of time", ylim=(0, 105))
        for ax in axes:
            _event_lines(ax, sc)
            ax.legend(loc="upper left", fontsize=7)
        fig.tight_layout()
        plt.show()
    return out


def widget():
    """The notebook's what-if widget over :func:`explore`: call rate, share of calls to the hung
    provider, heap size and timeout."""
    import ipywidgets as w

    style = {"description_width": "170px"}
    layout = w.Layout(width="480px")
    return w.interactive(
        explore,
        rate_per_s=w.FloatSlider(value=SEED_INCIDENT.rate_per_s, min=20.0, max=400.0, step=10.0,
                                 description="calls/s", style=style, layout=layout),
        hung_share=w.FloatSlider(value=0.25, min=0.0, max=1.0, step=0.05,
                                 description="share to hung provider", style=style, layout=layout),
        heap_mb=w.FloatSlider(value=SEED_INCIDENT.heap_mb, min=256.0, max=4096.0, step=256.0,
                              description="heap (MB)", style=style, layout=layout),
        timeout_ms=w.FloatSlider(value=SEED_INCIDENT.timeout_ms, min=100.0, max=5000.0, step=100.0,
                                 description="timeout (ms)", style=style, layout=layout),
        plot=w.fixed(True),
    )
