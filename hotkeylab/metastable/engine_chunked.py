"""The chunked engine: the fast engine's path for FIFO scenarios, a batch at a time.

The event loop (:mod:`.engine_fast`) spends a few µs of CPython on every attempt; in a storm that
is 700–1500 attempts per simulated second. This engine computes *the same events* in time chunks
with numpy, and touches Python only once per merged batch:

- An attempt sent at ``s`` can only come back as a retry after its timeout at ``s + M``. So if
  the oldest attempt whose batch is still open was sent at ``o``, every send before ``o + M`` is
  already known (user arrivals, or retries of attempts whose fate is settled). A chunk is the sends
  in ``[c, o + M)``: at least ``M − T`` ms long.
- The batcher groups the chunk's sends (≤ K rows or T ms after the first), the hot-key thread is a
  FIFO recursion ``start = max(close, previous done)``, ``done = start + N``; an attempt is answered
  iff ``done <= s + M`` (the loop processes a commit before a timer due at the same instant), and
  otherwise times out at ``s + M`` and is retried by the same rules as :meth:`.core.State.fail`,
  vectorised with the same float operations in the same order.
- With a queue limit, a batch that finds the thread busy and ``queue_limit`` batches waiting is
  refused at its close; its rows fail at once, and the retries that fall inside the chunk join its
  sends in time order (plain Python: a refused batch is a handful of rows, and at a full queue
  refusals come every few ms); later ones wait for their chunk.
- Windows are binned as :class:`hotkeylab.sim.Recorder` bins them, the levels' time-weighted sums
  added in the same chronological order, so the floats are identical.

It applies when the result cannot depend on the order of events at one instant (see
:func:`eligible`: FIFO, no CoDel, no deadline drop, no retry budget, no client throttle, no
restart, and ``M − T`` at least :data:`MIN_STEP_MS`). It checks as it goes that no two sends share
an instant (unless one failure sent them, in the loop's push order), that no send falls exactly on
a batch timer and no commit ends exactly on a close; if one does, or if the event cap would be
reached, it returns
``None`` and :func:`.engine_fast.run_fast` runs the event loop. Either way the result is the one
the SimPy reference gives.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections import deque

import numpy as np

from ..sim import Ledger, RunStatus
from .core import (
    _K_PRE,
    _WEIGHTED,
    WINDOW_COUNTERS,
    WINDOW_LEVELS,
    Run,
    _as_reached,
    _grown,
    arrival_times,
    hashed_uniform,
    hashed_uniforms,
)
from .rng import AttemptUniforms
from .scenario import Scenario

__all__ = ["MIN_STEP_MS", "MAX_REFUSAL_SENDS", "eligible", "run_chunked"]

#: Shortest chunk (``M − T``, ms) for which chunking pays; below it the event loop runs.
MIN_STEP_MS = 10.0
#: Most sends in a chunk with refusals: each refused row's retry is inserted into the chunk's
#: sorted sends (``list.insert``, a move of every later send), so past this many (a load near
#: 1e5/s) the refusals would cost more than the event loop's few µs per event, and grow
#: quadratically (1e6/s at a queue bound: minutes). The loop gives the same run.
MAX_REFUSAL_SENDS = 1 << 14
#: A run that, after this share of its horizon, has made events at a rate that would reach
#: ``_PROJECT_OVER`` × the event cap by the horizon goes to the event loop at once: the chunked
#: path cannot end at the cap, so it would give up there and the loop would run it again (a
#: batch per send, ``batch_max_wait_ms=0``: 10 s lost). Only the engine's speed depends on it.
_PROJECT_AFTER = 0.125
_PROJECT_OVER = 1.25

_EMPTY = np.empty(0)


def on_course_past_cap(events: int, t: float, H: float, cap: int) -> bool:
    """True if a run that has made ``events`` events by ``t`` (at least :data:`_PROJECT_AFTER`
    of its horizon ``H``) makes them at a rate that reaches :data:`_PROJECT_OVER` × ``cap`` by
    ``H``."""
    return t >= H * _PROJECT_AFTER and events * (H / t) > _PROJECT_OVER * cap


def eligible(sc: Scenario) -> bool:
    """True if the chunked path can run ``sc`` (see the module docstring)."""
    return (
        sc.discipline == "fifo"
        and sc.codel is None
        and sc.retry.budget is None
        and sc.client_throttle is None
        and sc.batcher == "timer"
        and not (sc.owner_queues and sc.second_owner is not None)
        and sc.stretch_retries is None
        and (math.isinf(sc.timeout_ms) or sc.timeout_ms - sc.batch_max_wait_ms >= MIN_STEP_MS)
    )


class _Retry:
    """:meth:`.core.State.fail` for a vector of timed-out attempts (plain policies only)."""

    def __init__(self, sc: Scenario, seed: int, n: int):
        pol = sc.retry
        self.seed = seed
        self.n = n
        self.max_att = pol.max_attempts
        self.sup = sc.suppress_retries
        self.jitter = pol.jitter
        self.base, self.mult, self.cap = pol.base_ms, pol.multiplier, pol.cap_ms
        self.min_delay, self.patience = float(pol.min_delay_ms), pol.patience_ms
        self.finite_patience = not math.isinf(self.patience)
        self._au = AttemptUniforms(seed, n)  # State's uniforms; stream 0 read in blocks
        self._table: list = []  # backoff before retry k, as State computes it
        if self.mult == 1:  # the same backoff for every k
            self._d0 = float(min(self.cap, self.base * self.mult**0))

    def uniforms(self, F: np.ndarray) -> np.ndarray:
        """The uniform of each failed attempt's retry: request F[1], retry number F[2] + 1."""
        up = self._au.table  # stream 0 of State's up-front uniforms (rng.random((2, n, K)))
        if F[2].max() < _K_PRE - 1:
            return up.take(0, (F[1] * _K_PRE + F[2] + 1.0).astype(np.int64))
        req, kk = F[1].astype(np.int64), F[2].astype(np.int64) + 1
        low = kk < _K_PRE
        u = np.empty(req.size)
        u[low] = up.take(0, req[low] * _K_PRE + kk[low])
        high = np.flatnonzero(~low)
        if high.size > 8:
            u[high] = hashed_uniforms(self.seed, req[high], kk[high], 0)
        else:  # a few: the scalar hash is cheaper than a dozen numpy calls
            for j in high.tolist():
                u[j] = hashed_uniform(self.seed, int(req[j]), int(kk[j]), 0)
        return u

    def backoff(self, F: np.ndarray) -> np.ndarray | float:
        if self.mult == 1:
            return self._d0
        kk = F[2].astype(np.int64) + 1
        top = int(kk.max())
        tab = self._table
        base, mult, cap = self.base, self.mult, self.cap
        while len(tab) <= top:
            k = len(tab)
            tab.append(float(min(cap, _grown(base, mult, k - 1))) if k >= 1 else 0.0)
        return np.asarray(tab)[kk]

    def fast_one(self):
        """:meth:`one`, specialised for a fixed backoff with full jitter and no suppression (the
        seed's policy and the widget's): the same float operations, fewer lookups. A stuck run
        at a queue bound refuses ~1,000 rows/s, each through this function."""
        if self.jitter != "full" or self.mult != 1 or self.sup is not None:
            return self.one
        uk = self._au.retry  # stream 0 (hashed from attempt K_PRE on), as State reads it
        max_att, d0, md, pat, fin = self.max_att, self._d0, self.min_delay, self.patience, self.finite_patience

        def one(t, req, before, prevd, first):
            if before + 1.0 >= max_att:
                return None
            i, k = int(req), int(before) + 1
            d = uk(i, k) * d0
            if d < md:
                d = md
            if fin and t + d - first > pat:
                return None
            return d

        return one

    def one(self, t: float, req: float, before: float, prevd: float, first: float) -> float | None:
        """:meth:`__call__` for one attempt, in plain floats (the same operations in the same
        order, so the same bits): the delay before its retry, or ``None`` if the user gives up.
        A refused batch is a handful of rows; numpy's per-call cost would dominate there."""
        if before + 1.0 >= self.max_att:
            return None
        sup = self.sup
        if sup is not None and sup.start_ms <= t < sup.end_ms:
            return None
        i, k = int(req), int(before) + 1
        u = self._au.retry(i, k)
        base, cap = self.base, self.cap
        if self.jitter == "decorrelated":
            prev = prevd if prevd != 0.0 else float(base)
            hi = max(float(base), 3.0 * prev)
            d = min(float(cap), base + u * (hi - base))
        else:
            if self.mult == 1:
                d0 = self._d0
            else:
                self.backoff(np.array([[0.0], [0.0], [before]]))  # the table up to retry k
                d0 = self._table[k]
            if self.jitter == "full":
                d = u * d0
            elif self.jitter == "equal":
                d = 0.5 * d0 + u * 0.5 * d0
            else:
                d = d0
        if d < self.min_delay:
            d = self.min_delay
        if self.finite_patience and t + d - first > self.patience:
            return None
        return d

    def __call__(self, t: np.ndarray, F: np.ndarray):
        """Failures at ``t`` of the attempts in the columns of ``F`` (rows: send time, request,
        attempts before, delay before, the request's first send). Returns (give-up mask or
        ``None`` if nobody gives up, delays before the retries; meaningless where one gives up)."""
        give = None
        if not math.isinf(self.max_att):
            give = F[2] + 1.0 >= self.max_att
        if self.sup is not None:
            g = (self.sup.start_ms <= t) & (t < self.sup.end_ms)
            give = g if give is None else give | g
        idx = None
        if give is not None:
            if not give.any():
                give = None
            else:
                idx = np.flatnonzero(~give)
                if not idx.size:
                    return give, np.zeros(give.size)
                F, t = F.take(idx, axis=1), t[idx]
        u = self.uniforms(F)
        base, cap = self.base, self.cap
        if self.jitter == "decorrelated":
            prevd = F[3]
            prev = np.where(prevd != 0.0, prevd, float(base))  # ``prev_delay or base``
            hi = np.maximum(float(base), 3.0 * prev)
            d = np.minimum(float(cap), base + u * (hi - base))
        else:
            d0 = self.backoff(F)
            if self.jitter == "full":
                d = u * d0
            elif self.jitter == "equal":
                d = 0.5 * d0 + u * 0.5 * d0
            else:
                d = np.full(u.size, d0) if isinstance(d0, float) else d0
        d = np.maximum(d, self.min_delay)  # ``if d < min_delay: d = min_delay``
        late = None
        if self.finite_patience:
            late = t + d - F[4] > self.patience
            if not late.any():
                late = None
        if idx is None:
            return late, d
        full = np.zeros(give.size)
        full[idx] = d
        if late is not None:
            give[idx[late]] = True
        return give, full


