"""05 · The model: the actors of seed 004, one SimPy process each, then :func:`simulate`.

Read top to bottom: :class:`_Gate` (the access layer's rate-limit gate with its global mutex and
log), :func:`source` (users), :func:`request` (one goroutine per request, under one of the three
designs), then :func:`simulate`, which wires them up and returns a :class:`~.results.Run`. The
limiters are in :mod:`.limiters`.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np
import simpy

from ..sim import (
    Ledger,
    Outcome,
    PoissonSource,
    Recorder,
    RunStatus,
    check_seed,
    make_rng,
    run_bounded,
    window_means,
    window_percentiles,
)
from ..validate import check_int
from .limiters import ChannelBucket, ReservationLimiter, refill
from .results import Run
from .scenario import (
    ADMITTED,
    CLIENT_GONE,
    IN_SYSTEM,
    LOG_CANCELED,
    LOG_FORWARD,
    LOG_LIMIT_OK,
    LOG_LIMIT_REFUSED,
    LOG_LIMIT_TIMER,
    LOG_RECV,
    MAX_EVENTS,
    REJECTED,
    SEED_INCIDENT,
    TIMED_OUT,
    Scenario,
)

__all__ = ["Mutex", "source", "request", "simulate"]


# --------------------------------------------------------------------------- the model
class _Waiters(deque):
    """The mutex's waiters in arrival order. SimPy grants with ``pop(0)``, which a list does in
    O(waiters): with 10^5 goroutines blocked on the mutex every grant copied the whole queue."""

    def pop(self, index: int = -1):
        if index == 0:
            return self.popleft()
        item = self[index]
        del self[index]
        return item


class Mutex(simpy.Resource):
    """The access layer's global ``sync.Mutex``: one holder at a time, waiters granted in arrival
    order (a ``simpy.Resource`` of capacity 1)."""

    PutQueue = _Waiters

    def __init__(self, env: simpy.Environment):
        super().__init__(env, capacity=1)


@dataclass
class _Gate:
    """Shared state of one run: the mutex, the two limiters, the records."""

    env: simpy.Environment
    sc: Scenario
    mutex: simpy.Resource
    limiters: dict
    rec: Recorder
    arrive: list = field(default_factory=list)
    path: list = field(default_factory=list)
    lock_at: list = field(default_factory=list)
    unlock_at: list = field(default_factory=list)
    done_at: list = field(default_factory=list)
    outcome: list = field(default_factory=list)
    log_t: list = field(default_factory=list)  # the access layer's log: time, request, line
    log_req: list = field(default_factory=list)
    log_code: list = field(default_factory=list)
    max_blocked: int = 100_000
    crashed_at_ms: float = math.nan
    blocked: int = 0
    peak_blocked: int = 0

    def enter(self, i_path: int) -> int:
        i = len(self.arrive)
        t = self.env.now
        self.arrive.append(t)
        self.path.append(i_path)
        self.lock_at.append(math.nan)
        self.unlock_at.append(math.nan)
        self.done_at.append(math.nan)
        self.outcome.append(IN_SYSTEM)
        self.blocked += 1
        self.peak_blocked = max(self.peak_blocked, self.blocked)
        self.rec.count("offered", t)
        self.log(i, LOG_RECV)
        return i

    def log(self, i: int, code: int) -> None:
        """One line of the access layer's log: ``log.Printf`` with a timestamp."""
        self.log_t.append(self.env.now)
        self.log_req.append(i)
        self.log_code.append(code)

    def leave(self, i: int, outcome: int) -> None:
        t = self.env.now
        self.done_at[i] = t
        self.outcome[i] = outcome
        self.blocked -= 1
        name = {
            ADMITTED: "admitted",
            TIMED_OUT: "timeouts",
            REJECTED: "rejected",
            CLIENT_GONE: "client_gone",
        }[outcome]
        self.rec.count(name, t)

    def forward(self, i: int) -> None:
        """Past the limiter: forward to the business layer with the request's context. If the
        client gave up meanwhile, the context is cancelled and the call fails at once: the request
        is dropped (its token is spent all the same)."""
        if self.env.now - self.arrive[i] > self.sc.client_timeout_ms:
            self.log(i, LOG_CANCELED)
            self.leave(i, CLIENT_GONE)
        else:
            self.log(i, LOG_FORWARD)
            self.leave(i, ADMITTED)


