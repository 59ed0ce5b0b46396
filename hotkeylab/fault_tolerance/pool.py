"""09 · §4 Timeouts and worker pools (seed 003: "启用了100个处理请求的worker … 超时时间设置为5秒"):
a hung downstream call holds a worker for the whole timeout.

Read top to bottom: :class:`PoolScenario` and its presets, then the actors - :func:`pool_users`,
:func:`pool_user` (queues for a worker, gives up after its patience), :func:`worker` (calls the
downstream, sync or async) and :func:`event_loop_wait` (async I/O) - then :func:`measure_capacity`
(the saturated pool) and :func:`simulate_pool` (the open pool), and §4's designs compared.

Outcome of a request (:class:`hotkeylab.sim.Outcome`): ``SERVED`` (answered ok); ``TIMED_OUT``
(the downstream call hit its timeout, or the user gave up in the queue: ``log["gave_up"]``);
``REJECTED`` (async I/O with ``max_inflight`` calls in flight); ``IN_SYSTEM`` at the horizon.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import simpy

from ..sim import Outcome, Recorder, make_rng, run_bounded
from ..validate import check_int, check_number, param
from . import common
from .holding import holding_ms, pool_capacity_per_s
from .results import PoolSummary

IO_MODES = ("sync", "async")


@dataclass(frozen=True)
class PoolScenario:
    """A service's worker pool calling a downstream. Times in ms, rates per second.

    Each request takes a worker; the worker calls the downstream and waits up to the timeout.
    The downstream answers after a gamma-distributed time (mean ``service_ms``, shape
    ``service_shape``; 1 = exponential), or hangs (share ``hang_share`` inside the hang window)
    until the worker's timeout. A call that exceeds the timeout fails. ``slow_share`` of the
    requests belong to a slow business (mean ``slow_service_ms``, timeout ``slow_timeout_ms``);
    with ``slow_workers > 0`` they get their own pool (fast/slow separation). ``io="async"``:
    a worker only spends ``cpu_ms`` per request and hands the wait to an event loop with at
    most ``max_inflight`` calls in flight (coroutines). Users wait in the pool's queue and give
    up after ``user_timeout_ms``.
    """

    rate_per_s: float = common.rate_param(300.0)
    workers: int = common.workers_param(100)
    timeout_ms: float = param(5000.0, low=0.0, low_open=True, high=1e7)
    service_ms: float = param(100.0, low=0.0, low_open=True, high=1e7)
    service_shape: float = param(1.0, low=0.05, high=1000.0)
    hang_share: float = param(0.0, kind="probability")
    hang_start_ms: float = common.span_start(0.0)
    hang_end_ms: float = common.span_end(math.inf)
    slow_share: float = param(0.0, kind="probability")
    slow_service_ms: float = param(700.0, low=0.0, low_open=True, high=1e7)
    slow_timeout_ms: float = param(5000.0, low=0.0, low_open=True, high=1e7)
    slow_workers: int = common.workers_param(0, low=0)  # < workers (the rest serve the fast business)
    io: str = param("sync", kind="choice", choices=IO_MODES)
    cpu_ms: float = param(2.0, low=0.0, low_open=True, high=1e6)
    max_inflight: int = param(10_000, kind="int", low=1, high=10_000_000)
    user_timeout_ms: float = param(10_000.0, low=0.0, low_open=True, allow_inf=True)
    horizon_ms: float = common.horizon_param(30_000.0)
    window_ms: float = common.window_param(500.0)
    max_events: int = common.events_param()  # the run's event cap (status.truncated if it stops the run)

    def __post_init__(self):
        common.check_scenario_fields(self, ("hang_start_ms", "hang_end_ms"))
        check_int("slow_workers", self.slow_workers, low=0, high=self.workers - 1)

    def hang_at(self, t_ms: float) -> float:
        return self.hang_share if self.hang_start_ms <= t_ms < self.hang_end_ms else 0.0


SEED_POOL = PoolScenario(
    workers=100,  # "启用了100个处理请求的worker"
    timeout_ms=5000.0,  # "worker的超时时间设置为5秒"
    service_ms=100.0,  # "1个worker处理1个任务的平均处理耗时是100ms"
    service_shape=1.0,  # assumption: exponential service times
    hang_share=0.0,  # "一旦网络或者服务偶尔异常，响应超时" - varied
)


SEED_POOL_INCIDENT = replace(
    SEED_POOL,
    rate_per_s=300.0,  # assumption: the pool runs at 30% of its 1000/s
    hang_share=0.1,  # "一旦比较大概率出现这类型的超时异常" (10% assumed)
    hang_start_ms=10_000.0,
    hang_end_ms=20_000.0,
    slow_share=0.1,  # assumption: 10% of the traffic is the slow business
    slow_service_ms=700.0,  # "某新手游的查询服务通常耗时为700ms"
    slow_timeout_ms=5000.0,  # one timeout for all: the seed's 5 s
    user_timeout_ms=10_000.0,  # assumption: users give up after 10 s in the queue
)


class _Job:
    __slots__ = ("arrive", "slow", "done", "abandoned")

    def __init__(self, env, arrive, slow):
        self.arrive = arrive
        self.slow = slow
        self.done = env.event()
        self.abandoned = False


#: the counter a finished request's outcome adds to
_COUNTER = {Outcome.SERVED: "goodput", Outcome.TIMED_OUT: "timeouts", Outcome.REJECTED: "rejected"}


@dataclass
class _Backlog:
    """:func:`measure_capacity`'s count: calls completed from ``started_at`` (after the warm-up)."""

    started_at: float
    completed: int = 0
    completed_ok: int = 0


