"""03 · The fast engine: the SimPy lock model's run computed with numpy and one loop over batches.

Not the model a learner reads (that is :mod:`.model`): this gives the same windows, ledger and
intervals for the same scenario and seed (tests check), fast enough for :func:`band_verdicts`'
sweeps over many seeds.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable
from dataclasses import replace

import numpy as np

from .. import sim
from ..validate import check_int, check_number
from .results import COUNTERS, BandVerdict, LockRun
from .scenario import HEALTHY_SHARE, LockScenario, region_rng

__all__ = ["simulate_lock_fast", "band_verdicts"]


def _arrivals(sc: LockScenario, rng: np.random.Generator) -> tuple[np.ndarray, bool]:
    """Arrival times (ms) up to the horizon, drawn as the SimPy ``users`` actor draws them, through
    one :class:`hotkeylab.sim.PoissonSource`: the same exponentials in the same order, each gap at
    the rate in force at the previous arrival, summed one after another (vectorised: the source's
    ``through``). At most ``max_events`` of them: ``(times, truncated)``."""
    h, cap = sc.horizon_ms, sc.max_events + 1  # one more than the cap tells a truncated run
    source = sim.PoissonSource(rng, sc.rate_per_s)
    parts, t = [], 0.0
    if t < sc.peak_start_ms:  # before the peak, up to the first arrival at or after its start
        stop = min(h, sc.peak_start_ms)
        parts.append(source.through(t, stop, cap, past=stop != sc.peak_start_ms))
        t = float(parts[-1][-1])
    n = sum(p.size for p in parts)
    if t <= h and n < cap:  # the peak: each gap after an arrival at or after peak_start_ms
        source.set_rate(sc.rate_per_s * sc.peak_factor)
        parts.append(source.through(t, h, cap - n, past=True))
    a = np.concatenate(parts)
    a = a[a <= h]
    return (a[: sc.max_events], True) if a.size > sc.max_events else (a, False)


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


def simulate_lock_fast(sc: LockScenario, seed: int) -> LockRun:
    """The same model as the SimPy engine, computed with numpy and one loop over batches.

    Arrivals and region draws use the same random streams in the same order; each batcher's
    batches follow from the arrival times; the row lock grants, among the owners whose thread has
    a batch and is free, the earliest request (first come, first served). ``status.events`` counts
    arrivals, batches and commits. ``max_events`` caps the arrivals (the work is linear in them):
    a run that reaches it ends at its last arrival with ``status.truncated``.
    """
    s = sim.check_seed(seed)
    rng = sim.make_rng(s)
    n_own = len(sc.owners_ms)
    arr, truncated = _arrivals(sc, rng)
    horizon = float(arr[-1]) if truncated else sc.horizon_ms  # where the run ends
    if sc.batchers == "per_owner":
        region = np.minimum(np.searchsorted(np.cumsum(sc.shares), region_rng(s).random(len(arr)), side="right"),
                            n_own - 1)
        groups = [np.flatnonzero(region == j) for j in range(n_own)]
    else:
        groups = [np.arange(len(arr))]
    # batches of every batcher: close time, owner; row_batch[i] = the batch of arrival i
    closes_all, owner_all, row_batch_all = [], [], np.full(len(arr), -1, dtype=np.int64)
    n_b = 0
    for g, idx in enumerate(groups):
        closes, starts = _batches(arr[idx], sc.max_rows, sc.max_wait_ms)
        keep = int(np.searchsorted(closes, horizon, side="right"))  # closes are increasing
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
    rec = sim.Recorder(sc.horizon_ms, sc.window_ms, counters=COUNTERS, levels=("queue",))
    rec.times("offered").extend(arr.tolist())
    rec.times("batches").extend(b_close)
    done = end <= horizon
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
    rec.close(horizon)
    led = sim.Ledger(arrived=len(arr), served=int(in_time.sum()), timed_out=int(late.sum()),
                     in_system=int((~committed).sum()), extra={"wasted": int(late.sum())})
    fin = np.flatnonzero(done)
    fin = fin[np.argsort(end[fin], kind="stable")]
    intervals = [(sc.owner_names[b_owner[k]], grant_l[k], end_l[k]) for k in fin.tolist()]
    queue_end = int(n_b - np.isfinite(grant).sum())
    status = sim.RunStatus(t_end_ms=horizon, events=int(len(arr) + n_b + done.sum()), truncated=truncated)
    return LockRun(scenario=sc, seed=s, windows=rec.arrays(), ledger=led, intervals=intervals, status=status,
                   queue_end=queue_end)



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
            shares[which] = np.array([simulate_lock_fast(sc, s).served_share for s in range(k)])
        ok_n = shares["normal"] >= HEALTHY_SHARE
        bad_p = shares["peak"] < HEALTHY_SHARE
        out.append(BandVerdict(lam, k, int(ok_n.sum()), int(bad_p.sum()), int((ok_n & bad_p).sum()),
                               (float(shares["normal"].min()), float(shares["normal"].max())),
                               (float(shares["peak"].min()), float(shares["peak"].max()))))
    return out

