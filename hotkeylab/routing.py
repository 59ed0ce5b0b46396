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
   batcher, one hot-key thread per owner, the row lock) against
   :func:`capacity.alternating_owners_tps <hotkeylab.capacity.alternating_owners_tps>`.

Hashes are stable across processes (BLAKE2b of the key's UTF-8 bytes), never Python's ``hash()``,
which is salted per process. Times are in milliseconds; rates per second.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
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
    "LockScenario",
    "SEED_INCIDENT",
    "ONE_OWNER",
    "LockRun",
    "simulate_lock",
    "demand_batches_per_s",
    "OwnerView",
    "owner_view",
    "plot_owner_view",
    "explore",
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
    clients would disagree; the seed's Java clients use ``String.hashCode``, which is stable.
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
        check_int("n_servers", self.n_servers, low=2, high=1000)
        check_int("n_clients", self.n_clients, low=1, high=100_000)
        check_int("n_keys", self.n_keys, low=1, high=1_000_000)
        check_number("poll_ms", self.poll_ms, low=0.0)
        check_number("changes_per_min", self.changes_per_min, low=0.0, high=1e5)
        check_choice("scheme", self.scheme, SCHEMES)
        check_int("vnodes", self.vnodes, low=1, high=10_000)
        check_number("horizon_ms", self.horizon_ms, low=0.0, low_open=True)
        check_number("window_ms", self.window_ms, low=0.0, low_open=True, high=self.horizon_ms)
        check_int("max_events", self.max_events, low=1)


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
@dataclass(frozen=True)
class LockScenario:
    """Owners of one hot key taking turns on its row lock (``owners_ms``: each owner's batch time).

    User requests arrive as a Poisson stream; one group-commit batcher closes a batch at
    ``max_rows`` requests or ``max_wait_ms`` after it opened; batches go to the owners in turn
    (B, C, B, C, …); each owner's single hot-key thread commits its batches one at a time, holding
    the row lock for its batch time. A client gives up after ``timeout_ms`` (no retries here:
    notebook 04 adds them); the server still commits its request (wasted work).
    """

    rate_per_s: float = 600.0
    peak_factor: float = 1.2
    peak_start_ms: float = 30_000.0
    owners_ms: tuple[float, ...] = (16.0, 27.0)
    owner_names: tuple[str, ...] = ("B owner", "C owner")
    max_rows: int = 20
    max_wait_ms: float = 20.0
    timeout_ms: float = 200.0
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
        check_int("max_rows", self.max_rows, low=1)
        check_number("max_wait_ms", self.max_wait_ms, low=0.0)
        check_number("timeout_ms", self.timeout_ms, low=0.0, low_open=True, allow_inf=True)
        check_number("horizon_ms", self.horizon_ms, low=0.0, low_open=True)
        check_number("window_ms", self.window_ms, low=0.0, low_open=True, high=self.horizon_ms)
        check_int("max_events", self.max_events, low=1)


#: Seed 000 during the month-start peak with the second owner in C.
SEED_INCIDENT = LockScenario(
    rate_per_s=600.0,        # not in the seed: a calibration that reproduces it (notes/facts.md)
    peak_factor=1.2,         # "月初由于业务的原因会有一个流量高峰大概高峰期比平时多20%流量"
    peak_start_ms=30_000.0,  # ours: 30 s of normal traffic, then the peak
    owners_ms=(16.0, 27.0),  # "一个单次合并提交耗时27ms另一个单次合并提交耗时16ms"
    max_rows=20,             # "以固定条数(最高20条)"
    max_wait_ms=20.0,        # "固定时间间隔(最高20ms)的形式合并提交"
    timeout_ms=200.0,        # "图中以超时时间 200ms 为例"
)
#: The design: one owner, in the primary's datacentre B.
ONE_OWNER = replace(SEED_INCIDENT, owners_ms=(16.0,), owner_names=("B owner",))


def demand_batches_per_s(scenario: LockScenario, peak: bool = True) -> float:
    """Batches/s the batcher makes (``capacity.batcher_batch_rate``): most close on the timer."""
    lam = scenario.rate_per_s * (scenario.peak_factor if peak else 1.0)
    return capacity.batcher_batch_rate(lam, scenario.max_rows, scenario.max_wait_ms)


@dataclass
class LockRun:
    """Result of :func:`simulate_lock`.

    ``windows``: ``t`` (s), ``offered`` (requests/s), ``goodput`` (committed within the timeout,
    per s), ``wasted`` (committed after the client gave up, per s), ``batches`` (closed by the
    batcher, per s), ``commits`` (merged commits, per s), ``queue`` (batches waiting for the lock,
    time-averaged). ``intervals``: ``(owner, start_ms, end_ms)`` of every lock hold.
    """

    scenario: LockScenario
    seed: int
    windows: dict
    ledger: sim.Ledger
    intervals: list
    status: sim.RunStatus
    queue_end: int

    def rate_per_s(self, series: str, t0_s: float, t1_s: float) -> float:
        """Mean of a per-second series over windows starting in ``[t0_s, t1_s)``."""
        t = self.windows["t"]
        m = (t >= t0_s) & (t < t1_s)
        if not m.any():
            raise ValueError(f"t0_s..t1_s must cover at least one window, got {t0_s}..{t1_s}")
        return float(np.mean(self.windows[series][m]))


def simulate_lock(scenario: LockScenario = SEED_INCIDENT, seed: int = 0) -> LockRun:
    """SimPy: users → group-commit batcher → owners' hot-key threads → the row lock."""
    sc = scenario
    rng = sim.make_rng(seed)
    env = simpy.Environment()
    row_lock = simpy.Resource(env, capacity=1)  # S2PL: held from SELECT … FOR UPDATE to COMMIT
    n_own = len(sc.owners_ms)
    stores = [simpy.Store(env) for _ in range(n_own)]
    rec = sim.Recorder(sc.horizon_ms, sc.window_ms,
                       counters=("offered", "goodput", "wasted", "batches", "commits"), levels=("queue",))
    led = sim.Ledger()
    st = {"open": [], "opened": env.event(), "full": env.event(), "queue": 0, "turn": 0,
          "dispatched": 0}  # requests in closed batches not yet committed
    intervals: list = []

    def users(env):
        """Actor: upstream clients calling the hot key (Poisson; +peak_factor from peak_start_ms)."""
        while True:
            rate = sc.rate_per_s * (sc.peak_factor if env.now >= sc.peak_start_ms else 1.0)
            yield env.timeout(rng.exponential(1000.0 / rate))
            led.arrived += 1
            rec.count("offered", env.now)
            st["open"].append(env.now)
            if not st["opened"].triggered:
                st["opened"].succeed()
            if len(st["open"]) >= sc.max_rows and not st["full"].triggered:
                st["full"].succeed()

    def batcher(env):
        """Actor: group commit — close a batch at max_rows requests or max_wait_ms after it opened."""
        while True:
            yield st["opened"]
            if not st["full"].triggered:
                yield env.timeout(sc.max_wait_ms) | st["full"]
            batch, rest = st["open"][: sc.max_rows], st["open"][sc.max_rows :]
            st["open"], st["opened"], st["full"] = rest, env.event(), env.event()
            if rest:
                st["opened"].succeed()
                if len(rest) >= sc.max_rows:
                    st["full"].succeed()
            rec.count("batches", env.now)
            st["queue"] += 1
            st["dispatched"] += len(batch)
            rec.level("queue", env.now, st["queue"])
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
    env.process(batcher(env))
    for j in range(n_own):
        env.process(owner(env, j))
    status = sim.run_bounded(env, sc.horizon_ms, sc.max_events)
    rec.close(status.t_end_ms if status.truncated else sc.horizon_ms)
    led.in_system = len(st["open"]) + st["dispatched"]
    led.extra["wasted"] = led.timed_out
    return LockRun(scenario=sc, seed=seed, windows=rec.arrays(), ledger=led, intervals=intervals,
                   status=status, queue_end=st["queue"])


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