@dataclass
class _PoolState(common.RunState):  # sc: a PoolScenario
    queues: dict
    backlog: _Backlog | None = None  # measure_capacity: every worker has an endless backlog
    levels: dict = field(default_factory=lambda: {"queue": 0, "busy": 0})  # requests queued, busy workers
    inflight: int = 0  # async calls waiting in the event loop
    arrive: list = field(default_factory=list)
    slow: list = field(default_factory=list)
    done: list = field(default_factory=list)
    outcome: list = field(default_factory=list)  # an Outcome code per request
    gave_up: list = field(default_factory=list)  # the user left the queue (counted TIMED_OUT)
    wasted: int = 0

    def draw_call(self, slow: bool) -> tuple[float, bool]:
        """Time the downstream call holds the caller, and whether it answered in time."""
        sc = self.sc
        mean, tmo = (sc.slow_service_ms, sc.slow_timeout_ms) if slow else (sc.service_ms, sc.timeout_ms)
        if self.rng.random() < sc.hang_at(self.env.now):
            return tmo, False
        k = sc.service_shape
        x = self.rng.exponential(mean) if k == 1.0 else self.rng.gamma(k, mean / k)
        return (x, True) if x <= tmo else (tmo, False)

    def change(self, name: str, by: int) -> None:
        """Level ``name`` (``queue`` or ``busy``) moves by ``by``; the recorder sees the new level."""
        value = self.levels[name] + by
        self.levels[name] = value
        if self.rec is not None:
            self.rec.level(name, self.env.now, value)


def pool_users(env, st: _PoolState):
    """The users: a Poisson stream; each request is slow with probability ``slow_share``."""
    sc = st.sc

    def spawn():
        env.process(pool_user(env, st, bool(sc.slow_share > 0 and st.rng.random() < sc.slow_share)))

    yield from common.poisson(env, st.rng, [(0.0, sc.horizon_ms, sc.rate_per_s)], spawn)


def pool_user(env, st: _PoolState, slow: bool):
    """One user request: queue for a worker; wait for the answer or give up after
    ``user_timeout_ms`` (a queued request given up is skipped; a started one is finished
    and wasted)."""
    sc = st.sc
    i = len(st.arrive)
    st.arrive.append(env.now)
    st.slow.append(slow)
    st.done.append(math.nan)
    st.outcome.append(Outcome.IN_SYSTEM)
    st.gave_up.append(False)
    st.rec.count("offered", env.now)
    job = _Job(env, env.now, slow)
    st.change("queue", +1)
    st.queues[slow if sc.slow_workers > 0 else False].put(job)
    if math.isinf(sc.user_timeout_ms):
        yield job.done
    else:
        yield job.done | env.timeout(sc.user_timeout_ms)
    st.done[i] = env.now
    if job.done.triggered:
        code = job.done.value
        st.outcome[i] = code
        st.rec.count(_COUNTER[code], env.now)
    else:
        job.abandoned = True
        st.outcome[i] = Outcome.TIMED_OUT
        st.gave_up[i] = True
        st.rec.count("gave_up", env.now)


