"""08 · The model: the actors of seed 002, one SimPy process each (consumer, provider, the timer's worker,
the executor's worker, GC), then :func:`simulate`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import simpy

from .. import sim
from ..sim import Ledger, RunStatus, check_seed, run_bounded
from .machine import (
    Machine,
    _Provider,
)
from .results import RunSummary
from .scenario import (
    GRACEFUL_WAIT_MS,
    SEED_INCIDENT,
    Scenario,
)

__all__ = [
    "consumer",
    "provider",
    "timer_worker",
    "executor_worker",
    "gc",
    "Run",
    "start_machine",
    "simulate",
]


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
class Run(sim.Run):
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
    summary: RunSummary | dict = field(default_factory=dict)  # a dict becomes the RunSummary
    dump: dict | None = None

    Summary = RunSummary


def start_machine(env, sc: Scenario, seed: int) -> Machine:
    """One B machine with its actors started (the wheel's :func:`timer_worker` starts with the
    first call, as in dubbo)."""
    m = Machine(env, sc, seed, timer_worker)
    env.process(gc(env, m))
    for p in m.providers:
        env.process(provider(env, m, p))
    env.process(executor_worker(env, m))
    env.process(consumer(env, m))
    return m


def simulate(scenario: Scenario = SEED_INCIDENT, seed: int = 0, *, max_events: int | None = None) -> Run:
    """Run the SimPy model of one B machine to ``scenario.horizon_ms``, at most
    ``scenario.max_events`` events (``max_events``, if given, replaces it); a run that hits the cap
    ends early with ``status.truncated``."""
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a lost_timeouts.Scenario, got {type(scenario).__name__}")
    seed = check_seed(seed)
    sc = scenario if max_events is None else replace(scenario, max_events=max_events)
    env = simpy.Environment()
    m = start_machine(env, sc, seed)
    status = run_bounded(env, sc.horizon_ms, sc.max_events)
    t_end = max(status.t_end_ms, 1e-9)
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
