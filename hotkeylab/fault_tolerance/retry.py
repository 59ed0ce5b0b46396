"""09 · §1 Simple retry (seed 003: "如果服务请求失败，则重试一次"): AMS calls one backend and
retries a failed call; the backend cannot tell that a caller has given up.

Read top to bottom: :class:`RetryScenario` and its presets, then the actors - :func:`retry_users`
(first clicks), :func:`retry_user` (clicks again on "领取失败"), :func:`ams_call` (AMS's calls
and its retry policy), :func:`backend` (a FIFO queue in front of the workers) - then
:func:`simulate_retry`.

Outcome of a user request (:class:`hotkeylab.sim.Outcome`): ``SERVED``; ``TIMED_OUT`` when its
last call timed out; ``REJECTED`` when its last call returned an error; ``IN_SYSTEM`` at the horizon.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field, replace

import numpy as np
import simpy

from ..sim import Outcome, Recorder, make_rng
from ..validate import check_int, param
from . import common
from .closed_form import backend_capacity_per_s
from .results import RetrySummary

RETRY_POLICIES = ("none", "always", "gated")


RETRY_LABELS = {
    "none": "no retry",
    "always": "always retry once",
    "gated": "retry only while success ≥ gate",
}


@dataclass(frozen=True)
class RetryScenario:
    """AMS calls one backend and retries failed calls. Times in ms, rates per second.

    The backend is a FIFO queue in front of ``workers`` workers (exponential service of mean
    ``service_ms``); it cannot tell that a caller has given up, so under overload it spends its
    capacity on answers nobody waits for and its goodput collapses. Each call succeeds with
    ``normal_success``, or ``fault_success`` inside the fault window.
    """

    users_per_s: float = common.rate_param(120.0)  # user requests/s (first clicks), Poisson
    workers: int = common.workers_param(4)  # backend workers
    service_ms: float = param(20.0, low=0.0, low_open=True, high=1e6)  # mean service time per call (exponential)
    timeout_ms: float = param(500.0, low=0.0, low_open=True, high=1e7)  # AMS's timeout per call
    normal_success: float = param(0.999, kind="probability")  # success probability of a call outside the fault
    fault_success: float = param(0.2, kind="probability")  # ... inside the fault window
    fault_start_ms: float = common.span_start(10_000.0)
    fault_end_ms: float = common.span_end(20_000.0)
    attempts: int = param(2, kind="int", low=1, high=100)  # calls per click, the first included (2 = one retry)
    policy: str = param("always", kind="choice", choices=RETRY_POLICIES)  # "none" | "always" | "gated"
    gate_threshold: float = param(0.7, kind="probability")  # gated: retry only while the measured success rate >= this
    gate_window_ms: float = param(1000.0, low=0.0, low_open=True, high=1e7)  # gated: success rate over the calls of the last window
    gate_min_samples: int = param(20, kind="int", low=1, high=10_000_000)  # gated: fewer calls in the window count as healthy
    clicks: int = param(1, kind="int", low=1, high=100)  # clicks per user: a user who sees a failure clicks again, up to this many
    reclick_ms: float = param(1000.0, low=0.0, low_open=True, high=1e7)  # a user clicks again this long after seeing the failure
    horizon_ms: float = common.horizon_param(40_000.0)
    window_ms: float = common.window_param(500.0)
    max_events: int = common.events_param()  # the run's event cap (status.truncated if it stops the run)

    def __post_init__(self):
        common.check_scenario_fields(self, ("fault_start_ms", "fault_end_ms"))

    @property
    def capacity_per_s(self) -> float:
        """Calls/s the backend completes when busy: ``workers × 1000 / service_ms``."""
        return backend_capacity_per_s(self.workers, self.service_ms)

    def success_at(self, t_ms: float) -> float:
        return self.fault_success if self.fault_start_ms <= t_ms < self.fault_end_ms else self.normal_success


SEED_RETRY = RetryScenario(
    users_per_s=120.0,  # assumption: the backend runs at 60% of its capacity ("业务流量规模的数倍增长")
    workers=4,  # assumption: 4 workers × 20 ms = 200 calls/s of capacity
    service_ms=20.0,  # assumption
    timeout_ms=500.0,  # "服务的超时时间通常会设置到500-1000ms"
    normal_success=0.999,  # "这个服务在常规状态下是99.9%的成功率"
    fault_success=0.2,  # "如果服务真的出问题" - assumption: 80% of calls fail for 10 s
    attempts=2,  # "如果服务请求失败，则重试一次"
    policy="always",  # "简单重试"
    gate_threshold=0.7,  # "主动计算服务成功率，成功率过低，就直接不做重试行为"; assumed: about midway, in standard errors
    # of one gate window's measured rate, between the fault's 20% and the blip's 95% (0.69; notebook 09 §1)
    clicks=1,  # users' repeated clicks ("反复点击") are varied separately
)


SEED_BLIP = replace(
    SEED_RETRY,
    fault_success=0.95,  # "因为某一次波动性的异常，成功率下跌到95%"
)


@dataclass
class _RetryState(common.RunState):  # sc: a RetryScenario
    workers: simpy.Resource
    queue: int = 0
    gate: deque = field(default_factory=deque)
    gate_ok: int = 0
    arrive: list = field(default_factory=list)
    outcome: list = field(default_factory=list)  # an Outcome code per user request
    calls: list = field(default_factory=list)
    wasted: int = 0

    def gate_record(self, t: float, ok: bool) -> None:
        self.gate.append((t, ok))
        self.gate_ok += ok
        self._prune(t)

    def _prune(self, t: float) -> None:
        edge = t - self.sc.gate_window_ms
        while self.gate and self.gate[0][0] < edge:
            self.gate_ok -= self.gate.popleft()[1]

    def measured_success(self) -> float:
        self._prune(self.env.now)
        n = len(self.gate)
        return 1.0 if n < self.sc.gate_min_samples else self.gate_ok / n

    def may_retry(self) -> bool:
        pol = self.sc.policy
        if pol == "none":
            return False
        if pol == "always":
            return True
        return self.measured_success() >= self.sc.gate_threshold


def retry_users(env, st: _RetryState):
    """The users: first clicks arrive as a Poisson stream; each runs :func:`retry_user`."""
    sc = st.sc
    yield from common.poisson(
        env, st.rng, [(0.0, sc.horizon_ms, sc.users_per_s)], lambda: env.process(retry_user(env, st))
    )


def retry_user(env, st: _RetryState):
    """One user: click; on "领取失败" click again after ``reclick_ms``, up to ``clicks`` times."""
    sc = st.sc
    i = len(st.arrive)
    st.arrive.append(env.now)
    st.outcome.append(Outcome.IN_SYSTEM)
    st.calls.append(0)
    st.rec.count("offered", env.now)
    kind = "timeout"
    for click in range(sc.clicks):
        if click:
            yield env.timeout(sc.reclick_ms)
            st.rec.count("reclicks", env.now)
        ok, kind = yield from ams_call(env, st, i)
        if ok:
            st.outcome[i] = Outcome.SERVED
            st.rec.count("goodput", env.now)
            return
    st.outcome[i] = Outcome.TIMED_OUT if kind == "timeout" else Outcome.REJECTED
    st.rec.count("failed", env.now)


def ams_call(env, st: _RetryState, i: int):
    """AMS's call to the backend: up to ``attempts`` calls, each with ``timeout_ms``; a retry
    only if the policy allows it now. Returns ``(ok, last failure kind)``."""
    sc = st.sc
    kind = "timeout"
    for attempt in range(sc.attempts):
        if attempt:
            if not st.may_retry():
                break
            st.rec.count("retries", env.now)
        st.rec.count("attempts", env.now)
        st.calls[i] += 1
        att = common.Attempt(env)
        env.process(backend(env, st, att))
        yield att.done | env.timeout(sc.timeout_ms)
        if att.done.triggered:
            ok = bool(att.done.value)
            kind = "ok" if ok else "error"
        else:
            att.abandoned = True
            ok, kind = False, "timeout"
            st.rec.count("timeouts", env.now)
        st.gate_record(env.now, ok)
        if ok:
            return True, kind
    return False, kind


def backend(env, st: _RetryState, att: common.Attempt):
    """The backend: waits for a free worker (FIFO), serves for an exponential time, then
    answers success with the current success probability. It serves calls whose caller has
    already timed out: those answers are wasted."""
    sc = st.sc
    st.queue += 1
    st.rec.level("queue", env.now, st.queue)
    with st.workers.request() as req:
        yield req
        st.queue -= 1
        st.rec.level("queue", env.now, st.queue)
        yield env.timeout(st.rng.exponential(sc.service_ms))
    ok = st.rng.random() < sc.success_at(env.now)
    if att.abandoned:
        st.wasted += 1
        st.rec.count("wasted", env.now)
    att.done.succeed(ok)


def simulate_retry(
    scenario: RetryScenario = SEED_RETRY, seed: int = 0
) -> common.Run:
    """Run the retry model; ``windows`` holds offered (first clicks), attempts, retries,
    reclicks, goodput, failed, timeouts, wasted (per s) and queue (calls waiting)."""
    seed = common.check_run_args(scenario, RetryScenario, seed)
    sc = scenario
    env = simpy.Environment()
    rec = Recorder(
        sc.horizon_ms,
        sc.window_ms,
        counters=("offered", "attempts", "retries", "reclicks", "goodput", "failed", "timeouts", "wasted"),
        levels=("queue",),
    )
    st = _RetryState(env, sc, make_rng(seed), rec, simpy.Resource(env, capacity=sc.workers))
    env.process(retry_users(env, st))
    status, w, arrive = common.finish(env, sc, rec, st)
    calls = np.asarray(st.calls, float)
    outcome, books = common.ledger(st.outcome, wasted=st.wasted, calls=int(calls.sum()))
    served = outcome == Outcome.SERVED
    done = outcome != Outcome.IN_SYSTEM
    settle = sc.timeout_ms * sc.attempts + sc.reclick_ms * (sc.clicks - 1)
    in_fault = (arrive >= sc.fault_start_ms) & (arrive < sc.fault_end_ms) & done
    before = (arrive < sc.fault_start_ms) & done
    tail_start = max(sc.fault_end_ms, sc.horizon_ms - 5000.0)
    tail = (arrive >= tail_start) & (arrive < sc.horizon_ms - settle) & done
    t = w["t"]
    last = t >= (sc.horizon_ms - 5000.0) / 1000.0
    goodput_end = float(w["goodput"][last].mean()) if last.any() else math.nan
    summary = {
        "policy": sc.policy,
        "success_before": common.share(served, before),
        "success_fault": common.share(served, in_fault),
        "success_end": common.share(served, tail),
        "calls_per_user_fault": common.mean_or_nan(calls, in_fault),
        "calls_per_user_end": common.mean_or_nan(calls, tail),
        "goodput_end_per_s": goodput_end,
        "recovered": bool(goodput_end >= 0.9 * sc.users_per_s * sc.normal_success),
        "peak_queue": float(np.max(w["queue"])) if len(w["queue"]) else 0.0,
        "wasted": st.wasted,
    }
    log = {"arrive_ms": arrive, "outcome": outcome, "calls": calls}
    return common.Run(sc, seed, status, books, w, RetrySummary(**summary), log)


def retry_stuck_count(scenario: RetryScenario = SEED_RETRY, seeds: int = 20) -> int:
    """In how many of ``seeds`` runs (seeds 0 … seeds − 1) the backend is still stuck at the
    horizon: users served per second over the last 5 s below half the users' rate."""
    common.check_scenario("scenario", scenario, RetryScenario)
    n = check_int("seeds", seeds, low=1, high=10_000)
    return sum(
        simulate_retry(scenario, seed=k).summary["goodput_end_per_s"] < 0.5 * scenario.users_per_s
        for k in range(n)
    )


def retry_storm_error_share(sc: RetryScenario = SEED_RETRY) -> float:
    """The smallest share of failing calls at which always-retry pushes the load during the fault
    above the backend's capacity: ``users × (1 + e) > capacity``, so ``e > capacity / users − 1``
    (one retry). Below it the fault alone cannot start a storm."""
    common.check_scenario("sc", sc, RetryScenario)
    return min(1.0, max(0.0, sc.capacity_per_s / sc.users_per_s - 1.0))
