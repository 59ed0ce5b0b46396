"""03 · What the runs return: :class:`TransientRun`, :class:`LockRun` and :class:`BandVerdict`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import sim
from .closed_form import dual_owner_share_closed
from .scenario import LockScenario, TransientScenario

__all__ = ["TransientRun", "LockRun", "BandVerdict"]

#: The counted series of a :class:`LockRun`'s windows (both engines record them; plus ``queue``).
COUNTERS = ("offered", "goodput", "wasted", "batches", "commits")


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

