"""The small shared simulation kernel.

- :func:`make_rng`: a seeded numpy ``Generator`` (same seed, same stream).
- :func:`run_bounded`: run a SimPy environment to a horizon with an event cap, so any parameters,
  unstable ones included, end in bounded time.
- :class:`Recorder`: equal-width time windows; counters (events per window) and levels
  (time-weighted mean per window, e.g. queue length).
- :class:`Ledger`: ``arrived = served + timed_out + rejected + in_system``; ``check()`` raises
  :class:`LedgerError` if anything is unaccounted for; :meth:`Ledger.from_outcomes` builds one
  from an array of :class:`Outcome` codes, one per request.
- :class:`Run` and :class:`Summary`: the base of every model's result (``status``, ``ledger``,
  ``check()``) and of its typed, frozen summary (``run.summary.<field>``, ``.as_dict()``).
- :data:`NO_DATA` (None): the one marker of a summary value with no samples (a zero rate, a horizon
  shorter than one service); never NaN; tables show it as "no data", figures skip it (:func:`plottable`).
- :class:`PoissonSource`: Poisson arrival gaps drawn lazily in blocks of a chosen size, so memory
  stays bounded whatever the rate, and a model keeps the order in which it draws from its RNG.
- :func:`window_percentiles`, :func:`window_means`: per-window percentiles and means of a value
  (latency, age) by event time.

Times are in milliseconds throughout; :attr:`Recorder.t_s` gives window starts in seconds for plots.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

# The base of every model's result and its typed summary, and the one no-data marker (NO_DATA =
# None: a summary value with no samples; never NaN; "no data" in tables; skipped by figures). They
# live in :mod:`hotkeylab.runs` (this module keeps under the 400-line guard) and are part of the kernel.
from .runs import NO_DATA, NO_DATA_TEXT, Run, Summary, is_no_data, plottable
from .validate import check_int, check_number

__all__ = [
    "make_rng",
    "check_seed",
    "RunStatus",
    "run_bounded",
    "Recorder",
    "MAX_WINDOWS",
    "Outcome",
    "Ledger",
    "LedgerError",
    "NO_DATA",
    "NO_DATA_TEXT",
    "is_no_data",
    "plottable",
    "Summary",
    "Run",
    "PoissonSource",
    "window_means",
    "window_percentiles",
]

#: The most windows a :class:`Recorder` keeps (bounds its memory: a few MB per series).
MAX_WINDOWS = 1_000_000


def check_seed(seed) -> int:
    """A seed must be a non-negative integer (so a run is reproducible)."""
    return check_int("seed", seed, low=0)


def make_rng(seed) -> np.random.Generator:
    """numpy's default generator (PCG64) for ``seed``: same seed, same stream."""
    return np.random.default_rng(check_seed(seed))


@dataclass(frozen=True)
class RunStatus:
    """How a bounded run ended: after ``events`` events; ``truncated`` if the event cap stopped it
    before the horizon. ``t_end_ms`` is the horizon unless truncated, else the time the cap hit."""

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
    # a run that was not cut short ran to the horizon, even if its last event came earlier
    return RunStatus(t_end_ms=float(env.now) if truncated else until, events=n, truncated=truncated)


class Recorder:
    """Windowed time series over ``[0, horizon_ms)`` in windows of ``window_ms``.

    ``count(name, t_ms, k)`` adds ``k`` to the window holding ``t_ms`` (events outside the horizon
    are ignored); hot loops may append times straight to the list ``times(name)`` (and weights to
    ``weights(name)`` for weighted counters). ``level(name, t_ms, value)`` says a level changed to
    ``value`` at ``t_ms`` and accumulates its time-weighted mean per window. ``arrays()`` returns a
    dict of equal-length numpy arrays with ``t`` (window start, seconds); counters are per second
    when ``per_second=True``. Events are binned once, at the end, with numpy.

    ``typed=True`` keeps the times (and weights) in ``array('d')`` instead of lists: 8 bytes an
    event instead of a list slot plus a float object (~32 bytes), for models with millions of them.
    """

    def __init__(self, horizon_ms: float, window_ms: float, counters=(), levels=(), weighted=(),
                 typed: bool = False):
        self.horizon_ms = check_number("horizon_ms", horizon_ms, low=0.0, low_open=True)
        self.window_ms = check_number("window_ms", window_ms, low=0.0, low_open=True)
        if self.window_ms > self.horizon_ms:
            raise ValueError(
                f"window_ms must be <= horizon_ms ({self.horizon_ms:g}), got {self.window_ms:g}"
            )
        ratio = self.horizon_ms / self.window_ms  # inf for a subnormal window: refused below
        if not ratio <= MAX_WINDOWS + 1:
            raise ValueError(
                f"window_ms must be >= horizon_ms / {MAX_WINDOWS:,} "
                f"({self.horizon_ms / MAX_WINDOWS:g} ms for this horizon), got {self.window_ms:g}"
            )
        self.n = int(math.ceil(ratio - 1e-9))
        if self.n > MAX_WINDOWS:
            raise ValueError(
                f"window_ms must be >= horizon_ms / {MAX_WINDOWS:,} "
                f"({self.horizon_ms / MAX_WINDOWS:g} ms for this horizon), got {self.window_ms:g}"
            )
        new = (lambda: array("d")) if typed else list
        self._times = {name: new() for name in (*counters, *weighted)}
        self._weights = {name: new() for name in weighted}
        self._area = {name: [0.0] * self.n for name in levels}
        self._last = {name: (0.0, 0.0) for name in levels}  # (t_ms, value)

    def times(self, name: str) -> list:
        """The list (or ``array('d')``) of event times of counter ``name`` (append to it in hot
        loops)."""
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


