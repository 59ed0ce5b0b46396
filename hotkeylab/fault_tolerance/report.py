"""09 · §6 Degrading a non-core step (seed 003: "将超时时间设置为20ms，一旦超时则旁路掉"): a 3 ms
reporting call with a 20 ms timeout, bypassed on timeout, against a blocking call.

Read top to bottom: :class:`ReportScenario` and its preset, then the actors - :func:`report_users`,
:func:`cgi_request` (a CGI worker: core steps, then the reporting call) and
:func:`reporting_service` - then :func:`simulate_report`.

Outcome of a request (:class:`hotkeylab.sim.Outcome`): ``SERVED`` (the core path finished; a
bypassed report is counted in ``extra["bypassed"]``) or ``IN_SYSTEM`` at the horizon.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import simpy

from ..sim import Outcome, Recorder, make_rng
from ..validate import param
from . import common
from .results import ReportSummary

REPORT_MODES = ("bypass", "blocking")


@dataclass(frozen=True)
class ReportScenario:
    """The gift CGI's core path plus one non-core step, a reporting call. Times in ms.

    A request takes one of ``workers`` CGI workers, runs the core steps (gamma time, mean
    ``core_ms``, shape 4), then calls the reporting service (exponential, mean ``report_ms``;
    ``slow_report_ms`` inside the slow window). ``"bypass"``: wait at most
    ``report_timeout_ms``, then carry on; ``"blocking"``: wait for the answer.
    """

    rate_per_s: float = common.rate_param(200.0)
    workers: int = common.workers_param(20)
    core_ms: float = param(30.0, low=0.0, low_open=True, high=1e6)
    report_ms: float = param(3.0, low=0.0, low_open=True, high=1e7)
    report_timeout_ms: float = param(20.0, low=0.0, low_open=True, high=1e7)
    mode: str = param("bypass", kind="choice", choices=REPORT_MODES)
    slow_report_ms: float = param(300.0, low=0.0, low_open=True, high=1e7)
    slow_start_ms: float = common.span_start(10_000.0)
    slow_end_ms: float = common.span_end(20_000.0)
    horizon_ms: float = common.horizon_param(30_000.0)
    window_ms: float = common.window_param(500.0)
    max_events: int = common.events_param()  # the run's event cap (status.truncated if it stops the run)

    def __post_init__(self):
        common.check_scenario_fields(self, ("slow_start_ms", "slow_end_ms"))

    def report_mean_at(self, t_ms: float) -> float:
        return self.slow_report_ms if self.slow_start_ms <= t_ms < self.slow_end_ms else self.report_ms


SEED_REPORT = ReportScenario(
    rate_per_s=200.0,  # assumption
    workers=20,  # assumption: 20 CGI workers
    core_ms=30.0,  # assumption: "后端CGI会经过10多个环节和服务的逻辑判断" (~30 ms in all)
    report_ms=3.0,  # "其中一个统计上报服务，平均耗时是3ms"
    report_timeout_ms=20.0,  # "那么我们就将超时时间设置为20ms，一旦超时则旁路掉"
    mode="bypass",
    slow_report_ms=300.0,  # assumption: the reporting service slows down 100×
)


@dataclass
class _ReportState(common.RunState):  # sc: a ReportScenario
    cgi: simpy.Resource
    queued: int = 0
    arrive: list = field(default_factory=list)
    done: list = field(default_factory=list)
    bypassed: int = 0


def report_users(env, st: _ReportState):
    """The users: a Poisson stream of gift requests; each runs :func:`cgi_request`."""
    sc = st.sc
    yield from common.poisson(env, st.rng, [(0.0, sc.horizon_ms, sc.rate_per_s)],
                        lambda: env.process(cgi_request(env, st)))


def cgi_request(env, st: _ReportState):
    """One request in the CGI: a worker, the core steps, then the reporting call."""
    sc = st.sc
    i = len(st.arrive)
    st.arrive.append(env.now)
    st.done.append(math.nan)
    st.rec.count("offered", env.now)
    st.queued += 1
    st.rec.level("queue", env.now, st.queued)
    with st.cgi.request() as req:
        yield req
        st.queued -= 1
        st.rec.level("queue", env.now, st.queued)
        yield env.timeout(st.rng.gamma(4.0, sc.core_ms / 4.0))  # config, limits, login, security…
        call = env.process(reporting_service(env, st))
        if sc.mode == "bypass":
            yield call | env.timeout(sc.report_timeout_ms)
            if not call.triggered:
                st.bypassed += 1
                st.rec.count("bypassed", env.now)
        else:
            yield call
    st.done[i] = env.now
    st.rec.count("goodput", env.now)


def reporting_service(env, st: _ReportState):
    """The reporting service: answers after an exponential time (slower in the slow window)."""
    yield env.timeout(st.rng.exponential(st.sc.report_mean_at(env.now)))


def simulate_report(
    scenario: ReportScenario = SEED_REPORT, seed: int = 0
) -> common.Run:
    """Run the CGI with its reporting step; ``windows``: offered, goodput, bypassed (per s),
    queue (requests waiting for a worker), mean_ms / p50_ms / p99_ms (latency by completion)."""
    seed = common.check_run_args(scenario, ReportScenario, seed)
    sc = scenario
    env = simpy.Environment()
    rec = Recorder(sc.horizon_ms, sc.window_ms, counters=("offered", "goodput", "bypassed"),
                   levels=("queue",))
    st = _ReportState(env, sc, make_rng(seed), rec, simpy.Resource(env, capacity=sc.workers))
    env.process(report_users(env, st))
    status, w, arrive = common.finish(env, sc, rec, st)
    done = np.asarray(st.done, float)
    lat = common.latency_windows(w, arrive, done, sc.window_ms)
    fin = ~np.isnan(done)
    outcome, books = common.ledger(np.where(fin, Outcome.SERVED, Outcome.IN_SYSTEM), bypassed=st.bypassed)
    slow = (arrive >= sc.slow_start_ms) & (arrive < sc.slow_end_ms) & fin
    normal = (arrive < sc.slow_start_ms) & fin
    summary = {
        "mode": sc.mode,
        "mean_latency_normal_ms": float(lat[normal].mean()) if normal.any() else math.nan,
        "mean_latency_slow_ms": float(lat[slow].mean()) if slow.any() else math.nan,
        "p99_latency_slow_ms": float(np.percentile(lat[slow], 99)) if slow.any() else math.nan,
        "peak_queue": float(np.max(w["queue"])) if len(w["queue"]) else 0.0,
        "bypassed": st.bypassed,
        "unfinished": int((~fin).sum()),
    }
    return common.Run(sc, seed, status, books, w, ReportSummary(**summary), {"arrive_ms": arrive, "done_ms": done})
