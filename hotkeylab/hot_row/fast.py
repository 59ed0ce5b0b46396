"""01 · The open loop's fast engine (numpy Lindley recursion) and the random draws both of its
engines share: the same arrival and hold times from the same seed give the same waits as the
SimPy reference in :mod:`.model`."""

from __future__ import annotations

import numpy as np

from .. import sim
from ..validate import check_int, check_number


def hold_times(rng: np.random.Generator, mean_ms: float, cv: float, n: int) -> np.ndarray:
    """``n`` hold times with mean ``mean_ms`` and coefficient of variation ``cv`` (gamma)."""
    if cv == 0:
        return np.full(n, mean_ms)
    shape = 1.0 / cv**2
    return rng.gamma(shape, mean_ms / shape, size=n)


def poisson_arrivals_ms(rng, rate_per_s: float, horizon_ms: float, max_count: int) -> tuple[np.ndarray, bool]:
    """Poisson arrival times in ``[0, horizon_ms)``, at most ``max_count`` of them, drawn through
    :class:`hotkeylab.sim.PoissonSource` in blocks of 1.1 × the expected count (a second block if
    that falls short).

    Returns ``(times, truncated)``; ``truncated`` if the cap stopped the stream before the horizon.
    """
    rate = check_number("rate_per_s", rate_per_s, low=0.0)
    horizon = check_number("horizon_ms", horizon_ms, low=0.0)
    cap = check_int("max_count", max_count, low=0)
    if rate == 0 or horizon == 0:
        return np.empty(0), False
    source = sim.PoissonSource(rng, rate)
    parts, t, n = [], 0.0, 0
    while True:
        expected = 1.1 * (horizon - t) / source.mean_ms  # may exceed any int (a huge horizon): cap first
        k = min(cap - n, max(1024, int(expected) + 64 if expected < cap else cap))
        if k <= 0:
            return (np.concatenate(parts) if parts else np.empty(0)), True
        ts = t + np.cumsum(source.gaps(k))  # k gaps drawn at once: the hold times come after them
        inside = ts[: np.searchsorted(ts, horizon)]
        parts.append(inside)
        n += inside.size
        if inside.size < k:
            return np.concatenate(parts), False
        t = float(ts[-1])


def open_loop_fast(sc, arrivals, holds, truncated):
    """Lindley recursion in numpy: end_i = C_i + max_{k<=i}(a_k − C_{k−1}), C = cumsum(holds)."""
    if arrivals.size == 0:
        status = sim.RunStatus(t_end_ms=sc.horizon_ms, events=0, truncated=truncated)
        return status, sim.Ledger(), np.empty(0), np.empty(0)
    c = np.cumsum(holds)
    c_prev = np.concatenate(([0.0], c[:-1]))
    end = c + np.maximum.accumulate(arrivals - c_prev)
    start = end - holds
    t_end = float(arrivals[-1]) if truncated else sc.horizon_ms
    got = start <= t_end  # got the lock before the run ended
    served = int(np.count_nonzero(end <= t_end))
    ledger = sim.Ledger(arrived=int(arrivals.size), served=served, in_system=int(arrivals.size) - served)
    status = sim.RunStatus(t_end_ms=t_end, events=int(arrivals.size), truncated=truncated)
    return status, ledger, arrivals[got], (start - arrivals)[got]