class Outcome(IntEnum):
    """What became of one request; the four terms of the ledger's balance."""

    SERVED = 0
    TIMED_OUT = 1
    REJECTED = 2
    IN_SYSTEM = 3


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

    @classmethod
    def from_outcomes(cls, outcomes, **extra) -> Ledger:
        """The ledger of an array of :class:`Outcome` codes, one per arrival (any other code
        raises ValueError: an outcome the books cannot place is a bug, not a category)."""
        codes = np.asarray(outcomes)
        if codes.size and (codes.dtype.kind not in "iu" or codes.min() < 0 or codes.max() > 3):
            bad = codes[~np.isin(codes, [int(o) for o in Outcome])][:1].tolist() or codes[:1].tolist()
            raise ValueError(f"outcomes must be Outcome codes 0-3, got {bad[0]!r}")
        n = np.bincount(codes.astype(np.int64).ravel(), minlength=4) if codes.size else [0] * 4
        return cls(arrived=int(codes.size), served=int(n[Outcome.SERVED]),
                   timed_out=int(n[Outcome.TIMED_OUT]), rejected=int(n[Outcome.REJECTED]),
                   in_system=int(n[Outcome.IN_SYSTEM]), extra=dict(extra))

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


class PoissonSource:
    """Gaps (ms) between Poisson arrivals at ``rate_per_s`` (or, exactly, of mean ``mean_ms``),
    drawn from ``rng`` in blocks of ``block`` exponentials. ``block=1`` draws one at a time, so a
    model that interleaves other draws keeps its stream; a larger block is faster and holds at
    most ``block`` gaps in memory (standard exponentials, scaled by the mean when used).

    ``next_gap()`` returns one gap; ``gaps(k)`` the next ``k`` as an array, drawing only what the
    block does not hold (a model that pre-draws ``k`` keeps its stream); ``set_rate(r)`` changes
    the rate from the next gap on (a peak). ``times(t0_ms, t1_ms, max_count)`` returns the arrival
    times in ``[t0, t1)``, refusing (ValueError) more than ``max_count``, so a huge rate cannot
    allocate without bound; ``through(t_ms, stop_ms, max_count)`` the ones after ``t_ms`` up to and
    including the first at or after ``stop_ms`` (after it, with ``past=True``), at most ``max_count``,
    vectorised; the gaps it drew beyond stay for the next call, at the rate then in force.
    """

    def __init__(self, rng: np.random.Generator, rate_per_s: float | None = None, block: int = 256, *,
                 mean_ms: float | None = None):
        self.rng = rng
        self.block = check_int("block", block, low=1, high=1_000_000)
        if mean_ms is None:
            self.set_rate(rate_per_s)
        else:
            self.mean_ms = check_number("mean_ms", mean_ms, low=0.0, low_open=True, allow_inf=True)
            self.rate_per_s = 1000.0 / self.mean_ms
        self._buf = np.empty(0)
        self._pos = 0

    def set_rate(self, rate_per_s: float) -> None:
        self.rate_per_s = check_number("rate_per_s", rate_per_s, low=0.0, low_open=True)
        self.mean_ms = 1000.0 / self.rate_per_s

    def _hold(self, k: int) -> np.ndarray:
        """The next ``k`` standard exponentials (not consumed), drawing what the block lacks."""
        have = self._buf.size - self._pos
        if have < k:
            self._buf = np.concatenate((self._buf[self._pos:], self.rng.standard_exponential(k - have)))
            self._pos = 0
        return self._buf[self._pos:self._pos + k]

    def next_gap(self) -> float:
        if self._pos >= self._buf.size:
            if self.block == 1:
                return float(self.rng.exponential(self.mean_ms))
            self._hold(self.block)
        self._pos += 1
        return float(self._buf[self._pos - 1]) * self.mean_ms

    def gaps(self, k: int) -> np.ndarray:
        e = self._hold(check_int("k", k, low=0, high=100_000_000)) * self.mean_ms
        self._pos += k
        return e

    def through(self, t_ms: float, stop_ms: float, max_count: int, past: bool = False) -> np.ndarray:
        t, cap = check_number("t_ms", t_ms, low=0.0), check_int("max_count", max_count, low=1)
        stop = check_number("stop_ms", stop_ms, low=t)
        out, n = [], 0
        while n < cap:
            m = min(cap - n, max(self.block, int(min(1e6, (stop - t) / self.mean_ms * 1.05)) + 256))
            ts = np.cumsum(np.concatenate(([t], self._hold(m) * self.mean_ms)))[1:]
            k = int(np.searchsorted(ts, stop, side="right" if past else "left"))
            take = min(k + 1, m)
            out.append(ts[:take])
            self._pos += take
            n += take
            t = float(ts[take - 1])
            if k < m:
                break
        return np.concatenate(out)

    def times(self, t0_ms: float, t1_ms: float, max_count: int = 10_000_000) -> np.ndarray:
        t0 = check_number("t0_ms", t0_ms, low=0.0)
        t1 = check_number("t1_ms", t1_ms, low=t0)
        cap = check_int("max_count", max_count, low=1)
        expected = (t1 - t0) * self.rate_per_s / 1000.0
        if expected > cap:
            raise ValueError(
                f"rate_per_s × span must be <= max_count ({cap:,} arrivals), got "
                f"{self.rate_per_s:g}/s over {t1 - t0:g} ms (about {expected:,.0f} arrivals)"
            )
        out = []
        t = t0
        while True:
            t += self.next_gap()
            if t >= t1:
                break
            out.append(t)
        return np.asarray(out, dtype=float)


