"""03 · The model: owners of one hot key taking turns on its row lock, one SimPy process per actor.

Read top to bottom: :class:`OpenBatch` and :class:`LockState` (what the actors share), then the
actors :func:`users` (upstream clients, Poisson through :class:`hotkeylab.sim.PoissonSource`),
:func:`batcher` (group commit; why it is not the kernel's :func:`hotkeylab.batcher.batcher`: see
that module) and :func:`owner` (one owner's hot-key thread under the row lock), then
:func:`simulate_lock`, which wires them up.
``engine="fast"`` hands the same run to :mod:`.fast` (numpy, for sweeps over seeds).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import simpy

from .. import sim
from ..validate import check_choice
from .fast import simulate_lock_fast
from .results import COUNTERS, LockRun
from .scenario import SEED_INCIDENT, LockScenario, region_rng

__all__ = ["OpenBatch", "LockState", "users", "batcher", "owner", "simulate_lock"]


@dataclass
class OpenBatch:
    """One batcher's open batch: its rows' arrival times and the events "first row" and "full"."""

    env: simpy.Environment
    rows: list = field(default_factory=list)
    opened: simpy.Event = None
    full: simpy.Event = None

    def __post_init__(self):
        self.opened, self.full = self.env.event(), self.env.event()


@dataclass
class LockState:
    """What the actors of one run share: the scenario, the random streams, the row lock, each
    owner's inbox of batches, the open batches and the records."""

    sc: LockScenario
    env: simpy.Environment
    rng: np.random.Generator  # arrivals
    regions: np.random.Generator  # which region a request comes from (per-owner batchers)
    row_lock: simpy.Resource  # S2PL: held from SELECT … FOR UPDATE to COMMIT
    inboxes: list  # one simpy.Store of batches per owner
    batches: list  # one OpenBatch per batcher
    rec: sim.Recorder
    led: sim.Ledger = field(default_factory=sim.Ledger)
    intervals: list = field(default_factory=list)  # (owner name, start, end) of every lock hold
    queue: int = 0  # closed batches waiting for the lock
    turn: int = 0  # the shared batcher's next owner
    dispatched: int = 0  # rows in closed batches not yet committed

    @property
    def per_owner(self) -> bool:
        return self.sc.batchers == "per_owner"


def users(env: simpy.Environment, s: LockState):
    """Actor: upstream clients calling the hot key (Poisson; ×peak_factor from peak_start_ms).
    Each request joins its region's open batch (per_owner) or the one shared batch."""
    sc = s.sc
    cum = np.cumsum(sc.shares)
    n_own = len(sc.owners_ms)
    gaps = sim.PoissonSource(s.rng, sc.rate_per_s, block=1)  # one gap at a time: the peak changes the rate
    while True:
        if env.now >= sc.peak_start_ms:
            gaps.set_rate(sc.rate_per_s * sc.peak_factor)
        yield env.timeout(gaps.next_gap())
        s.led.arrived += 1
        s.rec.count("offered", env.now)
        if s.per_owner:
            b = s.batches[min(int(np.searchsorted(cum, s.regions.random(), side="right")), n_own - 1)]
        else:
            b = s.batches[0]
        b.rows.append(env.now)
        if not b.opened.triggered:
            b.opened.succeed()
        if len(b.rows) >= sc.max_rows and not b.full.triggered:
            b.full.succeed()


def batcher(env: simpy.Environment, s: LockState, j: int):
    """Actor: group commit — close a batch at max_rows requests or max_wait_ms after it opened.
    Shared: deal it to the owners in turn; per_owner: hand it to owner j."""
    sc = s.sc
    while True:
        b = s.batches[j]
        yield b.opened
        if not b.full.triggered:
            yield env.timeout(sc.max_wait_ms) | b.full
        batch, rest = b.rows[: sc.max_rows], b.rows[sc.max_rows :]
        b = s.batches[j] = OpenBatch(env, rest)
        if rest:
            b.opened.succeed()
            if len(rest) >= sc.max_rows:
                b.full.succeed()
        s.rec.count("batches", env.now)
        s.queue += 1
        s.dispatched += len(batch)
        s.rec.level("queue", env.now, s.queue)
        if s.per_owner:
            s.inboxes[j].put(batch)
        else:
            s.inboxes[s.turn].put(batch)  # "两台机器交替获得热点锁各占一半处理批次"
            s.turn = (s.turn + 1) % len(sc.owners_ms)


def owner(env: simpy.Environment, s: LockState, j: int):
    """Actor: owner j's single hot-key thread — one merged commit at a time under the row lock.
    A request committed after its client gave up (timeout_ms) is wasted work."""
    sc = s.sc
    while True:
        batch = yield s.inboxes[j].get()
        with s.row_lock.request() as req:
            yield req
            s.queue -= 1
            s.rec.level("queue", env.now, s.queue)
            start = env.now
            yield env.timeout(sc.owners_ms[j])
        s.intervals.append((sc.owner_names[j], start, env.now))
        s.rec.count("commits", env.now)
        for t in batch:
            if env.now - t <= sc.timeout_ms:
                s.led.served += 1
                s.rec.count("goodput", env.now)
            else:
                s.led.timed_out += 1
                s.rec.count("wasted", env.now)
        s.dispatched -= len(batch)


def simulate_lock(scenario: LockScenario = SEED_INCIDENT, seed: int = 0, engine: str = "simpy") -> LockRun:
    """Users → group-commit batcher(s) → owners' hot-key threads → the row lock.

    ``engine="simpy"`` runs the actors above, one process each; ``"fast"``
    (:func:`.fast.simulate_lock_fast`) computes the same run with numpy and one loop over batches,
    for sweeps over many seeds: the same windows, ledger and intervals (a test checks).
    """
    check_choice("engine", engine, ("simpy", "fast"))
    if engine == "fast":
        return simulate_lock_fast(scenario, seed)
    sc = scenario
    env = simpy.Environment()
    n_own = len(sc.owners_ms)
    s = LockState(
        sc=sc, env=env, rng=sim.make_rng(seed), regions=region_rng(seed),
        row_lock=simpy.Resource(env, capacity=1), inboxes=[simpy.Store(env) for _ in range(n_own)],
        batches=[OpenBatch(env) for _ in range(n_own if sc.batchers == "per_owner" else 1)],
        rec=sim.Recorder(sc.horizon_ms, sc.window_ms, counters=COUNTERS, levels=("queue",)),
    )
    env.process(users(env, s))
    for j in range(len(s.batches)):
        env.process(batcher(env, s, j))
    for j in range(n_own):
        env.process(owner(env, s, j))
    status = sim.run_bounded(env, sc.horizon_ms, sc.max_events)
    s.rec.close(status.t_end_ms)
    s.led.in_system = sum(len(b.rows) for b in s.batches) + s.dispatched
    s.led.extra["wasted"] = s.led.timed_out
    return LockRun(scenario=sc, seed=seed, windows=s.rec.arrays(), ledger=s.led, intervals=s.intervals,
                   status=status, queue_end=s.queue)
