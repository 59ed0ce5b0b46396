"""08 · The state of one B machine (the consumer) and of the C providers it calls: calls, executors, the
wheel, ``close_channel`` and the callback executor.
"""

from __future__ import annotations

import numpy as np
import simpy

from ..sim import Ledger, PoissonSource, Recorder, make_rng
from .closed_form import (
    gc_fraction,
)
from .scenario import (
    DEAD_GC_SHARE,
    JVM_GC_HEAP_FREE_LIMIT,
    JVM_GC_TIME_LIMIT,
    Scenario,
)
from .timer import HashedWheelTimer

__all__ = [
    "Machine",
    "RejectedExecution",
]


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

    def __init__(self, env, sc: Scenario, seed: int, timer_worker):
        self.env, self.sc = env, sc
        self.timer_worker = timer_worker  # the wheel's worker, an actor of the model: started by the first call
        streams = make_rng(seed).spawn(4)
        self.arrivals = PoissonSource(streams[0], sc.rate_per_s, block=4096)  # upstream requests
        self.gap = self.arrivals.next_gap
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
            self.env.process(self.timer_worker(self.env, self))
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