def _window_slices(t_ms, values, window_ms: float, n_windows: int):
    """``(window index, that window's values)`` for every window holding an event, the values in
    their input order: the grouping shared by :func:`window_percentiles` and :func:`window_means`."""
    w = check_number("window_ms", window_ms, low=0.0, low_open=True)
    n = check_int("n_windows", n_windows, low=1, high=MAX_WINDOWS)
    t = np.asarray(t_ms, dtype=float)
    v = np.asarray(values, dtype=float)
    if t.shape != v.shape:
        raise ValueError(f"t_ms and values must have the same length, got {t.size} and {v.size}")
    idx = np.floor_divide(t, w)
    inside = (idx >= 0) & (idx < n)
    idx, v = idx[inside].astype(np.int64), v[inside]
    order = np.argsort(idx, kind="stable")
    idx, v = idx[order], v[order]
    cuts = np.searchsorted(idx, np.arange(n + 1))
    return n, [(i, v[cuts[i]:cuts[i + 1]]) for i in np.flatnonzero(np.diff(cuts))]


def window_percentiles(t_ms, values, window_ms: float, n_windows: int, qs=(50, 99), empty=math.nan):
    """Per-window percentiles of ``values`` grouped by the window of their event time ``t_ms``.

    Returns an array of shape ``(len(qs), n_windows)``; a window with no event gets ``empty``
    (say which marker in the plot that reads it). Events outside ``[0, n_windows × window_ms)``
    are ignored.
    """
    q = [check_number("qs", x, low=0.0, high=100.0) for x in qs]
    n, groups = _window_slices(t_ms, values, window_ms, n_windows)
    out = np.full((len(q), n), float(empty))
    for i, v in groups:
        out[:, i] = np.percentile(v, q)
    return out


def window_means(t_ms, values, window_ms: float, n_windows: int, empty=math.nan):
    """Per-window means of ``values`` grouped as in :func:`window_percentiles` (``empty`` where a
    window has no event)."""
    n, groups = _window_slices(t_ms, values, window_ms, n_windows)
    out = np.full(n, float(empty))
    for i, v in groups:
        out[i] = v.mean()
    return out