def worker(env, st: _PoolState, queue, slow_pool: bool):
    """One worker: take the next request (or, in backlog mode, a fresh one), call the
    downstream and wait for the answer or the timeout (sync), or spend ``cpu_ms`` and hand the
    wait to the event loop (async)."""
    sc = st.sc
    while True:
        if st.backlog is not None:
            job = _Job(env, env.now, slow_pool)
        else:
            job = yield queue.get()
            st.change("queue", -1)
            if job.abandoned:
                continue
        st.change("busy", +1)
        if sc.io == "sync":
            hold, ok = st.draw_call(job.slow)
            yield env.timeout(hold)
            st.change("busy", -1)
            _finish(st, job, Outcome.SERVED if ok else Outcome.TIMED_OUT)
        else:
            yield env.timeout(sc.cpu_ms)
            st.change("busy", -1)
            if st.inflight >= sc.max_inflight:
                _finish(st, job, Outcome.REJECTED)
            else:
                st.inflight += 1
                env.process(event_loop_wait(env, st, job))


def event_loop_wait(env, st: _PoolState, job: _Job):
    """Async I/O: the call waits in the event loop (a coroutine), holding no worker."""
    hold, ok = st.draw_call(job.slow)
    yield env.timeout(hold)
    st.inflight -= 1
    _finish(st, job, Outcome.SERVED if ok else Outcome.TIMED_OUT)


def _finish(st: _PoolState, job: _Job, code: int) -> None:
    if st.backlog is not None:
        if st.env.now >= st.backlog.started_at:
            st.backlog.completed += 1
            st.backlog.completed_ok += code == Outcome.SERVED
        return
    if job.abandoned:
        st.wasted += 1
        st.rec.count("wasted", st.env.now)
    else:
        job.done.succeed(code)


def measure_capacity(
    scenario: PoolScenario = SEED_POOL,
    seed: int = 0,
    *,
    horizon_ms: float | None = None,
    warmup_ms: float | None = None,
    target_completions: int = 20_000,
) -> dict:
    """Measure the saturated pool's capacity with SimPy: ``workers`` worker processes, each
    with an endless backlog, calling the downstream for ``horizon_ms`` (by default long enough
    for about ``target_completions`` calls at the closed-form rate). Uses the fast class, sync
    I/O and ``hang_share`` throughout. Returns the measured ``capacity_per_s``, the success
    share, the closed form and the counts."""
    seed = common.check_run_args(scenario, PoolScenario, seed)
    if scenario.io != "sync":
        raise ValueError(f"io must be 'sync' for measure_capacity, got {scenario.io!r}")
    check_int("target_completions", target_completions, low=1)
    sc = replace(scenario, hang_start_ms=0.0, hang_end_ms=math.inf, slow_share=0.0, slow_workers=0)
    closed = pool_capacity_per_s(sc.workers, sc.service_ms, sc.timeout_ms, sc.hang_share, sc.service_shape)
    hold = holding_ms(sc.service_ms, sc.timeout_ms, sc.hang_share, sc.service_shape)
    if warmup_ms is None:  # the hung workers reach their steady share after one timeout
        warmup_ms = 2.0 * max(hold, sc.timeout_ms)
    warm = check_number("warmup_ms", warmup_ms, low=0.0, high=common.MAX_HORIZON_MS)
    if horizon_ms is None:
        horizon_ms = warm + 1000.0 * target_completions / closed
    h = check_number("horizon_ms", horizon_ms, low=0.0, low_open=True, high=common.MAX_HORIZON_MS)
    if h <= warm:
        raise ValueError(f"horizon_ms must be > warmup_ms ({warm:g}), got {horizon_ms!r}")
    env = simpy.Environment()
    st = _PoolState(env, sc, make_rng(seed), None, {}, backlog=_Backlog(started_at=warm))
    for _ in range(sc.workers):
        env.process(worker(env, st, None, False))
    status = run_bounded(env, until_ms=h, max_events=sc.max_events)
    span = (env.now if status.truncated else h) - warm
    done = st.backlog
    measured = done.completed * 1000.0 / span if span > 0 else math.nan
    return {
        "capacity_per_s": measured,
        "closed_form_per_s": closed,
        "holding_ms": hold,
        "success_share": done.completed_ok / done.completed if done.completed else math.nan,
        "completed": done.completed,
        "horizon_ms": h,
        "truncated": status.truncated,
    }


