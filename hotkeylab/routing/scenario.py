"""03 · The scenarios: serverList changes reaching polling clients, and owners sharing the row lock.

Each field's range is declared once, on the field (:func:`hotkeylab.validate.param`); the presets
quote the seed sentence they stand for, or say the value is ours. Times in ms, rates per s.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import numpy as np

from ..validate import check_fields, check_number, param

__all__ = [
    "SCHEMES", "ROUTINGS", "BATCHERS", "HOT_KEY", "SEED_BATCH_MS", "HEALTHY_SHARE",
    "MAX_EVENTS_TRANSIENT", "MAX_EVENTS_LOCK", "TransientScenario", "SEED_TRANSIENT", "LockScenario",
    "SEED_INCIDENT", "ONE_OWNER", "PER_OWNER",
]

SCHEMES = ("modulo", "consistent", "rendezvous")
#: ``region``: the seed's filterRegion; ``global``: every client uses the whole list;
#: ``primary``: every client uses the servers in the primary database's datacentre.
ROUTINGS = ("region", "global", "primary")
BATCHERS = ("shared", "per_owner")

HOT_KEY = "account:123"  # the seed's ``select * from t_account where account_id=123 for update``

#: Merged-commit (batch) time per owner's datacentre, ms. Seed: "在RTT为0.5ms的情况下平均耗时为16ms左右"
#: (same datacentre as the primary, B) and "在RTT为1.5ms的情况下一次合并提交平均耗时为27ms左右" (C).
SEED_BATCH_MS = {"B": 16.0, "C": 27.0}

#: A run is healthy when at least this share of its users is answered in time (as notebook 04).
HEALTHY_SHARE = 0.99

# Event caps: the upper end of each model's ``max_events``, so that one run at its cap ends in
# about 10-15 s on the 2-core CI machine even under load (measured there with other work running:
# about 22 µs per SimPy event for the lock model at 10^6 requests/s, 70 µs for the transient model
# with 10^5 polling clients). A run that reaches its cap ends with ``status.truncated``.
MAX_EVENTS_TRANSIENT = 200_000
MAX_EVENTS_LOCK = 600_000


def _sequence(name: str, value, what: str) -> tuple:
    """``value`` as a tuple; one str (which would iterate as its letters) or a non-iterable is refused."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ValueError(f"{name} must be a tuple of {what}, got {value!r}")
    return tuple(value)


def check_names(name: str, value) -> tuple[str, ...]:
    """A tuple of non-empty names: ``("B", "C")``, never the one string ``"BC"``."""
    names = _sequence(name, value, "non-empty names (str)")
    for i, v in enumerate(names):
        if not isinstance(v, str) or not v:
            raise ValueError(f"{name}[{i}] must be a non-empty str, got {v!r}")
    return names


def check_numbers(name: str, value, **bounds) -> tuple[float, ...]:
    """A tuple of numbers, each within ``bounds`` (as :func:`hotkeylab.validate.check_number`)."""
    return tuple(check_number(f"{name}[{i}]", v, **bounds)
                 for i, v in enumerate(_sequence(name, value, "numbers")))


# --------------------------------------------------------------------------- transient dual ownership
@dataclass(frozen=True)
class TransientScenario:
    """Clients learning serverList changes by polling the registry.

    ``n_servers`` servers in one datacentre (everyone routes on the same, global list, so the steady
    state has one owner per key); every ``60 000 / changes_per_min`` ms on average (Poisson) one
    server leaves, and at the next change it comes back (a restart, a deploy, an isolation). Each
    of ``n_clients`` clients polls the registry every ``poll_ms`` at its own phase, so it learns a
    change after a delay uniform in ``[0, poll_ms)``. ``n_keys`` keys are watched.
    """

    n_servers: int = param(7, kind="int", low=2, high=1000)
    n_clients: int = param(20, kind="int", low=1, high=100_000)
    n_keys: int = param(500, kind="int", low=1, high=1_000_000)
    poll_ms: float = param(2000.0, low=0.0)
    changes_per_min: float = param(1.0, low=0.0, high=1e5)
    scheme: str = param("modulo", kind="choice", choices=SCHEMES)
    vnodes: int = param(100, kind="int", low=1, high=10_000)
    horizon_ms: float = param(3_600_000.0, low=0.0, low_open=True)
    window_ms: float = param(60_000.0, low=0.0, low_open=True)
    max_events: int = param(MAX_EVENTS_TRANSIENT, kind="int", low=1, high=MAX_EVENTS_TRANSIENT)

    def __post_init__(self):
        check_fields(self)
        check_number("window_ms", self.window_ms, low=0.0, low_open=True, high=self.horizon_ms)


#: 7 servers (the seed layout's count), 20 clients, a change a minute, clients polling every 2 s
#: (our numbers: the seed only says "由于一致性同步原因看到不同的serverList" — clients can see
#: different lists while a change propagates).
SEED_TRANSIENT = TransientScenario()


# --------------------------------------------------------------------------- owners sharing the row lock
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

    rate_per_s: float = param(600.0, low=0.0, low_open=True, high=1e6)
    peak_factor: float = param(1.2, low=0.0, low_open=True, high=1000.0)
    peak_start_ms: float = param(30_000.0, low=0.0, allow_inf=True)
    owners_ms: tuple[float, ...] = (16.0, 27.0)
    owner_names: tuple[str, ...] = ("B owner", "C owner")
    max_rows: int = param(20, kind="int", low=1)
    max_wait_ms: float = param(20.0, low=0.0)
    timeout_ms: float = param(200.0, low=0.0, low_open=True, allow_inf=True)
    batchers: str = param("shared", kind="choice", choices=BATCHERS)
    split: tuple[float, ...] | None = None
    horizon_ms: float = param(120_000.0, low=0.0, low_open=True)
    window_ms: float = param(1000.0, low=0.0, low_open=True)
    max_events: int = param(MAX_EVENTS_LOCK, kind="int", low=1, high=MAX_EVENTS_LOCK)

    def __post_init__(self):
        check_fields(self)
        if not check_numbers("owners_ms", self.owners_ms, low=0.0, low_open=True):
            raise ValueError("owners_ms must list at least one owner's batch time, got ()")
        if len(check_names("owner_names", self.owner_names)) < len(self.owners_ms):
            raise ValueError(
                f"owner_names must name each of the {len(self.owners_ms)} owners, got {self.owner_names!r}"
            )
        if self.split is not None:
            if self.batchers != "per_owner":
                raise ValueError(f"split must be None unless batchers='per_owner', got {self.split!r}")
            shares = check_numbers("split", self.split, low=0.0, high=1.0)
            if len(shares) != len(self.owners_ms):
                raise ValueError(f"split must give one share per owner ({len(self.owners_ms)}), got {self.split!r}")
            if abs(sum(shares) - 1.0) > 1e-9:
                raise ValueError(f"split must sum to 1, got {self.split!r} (sum {sum(shares):g})")
        check_number("window_ms", self.window_ms, low=0.0, low_open=True, high=self.horizon_ms)

    @property
    def shares(self) -> tuple[float, ...]:
        """Each owner's share of the user requests (per_owner) or of the batches (shared)."""
        n = len(self.owners_ms)
        return tuple(float(s) for s in self.split) if self.split is not None else (1.0 / n,) * n


def region_rng(seed: int) -> np.random.Generator:
    """The stream that says which region each request comes from (apart from the arrival stream,
    so a split of 1.0/0.0 sees exactly the arrivals of one owner alone); both engines draw it."""
    return np.random.default_rng([seed, 3])


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
