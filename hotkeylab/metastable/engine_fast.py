"""The fast engine: a plain-Python event loop (heapq) over the shared :class:`~.core.State`.

It schedules exactly the events the SimPy engine's processes produce (user arrivals, the batch
timer, the hot-key thread's commits, client timeouts and retries, a restart) and calls the same
State methods in the same order, so a seed gives identical windows. No process objects, no
callbacks.

:func:`run_fast` first tries :func:`.engine_chunked.run_chunked`, which computes the same events
a batch at a time with numpy for FIFO scenarios (the seed's incident, the what-if widget, the
phase diagrams, queue limits); the event loop :func:`run_loop` runs everything else (CoDel, LIFO,
deadline drop, budgets, client throttle, restart) and any run the chunked path declines.
"""

from __future__ import annotations

import math
from heapq import heapify, heappop, heappush

from ..sim import RunStatus
from .core import State, finish_run
from .engine_chunked import run_chunked
from .scenario import Scenario

_TIMER, _DONE, _SEND, _RESTART = range(4)
_ARR_BLOCK = 1 << 16  # arrival times converted to Python floats at a time
_BUCKET_MS = 1.0  # the event calendar's bucket width
_REFILL_MIN = 64  # a refill takes buckets until the heap holds this many events (or none are left)


class _Calendar:
    """The loop's future events ``(t, seq, kind, x)``, popped in ``(t, seq)`` order as one heap
    would pop them, but cheaper when many are waiting (a refusal storm holds ~300,000 retries; a
    heap that size spends most of its time on cache misses).

    ``heap`` holds the events of the buckets up to ``k`` (bucket ``j`` is the times
    ``[j·w, (j+1)·w)``); every later event waits unsorted in its bucket's list in ``far``, and
    ``keys`` is a heap of ``far``'s buckets. When ``heap`` runs dry, :meth:`refill` makes the
    next bucket the heap. Every event in ``far`` is later than every event in ``heap``, so the
    order is the one heap's. Events after the horizon are never due: they are not kept.
    """

    __slots__ = ("heap", "far", "keys", "k", "w", "H", "seq")

    def __init__(self, H: float, w: float = _BUCKET_MS):
        self.heap: list = []
        self.far: dict = {}
        self.keys: list = []
        self.k = -1
        self.w = w
        self.H = H
        self.seq = 0

    def push(self, t: float, kind: int, x) -> None:
        if t > self.H:
            return
        self.seq += 1
        k = int(t // self.w)
        if k <= self.k:
            heappush(self.heap, (t, self.seq, kind, x))
            return
        b = self.far.get(k)
        if b is None:
            self.far[k] = [(t, self.seq, kind, x)]
            heappush(self.keys, k)
        else:
            b.append((t, self.seq, kind, x))

    def refill(self) -> bool:
        """Make the next buckets the heap (``heap`` is empty): the first, and more while it holds
        fewer than ``_REFILL_MIN`` events; False if there is none."""
        keys, far = self.keys, self.far
        if not keys:
            return False
        k = heappop(keys)
        b = far.pop(k)
        while len(b) < _REFILL_MIN and keys:  # sparse buckets: take the next ones too
            k = heappop(keys)
            b.extend(far.pop(k))
        self.k = k
        heapify(b)
        self.heap[:] = b
        return True


def run_fast(sc: Scenario, seed: int):
    """The fast engine: the chunked path where it applies, else the event loop."""
    run = run_chunked(sc, seed)
    return run if run is not None else run_loop(sc, seed)


def run_loop(sc: Scenario, seed: int):
    """The event loop: every event of the SimPy engine, in the same order."""
    S = State(sc, seed)
    arr_t = S.arr_t
    n_arr = arr_t.size
    # the arrival times as Python floats, a block at a time (a list of all would cost 32 B each)
    arr = arr_t[:_ARR_BLOCK].tolist()
    a0 = 0  # index of arr[0]
    S.reserve(len(arr))  # room for the requests of this block
    ta = arr[0] if arr else math.inf  # the next arrival's time
    H, cap = sc.horizon_ms, sc.max_events
    T, K = sc.batch_max_wait_ms, sc.batch_max_rows
    leader = sc.batcher == "leader"  # leader/follower: no timer, the batch closes when the thread is free
    cal = _Calendar(H)
    heap, push, refill = cal.heap, cal.push, cal.refill
    batch: list = []
    gen = 0  # batcher generation: a timer fires only for the batch it was set for
    if sc.restart_at_ms is not None:
        push(sc.restart_at_ms, _RESTART, 0)
    ai = 0
    events = 0
    t = 0.0
    send, fail, timeout = S.send, S.fail, S.timeout
    att_req, att_deadline, att_status = S.att_req, S.att_deadline, S.att_status
    first_t, t_offered = S.first_t, S._t_offered
    inf = math.inf
    # Client timers: every attempt's deadline is its send time + M, and attempts are numbered in
    # the order they are sent, so the timers fire in attempt order: the next one to fire is the
    # first attempt from ``tx`` on that is still pending (answered, refused or throttled ones have
    # no timer event). A pointer, not a heap or a queue of attempt ids.
    tx = 0

    while True:
        if not heap:
            refill()
        th = heap[0][0] if heap else inf
        n_sent = len(att_status)
        while tx < n_sent and att_status[tx]:  # no longer pending: its timer is no event
            tx += 1
        td = att_deadline[tx] if tx < n_sent else inf
        if td < ta and td < th:
            if td > H:
                break
            if events >= cap:
                break
            events += 1
            x = tx
            tx += 1
            if timeout(x, td):
                d = fail(att_req[x], td)
                if d is not None:
                    push(td + d, _SEND, att_req[x])
            t = td
            continue
        tn = ta if ta <= th else th
        if tn > H:
            break
        if events >= cap:
            break
        events += 1
        if ta <= th:
            t = ta
            i = ai
            ai += 1
            j = ai - a0
            if j < len(arr):
                ta = arr[j]
            elif ai < n_arr:
                arr = arr_t[ai : ai + _ARR_BLOCK].tolist()
                a0 = ai
                S.reserve(ai + len(arr))
                ta = arr[0]
            else:
                ta = inf
            first_t[i] = t  # S.arrive(i, t), inlined
            t_offered.append(t)
            kind = _SEND
        else:
            t, _, kind, x = heappop(heap)
            i = x
            if kind == _TIMER:
                if x != gen or not batch:
                    continue
                kind = -1  # close the batch below
            elif kind == _DONE:
                if x is not S.in_service:  # lost in a restart
                    continue
                S.complete(x, t)
                kind = -2  # take the next batch below
                if leader and batch and not S.queue:  # the followers' batch goes next
                    atts, batch = batch, []
                    S.close_batch(atts, t)  # the thread is free: always accepted
            elif kind == _RESTART:
                S.restart(t, batch)
                batch = []
                gen += 1
                continue
        if kind == _SEND:
            a = send(i, t)
            if a is None:  # refused by the client's own throttle
                d = fail(i, t)
                if d is not None:
                    push(t + d, _SEND, i)
                continue
            if not batch and not leader:
                gen += 1
                push(t + T, _TIMER, gen)
            batch.append(a)
            if len(batch) < K and not (leader and not S.busy):
                continue
            kind = -1
        if kind == -1:  # the batcher closes its batch
            atts, batch = batch, []
            gen += 1
            for a in S.close_batch(atts, t):
                i = att_req[a]
                d = fail(i, t)
                if d is not None:
                    push(t + d, _SEND, i)
            if S.busy:
                continue
        # the hot-key thread is idle: take the next batch
        b, service, notify = S.take_batch(t)
        for a in notify:
            d = fail(att_req[a], t)
            if d is not None:
                push(t + d, _SEND, att_req[a])
        if b is not None:
            push(t + service, _DONE, b)

    nxt = min(
        ta,
        heap[0][0] if heap or refill() else inf,
        att_deadline[tx] if tx < len(att_status) and not att_status[tx] else inf,
    )
    truncated = events >= cap and nxt <= H
    t_end = t if truncated else H
    S.n_arrived = ai
    return finish_run(S, "fast", RunStatus(t_end, events, truncated), batch)
