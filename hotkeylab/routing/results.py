"""03 · What the runs return: :class:`TransientRun`, :class:`LockRun` and :class:`BandVerdict`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import sim
from .closed_form import dual_owner_share_closed
from .scenario import LockScenario, TransientScenario

__all__ = ["TransientRun", "TransientSummary", "LockRun", "LockSummary", "BandVerdict"]

#: The counted series of a :class:`LockRun`'s windows (both engines record them; plus ``queue``).
COUNTERS = ("offered", "goodput", "wasted", "batches", "commits")


@dataclass(frozen=True)
class TransientSummary(sim.Summary):
    """The key numbers of a :class:`TransientRun`."""

    n_changes: int
    """serverList changes over the horizon (count)"""
    share_key_time: float
    """time-average share of keys with more than one owner (0-1)"""
    share_key_time_closed_form: float
    """the same, closed form (:func:`dual_owner_share_closed`, 0-1)"""
    share_time_any: float
    """share of the time at least one watched key has more than one owner (0-1)"""


@dataclass
class TransientRun(sim.Run):
    """Result of :func:`simulate_transient`; summary :class:`TransientSummary`, in words :attr:`text`.

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

    Summary = TransientSummary

    def summarise(self) -> TransientSummary:
        sc = self.scenario
        closed = dual_owner_share_closed(sc.poll_ms, sc.changes_per_min, sc.n_clients, sc.n_servers, sc.scheme)
        return TransientSummary(self.n_changes, self.share_key_time, closed, self.share_time_any)

    @property
    def text(self) -> str:
        """The summary in one sentence."""
        s, sc = self.summary, self.scenario
        return (f"{s.n_changes} serverList changes in {sc.horizon_ms / 1000:.0f} s; a key had more than "
                f"one owner {100 * s.share_key_time:.2f}% of the time (closed form "
                f"{100 * s.share_key_time_closed_form:.2f}%); some watched key had more than one owner "
                f"{100 * s.share_time_any:.1f}% of the time.")

    def _repr_markdown_(self) -> str:
        return self.text


@dataclass(frozen=True)
class LockSummary(sim.Summary):
    """The key numbers of a :class:`LockRun`. No samples: ``None`` (:data:`hotkeylab.sim.NO_DATA`)."""

    users: int
    """user requests that arrived (count)"""
    served_share: float | None
    """users answered within the timeout / users who arrived (0-1; None if none arrived)"""
    timed_out: int
    """users whose client gave up (count)"""
    wasted: int
    """rows committed after their client gave up (count)"""
    queue_end: int
    """batches waiting for the lock at the end (batches)"""
    truncated: bool
    """the event cap stopped the run before the horizon"""


@dataclass
class LockRun(sim.Run):
    """Result of :func:`simulate_lock`; summary :class:`LockSummary`.

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

    Summary = LockSummary

    def summarise(self) -> LockSummary:
        led = self.ledger
        return LockSummary(led.arrived, led.served / led.arrived if led.arrived else None, led.timed_out,
                           int(led.extra.get("wasted", 0)), self.queue_end, self.status.truncated)

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