def source(env: simpy.Environment, gate: _Gate, rng: np.random.Generator):
    """User requests: a Poisson stream at ``offered_per_s`` (:class:`hotkeylab.sim.PoissonSource`);
    each goes down the key2 path with probability ``key2_share`` and spawns one :func:`request`
    goroutine. Stops when ``gate.max_blocked`` requests are blocked at once: the access layer is
    OOM-killed."""
    sc = gate.sc
    if sc.offered_per_s == 0:
        return
    arrivals = PoissonSource(rng, sc.offered_per_s)
    block = 4096
    while True:
        gaps = arrivals.gaps(block)  # the next 4096 gaps, then which key each request takes
        keys = rng.random(block) < sc.key2_share
        for gap, is_key2 in zip(gaps.tolist(), keys.tolist(), strict=True):
            yield env.timeout(gap)
            env.process(request(env, gate, 2 if is_key2 else 1))
            if gate.blocked >= gate.max_blocked:
                gate.crashed_at_ms = env.now
                return


def request(env: simpy.Environment, gate: _Gate, key: int):
    """One request's goroutine at the rate-limit gate.

    key1: the limiter is in the lock-free map, ``Taken`` without the mutex. key2 in the seed's
    design: ``Lock.Lock()``, look up, ``Taken`` - and only then ``Unlock`` (the ``defer``).
    key2 in the fixed designs: look up without the mutex, then wait (``"fix"``) or reserve
    (``"reserve"``) holding nothing. Then, past the limiter, :meth:`_Gate.forward`; nothing
    here watches the client: a request whose client has gone still waits for the mutex and
    still takes a token.
    """
    sc = gate.sc
    i = gate.enter(key)
    limiter = gate.limiters[key]
    if key == 2 and sc.design == "seed":
        req = gate.mutex.request()  # Lock.Lock()
        yield req
        gate.lock_at[i] = env.now
        if sc.lookup_ms > 0:
            yield env.timeout(sc.lookup_ms)  # RateLimitC / rateMap lookup
        ok, _ = yield from limiter.taken(sc.count, sc.time_duration_ms)
        gate.mutex.release(req)  # defer Lock.Unlock()
        gate.unlock_at[i] = env.now
    elif sc.design == "reserve":
        ok, wait = limiter.reserve(env.now, sc.count, sc.timeout_ms)
        if not ok:
            gate.log(i, LOG_LIMIT_REFUSED)
            gate.leave(i, REJECTED)
            return
        if wait > 0:
            yield env.timeout(wait)  # sleep until the reservation's time, holding nothing
    else:  # key1 (any design but reserve), or key2 in the fix
        ok, _ = yield from limiter.taken(sc.count, sc.time_duration_ms)
    if not ok:
        gate.log(i, LOG_LIMIT_TIMER)
        gate.leave(i, TIMED_OUT)
        return
    gate.log(i, LOG_LIMIT_OK)
    gate.forward(i)


#: The ledger's term (:class:`hotkeylab.sim.Outcome`) of each outcome code: a request whose client
#: had gone when it passed the gate counts as timed out, as one whose timer fired.
_TERM_OF = {IN_SYSTEM: Outcome.IN_SYSTEM, ADMITTED: Outcome.SERVED, TIMED_OUT: Outcome.TIMED_OUT,
            REJECTED: Outcome.REJECTED, CLIENT_GONE: Outcome.TIMED_OUT}
LEDGER_TERM = np.array([_TERM_OF[code] for code in range(len(_TERM_OF))])


def _level_windows(starts, ends, window_ms, n, t_end_ms):
    """Time-averaged number of open intervals ``[start, end)`` in each window (the windows after
    ``t_end_ms`` average over their part before it; empty ones are 0).

    ``F(b) = Σ max(0, min(end, b) − start)`` is the time spent before ``b``; the area in window
    ``k`` is ``F(b_{k+1}) − F(b_k)``, and ``Σ_{x_i < b} (b − x_i)`` comes from a sorted cumsum.
    """
    b = np.minimum(np.arange(n + 1) * window_ms, t_end_ms)

    def before(x):
        x = np.sort(x)
        c = np.concatenate([[0.0], np.cumsum(x)])
        k = np.searchsorted(x, b, side="left")
        return k * b - c[k]

    area = np.diff(before(np.asarray(starts, float)) - before(np.asarray(ends, float)))
    width = np.diff(b)
    return np.divide(area, width, out=np.zeros(n), where=width > 0)


def _window_stats(done_ms, sojourn_ms, window_ms, n):
    """Mean, p50 and p99 of the time in the gate of the requests finishing in each window (NaN where
    none finishes), grouped by the kernel (:func:`hotkeylab.sim.window_percentiles`)."""
    m = ~np.isnan(done_ms)
    p50, p99 = window_percentiles(done_ms[m], sojourn_ms[m], window_ms, n)
    return window_means(done_ms[m], sojourn_ms[m], window_ms, n), p50, p99


