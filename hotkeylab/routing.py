"""03 · Split routing: region-filtered server lists give one hot key two owners (seed 000).

The seed's RPC client routes a hot key like this::

    allServerList = getAllServerListFromRegistry()
    serverList    = filterRegion(allServerList)          # only servers in the client's datacentre
    targetServer  = serverList[hash(hotKey) % serverList.size()]

The list is sorted by ip, so every client *in one datacentre* picks the same owner. But a client
in datacentre B and a client in datacentre C filter to different lists, so a hot key gets one owner
per datacentre that has servers: locally unique is not globally unique.

This module has four parts, each with its closed form beside it:

1. **Routing** (pure functions): :class:`Server`, :class:`Layout`, :func:`filter_region`,
   :func:`server_list`, :func:`owner_indices` (schemes ``modulo`` | ``consistent`` |
   ``rendezvous``), :func:`owners_by_dc`, :func:`owner_counts`.
2. **Remapping** when one of n servers leaves: :func:`remap_fraction` (measured over many keys)
   against :func:`remap_fraction_closed` (``(n−1)/n`` for modulo, ``1/n`` for consistent and
   rendezvous hashing).
3. **Transient dual ownership** while clients learn a new serverList: :func:`simulate_transient`
   (SimPy: a registry process and one polling process per client) against
   :func:`dual_owner_share_closed`.
4. **Owners sharing the hot row lock**: :func:`simulate_lock` (SimPy: users, the group-commit
   batcher(s), one hot-key thread per owner, the row lock; ``engine="fast"`` computes the same run
   with numpy for sweeps) against
   :func:`capacity.alternating_owners_tps <hotkeylab.capacity.alternating_owners_tps>` and
   :func:`lock_throughput_closed`. Two batcher models: ``shared`` (the seed's simplification, one
   batcher dealing to the owners in turn) and ``per_owner`` (each owner batches its own region's
   clients, ``split`` between regions). :func:`lock_utilisation`, :func:`seed_band`,
   :func:`split_band` and :func:`timeout_share_closed` give where "dormant, then the peak tips it"
   holds; :func:`band_verdicts` counts it over seeds.

Hashes are stable across processes (BLAKE2b of the key's UTF-8 bytes), never Python's ``hash()``,
which is salted per process. Times are in milliseconds; rates per second.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import ipaddress
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import simpy

from . import capacity, sim
from .validate import check_choice, check_int, check_number

__all__ = [
    "SCHEMES",
    "SCHEME_STYLE",
    "ROUTINGS",
    "Server",
    "Layout",
    "make_layout",
    "SEED_LAYOUT",
    "SEED_BATCH_MS",
    "HOT_KEY",
    "stable_hash",
    "key_hashes",
    "sort_by_ip",
    "filter_region",
    "server_list",
    "owner_indices",
    "route",
    "owners_by_dc",
    "owner_counts",
    "isolate_owner",
    "deployment_check",
    "hot_key_tps",
    "remap_fraction",
    "remap_fraction_closed",
    "TransientScenario",
    "SEED_TRANSIENT",
    "TransientRun",
    "simulate_transient",
    "dual_owner_share_closed",
    "BATCHERS",
    "LockScenario",
    "SEED_INCIDENT",
    "ONE_OWNER",
    "PER_OWNER",
    "LockRun",
    "simulate_lock",
    "demand_batches_per_s",
    "owner_batch_rates",
    "lock_utilisation",
    "mean_commit_ms",
    "timeout_queue",
    "critical_rate_per_s",
    "timeout_share_closed",
    "healthy_rate_per_s",
    "seed_band",
    "split_band",
    "lock_throughput_closed",
    "HEALTHY_SHARE",
    "BandVerdict",
    "band_verdicts",
    "OwnerView",
    "owner_view",
    "plot_owner_view",
    "explore",
    "plot_band_map",
    "plot_transient",
    "explore_transient",
    "FixRow",
    "compare_fixes",
]

SCHEMES = ("modulo", "consistent", "rendezvous")
#: One colour and marker per hashing scheme (none of them is taken by plotting.COLORS' meanings).
SCHEME_STYLE = {
    "modulo": {"color": "#222222", "marker": "o"},
    "consistent": {"color": "#bcbd22", "marker": "s"},
    "rendezvous": {"color": "#7f7f7f", "marker": "^"},
}
#: ``region``: the seed's filterRegion; ``global``: every client uses the whole list;
#: ``primary``: every client uses the servers in the primary database's datacentre.
ROUTINGS = ("region", "global", "primary")

HOT_KEY = "account:123"  # the seed's ``select * from t_account where account_id=123 for update``

#: Merged-commit (batch) time per owner's datacentre, ms. Seed: "在RTT为0.5ms的情况下平均耗时为16ms左右"
#: (same datacentre as the primary, B) and "在RTT为1.5ms的情况下一次合并提交平均耗时为27ms左右" (C).
SEED_BATCH_MS = {"B": 16.0, "C": 27.0}


# =========================================================================== 1. routing
def stable_hash(text: str) -> int:
    """A 64-bit hash of ``text`` that is the same in every process and on every machine.

    Python's built-in ``hash()`` of a string is salted per process (``PYTHONHASHSEED``), so two
    clients would disagree (a Java client's ``String.hashCode`` is stable; the seed does not name its hash).
    """
    if not isinstance(text, str):
        raise ValueError(f"key must be a str, got {text!r}")
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")


def key_hashes(keys: Iterable[str]) -> np.ndarray:
    """:func:`stable_hash` of every key, as a ``uint64`` array."""
    return np.array([stable_hash(k) for k in keys], dtype=np.uint64)


def _mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: a fast, well-mixed 64-bit → 64-bit map (array in, array out)."""
    x = np.asarray(x, dtype=np.uint64).copy()
    x ^= x >> np.uint64(30)
    x *= np.uint64(0xBF58476D1CE4E5B9)
    x ^= x >> np.uint64(27)
    x *= np.uint64(0x94D049BB133111EB)
    x ^= x >> np.uint64(31)
    return x


@dataclass(frozen=True)
class Server:
    """One application server in the registry: a short ``name`` (for pictures), ``ip``, ``dc``."""

    name: str
    ip: str
    dc: str

    def __post_init__(self):
        try:
            ipaddress.ip_address(self.ip)
        except ValueError:
            raise ValueError(f"ip must be an IPv4/IPv6 address, got {self.ip!r}") from None
        if not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        if not self.dc:
            raise ValueError(f"dc must be a non-empty string, got {self.dc!r}")


def sort_by_ip(servers: Iterable[Server]) -> tuple[Server, ...]:
    """The seed's order: "serverList是按照ip排序的" (numerically, not as text)."""
    return tuple(sorted(servers, key=lambda s: ipaddress.ip_address(s.ip)))


@dataclass(frozen=True)
class Layout:
    """Who is registered where.

    ``servers``: every server in the registry; ``client_dcs``: datacentres with clients that call
    the hot key; ``primary_dc``: where the hot key's primary database lives; ``datacentres``: every
    known datacentre (a datacentre may have clients but no servers).
    """

    servers: tuple[Server, ...]
    client_dcs: tuple[str, ...]
    primary_dc: str
    datacentres: tuple[str, ...]

    def __post_init__(self):
        if not self.datacentres:
            raise ValueError("datacentres must list at least one datacentre, got ()")
        if len(set(self.datacentres)) != len(self.datacentres):
            raise ValueError(f"datacentres must be unique, got {self.datacentres!r}")
        if not self.servers:
            raise ValueError("servers must list at least one server, got an empty list")
        for s in self.servers:
            if not isinstance(s, Server):
                raise ValueError(f"servers must hold Server objects, got {s!r}")
            check_choice("server dc", s.dc, self.datacentres)
        names = [s.name for s in self.servers]
        ips = [s.ip for s in self.servers]
        if len(set(names)) != len(names):
            raise ValueError(f"server names must be unique, got {names!r}")
        if len(set(ips)) != len(ips):
            raise ValueError(f"server ips must be unique, got {ips!r}")
        if not self.client_dcs:
            raise ValueError("client_dcs must list at least one datacentre, got ()")
        for dc in self.client_dcs:
            check_choice("client_dc", dc, self.datacentres)
        check_choice("primary_dc", self.primary_dc, self.datacentres)

    def by_name(self, name: str) -> Server:
        for s in self.servers:
            if s.name == name:
                return s
        raise ValueError(f"name must be one of {[s.name for s in self.servers]!r}, got {name!r}")

    def count(self, dc: str) -> int:
        check_choice("dc", dc, self.datacentres)
        return sum(s.dc == dc for s in self.servers)

    def without(self, names: Iterable[str]) -> Layout:
        """The layout after taking ``names`` out of the registry (isolating them)."""
        drop = set(names)
        for n in drop:
            self.by_name(n)
        return replace(self, servers=tuple(s for s in self.servers if s.name not in drop))


def make_layout(
    counts: Mapping[str, int], *, client_dcs: Sequence[str] | None = None, primary_dc: str | None = None
) -> Layout:
    """Servers ``b1, b2, …`` in B, ``c1, …`` in C (ips ``10.<dc>.0.<11+i>``), one entry per datacentre.

    ``client_dcs`` defaults to every datacentre in ``counts``; ``primary_dc`` to the first one.
    """
    if not counts:
        raise ValueError("counts must name at least one datacentre, got {}")
    servers = []
    dcs = tuple(counts)
    for d, dc in enumerate(dcs):
        n = check_int(f"counts[{dc!r}]", counts[dc], low=0, high=10_000)
        base = ipaddress.ip_address(f"10.{d + 1}.0.0")
        for i in range(n):
            servers.append(Server(f"{dc.lower()}{i + 1}", str(base + 11 + i), dc))
    return Layout(
        servers=sort_by_ip(servers),
        client_dcs=tuple(client_dcs) if client_dcs is not None else dcs,
        primary_dc=dcs[0] if primary_dc is None else primary_dc,
        datacentres=dcs,
    )


#: The seed's layout. "对应hotKey的主库在机房B" (primary in B); "在机房C多扩容了几台机器" — a few
#: servers scaled into C by mistake (the seed does not give counts: 4 in B and 3 in C are ours);
#: "这两台机器分属于机房B和机房C" — clients in both B and C call the hot key.
SEED_LAYOUT = make_layout({"B": 4, "C": 3}, client_dcs=("B", "C"), primary_dc="B")


def filter_region(all_servers: Iterable[Server], dc: str) -> tuple[Server, ...]:
    """The seed's ``filterRegion(allServerList)`` for a client in ``dc``, sorted by ip."""
    return sort_by_ip(s for s in all_servers if s.dc == dc)


def server_list(layout: Layout, client_dc: str, routing: str = "region") -> tuple[Server, ...]:
    """The serverList a client in ``client_dc`` routes on, sorted by ip.

    ``region`` filters to the client's datacentre (the seed); ``primary`` to the primary's; both
    fall back to the whole list when that datacentre has no servers (our assumption: the seed
    does not say; it is what lets clients keep working when a region is emptied). ``global`` is
    the whole list.
    """
    check_choice("client_dc", client_dc, layout.datacentres)
    check_choice("routing", routing, ROUTINGS)
    everything = sort_by_ip(layout.servers)
    if routing == "global":
        return everything
    dc = client_dc if routing == "region" else layout.primary_dc
    return filter_region(layout.servers, dc) or everything


@functools.lru_cache(maxsize=4096)
def _ring(ips: tuple[str, ...], vnodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Consistent-hash ring: sorted vnode positions and the server index owning each."""
    pos = np.array([stable_hash(f"{ip}#{v}") for ip in ips for v in range(vnodes)], dtype=np.uint64)
    idx = np.repeat(np.arange(len(ips)), vnodes)
    order = np.argsort(pos, kind="stable")
    return pos[order], idx[order]


@functools.lru_cache(maxsize=4096)
def _server_hashes(ips: tuple[str, ...]) -> np.ndarray:
    return key_hashes(ips)


def owner_indices(
    hashes: np.ndarray, servers: Sequence[Server], scheme: str = "modulo", vnodes: int = 100
) -> np.ndarray:
    """Index into ``servers`` of the owner of each key hash.

    - ``modulo``: ``serverList[hash % len]`` (the seed);
    - ``consistent``: the first of ``vnodes`` virtual nodes per server clockwise on a hash ring;
    - ``rendezvous``: highest random weight, ``argmax_s mix(hash(key) ^ hash(server))``.
    """
    check_choice("scheme", scheme, SCHEMES)
    if len(servers) == 0:
        raise ValueError("servers must list at least one server, got an empty list")
    h = np.asarray(hashes, dtype=np.uint64)
    n = len(servers)
    if scheme == "modulo":
        return (h % np.uint64(n)).astype(np.int64)
    ips = tuple(s.ip for s in servers)
    if scheme == "consistent":
        v = check_int("vnodes", vnodes, low=1, high=10_000)
        pos, idx = _ring(ips, v)
        j = np.searchsorted(pos, h, side="left")
        j[j == len(pos)] = 0
        return idx[j].astype(np.int64)
    sh = _server_hashes(ips)
    scores = _mix64(h[:, None] ^ sh[None, :])
    return np.argmax(scores, axis=1).astype(np.int64)


def route(key: str, servers: Sequence[Server], scheme: str = "modulo", vnodes: int = 100) -> Server:
    """The server one client sends ``key`` to, given its serverList."""
    servers = tuple(servers)
    return servers[int(owner_indices(key_hashes([key]), servers, scheme, vnodes)[0])]


def owners_by_dc(
    layout: Layout, key: str = HOT_KEY, routing: str = "region", scheme: str = "modulo", vnodes: int = 100
) -> dict[str, Server]:
    """The owner of ``key`` as seen by the clients of each client datacentre."""
    return {dc: route(key, server_list(layout, dc, routing), scheme, vnodes) for dc in layout.client_dcs}


def owner_counts(
    layout: Layout, keys: Sequence[str], routing: str = "region", scheme: str = "modulo", vnodes: int = 100
) -> np.ndarray:
    """How many distinct servers process each key (one per distinct owner over client datacentres)."""
    keys = list(keys)
    if not keys:
        raise ValueError("keys must list at least one key, got an empty list")
    h = key_hashes(keys)
    cols = []
    for dc in layout.client_dcs:
        lst = server_list(layout, dc, routing)
        names = np.array([layout.servers.index(s) for s in lst])
        cols.append(names[owner_indices(h, lst, scheme, vnodes)])
    m = np.sort(np.stack(cols, axis=1), axis=1)
    return 1 + np.count_nonzero(np.diff(m, axis=1), axis=1)


def isolate_owner(
    layout: Layout, key: str = HOT_KEY, dc: str = "C", rounds: int = 1, routing: str = "region",
    scheme: str = "modulo", vnodes: int = 100,
) -> tuple[Layout, list[Server]]:
    """The seed's emergency: isolate the server that owns ``key`` for ``dc``'s clients, ``rounds`` times.

    Returns the final layout and the servers isolated, in order. Stops early rather than empty the
    registry (the last server is never isolated).
    """
    check_choice("dc", dc, layout.client_dcs)
    r = check_int("rounds", rounds, low=0, high=len(layout.servers))
    isolated: list[Server] = []
    for _ in range(r):
        if len(layout.servers) == 1:
            break
        victim = owners_by_dc(layout, key, routing, scheme, vnodes)[dc]
        isolated.append(victim)
        layout = layout.without([victim.name])
    return layout, isolated


def deployment_check(layout: Layout) -> tuple[Server, ...]:
    """The seed's 巡检: servers registered outside the primary database's datacentre."""
    return tuple(s for s in layout.servers if s.dc != layout.primary_dc)


def hot_key_tps(owners: Iterable[Server], batch_ms: Mapping[str, float] = SEED_BATCH_MS) -> float:
    """Merged commits/s on the hot row when the distinct ``owners`` take turns on its lock."""
    distinct = {s.name: s for s in owners}.values()
    times = []
    for s in distinct:
        if s.dc not in batch_ms:
            raise ValueError(f"batch_ms must give a batch time for datacentre {s.dc!r}, got {dict(batch_ms)!r}")
        times.append(batch_ms[s.dc])
    return capacity.alternating_owners_tps(times)


# =========================================================================== 2. remapping
def remap_fraction_closed(n_servers: int, scheme: str = "modulo") -> float:
    """Expected share of keys whose owner changes when one of ``n_servers`` leaves.

    Modulo: a key keeps its owner only if ``h mod n`` and ``h mod (n−1)`` point at the same server.
    ``n`` and ``n − 1`` are coprime, so the pair is uniform over ``n(n−1)`` combinations and exactly
    ``n − 1`` of them keep the owner: ``1 − 1/n = (n−1)/n`` move. Consistent and rendezvous
    hashing move only the leaving server's keys: ``1/n``.
    """
    n = check_int("n_servers", n_servers, low=2)
    check_choice("scheme", scheme, SCHEMES)
    return (n - 1) / n if scheme == "modulo" else 1.0 / n


def remap_fraction(
    n_servers: int, scheme: str = "modulo", n_keys: int = 20_000, leaving: int | None = None,
    vnodes: int = 100, seed: int = 0,
) -> float:
    """Measured share of ``n_keys`` keys whose owner changes when one of ``n_servers`` leaves.

    ``leaving`` is the index (in ip order) of the server that leaves; ``None`` averages over every
    choice. Keys are ``"key:<seed>:<i>"`` so different seeds draw different key samples.
    """
    n = check_int("n_servers", n_servers, low=2, high=1000)
    check_choice("scheme", scheme, SCHEMES)
    k = check_int("n_keys", n_keys, low=1, high=10_000_000)
    s = sim.check_seed(seed)
    layout = make_layout({"A": n})
    servers = layout.servers
    h = key_hashes(f"key:{s}:{i}" for i in range(k))
    before = owner_indices(h, servers, scheme, vnodes)
    choices = range(n) if leaving is None else [check_int("leaving", leaving, low=0, high=n - 1)]
    moved = []
    for r in choices:
        rest = servers[:r] + servers[r + 1 :]
        after = owner_indices(h, rest, scheme, vnodes)
        after = after + (after >= r)  # back to indices in the full list
        moved.append(np.mean(after != before))
    return float(np.mean(moved))


# =========================================================================== 3. transient dual ownership
@dataclass(frozen=True)
class TransientScenario:
    """Clients learning serverList changes by polling the registry.

    ``n_servers`` servers in one datacentre (everyone routes on the same, global list, so the steady
    state has one owner per key); every ``60 000 / changes_per_min`` ms on average (Poisson) one
    server leaves, and at the next change it comes back (a restart, a deploy, an isolation). Each
    of ``n_clients`` clients polls the registry every ``poll_ms`` at its own phase, so it learns a
    change after a delay uniform in ``[0, poll_ms)``. ``n_keys`` keys are watched.
    """

    n_servers: int = 7
    n_clients: int = 20
    n_keys: int = 500
    poll_ms: float = 2000.0
    changes_per_min: float = 1.0
    scheme: str = "modulo"
    vnodes: int = 100
    horizon_ms: float = 3_600_000.0
    window_ms: float = 60_000.0
    max_events: int = 2_000_000

    def __post_init__(self):
        object.__setattr__(self, "n_servers", check_int("n_servers", self.n_servers, low=2, high=1000))
        object.__setattr__(self, "n_clients", check_int("n_clients", self.n_clients, low=1, high=100_000))
        object.__setattr__(self, "n_keys", check_int("n_keys", self.n_keys, low=1, high=1_000_000))
        check_number("poll_ms", self.poll_ms, low=0.0)
        check_number("changes_per_min", self.changes_per_min, low=0.0, high=1e5)
        check_choice("scheme", self.scheme, SCHEMES)
        object.__setattr__(self, "vnodes", check_int("vnodes", self.vnodes, low=1, high=10_000))
        check_number("horizon_ms", self.horizon_ms, low=0.0, low_open=True)
        check_number("window_ms", self.window_ms, low=0.0, low_open=True, high=self.horizon_ms)
        object.__setattr__(self, "max_events", check_int("max_events", self.max_events, low=1))


#: 7 servers (the seed layout's count), 20 clients, a change a minute, clients polling every 2 s
#: (our numbers: the seed only says "由于一致性同步原因看到不同的serverList" — clients can see
#: different lists while a change propagates).
SEED_TRANSIENT = TransientScenario()


@dataclass
class TransientRun:
    """Result of :func:`simulate_transient`.

    ``share_key_time``: time-average share of keys with more than one owner (= for one key, the
    share of time it has more than one owner); ``share_time_any``: share of time at least one
    watched key has more than one owner; ``windows`` has ``t`` (s), ``multi_keys`` (share of keys
    with > 1 owner, time-averaged per window), ``versions`` (serverList versions in use) and
    ``changes`` (per second). The ledger counts (client, serverList version) notifications:
    ``served`` = adopted, ``rejected`` = skipped because a newer list had already arrived,
    ``in_system`` = not yet learned at the end.
    """

    scenario: TransientScenario
    seed: int
    share_key_time: float
    share_time_any: float
    n_changes: int
    windows: dict
    ledger: sim.Ledger
    status: sim.RunStatus

    def summary(self) -> str:
        sc = self.scenario
        closed = dual_owner_share_closed(sc.poll_ms, sc.changes_per_min, sc.n_clients, sc.n_servers, sc.scheme)
        return (f"{self.n_changes} serverList changes in {sc.horizon_ms / 1000:.0f} s; a key had more than "
                f"one owner {100 * self.share_key_time:.2f}% of the time (closed form {100 * closed:.2f}%); "
                f"some watched key had more than one owner {100 * self.share_time_any:.1f}% of the time.")

    def _repr_markdown_(self) -> str:
        return self.summary()


def dual_owner_share_closed(
    poll_ms: float, changes_per_min: float, n_clients: int, n_servers: int, scheme: str = "modulo"
) -> float:
    """Share of time a key has more than one owner, for rare changes (``λ · poll_ms ≪ 1``).

    After a change the clients switch at ``C`` independent times uniform in ``[0, P)``; two lists
    are in use from the first switch to the last, ``E[max − min] = P (C − 1) / (C + 1)``. A key has
    two owners in that window only if the change moved it (:func:`remap_fraction_closed`). So
    ``share ≈ λ · P (C − 1)/(C + 1) · remap``, with λ the change rate per ms.
    """
    p = check_number("poll_ms", poll_ms, low=0.0)
    lam = check_number("changes_per_min", changes_per_min, low=0.0) / 60_000.0
    c = check_int("n_clients", n_clients, low=1)
    return lam * p * (c - 1) / (c + 1) * remap_fraction_closed(n_servers, scheme)


def simulate_transient(scenario: TransientScenario = SEED_TRANSIENT, seed: int = 0) -> TransientRun:
    """SimPy: a registry publishing serverList versions, clients adopting them when they poll."""
    sc = scenario
    rng = sim.make_rng(seed)
    env = simpy.Environment()
    pool = make_layout({"A": sc.n_servers}).servers
    h = key_hashes(f"key:{i}" for i in range(sc.n_keys))
    rec = sim.Recorder(sc.horizon_ms, sc.window_ms, counters=("changes",), levels=("multi_keys", "versions"))

    # version v -> owner (index in pool) of every key
    owners: list[np.ndarray] = [owner_indices(h, pool, sc.scheme, sc.vnodes)]
    version = [0] * sc.n_clients
    in_use = {0: sc.n_clients}
    st = {"latest": 0, "changed": env.event(), "down": None, "adopted": 0, "skipped": 0,
          "t_last": 0.0, "multi": 0, "area_multi": 0.0, "area_any": 0.0}
    cache: dict[frozenset, int] = {}

    def multi_count(vs: frozenset) -> int:
        if vs not in cache:
            m = np.stack([owners[v] for v in sorted(vs)])
            cache[vs] = int(np.count_nonzero((m != m[0]).any(axis=0)))
        return cache[vs]

    def integrate(now: float):
        dt = min(now, sc.horizon_ms) - st["t_last"]
        if dt > 0:
            st["area_multi"] += dt * st["multi"]
            st["area_any"] += dt * (st["multi"] > 0)
            st["t_last"] += dt

    def registry(env):
        """Actor: operations + the registry. A server leaves; at the next change it comes back."""
        if sc.changes_per_min == 0:
            return
        mean_gap = 60_000.0 / sc.changes_per_min
        while True:
            yield env.timeout(rng.exponential(mean_gap))
            if st["down"] is None:
                st["down"] = int(rng.integers(sc.n_servers))
                up = [s for i, s in enumerate(pool) if i != st["down"]]
                idx = np.array([i for i in range(sc.n_servers) if i != st["down"]])
                owners.append(idx[owner_indices(h, up, sc.scheme, sc.vnodes)])
            else:
                st["down"] = None
                owners.append(owners[0])
            st["latest"] += 1
            rec.count("changes", env.now)
            ev, st["changed"] = st["changed"], env.event()
            ev.succeed()

    def client(env, i, phase):
        """Actor: one client; polls the registry every poll_ms (at its own phase)."""
        while True:
            if version[i] == st["latest"]:
                yield st["changed"]
            if sc.poll_ms > 0:
                yield env.timeout((phase - env.now) % sc.poll_ms)  # wait for my next poll tick, in [0, P)
            new = st["latest"]
            integrate(env.now)
            old = version[i]
            st["skipped"] += new - old - 1
            st["adopted"] += 1
            in_use[old] -= 1
            if in_use[old] == 0:
                del in_use[old]
            in_use[new] = in_use.get(new, 0) + 1
            version[i] = new
            vs = frozenset(in_use)
            st["multi"] = multi_count(vs)
            rec.level("multi_keys", env.now, st["multi"] / sc.n_keys)
            rec.level("versions", env.now, len(vs))

    rec.level("versions", 0.0, 1)
    env.process(registry(env))
    phases = rng.uniform(0.0, sc.poll_ms, size=sc.n_clients) if sc.poll_ms > 0 else np.zeros(sc.n_clients)
    for i in range(sc.n_clients):
        env.process(client(env, i, float(phases[i])))
    status = sim.run_bounded(env, sc.horizon_ms, sc.max_events)
    t_end = sc.horizon_ms if not status.truncated else status.t_end_ms
    integrate(t_end)
    rec.close(t_end)
    span = max(st["t_last"], 1e-12)
    published = st["latest"] * sc.n_clients
    pending = sum(st["latest"] - v for v in version)
    ledger = sim.Ledger(arrived=published, served=st["adopted"], rejected=st["skipped"], in_system=pending,
                        extra={"changes": st["latest"]})
    return TransientRun(
        scenario=sc, seed=seed,
        share_key_time=st["area_multi"] / span / sc.n_keys,
        share_time_any=st["area_any"] / span,
        n_changes=st["latest"], windows=rec.arrays(), ledger=ledger, status=status,
    )


# =========================================================================== 4. owners sharing the row lock
BATCHERS = ("shared", "per_owner")


@dataclass(frozen=True)
class LockScenario:
    """Owners of one hot key taking turns on its row lock (``owners_ms``: each owner's batch time).

    User requests arrive as a Poisson stream. A group-commit batcher closes a batch at
    ``max_rows`` requests or ``max_wait_ms`` after it opened. ``batchers`` says who batches:

    - ``"shared"`` (the seed's simplification, 两台机器交替获得热点锁各占一半处理批次): one batcher
      for all clients deals its batches to the owners in turn (B, C, B, C, …);
    - ``"per_owner"`` (what a region-filtered serverList does): each owner batches the requests
      of its own region's clients; ``split`` gives each region's share of the user requests
      (``None``: equal shares).

    Each owner's single hot-key thread commits its batches one at a time, holding the row lock
    for its batch time; the lock serves the owners' requests first come first served (S2PL: one
    merged commit at a time). A client gives up after ``timeout_ms`` (no retries here: notebook 04
    adds them); the server still commits its request (wasted work).
    """

    rate_per_s: float = 600.0
    peak_factor: float = 1.2
    peak_start_ms: float = 30_000.0
    owners_ms: tuple[float, ...] = (16.0, 27.0)
    owner_names: tuple[str, ...] = ("B owner", "C owner")
    max_rows: int = 20
    max_wait_ms: float = 20.0
    timeout_ms: float = 200.0
    batchers: str = "shared"
    split: tuple[float, ...] | None = None
    horizon_ms: float = 120_000.0
    window_ms: float = 1000.0
    max_events: int = 5_000_000

    def __post_init__(self):
        check_number("rate_per_s", self.rate_per_s, low=0.0, low_open=True, high=1e6)
        check_number("peak_factor", self.peak_factor, low=0.0, low_open=True, high=1000.0)
        check_number("peak_start_ms", self.peak_start_ms, low=0.0, allow_inf=True)
        if not self.owners_ms:
            raise ValueError("owners_ms must list at least one owner's batch time, got ()")
        for i, t in enumerate(self.owners_ms):
            check_number(f"owners_ms[{i}]", t, low=0.0, low_open=True)
        if len(self.owner_names) < len(self.owners_ms):
            raise ValueError(
                f"owner_names must name each of the {len(self.owners_ms)} owners, got {self.owner_names!r}"
            )
        object.__setattr__(self, "max_rows", check_int("max_rows", self.max_rows, low=1))
        check_number("max_wait_ms", self.max_wait_ms, low=0.0)
        check_number("timeout_ms", self.timeout_ms, low=0.0, low_open=True, allow_inf=True)
        check_choice("batchers", self.batchers, BATCHERS)
        if self.split is not None:
            if self.batchers != "per_owner":
                raise ValueError(f"split must be None unless batchers='per_owner', got {self.split!r}")
            if len(self.split) != len(self.owners_ms):
                raise ValueError(f"split must give one share per owner ({len(self.owners_ms)}), got {self.split!r}")
            for i, s in enumerate(self.split):
                check_number(f"split[{i}]", s, low=0.0, high=1.0)
            if abs(sum(self.split) - 1.0) > 1e-9:
                raise ValueError(f"split must sum to 1, got {self.split!r} (sum {sum(self.split):g})")
        check_number("horizon_ms", self.horizon_ms, low=0.0, low_open=True)
        check_number("window_ms", self.window_ms, low=0.0, low_open=True, high=self.horizon_ms)
        object.__setattr__(self, "max_events", check_int("max_events", self.max_events, low=1))

    @property
    def shares(self) -> tuple[float, ...]:
        """Each owner's share of the user requests (per_owner) or of the batches (shared)."""
        n = len(self.owners_ms)
        return tuple(float(s) for s in self.split) if self.split is not None else (1.0 / n,) * n


#: Seed 000 during the month-start peak with the second owner in C.
SEED_INCIDENT = LockScenario(
    rate_per_s=600.0,        # not in the seed: a calibration that reproduces it (notes/facts.md)
    peak_factor=1.2,         # "月初由于业务的原因会有一个流量高峰大概高峰期比平时多20%流量"
    peak_start_ms=30_000.0,  # ours: 30 s of normal traffic, then the peak
    owners_ms=(16.0, 27.0),  # "一个单次合并提交耗时27ms另一个单次合并提交耗时16ms"
    max_rows=20,             # "以固定条数(最高20条)"
    max_wait_ms=20.0,        # "固定时间间隔(最高20ms)的形式合并提交"
    timeout_ms=200.0,        # "图中以超时时间 200ms 为例"
    batchers="shared",       # "为简化计算这里假设两台机器交替获得热点锁各占一半处理批次"
)
#: The design: one owner, in the primary's datacentre B.
ONE_OWNER = replace(SEED_INCIDENT, owners_ms=(16.0,), owner_names=("B owner",))
#: Each owner batches its own region's clients; ``split`` (B's share, C's share) is ours to vary.
PER_OWNER = replace(SEED_INCIDENT, batchers="per_owner", split=(0.5, 0.5))


def demand_batches_per_s(scenario: LockScenario, peak: bool = True) -> float:
    """Batches/s the batchers make at normal load or at the peak (sum over owners)."""
    lam = scenario.rate_per_s * (scenario.peak_factor if peak else 1.0)
    return float(sum(owner_batch_rates(scenario, lam)))


# --------------------------------------------------------------------------- 4a. closed forms
def owner_batch_rates(scenario: LockScenario, rate_per_s: float) -> np.ndarray:
    """Batches/s each owner receives at ``rate_per_s`` user requests (``capacity.batcher_batch_rate``).

    shared: one batcher makes r(λ) batches/s and deals them in turn, r(λ)/n each;
    per_owner: owner j's own batcher sees s_j λ and makes r(s_j λ).
    """
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    sc = scenario
    if sc.batchers == "shared":
        n = len(sc.owners_ms)
        return np.full(n, capacity.batcher_batch_rate(lam, sc.max_rows, sc.max_wait_ms) / n)
    return np.array([capacity.batcher_batch_rate(s * lam, sc.max_rows, sc.max_wait_ms) for s in sc.shares])


def lock_utilisation(scenario: LockScenario, rate_per_s: float) -> float:
    """Share of each second the row lock would be held: ``ρ = Σ_j r_j N_j / 1000``.

    The lock is work-conserving (it idles only when no batch waits), so the owners keep up
    exactly when ρ < 1. For the seed's shared batcher ρ = r(λ) · mean(N) / 1000.
    """
    r = owner_batch_rates(scenario, rate_per_s)
    return float(np.dot(r, np.asarray(scenario.owners_ms)) / 1000.0)


def mean_commit_ms(scenario: LockScenario, rate_per_s: float) -> float:
    """Mean lock hold per merged commit, weighted by each owner's batches: N̄ = Σ r_j N_j / Σ r_j."""
    r = owner_batch_rates(scenario, rate_per_s)
    if r.sum() == 0:
        return float(np.mean(scenario.owners_ms))
    return float(np.dot(r, np.asarray(scenario.owners_ms)) / r.sum())


def timeout_queue(scenario: LockScenario, rate_per_s: float | None = None) -> float:
    """Batches ahead at which a new request times out: ``(M − T − N̄)/N̄`` (``capacity.timeout_queue_length``).

    N̄ is :func:`mean_commit_ms` at ``rate_per_s`` (default: the normal load); for the shared
    batcher it is the plain mean, (16 + 27)/2 = 21.5 ms.
    """
    lam = scenario.rate_per_s if rate_per_s is None else rate_per_s
    return capacity.timeout_queue_length(scenario.timeout_ms, mean_commit_ms(scenario, lam), scenario.max_wait_ms)


def critical_rate_per_s(scenario: LockScenario, duration_s: float = math.inf) -> float:
    """User requests/s at which a peak of ``duration_s`` seconds starts to time out.

    ``duration_s = inf``: the load where ρ = 1. For a finite peak, the backlog of lock work grows
    at (ρ − 1) s per s from an empty queue, and a request times out once it exceeds
    M − T − N̄; served stays ≥ 99% while that takes at least 99% of the peak, so the edge is
    ρ = 1 + (M − T − N̄) / (990 · duration_s).
    """
    d = check_number("duration_s", duration_s, low=0.0, low_open=True, allow_inf=True)
    sc = scenario

    def excess(lam):
        edge = 1.0
        if not math.isinf(d):
            slack = max(0.0, sc.timeout_ms - sc.max_wait_ms - mean_commit_ms(sc, lam))
            edge += slack / (990.0 * d)
        return lock_utilisation(sc, lam) - edge

    lo, hi = 1e-6, 1e6
    if excess(hi) < 0:
        return math.inf
    for _ in range(200):  # bisection: ρ(λ) increases with λ
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if excess(mid) < 0 else (lo, mid)
        if hi / lo < 1 + 1e-12:
            break
    return hi


def _cycle_scv(rate_per_s: float, max_rows: int, max_wait_ms: float) -> float:
    """Squared coefficient of variation of one batcher's time between batches:
    cycle = Exp(λ) (wait for the first row) + min(T, S_{K−1}) (the open window)."""
    from scipy.stats import gamma

    lam = rate_per_s / 1000.0  # per ms
    if lam <= 0:
        return 1.0
    n, t = max_rows - 1, max_wait_ms
    if n == 0:
        m1, m2 = 0.0, 0.0
    else:
        sf = gamma.sf(t, a=n, scale=1 / lam)
        m1 = t * sf + n / lam * gamma.cdf(t, a=n + 1, scale=1 / lam)
        m2 = t * t * sf + n * (n + 1) / lam**2 * gamma.cdf(t, a=n + 2, scale=1 / lam)
    var = 1 / lam**2 + (m2 - m1 * m1)
    return float(var / (1 / lam + m1) ** 2)


def timeout_share_closed(scenario: LockScenario, rate_per_s: float) -> float:
    """Share of requests that wait longer for the lock than M − T − N̄ allows, in steady state.

    Heavy-traffic (Kingman) approximation for one lock fed by the batchers: mean wait
    ``W = ρ/(1 − ρ) · (c_a² + c_s²)/2 · S``, with the wait roughly exponential, so the share
    beyond x = M − T − N̄ is about ``ρ · exp(−ρ x / W)``; 1 when ρ ≥ 1.

    - shared batcher: one batcher's n consecutive batches go to the n owners in turn, so count in
      cycles of n batches: service Σ N (no variation), arrivals c_a² = c² / n;
    - per-owner batchers: batches of owner j arrive with their own cycle's c_j² (a timer batcher
      on a thin stream is nearly Poisson); the merged stream has c_a² ≈ Σ_j (r_j / r) c_j²
      (the asymptotic method), and the service is N_j with probability r_j / r.
    """
    sc = scenario
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    rho = lock_utilisation(sc, lam)
    if rho >= 1.0:
        return 1.0
    r = owner_batch_rates(sc, lam)
    if rho == 0.0:
        return 0.0
    n_ms = np.asarray(sc.owners_ms, dtype=float)
    if sc.batchers == "shared":
        n = len(n_ms)
        ca2 = _cycle_scv(lam, sc.max_rows, sc.max_wait_ms) / n
        cs2, s_ms = 0.0, float(n_ms.sum())
    else:
        p = r / r.sum()
        ca2 = float(sum(pj * _cycle_scv(x * lam, sc.max_rows, sc.max_wait_ms)
                        for pj, x in zip(p, sc.shares, strict=True) if pj > 0))
        s_ms = float(p @ n_ms)
        cs2 = float(p @ n_ms**2) / s_ms**2 - 1.0
    wait = rho / (1.0 - rho) * (ca2 + cs2) / 2.0 * s_ms
    x = max(0.0, sc.timeout_ms - sc.max_wait_ms - mean_commit_ms(sc, lam))
    return float(rho * math.exp(-rho * x / wait)) if wait > 0 else 0.0


def healthy_rate_per_s(scenario: LockScenario) -> float:
    """Largest user load at which :func:`timeout_share_closed` stays below 1 − HEALTHY_SHARE (1%)."""
    hi = critical_rate_per_s(scenario)
    lo = 0.0
    while hi - lo > 1e-4 * hi:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if timeout_share_closed(scenario, mid) < 1.0 - HEALTHY_SHARE else (lo, mid)
    return lo


def seed_band(scenario: LockScenario, duration_s: float = math.inf, variability: bool = False) -> tuple[float, float]:
    """Normal loads λ that reproduce "dormant, then the peak tips it": ``[λ*/peak, λ*)``.

    Dormant: the normal load fits (λ < λ*); tipped: the peak does not (peak × λ ≥ λ*). λ* is the
    fluid edge ρ = 1 (:func:`critical_rate_per_s`, for a peak of ``duration_s``), or with
    ``variability=True`` the load where 1% of requests time out in steady state
    (:func:`healthy_rate_per_s`). The band is empty when ``peak_factor <= 1``.
    """
    star = healthy_rate_per_s(scenario) if variability else critical_rate_per_s(scenario, duration_s)
    return (star / scenario.peak_factor, star) if scenario.peak_factor > 1 else (star, star)


def lock_throughput_closed(demands_per_s: Sequence[float], owners_ms: Sequence[float]) -> np.ndarray:
    """Merged commits/s each owner gets from one first-come-first-served row lock.

    Each owner's thread holds at most one request on the lock, so while several owners are
    backlogged the lock serves them in turn, one commit each. Owners whose demand is below that
    equal share get all of it; the backlogged ones share the rest equally (water-filling): find x
    with ``Σ_{r_j < x} r_j N_j + x Σ_{r_j ≥ x} N_j = 1000`` and give owner j ``min(r_j, x)``. When
    ``Σ r_j N_j ≤ 1000`` everyone gets its demand. Two backlogged owners of 16 and 27 ms: x =
    1000/43 each, 46.5 in all (``capacity.alternating_owners_tps``).
    """
    r = np.array([check_number(f"demands_per_s[{i}]", v, low=0.0) for i, v in enumerate(demands_per_s)])
    n = np.array([check_number(f"owners_ms[{i}]", v, low=0.0, low_open=True) for i, v in enumerate(owners_ms)])
    if len(r) != len(n) or len(r) == 0:
        raise ValueError(f"demands_per_s and owners_ms must be non-empty and the same length, got {len(r)} and {len(n)}")
    if np.dot(r, n) <= 1000.0:
        return r
    order = np.argsort(r)
    used = 0.0
    for k, j in enumerate(order):
        x = (1000.0 - used) / n[order[k:]].sum()
        if r[j] >= x:
            return np.minimum(r, x)
        used += r[j] * n[j]
    return r  # not reached: Σ r N > 1000 means some owner is backlogged


def split_band(scenario: LockScenario, rate_per_s: float, owner: int = 1,
               variability: bool = False) -> tuple[float, float]:
    """Per-owner batchers at normal load ``rate_per_s``: the shares of user requests from ``owner``'s
    region (the rest from owner 0's) for which "dormant, then the peak tips it" holds.

    ``(c_lo, c_hi)``: with share c the normal load fits while c < c_hi and the peak does not fit
    once c ≥ c_lo (ρ grows with the slow owner's share). Searched over c in [0, 0.5]; ``(nan, nan)``
    when no share in that range reproduces the seed.
    """
    sc = replace(scenario, batchers="per_owner", split=None) if scenario.batchers != "per_owner" else scenario
    n = len(sc.owners_ms)
    check_int("owner", owner, low=1, high=n - 1)
    lam = check_number("rate_per_s", rate_per_s, low=0.0, low_open=True)

    def at(c):
        shares = [0.0] * n
        shares[0], shares[owner] = 1.0 - c, c
        return replace(sc, split=tuple(shares))

    def star(c):
        return healthy_rate_per_s(at(c)) if variability else critical_rate_per_s(at(c))

    def edge(load):  # smallest c whose edge load is at or below `load`
        lo, hi = 0.0, 0.5
        if star(hi) > load:
            return math.nan
        if star(lo) <= load:
            return 0.0
        while hi - lo > 1e-5:
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if star(mid) > load else (lo, mid)
        return hi

    c_lo, c_hi = edge(lam * sc.peak_factor), edge(lam)
    if math.isnan(c_lo) or (not math.isnan(c_hi) and c_hi <= c_lo):
        return (math.nan, math.nan)
    return (c_lo, 0.5 if math.isnan(c_hi) else c_hi)


#: A run is healthy when at least this share of its users is answered in time (as notebook 04).
HEALTHY_SHARE = 0.99


@dataclass(frozen=True)
class BandVerdict:
    """Verdicts over seeds at one normal load: ``dormant`` seeds healthy at normal load,
    ``tipped`` seeds not healthy at the peak load, ``both`` seeds with both (the seed's story)."""

    rate_per_s: float
    n: int
    dormant: int
    tipped: int
    both: int
    served_normal: tuple[float, float]  # min, max served share over seeds
    served_peak: tuple[float, float]

    @property
    def text(self) -> str:
        near = " (near its edge)" if 0 < self.both < self.n else ""
        return f"dormant then tipped in {self.both}/{self.n} seeds{near}"


def band_verdicts(scenario: LockScenario, rates_per_s: Iterable[float], seeds: int = 20,
                  duration_s: float = 60.0) -> list[BandVerdict]:
    """Simulate (fast engine) ``duration_s`` seconds at each normal load λ and at peak × λ, from an
    empty queue, for ``seeds`` seeds: the verdicts of "dormant, then the peak tips it"."""
    k = check_int("seeds", seeds, low=1, high=10_000)
    d = check_number("duration_s", duration_s, low=1.0, high=3600.0)
    out = []
    for lam in rates_per_s:
        lam = check_number("rate_per_s", lam, low=0.0, low_open=True, high=1e5)
        shares = {}
        for which, x in (("normal", lam), ("peak", lam * scenario.peak_factor)):
            sc = replace(scenario, rate_per_s=x, peak_factor=1.0, peak_start_ms=math.inf, horizon_ms=1000.0 * d,
                         window_ms=1000.0)
            shares[which] = np.array([simulate_lock(sc, seed=s, engine="fast").served_share for s in range(k)])
        ok_n = shares["normal"] >= HEALTHY_SHARE
        bad_p = shares["peak"] < HEALTHY_SHARE
        out.append(BandVerdict(lam, k, int(ok_n.sum()), int(bad_p.sum()), int((ok_n & bad_p).sum()),
                               (float(shares["normal"].min()), float(shares["normal"].max())),
                               (float(shares["peak"].min()), float(shares["peak"].max()))))
    return out


@dataclass
class LockRun:
    """Result of :func:`simulate_lock`.

    ``windows``: ``t`` (s), ``offered`` (requests/s), ``goodput`` (committed within the timeout,
    per s), ``wasted`` (committed after the client gave up, per s), ``batches`` (closed by the
    batchers, per s), ``commits`` (merged commits, per s), ``queue`` (batches waiting for the lock,
    time-averaged). ``intervals``: ``(owner, start_ms, end_ms)`` of every lock hold.
    """

    scenario: LockScenario
    seed: int
    windows: dict
    ledger: sim.Ledger
    intervals: list
    status: sim.RunStatus
    queue_end: int

    @property
    def served_share(self) -> float:
        """Users answered within the timeout / users who arrived."""
        return self.ledger.served / self.ledger.arrived if self.ledger.arrived else 1.0

    def rate_per_s(self, series: str, t0_s: float, t1_s: float) -> float:
        """Mean of a per-second series over windows starting in ``[t0_s, t1_s)``."""
        t = self.windows["t"]
        m = (t >= t0_s) & (t < t1_s)
        if not m.any():
            raise ValueError(f"t0_s..t1_s must cover at least one window, got {t0_s}..{t1_s}")
        return float(np.mean(self.windows[series][m]))


def _region_rng(seed: int) -> np.random.Generator:
    """The stream that says which region each request comes from (apart from the arrival stream,
    so a split of 1.0/0.0 sees exactly the arrivals of one owner alone)."""
    return np.random.default_rng([seed, 3])


def simulate_lock(scenario: LockScenario = SEED_INCIDENT, seed: int = 0, engine: str = "simpy") -> LockRun:
    """Users → group-commit batcher(s) → owners' hot-key threads → the row lock.

    ``engine="simpy"`` is the reference below, one process per actor; ``"fast"``
    (:func:`_simulate_lock_fast`) computes the same run with numpy and one loop over batches, for
    sweeps over many seeds: the same windows, ledger and intervals (a test checks).
    """
    check_choice("engine", engine, ("simpy", "fast"))
    if engine == "fast":
        return _simulate_lock_fast(scenario, seed)
    sc = scenario
    rng = sim.make_rng(seed)
    env = simpy.Environment()
    row_lock = simpy.Resource(env, capacity=1)  # S2PL: held from SELECT … FOR UPDATE to COMMIT
    n_own = len(sc.owners_ms)
    per_owner = sc.batchers == "per_owner"
    cum = np.cumsum(sc.shares)
    regions = _region_rng(seed)
    stores = [simpy.Store(env) for _ in range(n_own)]
    rec = sim.Recorder(sc.horizon_ms, sc.window_ms,
                       counters=("offered", "goodput", "wasted", "batches", "commits"), levels=("queue",))
    led = sim.Ledger()
    # one open batch per batcher: its rows' arrival times and the events "first row" and "full"
    bat = [{"open": [], "opened": env.event(), "full": env.event()} for _ in range(n_own if per_owner else 1)]
    st = {"queue": 0, "turn": 0, "dispatched": 0}  # dispatched: rows in closed batches not yet committed
    intervals: list = []

    def users(env):
        """Actor: upstream clients calling the hot key (Poisson; +peak_factor from peak_start_ms)."""
        while True:
            rate = sc.rate_per_s * (sc.peak_factor if env.now >= sc.peak_start_ms else 1.0)
            yield env.timeout(rng.exponential(1000.0 / rate))
            led.arrived += 1
            rec.count("offered", env.now)
            b = bat[min(int(np.searchsorted(cum, regions.random(), side="right")), n_own - 1)] if per_owner else bat[0]
            b["open"].append(env.now)
            if not b["opened"].triggered:
                b["opened"].succeed()
            if len(b["open"]) >= sc.max_rows and not b["full"].triggered:
                b["full"].succeed()

    def batcher(env, j):
        """Actor: group commit — close a batch at max_rows requests or max_wait_ms after it opened.
        Shared: deal it to the owners in turn; per_owner: hand it to owner j."""
        b = bat[j]
        while True:
            yield b["opened"]
            if not b["full"].triggered:
                yield env.timeout(sc.max_wait_ms) | b["full"]
            batch, rest = b["open"][: sc.max_rows], b["open"][sc.max_rows :]
            b["open"], b["opened"], b["full"] = rest, env.event(), env.event()
            if rest:
                b["opened"].succeed()
                if len(rest) >= sc.max_rows:
                    b["full"].succeed()
            rec.count("batches", env.now)
            st["queue"] += 1
            st["dispatched"] += len(batch)
            rec.level("queue", env.now, st["queue"])
            if per_owner:
                stores[j].put(batch)
            else:
                stores[st["turn"]].put(batch)  # "两台机器交替获得热点锁各占一半处理批次"
                st["turn"] = (st["turn"] + 1) % n_own

    def owner(env, j):
        """Actor: owner j's single hot-key thread — one merged commit at a time under the row lock."""
        while True:
            batch = yield stores[j].get()
            with row_lock.request() as req:
                yield req
                st["queue"] -= 1
                rec.level("queue", env.now, st["queue"])
                start = env.now
                yield env.timeout(sc.owners_ms[j])
            intervals.append((sc.owner_names[j], start, env.now))
            rec.count("commits", env.now)
            for t in batch:
                if env.now - t <= sc.timeout_ms:
                    led.served += 1
                    rec.count("goodput", env.now)
                else:
                    led.timed_out += 1
                    rec.count("wasted", env.now)
            st["dispatched"] -= len(batch)

    env.process(users(env))
    for j in range(len(bat)):
        env.process(batcher(env, j))
    for j in range(n_own):
        env.process(owner(env, j))
    status = sim.run_bounded(env, sc.horizon_ms, sc.max_events)
    rec.close(status.t_end_ms if status.truncated else sc.horizon_ms)
    led.in_system = sum(len(b["open"]) for b in bat) + st["dispatched"]
    led.extra["wasted"] = led.timed_out
    return LockRun(scenario=sc, seed=seed, windows=rec.arrays(), ledger=led, intervals=intervals,
                   status=status, queue_end=st["queue"])


def _arrivals(sc: LockScenario, rng: np.random.Generator) -> np.ndarray:
    """Arrival times (ms) up to the horizon, drawn exactly as the SimPy ``users`` actor draws them:
    the same standard exponentials in the same order, scaled by the rate in force at the previous
    arrival, summed one after another."""
    buf = np.empty(0)
    pos = 0
    out = []
    t = 0.0
    phases = ((1000.0 / sc.rate_per_s, sc.peak_start_ms),
              (1000.0 / (sc.rate_per_s * sc.peak_factor), math.inf))
    for scale, until in phases:
        while t < until and t <= sc.horizon_ms:
            m = int(min(1e6, (min(sc.horizon_ms, until) - t) / scale * 1.05)) + 256
            if len(buf) - pos < m:
                buf = np.concatenate((buf[pos:], rng.standard_exponential(m)))
                pos = 0
            ts = np.cumsum(np.concatenate(([t], buf[pos : pos + m] * scale)))[1:]
            # an arrival whose predecessor came at or after `until` belongs to the next phase
            stop = min(sc.horizon_ms, until)
            k = int(np.searchsorted(ts, stop, side="left" if stop == until else "right"))
            take = min(k + 1, m)
            out.append(ts[:take])
            pos += take
            t = float(ts[take - 1])
    a = np.concatenate(out) if out else np.empty(0)
    return a[a <= sc.horizon_ms]


def _batches(arr: np.ndarray, max_rows: int, max_wait_ms: float) -> tuple[np.ndarray, np.ndarray]:
    """Group commit over sorted arrival times: (close time, index of the first row) of every
    batch. A batch opens at its first row and closes at its ``max_rows``-th row or ``max_wait_ms``
    after opening, whichever comes first (the caller drops batches closing after the horizon)."""
    closes, starts = [], []
    a = arr.tolist()
    i, n = 0, len(a)
    while i < n:
        a0 = a[i]
        j = bisect.bisect_right(a, a0 + max_wait_ms, i)
        if j - i >= max_rows:
            j = i + max_rows
            closes.append(a[j - 1])
        else:
            closes.append(a0 + max_wait_ms)
        starts.append(i)
        i = j
    return np.asarray(closes, dtype=float), np.asarray(starts, dtype=np.int64)


def _simulate_lock_fast(sc: LockScenario, seed: int) -> LockRun:
    """The same model as the SimPy engine, computed with numpy and one loop over batches.

    Arrivals and region draws use the same random streams in the same order; each batcher's
    batches follow from the arrival times; the row lock grants, among the owners whose thread has
    a batch and is free, the earliest request (first come, first served). ``status.events`` counts
    arrivals, batches and commits; ``max_events`` is not applied (the work is linear in arrivals).
    """
    s = sim.check_seed(seed)
    rng = sim.make_rng(s)
    n_own = len(sc.owners_ms)
    arr = _arrivals(sc, rng)
    if sc.batchers == "per_owner":
        region = np.minimum(np.searchsorted(np.cumsum(sc.shares), _region_rng(s).random(len(arr)), side="right"),
                            n_own - 1)
        groups = [np.flatnonzero(region == j) for j in range(n_own)]
    else:
        groups = [np.arange(len(arr))]
    # batches of every batcher: close time, owner; row_batch[i] = the batch of arrival i
    closes_all, owner_all, row_batch_all = [], [], np.full(len(arr), -1, dtype=np.int64)
    n_b = 0
    for g, idx in enumerate(groups):
        closes, starts = _batches(arr[idx], sc.max_rows, sc.max_wait_ms)
        keep = int(np.searchsorted(closes, sc.horizon_ms, side="right"))  # closes are increasing
        sizes = np.diff(np.append(starts, len(idx)))[:keep]
        n_rows = int(sizes.sum())
        row_batch_all[idx[:n_rows]] = n_b + np.repeat(np.arange(keep), sizes)
        closes_all.append(closes[:keep])
        owner_all.append(np.full(keep, g))
        n_b += keep
    b_close_arr = np.concatenate(closes_all)
    order = np.argsort(b_close_arr, kind="stable")
    rank = np.empty(n_b, dtype=np.int64)
    rank[order] = np.arange(n_b)
    b_close_arr = b_close_arr[order]
    b_close = b_close_arr.tolist()
    row_batch = np.where(row_batch_all >= 0, rank[np.maximum(row_batch_all, 0)], -1)
    if sc.batchers == "per_owner":
        b_owner = np.concatenate(owner_all)[order].tolist()
    else:
        b_owner = [k % n_own for k in range(n_b)]  # "两台机器交替获得热点锁各占一半处理批次"
    # the owners' threads and the row lock
    queues = [[k for k in range(n_b) if b_owner[k] == j] for j in range(n_own)]
    head = [0] * n_own
    free = [0.0] * n_own
    lock_free = 0.0
    grant_l = [math.inf] * n_b
    end_l = [math.inf] * n_b
    owners_ms = [float(x) for x in sc.owners_ms]
    horizon = sc.horizon_ms
    while True:
        best, best_req = -1, math.inf
        for j in range(n_own):
            if head[j] < len(queues[j]):
                c = b_close[queues[j][head[j]]]
                req = c if c > free[j] else free[j]
                if req < best_req:
                    best, best_req = j, req
        if best < 0:
            break
        k = queues[best][head[best]]
        start = best_req if best_req > lock_free else lock_free
        if start > horizon:
            break
        grant_l[k] = start
        end_l[k] = lock_free = free[best] = start + owners_ms[best]
        head[best] += 1
    grant, end = np.asarray(grant_l), np.asarray(end_l)
    rec = sim.Recorder(sc.horizon_ms, sc.window_ms,
                       counters=("offered", "goodput", "wasted", "batches", "commits"), levels=("queue",))
    rec.times("offered").extend(arr.tolist())
    rec.times("batches").extend(b_close)
    done = end <= sc.horizon_ms
    rec.times("commits").extend(end[done].tolist())
    # queue level: +1 when a batch closes, −1 when its owner is granted the lock
    ev_t = np.concatenate((b_close_arr, grant[np.isfinite(grant)]))
    ev_d = np.concatenate((np.ones(n_b), -np.ones(int(np.isfinite(grant).sum()))))
    o = np.lexsort((-ev_d, ev_t))
    levels = np.cumsum(ev_d[o])
    level = rec.level
    for t, v in zip(ev_t[o].tolist(), levels.astype(np.int64).tolist(), strict=True):
        level("queue", t, v)
    end_done = np.where(done, end, np.inf)
    row_end = np.where(row_batch >= 0, end_done[np.maximum(row_batch, 0)], np.inf) if n_b else np.full(len(arr), np.inf)
    committed = np.isfinite(row_end)
    in_time = committed & (row_end - arr <= sc.timeout_ms)
    late = committed & ~in_time
    rec.times("goodput").extend(row_end[in_time].tolist())
    rec.times("wasted").extend(row_end[late].tolist())
    rec.close(sc.horizon_ms)
    led = sim.Ledger(arrived=len(arr), served=int(in_time.sum()), timed_out=int(late.sum()),
                     in_system=int((~committed).sum()), extra={"wasted": int(late.sum())})
    fin = np.flatnonzero(done)
    fin = fin[np.argsort(end[fin], kind="stable")]
    intervals = [(sc.owner_names[b_owner[k]], grant_l[k], end_l[k]) for k in fin.tolist()]
    queue_end = int(n_b - np.isfinite(grant).sum())
    status = sim.RunStatus(t_end_ms=sc.horizon_ms, events=int(len(arr) + n_b + done.sum()), truncated=False)
    return LockRun(scenario=sc, seed=s, windows=rec.arrays(), ledger=led, intervals=intervals, status=status,
                   queue_end=queue_end)


# =========================================================================== widget and fixes
@dataclass
class OwnerView:
    """Who owns the hot key, seen from each client datacentre, and what that does to the lock."""

    layout: Layout
    isolated: tuple[Server, ...]
    routing: str
    scheme: str
    key: str
    owners: dict
    lists: dict
    tps: float
    demand: float
    load_per_s: float

    @property
    def n_owners(self) -> int:
        return len({s.name for s in self.owners.values()})

    @property
    def growth(self) -> float:
        """Queue growth in batches/s (``capacity.queue_growth_rate`` without retries)."""
        return capacity.queue_growth_rate(self.demand, 0.0, self.tps)

    def summary(self) -> str:
        who = ", ".join(f"clients in {dc} → {s.name} ({s.dc})" for dc, s in self.owners.items())
        verdict = ("keeps up" if self.growth < 0 else f"backlog grows by {self.growth:.1f} batches/s")
        return (f"{self.n_owners} owner(s): {who}. Lock: {self.tps:.1f} merged commits/s; demand at "
                f"{self.load_per_s:.0f} requests/s: {self.demand:.1f} batches/s → {verdict}.")

    def _repr_markdown_(self) -> str:
        return self.summary()


def owner_view(
    layout: Layout = SEED_LAYOUT, *, isolate_rounds: int = 0, isolate_dc: str = "C", routing: str = "region",
    scheme: str = "modulo", load_per_s: float = 720.0, key: str = HOT_KEY,
    batch_ms: Mapping[str, float] = SEED_BATCH_MS, vnodes: int = 100,
) -> OwnerView:
    """Owners of ``key`` per client datacentre after isolating ``isolate_dc``'s owner ``isolate_rounds`` times."""
    load = check_number("load_per_s", load_per_s, low=0.0, low_open=True, high=1e6)
    after, isolated = isolate_owner(layout, key, isolate_dc, isolate_rounds, routing, scheme, vnodes)
    owners = owners_by_dc(after, key, routing, scheme, vnodes)
    lists = {dc: server_list(after, dc, routing) for dc in after.client_dcs}
    return OwnerView(
        layout=layout, isolated=tuple(isolated), routing=routing, scheme=scheme, key=key, owners=owners,
        lists=lists, tps=hot_key_tps(owners.values(), batch_ms),
        demand=capacity.batcher_batch_rate(load), load_per_s=load,
    )


_DC_COLOR = {"B": "owner_b", "C": "owner_c"}


def plot_owner_view(view: OwnerView, ax=None):
    """The owner picture: one row of servers per datacentre (ip order), isolated ones crossed out;
    the server each client datacentre sends the hot key to is outlined in that datacentre's colour,
    with an arrow from a "clients in …" tag (the first client datacentre's tags above, the second's
    below)."""
    from matplotlib.patches import FancyBboxPatch

    from . import plotting

    lay = view.layout
    dcs = [dc for dc in lay.datacentres if lay.count(dc) > 0 or dc in lay.client_dcs]
    width = max(1, max(lay.count(dc) for dc in dcs))
    gap = 1.6  # vertical distance between datacentre rows
    if ax is None:
        _, ax = plotting.new_figure(height=1.2 + 1.5 * len(dcs))
    iso = {s.name for s in view.isolated}
    pos = {}
    for r, dc in enumerate(dcs):
        y = -r * gap
        label = f"datacentre {dc}" + ("\n(primary DB)" if dc == lay.primary_dc else "")
        ax.text(-0.75, y, label, ha="right", va="center", fontsize=9, color="#555555")
        if lay.count(dc) == 0:
            ax.text(0, y, "no servers", ha="left", va="center", fontsize=9, color="#999999")
        for i, s in enumerate(filter_region(lay.servers, dc)):
            pos[s.name] = (i, y)
            gone = s.name in iso
            ax.add_patch(FancyBboxPatch((i - 0.38, y - 0.28), 0.76, 0.56, boxstyle="round,pad=0.02",
                                        fc="#eeeeee" if gone else "white", ec="#999999", lw=1))
            ax.text(i, y + 0.07, s.name, ha="center", va="center", fontsize=10,
                    color="#aaaaaa" if gone else "black")
            ax.text(i, y - 0.15, s.ip, ha="center", va="center", fontsize=6.5, color="#888888")
            if gone:
                ax.plot([i - 0.3, i + 0.3], [y - 0.22, y + 0.22], color="#888888", lw=1.5)
                ax.plot([i - 0.3, i + 0.3], [y + 0.22, y - 0.22], color="#888888", lw=1.5)
    cycle = ["owner_b", "owner_c", "retries", "queue"]
    for k, dc in enumerate(lay.client_dcs):
        s = view.owners[dc]
        color = plotting.COLORS[_DC_COLOR.get(dc, cycle[k % len(cycle)])]
        x, y = pos[s.name]
        pad = 0.04 * (k + 1)
        ax.add_patch(FancyBboxPatch((x - 0.38 - pad, y - 0.28 - pad), 0.76 + 2 * pad, 0.56 + 2 * pad,
                                    boxstyle="round,pad=0.02", fc="none", ec=color, lw=2.5))
        side = 1 if k % 2 == 0 else -1
        ty = y + side * (0.85 + 0.3 * (k // 2))
        ax.annotate(f"clients in {dc}", xy=(x, y + side * (0.32 + pad)), xytext=(x, ty),
                    ha="center", va="bottom" if side > 0 else "top", fontsize=9, color=color,
                    arrowprops=dict(arrowstyle="->", color=color, lw=2, shrinkA=1, shrinkB=1))
    ax.set_xlim(-2.6, width - 0.4)
    ax.set_ylim(-(len(dcs) - 1) * gap - 1.2, 1.2)
    ax.set_aspect("equal")
    ax.axis("off")
    return ax


def explore(
    n_b: int = 4, n_c: int = 3, isolate_rounds: int = 0, scheme: str = "modulo", routing: str = "region",
    load_per_s: float = 720.0,
) -> OwnerView:
    """Widget callback: draw the owner picture for ``n_b`` servers in B and ``n_c`` in C and
    return the :class:`OwnerView` (its summary says whether the lock keeps up at ``load_per_s``)."""
    import matplotlib.pyplot as plt

    nb = check_int("n_b", n_b, low=0, high=12)
    nc = check_int("n_c", n_c, low=0, high=12)
    if nb + nc == 0:
        raise ValueError("n_b + n_c must be at least 1 (servers to route to), got 0")
    layout = make_layout({"B": nb, "C": nc}, client_dcs=("B", "C"), primary_dc="B")
    rounds = min(check_int("isolate_rounds", isolate_rounds, low=0), nb + nc - 1)
    view = owner_view(layout, isolate_rounds=rounds, routing=routing, scheme=scheme, load_per_s=load_per_s)
    plot_owner_view(view)
    plt.show()
    return view


def plot_band_map(shared: LockScenario, per_owner: LockScenario, shared_verdicts: Sequence[BandVerdict],
                  per_owner_verdicts: Sequence[tuple[float, BandVerdict]], axes=None):
    """Where "dormant, then the peak tips it" holds, closed forms against the simulation.

    Left, the seed's shared batcher: normal load (linear, zoomed) against the share of seeds that
    show both (markers), with the closed-form band (shaded: with queueing variability; dashed: the
    fluid edges). Right, per-owner batchers: normal load against the share of users in C's region,
    both axes logarithmic, the same two bands, and each simulated point annotated with its count
    of seeds. Dotted: above it, even one owner in B would not carry the peak."""
    from . import plotting

    if axes is None:
        _, axes = plotting.new_figure(1, 2, height=3.6, gridspec_kw={"width_ratios": [1, 3]}, layout="constrained")
    left, right = axes
    shade = dict(color=plotting.COLORS["owner_c"], alpha=0.3, lw=0)
    fluid = dict(color=plotting.COLORS["formula"], ls="--", lw=1.2)
    one_limit = critical_rate_per_s(replace(shared, owners_ms=shared.owners_ms[:1],
                                            owner_names=shared.owner_names[:1])) / shared.peak_factor
    lo, hi = seed_band(shared, variability=True)
    left.axhspan(lo, hi, **shade)
    for y in seed_band(shared):
        left.axhline(y, **fluid)
    left.plot([v.both / v.n for v in shared_verdicts], [v.rate_per_s for v in shared_verdicts], "o",
              color=plotting.COLORS["capacity"], ms=6)
    for v in shared_verdicts:
        left.annotate(f"{v.both}/{v.n}", (v.both / v.n, v.rate_per_s), xytext=(4, 2), textcoords="offset points",
                      fontsize=7, ha="right" if v.both > v.n / 2 else "left")
    loads = [v.rate_per_s for v in shared_verdicts]
    left.set_ylim(min(min(loads), lo) * 0.96, max(max(loads), hi) * 1.04)
    left.set_xlim(-0.08, 1.08)
    left.set_xticks([0, 0.5, 1])
    left.set_xlabel("share of seeds with both")
    left.set_ylabel("normal load (user requests/s)")
    left.text(0.95, 0.03, "shared batcher\n(the seed's)", transform=left.transAxes, va="bottom", ha="right",
              fontsize=8, bbox=dict(facecolor="white", alpha=0.85, lw=0))
    cs = np.geomspace(1e-3, 0.7, 40)
    var = np.array([seed_band(replace(per_owner, split=(1 - c, c)), variability=True) for c in cs])
    flu = np.array([seed_band(replace(per_owner, split=(1 - c, c))) for c in cs])
    right.fill_between(cs, var[:, 0], var[:, 1], **shade, label="closed form with queueing variability")
    right.plot(cs, flu[:, 0], **fluid, label="fluid closed form (ρ = 1 at normal load or at the peak)")
    right.plot(cs, flu[:, 1], **fluid)
    right.axhline(one_limit, color=plotting.COLORS["formula"], ls=":", lw=1.5,
                  label="above: one owner in B would not carry the peak either")
    for c, v in per_owner_verdicts:
        right.plot([c], [v.rate_per_s], "o", color=plotting.COLORS["capacity"], ms=6)
        right.annotate(f"{v.both}/{v.n}", (c, v.rate_per_s), xytext=(5, 3), textcoords="offset points", fontsize=7)
    right.plot([], [], "o", color=plotting.COLORS["capacity"], ms=6,
               label="simulated: seeds dormant, then tipped (of 20)")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlim(cs[0], cs[-1])
    right.set_ylim(40, 2000)
    right.set_ylabel("normal load (user requests/s)")
    right.set_xlabel("share of users in C's region (per-owner batchers)")
    right.text(0.97, 0.97, "per-owner batchers", transform=right.transAxes, va="top", ha="right", fontsize=8)
    right.legend(loc="lower left", fontsize=7)
    return axes


def plot_transient(run: TransientRun, ax=None):
    """Share of keys with more than one owner over time (per window), the run's mean and the
    closed form (:func:`dual_owner_share_closed`) as dashed lines."""
    from . import plotting

    sc = run.scenario
    if ax is None:
        _, ax = plotting.new_figure()
    w = run.windows
    t = w["t"]
    ax.step(t, w["multi_keys"], where="post", color=plotting.COLORS["owner_c"], lw=2,
            label="keys with > 1 owner (share, per window)")
    ax.axhline(run.share_key_time, color=plotting.COLORS["owner_c"], ls=":", lw=1.5, label="simulated mean")
    closed = dual_owner_share_closed(sc.poll_ms, sc.changes_per_min, sc.n_clients, sc.n_servers, sc.scheme)
    ax.axhline(closed, color=plotting.COLORS["formula"], ls="--", lw=1.5, label="closed form")
    plotting.decorate(ax, xlabel="time (s)", ylabel="share of keys", xlim=(0, sc.horizon_ms / 1000), legend=False)
    ax.set_ylim(0, 1.0)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, fontsize=8)
    return ax


def explore_transient(poll_ms: float = 2000.0, changes_per_min: float = 2.0, scheme: str = "modulo",
                      seed: int = 0) -> TransientRun:
    """Widget callback: 10 minutes of serverList changes reaching 20 polling clients (windows of
    1 s); draws :func:`plot_transient` and returns the run (its summary prints the shares)."""
    import matplotlib.pyplot as plt

    sc = replace(SEED_TRANSIENT, poll_ms=poll_ms, changes_per_min=changes_per_min, scheme=scheme,
                 horizon_ms=600_000.0, window_ms=1000.0)
    run = simulate_transient(sc, seed)
    plot_transient(run)
    plt.show()
    return run


@dataclass(frozen=True)
class FixRow:
    """One fix evaluated over many hot keys."""

    name: str
    mean_owners: float
    share_split: float       # keys with more than one owner
    share_in_primary: float  # keys whose only owner is in the primary's datacentre
    min_tps: float           # worst key's merged commits/s
    share_backlog: float     # keys whose lock capacity is below the demand
    moved_on_isolation: float  # keys that change owner when one server of the primary's DC leaves
    #                            (averaged over which one)


def compare_fixes(
    layout: Layout = SEED_LAYOUT, n_keys: int = 2000, load_per_s: float = 720.0,
    batch_ms: Mapping[str, float] = SEED_BATCH_MS, vnodes: int = 100,
) -> list[FixRow]:
    """The seed's routing and its fixes, each evaluated on ``n_keys`` hot keys of ``layout``."""
    k = check_int("n_keys", n_keys, low=1, high=1_000_000)
    demand = capacity.batcher_batch_rate(check_number("load_per_s", load_per_s, low=0.0, low_open=True))
    keys = [f"account:{i}" for i in range(k)]
    checked = layout.without(s.name for s in deployment_check(layout))
    cases = [
        ("seed: filterRegion lists", layout, "region", "modulo"),
        ("route on the global list", layout, "global", "modulo"),
        ("pin owners to the primary's DC", layout, "primary", "modulo"),
        ("deployment check (巡检) removes C", checked, "region", "modulo"),
        ("pin + consistent hashing", layout, "primary", "consistent"),
    ]
    h = key_hashes(keys)
    rows = []
    for name, lay, routing, scheme in cases:
        per_dc = []
        for dc in lay.client_dcs:
            lst = server_list(lay, dc, routing)
            per_dc.append([lst[i] for i in owner_indices(h, lst, scheme, vnodes)])
        counts = owner_counts(lay, keys, routing, scheme, vnodes)
        tps = np.array([hot_key_tps([col[i] for col in per_dc], batch_ms) for i in range(k)])
        in_primary = np.array([all(col[i].dc == lay.primary_dc for col in per_dc) and counts[i] == 1
                               for i in range(k)])
        # isolate each server of the primary's DC in turn; share of keys that move (any client DC)
        moved_shares = []
        for victim in filter_region(lay.servers, lay.primary_dc):
            after = lay.without([victim.name])
            moved = np.zeros(k, dtype=bool)
            for j, dc in enumerate(lay.client_dcs):
                lst = server_list(after, dc, routing)
                new = [lst[i] for i in owner_indices(h, lst, scheme, vnodes)]
                moved |= np.array([a.name != b.name for a, b in zip(per_dc[j], new, strict=True)])
            moved_shares.append(moved.mean())
        rows.append(FixRow(name, float(counts.mean()), float(np.mean(counts > 1)), float(in_primary.mean()),
                           float(tps.min()), float(np.mean(tps < demand)), float(np.mean(moved_shares))))
    return rows

