"""User arrivals: a Poisson process whose rate follows the scenario's peak, drawn in blocks.

The times come from one numpy stream (``default_rng([seed, 0xA221])``): unit exponentials summed
and mapped through the integrated rate (time rescaling, exact for a piecewise-constant rate); then,
with a ``degrade`` window, one uniform per arrival decides which are shed. The stream is consumed in
blocks of at most :data:`BLOCK` numbers, which gives the same numbers as one big draw (numpy's
generators are sequential), and the draw stops after ``limit`` kept arrivals: a run needs memory
for the arrivals it can reach, not for all of them (``max_events + 1`` is enough, see
:func:`arrival_times`).
"""

from __future__ import annotations

import math

import numpy as np

from .scenario import Scenario

__all__ = ["BLOCK", "arrival_times"]

BLOCK = 1 << 16  # numbers drawn at a time


def _rate_steps(sc: Scenario) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints (ms) of the user rate and the integrated rate Λ at each."""
    H = sc.horizon_ms
    cuts = {0.0, H}
    if sc.peak is not None:
        cuts |= {min(max(sc.peak.start_ms, 0.0), H), min(sc.peak.end_ms, H)}
    bps = np.array(sorted(cuts))
    rates = np.array([sc.user_rate_at(0.5 * (a + b)) / 1000.0 for a, b in zip(bps[:-1], bps[1:], strict=True)])
    return bps, np.concatenate([[0.0], np.cumsum(rates * np.diff(bps))])


def _unit_times(rng: np.random.Generator, total: float):
    """Yield, block by block, the arrival epochs in Λ units below ``total``: sums of unit
    exponentials, drawn in rounds of ``n_guess`` as ``s_last + cumsum(round)``, each round's
    cumsum carried across blocks so the floats equal one ``cumsum`` per round. Every round is
    drawn to its end (the degrade uniforms come after it in the stream)."""
    n_guess = int(total + 6 * math.sqrt(total) + 20)
    offset = 0.0  # the previous round's last sum
    while True:
        run, left, last = 0.0, n_guess, offset  # this round's running sum
        while left:
            m = min(left, BLOCK)
            left -= m
            c = np.cumsum(np.concatenate([[run], rng.exponential(1.0, m)]))[1:]
            run = c[-1]
            s = offset + c
            last = s[-1]
            yield s[s < total]
        if last >= total:
            return
        offset = last


def arrival_times(sc: Scenario, seed: int, limit: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """User request times (ms) as a Poisson process whose rate follows ``sc.peak``; requests in
    the ``degrade`` window are kept with probability ``degrade.factor``. Returns (kept, shed).

    ``limit`` (default ``sc.max_events + 1``): stop after that many kept arrivals. Every engine
    spends at least one event per kept arrival, so a run that could reach more has hit its event
    cap first; the one beyond the cap lets the engine see that more was to come (truncated)."""
    limit = sc.max_events + 1 if limit is None else limit
    bps, cum = _rate_steps(sc)
    total = cum[-1]
    if total <= 0:
        return np.empty(0), np.empty(0)
    rng = np.random.default_rng([seed, 0xA221])
    if sc.degrade is None:
        kept, n = [], 0
        for s in _unit_times(rng, total):
            kept.append(np.interp(s[: limit - n], cum, bps))
            n += kept[-1].size
            if n >= limit:
                break
        return np.concatenate(kept) if kept else np.empty(0), np.empty(0)
    # degrading: the uniforms follow the whole exponential stream; walk it once to find where it
    # ends (leaving ``rng`` there), then again from the start beside the uniforms
    for _ in _unit_times(rng, total):
        pass
    kept, shed, n = [], [], 0
    d = sc.degrade
    for s in _unit_times(np.random.default_rng([seed, 0xA221]), total):
        t = np.interp(s, cum, bps)  # time rescaling: exact for a piecewise-constant rate
        keep = ~((t >= d.start_ms) & (t < d.end_ms)) | (rng.random(t.size) < d.factor)
        if n + int(keep.sum()) >= limit:
            cut = int(np.flatnonzero(keep)[limit - n - 1]) + 1  # up to the limit-th kept one
            t, keep = t[:cut], keep[:cut]
        kept.append(t[keep])
        shed.append(t[~keep])
        n += kept[-1].size
        if n >= limit:
            break
    return (np.concatenate(kept) if kept else np.empty(0)), (np.concatenate(shed) if shed else np.empty(0))


def as_reached(t: np.ndarray) -> np.ndarray:
    """The arrival times a process reaches by ``timeout(t_i − now)`` steps: ``r_i = r_{i−1} +
    (t_i − r_{i−1})``. Equal to ``t_i`` except where rounding bites (Sterbenz's lemma makes the
    subtraction exact once t_i <= 2 r_{i−1}); both engines use these exact floats."""
    r = t.copy()
    for _ in range(64):
        prev = np.concatenate([[0.0], r[:-1]])
        new = prev + (t - prev)
        if np.array_equal(new, r):
            return r
        r = new
    out, prev = [], 0.0  # pragma: no cover - not reached for Poisson times
    for x in t.tolist():
        prev = prev + (x - prev)
        out.append(prev)
    return np.asarray(out)
