"""The model, in SimPy (the reference engine): one process per actor the postmortem names.

- :func:`users` — the upstream's user requests arriving at the hot key;
- :func:`client` — one per user request: send, wait for the reply or the timeout M, retry;
- :func:`batcher` — the business group commit: ≤ 20 rows or ≤ 20 ms per merged batch;
- :func:`hot_key_thread` — the single thread that commits merged batches (N ms each);
- :func:`restarter` — an operator restarting the server (queue cleared).

All rules and counts live in :class:`~.state.State` (read it next); this file is only *who waits
for what*. The fast engines (:mod:`.engine_fast`, :mod:`.engine_chunked`) give the same windows.
"""

from __future__ import annotations

import math

import simpy

from ..sim import RunStatus
from .core import finish_run
from .scenario import Scenario
from .state import State
from .terms import REJECTED, SERVED


class _World:
    def __init__(self, env: simpy.Environment, state: State):
        self.env = env
        self.state = state
        self.inbox = simpy.Store(env)  # attempts on their way into the batcher
        self.replies: dict = {}  # attempt -> event the client waits on
        self.open_batch: list = []
        self.unbatched: set = set()  # sent, not yet in a closed batch (inbox or open batch)
        self.wake = env.event()  # the idle hot-key thread waits on this
        self.thread_idle = True
        self.thread = None
        self.batcher_proc = None

    def reply(self, atts, value):
        for a in atts:
            ev = self.replies.pop(a, None)
            if ev is not None:
                ev.succeed(value)

    def kick(self):
        if self.thread_idle and not self.wake.triggered:
            self.wake.succeed()

    def close_open_batch(self):
        """Hand the open batch to the hot-key queue; answer its rows if the queue refuses it."""
        atts, self.open_batch = self.open_batch, []
        self.unbatched.difference_update(atts)
        self.reply(self.state.close_batch(atts, self.env.now), REJECTED)

    def lose_open_batch(self, get):
        """A restart: the open batch is gone, and a pending inbox get is withdrawn."""
        if get is not None and not get.triggered:
            get.cancel()
        self.open_batch = []


def users(env, w: _World):
    """User requests reach system A (Poisson; the peak and degrading already applied)."""
    for i, t in enumerate(map(float, w.state.arr_t)):
        yield env.timeout(t - env.now)
        env.process(client(env, w, i))


def client(env, w: _World, i: int):
    """One user request: send an attempt; on timeout or rejection, maybe retry after a delay."""
    S = w.state
    S.arrive(i, env.now)
    M = S.sc.timeout_ms
    while True:
        a = S.send(i, env.now)
        if a is None:  # refused by the client's own adaptive throttle
            delay = S.fail(i, env.now)
        else:
            reply = w.replies[a] = env.event()
            w.unbatched.add(a)
            yield w.inbox.put(a)
            if math.isinf(M):
                yield reply
            else:
                yield reply | env.timeout(M)
            if reply.triggered and reply.value == SERVED:
                return
            if reply.triggered and reply.value == REJECTED:
                delay = S.fail(i, env.now)
            else:  # the client gives up on this attempt at M; the server may still process it
                w.replies.pop(a, None)
                S.timeout(a, env.now)
                delay = S.fail(i, env.now)
        if delay is None:
            return
        yield env.timeout(delay)


def batcher(env, w: _World):
    """Business group commit: a batch opens at its first row, closes at K rows or T ms."""
    S = w.state
    K, T = S.sc.batch_max_rows, S.sc.batch_max_wait_ms
    while True:
        get = None
        try:
            get = w.inbox.get()  # kept: a restart must withdraw it, or it takes the next row
            first = yield get
            w.open_batch = [first]
            timer = env.timeout(T)
            while len(w.open_batch) < K:
                get = w.inbox.get()
                got = yield get | timer
                if get not in got:
                    get.cancel()
                    break
                w.open_batch.append(get.value)
                get = None
            w.close_open_batch()
            w.kick()
        except simpy.Interrupt:  # restart: the open batch is gone
            w.lose_open_batch(get)


def leader_batcher(env, w: _World):
    """Leader/follower group commit (as MySQL's binlog group commit): a row that finds the thread
    free is committed at once; rows that arrive while it commits wait together and go as the next
    batch when it is free (the thread takes them, see :func:`hot_key_thread`), or at K rows."""
    S = w.state
    K = S.sc.batch_max_rows
    while True:
        get = None
        try:
            get = w.inbox.get()
            a = yield get
            get = None
            w.open_batch.append(a)
            if len(w.open_batch) >= K or w.thread_idle:
                w.close_open_batch()
                w.kick()
        except simpy.Interrupt:  # restart: the open batch is gone
            w.lose_open_batch(get)


def hot_key_thread(env, w: _World):
    """The single thread per hot key: take a batch, hold the row lock for its merged commit."""
    S = w.state
    leader = S.sc.batcher == "leader"
    while True:
        if leader and w.open_batch and not S.queue:  # the followers' batch goes next
            w.close_open_batch()  # the thread is free: always accepted
        b, service, notify = S.take_batch(env.now)
        w.reply(notify, REJECTED)
        if b is None:
            w.thread_idle = True
            w.wake = env.event()
            yield w.wake
            w.thread_idle = False
            continue
        try:
            yield env.timeout(service)
        except simpy.Interrupt:  # restart: this batch is lost
            continue
        w.reply(S.complete(b, env.now), SERVED)


def restarter(env, w: _World, at_ms: float):
    """An operator restarts the server: queue and batcher cleared, the batch in flight lost."""
    yield env.timeout(at_ms)
    w.state.restart(env.now, sorted(w.unbatched))
    w.unbatched.clear()
    w.inbox.items.clear()
    w.open_batch = []
    w.batcher_proc.interrupt()
    if not w.thread_idle:
        w.thread.interrupt()


def run_capped(env, S: State) -> RunStatus:
    """Step ``env`` to the horizon, or until the attempts sent reach ``max_events``: what the run's
    time grows with (each attempt costs SimPy a bounded number of events: put, get, timer, reply,
    its share of a batch; every user arrival sends one). The fast engine counts every event, so
    it stops no later in simulated time."""
    H, cap, att = S.sc.horizon_ms, S.sc.max_events, S.att_req
    n = 0
    while True:
        t_next = env.peek()
        if t_next > H or math.isinf(t_next):
            return RunStatus(H, n, False)
        if len(att) >= cap:
            return RunStatus(float(env.now), n, True)
        env.step()
        n += 1


def run_simpy(sc: Scenario, seed: int):
    env = simpy.Environment()
    S = State(sc, seed)
    w = _World(env, S)
    env.process(users(env, w))
    w.batcher_proc = env.process((leader_batcher if sc.batcher == "leader" else batcher)(env, w))
    w.thread_idle = False
    w.thread = env.process(hot_key_thread(env, w))
    if sc.restart_at_ms is not None:
        env.process(restarter(env, w, sc.restart_at_ms))
    status = run_capped(env, S)
    return finish_run(S, "simpy", status, sorted(w.unbatched))