def simulate_pool(
    scenario: PoolScenario = SEED_POOL_INCIDENT, seed: int = 0
) -> common.Run:
    """Run the open pool: users arrive, queue for workers, give up after ``user_timeout_ms``.
    ``windows``: offered, goodput (answered ok), timeouts (failed after the downstream timeout),
    gave_up, rejected, wasted (per s), queue and busy (time-weighted), mean_ms / p50_ms / p99_ms
    (the user's wait, by completion window)."""
    seed = common.check_run_args(scenario, PoolScenario, seed)
    sc = scenario
    env = simpy.Environment()
    rec = Recorder(
        sc.horizon_ms, sc.window_ms,
        counters=("offered", "goodput", "timeouts", "gave_up", "rejected", "wasted"),
        levels=("queue", "busy"),
    )
    queues = {False: simpy.Store(env)}
    if sc.slow_workers > 0:
        queues[True] = simpy.Store(env)
    st = _PoolState(env, sc, make_rng(seed), rec, queues)
    n_fast = sc.workers - sc.slow_workers
    for _ in range(n_fast):
        env.process(worker(env, st, queues[False], False))
    for _ in range(sc.slow_workers):
        env.process(worker(env, st, queues[True], True))
    env.process(pool_users(env, st))
    status, w, arrive = common.finish(env, sc, rec, st)
    done = np.asarray(st.done, float)
    gave_up = np.asarray(st.gave_up, bool)
    outcome, books = common.ledger(st.outcome, gave_up=int(gave_up.sum()), wasted=st.wasted)
    slow = np.asarray(st.slow, bool)
    lat = common.latency_windows(w, arrive, done, sc.window_ms)
    ok = outcome == Outcome.SERVED
    fin = outcome != Outcome.IN_SYSTEM
    hang = (arrive >= sc.hang_start_ms) & (arrive < sc.hang_end_ms) & fin
    summary = {
        "success_all": common.share(ok, fin),
        "success_hang": common.share(ok, hang),
        "success_fast": common.share(ok, fin & ~slow),
        "success_slow": common.share(ok, fin & slow),
        "mean_wait_ms": common.mean_or_nan(lat, fin),
        "mean_wait_hang_ms": common.mean_or_nan(lat, hang),
        "peak_queue": float(np.max(w["queue"])) if len(w["queue"]) else 0.0,
        "gave_up": int(gave_up.sum()),
    }
    log = {"arrive_ms": arrive, "done_ms": done, "outcome": outcome, "gave_up": gave_up, "slow": slow}
    return common.Run(sc, seed, status, books, w, PoolSummary(**summary), log)


def pool_designs(base: PoolScenario = SEED_POOL_INCIDENT) -> dict:
    """§4's four designs built from ``base``: one pool with its timeout, one pool with 500 ms,
    fast/slow pools (60 workers at 1 s, 40 at 5 s) and async I/O."""
    common.check_scenario("base", base, PoolScenario)
    return {
        "one pool, 5 s": base,
        "one pool, 500 ms": replace(base, timeout_ms=500.0, slow_timeout_ms=500.0),
        "fast/slow pools, 1 s / 5 s": replace(base, timeout_ms=1000.0, slow_timeout_ms=5000.0, slow_workers=40),
        "async I/O, 5 s": replace(base, io="async"),
    }


def pool_conclusion_holds(patience_ms: float, base: PoolScenario = SEED_POOL_INCIDENT, seed: int = 0) -> bool:
    """Does §4's conclusion hold when users give up after ``patience_ms`` in the queue (one run
    per design, ``seed``)? It holds when, for the requests arriving while calls hang, the single
    5 s pool makes users wait longest, the 500 ms pool answers fewer than 60% of the slow
    requests and the fast/slow pools at least 90% of them."""
    p = check_number("patience_ms", patience_ms, low=0.0, low_open=True, allow_inf=True)
    common.check_scenario("base", base, PoolScenario)
    d = pool_designs(replace(base, user_timeout_ms=p))
    s = {k: simulate_pool(d[k], seed=seed).summary for k in ("one pool, 5 s", "one pool, 500 ms", "fast/slow pools, 1 s / 5 s")}
    long = s["one pool, 5 s"]["mean_wait_hang_ms"]
    return bool(long > s["one pool, 500 ms"]["mean_wait_hang_ms"] and long > s["fast/slow pools, 1 s / 5 s"]["mean_wait_hang_ms"]
                and s["one pool, 500 ms"]["success_slow"] < 0.6 and s["fast/slow pools, 1 s / 5 s"]["success_slow"] >= 0.9)
