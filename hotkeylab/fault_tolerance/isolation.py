"""09 · §7 Isolation (seed 003: light queries and heavy deliveries on separate clusters), and the
split store and its failure days.

Read top to bottom: :class:`IsolationScenario` and its preset, then the actors - :func:`iso_users`
(queries, surging, or deliveries) and :func:`iso_request` (waits for a worker of its pool, at most
its patience) - then :func:`simulate_isolation`; last :func:`simulate_storage_days`, the Monte
Carlo of :func:`~.closed_form.storage_split`.

Outcome of a request (:class:`hotkeylab.sim.Outcome`): ``SERVED``, ``TIMED_OUT`` (the user left
the queue after ``patience_ms``) or ``IN_SYSTEM`` at the horizon.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import simpy

from .. import capacity
from ..sim import Outcome, Recorder, check_seed, make_rng
from ..validate import check_int, check_number, check_probability, param
from . import common
from .results import IsolationSummary

#: the most store-days :func:`simulate_storage_days` draws at once (days × stores booleans)
MAX_STORE_DAYS = 100_000_000


@dataclass(frozen=True)
class IsolationScenario:
    """Light queries and heavy deliveries (the seed's Spring Festival red-envelope clusters).
    Times in ms, rates per second.

    Shared (``separated=False``): one pool of ``workers`` workers with one FIFO queue serves
    both. Separated: ``query_workers`` serve queries, the rest deliveries. A request that has
    waited ``patience_ms`` in the queue is dropped (its user has left; an assumption). Query
    traffic is multiplied by ``surge_factor`` inside the surge window.
    """

    query_per_s: float = common.rate_param(150.0)
    query_ms: float = param(20.0, low=0.0, low_open=True, high=1e6)
    delivery_per_s: float = common.rate_param(50.0)
    delivery_ms: float = param(100.0, low=0.0, low_open=True, high=1e6)
    workers: int = common.workers_param(20, low=2)
    query_workers: int = common.workers_param(8)  # < workers (the rest serve deliveries)
    separated: bool = param(False, kind="bool")
    patience_ms: float = param(1000.0, low=0.0, low_open=True, high=1e7)
    surge_factor: float = param(10.0, low=0.0, high=1000.0)
    surge_start_ms: float = common.span_start(10_000.0)
    surge_end_ms: float = common.span_end(20_000.0)
    horizon_ms: float = common.horizon_param(30_000.0)
    window_ms: float = common.window_param(500.0)
    max_events: int = common.events_param()  # the run's event cap (status.truncated if it stops the run)

    def __post_init__(self):
        common.check_scenario_fields(self, ("surge_start_ms", "surge_end_ms"))
        check_int("query_workers", self.query_workers, low=1, high=self.workers - 1)
        check_number("query surge rate (query_per_s × surge_factor)",
                     self.query_per_s * self.surge_factor, high=common.MAX_RATE_PER_S)

    def work_erlangs(self, query_factor: float = 1.0) -> tuple[float, float]:
        """Offered work (busy workers needed) of queries and deliveries."""
        return (capacity.utilisation(self.query_per_s * query_factor, self.query_ms),
                capacity.utilisation(self.delivery_per_s, self.delivery_ms))


SEED_ISOLATION = IsolationScenario(
    query_per_s=150.0,  # assumption: "信息查询的服务相对没有那么重要，业务流程比较轻量级"
    query_ms=20.0,  # assumption: light
    delivery_per_s=50.0,  # assumption: "红包礼包发货则属于非常核心的业务，业务流程比较重"
    delivery_ms=100.0,  # assumption: heavy
    workers=20,  # assumption; "两边的机器和部署的服务基本一致"
    query_workers=8,  # assumption: the separated split
    surge_factor=10.0,  # assumption: the "手Q春节红包" query peak
)


@dataclass
class _IsoState(common.RunState):  # sc: a IsolationScenario
    pools: dict
    arrive: list = field(default_factory=list)
    kind: list = field(default_factory=list)  # 0 query, 1 delivery
    outcome: list = field(default_factory=list)  # an Outcome code per request


def iso_users(env, st: _IsoState, delivery: bool):
    """Users of one kind: queries (surging in the surge window) or deliveries."""
    sc = st.sc
    if delivery:
        seg = [(0.0, sc.horizon_ms, sc.delivery_per_s)]
    else:
        seg = common.segments(sc.query_per_s, sc.horizon_ms, sc.surge_start_ms, sc.surge_end_ms, sc.surge_factor)
    yield from common.poisson(env, st.rng, seg, lambda: env.process(iso_request(env, st, delivery)))


def iso_request(env, st: _IsoState, delivery: bool):
    """One query or delivery: wait for a worker of its pool (at most ``patience_ms``), then
    hold it for an exponential service time."""
    sc = st.sc
    i = len(st.arrive)
    st.arrive.append(env.now)
    st.kind.append(int(delivery))
    st.outcome.append(Outcome.IN_SYSTEM)
    name = "delivery" if delivery else "query"
    st.rec.count(f"{name}_offered", env.now)
    pool = st.pools[delivery] if sc.separated else st.pools[None]
    req = pool.request()
    yield req | env.timeout(sc.patience_ms)
    if not req.triggered:
        req.cancel()
        st.outcome[i] = Outcome.TIMED_OUT
        st.rec.count(f"{name}_gave_up", env.now)
        return
    yield env.timeout(st.rng.exponential(sc.delivery_ms if delivery else sc.query_ms))
    pool.release(req)
    st.outcome[i] = Outcome.SERVED
    st.rec.count(f"{name}_served", env.now)


def simulate_isolation(
    scenario: IsolationScenario = SEED_ISOLATION, seed: int = 0
) -> common.Run:
    """Run the shared or separated clusters; ``windows``: query_/delivery_ offered, served,
    gave_up (per s) and ``delivery_success`` / ``query_success`` (share of the requests arriving
    in the window that were served)."""
    seed = common.check_run_args(scenario, IsolationScenario, seed)
    sc = scenario
    env = simpy.Environment()
    names = [f"{k}_{m}" for k in ("query", "delivery") for m in ("offered", "served", "gave_up")]
    rec = Recorder(sc.horizon_ms, sc.window_ms, counters=names)
    if sc.separated:
        pools = {False: simpy.Resource(env, capacity=sc.query_workers),
                 True: simpy.Resource(env, capacity=sc.workers - sc.query_workers)}
    else:
        pools = {None: simpy.Resource(env, capacity=sc.workers)}
    st = _IsoState(env, sc, make_rng(seed), rec, pools)
    env.process(iso_users(env, st, False))
    env.process(iso_users(env, st, True))
    status, w, arrive = common.finish(env, sc, rec, st)
    kind = np.asarray(st.kind, np.int8)
    outcome, books = common.ledger(st.outcome)
    ok = outcome == Outcome.SERVED
    n = len(w["t"])
    for k, name in ((0, "query"), (1, "delivery")):
        m = (kind == k) & (outcome != Outcome.IN_SYSTEM)
        w[f"{name}_success"] = common.window_share(arrive[m], ok[m], sc.window_ms, n)
    done = outcome != Outcome.IN_SYSTEM
    surge = (arrive >= sc.surge_start_ms + 2000.0) & (arrive < sc.surge_end_ms) & done
    normal = (arrive < sc.surge_start_ms) & done
    summary = {
        "separated": sc.separated,
        "delivery_success_surge": common.share(ok, surge & (kind == 1)),
        "query_success_surge": common.share(ok, surge & (kind == 0)),
        "delivery_success_normal": common.share(ok, normal & (kind == 1)),
        "query_success_normal": common.share(ok, normal & (kind == 0)),
    }
    return common.Run(sc, seed, status, books, w, IsolationSummary(**summary), {"arrive_ms": arrive, "kind": kind, "outcome": outcome})


def simulate_storage_days(stores: int, p_down: float, days: int = 100_000, seed: int = 0) -> dict:
    """Monte Carlo of :func:`storage_split`'s failure part: each day each store is down with
    probability ``p_down``, independently (physically isolated, "即使服务器硬件故障，也不会相互影响").
    Returns the measured shares of days with everything down, something down, and the mean share
    of the data down. It draws ``days × stores`` at once: at most :data:`MAX_STORE_DAYS`, so
    ``days <= MAX_STORE_DAYS // stores`` (and at most 10,000,000)."""
    k = check_int("stores", stores, low=1, high=1000)
    p = check_probability("p_down", p_down)
    n = check_int(f"days (days × stores <= MAX_STORE_DAYS = {MAX_STORE_DAYS} with stores = {k})", days,
                  low=1, high=min(10_000_000, MAX_STORE_DAYS // k))
    rng = make_rng(check_seed(seed))
    down = rng.random((n, k)) < p
    per_day = down.sum(axis=1)
    return {
        "p_all_down": float(np.mean(per_day == k)),
        "p_any_down": float(np.mean(per_day > 0)),
        "expected_share_down": float(per_day.mean() / k),
    }
