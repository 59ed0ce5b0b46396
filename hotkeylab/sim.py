"""The small shared simulation kernel.

- :func:`make_rng`: a seeded numpy ``Generator`` (same seed, same stream).
- :func:`run_bounded`: run a SimPy environment to a horizon with an event cap, so any parameters,
  unstable ones included, end in bounded time.
- :class:`Recorder`: equal-width time windows; counters (events per window) and levels
  (time-weighted mean per window, e.g. queue length).
- :class:`Ledger`: ``arrived = served + timed_out + rejected + in_system``; ``check()`` raises
  :class:`LedgerError` if anything is unaccounted for.

Times are in milliseconds throughout; :attr:`Recorder.t_s` gives window starts in seconds for plots.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .validate import check_int, check_number

__all__ = ["make_rng", "check_seed", "RunStatus", "run_bounded", "Recorder", "Ledger", "LedgerError"]


def check_seed(seed) -> int:
    """A seed must be a non-negative integer (so a run is reproducible)."""
    return check_int("seed", seed, low=0)


def make_rng(seed) -> np.random.Generator:
    """numpy's default generator (PCG64) for ``seed``: same seed, same stream."""
    return np.random.default_rng(check_seed(seed))


@dataclass(frozen=True)
class RunStatus:
    """How a bounded run ended: at ``t_end_ms`` after ``events`` events; ``truncated`` if the
    event cap stopped it before the horizon."""

    t_end_ms: float
    events: int
    truncated: bool


def run_bounded(env, until_ms: float, max_events: int) -> RunStatus:
    """Step a SimPy ``env`` until ``until_ms`` or ``max_events`` events, whichever comes first.

    ``env.run(until=…)`` alone never returns if a model schedules events faster than time moves
    (for example a zero-delay retry loop). The cap makes every run end.
    """
    until = check_number("until_ms", until_ms, low=0.0)
    cap = check_int("max_events", max_events, low=1)
    n = 0
    while n < cap:
        t_next = env.peek()
        if t_next > until or math.isinf(t_next):
            break
        env.step()
        n += 1
    truncated = n >= cap and env.peek() <= until
    return RunStatus(t_end_ms=float(env.now), events=n, truncated=truncated)


class Recorder:
    """Windowed time series over ``[0, horizon_ms)`` in windows of ``window_ms``.

    ``count(name, t_ms, k)`` adds ``k`` to the window holding ``t_ms`` (events outside the horizon
    are ignored); hot loops may append times straight to the list ``times(name)`` (and weights to
    ``weights(name)`` for weighted counters). ``level(name, t_ms, value)`` says a level changed to
    ``value`` at ``t_ms`` and accumulates its time-weighted mean per window. ``arrays()`` returns a
    dict of equal-length numpy arrays with ``t`` (window start, seconds); counters are per second
    when ``per_second=True``. Events are binned once, at the end, with numpy.
    """

    def __init__(self, horizon_ms: float, window_ms: float, counters=(), levels=(), weighted=()):
        self.horizon_ms = check_number("horizon_ms", horizon_ms, low=0.0, low_open=True)
        self.window_ms = check_number("window_ms", window_ms, low=0.0, low_open=True)
        if self.window_ms > self.horizon_ms:
            raise ValueError(
                f"window_ms must be <= horizon_ms ({self.horizon_ms:g}), got {self.window_ms:g}"
            )
        self.n = int(math.ceil(self.horizon_ms / self.window_ms - 1e-9))
        self._times = {name: [] for name in (*counters, *weighted)}
        self._weights = {name: [] for name in weighted}
        self._area = {name: [0.0] * self.n for name in levels}
        self._last = {name: (0.0, 0.0) for name in levels}  # (t_ms, value)

    def times(self, name: str) -> list:
        """The list of event times of counter ``name`` (append to it in hot loops)."""
        return self._times[name]

    def weights(self, name: str) -> list:
        """The list of weights of weighted counter ``name``, parallel to ``times(name)``."""
        return self._weights[name]

    def count(self, name: str, t_ms: float, k: float = 1.0) -> None:
        if name in self._weights:
            self._weights[name].append(k)
        elif k != 1.0:
            raise ValueError(f"counter {name!r} is not weighted; k must be 1, got {k!r}")
        self._times[name].append(t_ms)

    def level(self, name: str, t_ms: float, value: float) -> None:
        t0, v0 = self._last[name]
        if v0 and t_ms > t0:
            self._spread(self._area[name], t0, min(t_ms, self.horizon_ms), v0)
        self._last[name] = (t_ms, value)

    def _spread(self, area, t0, t1, v):
        # Step window by window by index: recomputing the index from an edge (i + 1) * w can
        # round back to i and never advance.
        w = self.window_ms
        i = int(t0 // w)
        while t0 < t1 and i < self.n:
            end = min(t1, (i + 1) * w)
            if end > t0:
                area[i] += v * (end - t0)
                t0 = end
            i += 1

    def close(self, t_end_ms: float | None = None) -> None:
        """Extend every level's last value to ``t_end_ms`` (default: the horizon)."""
        t_end = self.horizon_ms if t_end_ms is None else min(t_end_ms, self.horizon_ms)
        for name, (t0, v0) in self._last.items():
            if v0 and t_end > t0:
                self._spread(self._area[name], t0, t_end, v0)
            self._last[name] = (max(t0, t_end), v0)

    def arrays(self, per_second: bool = True) -> dict[str, np.ndarray]:
        w = self.window_ms
        out = {"t": np.arange(self.n) * w / 1000.0}
        scale = 1000.0 / w if per_second else 1.0
        for name, ts in self._times.items():
            t = np.asarray(ts, dtype=float)
            idx = np.floor_divide(t, w)
            inside = (idx >= 0) & (idx < self.n)
            wts = np.asarray(self._weights[name], dtype=float)[inside] if name in self._weights else None
            counts = np.bincount(idx[inside].astype(np.int64), weights=wts, minlength=self.n)
            out[name] = counts.astype(float) * scale
        for name, a in self._area.items():
            out[name] = np.asarray(a) / w
        return out


class LedgerError(AssertionError):
    """Raised by :meth:`Ledger.check` when the books do not balance."""


@dataclass
class Ledger:
    """Where every arrival went: ``arrived = served + timed_out + rejected + in_system``.

    Models may keep extra named counts in ``extra`` (e.g. ``wasted`` work); only the four terms
    above take part in the balance.
    """

    arrived: int = 0
    served: int = 0
    timed_out: int = 0
    rejected: int = 0
    in_system: int = 0
    extra: dict = field(default_factory=dict)

    def balance(self) -> int:
        """``arrived − (served + timed_out + rejected + in_system)``: zero when nothing is lost."""
        return self.arrived - (self.served + self.timed_out + self.rejected + self.in_system)

    def check(self) -> Ledger:
        terms = (self.arrived, self.served, self.timed_out, self.rejected, self.in_system)
        if any(x < 0 for x in terms):
            raise LedgerError(f"negative count in ledger: {self}")
        if self.balance() != 0:
            raise LedgerError(
                f"ledger does not balance: arrived {self.arrived} != served {self.served} + "
                f"timed_out {self.timed_out} + rejected {self.rejected} + in_system "
                f"{self.in_system} (off by {self.balance()})"
            )
        return self

    def as_dict(self) -> dict:
        d = {
            "arrived": self.arrived,
            "served": self.served,
            "timed_out": self.timed_out,
            "rejected": self.rejected,
            "in_system": self.in_system,
        }
        d.update(self.extra)
        return d
