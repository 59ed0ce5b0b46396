"""09 · §2 Primary/backup switch (seed 003: "如果服务A获取失败，则尝试从服务B中获取"): a request
tries service A; if A fails or times out it tries B once.

Read top to bottom: :class:`FailoverScenario` and its presets, the surge's fluid closed forms, then
the actors - :func:`failover_users`, :func:`failover_client` (A, then B), :func:`call_service`
(one call with a timeout; a dead A fails after the connect timeout) and :func:`service` (a FIFO
queue in front of the workers) - then :func:`simulate_failover`.

Outcome of a request (:class:`hotkeylab.sim.Outcome`): ``SERVED`` (answered by A or B in time),
``TIMED_OUT`` (neither answered in time), ``IN_SYSTEM`` at the horizon.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import simpy

from ..sim import Outcome, Recorder, make_rng
from ..validate import check_number, param
from . import common
from .closed_form import backend_capacity_per_s
from .results import FailoverSummary

DOWN_KINDS = ("connect_timeout", "refused")


@dataclass(frozen=True)
class FailoverScenario:
    """Two services A (primary) and B (backup), e.g. the seed's two openid services: a request
    tries A; if A fails or times out, it tries B once. Times in ms, rates per second.

    Each service has ``workers`` workers and a FIFO queue (exponential service of mean
    ``service_ms``) and serves calls whose caller has given up. A is unreachable inside the down
    window: a call waits ``timeout_ms`` for the connection (``"connect_timeout"``) or is refused
    at once (``"refused"``, after ``refused_ms``). The user load is multiplied by
    ``surge_factor`` inside the surge window.
    """

    rate_per_s: float = common.rate_param(100.0)
    service_ms: float = param(50.0, low=0.0, low_open=True, high=1e6)
    workers: int = common.workers_param(10)
    timeout_ms: float = param(500.0, low=0.0, low_open=True, high=1e7)  # connect and read timeout per call
    down_start_ms: float = common.span_start(10_000.0)
    down_end_ms: float = common.span_end(20_000.0)
    down_kind: str = param("connect_timeout", kind="choice", choices=DOWN_KINDS)
    refused_ms: float = param(1.0, low=0.0, low_open=True, high=1e6)
    surge_start_ms: float = common.span_start(0.0)
    surge_end_ms: float = common.span_end(0.0)
    surge_factor: float = param(1.0, low=0.0, high=1000.0)
    backup: bool = param(True, kind="bool")
    horizon_ms: float = common.horizon_param(30_000.0)
    window_ms: float = common.window_param(500.0)
    max_events: int = common.events_param()  # the run's event cap (status.truncated if it stops the run)

    def __post_init__(self):
        common.check_scenario_fields(self, ("down_start_ms", "down_end_ms"), ("surge_start_ms", "surge_end_ms"))
        check_number("surge rate (rate_per_s × surge_factor)", self.rate_per_s * self.surge_factor,
                     high=common.MAX_RATE_PER_S)

    @property
    def capacity_per_s(self) -> float:
        """Calls/s each service completes when busy."""
        return backend_capacity_per_s(self.workers, self.service_ms)

    @property
    def detect_ms(self) -> float:
        """Time a call to a dead primary takes to fail."""
        return self.timeout_ms if self.down_kind == "connect_timeout" else self.refused_ms

    def down(self, t_ms: float) -> bool:
        return self.down_start_ms <= t_ms < self.down_end_ms


SEED_FAILOVER = FailoverScenario(
    rate_per_s=100.0,  # assumption: each service runs at half its capacity
    service_ms=50.0,  # "一个服务在正常状态下，获取数据也许只要50ms"
    workers=10,  # assumption: 10 workers × 50 ms = 200 calls/s per service
    timeout_ms=500.0,  # "服务的超时时间通常会设置到500-1000ms"
    down_kind="connect_timeout",  # "假设主服务出现连接（connect）超时，那么耗时就更是大幅度增加"
    backup=True,  # "如果服务A获取失败，则尝试从服务B中获取"
)


SEED_FAILOVER_SURGE = replace(
    SEED_FAILOVER,
    down_start_ms=0.0,
    down_end_ms=0.0,  # A never crashes ...
    surge_start_ms=10_000.0,
    surge_end_ms=20_000.0,
    surge_factor=3.0,  # "如果是因为流量过大问题导致主服务异常" (3× assumed)
)


def surge_fill_ms(sc: FailoverScenario) -> float:
    """How long into the surge A's queue wait first exceeds the call timeout (fluid): the queue
    grows at ``λ·factor − capacity`` calls/s and a call times out once ``timeout × capacity``
    calls are ahead of it, so ``fill = timeout × capacity / (λ·factor − capacity)``; infinite if
    A keeps up (``λ·factor ≤ capacity``) or there is no surge. Calls arriving before this are
    mostly answered by A; after it A times out nearly everything and the load moves to B."""
    common.check_scenario("sc", sc, FailoverScenario)
    if sc.surge_end_ms <= sc.surge_start_ms:
        return math.inf
    excess = sc.rate_per_s * sc.surge_factor - sc.capacity_per_s
    if excess <= 0:
        return math.inf
    return sc.timeout_ms * sc.capacity_per_s / excess


def surge_both_fall_factor(sc: FailoverScenario) -> float:
    """The surge factor above which the switch cannot save the surge: A is overloaded when
    ``λ·factor > capacity``; then it times out nearly every call, every call also goes to B, and B
    is overloaded by the same load. Below it A keeps up and B is not needed. ``capacity / λ``."""
    common.check_scenario("sc", sc, FailoverScenario)
    if sc.rate_per_s <= 0:
        return math.inf
    return sc.capacity_per_s / sc.rate_per_s


class _Service:
    __slots__ = ("name", "res", "busy", "key")

    def __init__(self, env, name, workers, key):
        self.name = name
        self.res = simpy.Resource(env, capacity=workers)
        self.busy = 0
        self.key = key


@dataclass
class _FailoverState(common.RunState):  # sc: a FailoverScenario
    a: _Service
    b: _Service
    arrive: list = field(default_factory=list)
    done: list = field(default_factory=list)
    ok: list = field(default_factory=list)  # None in system, True / False
    failover: list = field(default_factory=list)
    wasted: int = 0


def failover_users(env, st: _FailoverState):
    """The users: a Poisson stream (surge inside the surge window); each runs
    :func:`failover_client`."""
    sc = st.sc
    seg = common.segments(sc.rate_per_s, sc.horizon_ms, sc.surge_start_ms, sc.surge_end_ms, sc.surge_factor)
    yield from common.poisson(env, st.rng, seg, lambda: env.process(failover_client(env, st)))


def failover_client(env, st: _FailoverState):
    """One request: call A; on failure or timeout call B once (the seed's automatic switch)."""
    sc = st.sc
    i = len(st.arrive)
    st.arrive.append(env.now)
    st.done.append(math.nan)
    st.ok.append(None)
    st.failover.append(False)
    st.rec.count("offered", env.now)
    ok = yield from call_service(env, st, st.a)
    if not ok and sc.backup:
        st.failover[i] = True
        st.rec.count("failovers", env.now)
        ok = yield from call_service(env, st, st.b)
    st.done[i] = env.now
    st.ok[i] = ok
    st.rec.count("goodput" if ok else "failed", env.now)


def call_service(env, st: _FailoverState, srv: _Service):
    """One call with a timeout; a dead primary fails after the connect timeout (or at once if
    refused). Returns True if answered in time."""
    sc = st.sc
    if srv is st.a and sc.down(env.now):
        yield env.timeout(sc.detect_ms)
        return False
    att = common.Attempt(env)
    env.process(service(env, st, srv, att))
    yield att.done | env.timeout(sc.timeout_ms)
    if att.done.triggered:
        return True
    att.abandoned = True
    return False


def service(env, st: _FailoverState, srv: _Service, att: common.Attempt):
    """Service A or B: a FIFO queue in front of ``workers`` workers, exponential service."""
    with srv.res.request() as req:
        yield req
        srv.busy += 1
        st.rec.level(srv.key, env.now, srv.busy / st.sc.workers)
        yield env.timeout(st.rng.exponential(st.sc.service_ms))
        srv.busy -= 1
        st.rec.level(srv.key, env.now, srv.busy / st.sc.workers)
    if att.abandoned:
        st.wasted += 1
    att.done.succeed(True)


def simulate_failover(
    scenario: FailoverScenario = SEED_FAILOVER, seed: int = 0
) -> common.Run:
    """Run the primary/backup model; ``windows``: offered, goodput, failed, failovers (per s),
    util_a, util_b (busy share of workers), mean_ms / p50_ms / p99_ms (latency of the requests
    finishing in the window)."""
    seed = common.check_run_args(scenario, FailoverScenario, seed)
    sc = scenario
    env = simpy.Environment()
    rec = Recorder(
        sc.horizon_ms, sc.window_ms, counters=("offered", "goodput", "failed", "failovers"),
        levels=("util_a", "util_b"),
    )
    st = _FailoverState(
        env, sc, make_rng(seed), rec, _Service(env, "A", sc.workers, "util_a"),
        _Service(env, "B", sc.workers, "util_b"),
    )
    env.process(failover_users(env, st))
    status, w, arrive = common.finish(env, sc, rec, st)
    done = np.asarray(st.done, float)
    codes = [Outcome.IN_SYSTEM if o is None else (Outcome.SERVED if o else Outcome.TIMED_OUT) for o in st.ok]
    fo = np.asarray(st.failover, bool)
    outcome, books = common.ledger(codes, failovers=int(fo.sum()), wasted=st.wasted)
    ok = outcome == Outcome.SERVED
    fin = ~np.isnan(done)
    lat = common.latency_windows(w, arrive, done, sc.window_ms)
    w["success"] = common.window_share(arrive[fin], ok[fin], sc.window_ms, len(w["t"]))
    # requests arriving inside the down window and inside the whole surge window; the surge is
    # also reported from the moment A's queue wait first exceeds the timeout (surge_fill_ms)
    down = (arrive >= sc.down_start_ms) & (arrive < sc.down_end_ms) & fin
    surge = (arrive >= sc.surge_start_ms) & (arrive < sc.surge_end_ms) & fin
    fill_ms = surge_fill_ms(sc)
    settled = (arrive >= sc.surge_start_ms + fill_ms) & (arrive < sc.surge_end_ms) & fin
    first = min(
        sc.down_start_ms if sc.down_end_ms > sc.down_start_ms else math.inf,
        sc.surge_start_ms if sc.surge_end_ms > sc.surge_start_ms else math.inf,
    )
    normal = (arrive < first) & fin
    t = w["t"] * 1000.0
    in_down = (t >= sc.down_start_ms + 1000.0) & (t + sc.window_ms <= sc.down_end_ms)
    in_surge = (t >= sc.surge_start_ms + fill_ms) & (t + sc.window_ms <= sc.surge_end_ms)
    summary = {
        "mean_latency_normal_ms": common.mean_or_nan(lat, normal),
        "mean_latency_down_ms": common.mean_or_nan(lat, down),
        "failover_share_down": common.share(fo, down),
        "success_down": common.share(ok, down),
        "util_b_down": common.mean_or_nan(w["util_b"], in_down),
        "success_surge": common.share(ok, surge),
        "success_surge_settled": common.share(ok, settled),
        "surge_fill_ms": fill_ms,
        "util_a_surge": common.mean_or_nan(w["util_a"], in_surge),
        "util_b_surge": common.mean_or_nan(w["util_b"], in_surge),
        "success_all": common.share(ok, fin),
    }
    log = {"arrive_ms": arrive, "done_ms": done, "ok": ok, "outcome": outcome, "failover": fo}
    return common.Run(sc, seed, status, books, w, FailoverSummary(**summary), log)