def _level(up: np.ndarray, down: np.ndarray, H: float, w: float, n: int) -> np.ndarray:
    """A level that steps +1 at each time in ``up`` and −1 at each time in ``down`` (both sorted,
    only times <= H happen), with a :meth:`Recorder.level` call at each of those times: the
    window means :meth:`Recorder.arrays` reports, summed in the Recorder's order."""
    up, down = up[up <= H], down[down <= H]
    calls = np.unique(np.concatenate([up, down]))
    if calls.size == 0:
        return np.zeros(n)
    val = (np.searchsorted(up, calls, "right") - np.searchsorted(down, calls, "right")).astype(float)
    a = calls
    b = np.append(calls[1:], H)  # the last piece runs to the close at the horizon
    keep = (val != 0) & (b > a)
    a, b, v = a[keep], b[keep], val[keep]
    i0 = np.floor_divide(a, w)
    single = (b <= (i0 + 1.0) * w) & (i0 < n)
    piece = [np.nonzero(single)[0]]
    bins = [i0[single].astype(np.int64)]
    vals = [v[single] * (b[single] - a[single])]
    cross = np.nonzero(~single)[0].tolist()
    if cross:
        cp, cb, cv = [], [], []
        for j in cross:  # Recorder._spread, step by step
            t0, t1, x = float(a[j]), float(b[j]), float(v[j])
            i = int(t0 // w)
            while t0 < t1 and i < n:
                end = min(t1, (i + 1) * w)
                if end > t0:
                    cp.append(j)
                    cb.append(i)
                    cv.append(x * (end - t0))
                    t0 = end
                i += 1
        piece.append(np.asarray(cp, dtype=np.int64))
        bins.append(np.asarray(cb, dtype=np.int64))
        vals.append(np.asarray(cv, dtype=float))
    order = np.argsort(np.concatenate(piece), kind="stable")  # chronological, as the Recorder adds
    area = np.bincount(np.concatenate(bins)[order], weights=np.concatenate(vals)[order], minlength=n)
    return area / w


def run_chunked(sc: Scenario, seed: int) -> Run | None:
    """Run an :func:`eligible` scenario in chunks; ``None`` if two events share an instant where
    their order matters, or the event cap would be reached: the caller then runs the event loop."""
    if not eligible(sc):
        return None
    M, T, K, H = sc.timeout_ms, sc.batch_max_wait_ms, sc.batch_max_rows, sc.horizon_ms
    finite = not math.isinf(M)
    arr, shed = arrival_times(sc, seed)
    arr = _as_reached(arr)
    n = arr.size
    n_in = int(np.searchsorted(arr, H, "right"))  # arrivals the run reaches
    arr_in = arr[:n_in]
    retry = _Retry(sc, seed, n)
    one = None  # retry.one for refused rows, made at the first refusal
    so, sd = sc.second_owner, sc.slow_db
    so_a, so_b = (so.start_ms, so.end_ms) if so is not None else (math.inf, math.inf)
    sd_a, sd_b, sd_f = (sd.start_ms, sd.end_ms, sd.factor) if sd is not None else (math.inf, math.inf, 1.0)
    n_ms, x_ms = sc.batch_ms, sc.cross_batch_ms

    # attempts as columns of a 6-row array: send time, request, attempts made before it, the
    # delay before it (0 for a first try), the request's first send, and the failure that sent
    # it (NaN for a first try; −t for a timeout at t, +t for a refusal at t). Retries sent at one
    # instant by one failure keep the event loop's order (its push order) through stable sorts.

    def users(lo: int, hi: int) -> np.ndarray:
        """Users ``lo`` to ``hi − 1`` as first tries (built a chunk at a time, not for the whole run)."""
        u = np.zeros((6, hi - lo))
        u[0] = u[4] = arr_in[lo:hi]
        u[1] = np.arange(lo, hi)
        u[5] = np.nan
        return u

    held = np.zeros((6, 0))  # the batch left open at the end of the last chunk
    held_o = 0.0  # … and when it opened
    pool = np.zeros((6, 0))  # sends known and not yet made: retries, and sends after a refusal
    r_send, r_to, r_gave, r_served = [], [], [], []  # event times, chunk by chunk (each sorted)
    r_key: list = []  # the sends' failure keys
    b_close, b_start = [], []  # per batch accepted into the queue: its close and its take
    x_start, x_end = [], []  # per batch the thread took: start, and when it was free again
    b_done, b_size = [], []  # per batch committed: end, rows
    drop = sc.deadline_drop
    # the restart (at most one, if it falls in the run): ``rs``, ``inf`` once it has happened
    rs = sc.restart_at_ms if sc.restart_at_ms is not None and sc.restart_at_ms <= H else math.inf
    rs0 = rs
    restart_lost = n_restart = 0
    per_att = drop or not math.isinf(rs)  # some accepted rows are not answered by their batch's commit
    drop_t, drop_n = [], []  # deadline drop: when the thread skipped rows, and how many
    n_sent = n_to = n_timers = n_rej = n_done = 0
    lim = sc.queue_limit
    waiting: deque = deque()  # start times of the accepted batches not started yet (queue limit)
    r_rej, r_gave_rej = [], []  # rows refused at a full queue; requests that gave up after one
    cap = sc.max_events
    ai = 0
    c = 0.0
    prev_done = -math.inf
    turn = 0
    while True:
        nh = held.shape[1]
        end = (held_o if nh else c) + M  # every send before ``end`` is known
        last = not end <= H
        aj = n_in if last else max(ai, int(np.searchsorted(arr_in, end, "left")))
        parts = [held, users(ai, aj)]
        ai = aj
        if pool.shape[1]:
            due = pool[0] <= H if last else pool[0] < end
            if due.any():
                parts.append(pool.compress(due, axis=1))
                pool = pool.compress(~due, axis=1)
        A = np.concatenate(parts, axis=1)
        if len(parts) > 2:  # retries among the arrivals: sort (ties are checked at the end)
            A = A.take(A[0].argsort(kind="stable"), axis=1)

        # the batcher (a batch opens at its first send, closes at K sends or T ms later) and the
        # hot-key thread (FIFO: a batch starts when it is closed and the thread is free)
        sl = A[0].tolist()
        N = len(sl)
        if n_sent + N - nh + n_to + n_timers + n_done > cap:
            return None  # this chunk's sends alone reach the event cap (each is an event of the loop)
        ix = None  # column of ``Ap`` for each position of ``sl`` once refusals insert retries
        Ap = None  # A's rows as lists, with the retries refusals inserted into this chunk
        refused = []  # (p, e) position ranges of the batches refused in this chunk
        rej_t, gave_rej_t, later = [], [], []  # refusal times, give-ups, retries due after ``end``
        p = 0
        nb0 = len(b_done)
        att_done = []  # deadline drop: each accepted row's commit end (inf if dropped)
        while p < N:
            o = sl[p]
            if o >= rs:  # the restart comes before this batch opens: nothing is open at rs
                if o == rs or prev_done == rs:
                    return None  # a send or a commit on the restart's instant
                prev_done, rs = rs, math.inf  # the thread is free from rs on, the queue empty
                waiting.clear()
                n_restart = 1
            t_timer = o + T
            f = p + K - 1
            full = f < N and sl[f] <= t_timer  # K sends by the timer
            if full:
                e = p + K
                close = sl[f]
                if close == t_timer and f > p:
                    return None  # the K-th send on the timer's instant
            else:
                e = bisect_right(sl, t_timer, p, f if f < N else N)
                close = t_timer
            if close >= rs and rs < end:  # the batch is open at the restart (every send before it is known)
                if close == rs or prev_done == rs:
                    return None
                e = bisect_left(sl, rs, p, e)
                if e < N and sl[e] == rs:
                    return None  # a send on the restart's instant
                if t_timer <= H:
                    n_timers += 1  # its timer still fires, for a batch that is gone
                restart_lost += e - p
                att_done.extend([math.inf] * (e - p))
                p = e
                prev_done, rs = rs, math.inf
                waiting.clear()
                n_restart = 1
                continue
            if not full:
                if (close > H) if last else (close >= end):
                    break  # still open: later sends may join it
                if sl[e - 1] == close and e - 1 > p:
                    return None  # another send on the timer's instant
            if t_timer <= H:
                n_timers += 1
            if lim is not None:  # QueueMaxSize: refused if the thread is busy and the queue full
                while waiting and waiting[0] < close:
                    waiting.popleft()  # started before this close
                if prev_done == close or (waiting and waiting[0] == close):
                    return None  # a commit ends on the close's instant
                if prev_done > close and len(waiting) >= lim:
                    if Ap is None:
                        if N > MAX_REFUSAL_SENDS:
                            return None  # inserting each retry into this many sends: the loop is faster
                        Ap = A.tolist()  # the chunk's columns as lists: refusals append retries
                    # refused at ``close``: its rows fail now, and the retries that fall before
                    # ``end`` join this chunk's sends in time order (after any send at their
                    # instant; such ties are checked at the end); later ones wait in the pool
                    if ix is None:
                        ix = list(range(N))
                    refused.append((p, e))
                    n_rej += e - p
                    rej_t.extend([close] * (e - p))
                    cols = ix[p:e]
                    p = e
                    a0, a1, a2, a3, a4, a5 = Ap
                    if one is None:
                        one = retry.fast_one()
                    for col in cols:
                        req, before, first = a1[col], a2[col], a4[col]
                        d = one(close, req, before, a3[col], first)
                        if d is None:
                            gave_rej_t.append(close)
                            continue
                        t = close + d
                        if (t <= H) if last else (t < end):
                            at = bisect_right(sl, t, p)
                            sl.insert(at, t)
                            ix.insert(at, len(a0))
                            a0.append(t)
                            a1.append(req)
                            a2.append(before + 1.0)
                            a3.append(d)
                            a4.append(first)
                            a5.append(close)
                            N += 1
                        else:
                            later.append((t, req, before + 1.0, d, first, close))
                    if n_sent + N - nh + n_to + n_timers + n_done > cap:
                        return None  # refusals alone reach the event cap (a lower bound of the loop's)
                    continue
            start = close if close > prev_done else prev_done
            svc = x_ms if so_a <= start < so_b and turn & 1 else n_ms
            if sd_a <= start < sd_b:
                svc *= sd_f
            b_close.append(close)
            if lim is not None:
                waiting.append(start)
            if start >= rs:  # still waiting in the queue at the restart: lost there
                if start == rs:
                    return None
                b_start.append(rs)  # it leaves the queue at rs
                restart_lost += e - p
                att_done.extend([math.inf] * (e - p))
                prev_done = start + svc  # (later batches closed before rs wait behind it)
                p = e
                continue
            b_start.append(start)
            if drop:
                # State.take_batch: the thread skips the rows it cannot answer before their
                # deadline (``start + svc <= s + M`` keeps one). Sends are in time order, so the
                # kept rows are a suffix of the batch; a batch with none is skipped at ``start``
                # and the thread, still free, takes the next one.
                done = start + svc
                j = p
                while j < e and done > sl[j] + M:
                    j += 1
                if j > p and start <= H:
                    drop_t.append(start)
                    drop_n.append(j - p)
                if j == e:
                    att_done.extend([math.inf] * (e - p))
                    p = e
                    continue
            else:
                j = p
            prev_done = start + svc
            if prev_done <= H:
                n_done += 1  # the commit's event (also for one the restart cuts short)
            turn += 1
            x_start.append(start)
            if prev_done >= rs:  # in service at the restart: lost, the thread free at rs
                if prev_done == rs:
                    return None
                x_end.append(rs)
                restart_lost += e - j
                att_done.extend([math.inf] * (e - p))
                p = e
                continue
            x_end.append(prev_done)
            b_done.append(prev_done)
            b_size.append(e - j)
            if per_att:
                att_done.extend([math.inf] * (j - p))
                att_done.extend([prev_done] * (e - j))
            p = e
        held_o = sl[p] if p < N else 0.0
        if ix is not None:
            A = np.array(Ap).take(ix, axis=1)  # the columns in send order
            r_rej.append(np.array(rej_t))
            if gave_rej_t:
                r_gave_rej.append(np.array(gave_rej_t))
            if later:
                pool = np.concatenate([pool, np.array(later).T], axis=1)
        n_sent += N - nh
        r_send.append(A[0, nh:].copy())  # copies: views would keep every chunk's array alive
        r_key.append(A[5, nh:].copy())

        if p:
            if per_att:
                d_att = np.array(att_done)
            else:
                d_att = np.array(b_done[nb0:]).repeat(b_size[nb0:])  # each attempt's commit end
            R = A[:, :p]
            if refused:  # the accepted batches' columns only
                keep = np.ones(p, dtype=bool)
                for a0, e0 in refused:
                    keep[a0:e0] = False
                R = R.compress(keep, axis=1)
            if not R.shape[1]:
                pass
            elif finite:
                dl = R[0] + M
                ok = d_att <= dl
                if prev_done > H or per_att:  # commits after the horizon (or dropped rows): not answered in the run
                    served = ok & (d_att <= H)
                    timed = ~ok & (dl <= H)
                else:
                    served = ok
                    timed = ~ok
                r_served.append(d_att[served])
                F = R.compress(timed, axis=1)
                nt = F.shape[1]
                if nt:
                    tt = F[0] + M  # the timers that fire: at each attempt's deadline
                    n_to += nt
                    r_to.append(tt)
                    give, delay = retry(tt, F)
                    q = np.array([tt + delay, F[1], F[2] + 1.0, delay, F[4], -tt])  # the retries
                    if give is not None:
                        r_gave.append(tt[give])
                        q = q.compress(~give, axis=1)
                    pool = np.concatenate([pool, q], axis=1)  # (those after H are never due)
            else:
                r_served.append(d_att[d_att <= H])
            if n_sent + n_to + n_timers + n_done > cap:  # a lower bound of the loop's events
                return None
        if not last and on_course_past_cap(n_sent + n_to + n_timers + n_done, end, H, cap):
            return None  # it could only give up at the cap (it cannot stop there): the loop runs it now
        held = A[:, p:]
        if last:
            break
        c = end

    sends = np.concatenate(r_send)
    tie = sends[1:] == sends[:-1]
    if tie.any():  # sends at one instant: fine only if one failure sent them (same key)
        key = np.concatenate(r_key)
        if not (key[1:][tie] == key[:-1][tie]).all():
            return None  # their order is the event loop's to decide
    if not math.isinf(rs0):
        if (sends == rs0).any():
            return None  # a send on the restart's instant (also one after the last batch)
        n_restart = 1  # it happens at rs0 whether or not a batch opened after it
        drop_t.append(rs0)
        drop_n.append(restart_lost)
    done = np.asarray(b_done)
    events = n_sent + n_timers + n_done + n_to + n_restart
    if events > cap:
        return None
    return _finish(sc, seed, arr[:n_in], shed, sends, r_to, r_gave, r_served, b_close, b_start, done,
                   b_size, events, r_rej, r_gave_rej, x_start, x_end, drop_t, drop_n, restart_lost)


def _counts(t: np.ndarray, w: float, n: int) -> np.ndarray:
    """Events per window as :meth:`hotkeylab.sim.Recorder.arrays` counts them (window index
    ``floor_divide(t, w)``, outside ``[0, n)`` dropped), for times ``t`` sorted ascending.

    ``floor_divide`` of positive floats is the exact ⌊t/w⌋, so it is monotone and the windows are
    runs of ``t``: their edges are found by bisection and checked with ``floor_divide`` itself."""
    pos = np.searchsorted(t, np.arange(n + 1) * w, "left")
    m = t.size
    i = np.arange(n + 1)
    before, at = pos > 0, pos < m
    if (np.floor_divide(t[pos[before] - 1], w) < i[before]).all() and (
        np.floor_divide(t[pos[at]], w) >= i[at]
    ).all() and (m == 0 or t[0] >= 0):
        return np.diff(pos)
    idx = np.floor_divide(t, w)  # pragma: no cover - the checked shortcut above holds
    return np.bincount(idx[(idx >= 0) & (idx < n)].astype(np.int64), minlength=n)


def _finish(sc, seed, offered, shed, sends, r_to, r_gave, r_served, b_close, b_start, done, b_size,
            events, r_rej, r_gave_rej, x_start, x_end, drop_t, drop_n, restart_lost) -> Run:
    """The :class:`Run` that :func:`.core.finish_run` builds from a State, from the chunks' records."""
    from .analysis import recovery, summarise

    H, w = sc.horizon_ms, sc.window_ms
    n = int(math.ceil(H / w - 1e-9))  # as Recorder
    scale = 1000.0 / w

    def cat(xs):
        return np.concatenate(xs) if xs else _EMPTY

    def counts(t):
        return _counts(t, w, n)

    fin = done <= H
    t_done = done[fin]
    size = np.asarray(b_size, dtype=np.int64)[fin]
    served = cat(r_served)
    n_to = int(sum(x.size for x in r_to))
    u_to = int(sum(x.size for x in r_gave))
    rej = cat(r_rej)  # refusals in time order: each chunk ends at its refusal
    n_rej = int(rej.size)
    u_rej = int(sum(x.size for x in r_gave_rej))
    gave = np.sort(cat(r_gave + r_gave_rej)) if r_gave_rej else cat(r_gave)
    c_offered, c_attempts, c_done, c_served = counts(offered), counts(sends), counts(t_done), counts(served)
    c_processed = _weighted(size, c_done)  # rows committed per window
    zero = np.zeros(n)
    windows = {
        "t": np.arange(n) * w / 1000.0,
        "offered": c_offered.astype(float) * scale,
        "degraded": counts(shed).astype(float) * scale,
        "attempts": c_attempts.astype(float) * scale,
        "retries": (c_attempts - c_offered).astype(float) * scale,
        "timeouts": counts(cat(r_to)).astype(float) * scale,
        "rejected": counts(rej).astype(float) * scale,
        "gave_up": counts(gave).astype(float) * scale,
        "batches": c_done.astype(float) * scale,
        "goodput": c_served.astype(float) * scale,
        "processed": c_processed.astype(float) * scale,
        "wasted": (c_processed - c_served).astype(float) * scale,
        "dropped": _dropped(drop_t, drop_n, counts) * scale if drop_t else zero * scale,
    }
    assert tuple(windows)[1:] == tuple(c for c in WINDOW_COUNTERS if c not in _WEIGHTED) + _WEIGHTED
    assert WINDOW_LEVELS == ("queue", "busy")
    windows["queue"] = _level(np.asarray(b_close), np.asarray(b_start), H, w, n)
    windows["busy"] = _level(np.asarray(x_start), np.asarray(x_end), H, w, n)

    n_att = int(sends.size)
    a_served = int(served.size)
    att_ledger = Ledger(n_att, a_served, n_to, n_rej, n_att - a_served - n_to - n_rej)
    # a request is answered at most once and gives up at most once
    n_arrived = int(offered.size)
    ledger = Ledger(
        n_arrived,
        a_served,
        u_to,
        u_rej,
        n_arrived - a_served - u_to - u_rej,
        extra={"degraded": int(round(windows["degraded"].sum() * sc.window_ms / 1000.0))},
    )
    committed = int(size.sum())
    n_drop = int(sum(drop_n))
    server = dict(
        committed=committed,
        wasted=committed - a_served,
        rejected=n_rej,
        dropped=n_drop,
        restart_lost=restart_lost,
        rows_in=n_att,
        waiting=n_att - committed - n_rej - n_drop,
        budget_denied=0,
        throttled=0,
        c_batches_after_isolation=0,
        c_last_commit_ms=0.0,
    )
    run = Run(sc, seed, "fast", windows, ledger, att_ledger, server, RunStatus(H, events, False))
    run.recovered, run.recovery_time_s = recovery(run)
    run.summary = summarise(run)
    return run


def _dropped(drop_t: list, drop_n: list, counts) -> np.ndarray:
    """Rows dropped per window (deadline drop at each take, the restart's at its instant): exact
    integer sums, so the order they are added in does not matter."""
    t = np.asarray(drop_t)
    order = np.argsort(t, kind="stable")
    return _weighted(np.asarray(drop_n, dtype=np.int64)[order], counts(t[order])).astype(float)


def _weighted(k: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Integer weights ``k`` of sorted events summed per window, given the windows' event counts
    ``c`` (from :func:`_counts`; events before the first window: none). Exact integers, so equal
    to the Recorder's float sums of the same weights."""
    csum = np.concatenate([[0], np.cumsum(k)])
    ends = np.cumsum(c)
    return csum[ends] - csum[ends - c]
