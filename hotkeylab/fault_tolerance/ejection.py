"""09 · §3 Dynamic ejection (seed 003: "L5服务会主动将A机器自动从服务组里剔除"): the router L5
ejects a machine whose success rate falls below 50%, probes it, and adds it back.

Read top to bottom: :class:`EjectionScenario` and its presets, then the actors - :func:`l5_users`,
:func:`l5_request` (the router picks a machine), :func:`machine` (workers and no queue),
:func:`l5_router` (the health check that ejects) and :func:`l5_prober` (probes an ejected
machine) - then :func:`simulate_ejection`.

Outcome of a request (:class:`hotkeylab.sim.Outcome`): ``SERVED``, ``REJECTED`` (an error, a busy
machine or no machine in rotation: :class:`Answer` says which) or ``IN_SYSTEM`` at the horizon.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import IntEnum

import numpy as np
import simpy

from ..sim import Outcome, Recorder, make_rng
from ..validate import check_int, param
from . import common
from .results import EjectionSummary

SERVER_NAMES = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class Answer(IntEnum):
    """What a machine (or the router) answers one call; all but ``OK`` are ``Outcome.REJECTED``."""

    OK = 0
    ERROR = 1  # the machine is bad and answers an error
    BUSY = 2  # every worker busy: refused at once (no queue)
    NO_SERVER = 3  # no machine in rotation and no panic mode


@dataclass(frozen=True)
class EjectionScenario:
    """A group of stateless machines behind the seed's router L5. Times in ms, rates per s.

    Each request goes to a machine chosen at random among those in rotation. A machine has
    ``workers`` workers and no queue: a call that finds them all busy is refused at once
    (an Erlang loss system; an assumption). The bad machine answers errors inside its bad
    window (success ``bad_success``). Every ``check_interval_ms`` the router computes each
    machine's success rate over the calls of the last interval and ejects it below
    ``threshold``; an ejected machine gets a probe every ``probe_interval_ms`` and is re-added
    once a probe succeeds. ``panic_threshold`` (Envoy's panic mode; 0 = off): when fewer than
    this share of the machines are in rotation, the router ignores ejection and uses all.
    """

    servers: int = param(4, kind="int", low=1, high=len(SERVER_NAMES))
    rate_per_s: float = common.rate_param(80.0)
    workers: int = common.workers_param(8)
    service_ms: float = param(50.0, low=0.0, low_open=True, high=1e6)
    ejection: bool = param(True, kind="bool")
    threshold: float = param(0.5, kind="probability")
    check_interval_ms: float = param(1000.0, low=1.0, high=1e7)
    min_calls: int = param(5, kind="int", low=1, high=10_000_000)
    probe_interval_ms: float = param(1000.0, low=1.0, high=1e7)
    panic_threshold: float = param(0.0, kind="probability")
    bad_server: int = param(0, kind="int", low=0, high=len(SERVER_NAMES) - 1)  # < servers
    datacentres: int = param(1, kind="int", low=1, high=len(SERVER_NAMES))
    # machines split into this many equal datacentres, in order (A1 A2 B1 ...); <= servers
    bad_datacentre: int = param(-1, kind="int", low=-1, high=len(SERVER_NAMES) - 1)
    # >= 0: every machine of this datacentre is bad (not just bad_server); < datacentres
    bad_start_ms: float = common.span_start(10_000.0)
    bad_end_ms: float = common.span_end(25_000.0)
    bad_success: float = param(0.0, kind="probability")
    error_ms: float = param(1.0, low=0.0, low_open=True, high=1e6)  # a bad machine answers its error after this long
    horizon_ms: float = common.horizon_param(40_000.0)
    window_ms: float = common.window_param(500.0)
    max_events: int = common.events_param()  # the run's event cap (status.truncated if it stops the run)

    def __post_init__(self):
        common.check_scenario_fields(self, ("bad_start_ms", "bad_end_ms"))
        check_int("bad_server", self.bad_server, low=0, high=self.servers - 1)
        check_int("datacentres", self.datacentres, low=1, high=self.servers)
        if self.servers % self.datacentres:
            raise ValueError(f"servers must be a multiple of datacentres={self.datacentres}, got {self.servers}")
        check_int("bad_datacentre", self.bad_datacentre, low=-1, high=self.datacentres - 1)

    @property
    def per_datacentre(self) -> int:
        return self.servers // self.datacentres

    @property
    def names(self):
        """One letter per machine (ABCD), or with several datacentres the datacentre's letter and
        the machine's number in it (A1, A2, B1, ...)."""
        if self.datacentres == 1:
            return SERVER_NAMES[: self.servers]
        m = self.per_datacentre
        return [f"{SERVER_NAMES[k // m]}{k % m + 1}" for k in range(self.servers)]

    @property
    def bad_label(self) -> str:
        if self.bad_datacentre >= 0:
            return f"datacentre {SERVER_NAMES[self.bad_datacentre]}"
        return self.names[self.bad_server]

    def bad(self, i: int, t_ms: float) -> bool:
        if not self.bad_start_ms <= t_ms < self.bad_end_ms:
            return False
        if self.bad_datacentre >= 0:
            return i // self.per_datacentre == self.bad_datacentre
        return i == self.bad_server


SEED_EJECTION = EjectionScenario(
    servers=4,  # "假如一组服务下擁有服務機器四臺（ABCD）"
    rate_per_s=80.0,  # assumption: light load, each machine 10% busy
    workers=8,  # assumption
    service_ms=50.0,  # assumption
    ejection=True,  # "L5服务会主动将A机器自动从服务组里剔除"
    threshold=0.5,  # "发现某个服务的机器异常的时候（成功率低于50%），就会自动剔除该机器"
    check_interval_ms=1000.0,  # assumption: the router judges each machine once a second
    probe_interval_ms=1000.0,  # "后续，会发出试探性的请求" (interval assumed)
    bad_server=0,  # "假设A机器的服务因为某种未知原因，完全不可用了"
    bad_success=0.0,  # "完全不可用"
    bad_start_ms=10_000.0,
    bad_end_ms=25_000.0,  # "假如A机器从异常中恢复了，那么L5再主动将机器A加回来" (15 s assumed)
)


SEED_DATACENTRES = replace(
    SEED_EJECTION,
    servers=6,  # assumption: two machines in each datacentre
    datacentres=3,  # "服务器都是分布在ABC三个机房"
    bad_datacentre=1,  # "假设B机房整个网络故障了"
    rate_per_s=160.0,  # assumption: each machine a sixth busy (27 of its 160 calls/s)
    bad_success=0.0,  # "无法接受服务的B机房机器"
)


SEED_EJECTION_OVERLOAD = replace(
    SEED_EJECTION,
    rate_per_s=960.0,  # assumption: overload, each machine offered 1.5× its 160 calls/s
    bad_start_ms=10_000.0,
    bad_end_ms=11_000.0,  # assumption: A has a 1 s blip, enough to be ejected
    horizon_ms=30_000.0,
)


@dataclass
class _L5State(common.RunState):  # sc: a EjectionScenario
    in_rotation: list
    busy: list
    calls: list
    oks: list
    ejected_at: list
    intervals: list = field(default_factory=list)  # (server, ejected_ms, readded_ms)
    arrive: list = field(default_factory=list)
    answer: list = field(default_factory=list)  # an Answer per request (None: in system)
    target: list = field(default_factory=list)
    probes: int = 0
    panics: int = 0

    def eject(self, i: int) -> None:
        self.in_rotation[i] = False
        self.ejected_at[i] = self.env.now
        self.rec.level("in_rotation", self.env.now, sum(self.in_rotation))

    def readd(self, i: int) -> None:
        self.in_rotation[i] = True
        self.intervals.append((i, self.ejected_at[i], self.env.now))
        self.ejected_at[i] = math.nan
        self.calls[i] = self.oks[i] = 0
        self.rec.level("in_rotation", self.env.now, sum(self.in_rotation))


def l5_users(env, st: _L5State):
    """The users: a Poisson stream of requests, each runs :func:`l5_request`."""
    sc = st.sc
    yield from common.poisson(
        env, st.rng, [(0.0, sc.horizon_ms, sc.rate_per_s)], lambda: env.process(l5_request(env, st))
    )


def l5_request(env, st: _L5State):
    """One request: the router picks a machine at random among those in rotation (all of
    them in panic mode); none in rotation and no panic: the request fails at once."""
    sc = st.sc
    i = len(st.arrive)
    st.arrive.append(env.now)
    st.answer.append(None)
    st.rec.count("offered", env.now)
    healthy = [k for k in range(sc.servers) if st.in_rotation[k]]
    if sc.panic_threshold > 0 and len(healthy) < sc.panic_threshold * sc.servers:
        healthy = list(range(sc.servers))
        st.panics += 1
    if not healthy:
        st.target.append(-1)
        st.answer[i] = Answer.NO_SERVER
        st.rec.count("failed", env.now)
        return
    k = healthy[int(st.rng.integers(len(healthy)))] if len(healthy) > 1 else healthy[0]
    st.target.append(k)
    code = yield from machine(env, st, k)
    st.calls[k] += 1
    st.oks[k] += code == Answer.OK
    st.answer[i] = code
    st.rec.count("goodput" if code == Answer.OK else "failed", env.now)


def machine(env, st: _L5State, k: int):
    """Machine ``k``: an error while bad, refused when all workers are busy, else served after
    an exponential time. Returns its :class:`Answer`: OK, ERROR or BUSY."""
    sc = st.sc
    if sc.bad(k, env.now) and st.rng.random() >= sc.bad_success:
        yield env.timeout(sc.error_ms)
        return Answer.ERROR
    if st.busy[k] >= sc.workers:
        return Answer.BUSY
    st.busy[k] += 1
    yield env.timeout(st.rng.exponential(sc.service_ms))
    st.busy[k] -= 1
    return Answer.OK


def l5_router(env, st: _L5State):
    """The router's health check: every ``check_interval_ms``, eject each machine in rotation
    whose success rate over the last interval's calls is below ``threshold``."""
    sc = st.sc
    while True:
        yield env.timeout(sc.check_interval_ms)
        for k in range(sc.servers):
            n, ok = st.calls[k], st.oks[k]
            st.calls[k] = st.oks[k] = 0
            if st.in_rotation[k] and n >= sc.min_calls and ok / n < sc.threshold:
                st.eject(k)
                env.process(l5_prober(env, st, k))


def l5_prober(env, st: _L5State, k: int):
    """Probe an ejected machine every ``probe_interval_ms``; re-add it once a probe succeeds."""
    sc = st.sc
    while True:
        yield env.timeout(sc.probe_interval_ms)
        st.probes += 1
        code = yield from machine(env, st, k)
        if code == Answer.OK:
            st.readd(k)
            return


def simulate_ejection(
    scenario: EjectionScenario = SEED_EJECTION, seed: int = 0
) -> common.Run:
    """Run the L5 model; ``windows``: offered, goodput, failed (per s), ``success`` (share of the
    requests arriving in the window that succeeded), ``in_rotation`` (machines, time-weighted).
    ``log["ejections"]`` lists ``(machine, ejected_s, readded_s)``."""
    seed = common.check_run_args(scenario, EjectionScenario, seed)
    sc = scenario
    env = simpy.Environment()
    rec = Recorder(sc.horizon_ms, sc.window_ms, counters=("offered", "goodput", "failed"),
                   levels=("in_rotation",))
    n = sc.servers
    st = _L5State(env, sc, make_rng(seed), rec, [True] * n, [0] * n, [0] * n, [0] * n, [math.nan] * n)
    rec.level("in_rotation", 0.0, n)
    env.process(l5_users(env, st))
    if sc.ejection:
        env.process(l5_router(env, st))
    status, w, arrive = common.finish(env, sc, rec, st)
    answer = np.asarray([-1 if a is None else a for a in st.answer], np.int8)  # -1: in system
    target = np.asarray(st.target, np.int16)
    codes = np.where(answer < 0, Outcome.IN_SYSTEM, np.where(answer == Answer.OK, Outcome.SERVED, Outcome.REJECTED))
    outcome, books = common.ledger(codes, errors=int((answer == Answer.ERROR).sum()),
                            busy=int((answer == Answer.BUSY).sum()),
                            no_server=int((answer == Answer.NO_SERVER).sum()),
                            probes=st.probes, panic_requests=st.panics)
    ok = outcome == Outcome.SERVED
    done = outcome != Outcome.IN_SYSTEM
    w["success"] = common.window_share(arrive[done], ok[done], sc.window_ms, len(w["t"]))
    ejections = [(k, a / 1000.0, b / 1000.0) for k, a, b in st.intervals]
    ejections += [(k, st.ejected_at[k] / 1000.0, status.t_end_ms / 1000.0) for k in range(n)
                  if not math.isnan(st.ejected_at[k])]
    ejections.sort(key=lambda e: (e[1], e[0]))
    bad = (arrive >= sc.bad_start_ms) & (arrive < sc.bad_end_ms) & done
    bad_late = (arrive >= sc.bad_start_ms + 2 * sc.check_interval_ms) & (arrive < sc.bad_end_ms) & done
    lost_to_bad = int(np.count_nonzero(bad & (answer == Answer.ERROR)))
    after = (arrive >= sc.bad_end_ms + 2 * sc.check_interval_ms) & done
    first_ej = [e for e in ejections if sc.bad(e[0], sc.bad_start_ms) and e[1] * 1000 >= sc.bad_start_ms]
    summary = {
        "success_bad": common.share(ok, bad),
        "success_bad_late": common.share(ok, bad_late),
        "success_after": common.share(ok, after),
        "success_all": common.share(ok, done),
        "lost_to_bad": lost_to_bad,
        "ejections": len(ejections),
        "first_ejection_delay_ms": (first_ej[0][1] * 1000 - sc.bad_start_ms) if first_ej else math.nan,
        "min_in_rotation": float(np.min(w["in_rotation"])) if len(w["in_rotation"]) else float(n),
        "probes": st.probes,
    }
    log = {"arrive_ms": arrive, "outcome": outcome, "answer": answer, "target": target, "ejections": ejections}
    return common.Run(sc, seed, status, books, w, EjectionSummary(**summary), log)
