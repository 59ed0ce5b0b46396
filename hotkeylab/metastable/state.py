"""The model's state and its rules, shared by both engines: read this with :mod:`.model`.

Both engines (:mod:`.model`, the SimPy reference, and :mod:`.engine_fast`) drive one
:class:`State`: they differ only in how they schedule events. Every decision (batching outcome,
queue limit, CoDel, deadline drop, retry delay, budgets, throttling) and every count lives here,
so the same random stream gives the same windows in both.

Random numbers never depend on event order (:mod:`.rng`, :mod:`.arrivals`). Times are in ms.
"""

from __future__ import annotations

from array import array
from collections import deque

from ..sim import Recorder
from .arrivals import arrival_times, as_reached
from .rng import AttemptUniforms
from .scenario import GrpcThrottle, PercentBudget, Scenario
from .terms import (
    _WEIGHTED,
    GROW,
    PENDING,
    REJECTED,
    SERVED,
    TIMED_OUT,
    WINDOW_COUNTERS,
    WINDOW_LEVELS,
    Batch,
    _grown,
)


class State:
    """Everything the model knows at a moment, and the rules that change it."""

    def __init__(self, sc: Scenario, seed: int):
        self.sc = sc
        self.seed = seed
        arr, shed = arrival_times(sc, seed)
        self.arr_t = as_reached(arr)
        n = self.arr_t.size
        self.uniforms = AttemptUniforms(seed, n)  # stream 0: retry delay, 1: local throttle
        counters = [c for c in WINDOW_COUNTERS if c not in _WEIGHTED]
        # two servers with their own queues (B and C) only when there is a second owner to have one
        self.owner_mode = bool(sc.owner_queues and sc.second_owner is not None)
        levels = WINDOW_LEVELS + (("queue_c",) if self.owner_mode else ())
        self.rec = Recorder(sc.horizon_ms, sc.window_ms, counters=counters, levels=levels, weighted=_WEIGHTED,
                            typed=True)
        self.rec.times("degraded").extend(shed.tolist())
        tl = self.rec.times
        self._t_offered, self._t_attempts, self._t_retries = tl("offered"), tl("attempts"), tl("retries")
        self._t_timeouts, self._t_rejected, self._t_gave_up = tl("timeouts"), tl("rejected"), tl("gave_up")
        # per user request, in typed arrays (8 or 1 bytes each: a run may hold millions), grown
        # as the requests arrive (:meth:`reserve`): a run cut short by its event cap never holds
        # the requests it did not reach
        self.first_t = array("d")
        self.n_att = array("q")
        self.prev_delay = array("d")
        self.outcome = bytearray()  # PENDING (0) until the request is answered or given up
        self.last_fail = bytearray()
        self.n_arrived = 0
        # per attempt
        self.att_req = array("i" if n < 2**31 else "q")
        self.att_deadline = array("d")
        self.att_status = bytearray()
        # server
        self.queues: tuple[deque, deque] = (deque(), deque())  # B's, and C's with owner_queues
        self.queue: deque = self.queues[0]
        self.last_owner = 0  # who committed last (owner_queues: the lock alternates)
        self._routed = 0  # batches closed while the second owner is active (every other goes to C)
        self.c_after_isolation = 0  # C's batches committed after isolation (owner_queues)
        self.c_last_commit_ms = 0.0
        self.busy = False
        self.in_service: Batch | None = None
        self.turn = 0
        self.last_empty_t = 0.0
        self.next_bid = 0
        self.rows = dict(committed=0, wasted=0, rejected=0, dropped=0, restart_lost=0)
        # client-side policies
        budget = sc.retry.budget
        self._grpc = isinstance(budget, GrpcThrottle)
        self.tokens = budget.max_tokens if self._grpc else 0.0
        self._firsts: deque = deque()
        self._retries: deque = deque()
        self._thr_req: deque = deque()
        self._thr_acc: deque = deque()
        self.budget_denied = 0
        self.throttled = 0
        # the policy's fields, looked up once (these methods run once per attempt)
        pol = sc.retry
        self._M = sc.timeout_ms
        self._thr = sc.client_throttle
        self._thr_w = self._thr.window_ms if self._thr is not None else 0.0
        self._thr_k = self._thr.k if self._thr is not None else 0.0
        self._budget = budget
        self._max_att = pol.max_attempts
        self._suppress = sc.suppress_retries
        self._jitter = pol.jitter
        self._base, self._mult, self._cap = pol.base_ms, pol.multiplier, pol.cap_ms
        # no backoff (multiplier 1): every retry's delay before jitter is min(cap, base), the
        # same float as min(cap, base × 1^(k−1)); looked up once instead of a power per retry
        self._flat_d = min(pol.cap_ms, pol.base_ms * 1.0) if pol.multiplier == 1 else None
        self._min_delay, self._patience = pol.min_delay_ms, pol.patience_ms
        self._stretch = sc.stretch_retries
        self._retry_uniform, self._throttle_uniform = self.uniforms.retry, self.uniforms.throttle

    # ------------------------------------------------------------------ clients
    def reserve(self, m: int) -> None:
        """Make room for requests ``0 … m − 1`` (at least :data:`GROW` more at a time, at most
        all the arrivals)."""
        have = len(self.first_t)
        m = min(self.arr_t.size, max(m, have + GROW))
        if m > have:
            z8 = bytes(8 * (m - have))
            self.first_t.frombytes(z8)
            self.n_att.frombytes(z8)
            self.prev_delay.frombytes(z8)
            self.outcome.extend(bytes(m - have))
            self.last_fail.extend(bytes(m - have))

    def arrive(self, i: int, t: float) -> None:
        """User request ``i`` reaches the client at ``t``."""
        if i >= len(self.first_t):
            self.reserve(i + 1)
        self.first_t[i] = t
        self.n_arrived += 1
        self._t_offered.append(t)

    def send(self, i: int, t: float) -> int | None:
        """Client sends the next attempt of request ``i``. Returns the attempt id, or ``None`` if
        the client's own adaptive throttle refused it (the caller then calls :meth:`fail`)."""
        k = self.n_att[i]
        self.n_att[i] = k + 1
        a = len(self.att_req)
        self.att_req.append(i)
        self.att_deadline.append(t + self._M)
        self.att_status.append(PENDING)
        self._t_attempts.append(t)
        if k > 0:
            self._t_retries.append(t)
        elif self._budget is not None:
            self._firsts.append(t)
        thr = self._thr
        if thr is not None:
            rq, ac = self._thr_req, self._thr_acc
            rq.append(t)
            lo = t - self._thr_w
            while rq[0] < lo:  # (t itself is in it)
                rq.popleft()
            while ac and ac[0] < lo:
                ac.popleft()
            req = len(rq)
            p = max(0.0, (req - self._thr_k * len(ac)) / (req + 1.0))
            if p > 0 and self._throttle_uniform(i, k) < p:
                self.throttled += 1
                self._reject(a, t)
                return None
        return a

    def _reject(self, a: int, t: float) -> None:
        self.att_status[a] = REJECTED
        self.last_fail[self.att_req[a]] = REJECTED
        self._t_rejected.append(t)
        if self._grpc:  # a failed attempt costs the gRPC throttle a token
            self.tokens = max(0.0, self.tokens - 1.0)

    def timeout(self, a: int, t: float) -> bool:
        """The client's timer for attempt ``a`` fires. True if the attempt was still unanswered
        (the caller then calls :meth:`fail`)."""
        if self.att_status[a] != PENDING:
            return False
        self.att_status[a] = TIMED_OUT
        self.last_fail[self.att_req[a]] = TIMED_OUT
        self._t_timeouts.append(t)
        if self._grpc:
            self.tokens = max(0.0, self.tokens - 1.0)
        return True

    def fail(self, i: int, t: float) -> float | None:
        """Request ``i``'s latest attempt failed at ``t``: the delay (ms) before its retry, or
        ``None`` if the user gives up (attempts exhausted, retries suppressed, over budget, out of
        patience). Engines schedule the retry at ``t + delay``."""
        k = self.n_att[i]  # attempts made; the next retry is number k
        sup = self._suppress
        give_up = k >= self._max_att or (sup is not None and sup.start_ms <= t < sup.end_ms)
        if not give_up:
            u = self._retry_uniform(i, k)
            jitter, base, cap = self._jitter, self._base, self._cap
            if jitter == "decorrelated":
                prev = self.prev_delay[i] or base
                hi = max(base, 3.0 * prev)
                d = min(cap, base + u * (hi - base))
            else:
                d = self._flat_d if self._flat_d is not None else min(cap, _grown(base, self._mult, k - 1))
                if jitter == "full":
                    d = u * d
                elif jitter == "equal":
                    d = 0.5 * d + u * 0.5 * d
            st = self._stretch
            if st is not None and st.start_ms <= t < st.end_ms:  # the seed's measure 2
                d = d * st.factor
            if d < self._min_delay:
                d = self._min_delay
            if t + d - self.first_t[i] > self._patience:
                give_up = True
            elif self._budget is not None and not self._budget_allows(t):
                self.budget_denied += 1
                give_up = True
        if give_up:
            self.outcome[i] = self.last_fail[i]
            self._t_gave_up.append(t)
            return None
        self.prev_delay[i] = d
        return d

    def _budget_allows(self, t: float) -> bool:
        b = self.sc.retry.budget
        if b is None:
            return True
        if isinstance(b, GrpcThrottle):
            return self.tokens > b.max_tokens / 2.0
        assert isinstance(b, PercentBudget)
        lo = t - b.ttl_ms
        while self._firsts and self._firsts[0] < lo:
            self._firsts.popleft()
        while self._retries and self._retries[0] < lo:
            self._retries.popleft()
        allowed = b.min_per_s * b.ttl_ms / 1000.0 + b.percent * len(self._firsts)
        if len(self._retries) + 1 > allowed:
            return False
        self._retries.append(t)
        return True

    # ------------------------------------------------------------------ server
    def overloaded(self, t: float) -> bool:
        """The queue has not been empty during the last CoDel interval (100 ms by default)."""
        interval = self.sc.codel.interval_ms if self.sc.codel is not None else 100.0
        return bool(self.queue) and t - self.last_empty_t > interval

    def close_batch(self, atts: list, t: float) -> list:
        """The batcher hands a batch to the hot-key queue at ``t``. Returns the attempts rejected
        because the queue was full (QueueMaxSize), empty if it was accepted. With owner queues,
        while the second owner is active every other batch goes to C's queue."""
        owner = 0
        if self.owner_mode and self.sc.second_owner.contains(t):
            owner = self._routed & 1
            self._routed += 1
        q = self.queues[owner]
        lim = self.sc.queue_limit
        if lim is not None and self.busy and len(q) >= lim:
            self.rows["rejected"] += len(atts)
            st, lf, req, rej = self.att_status, self.last_fail, self.att_req, self._t_rejected
            for a in atts:  # _reject(a, t), inlined: a stuck run refuses every row this way
                st[a] = REJECTED
                lf[req[a]] = REJECTED
                rej.append(t)
            if self._grpc:
                for _ in atts:
                    self.tokens = max(0.0, self.tokens - 1.0)
            return atts
        if not self.queue and not self.queues[1]:
            self.last_empty_t = t
        q.append(Batch(self.next_bid, atts, t, owner))
        self.next_bid += 1
        self._record_queue(t)
        return []

    def _record_queue(self, t: float) -> None:
        if self.owner_mode:
            self.rec.level("queue", t, len(self.queue) + len(self.queues[1]))
            self.rec.level("queue_c", t, len(self.queues[1]))
        else:
            self.rec.level("queue", t, len(self.queue))

    def _take_owner_batch(self, t: float) -> tuple[Batch | None, float, list]:
        """Owner queues: the row lock goes to the other server when both have a batch waiting
        (each thread re-requests the lock only after its commit, so a FIFO lock alternates);
        else to whichever has one. B's batches take ``batch_ms``, C's ``cross_batch_ms``."""
        qb, qc = self.queues
        if not qb and not qc:
            return None, 0.0, []
        owner = (1 - self.last_owner) if (qb and qc) else (0 if qb else 1)
        b = self.queues[owner].popleft()
        sc = self.sc
        service = sc.cross_batch_ms if owner else sc.batch_ms
        if sc.slow_db is not None and sc.slow_db.contains(t):
            service *= sc.slow_db.factor
        self.last_owner = owner
        self._queue_changed(t)
        self.turn += 1
        self.busy = True
        self.in_service = b
        self.rec.level("busy", t, 1.0)
        return b, service, []

    def take_batch(self, t: float) -> tuple[Batch | None, float, list]:
        """The idle hot-key thread takes its next batch at ``t``. Returns (batch or None, commit
        time in ms, attempts rejected by CoDel for the caller to notify)."""
        if self.owner_mode:
            return self._take_owner_batch(t)
        sc, q = self.sc, self.queue
        notify: list = []
        while q:
            lifo = sc.discipline == "adaptive_lifo" and self.overloaded(t)
            b = q.pop() if lifo else q.popleft()
            if sc.codel is not None:
                allowed = sc.codel.target_ms if self.overloaded(t) else sc.codel.interval_ms
                if t - b.enq_t > allowed:
                    self.rows["dropped"] += len(b.atts)
                    self.rec.count("dropped", t, len(b.atts))
                    for a in b.atts:
                        if self.att_status[a] == PENDING:
                            self._reject(a, t)
                            notify.append(a)
                    self._queue_changed(t)
                    continue
            service = sc.batch_ms_at(t, self.turn)
            if sc.deadline_drop:
                dl = self.att_deadline
                keep = [a for a in b.atts if t + service <= dl[a]]
                if len(keep) < len(b.atts):
                    n_drop = len(b.atts) - len(keep)
                    self.rows["dropped"] += n_drop
                    self.rec.count("dropped", t, n_drop)
                    b.atts = keep
                if not keep:
                    self._queue_changed(t)
                    continue
            self._queue_changed(t)
            self.turn += 1
            self.busy = True
            self.in_service = b
            self.rec.level("busy", t, 1.0)
            return b, service, notify
        return None, 0.0, notify

    def _queue_changed(self, t: float) -> None:
        if not self.queue and not self.queues[1]:
            self.last_empty_t = t
        self._record_queue(t)

    def complete(self, b: Batch, t: float) -> list:
        """The merged commit of ``b`` ends at ``t``. Returns the attempts answered in time."""
        if self.in_service is not b:  # lost in a restart
            return []
        self.in_service = None
        self.busy = False
        self.rec.level("busy", t, 0.0)
        rec, st, dl = self.rec, self.att_status, self.att_deadline
        n = len(b.atts)
        self.rows["committed"] += n
        rec.count("processed", t, n)
        rec.count("batches", t)
        if b.owner and t >= self.sc.second_owner.end_ms:
            self.c_after_isolation += 1
            self.c_last_commit_ms = t
        served = []
        thr = self.sc.client_throttle is not None
        grpc = self.sc.retry.budget if isinstance(self.sc.retry.budget, GrpcThrottle) else None
        for a in b.atts:
            if st[a] == PENDING and t <= dl[a]:
                st[a] = SERVED
                self.outcome[self.att_req[a]] = SERVED
                served.append(a)
                if thr:
                    self._thr_acc.append(t)
                if grpc is not None:
                    self.tokens = min(grpc.max_tokens, self.tokens + grpc.token_ratio)
            else:
                self.rows["wasted"] += 1
        rec.count("goodput", t, len(served))
        rec.count("wasted", t, n - len(served))
        return served

    def restart(self, t: float, batcher_atts: list) -> None:
        """Restart the server at ``t``: the queue, the batch in service and the batcher's open
        batch (``batcher_atts``) are lost. Their clients learn nothing and time out."""
        lost = len(batcher_atts) + sum(len(b.atts) for q in self.queues for b in q)
        if self.in_service is not None:
            lost += len(self.in_service.atts)
        for q in self.queues:
            q.clear()
        self.in_service = None
        if self.busy:
            self.busy = False
            self.rec.level("busy", t, 0.0)
        self._queue_changed(t)
        self.rows["dropped"] += lost
        self.rows["restart_lost"] += lost
        self.rec.count("dropped", t, lost)