def simulate(
    scenario: Scenario = SEED_INCIDENT,
    seed: int = 0,
    *,
    max_events: int | None = None,
    max_blocked: int = 100_000,
) -> Run:
    """Run the gate for ``scenario.horizon_ms`` with SimPy and return a :class:`Run`.

    Bounded for any parameters: at most ``max_events`` SimPy events (``scenario.max_events``
    unless given here; ``status.truncated``), and
    once ``max_blocked`` requests are blocked at the same time the access layer is OOM-killed
    (``crashed``, ``crashed_at_ms``): no more arrivals, and the run ends with that window.
    Same ``seed``, same result.
    """
    if not isinstance(scenario, Scenario):
        raise ValueError(f"scenario must be a lock_timer.Scenario, got {type(scenario).__name__}")
    seed = check_seed(seed)
    sc = scenario
    max_events = sc.max_events if max_events is None else check_int("max_events", max_events, low=1,
                                                                    high=MAX_EVENTS)
    max_blocked = check_int("max_blocked", max_blocked, low=1)
    rng = make_rng(seed)
    env = simpy.Environment()
    rec = Recorder(
        sc.horizon_ms,
        sc.window_ms,
        counters=("offered", "admitted", "client_gone", "timeouts", "rejected"),
    )
    if sc.design == "reserve":
        limiters = {
            k: ReservationLimiter(sc.rate_per_s, sc.burst, sc.start_full, sc.reservation)
            for k in (1, 2)
        }
    else:
        limiters = {k: ChannelBucket(env, sc.rate_per_s, sc.burst, sc.start_full) for k in (1, 2)}
        if sc.rate_per_s > 0:
            for b in limiters.values():
                env.process(refill(env, b))
    gate = _Gate(
        env=env,
        sc=sc,
        mutex=Mutex(env),
        limiters=limiters,
        rec=rec,
        max_blocked=max_blocked,
    )
    env.process(source(env, gate, rng))

    # run window by window so that a blocked count past max_blocked stops the run ("OOM")
    events, crashed, truncated = 0, False, False
    t = 0.0
    while t < sc.horizon_ms:
        t = min(sc.horizon_ms, t + sc.window_ms)
        st = run_bounded(env, until_ms=t, max_events=max_events - events)
        events += st.events
        if st.truncated:
            truncated = True
            break
        if not math.isnan(gate.crashed_at_ms):
            crashed = True
            break
        if events >= max_events:
            truncated = env.peek() <= sc.horizon_ms
            break
    t_end = float(env.now) if (truncated or crashed) else sc.horizon_ms
    status = RunStatus(t_end_ms=t_end, events=events, truncated=truncated)
    arrive = np.asarray(gate.arrive, dtype=float)
    done = np.asarray(gate.done_at, dtype=float)
    outcome = np.asarray(gate.outcome, dtype=np.int8)
    w = rec.arrays(per_second=True)
    end = np.where(np.isnan(done), t_end, done)
    sojourn = end - arrive
    lock_at = np.asarray(gate.lock_at, dtype=float)
    key = np.asarray(gate.path, dtype=np.int8)
    n_w = len(w["t"])
    w["blocked"] = _level_windows(arrive, end, sc.window_ms, n_w, t_end)
    queued = key == 2 if sc.design == "seed" else np.zeros(len(arrive), dtype=bool)
    lock_end = np.where(np.isnan(lock_at), end, lock_at)
    w["lock_queue"] = _level_windows(arrive[queued], lock_end[queued], sc.window_ms, n_w, t_end)
    w["mean_ms"], w["p50_ms"], w["p99_ms"] = _window_stats(done, sojourn, sc.window_ms, len(w["t"]))
    ledger = Ledger.from_outcomes(
        LEDGER_TERM[outcome], timer_fired=int((outcome == TIMED_OUT).sum()),
        client_gone=int((outcome == CLIENT_GONE).sum()), peak_blocked=gate.peak_blocked,
    )
    return Run(
        scenario=sc, seed=seed, status=status, crashed=crashed, crashed_at_ms=gate.crashed_at_ms,
        t_end_ms=t_end, ledger=ledger, windows=w, peak_blocked=gate.peak_blocked,
        # one entry per request
        arrive_ms=arrive, key=key, lock_ms=lock_at, unlock_ms=np.asarray(gate.unlock_at, dtype=float),
        done_ms=done, outcome=outcome,
        tokens_handed_out=sum(lim.handed_out for lim in limiters.values()),
        tokens_wasted=sum(lim.wasted for lim in limiters.values()),
        # the access log, one entry per line
        log_ms=np.asarray(gate.log_t, dtype=float), log_req=np.asarray(gate.log_req, dtype=np.int64),
        log_code=np.asarray(gate.log_code, dtype=np.int8),
    )
