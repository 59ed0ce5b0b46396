"""03 · The transient model: clients learning a new serverList by polling give a key two owners.

Read top to bottom: :class:`TransientState` (what the actors share: the serverList versions,
which version each client routes on, the time integrals), the actors :func:`registry`
(operations take a server out and put it back) and :func:`client` (one polling client), then
:func:`simulate_transient`. Its closed form is :func:`.closed_form.dual_owner_share_closed`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import simpy

from .. import sim
from .results import TransientRun
from .scenario import SEED_TRANSIENT, TransientScenario
from .serverlist import Server, key_hashes, make_layout, owner_indices

__all__ = ["TransientState", "registry", "client", "simulate_transient"]


@dataclass
class TransientState:
    """Shared state of one run. ``downs[v]``: the server out of the registry in serverList version
    v (``None``: all in), whose owners (index in ``pool``) of every watched key are
    :meth:`owners_with_down`; ``version[i]``: the version client i routes on; ``in_use``: clients
    per version in use; ``multi``: keys with more than one owner right now."""

    sc: TransientScenario
    env: simpy.Environment
    rng: np.random.Generator
    pool: tuple[Server, ...]
    hashes: np.ndarray
    rec: sim.Recorder
    downs: list = field(default_factory=list)
    by_down: dict = field(default_factory=dict)  # owner array per server out (None: all in), computed once
    version: list = field(default_factory=list)
    in_use: dict = field(default_factory=dict)
    latest: int = 0  # the registry's newest version
    changed: simpy.Event = None  # succeeds when the registry publishes a version
    down: int | None = None  # the server out of the registry, if any
    adopted: int = 0
    skipped: int = 0
    t_last: float = 0.0
    multi: int = 0
    area_multi: float = 0.0  # ∫ multi dt
    area_any: float = 0.0  # ∫ [multi > 0] dt
    cache: dict = field(default_factory=dict)

    def __post_init__(self):
        self.downs = [None]
        self.version = [0] * self.sc.n_clients
        self.in_use = {0: self.sc.n_clients}
        self.changed = self.env.event()

    def owners_with_down(self, down: int | None) -> np.ndarray:
        """The owner (index in ``pool``) of every watched key while server ``down`` is out of the
        registry (``None``: every server in). Versions with the same server out share one array,
        so memory does not grow with the number of changes."""
        if down not in self.by_down:
            up = [srv for i, srv in enumerate(self.pool) if i != down]
            idx = np.array([i for i in range(len(self.pool)) if i != down])
            self.by_down[down] = idx[owner_indices(self.hashes, up, self.sc.scheme, self.sc.vnodes)]
        return self.by_down[down]

    def multi_count(self, versions: frozenset) -> int:
        """Keys whose owner differs between the serverList versions in use (versions with the same
        server out route alike, so only the distinct servers out count)."""
        downs = frozenset(self.downs[v] for v in versions)
        if downs not in self.cache:
            m = np.stack([self.owners_with_down(d) for d in downs])  # the count does not depend on the order
            self.cache[downs] = int(np.count_nonzero((m != m[0]).any(axis=0)))
        return self.cache[downs]

    def integrate(self, now: float):
        dt = min(now, self.sc.horizon_ms) - self.t_last
        if dt > 0:
            self.area_multi += dt * self.multi
            self.area_any += dt * (self.multi > 0)
            self.t_last += dt


def registry(env: simpy.Environment, s: TransientState):
    """Actor: operations + the registry. A server leaves; at the next change it comes back.
    Changes come as a Poisson stream (:class:`hotkeylab.sim.PoissonSource`, one gap at a time: the
    server that leaves is drawn from the same stream in between)."""
    sc = s.sc
    if sc.changes_per_min == 0:
        return
    gaps = sim.PoissonSource(s.rng, block=1, mean_ms=60_000.0 / sc.changes_per_min)
    while True:
        yield env.timeout(gaps.next_gap())
        s.down = int(s.rng.integers(sc.n_servers)) if s.down is None else None
        s.downs.append(s.down)
        s.latest += 1
        s.rec.count("changes", env.now)
        ev, s.changed = s.changed, env.event()
        ev.succeed()


def client(env: simpy.Environment, s: TransientState, i: int, phase: float):
    """Actor: one client; polls the registry every poll_ms (at its own phase)."""
    sc = s.sc
    while True:
        if s.version[i] == s.latest:
            yield s.changed
        if sc.poll_ms > 0:
            yield env.timeout((phase - env.now) % sc.poll_ms)  # wait for my next poll tick, in [0, P)
        new = s.latest
        s.integrate(env.now)
        old = s.version[i]
        s.skipped += new - old - 1
        s.adopted += 1
        s.in_use[old] -= 1
        if s.in_use[old] == 0:
            del s.in_use[old]
        s.in_use[new] = s.in_use.get(new, 0) + 1
        s.version[i] = new
        vs = frozenset(s.in_use)
        s.multi = s.multi_count(vs)
        s.rec.level("multi_keys", env.now, s.multi / sc.n_keys)
        s.rec.level("versions", env.now, len(vs))


def simulate_transient(scenario: TransientScenario = SEED_TRANSIENT, seed: int = 0) -> TransientRun:
    """SimPy: a registry publishing serverList versions, clients adopting them when they poll."""
    sc = scenario
    rng = sim.make_rng(seed)
    env = simpy.Environment()
    s = TransientState(
        sc=sc, env=env, rng=rng, pool=make_layout({"A": sc.n_servers}).servers,
        hashes=key_hashes(f"key:{i}" for i in range(sc.n_keys)),
        rec=sim.Recorder(sc.horizon_ms, sc.window_ms, counters=("changes",), levels=("multi_keys", "versions")),
    )
    s.rec.level("versions", 0.0, 1)
    env.process(registry(env, s))
    phases = rng.uniform(0.0, sc.poll_ms, size=sc.n_clients) if sc.poll_ms > 0 else np.zeros(sc.n_clients)
    for i in range(sc.n_clients):
        env.process(client(env, s, i, float(phases[i])))
    status = sim.run_bounded(env, sc.horizon_ms, sc.max_events)
    t_end = status.t_end_ms
    s.integrate(t_end)
    s.rec.close(t_end)
    span = max(s.t_last, 1e-12)
    published = s.latest * sc.n_clients
    pending = sum(s.latest - v for v in s.version)
    ledger = sim.Ledger(arrived=published, served=s.adopted, rejected=s.skipped, in_system=pending,
                        extra={"changes": s.latest})
    return TransientRun(
        scenario=sc, seed=seed,
        share_key_time=s.area_multi / span / sc.n_keys,
        share_time_any=s.area_any / span,
        n_changes=s.latest, windows=s.rec.arrays(), ledger=ledger, status=status,
    )
