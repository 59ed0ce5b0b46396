"""Server lists and hashing: who owns a key, as each client datacentre sees it (pure functions).

The seed's client: ``serverList = filterRegion(allServerList)`` (sorted by ip), then
``serverList[hash(hotKey) % serverList.size()]``. :func:`owner_indices` also gives consistent and
rendezvous hashing; :func:`remap_fraction` measures how many keys move when one server leaves;
:func:`owner_view` gives the hot key's owners per client datacentre and what they do to the lock.
Hashes are stable across processes (BLAKE2b of the key's UTF-8 bytes), never Python's ``hash()``.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from .. import capacity, sim
from ..validate import check_choice, check_int, check_number
from .scenario import HOT_KEY, ROUTINGS, SCHEMES, SEED_BATCH_MS, check_names

__all__ = [
    "stable_hash", "key_hashes", "Server", "Layout", "make_layout", "SEED_LAYOUT", "sort_by_ip",
    "filter_region", "server_list", "owner_indices", "route", "owners_by_dc", "owner_counts",
    "isolate_owner", "deployment_check", "hot_key_tps", "remap_fraction", "OwnerView", "owner_view",
]


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
        check_names("datacentres", self.datacentres)
        check_names("client_dcs", self.client_dcs)
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
        client_dcs=check_names("client_dcs", client_dcs) if client_dcs is not None else dcs,
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


# --------------------------------------------------------------------------- the owner view
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
