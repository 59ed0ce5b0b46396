"""09 · Fault tolerance: retries, failover, ejection, timeouts, idempotency, degradation and
isolation, from an 800-million-request web system (seed 003).

The seed (*亿级Web系统的高容错性实践*) is an engineer's account of QQ's activity platform (AMS),
grown from a million to 800 million requests a day. It lists the practices that let the system
"put out its own fires". Each one gets a small SimPy model, a closed form and a test that they
agree, in the seed's order:

1. **Simple retry** (:class:`RetryScenario`): one retry lifts 95% to 99.75%, but doubles the load
   when the backend really fails; a success-rate gate retries only while the backend is healthy.
2. **Primary/backup switch** (:class:`FailoverScenario`): the failover costs a connect timeout in
   latency; the backup idles; both fall to the overload that felled the primary.
3. **Dynamic ejection** (:class:`EjectionScenario`): the seed's router L5 ejects a machine whose
   success rate falls below 50%, probes it and re-adds it; under overload ejection concentrates the
   load, and Envoy's panic threshold stops the cascade.
4. **Timeouts and worker pools** (:class:`PoolScenario`): 100 workers, 5 s timeout, 100 ms service:
   ``capacity = workers / holding`` with ``holding = (1 − h)·service + h·timeout``.
5. **Timeout-success and duplicate delivery** (:class:`DeliveryScenario`): a gift delivered at
   8 s after a 6 s timeout; duplicates for no protection, a per-user limit, an order id, an
   asynchronous delivery queue and the read-timeout counter capped at 2.
6. **Degrading non-core steps** (:class:`ReportScenario`): a 3 ms reporting call with a 20 ms
   timeout bypassed on timeout, against a blocking call.
7. **Isolation** (:class:`IsolationScenario`): a query surge in a pool shared with delivery,
   against separate query and delivery clusters.

Every simulation takes a ``seed`` (same seed, same run), ends at its horizon or an event cap
(:func:`hotkeylab.sim.run_bounded`) and returns a :class:`Run` whose :class:`~hotkeylab.sim.Ledger`
balances: ``arrived = served + timed_out + rejected + in_system``. Where the seed gives no number,
the presets say which number is an assumption.

Units: milliseconds in the API (``*_ms``), rates per second (``*_per_s``); ``Run.windows`` holds
equal-length arrays over time windows with ``t`` (window start) in seconds.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field, replace

import numpy as np
import simpy

from . import capacity
from .plotting import COLORS, decorate, lock_gantt, new_figure, shade
from .sim import Ledger, Recorder, RunStatus, check_seed, make_rng, run_bounded
from .validate import check_choice, check_int, check_number, check_probability

__all__ = [
    # shared
    "Run",
    # 1 retry
    "RETRY_POLICIES",
    "RetryScenario",
    "SEED_RETRY",
    "SEED_BLIP",
    "backend_capacity_per_s",
    "attempts_per_user",
    "user_success",
    "retry_load_per_s",
    "storm_sustains",
    "retry_stuck_count",
    "retry_storm_error_share",
    "simulate_retry",
    "plot_retry",
    # 2 failover
    "DOWN_KINDS",
    "FailoverScenario",
    "SEED_FAILOVER",
    "SEED_FAILOVER_SURGE",
    "surge_fill_ms",
    "surge_both_fall_factor",
    "failover_latency_ms",
    "mean_latency_ms",
    "backup_utilisation",
    "backup_mean_utilisation",
    "simulate_failover",
    "plot_failover",
    # 3 ejection
    "EjectionScenario",
    "SEED_EJECTION",
    "SEED_EJECTION_OVERLOAD",
    "SEED_DATACENTRES",
    "datacentre_loss_success",
    "datacentre_loss_max_rate",
    "erlang_b",
    "server_success",
    "pool_success",
    "ejection_delay_ms",
    "cascade_successes",
    "simulate_ejection",
    "plot_ejection",
    "explore_ejection",
    # 4 worker pools
    "IO_MODES",
    "PoolScenario",
    "SEED_POOL",
    "SEED_POOL_INCIDENT",
    "mean_capped_ms",
    "share_within",
    "service_percentile_ms",
    "holding_ms",
    "pool_capacity_per_s",
    "async_capacity_per_s",
    "shared_mix_capacity_per_s",
    "separated_mix_capacity_per_s",
    "measure_capacity",
    "simulate_pool",
    "plot_capacity_curve",
    "plot_pool_runs",
    "explore_pool",
    # 5 duplicates
    "PROTECTIONS",
    "OUTCOMES",
    "DeliveryScenario",
    "SEED_DELIVERY",
    "SEED_SEQUENCE",
    "gift_distribution",
    "expected_duplicates",
    "simulate_delivery",
    "plot_sequence",
    "plot_duplicates",
    # 6 degrade
    "REPORT_MODES",
    "ReportScenario",
    "SEED_REPORT",
    "core_latency_ms",
    "report_capacity_per_s",
    "simulate_report",
    "plot_report",
    # 7 isolation
    "IsolationScenario",
    "SEED_ISOLATION",
    "shared_pool_success",
    "separated_success",
    "simulate_isolation",
    "plot_isolation",
    "storage_split",
    "simulate_storage_days",
    # 8 business-level checks
    "GiftConfigScenario",
    "SEED_GIFT_CONFIG",
    "check_gift_config",
    "config_errors_fluid",
    "simulate_gift_config",
    "unverified_launches",
    "simulate_verification",
    # verdicts counted over random seeds
    "COUNT_SEEDS", "count_runs", "near", "count_text", "EJECTION_VERDICTS", "OVERLOAD_VERDICTS",
    "DATACENTRE_VERDICTS", "FAILOVER_VERDICTS", "ISOLATION_VERDICTS", "ejection_counts",
    "overload_counts", "datacentre_counts", "failover_counts", "isolation_counts", "pool_designs",
    "pool_conclusion_holds",
]

MAX_RATE_PER_S = 100_000.0
MAX_HORIZON_MS = 3_600_000.0
MAX_WORKERS = 100_000
DEFAULT_MAX_EVENTS = 2_000_000


# =========================================================================== shared pieces
@dataclass(frozen=True)
class Run:
    """What every simulation of this module returns.

    ``windows``: equal-length numpy arrays over time windows, ``t`` = window start in seconds,
    counters per second, levels as time-weighted means. ``summary``: the key numbers (a dict).
    ``log``: per-request arrays or event lists the plots need. ``status``: how the bounded run
    ended (``status.truncated`` if the event cap stopped it before the horizon).
    """

    scenario: object
    seed: int
    status: RunStatus
    ledger: Ledger
    windows: dict
    summary: dict
    log: dict = field(default_factory=dict)

    @property
    def truncated(self) -> bool:
        return self.status.truncated


def _check_window(name_start: str, start: float, name_end: str, end: float) -> None:
    check_number(name_start, start, low=0.0, high=MAX_HORIZON_MS)
    check_number(name_end, end, low=0.0, allow_inf=True)
    if end < start:
        raise ValueError(f"{name_end} must be >= {name_start} ({start:g}), got {end!r}")


def _check_horizon(sc) -> None:
    check_number("horizon_ms", sc.horizon_ms, low=0.0, low_open=True, high=MAX_HORIZON_MS)
    check_number("window_ms", sc.window_ms, low=0.0, low_open=True, high=sc.horizon_ms)


def _check_run_args(scenario, kind, seed, max_events) -> int:
    if not isinstance(scenario, kind):
        raise ValueError(
            f"scenario must be a fault_tolerance.{kind.__name__}, got {type(scenario).__name__}"
        )
    check_int("max_events", max_events, low=1)
    return check_seed(seed)


def _segments(rate_per_s, horizon_ms, start_ms=0.0, end_ms=0.0, factor=1.0):
    """Piecewise-constant Poisson rates: ``rate`` over the horizon, ``rate × factor`` inside
    ``[start_ms, end_ms)``."""
    if end_ms <= start_ms or factor == 1.0:
        return [(0.0, horizon_ms, rate_per_s)]
    s, e = min(start_ms, horizon_ms), min(end_ms, horizon_ms)
    return [(0.0, s, rate_per_s), (s, e, rate_per_s * factor), (e, horizon_ms, rate_per_s)]


def _poisson(env, rng, segments, spawn):
    """Poisson arrivals over piecewise-constant ``segments`` ``[(t0_ms, t1_ms, rate_per_s)]``;
    calls ``spawn()`` at each arrival. Gaps are drawn in blocks (same seed, same stream)."""
    for t0, t1, rate in segments:
        if rate <= 0 or t1 <= t0:
            continue
        if env.now < t0:
            yield env.timeout(t0 - env.now)
        mean = 1000.0 / rate
        t = max(env.now, t0)
        crossed = False
        while not crossed:
            for gap in rng.exponential(mean, 256).tolist():
                t += gap
                if t >= t1:
                    crossed = True
                    break
                yield env.timeout(t - env.now)
                spawn()


def _bounded(env, sc, max_events) -> RunStatus:
    st = run_bounded(env, until_ms=sc.horizon_ms, max_events=max_events)
    t_end = float(env.now) if st.truncated else sc.horizon_ms
    return RunStatus(t_end_ms=t_end, events=st.events, truncated=st.truncated)


def _window_stats(t_done_ms, values, window_ms, n):
    """Mean, p50 and p99 of ``values`` binned by ``t_done_ms`` into ``n`` windows (NaN if none)."""
    mean = np.full(n, np.nan)
    p50 = np.full(n, np.nan)
    p99 = np.full(n, np.nan)
    t = np.asarray(t_done_ms, dtype=float)
    v = np.asarray(values, dtype=float)
    keep = ~np.isnan(t) & ~np.isnan(v)
    idx = np.floor_divide(t[keep], window_ms).astype(np.int64)
    v = v[keep]
    inside = (idx >= 0) & (idx < n)
    idx, v = idx[inside], v[inside]
    order = np.argsort(idx, kind="stable")
    idx, v = idx[order], v[order]
    bounds = np.searchsorted(idx, np.arange(n + 1))
    for w in range(n):
        a, b = bounds[w], bounds[w + 1]
        if b > a:
            mean[w] = v[a:b].mean()
            p50[w], p99[w] = np.percentile(v[a:b], [50, 99])
    return mean, p50, p99


def _window_share(t_ms, ok, window_ms, n):
    """Share of ``ok`` among items binned by ``t_ms`` (NaN in empty windows)."""
    t = np.asarray(t_ms, dtype=float)
    idx = np.floor_divide(t, window_ms).astype(np.int64)
    inside = (idx >= 0) & (idx < n)
    tot = np.bincount(idx[inside], minlength=n).astype(float)
    good = np.bincount(idx[inside], weights=np.asarray(ok, float)[inside], minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tot > 0, good / np.where(tot > 0, tot, 1), np.nan)


def _share(mask_ok, mask_all) -> float:
    n = int(np.count_nonzero(mask_all))
    return float(np.count_nonzero(mask_ok & mask_all) / n) if n else math.nan


class _Attempt:
    """One call in flight: ``done`` fires with the answer; ``abandoned`` once the caller has
    given up (the callee cannot tell, and its late answer is wasted work)."""

    __slots__ = ("done", "abandoned")

    def __init__(self, env):
        self.done = env.event()
        self.abandoned = False


def _legend_right(ax, **kw):
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, **kw)


def _log_ms_ticks(ax, axis="y", mantissas=(1, 2, 5)):
    """Plain-number ticks (1, 2, 5, 10, 20, 50, …) on a log axis in ms."""
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator, StrMethodFormatter

    ticks = [m * 10.0**e for e in range(-1, 8) for m in mantissas]
    a = ax.yaxis if axis == "y" else ax.xaxis
    a.set_major_locator(FixedLocator(ticks))
    a.set_major_formatter(StrMethodFormatter("{x:g}"))
    a.set_minor_locator(NullLocator())
    a.set_minor_formatter(NullFormatter())


# =========================================================================== 1 · simple retry
RETRY_POLICIES = ("none", "always", "gated")
RETRY_LABELS = {
    "none": "no retry",
    "always": "always retry once",
    "gated": "retry only while success ≥ gate",
}
POLICY_STYLE = {"none": ":", "always": "-", "gated": "--"}


@dataclass(frozen=True)
class RetryScenario:
    """AMS calls one backend and retries failed calls. Times in ms, rates per second.

    The backend is a FIFO queue in front of ``workers`` workers (exponential service of mean
    ``service_ms``); it cannot tell that a caller has given up, so under overload it spends its
    capacity on answers nobody waits for and its goodput collapses. Each call succeeds with
    ``normal_success``, or ``fault_success`` inside the fault window.
    """

    users_per_s: float = 120.0  # user requests/s (first clicks), Poisson
    workers: int = 4  # backend workers
    service_ms: float = 20.0  # mean service time per call (exponential)
    timeout_ms: float = 500.0  # AMS's timeout per call
    normal_success: float = 0.999  # success probability of a call outside the fault
    fault_success: float = 0.2  # ... inside the fault window
    fault_start_ms: float = 10_000.0
    fault_end_ms: float = 20_000.0
    attempts: int = 2  # calls per click, the first included (2 = one retry)
    policy: str = "always"  # "none" | "always" | "gated"
    gate_threshold: float = 0.9  # gated: retry only while the measured success rate >= this
    gate_window_ms: float = 1000.0  # gated: success rate over the calls of the last window
    gate_min_samples: int = 20  # gated: fewer calls in the window count as healthy
    clicks: int = 1  # clicks per user: a user who sees a failure clicks again, up to this many
    reclick_ms: float = 1000.0  # a user clicks again this long after seeing the failure
    horizon_ms: float = 40_000.0
    window_ms: float = 500.0

    def __post_init__(self):
        check_number("users_per_s", self.users_per_s, low=0.0, high=MAX_RATE_PER_S)
        object.__setattr__(self, "workers", check_int("workers", self.workers, low=1, high=MAX_WORKERS))
        check_number("service_ms", self.service_ms, low=0.0, low_open=True, high=1e6)
        check_number("timeout_ms", self.timeout_ms, low=0.0, low_open=True, high=1e7)
        check_probability("normal_success", self.normal_success)
        check_probability("fault_success", self.fault_success)
        _check_window("fault_start_ms", self.fault_start_ms, "fault_end_ms", self.fault_end_ms)
        object.__setattr__(self, "attempts", check_int("attempts", self.attempts, low=1, high=100))
        check_choice("policy", self.policy, RETRY_POLICIES)
        check_probability("gate_threshold", self.gate_threshold)
        check_number("gate_window_ms", self.gate_window_ms, low=0.0, low_open=True, high=1e7)
        object.__setattr__(self, "gate_min_samples", check_int("gate_min_samples", self.gate_min_samples, low=1))
        object.__setattr__(self, "clicks", check_int("clicks", self.clicks, low=1, high=100))
        check_number("reclick_ms", self.reclick_ms, low=0.0, low_open=True, high=1e7)
        _check_horizon(self)

    @property
    def capacity_per_s(self) -> float:
        """Calls/s the backend completes when busy: ``workers × 1000 / service_ms``."""
        return backend_capacity_per_s(self.workers, self.service_ms)

    def success_at(self, t_ms: float) -> float:
        return self.fault_success if self.fault_start_ms <= t_ms < self.fault_end_ms else self.normal_success


SEED_RETRY = RetryScenario(
    users_per_s=120.0,  # assumption: the backend runs at 60% of its capacity ("业务流量规模的数倍增长")
    workers=4,  # assumption: 4 workers × 20 ms = 200 calls/s of capacity
    service_ms=20.0,  # assumption
    timeout_ms=500.0,  # "服务的超时时间通常会设置到500-1000ms"
    normal_success=0.999,  # "这个服务在常规状态下是99.9%的成功率"
    fault_success=0.2,  # "如果服务真的出问题" - assumption: 80% of calls fail for 10 s
    attempts=2,  # "如果服务请求失败，则重试一次"
    policy="always",  # "简单重试"
    gate_threshold=0.9,  # "主动计算服务成功率，成功率过低，就直接不做重试行为" (90% assumed)
    clicks=1,  # users' repeated clicks ("反复点击") are varied separately
)

SEED_BLIP = replace(
    SEED_RETRY,
    fault_success=0.95,  # "因为某一次波动性的异常，成功率下跌到95%"
)


def backend_capacity_per_s(workers: int, service_ms: float) -> float:
    """Calls per second ``workers`` workers complete: ``workers × 1000 / service_ms``."""
    w = check_int("workers", workers, low=1)
    return w * capacity.tps_ceiling(service_ms)


def attempts_per_user(p_success: float, attempts: int, clicks: int = 1) -> float:
    """Expected backend calls per user request: clicks × calls per click.

    ``E = A(1 − p, attempts) × A((1 − p)^attempts, clicks)`` with ``A`` =
    :func:`hotkeylab.capacity.retry_amplification`: a click makes up to ``attempts`` calls; a
    user clicks again only when all of them failed. ``= attempts × clicks`` when every call fails.
    """
    p = check_probability("p_success", p_success)
    a = check_int("attempts", attempts, low=1)
    k = check_int("clicks", clicks, low=1)
    per_click = capacity.retry_amplification(1.0 - p, a)
    return per_click * capacity.retry_amplification((1.0 - p) ** a, k)


def user_success(p_success: float, attempts: int, clicks: int = 1) -> float:
    """Share of user requests that end in success: ``1 − (1 − p)^(attempts × clicks)``
    (:func:`hotkeylab.capacity.retry_success`). The seed: 95% with one retry gives 99.75%."""
    a = check_int("attempts", attempts, low=1)
    k = check_int("clicks", clicks, low=1)
    return capacity.retry_success(p_success, a * k)


def retry_load_per_s(users_per_s: float, p_success: float, attempts: int, clicks: int = 1) -> float:
    """Calls/s reaching the backend: ``users_per_s × attempts_per_user``."""
    lam = check_number("users_per_s", users_per_s, low=0.0)
    return lam * attempts_per_user(p_success, attempts, clicks)


def storm_sustains(users_per_s: float, capacity_per_s: float, attempts: int, clicks: int = 1) -> bool:
    """True if a retry storm, once every call times out, holds itself up: the calls made when
    all fail, ``users × attempts × clicks``, exceed the backend's capacity
    (:func:`hotkeylab.capacity.bistable_band`)."""
    mu = check_number("capacity_per_s", capacity_per_s, low=0.0, low_open=True)
    return retry_load_per_s(users_per_s, 0.0, attempts, clicks) > mu


@dataclass
class _RetryState:
    env: simpy.Environment
    sc: RetryScenario
    rng: np.random.Generator
    rec: Recorder
    workers: simpy.Resource
    queue: int = 0
    gate: deque = field(default_factory=deque)
    gate_ok: int = 0
    arrive: list = field(default_factory=list)
    outcome: list = field(default_factory=list)  # 0 in system, 1 served, 2 timed out, 3 error
    calls: list = field(default_factory=list)
    wasted: int = 0

    def gate_record(self, t: float, ok: bool) -> None:
        self.gate.append((t, ok))
        self.gate_ok += ok
        self._prune(t)

    def _prune(self, t: float) -> None:
        edge = t - self.sc.gate_window_ms
        while self.gate and self.gate[0][0] < edge:
            self.gate_ok -= self.gate.popleft()[1]

    def measured_success(self) -> float:
        self._prune(self.env.now)
        n = len(self.gate)
        return 1.0 if n < self.sc.gate_min_samples else self.gate_ok / n

    def may_retry(self) -> bool:
        pol = self.sc.policy
        if pol == "none":
            return False
        if pol == "always":
            return True
        return self.measured_success() >= self.sc.gate_threshold


def retry_users(env, st: _RetryState):
    """The users: first clicks arrive as a Poisson stream; each runs :func:`retry_user`."""
    sc = st.sc
    yield from _poisson(
        env, st.rng, [(0.0, sc.horizon_ms, sc.users_per_s)], lambda: env.process(retry_user(env, st))
    )


def retry_user(env, st: _RetryState):
    """One user: click; on "领取失败" click again after ``reclick_ms``, up to ``clicks`` times."""
    sc = st.sc
    i = len(st.arrive)
    st.arrive.append(env.now)
    st.outcome.append(0)
    st.calls.append(0)
    st.rec.count("offered", env.now)
    kind = "timeout"
    for click in range(sc.clicks):
        if click:
            yield env.timeout(sc.reclick_ms)
            st.rec.count("reclicks", env.now)
        ok, kind = yield from ams_call(env, st, i)
        if ok:
            st.outcome[i] = 1
            st.rec.count("goodput", env.now)
            return
    st.outcome[i] = 2 if kind == "timeout" else 3
    st.rec.count("failed", env.now)


def ams_call(env, st: _RetryState, i: int):
    """AMS's call to the backend: up to ``attempts`` calls, each with ``timeout_ms``; a retry
    only if the policy allows it now. Returns ``(ok, last failure kind)``."""
    sc = st.sc
    kind = "timeout"
    for attempt in range(sc.attempts):
        if attempt:
            if not st.may_retry():
                break
            st.rec.count("retries", env.now)
        st.rec.count("attempts", env.now)
        st.calls[i] += 1
        att = _Attempt(env)
        env.process(backend(env, st, att))
        yield att.done | env.timeout(sc.timeout_ms)
        if att.done.triggered:
            ok = bool(att.done.value)
            kind = "ok" if ok else "error"
        else:
            att.abandoned = True
            ok, kind = False, "timeout"
            st.rec.count("timeouts", env.now)
        st.gate_record(env.now, ok)
        if ok:
            return True, kind
    return False, kind


def backend(env, st: _RetryState, att: _Attempt):
    """The backend: waits for a free worker (FIFO), serves for an exponential time, then
    answers success with the current success probability. It serves calls whose caller has
    already timed out: those answers are wasted."""
    sc = st.sc
    st.queue += 1
    st.rec.level("queue", env.now, st.queue)
    with st.workers.request() as req:
        yield req
        st.queue -= 1
        st.rec.level("queue", env.now, st.queue)
        yield env.timeout(st.rng.exponential(sc.service_ms))
    ok = st.rng.random() < sc.success_at(env.now)
    if att.abandoned:
        st.wasted += 1
        st.rec.count("wasted", env.now)
    att.done.succeed(ok)


def simulate_retry(
    scenario: RetryScenario = SEED_RETRY, seed: int = 0, *, max_events: int = DEFAULT_MAX_EVENTS
) -> Run:
    """Run the retry model; ``windows`` holds offered (first clicks), attempts, retries,
    reclicks, goodput, failed, timeouts, wasted (per s) and queue (calls waiting)."""
    seed = _check_run_args(scenario, RetryScenario, seed, max_events)
    sc = scenario
    env = simpy.Environment()
    rec = Recorder(
        sc.horizon_ms,
        sc.window_ms,
        counters=("offered", "attempts", "retries", "reclicks", "goodput", "failed", "timeouts", "wasted"),
        levels=("queue",),
    )
    st = _RetryState(env, sc, make_rng(seed), rec, simpy.Resource(env, capacity=sc.workers))
    env.process(retry_users(env, st))
    status = _bounded(env, sc, max_events)
    rec.close(status.t_end_ms)
    w = rec.arrays()
    arrive = np.asarray(st.arrive, float)
    outcome = np.asarray(st.outcome, np.int8)
    calls = np.asarray(st.calls, float)
    ledger = Ledger(
        arrived=len(arrive),
        served=int((outcome == 1).sum()),
        timed_out=int((outcome == 2).sum()),
        rejected=int((outcome == 3).sum()),
        in_system=int((outcome == 0).sum()),
        extra={"wasted": st.wasted, "calls": int(calls.sum())},
    )
    done = outcome != 0
    settle = sc.timeout_ms * sc.attempts + sc.reclick_ms * (sc.clicks - 1)
    in_fault = (arrive >= sc.fault_start_ms) & (arrive < sc.fault_end_ms) & done
    before = (arrive < sc.fault_start_ms) & done
    tail_start = max(sc.fault_end_ms, sc.horizon_ms - 5000.0)
    tail = (arrive >= tail_start) & (arrive < sc.horizon_ms - settle) & done
    t = w["t"]
    last = t >= (sc.horizon_ms - 5000.0) / 1000.0
    goodput_end = float(w["goodput"][last].mean()) if last.any() else math.nan
    summary = {
        "policy": sc.policy,
        "success_before": _share(outcome == 1, before),
        "success_fault": _share(outcome == 1, in_fault),
        "success_end": _share(outcome == 1, tail),
        "calls_per_user_fault": float(calls[in_fault].mean()) if in_fault.any() else math.nan,
        "calls_per_user_end": float(calls[tail].mean()) if tail.any() else math.nan,
        "goodput_end_per_s": goodput_end,
        "recovered": bool(goodput_end >= 0.9 * sc.users_per_s * sc.normal_success),
        "peak_queue": float(np.max(w["queue"])) if len(w["queue"]) else 0.0,
        "wasted": st.wasted,
    }
    log = {"arrive_ms": arrive, "outcome": outcome, "calls": calls}
    return Run(sc, seed, status, ledger, w, summary, log)


def retry_stuck_count(scenario: RetryScenario = SEED_RETRY, seeds: int = 20) -> int:
    """In how many of ``seeds`` runs (seeds 0 … seeds − 1) the backend is still stuck at the
    horizon: users served per second over the last 5 s below half the users' rate."""
    n = check_int("seeds", seeds, low=1, high=10_000)
    return sum(
        simulate_retry(scenario, seed=k).summary["goodput_end_per_s"] < 0.5 * scenario.users_per_s
        for k in range(n)
    )


def retry_storm_error_share(sc: RetryScenario = SEED_RETRY) -> float:
    """The smallest share of failing calls at which always-retry pushes the load during the fault
    above the backend's capacity: ``users × (1 + e) > capacity``, so ``e > capacity / users − 1``
    (one retry). Below it the fault alone cannot start a storm."""
    return min(1.0, max(0.0, sc.capacity_per_s / sc.users_per_s - 1.0))


def plot_retry(runs: dict, axes=None):
    """Calls reaching the backend per second (top) and users served per second (bottom) against
    time (s), one line style per policy; the backend's capacity dashed, the fault shaded."""
    if axes is None:
        _, axes = new_figure(2, 1, height=2.4, sharex=True)
    a0, a1 = axes
    sc = next(iter(runs.values())).scenario
    for pol, run in runs.items():
        w = run.windows
        t = w["t"] + sc.window_ms / 2000.0
        ls = POLICY_STYLE.get(pol, "-")
        a0.plot(t, w["attempts"], color=COLORS["retries"], ls=ls, label=RETRY_LABELS.get(pol, pol))
        a1.plot(t, w["goodput"], color=COLORS["goodput"], ls=ls, label=RETRY_LABELS.get(pol, pol))
    a0.axhline(sc.capacity_per_s, color=COLORS["capacity"], ls="--", lw=1.5, label="backend capacity")
    a1.axhline(sc.users_per_s, color=COLORS["offered"], ls="--", lw=1.5, label="user requests")
    for ax in axes:
        shade(ax, [(sc.fault_start_ms / 1000, sc.fault_end_ms / 1000)], label="backend fault")
        ax.set_ylim(bottom=0)
    decorate(a0, ylabel="calls to backend/s", legend=False)
    decorate(a1, xlabel="time (s)", ylabel="users served/s", legend=False)
    _legend_right(a0)
    _legend_right(a1)
    a1.set_xlim(0, sc.horizon_ms / 1000)
    return axes


# =========================================================================== 2 · failover
DOWN_KINDS = ("connect_timeout", "refused")


@dataclass(frozen=True)
class FailoverScenario:
    """Two services A (primary) and B (backup), e.g. the seed's two openid services: a request
    tries A; if A fails or times out, it tries B once. Times in ms, rates per second.

    Each service has ``workers`` workers and a FIFO queue (exponential service of mean
    ``service_ms``) and serves calls whose caller has given up. A is unreachable inside the down
    window: a call waits ``timeout_ms`` for the connection (``"connect_timeout"``) or is refused
    at once (``"refused"``, after ``refused_ms``). The user load is multiplied by
    ``surge_factor`` inside the surge window.
    """

    rate_per_s: float = 100.0
    service_ms: float = 50.0
    workers: int = 10
    timeout_ms: float = 500.0  # connect and read timeout per call
    down_start_ms: float = 10_000.0
    down_end_ms: float = 20_000.0
    down_kind: str = "connect_timeout"
    refused_ms: float = 1.0
    surge_start_ms: float = 0.0
    surge_end_ms: float = 0.0
    surge_factor: float = 1.0
    backup: bool = True
    horizon_ms: float = 30_000.0
    window_ms: float = 500.0

    def __post_init__(self):
        check_number("rate_per_s", self.rate_per_s, low=0.0, high=MAX_RATE_PER_S)
        check_number("service_ms", self.service_ms, low=0.0, low_open=True, high=1e6)
        object.__setattr__(self, "workers", check_int("workers", self.workers, low=1, high=MAX_WORKERS))
        check_number("timeout_ms", self.timeout_ms, low=0.0, low_open=True, high=1e7)
        _check_window("down_start_ms", self.down_start_ms, "down_end_ms", self.down_end_ms)
        check_choice("down_kind", self.down_kind, DOWN_KINDS)
        check_number("refused_ms", self.refused_ms, low=0.0, low_open=True, high=1e6)
        _check_window("surge_start_ms", self.surge_start_ms, "surge_end_ms", self.surge_end_ms)
        check_number("surge_factor", self.surge_factor, low=0.0, high=1000.0)
        if not isinstance(self.backup, bool):
            raise ValueError(f"backup must be True or False, got {self.backup!r}")
        _check_horizon(self)
        check_number("surge rate (rate_per_s × surge_factor)", self.rate_per_s * self.surge_factor,
                      high=MAX_RATE_PER_S)

    @property
    def capacity_per_s(self) -> float:
        """Calls/s each service completes when busy."""
        return backend_capacity_per_s(self.workers, self.service_ms)

    @property
    def detect_ms(self) -> float:
        """Time a call to a dead primary takes to fail."""
        return self.timeout_ms if self.down_kind == "connect_timeout" else self.refused_ms

    def down(self, t_ms: float) -> bool:
        return self.down_start_ms <= t_ms < self.down_end_ms


SEED_FAILOVER = FailoverScenario(
    rate_per_s=100.0,  # assumption: each service runs at half its capacity
    service_ms=50.0,  # "一个服务在正常状态下，获取数据也许只要50ms"
    workers=10,  # assumption: 10 workers × 50 ms = 200 calls/s per service
    timeout_ms=500.0,  # "服务的超时时间通常会设置到500-1000ms"
    down_kind="connect_timeout",  # "假设主服务出现连接（connect）超时，那么耗时就更是大幅度增加"
    backup=True,  # "如果服务A获取失败，则尝试从服务B中获取"
)

SEED_FAILOVER_SURGE = replace(
    SEED_FAILOVER,
    down_start_ms=0.0,
    down_end_ms=0.0,  # A never crashes ...
    surge_start_ms=10_000.0,
    surge_end_ms=20_000.0,
    surge_factor=3.0,  # "如果是因为流量过大问题导致主服务异常" (3× assumed)
)


def surge_fill_ms(sc: FailoverScenario) -> float:
    """How long into the surge A's queue wait first exceeds the call timeout (fluid): the queue
    grows at ``λ·factor − capacity`` calls/s and a call times out once ``timeout × capacity``
    calls are ahead of it, so ``fill = timeout × capacity / (λ·factor − capacity)``; infinite if
    A keeps up (``λ·factor ≤ capacity``) or there is no surge. Calls arriving before this are
    mostly answered by A; after it A times out nearly everything and the load moves to B."""
    if sc.surge_end_ms <= sc.surge_start_ms:
        return math.inf
    excess = sc.rate_per_s * sc.surge_factor - sc.capacity_per_s
    if excess <= 0:
        return math.inf
    return sc.timeout_ms * sc.capacity_per_s / excess


def surge_both_fall_factor(sc: FailoverScenario) -> float:
    """The surge factor above which the switch cannot save the surge: A is overloaded when
    ``λ·factor > capacity``; then it times out nearly every call, every call also goes to B, and B
    is overloaded by the same load. Below it A keeps up and B is not needed. ``capacity / λ``."""
    if sc.rate_per_s <= 0:
        return math.inf
    return sc.capacity_per_s / sc.rate_per_s


def failover_latency_ms(service_ms: float, detect_ms: float) -> float:
    """Latency of a request that fails over: the time A takes to fail plus B's service,
    ``detect_ms + service_ms`` (queueing at B ignored)."""
    s = check_number("service_ms", service_ms, low=0.0)
    d = check_number("detect_ms", detect_ms, low=0.0)
    return d + s


def mean_latency_ms(service_ms: float, detect_ms: float, failover_share: float) -> float:
    """Mean latency when a share ``f`` of requests fails over: ``(1 − f)·S + f·(detect + S)``."""
    f = check_probability("failover_share", failover_share)
    return (1.0 - f) * check_number("service_ms", service_ms, low=0.0) + f * failover_latency_ms(
        service_ms, detect_ms
    )


def backup_utilisation(rate_per_s: float, service_ms: float, workers: int, failover_share: float) -> float:
    """Busy share of the backup's workers: ``f × λ × S / workers``."""
    f = check_probability("failover_share", failover_share)
    w = check_int("workers", workers, low=1)
    return f * capacity.utilisation(rate_per_s, service_ms) / w


def backup_mean_utilisation(
    rate_per_s: float, service_ms: float, workers: int, primary_down_share: float
) -> float:
    """Long-run busy share of an idle backup: it works only while the primary is down,
    ``down_share × λ × S / workers``; the rest of the time it is paid for and idle."""
    return backup_utilisation(rate_per_s, service_ms, workers, primary_down_share)


class _Service:
    __slots__ = ("name", "res", "busy", "key")

    def __init__(self, env, name, workers, key):
        self.name = name
        self.res = simpy.Resource(env, capacity=workers)
        self.busy = 0
        self.key = key


@dataclass
class _FailoverState:
    env: simpy.Environment
    sc: FailoverScenario
    rng: np.random.Generator
    rec: Recorder
    a: _Service
    b: _Service
    arrive: list = field(default_factory=list)
    done: list = field(default_factory=list)
    ok: list = field(default_factory=list)  # None in system, True / False
    failover: list = field(default_factory=list)
    wasted: int = 0


def failover_users(env, st: _FailoverState):
    """The users: a Poisson stream (surge inside the surge window); each runs
    :func:`failover_client`."""
    sc = st.sc
    seg = _segments(sc.rate_per_s, sc.horizon_ms, sc.surge_start_ms, sc.surge_end_ms, sc.surge_factor)
    yield from _poisson(env, st.rng, seg, lambda: env.process(failover_client(env, st)))


def failover_client(env, st: _FailoverState):
    """One request: call A; on failure or timeout call B once (the seed's automatic switch)."""
    sc = st.sc
    i = len(st.arrive)
    st.arrive.append(env.now)
    st.done.append(math.nan)
    st.ok.append(None)
    st.failover.append(False)
    st.rec.count("offered", env.now)
    ok = yield from call_service(env, st, st.a)
    if not ok and sc.backup:
        st.failover[i] = True
        st.rec.count("failovers", env.now)
        ok = yield from call_service(env, st, st.b)
    st.done[i] = env.now
    st.ok[i] = ok
    st.rec.count("goodput" if ok else "failed", env.now)


def call_service(env, st: _FailoverState, srv: _Service):
    """One call with a timeout; a dead primary fails after the connect timeout (or at once if
    refused). Returns True if answered in time."""
    sc = st.sc
    if srv is st.a and sc.down(env.now):
        yield env.timeout(sc.detect_ms)
        return False
    att = _Attempt(env)
    env.process(service(env, st, srv, att))
    yield att.done | env.timeout(sc.timeout_ms)
    if att.done.triggered:
        return True
    att.abandoned = True
    return False


def service(env, st: _FailoverState, srv: _Service, att: _Attempt):
    """Service A or B: a FIFO queue in front of ``workers`` workers, exponential service."""
    with srv.res.request() as req:
        yield req
        srv.busy += 1
        st.rec.level(srv.key, env.now, srv.busy / st.sc.workers)
        yield env.timeout(st.rng.exponential(st.sc.service_ms))
        srv.busy -= 1
        st.rec.level(srv.key, env.now, srv.busy / st.sc.workers)
    if att.abandoned:
        st.wasted += 1
    att.done.succeed(True)


def simulate_failover(
    scenario: FailoverScenario = SEED_FAILOVER, seed: int = 0, *, max_events: int = DEFAULT_MAX_EVENTS
) -> Run:
    """Run the primary/backup model; ``windows``: offered, goodput, failed, failovers (per s),
    util_a, util_b (busy share of workers), mean_ms / p50_ms / p99_ms (latency of the requests
    finishing in the window)."""
    seed = _check_run_args(scenario, FailoverScenario, seed, max_events)
    sc = scenario
    env = simpy.Environment()
    rec = Recorder(
        sc.horizon_ms, sc.window_ms, counters=("offered", "goodput", "failed", "failovers"),
        levels=("util_a", "util_b"),
    )
    st = _FailoverState(
        env, sc, make_rng(seed), rec, _Service(env, "A", sc.workers, "util_a"),
        _Service(env, "B", sc.workers, "util_b"),
    )
    env.process(failover_users(env, st))
    status = _bounded(env, sc, max_events)
    rec.close(status.t_end_ms)
    w = rec.arrays()
    arrive = np.asarray(st.arrive, float)
    done = np.asarray(st.done, float)
    ok = np.asarray([o is True for o in st.ok], dtype=bool)
    fin = ~np.isnan(done)
    fo = np.asarray(st.failover, bool)
    lat = done - arrive
    w["mean_ms"], w["p50_ms"], w["p99_ms"] = _window_stats(done, lat, sc.window_ms, len(w["t"]))
    w["success"] = _window_share(arrive[fin], ok[fin], sc.window_ms, len(w["t"]))
    ledger = Ledger(
        arrived=len(arrive),
        served=int(ok.sum()),
        timed_out=int((fin & ~ok).sum()),
        rejected=0,
        in_system=int((~fin).sum()),
        extra={"failovers": int(fo.sum()), "wasted": st.wasted},
    )
    # requests arriving inside the down window and inside the whole surge window; the surge is
    # also reported from the moment A's queue wait first exceeds the timeout (surge_fill_ms)
    down = (arrive >= sc.down_start_ms) & (arrive < sc.down_end_ms) & fin
    surge = (arrive >= sc.surge_start_ms) & (arrive < sc.surge_end_ms) & fin
    fill_ms = surge_fill_ms(sc)
    settled = (arrive >= sc.surge_start_ms + fill_ms) & (arrive < sc.surge_end_ms) & fin
    first = min(
        sc.down_start_ms if sc.down_end_ms > sc.down_start_ms else math.inf,
        sc.surge_start_ms if sc.surge_end_ms > sc.surge_start_ms else math.inf,
    )
    normal = (arrive < first) & fin
    t = w["t"] * 1000.0
    in_down = (t >= sc.down_start_ms + 1000.0) & (t + sc.window_ms <= sc.down_end_ms)
    in_surge = (t >= sc.surge_start_ms + fill_ms) & (t + sc.window_ms <= sc.surge_end_ms)
    summary = {
        "mean_latency_normal_ms": float(lat[normal].mean()) if normal.any() else math.nan,
        "mean_latency_down_ms": float(lat[down].mean()) if down.any() else math.nan,
        "failover_share_down": _share(fo, down),
        "success_down": _share(ok, down),
        "util_b_down": float(w["util_b"][in_down].mean()) if in_down.any() else math.nan,
        "success_surge": _share(ok, surge),
        "success_surge_settled": _share(ok, settled),
        "surge_fill_ms": fill_ms,
        "util_a_surge": float(w["util_a"][in_surge].mean()) if in_surge.any() else math.nan,
        "util_b_surge": float(w["util_b"][in_surge].mean()) if in_surge.any() else math.nan,
        "success_all": _share(ok, fin),
    }
    log = {"arrive_ms": arrive, "done_ms": done, "ok": ok, "failover": fo}
    return Run(sc, seed, status, ledger, w, summary, log)


def plot_failover(crash: Run, surge: Run, axes=None):
    """Two runs side by side, one per column, each labelled inside its panels: left, run 1 (A
    unreachable, connect timeouts); right, run 2 (A up, the traffic surges). Top row: p50 and p99
    latency (ms, log scale) against time (s). Bottom row: the share of requests answered (by
    arrival window) and each service's busy share. Panels in a row share their y axis."""
    if axes is None:
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(2, 2, figsize=(10.0, 5.2), sharey="row")
    axes = np.asarray(axes)
    sc_c, sc_s = crash.scenario, surge.scenario
    runs = [
        (crash, f"run 1: A unreachable {sc_c.down_start_ms / 1000:g}–{sc_c.down_end_ms / 1000:g} s",
         [(sc_c.down_start_ms / 1000, sc_c.down_end_ms / 1000)], "the run's fault window"),
        (surge, f"run 2: A up, traffic ×{sc_s.surge_factor:g} {sc_s.surge_start_ms / 1000:g}–"
                f"{sc_s.surge_end_ms / 1000:g} s",
         [(sc_s.surge_start_ms / 1000, sc_s.surge_end_ms / 1000)], "the run's fault window"),
    ]
    for col, (run, title, spans, shade_label) in enumerate(runs):
        sc, w = run.scenario, run.windows
        t = w["t"] + sc.window_ms / 2000.0
        top, bottom = axes[0, col], axes[1, col]
        top.plot(t, w["p99_ms"], color=COLORS["latency"], label="p99 latency")
        top.plot(t, w["p50_ms"], color=COLORS["latency"], ls="--", label="p50 latency")
        top.axhline(failover_latency_ms(sc.service_ms, sc.detect_ms if col == 0 else sc.timeout_ms), color=COLORS["capacity"], ls=":",
                    lw=1.5, label="timeout + service")
        shade(top, spans, label=shade_label)
        top.set_yscale("log")
        top.set_ylim(20, 3000)  # a request that fails at A and at B takes two timeouts
        _log_ms_ticks(top)
        decorate(top, ylabel="latency (ms)" if col == 0 else None, legend=False)
        top.text(0.02, 0.95, title, transform=top.transAxes, fontsize=9, va="top",
                 bbox={"facecolor": "white", "alpha": 0.8, "lw": 0})
        bottom.plot(t, w["success"], color=COLORS["goodput"], label="answered share")
        bottom.plot(t, w["util_a"], color=COLORS["queue"], label="A busy share")
        bottom.plot(t, w["util_b"], color=COLORS["queue"], ls="--", label="B busy share")
        shade(bottom, spans, label=shade_label)
        decorate(bottom, xlabel="time (s)", ylabel="share" if col == 0 else None, ylim=(0, 1.05),
                 legend=False)
        for ax in (top, bottom):
            ax.set_xlim(0, sc.horizon_ms / 1000)
    axes[0, 1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    axes[1, 1].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    axes[0, 0].figure.tight_layout()
    return axes


# =========================================================================== 3 · ejection
SERVER_NAMES = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class EjectionScenario:
    """A group of stateless machines behind the seed's router L5. Times in ms, rates per s.

    Each request goes to a machine chosen at random among those in rotation. A machine has
    ``workers`` workers and no queue: a call that finds them all busy is refused at once
    (an Erlang loss system; an assumption). The bad machine answers errors inside its bad
    window (success ``bad_success``). Every ``check_interval_ms`` the router computes each
    machine's success rate over the calls of the last interval and ejects it below
    ``threshold``; an ejected machine gets a probe every ``probe_interval_ms`` and is re-added
    once a probe succeeds. ``panic_threshold`` (Envoy's panic mode; 0 = off): when fewer than
    this share of the machines are in rotation, the router ignores ejection and uses all.
    """

    servers: int = 4
    rate_per_s: float = 80.0
    workers: int = 8
    service_ms: float = 50.0
    ejection: bool = True
    threshold: float = 0.5
    check_interval_ms: float = 1000.0
    min_calls: int = 5
    probe_interval_ms: float = 1000.0
    panic_threshold: float = 0.0
    bad_server: int = 0
    datacentres: int = 1  # machines split into this many equal datacentres, in order (A1 A2 B1 ...)
    bad_datacentre: int = -1  # >= 0: every machine of this datacentre is bad (not just bad_server)
    bad_start_ms: float = 10_000.0
    bad_end_ms: float = 25_000.0
    bad_success: float = 0.0
    error_ms: float = 1.0  # a bad machine answers its error after this long
    horizon_ms: float = 40_000.0
    window_ms: float = 500.0

    def __post_init__(self):
        object.__setattr__(self, "servers", check_int("servers", self.servers, low=1, high=len(SERVER_NAMES)))
        check_number("rate_per_s", self.rate_per_s, low=0.0, high=MAX_RATE_PER_S)
        object.__setattr__(self, "workers", check_int("workers", self.workers, low=1, high=MAX_WORKERS))
        check_number("service_ms", self.service_ms, low=0.0, low_open=True, high=1e6)
        if not isinstance(self.ejection, bool):
            raise ValueError(f"ejection must be True or False, got {self.ejection!r}")
        check_probability("threshold", self.threshold)
        check_number("check_interval_ms", self.check_interval_ms, low=1.0, high=1e7)
        object.__setattr__(self, "min_calls", check_int("min_calls", self.min_calls, low=1))
        check_number("probe_interval_ms", self.probe_interval_ms, low=1.0, high=1e7)
        check_probability("panic_threshold", self.panic_threshold)
        object.__setattr__(self, "bad_server", check_int("bad_server", self.bad_server, low=0, high=self.servers - 1))
        object.__setattr__(self, "datacentres", check_int("datacentres", self.datacentres, low=1, high=self.servers))
        if self.servers % self.datacentres:
            raise ValueError(f"servers must be a multiple of datacentres={self.datacentres}, got {self.servers}")
        object.__setattr__(self, "bad_datacentre", check_int("bad_datacentre", self.bad_datacentre, low=-1, high=self.datacentres - 1))
        _check_window("bad_start_ms", self.bad_start_ms, "bad_end_ms", self.bad_end_ms)
        check_probability("bad_success", self.bad_success)
        check_number("error_ms", self.error_ms, low=0.0, low_open=True, high=1e6)
        _check_horizon(self)

    @property
    def per_datacentre(self) -> int:
        return self.servers // self.datacentres

    @property
    def names(self):
        """One letter per machine (ABCD), or with several datacentres the datacentre's letter and
        the machine's number in it (A1, A2, B1, ...)."""
        if self.datacentres == 1:
            return SERVER_NAMES[: self.servers]
        m = self.per_datacentre
        return [f"{SERVER_NAMES[k // m]}{k % m + 1}" for k in range(self.servers)]

    @property
    def bad_label(self) -> str:
        if self.bad_datacentre >= 0:
            return f"datacentre {SERVER_NAMES[self.bad_datacentre]}"
        return self.names[self.bad_server]

    def bad(self, i: int, t_ms: float) -> bool:
        if not self.bad_start_ms <= t_ms < self.bad_end_ms:
            return False
        if self.bad_datacentre >= 0:
            return i // self.per_datacentre == self.bad_datacentre
        return i == self.bad_server


SEED_EJECTION = EjectionScenario(
    servers=4,  # "假如一组服务下擁有服務機器四臺（ABCD）"
    rate_per_s=80.0,  # assumption: light load, each machine 10% busy
    workers=8,  # assumption
    service_ms=50.0,  # assumption
    ejection=True,  # "L5服务会主动将A机器自动从服务组里剔除"
    threshold=0.5,  # "发现某个服务的机器异常的时候（成功率低于50%），就会自动剔除该机器"
    check_interval_ms=1000.0,  # assumption: the router judges each machine once a second
    probe_interval_ms=1000.0,  # "后续，会发出试探性的请求" (interval assumed)
    bad_server=0,  # "假设A机器的服务因为某种未知原因，完全不可用了"
    bad_success=0.0,  # "完全不可用"
    bad_start_ms=10_000.0,
    bad_end_ms=25_000.0,  # "假如A机器从异常中恢复了，那么L5再主动将机器A加回来" (15 s assumed)
)

SEED_DATACENTRES = replace(
    SEED_EJECTION,
    servers=6,  # assumption: two machines in each datacentre
    datacentres=3,  # "服务器都是分布在ABC三个机房"
    bad_datacentre=1,  # "假设B机房整个网络故障了"
    rate_per_s=160.0,  # assumption: each machine a sixth busy (27 of its 160 calls/s)
    bad_success=0.0,  # "无法接受服务的B机房机器"
)

SEED_EJECTION_OVERLOAD = replace(
    SEED_EJECTION,
    rate_per_s=960.0,  # assumption: overload, each machine offered 1.5× its 160 calls/s
    bad_start_ms=10_000.0,
    bad_end_ms=11_000.0,  # assumption: A has a 1 s blip, enough to be ejected
    horizon_ms=30_000.0,
)


def erlang_b(workers: int, offered_erlangs: float) -> float:
    """Erlang B: share of calls refused by ``workers`` workers without a queue at offered load
    ``a = λ × S`` (in erlangs). Recursion ``B(0) = 1``, ``B(k) = a B(k−1) / (k + a B(k−1))``."""
    c = check_int("workers", workers, low=1)
    a = check_number("offered_erlangs", offered_erlangs, low=0.0)
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    return b


def server_success(rate_per_s: float, workers: int, service_ms: float) -> float:
    """Share of calls one machine answers at ``rate_per_s``: ``1 − B(workers, λS)``."""
    return 1.0 - erlang_b(workers, capacity.utilisation(rate_per_s, service_ms))


def pool_success(
    rate_per_s: float, in_rotation: int, workers: int, service_ms: float, dead: int = 0
) -> float:
    """Pool success rate when requests spread evenly over ``in_rotation`` machines of which
    ``dead`` answer nothing: ``(1 − dead / n) × server_success(λ / n)``. The seed's case, one
    of four dead and not ejected: 75%."""
    n = check_int("in_rotation", in_rotation, low=1)
    d = check_int("dead", dead, low=0, high=n)
    return (1.0 - d / n) * server_success(check_number("rate_per_s", rate_per_s, low=0.0) / n,
                                          workers, service_ms)


def ejection_delay_ms(fault_at_ms: float, check_interval_ms: float, threshold: float = 0.5) -> float:
    """How long after a machine dies the router ejects it.

    Checks run at multiples of the interval ``I`` and judge the calls of the last interval. A
    machine that dies a fraction ``u`` into an interval answered about ``u`` of that
    interval's calls (even traffic): it is ejected at the end of that interval if
    ``u < threshold``, else at the end of the next. Averaged over ``u`` the delay is one interval.
    """
    t = check_number("fault_at_ms", fault_at_ms, low=0.0)
    i = check_number("check_interval_ms", check_interval_ms, low=0.0, low_open=True)
    thr = check_probability("threshold", threshold)
    u = (t % i) / i
    end = (math.floor(t / i) + 1) * i
    return (end if u < thr else end + i) - t


def datacentre_loss_success(
    rate_per_s: float, servers: int, datacentres: int, workers: int, service_ms: float
) -> float:
    """Success rate once one whole datacentre is ejected: the load spreads over the
    ``servers × (1 − 1/datacentres)`` machines left, ``server_success(λ / remaining)``."""
    n = check_int("servers", servers, low=2)
    d = check_int("datacentres", datacentres, low=2, high=n)
    left = n - n // d
    return server_success(check_number("rate_per_s", rate_per_s, low=0.0) / left, workers, service_ms)


def datacentre_loss_max_rate(
    servers: int, datacentres: int, workers: int, service_ms: float, min_success: float = 0.99
) -> float:
    """The highest total load (requests/s) at which the machines left after losing one
    datacentre still answer ``min_success`` of the calls (bisection on
    :func:`datacentre_loss_success`, which falls with the load)."""
    m = check_probability("min_success", min_success)
    lo, hi = 0.0, backend_capacity_per_s(workers, service_ms) * servers * 4
    for _ in range(60):
        mid = (lo + hi) / 2
        if datacentre_loss_success(mid, servers, datacentres, workers, service_ms) >= m:
            lo = mid
        else:
            hi = mid
    return lo


def cascade_successes(rate_per_s: float, servers: int, workers: int, service_ms: float) -> list:
    """Success rate of each machine when the load is spread over k = servers, servers − 1, …, 1
    machines. Under overload every ejection raises the others' load and lowers their success:
    once it is below the threshold at k − 1, one ejection takes the whole group down."""
    n = check_int("servers", servers, low=1)
    lam = check_number("rate_per_s", rate_per_s, low=0.0)
    return [server_success(lam / k, workers, service_ms) for k in range(n, 0, -1)]


@dataclass
class _L5State:
    env: simpy.Environment
    sc: EjectionScenario
    rng: np.random.Generator
    rec: Recorder
    in_rotation: list
    busy: list
    calls: list
    oks: list
    ejected_at: list
    intervals: list = field(default_factory=list)  # (server, ejected_ms, readded_ms)
    arrive: list = field(default_factory=list)
    outcome: list = field(default_factory=list)  # 0 in system, 1 ok, 2 error, 3 busy, 4 no server
    target: list = field(default_factory=list)
    probes: int = 0
    panics: int = 0

    def eject(self, i: int) -> None:
        self.in_rotation[i] = False
        self.ejected_at[i] = self.env.now
        self.rec.level("in_rotation", self.env.now, sum(self.in_rotation))

    def readd(self, i: int) -> None:
        self.in_rotation[i] = True
        self.intervals.append((i, self.ejected_at[i], self.env.now))
        self.ejected_at[i] = math.nan
        self.calls[i] = self.oks[i] = 0
        self.rec.level("in_rotation", self.env.now, sum(self.in_rotation))


def l5_users(env, st: _L5State):
    """The users: a Poisson stream of requests, each runs :func:`l5_request`."""
    sc = st.sc
    yield from _poisson(
        env, st.rng, [(0.0, sc.horizon_ms, sc.rate_per_s)], lambda: env.process(l5_request(env, st))
    )


def l5_request(env, st: _L5State):
    """One request: the router picks a machine at random among those in rotation (all of
    them in panic mode); none in rotation and no panic: the request fails at once."""
    sc = st.sc
    i = len(st.arrive)
    st.arrive.append(env.now)
    st.outcome.append(0)
    st.rec.count("offered", env.now)
    healthy = [k for k in range(sc.servers) if st.in_rotation[k]]
    if sc.panic_threshold > 0 and len(healthy) < sc.panic_threshold * sc.servers:
        healthy = list(range(sc.servers))
        st.panics += 1
    if not healthy:
        st.target.append(-1)
        st.outcome[i] = 4
        st.rec.count("failed", env.now)
        return
    k = healthy[int(st.rng.integers(len(healthy)))] if len(healthy) > 1 else healthy[0]
    st.target.append(k)
    code = yield from machine(env, st, k)
    st.calls[k] += 1
    st.oks[k] += code == 1
    st.outcome[i] = code
    st.rec.count("goodput" if code == 1 else "failed", env.now)


def machine(env, st: _L5State, k: int):
    """Machine ``k``: an error while bad, refused when all workers are busy, else served after
    an exponential time. Returns 1 ok, 2 error, 3 refused (busy)."""
    sc = st.sc
    if sc.bad(k, env.now) and st.rng.random() >= sc.bad_success:
        yield env.timeout(sc.error_ms)
        return 2
    if st.busy[k] >= sc.workers:
        return 3
    st.busy[k] += 1
    yield env.timeout(st.rng.exponential(sc.service_ms))
    st.busy[k] -= 1
    return 1


def l5_router(env, st: _L5State):
    """The router's health check: every ``check_interval_ms``, eject each machine in rotation
    whose success rate over the last interval's calls is below ``threshold``."""
    sc = st.sc
    while True:
        yield env.timeout(sc.check_interval_ms)
        for k in range(sc.servers):
            n, ok = st.calls[k], st.oks[k]
            st.calls[k] = st.oks[k] = 0
            if st.in_rotation[k] and n >= sc.min_calls and ok / n < sc.threshold:
                st.eject(k)
                env.process(l5_prober(env, st, k))


def l5_prober(env, st: _L5State, k: int):
    """Probe an ejected machine every ``probe_interval_ms``; re-add it once a probe succeeds."""
    sc = st.sc
    while True:
        yield env.timeout(sc.probe_interval_ms)
        st.probes += 1
        code = yield from machine(env, st, k)
        if code == 1:
            st.readd(k)
            return


def simulate_ejection(
    scenario: EjectionScenario = SEED_EJECTION, seed: int = 0, *, max_events: int = DEFAULT_MAX_EVENTS
) -> Run:
    """Run the L5 model; ``windows``: offered, goodput, failed (per s), ``success`` (share of the
    requests arriving in the window that succeeded), ``in_rotation`` (machines, time-weighted).
    ``log["ejections"]`` lists ``(machine, ejected_s, readded_s)``."""
    seed = _check_run_args(scenario, EjectionScenario, seed, max_events)
    sc = scenario
    env = simpy.Environment()
    rec = Recorder(sc.horizon_ms, sc.window_ms, counters=("offered", "goodput", "failed"),
                   levels=("in_rotation",))
    n = sc.servers
    st = _L5State(env, sc, make_rng(seed), rec, [True] * n, [0] * n, [0] * n, [0] * n, [math.nan] * n)
    rec.level("in_rotation", 0.0, n)
    env.process(l5_users(env, st))
    if sc.ejection:
        env.process(l5_router(env, st))
    status = _bounded(env, sc, max_events)
    rec.close(status.t_end_ms)
    w = rec.arrays()
    arrive = np.asarray(st.arrive, float)
    outcome = np.asarray(st.outcome, np.int8)
    target = np.asarray(st.target, np.int16)
    fin = outcome != 0
    w["success"] = _window_share(arrive[fin], outcome[fin] == 1, sc.window_ms, len(w["t"]))
    ledger = Ledger(
        arrived=len(arrive),
        served=int((outcome == 1).sum()),
        timed_out=0,
        rejected=int((outcome >= 2).sum()),
        in_system=int((outcome == 0).sum()),
        extra={
            "errors": int((outcome == 2).sum()),
            "busy": int((outcome == 3).sum()),
            "no_server": int((outcome == 4).sum()),
            "probes": st.probes,
            "panic_requests": st.panics,
        },
    )
    ejections = [(k, a / 1000.0, b / 1000.0) for k, a, b in st.intervals]
    ejections += [(k, st.ejected_at[k] / 1000.0, status.t_end_ms / 1000.0) for k in range(n)
                  if not math.isnan(st.ejected_at[k])]
    ejections.sort(key=lambda e: (e[1], e[0]))
    done = outcome != 0
    bad = (arrive >= sc.bad_start_ms) & (arrive < sc.bad_end_ms) & done
    bad_late = (arrive >= sc.bad_start_ms + 2 * sc.check_interval_ms) & (arrive < sc.bad_end_ms) & done
    lost_to_bad = int(np.count_nonzero(bad & (outcome == 2)))
    after = (arrive >= sc.bad_end_ms + 2 * sc.check_interval_ms) & done
    first_ej = [e for e in ejections if sc.bad(e[0], sc.bad_start_ms) and e[1] * 1000 >= sc.bad_start_ms]
    summary = {
        "success_bad": _share(outcome == 1, bad),
        "success_bad_late": _share(outcome == 1, bad_late),
        "success_after": _share(outcome == 1, after),
        "success_all": _share(outcome == 1, done),
        "lost_to_bad": lost_to_bad,
        "ejections": len(ejections),
        "first_ejection_delay_ms": (first_ej[0][1] * 1000 - sc.bad_start_ms) if first_ej else math.nan,
        "min_in_rotation": float(np.min(w["in_rotation"])) if len(w["in_rotation"]) else float(n),
        "probes": st.probes,
    }
    log = {"arrive_ms": arrive, "outcome": outcome, "target": target, "ejections": ejections}
    return Run(sc, seed, status, ledger, w, summary, log)


def plot_ejection(runs: dict, strips=None, axes=None):
    """Top: the pool's success rate over time (s), one line per labelled run; the bad window
    shaded. Below: one strip per run named in ``strips`` (default: every run with ejection),
    showing when each machine was out of rotation (red)."""
    if strips is None:
        strips = [k for k, r in runs.items() if r.scenario.ejection]
    with_ej = {k: runs[k] for k in strips}
    if axes is None:
        import matplotlib.pyplot as plt

        n_strips = len(with_ej)
        sc_first = next(iter(runs.values())).scenario
        strip_h = max(1.0, 0.25 * sc_first.servers)
        fig = plt.figure(figsize=(8.0, 2.8 + strip_h * n_strips))
        gs = fig.add_gridspec(1 + n_strips, 1, height_ratios=[2.6] + [strip_h] * n_strips, hspace=0.5)
        axes = [fig.add_subplot(gs[0])] + [fig.add_subplot(gs[i + 1]) for i in range(n_strips)]
    a0 = axes[0]
    styles = ["-", "--", ":", "-."]
    sc0 = next(iter(runs.values())).scenario
    for j, (label, run) in enumerate(runs.items()):
        w = run.windows
        t = w["t"] + run.scenario.window_ms / 2000.0
        if run.scenario.ejection:  # routers with ejection in green, the baseline in grey
            a0.plot(t, w["success"], color=COLORS["goodput"], ls=styles[j % 4], label=label)
        else:
            a0.plot(t, w["success"], color=COLORS["capacity"], lw=1.5, alpha=0.8, label=label)
    shade(a0, [(sc0.bad_start_ms / 1000, sc0.bad_end_ms / 1000)], label=f"{sc0.bad_label} bad")
    decorate(a0, ylabel="pool success rate", ylim=(0, 1.05), legend=False)
    _legend_right(a0)
    for ax, (label, run) in zip(axes[1:], with_ej.items(), strict=False):
        sc = run.scenario
        bars = [(name, 0.0, 0.0) for name in sc.names]  # every machine's row, in order
        bars += [(sc.names[k], a, b) for k, a, b in run.log["ejections"]]
        lock_gantt(bars, ax=ax, colors=dict.fromkeys(sc.names, COLORS["timeouts"]), time_unit="s")
        ax.set_xlim(0, sc.horizon_ms / 1000)
        ax.set_ylabel("out of\nrotation", fontsize=8)
        ax.set_xlabel("")
        ax.text(1.01, 0.5, label, transform=ax.transAxes, fontsize=8, va="center")
    axes[-1].set_xlabel("time (s)")
    a0.set_xlim(0, sc0.horizon_ms / 1000)
    return axes


def explore_ejection(
    rate_per_s: float = SEED_EJECTION.rate_per_s,
    threshold: float = SEED_EJECTION.threshold,
    panic_threshold: float = 0.0,
    check_interval_ms: float = SEED_EJECTION.check_interval_ms,
    ejection: bool = True,
    seed: int = 0,
    horizon_ms: float = 30_000.0,
    plot: bool = True,
) -> dict:
    """The ejection widget's function: machine A dies from 10 s to 25 s under the chosen load.
    Runs the chosen router (and, for the figure, the same load without ejection), draws
    :func:`plot_ejection`, and returns the chosen run's summary with the closed forms beside it."""
    sc = replace(
        SEED_EJECTION,
        rate_per_s=rate_per_s,
        threshold=threshold,
        panic_threshold=panic_threshold,
        check_interval_ms=check_interval_ms,
        ejection=ejection,
        horizon_ms=horizon_ms,
        bad_end_ms=min(SEED_EJECTION.bad_end_ms, horizon_ms),
    )
    run = simulate_ejection(sc, seed, max_events=600_000)
    out = dict(run.summary)
    out["closed_no_ejection"] = pool_success(sc.rate_per_s, sc.servers, sc.workers, sc.service_ms, dead=1)
    out["closed_ejected"] = pool_success(sc.rate_per_s, sc.servers - 1, sc.workers, sc.service_ms)
    if plot:
        import matplotlib.pyplot as plt

        label = "with ejection" if ejection else "without ejection"
        if panic_threshold > 0 and ejection:
            label += f", panic below {panic_threshold:.0%}"
        runs = {label: run}
        if ejection:
            runs = {"without ejection": simulate_ejection(replace(sc, ejection=False), seed, max_events=600_000),
                    **runs}
        axes = plot_ejection(runs)
        axes[0].figure.subplots_adjust(right=0.78)
        plt.show()
    return out


# =========================================================================== 4 · worker pools
IO_MODES = ("sync", "async")


@dataclass(frozen=True)
class PoolScenario:
    """A service's worker pool calling a downstream. Times in ms, rates per second.

    Each request takes a worker; the worker calls the downstream and waits up to the timeout.
    The downstream answers after a gamma-distributed time (mean ``service_ms``, shape
    ``service_shape``; 1 = exponential), or hangs (share ``hang_share`` inside the hang window)
    until the worker's timeout. A call that exceeds the timeout fails. ``slow_share`` of the
    requests belong to a slow business (mean ``slow_service_ms``, timeout ``slow_timeout_ms``);
    with ``slow_workers > 0`` they get their own pool (fast/slow separation). ``io="async"``:
    a worker only spends ``cpu_ms`` per request and hands the wait to an event loop with at
    most ``max_inflight`` calls in flight (coroutines). Users wait in the pool's queue and give
    up after ``user_timeout_ms``.
    """

    rate_per_s: float = 300.0
    workers: int = 100
    timeout_ms: float = 5000.0
    service_ms: float = 100.0
    service_shape: float = 1.0
    hang_share: float = 0.0
    hang_start_ms: float = 0.0
    hang_end_ms: float = math.inf
    slow_share: float = 0.0
    slow_service_ms: float = 700.0
    slow_timeout_ms: float = 5000.0
    slow_workers: int = 0
    io: str = "sync"
    cpu_ms: float = 2.0
    max_inflight: int = 10_000
    user_timeout_ms: float = 10_000.0
    horizon_ms: float = 30_000.0
    window_ms: float = 500.0

    def __post_init__(self):
        check_number("rate_per_s", self.rate_per_s, low=0.0, high=MAX_RATE_PER_S)
        object.__setattr__(self, "workers", check_int("workers", self.workers, low=1, high=MAX_WORKERS))
        check_number("timeout_ms", self.timeout_ms, low=0.0, low_open=True, high=1e7)
        check_number("service_ms", self.service_ms, low=0.0, low_open=True, high=1e7)
        check_number("service_shape", self.service_shape, low=0.05, high=1000.0)
        check_probability("hang_share", self.hang_share)
        _check_window("hang_start_ms", self.hang_start_ms, "hang_end_ms", self.hang_end_ms)
        check_probability("slow_share", self.slow_share)
        check_number("slow_service_ms", self.slow_service_ms, low=0.0, low_open=True, high=1e7)
        check_number("slow_timeout_ms", self.slow_timeout_ms, low=0.0, low_open=True, high=1e7)
        object.__setattr__(self, "slow_workers", check_int("slow_workers", self.slow_workers, low=0, high=self.workers - 1))
        check_choice("io", self.io, IO_MODES)
        check_number("cpu_ms", self.cpu_ms, low=0.0, low_open=True, high=1e6)
        object.__setattr__(self, "max_inflight", check_int("max_inflight", self.max_inflight, low=1, high=10_000_000))
        check_number("user_timeout_ms", self.user_timeout_ms, low=0.0, low_open=True, allow_inf=True)
        _check_horizon(self)

    def hang_at(self, t_ms: float) -> float:
        return self.hang_share if self.hang_start_ms <= t_ms < self.hang_end_ms else 0.0


SEED_POOL = PoolScenario(
    workers=100,  # "启用了100个处理请求的worker"
    timeout_ms=5000.0,  # "worker的超时时间设置为5秒"
    service_ms=100.0,  # "1个worker处理1个任务的平均处理耗时是100ms"
    service_shape=1.0,  # assumption: exponential service times
    hang_share=0.0,  # "一旦网络或者服务偶尔异常，响应超时" - varied
)

SEED_POOL_INCIDENT = replace(
    SEED_POOL,
    rate_per_s=300.0,  # assumption: the pool runs at 30% of its 1000/s
    hang_share=0.1,  # "一旦比较大概率出现这类型的超时异常" (10% assumed)
    hang_start_ms=10_000.0,
    hang_end_ms=20_000.0,
    slow_share=0.1,  # assumption: 10% of the traffic is the slow business
    slow_service_ms=700.0,  # "某新手游的查询服务通常耗时为700ms"
    slow_timeout_ms=5000.0,  # one timeout for all: the seed's 5 s
    user_timeout_ms=10_000.0,  # assumption: users give up after 10 s in the queue
)


def mean_capped_ms(service_ms: float, timeout_ms: float, shape: float = 1.0) -> float:
    """``E[min(X, T)]`` for a gamma service time X (mean ``service_ms``, shape ``k``):
    ``m·F_{k+1}(T) + T·(1 − F_k(T))``; for exponential service ``m·(1 − e^{−T/m})``."""
    m = check_number("service_ms", service_ms, low=0.0, low_open=True)
    t = check_number("timeout_ms", timeout_ms, low=0.0, allow_inf=True)
    k = check_number("shape", shape, low=0.0, low_open=True)
    if math.isinf(t):
        return m
    if k == 1.0:
        return m * -math.expm1(-t / m)
    from scipy.stats import gamma

    scale = m / k
    return float(m * gamma.cdf(t, a=k + 1, scale=scale) + t * gamma.sf(t, a=k, scale=scale))


def share_within(service_ms: float, timeout_ms: float, shape: float = 1.0) -> float:
    """``P(X <= T)``: the share of calls that answer before the timeout."""
    m = check_number("service_ms", service_ms, low=0.0, low_open=True)
    t = check_number("timeout_ms", timeout_ms, low=0.0, allow_inf=True)
    k = check_number("shape", shape, low=0.0, low_open=True)
    if math.isinf(t):
        return 1.0
    if k == 1.0:
        return -math.expm1(-t / m)
    from scipy.stats import gamma

    return float(gamma.cdf(t, a=k, scale=m / k))


def service_percentile_ms(service_ms: float, q: float, shape: float = 1.0) -> float:
    """The ``q`` quantile of the service time (e.g. q = 0.999: p99.9), from which to set a
    per-service timeout. Exponential: ``−m·ln(1 − q)``, 6.9 × the mean at p99.9."""
    m = check_number("service_ms", service_ms, low=0.0, low_open=True)
    p = check_number("q", q, low=0.0, high=1.0, high_open=True)
    k = check_number("shape", shape, low=0.0, low_open=True)
    if k == 1.0:
        return -m * math.log1p(-p)
    from scipy.stats import gamma

    return float(gamma.ppf(p, a=k, scale=m / k))


def holding_ms(service_ms: float, timeout_ms: float, hang_share: float, shape: float = 1.0) -> float:
    """Mean time a call holds a worker: ``(1 − h)·E[min(X, T)] + h·T``; the seed's
    ``(1 − h)·service + h·timeout`` when the timeout is far above the service time."""
    h = check_probability("hang_share", hang_share)
    t = check_number("timeout_ms", timeout_ms, low=0.0, low_open=True)
    return (1.0 - h) * mean_capped_ms(service_ms, t, shape) + h * t


def pool_capacity_per_s(
    workers: int, service_ms: float, timeout_ms: float, hang_share: float, shape: float = 1.0
) -> float:
    """Requests/s a saturated pool completes: ``workers × 1000 / holding_ms``. The seed's pool
    (100 workers, 5 s, 100 ms): 1000/s healthy, 20/s when every call hangs; 671, 290, 169 and
    39 per second at 1%, 5%, 10% and 50% hanging calls."""
    w = check_int("workers", workers, low=1)
    return w * capacity.tps_ceiling(holding_ms(service_ms, timeout_ms, hang_share, shape))


def async_capacity_per_s(
    workers: int, cpu_ms: float, max_inflight: int, holding_ms_: float
) -> float:
    """Requests/s with asynchronous I/O: the workers' CPU, ``workers × 1000 / cpu_ms``, or the
    in-flight limit, ``max_inflight × 1000 / holding`` (Little's law), whichever is lower.
    The user still waits ``holding`` per call."""
    w = check_int("workers", workers, low=1)
    c = check_number("cpu_ms", cpu_ms, low=0.0, low_open=True)
    m = check_int("max_inflight", max_inflight, low=1)
    h = check_number("holding_ms", holding_ms_, low=0.0, low_open=True)
    return min(w * 1000.0 / c, m * 1000.0 / h)


def shared_mix_capacity_per_s(
    workers: int,
    hang_share: float,
    fast_ms: float,
    fast_timeout_ms: float,
    slow_share: float,
    slow_ms: float,
    slow_timeout_ms: float,
    shape: float = 1.0,
) -> float:
    """Requests/s of a mix (a share ``slow_share`` of slow requests) through one shared pool:
    ``workers × 1000 / ((1 − s)·H_fast + s·H_slow)`` with each class's holding time."""
    s = check_probability("slow_share", slow_share)
    hf = holding_ms(fast_ms, fast_timeout_ms, hang_share, shape)
    hs = holding_ms(slow_ms, slow_timeout_ms, hang_share, shape)
    return check_int("workers", workers, low=1) * 1000.0 / ((1.0 - s) * hf + s * hs)


def separated_mix_capacity_per_s(
    fast_workers: int,
    slow_workers: int,
    hang_share: float,
    fast_ms: float,
    fast_timeout_ms: float,
    slow_share: float,
    slow_ms: float,
    slow_timeout_ms: float,
    shape: float = 1.0,
) -> float:
    """Requests/s of the same mix through separate pools: the first pool to saturate limits it,
    ``min(w_fast / ((1 − s)·H_fast), w_slow / (s·H_slow)) × 1000``."""
    s = check_probability("slow_share", slow_share)
    wf = check_int("fast_workers", fast_workers, low=1)
    ws = check_int("slow_workers", slow_workers, low=1)
    hf = holding_ms(fast_ms, fast_timeout_ms, hang_share, shape)
    hs = holding_ms(slow_ms, slow_timeout_ms, hang_share, shape)
    fast = math.inf if s == 1.0 else wf * 1000.0 / ((1.0 - s) * hf)
    slow = math.inf if s == 0.0 else ws * 1000.0 / (s * hs)
    return min(fast, slow)


class _Job:
    __slots__ = ("arrive", "slow", "done", "abandoned")

    def __init__(self, env, arrive, slow):
        self.arrive = arrive
        self.slow = slow
        self.done = env.event()
        self.abandoned = False


@dataclass
class _PoolState:
    env: simpy.Environment
    sc: PoolScenario
    rng: np.random.Generator
    rec: Recorder | None
    queues: dict
    backlog: bool = False
    queued: int = 0
    busy: int = 0
    inflight: int = 0
    completed: int = 0
    completed_ok: int = 0
    started_at: float = 0.0
    arrive: list = field(default_factory=list)
    slow: list = field(default_factory=list)
    done: list = field(default_factory=list)
    outcome: list = field(default_factory=list)  # 0 in system, 1 ok, 2 failed (timeout), 3 gave up, 4 rejected
    wasted: int = 0

    def draw_call(self, slow: bool) -> tuple[float, bool]:
        """Time the downstream call holds the caller, and whether it answered in time."""
        sc = self.sc
        mean, tmo = (sc.slow_service_ms, sc.slow_timeout_ms) if slow else (sc.service_ms, sc.timeout_ms)
        if self.rng.random() < sc.hang_at(self.env.now):
            return tmo, False
        k = sc.service_shape
        x = self.rng.exponential(mean) if k == 1.0 else self.rng.gamma(k, mean / k)
        return (x, True) if x <= tmo else (tmo, False)

    def level(self, name, value):
        if self.rec is not None:
            self.rec.level(name, self.env.now, value)


def pool_users(env, st: _PoolState):
    """The users: a Poisson stream; each request is slow with probability ``slow_share``."""
    sc = st.sc

    def spawn():
        env.process(pool_user(env, st, bool(sc.slow_share > 0 and st.rng.random() < sc.slow_share)))

    yield from _poisson(env, st.rng, [(0.0, sc.horizon_ms, sc.rate_per_s)], spawn)


def pool_user(env, st: _PoolState, slow: bool):
    """One user request: queue for a worker; wait for the answer or give up after
    ``user_timeout_ms`` (a queued request given up is skipped; a started one is finished
    and wasted)."""
    sc = st.sc
    i = len(st.arrive)
    st.arrive.append(env.now)
    st.slow.append(slow)
    st.done.append(math.nan)
    st.outcome.append(0)
    st.rec.count("offered", env.now)
    job = _Job(env, env.now, slow)
    st.queued += 1
    st.level("queue", st.queued)
    st.queues[slow if sc.slow_workers > 0 else False].put(job)
    if math.isinf(sc.user_timeout_ms):
        yield job.done
    else:
        yield job.done | env.timeout(sc.user_timeout_ms)
    st.done[i] = env.now
    if job.done.triggered:
        code = job.done.value
        st.outcome[i] = code
        st.rec.count({1: "goodput", 2: "timeouts", 4: "rejected"}[code], env.now)
    else:
        job.abandoned = True
        st.outcome[i] = 3
        st.rec.count("gave_up", env.now)


def worker(env, st: _PoolState, queue, slow_pool: bool):
    """One worker: take the next request (or, in backlog mode, a fresh one), call the
    downstream and wait for the answer or the timeout (sync), or spend ``cpu_ms`` and hand the
    wait to the event loop (async)."""
    sc = st.sc
    while True:
        if st.backlog:
            job = _Job(env, env.now, slow_pool)
        else:
            job = yield queue.get()
            st.queued -= 1
            st.level("queue", st.queued)
            if job.abandoned:
                continue
        st.busy += 1
        st.level("busy", st.busy)
        if sc.io == "sync":
            hold, ok = st.draw_call(job.slow)
            yield env.timeout(hold)
            st.busy -= 1
            st.level("busy", st.busy)
            _finish(st, job, 1 if ok else 2)
        else:
            yield env.timeout(sc.cpu_ms)
            st.busy -= 1
            st.level("busy", st.busy)
            if st.inflight >= sc.max_inflight:
                _finish(st, job, 4)
            else:
                st.inflight += 1
                env.process(event_loop_wait(env, st, job))


def event_loop_wait(env, st: _PoolState, job: _Job):
    """Async I/O: the call waits in the event loop (a coroutine), holding no worker."""
    hold, ok = st.draw_call(job.slow)
    yield env.timeout(hold)
    st.inflight -= 1
    _finish(st, job, 1 if ok else 2)


def _finish(st: _PoolState, job: _Job, code: int) -> None:
    if st.backlog:
        if st.env.now >= st.started_at:
            st.completed += 1
            st.completed_ok += code == 1
        return
    if job.abandoned:
        st.wasted += 1
        st.rec.count("wasted", st.env.now)
    else:
        job.done.succeed(code)


def measure_capacity(
    scenario: PoolScenario = SEED_POOL,
    seed: int = 0,
    *,
    horizon_ms: float | None = None,
    warmup_ms: float | None = None,
    target_completions: int = 20_000,
    max_events: int = DEFAULT_MAX_EVENTS,
) -> dict:
    """Measure the saturated pool's capacity with SimPy: ``workers`` worker processes, each
    with an endless backlog, calling the downstream for ``horizon_ms`` (by default long enough
    for about ``target_completions`` calls at the closed-form rate). Uses the fast class, sync
    I/O and ``hang_share`` throughout. Returns the measured ``capacity_per_s``, the success
    share, the closed form and the counts."""
    seed = _check_run_args(scenario, PoolScenario, seed, max_events)
    if scenario.io != "sync":
        raise ValueError(f"io must be 'sync' for measure_capacity, got {scenario.io!r}")
    check_int("target_completions", target_completions, low=1)
    sc = replace(scenario, hang_start_ms=0.0, hang_end_ms=math.inf, slow_share=0.0, slow_workers=0)
    closed = pool_capacity_per_s(sc.workers, sc.service_ms, sc.timeout_ms, sc.hang_share, sc.service_shape)
    hold = holding_ms(sc.service_ms, sc.timeout_ms, sc.hang_share, sc.service_shape)
    if warmup_ms is None:  # the hung workers reach their steady share after one timeout
        warmup_ms = 2.0 * max(hold, sc.timeout_ms)
    warm = check_number("warmup_ms", warmup_ms, low=0.0, high=MAX_HORIZON_MS)
    if horizon_ms is None:
        horizon_ms = warm + 1000.0 * target_completions / closed
    h = check_number("horizon_ms", horizon_ms, low=0.0, low_open=True, high=MAX_HORIZON_MS)
    if h <= warm:
        raise ValueError(f"horizon_ms must be > warmup_ms ({warm:g}), got {horizon_ms!r}")
    env = simpy.Environment()
    st = _PoolState(env, sc, make_rng(seed), None, {}, backlog=True, started_at=warm)
    for _ in range(sc.workers):
        env.process(worker(env, st, None, False))
    status = run_bounded(env, until_ms=h, max_events=max_events)
    span = (env.now if status.truncated else h) - warm
    measured = st.completed * 1000.0 / span if span > 0 else math.nan
    return {
        "capacity_per_s": measured,
        "closed_form_per_s": closed,
        "holding_ms": hold,
        "success_share": st.completed_ok / st.completed if st.completed else math.nan,
        "completed": st.completed,
        "horizon_ms": h,
        "truncated": status.truncated,
    }


def simulate_pool(
    scenario: PoolScenario = SEED_POOL_INCIDENT, seed: int = 0, *, max_events: int = DEFAULT_MAX_EVENTS
) -> Run:
    """Run the open pool: users arrive, queue for workers, give up after ``user_timeout_ms``.
    ``windows``: offered, goodput (answered ok), timeouts (failed after the downstream timeout),
    gave_up, rejected, wasted (per s), queue and busy (time-weighted), mean_ms / p50_ms / p99_ms
    (the user's wait, by completion window)."""
    seed = _check_run_args(scenario, PoolScenario, seed, max_events)
    sc = scenario
    env = simpy.Environment()
    rec = Recorder(
        sc.horizon_ms, sc.window_ms,
        counters=("offered", "goodput", "timeouts", "gave_up", "rejected", "wasted"),
        levels=("queue", "busy"),
    )
    queues = {False: simpy.Store(env)}
    if sc.slow_workers > 0:
        queues[True] = simpy.Store(env)
    st = _PoolState(env, sc, make_rng(seed), rec, queues)
    n_fast = sc.workers - sc.slow_workers
    for _ in range(n_fast):
        env.process(worker(env, st, queues[False], False))
    for _ in range(sc.slow_workers):
        env.process(worker(env, st, queues[True], True))
    env.process(pool_users(env, st))
    status = _bounded(env, sc, max_events)
    rec.close(status.t_end_ms)
    w = rec.arrays()
    arrive = np.asarray(st.arrive, float)
    done = np.asarray(st.done, float)
    outcome = np.asarray(st.outcome, np.int8)
    slow = np.asarray(st.slow, bool)
    w["mean_ms"], w["p50_ms"], w["p99_ms"] = _window_stats(done, done - arrive, sc.window_ms, len(w["t"]))
    ledger = Ledger(
        arrived=len(arrive),
        served=int((outcome == 1).sum()),
        timed_out=int(((outcome == 2) | (outcome == 3)).sum()),
        rejected=int((outcome == 4).sum()),
        in_system=int((outcome == 0).sum()),
        extra={"gave_up": int((outcome == 3).sum()), "wasted": st.wasted},
    )
    fin = outcome != 0
    hang = (arrive >= sc.hang_start_ms) & (arrive < sc.hang_end_ms) & fin
    lat = done - arrive
    summary = {
        "success_all": _share(outcome == 1, fin),
        "success_hang": _share(outcome == 1, hang),
        "success_fast": _share(outcome == 1, fin & ~slow),
        "success_slow": _share(outcome == 1, fin & slow),
        "mean_wait_ms": float(lat[fin].mean()) if fin.any() else math.nan,
        "mean_wait_hang_ms": float(lat[hang].mean()) if hang.any() else math.nan,
        "peak_queue": float(np.max(w["queue"])) if len(w["queue"]) else 0.0,
        "gave_up": int((outcome == 3).sum()),
    }
    log = {"arrive_ms": arrive, "done_ms": done, "outcome": outcome, "slow": slow}
    return Run(sc, seed, status, ledger, w, summary, log)


def plot_capacity_curve(
    workers: int = SEED_POOL.workers,
    service_ms: float = SEED_POOL.service_ms,
    timeouts_ms=(SEED_POOL.timeout_ms,),
    points: dict | None = None,
    shape: float = 1.0,
    offered_per_s: float | None = None,
    ax=None,
):
    """Closed-form capacity (requests/s, log scale) against the share of hanging calls, one line
    per timeout; ``points`` = ``{timeout_ms: [(hang_share, measured_per_s), …]}`` from
    :func:`measure_capacity` drawn as dots; ``offered_per_s`` as a dashed line."""
    if ax is None:
        _, ax = new_figure(height=3.4)
    h = np.linspace(0.0, 1.0, 201)
    styles = ["-", "--", ":", "-."]
    for j, tmo in enumerate(timeouts_ms):
        cap = [pool_capacity_per_s(workers, service_ms, tmo, x, shape) for x in h]
        ax.plot(h * 100, cap, color=COLORS["goodput"], ls=styles[j % 4],
                label=f"timeout {tmo / 1000:g} s (closed form)")
        for x, y in (points or {}).get(tmo, []):
            ax.plot(x * 100, y, "o", color=COLORS["goodput"], ms=6, mfc="white", mew=2)
    if points:
        ax.plot([], [], "o", color=COLORS["goodput"], mfc="white", mew=2, label="SimPy worker pool")
    if offered_per_s is not None:
        ax.axhline(offered_per_s, color=COLORS["offered"], ls="--", lw=1.5, label="offered load")
    ax.set_yscale("log")
    _log_ms_ticks(ax)
    decorate(ax, xlabel="hanging calls (%)", ylabel="pool capacity (requests/s)", legend=False)
    _legend_right(ax)
    return ax


def plot_pool_runs(runs: dict, axes=None):
    """Top: requests answered ok per second; bottom: the user's mean wait (s); one line style
    per labelled run; the hang window shaded."""
    if axes is None:
        _, axes = new_figure(2, 1, height=2.3, sharex=True)
    a0, a1 = axes
    styles = ["-", "--", ":", "-."]
    sc0 = next(iter(runs.values())).scenario
    for j, (label, run) in enumerate(runs.items()):
        w = run.windows
        t = w["t"] + run.scenario.window_ms / 2000.0
        a0.plot(t, w["goodput"], color=COLORS["goodput"], ls=styles[j % 4], label=label)
        a1.plot(t, w["mean_ms"] / 1000.0, color=COLORS["latency"], ls=styles[j % 4], label=label)
    a0.axhline(sc0.rate_per_s, color=COLORS["offered"], ls="--", lw=1, label="offered")
    for ax in axes:
        if sc0.hang_end_ms > sc0.hang_start_ms:
            shade(ax, [(sc0.hang_start_ms / 1000, min(sc0.hang_end_ms, sc0.horizon_ms) / 1000)],
                  label=f"{sc0.hang_share:.0%} of calls hang")
        ax.set_ylim(bottom=0)
    decorate(a0, ylabel="answered ok/s", legend=False)
    decorate(a1, xlabel="time (s)", ylabel="user's mean wait (s)", legend=False)
    _legend_right(a0)
    a1.set_xlim(0, sc0.horizon_ms / 1000)
    return axes


def explore_pool(
    workers: int = SEED_POOL.workers,
    timeout_ms: float = SEED_POOL.timeout_ms,
    hang_share: float = 0.05,
    service_ms: float = SEED_POOL.service_ms,
    seed: int = 0,
    target_completions: int = 3000,
    plot: bool = True,
) -> dict:
    """The worker-pool widget's function: the closed-form capacity curve for these numbers,
    with a SimPy measurement at the chosen hang share; returns both numbers."""
    sc = replace(SEED_POOL, workers=workers, timeout_ms=timeout_ms, service_ms=service_ms,
                 hang_share=hang_share)
    m = measure_capacity(sc, seed, target_completions=target_completions, max_events=400_000)
    out = {
        "capacity_closed_per_s": m["closed_form_per_s"],
        "capacity_sim_per_s": m["capacity_per_s"],
        "holding_ms": m["holding_ms"],
        "healthy_per_s": pool_capacity_per_s(workers, service_ms, timeout_ms, 0.0),
        "all_hang_per_s": pool_capacity_per_s(workers, service_ms, timeout_ms, 1.0),
    }
    if plot:
        import matplotlib.pyplot as plt

        ax = plot_capacity_curve(workers, service_ms, (timeout_ms,),
                                 points={timeout_ms: [(hang_share, m["capacity_per_s"])]})
        ax.figure.tight_layout()
        plt.show()
    return out


# =========================================================================== 5 · duplicates
PROTECTIONS = ("none", "user_limit", "order_id", "async_queue", "read_cap")
PROTECTION_LABELS = {
    "none": "no protection",
    "user_limit": "per-user limit",
    "order_id": "order id",
    "async_queue": "async delivery queue",
    "read_cap": "read-timeout cap",
}
#: outcomes of one delivery call: answered in time; connect failed; read timeout and the
#: delivery failed; read timeout but the gift was delivered later ("超时成功").
OUTCOMES = ("ok", "connect_fail", "read_lost", "read_delivered")


@dataclass(frozen=True)
class DeliveryScenario:
    """Gift claims through AMS to a delivery service. Times in ms.

    ``users`` users claim a gift (Poisson arrivals at ``users_per_s``); each delivery call ends
    in one of :data:`OUTCOMES` with the given probabilities (the rest answer in time after
    ``ok_ms``). A connect failure shows "领取失败" after ``connect_timeout_ms``; a read timeout
    after ``timeout_ms``, while a ``read_delivered`` call delivers the gift at ``slow_ms``. A
    user who sees a failure clicks again after ``think_ms``, up to ``clicks`` clicks.
    ``script`` (optional) fixes the outcomes of the successive calls instead of drawing them.
    """

    users: int = 1000
    users_per_s: float = 20.0
    timeout_ms: float = 6000.0
    slow_ms: float = 8000.0
    ok_ms: float = 50.0
    connect_timeout_ms: float = 1000.0
    p_connect_fail: float = 0.1
    p_read_lost: float = 0.1
    p_read_delivered: float = 0.3
    clicks: int = 3
    think_ms: float = 3000.0
    protection: str = "none"
    read_cap: int = 2
    async_timeout_ms: float = 60_000.0
    async_retry_ms: float = 10_000.0
    async_max_attempts: int = 20
    script: tuple = ()
    horizon_ms: float = 1_800_000.0
    window_ms: float = 10_000.0

    def __post_init__(self):
        object.__setattr__(self, "users", check_int("users", self.users, low=0, high=1_000_000))
        check_number("users_per_s", self.users_per_s, low=0.0, low_open=True, high=MAX_RATE_PER_S)
        check_number("timeout_ms", self.timeout_ms, low=0.0, low_open=True, high=1e7)
        check_number("slow_ms", self.slow_ms, low=0.0, low_open=True, high=1e7)
        if self.slow_ms <= self.timeout_ms:
            raise ValueError(
                f"slow_ms must be > timeout_ms ({self.timeout_ms:g}): a timeout-success completes "
                f"after the timeout, got {self.slow_ms!r}"
            )
        check_number("ok_ms", self.ok_ms, low=0.0, low_open=True, high=self.timeout_ms, high_open=True)
        check_number("connect_timeout_ms", self.connect_timeout_ms, low=0.0, low_open=True, high=1e7)
        for name in ("p_connect_fail", "p_read_lost", "p_read_delivered"):
            check_probability(name, getattr(self, name))
        total = self.p_connect_fail + self.p_read_lost + self.p_read_delivered
        if total > 1.0 + 1e-12:
            raise ValueError(
                "p_connect_fail + p_read_lost + p_read_delivered must be <= 1, got "
                f"{total:g}"
            )
        object.__setattr__(self, "clicks", check_int("clicks", self.clicks, low=1, high=1000))
        check_number("think_ms", self.think_ms, low=0.0, low_open=True, high=1e7)
        check_choice("protection", self.protection, PROTECTIONS)
        object.__setattr__(self, "read_cap", check_int("read_cap", self.read_cap, low=1, high=1000))
        check_number("async_timeout_ms", self.async_timeout_ms, low=0.0, low_open=True, high=1e8)
        check_number("async_retry_ms", self.async_retry_ms, low=0.0, low_open=True, high=1e8)
        object.__setattr__(self, "async_max_attempts", check_int("async_max_attempts", self.async_max_attempts, low=1, high=10_000))
        if not isinstance(self.script, tuple):
            raise ValueError(f"script must be a tuple of outcomes, got {self.script!r}")
        for j, o in enumerate(self.script):
            check_choice(f"script[{j}]", o, OUTCOMES)
        _check_horizon(self)

    @property
    def p_ok(self) -> float:
        return max(0.0, 1.0 - self.p_connect_fail - self.p_read_lost - self.p_read_delivered)


SEED_DELIVERY = DeliveryScenario(
    users=1000,  # the issue asks per 1000 users
    timeout_ms=6000.0,  # "我们假设某个发货服务超时时间设置为6s"
    slow_ms=8000.0,  # "而实际上发货服务却在第8秒执行发货成功"
    p_connect_fail=0.1,  # "通常一个发货服务如果出现异常，大多数情况，在connect步骤就是失败或者超时" (shares assumed)
    p_read_lost=0.1,  # "发货等待超时，发货服务执行发货失败" (assumed)
    p_read_delivered=0.3,  # "发货等待超时，发货服务实际在更晚的时候执行发货成功" (assumed, a degraded service)
    clicks=3,  # "用户看见“领取失败”，则又再次点击按钮" (3 clicks at most assumed)
    think_ms=3000.0,  # assumption: the user clicks again 3 s after "领取失败"
    read_cap=2,  # "假如设置为2次 … 拒绝用户的第三次领取请求"
    async_timeout_ms=60_000.0,  # "异步发货是可以设置一个比较长的超时等待时间" (60 s assumed)
    async_retry_ms=10_000.0,  # "可以多次执行发货重试操作，直到发货成功为止" (interval assumed)
)

SEED_SEQUENCE = replace(
    SEED_DELIVERY,
    users=1,
    script=("read_delivered", "ok"),  # the seed's sequence: timeout at 6 s, gift at 8 s, click again
    horizon_ms=20_000.0,
    window_ms=1000.0,
)


def gift_distribution(
    p_ok: float,
    p_connect_fail: float,
    p_read_lost: float,
    p_read_delivered: float,
    clicks: int,
    read_cap: int | None = None,
) -> dict:
    """Exact distribution of the gifts one user receives, by enumerating the clicks.

    Per call: ``p_ok`` answers in time (a gift, the user stops), ``p_connect_fail`` fails with
    no gift, ``p_read_lost`` times out with no gift, ``p_read_delivered`` times out and delivers
    later (a gift, but the user sees a failure). The user clicks while failing, at most
    ``clicks`` times; with ``read_cap`` AMS refuses a click once the user has had that many read
    timeouts. Returns ``{"pmf": {gifts: prob}, "mean_gifts", "duplicates" (E[max(0, g − 1)]),
    "no_gift", "calls"}``.
    """
    ps = [check_probability(n, v) for n, v in (
        ("p_ok", p_ok), ("p_connect_fail", p_connect_fail), ("p_read_lost", p_read_lost),
        ("p_read_delivered", p_read_delivered))]
    if abs(sum(ps) - 1.0) > 1e-9:
        raise ValueError(f"p_ok + p_connect_fail + p_read_lost + p_read_delivered must be 1, got {sum(ps):g}")
    a, c, r0, r1 = ps
    k = check_int("clicks", clicks, low=1)
    cap = None if read_cap is None else check_int("read_cap", read_cap, low=1)
    alive = {(0, 0): 1.0}  # (read timeouts, gifts) -> probability, still clicking
    pmf: dict = {}
    calls = 0.0
    for _ in range(k):
        nxt: dict = {}
        for (reads, gifts), p in alive.items():
            if cap is not None and reads >= cap:  # AMS refuses: "可能已发货"
                pmf[gifts] = pmf.get(gifts, 0.0) + p
                continue
            calls += p
            pmf[gifts + 1] = pmf.get(gifts + 1, 0.0) + p * a
            for key, q in (((reads, gifts), c), ((reads + 1, gifts), r0), ((reads + 1, gifts + 1), r1)):
                if q:
                    nxt[key] = nxt.get(key, 0.0) + p * q
        alive = nxt
    for (_, gifts), p in alive.items():
        pmf[gifts] = pmf.get(gifts, 0.0) + p
    mean = sum(g * p for g, p in pmf.items())
    dup = sum(max(0, g - 1) * p for g, p in pmf.items())
    return {"pmf": dict(sorted(pmf.items())), "mean_gifts": mean, "duplicates": dup,
            "no_gift": pmf.get(0, 0.0), "calls": calls}


def expected_duplicates(scenario: DeliveryScenario = SEED_DELIVERY, per_users: int = 1000) -> dict:
    """Closed form per protection for ``scenario``'s probabilities: expected duplicate gifts and
    users left without a gift, per ``per_users`` users.

    - ``none``: :func:`gift_distribution` over ``clicks``;
    - ``user_limit`` and ``order_id``: the delivery service delivers once: 0 duplicates, and as
      many users without a gift as with no protection;
    - ``read_cap``: :func:`gift_distribution` with the cap (at most ``read_cap`` gifts);
    - ``async_queue``: the user clicks once and is told "到账 within 30 minutes"; the queue
      retries up to ``async_max_attempts`` times with a timeout longer than ``slow_ms``, so a
      late delivery counts as in time: 0 duplicates unless ``slow_ms > async_timeout_ms``.
    """
    sc = scenario
    if not isinstance(sc, DeliveryScenario):
        raise ValueError(f"scenario must be a fault_tolerance.DeliveryScenario, got {type(sc).__name__}")
    n = check_int("per_users", per_users, low=1)
    probs = (sc.p_ok, sc.p_connect_fail, sc.p_read_lost, sc.p_read_delivered)
    base = gift_distribution(*probs, sc.clicks)
    capped = gift_distribution(*probs, sc.clicks, read_cap=sc.read_cap)
    if sc.slow_ms <= sc.async_timeout_ms:
        aprobs = (sc.p_ok + sc.p_read_delivered, sc.p_connect_fail, sc.p_read_lost, 0.0)
    else:
        aprobs = probs
    asy = gift_distribution(*aprobs, sc.async_max_attempts)
    rows = {
        "none": base,
        "user_limit": {**base, "duplicates": 0.0},
        "order_id": {**base, "duplicates": 0.0},
        "read_cap": capped,
        "async_queue": asy,
    }
    return {p: {"duplicates": n * r["duplicates"], "no_gift": n * r["no_gift"]} for p, r in rows.items()}


@dataclass
class _DeliveryState:
    env: simpy.Environment
    sc: DeliveryScenario
    rng: np.random.Generator
    rec: Recorder
    gifts: list = field(default_factory=list)  # per user
    reads: list = field(default_factory=list)  # read timeouts per user (read_cap)
    orders: dict = field(default_factory=dict)  # order id -> "in_progress" | "done"
    calls_made: int = 0
    clicks: list = field(default_factory=list)  # per click: [user, t, shown, t_shown]
    log: list = field(default_factory=list)  # (t_ms, actor, what) for the sequence plot
    async_pending: int = 0
    async_delay: list = field(default_factory=list)

    def outcome(self) -> str:
        j = self.calls_made
        self.calls_made += 1
        if j < len(self.sc.script):
            return self.sc.script[j]
        sc = self.sc
        u = self.rng.random()
        for name, p in (("connect_fail", sc.p_connect_fail), ("read_lost", sc.p_read_lost),
                        ("read_delivered", sc.p_read_delivered)):
            if u < p:
                return name
            u -= p
        return "ok"


def gift_users(env, st: _DeliveryState):
    """The users: ``users`` users arriving as a Poisson stream at ``users_per_s``."""
    sc = st.sc
    gaps = st.rng.exponential(1000.0 / sc.users_per_s, sc.users)
    for u in range(sc.users):
        if u:
            yield env.timeout(float(gaps[u]))
        st.gifts.append(0)
        st.reads.append(0)
        env.process(gift_user(env, st, u))


def gift_user(env, st: _DeliveryState, u: int):
    """One user: click "领取"; on "领取失败" click again after ``think_ms``, up to ``clicks``."""
    sc = st.sc
    for click in range(sc.clicks):
        if click:
            yield env.timeout(sc.think_ms)
        st.log.append((env.now, "user", f"click {click + 1}"))
        shown = yield from ams_claim(env, st, u)
        st.log.append((env.now, "AMS", shown))
        if shown != "failed":
            return


def ams_claim(env, st: _DeliveryState, u: int):
    """AMS handles one click under the protection; returns what the user is shown:
    "success", "failed" (a timeout: "领取失败"), or "refused" (already claimed / cap reached)."""
    sc = st.sc
    rec = st.rec
    c = len(st.clicks)
    st.clicks.append([u, env.now, None, math.nan])
    rec.count("offered", env.now)

    def show(what):
        st.clicks[c][2], st.clicks[c][3] = what, env.now
        rec.count({"success": "goodput", "failed": "timeouts", "refused": "rejected"}[what], env.now)
        return what

    if sc.protection == "read_cap" and st.reads[u] >= sc.read_cap:
        return show("refused")  # "我们就认为它可能发货成功，拒绝用户的第三次领取请求"
    if sc.protection == "async_queue":
        st.async_pending += 1
        env.process(async_deliverer(env, st, u, env.now))
        return show("success")  # "Web端直接返回成功，并且提示禮包在30分鐘內到賬"
    order = u if sc.protection == "order_id" else None
    st.log.append((env.now, "AMS", "call delivery"))
    result = yield from delivery_call(env, st, u, order, sc.timeout_ms)
    if result in ("ok", "already"):
        return show("success")
    if result == "refused":
        return show("refused")
    if result == "read_timeout":
        st.reads[u] += 1
    return show("failed")


def delivery_call(env, st: _DeliveryState, u: int, order, timeout_ms: float):
    """One call to the delivery service (connect, write, read with ``timeout_ms``). Returns
    "ok", "already" (the order id is done), "refused" (per-user limit or order in progress),
    "connect_fail" or "read_timeout"."""
    sc = st.sc
    if order is not None and order in st.orders:
        yield env.timeout(sc.ok_ms)
        return "already" if st.orders[order] == "done" else "refused"
    outcome = st.outcome()
    if outcome == "connect_fail":
        yield env.timeout(sc.connect_timeout_ms)
        return "connect_fail"
    if order is not None:
        st.orders[order] = "in_progress"
    att = _Attempt(env)
    delay = sc.ok_ms if outcome == "ok" else sc.slow_ms
    env.process(delivery_service(env, st, u, order, outcome, delay, att))
    yield att.done | env.timeout(timeout_ms)
    if att.done.triggered:
        return att.done.value
    att.abandoned = True
    return "read_timeout"


def delivery_service(env, st: _DeliveryState, u: int, order, outcome: str, delay: float, att: _Attempt):
    """The delivery service: delivers after ``delay`` unless the delivery fails
    (``read_lost``) or the per-user limit says the user already has the gift."""
    yield env.timeout(delay)
    sc = st.sc
    if outcome == "read_lost":
        if order is not None:
            st.orders.pop(order, None)
        st.log.append((env.now, "delivery", "failed"))
        result = "failed"
    elif sc.protection == "user_limit" and st.gifts[u] >= 1:
        st.log.append((env.now, "delivery", "limit reached"))
        result = "refused"
    else:
        st.gifts[u] += 1
        st.rec.count("gifts", env.now)
        if st.gifts[u] > 1:
            st.rec.count("duplicates", env.now)
        if order is not None:
            st.orders[order] = "done"
        st.log.append((env.now, "account", f"gift {st.gifts[u]}"))
        result = "ok"
    if not att.abandoned and result != "failed":
        att.done.succeed(result)


def async_deliverer(env, st: _DeliveryState, u: int, t_claim: float):
    """The asynchronous delivery queue's job for one claim: call with the long
    ``async_timeout_ms``; on failure retry after ``async_retry_ms``, up to
    ``async_max_attempts`` times."""
    sc = st.sc
    for attempt in range(sc.async_max_attempts):
        if attempt:
            yield env.timeout(sc.async_retry_ms)
        result = yield from delivery_call(env, st, u, None, sc.async_timeout_ms)
        if result == "ok":
            st.async_delay.append(env.now - t_claim)
            break
    st.async_pending -= 1


def simulate_delivery(
    scenario: DeliveryScenario = SEED_DELIVERY, seed: int = 0, *, max_events: int = DEFAULT_MAX_EVENTS
) -> Run:
    """Run the delivery model. The ledger counts clicks: served (shown success), timed_out
    (shown "领取失败"), rejected (refused), in_system (no answer yet). ``summary`` has the
    gifts, duplicates and users without a gift, per ``users``; ``log["events"]`` the
    ``(t_ms, actor, what)`` list for :func:`plot_sequence`."""
    seed = _check_run_args(scenario, DeliveryScenario, seed, max_events)
    sc = scenario
    env = simpy.Environment()
    rec = Recorder(sc.horizon_ms, sc.window_ms,
                   counters=("offered", "goodput", "timeouts", "rejected", "gifts", "duplicates"))
    st = _DeliveryState(env, sc, make_rng(seed), rec)
    env.process(gift_users(env, st))
    status = _bounded(env, sc, max_events)
    w = rec.arrays()
    shown = [c[2] for c in st.clicks]
    gifts = np.asarray(st.gifts, int)
    ledger = Ledger(
        arrived=len(st.clicks),
        served=shown.count("success"),
        timed_out=shown.count("failed"),
        rejected=shown.count("refused"),
        in_system=shown.count(None),
        extra={"gifts": int(gifts.sum()), "duplicates": int(np.maximum(gifts - 1, 0).sum()),
               "calls": st.calls_made, "async_pending": st.async_pending},
    )
    n = max(1, len(gifts))
    summary = {
        "protection": sc.protection,
        "users": len(gifts),
        "gifts": int(gifts.sum()),
        "duplicates": int(np.maximum(gifts - 1, 0).sum()),
        "duplicates_per_1000": 1000.0 * float(np.maximum(gifts - 1, 0).sum()) / n,
        "no_gift_per_1000": 1000.0 * float((gifts == 0).sum()) / n,
        "max_gifts": int(gifts.max()) if len(gifts) else 0,
        "clicks_per_user": len(st.clicks) / n,
        "async_mean_delay_s": float(np.mean(st.async_delay)) / 1000.0 if st.async_delay else math.nan,
        "async_p99_delay_s": float(np.percentile(st.async_delay, 99)) / 1000.0 if st.async_delay else math.nan,
    }
    log = {"events": sorted(st.log, key=lambda e: e[0]), "gifts": gifts}
    return Run(sc, seed, status, ledger, w, summary, log)


def plot_sequence(run: Run, ax=None):
    """The seed's sequence for one user as a timeline (s): the user's clicks, AMS waiting for
    the delivery service (each call up to the timeout), what the user is shown, and when gifts
    land in the user's account."""
    sc = run.scenario
    ev = run.log["events"]
    if ax is None:
        _, ax = new_figure(height=2.6)
    rows = {"user": 3, "AMS": 2, "delivery": 1, "account": 0}
    # AMS waits: from "call delivery" to its next shown result
    calls = [t for t, a, w in ev if a == "AMS" and w == "call delivery"]
    shows = [(t, w) for t, a, w in ev if a == "AMS" and w != "call delivery"]
    for t0 in calls:
        t1 = min((t for t, _ in shows if t >= t0), default=t0)
        ax.broken_barh([(t0 / 1000, (t1 - t0) / 1000)], (rows["AMS"] - 0.3, 0.6),
                       facecolors=COLORS["queue"], alpha=0.35)
        ax.broken_barh([(t0 / 1000, min(sc.slow_ms, sc.horizon_ms - t0) / 1000 if t1 - t0 >= sc.timeout_ms - 1e-9
                         else (t1 - t0) / 1000)], (rows["delivery"] - 0.3, 0.6),
                       facecolors=COLORS["latency"], alpha=0.35)
    for t, a, w in ev:
        s = t / 1000
        if a == "user":
            ax.plot(s, rows["user"], "v", color=COLORS["offered"], ms=9)
            ax.annotate(w, (s, rows["user"]), xytext=(4, 6), textcoords="offset points", fontsize=8)
        elif a == "AMS" and w != "call delivery":
            color = COLORS["goodput"] if w == "success" else COLORS["timeouts"]
            text = {"failed": "shows 'claim failed'", "success": "shows success", "refused": "refuses"}[w]
            ax.plot(s, rows["AMS"], "s", color=color, ms=8)
            ax.annotate(text, (s, rows["AMS"]), xytext=(4, 6), textcoords="offset points", fontsize=8)
        elif a == "account":
            ax.plot(s, rows["account"], "*", color=COLORS["wasted"] if w != "gift 1" else COLORS["goodput"], ms=13)
            ax.annotate(w, (s, rows["account"]), xytext=(5, 4), textcoords="offset points", fontsize=8)
    ax.axvline(sc.timeout_ms / 1000, color=COLORS["capacity"], ls=":", lw=1)
    ax.text(sc.timeout_ms / 1000, 3.55, f" timeout {sc.timeout_ms / 1000:g} s", fontsize=8,
            color=COLORS["capacity"])
    ax.set_yticks(list(rows.values()), ["user", "AMS (waits)", "delivery service", "user's account"])
    ax.set_ylim(-0.6, 3.8)
    ax.grid(axis="y", visible=False)
    t_last = max(t for t, _, _ in ev) / 1000 if ev else sc.horizon_ms / 1000
    decorate(ax, xlabel="time since the first click (s)", legend=False, xlim=(-0.3, t_last + 1.5))
    return ax


def plot_duplicates(closed: dict, measured: dict | None = None, ax=None):
    """Duplicate gifts per 1000 users for each protection: the closed form as bars, the
    simulation as dots."""
    if ax is None:
        _, ax = new_figure(height=3.0)
    names = [p for p in PROTECTIONS if p in closed]
    x = np.arange(len(names))
    ax.bar(x, [closed[p]["duplicates"] for p in names], color=COLORS["wasted"], alpha=0.7,
           label="closed form")
    if measured:
        ax.plot([i for i, p in enumerate(names) if p in measured],
                [measured[p] for p in names if p in measured], "o", color="black", ms=6,
                label="simulation")
    ax.set_xticks(x, [PROTECTION_LABELS[p] for p in names], fontsize=9)
    ax.grid(axis="x", visible=False)
    decorate(ax, ylabel="duplicate gifts per 1000 users", legend=False)
    ax.legend(loc="upper right", fontsize=8)
    return ax


# =========================================================================== 6 · degrade
REPORT_MODES = ("bypass", "blocking")


@dataclass(frozen=True)
class ReportScenario:
    """The gift CGI's core path plus one non-core step, a reporting call. Times in ms.

    A request takes one of ``workers`` CGI workers, runs the core steps (gamma time, mean
    ``core_ms``, shape 4), then calls the reporting service (exponential, mean ``report_ms``;
    ``slow_report_ms`` inside the slow window). ``"bypass"``: wait at most
    ``report_timeout_ms``, then carry on; ``"blocking"``: wait for the answer.
    """

    rate_per_s: float = 200.0
    workers: int = 20
    core_ms: float = 30.0
    report_ms: float = 3.0
    report_timeout_ms: float = 20.0
    mode: str = "bypass"
    slow_report_ms: float = 300.0
    slow_start_ms: float = 10_000.0
    slow_end_ms: float = 20_000.0
    horizon_ms: float = 30_000.0
    window_ms: float = 500.0

    def __post_init__(self):
        check_number("rate_per_s", self.rate_per_s, low=0.0, high=MAX_RATE_PER_S)
        object.__setattr__(self, "workers", check_int("workers", self.workers, low=1, high=MAX_WORKERS))
        check_number("core_ms", self.core_ms, low=0.0, low_open=True, high=1e6)
        check_number("report_ms", self.report_ms, low=0.0, low_open=True, high=1e7)
        check_number("report_timeout_ms", self.report_timeout_ms, low=0.0, low_open=True, high=1e7)
        check_choice("mode", self.mode, REPORT_MODES)
        check_number("slow_report_ms", self.slow_report_ms, low=0.0, low_open=True, high=1e7)
        _check_window("slow_start_ms", self.slow_start_ms, "slow_end_ms", self.slow_end_ms)
        _check_horizon(self)

    def report_mean_at(self, t_ms: float) -> float:
        return self.slow_report_ms if self.slow_start_ms <= t_ms < self.slow_end_ms else self.report_ms


SEED_REPORT = ReportScenario(
    rate_per_s=200.0,  # assumption
    workers=20,  # assumption: 20 CGI workers
    core_ms=30.0,  # assumption: "后端CGI会经过10多个环节和服务的逻辑判断" (~30 ms in all)
    report_ms=3.0,  # "其中一个统计上报服务，平均耗时是3ms"
    report_timeout_ms=20.0,  # "那么我们就将超时时间设置为20ms，一旦超时则旁路掉"
    mode="bypass",
    slow_report_ms=300.0,  # assumption: the reporting service slows down 100×
)


def core_latency_ms(core_ms: float, report_mean_ms: float, timeout_ms: float | None) -> float:
    """Mean time of the core path (no queueing): ``core + E[min(R, T)]`` with R exponential
    (bypass after ``timeout_ms``), or ``core + E[R]`` for a blocking call (``timeout_ms=None``)."""
    c = check_number("core_ms", core_ms, low=0.0)
    r = check_number("report_mean_ms", report_mean_ms, low=0.0, low_open=True)
    if timeout_ms is None:
        return c + r
    return c + mean_capped_ms(r, timeout_ms)


def report_capacity_per_s(workers: int, core_ms: float, report_mean_ms: float, timeout_ms: float | None) -> float:
    """Requests/s the CGI's workers complete: ``workers × 1000 / core_latency_ms``."""
    return check_int("workers", workers, low=1) * capacity.tps_ceiling(
        core_latency_ms(core_ms, report_mean_ms, timeout_ms))


@dataclass
class _ReportState:
    env: simpy.Environment
    sc: ReportScenario
    rng: np.random.Generator
    rec: Recorder
    cgi: simpy.Resource
    queued: int = 0
    arrive: list = field(default_factory=list)
    done: list = field(default_factory=list)
    bypassed: int = 0


def report_users(env, st: _ReportState):
    """The users: a Poisson stream of gift requests; each runs :func:`cgi_request`."""
    sc = st.sc
    yield from _poisson(env, st.rng, [(0.0, sc.horizon_ms, sc.rate_per_s)],
                        lambda: env.process(cgi_request(env, st)))


def cgi_request(env, st: _ReportState):
    """One request in the CGI: a worker, the core steps, then the reporting call."""
    sc = st.sc
    i = len(st.arrive)
    st.arrive.append(env.now)
    st.done.append(math.nan)
    st.rec.count("offered", env.now)
    st.queued += 1
    st.rec.level("queue", env.now, st.queued)
    with st.cgi.request() as req:
        yield req
        st.queued -= 1
        st.rec.level("queue", env.now, st.queued)
        yield env.timeout(st.rng.gamma(4.0, sc.core_ms / 4.0))  # config, limits, login, security…
        call = env.process(reporting_service(env, st))
        if sc.mode == "bypass":
            yield call | env.timeout(sc.report_timeout_ms)
            if not call.triggered:
                st.bypassed += 1
                st.rec.count("bypassed", env.now)
        else:
            yield call
    st.done[i] = env.now
    st.rec.count("goodput", env.now)


def reporting_service(env, st: _ReportState):
    """The reporting service: answers after an exponential time (slower in the slow window)."""
    yield env.timeout(st.rng.exponential(st.sc.report_mean_at(env.now)))


def simulate_report(
    scenario: ReportScenario = SEED_REPORT, seed: int = 0, *, max_events: int = DEFAULT_MAX_EVENTS
) -> Run:
    """Run the CGI with its reporting step; ``windows``: offered, goodput, bypassed (per s),
    queue (requests waiting for a worker), mean_ms / p50_ms / p99_ms (latency by completion)."""
    seed = _check_run_args(scenario, ReportScenario, seed, max_events)
    sc = scenario
    env = simpy.Environment()
    rec = Recorder(sc.horizon_ms, sc.window_ms, counters=("offered", "goodput", "bypassed"),
                   levels=("queue",))
    st = _ReportState(env, sc, make_rng(seed), rec, simpy.Resource(env, capacity=sc.workers))
    env.process(report_users(env, st))
    status = _bounded(env, sc, max_events)
    rec.close(status.t_end_ms)
    w = rec.arrays()
    arrive = np.asarray(st.arrive, float)
    done = np.asarray(st.done, float)
    lat = done - arrive
    w["mean_ms"], w["p50_ms"], w["p99_ms"] = _window_stats(done, lat, sc.window_ms, len(w["t"]))
    fin = ~np.isnan(done)
    ledger = Ledger(arrived=len(arrive), served=int(fin.sum()), timed_out=0, rejected=0,
                    in_system=int((~fin).sum()), extra={"bypassed": st.bypassed})
    slow = (arrive >= sc.slow_start_ms) & (arrive < sc.slow_end_ms) & fin
    normal = (arrive < sc.slow_start_ms) & fin
    summary = {
        "mode": sc.mode,
        "mean_latency_normal_ms": float(lat[normal].mean()) if normal.any() else math.nan,
        "mean_latency_slow_ms": float(lat[slow].mean()) if slow.any() else math.nan,
        "p99_latency_slow_ms": float(np.percentile(lat[slow], 99)) if slow.any() else math.nan,
        "peak_queue": float(np.max(w["queue"])) if len(w["queue"]) else 0.0,
        "bypassed": st.bypassed,
        "unfinished": int((~fin).sum()),
    }
    return Run(sc, seed, status, ledger, w, summary, {"arrive_ms": arrive, "done_ms": done})


def plot_report(runs: dict, sweep: dict | None = None, axes=None):
    """Left: mean core-path latency (ms) against the reporting service's mean time (ms, log
    axes), closed forms as lines and ``sweep`` = ``{mode: [(report_ms, measured_ms), …]}`` as
    dots. Right: p99 latency over time (s) for each run; the slow window shaded."""
    if axes is None:
        _, axes = new_figure(1, 2, height=3.2)
    a0, a1 = axes
    sc = next(iter(runs.values())).scenario
    r = np.geomspace(1.0, 3000.0, 120)
    a0.plot(r, [core_latency_ms(sc.core_ms, x, sc.report_timeout_ms) for x in r],
            color=COLORS["goodput"], label=f"bypass after {sc.report_timeout_ms:g} ms")
    a0.plot(r, [core_latency_ms(sc.core_ms, x, None) for x in r], color=COLORS["timeouts"],
            label="blocking call")
    for mode, pts in (sweep or {}).items():
        c = COLORS["goodput"] if mode == "bypass" else COLORS["timeouts"]
        a0.plot([p[0] for p in pts], [p[1] for p in pts], "o", color=c, mfc="white", mew=2, ms=6)
    a0.set_xscale("log")
    a0.set_yscale("log")
    _log_ms_ticks(a0, "x", mantissas=(1,))
    _log_ms_ticks(a0, "y")
    decorate(a0, xlabel="reporting mean time (ms)", ylabel="core path mean (ms)", legend=False)
    a0.legend(loc="upper left", fontsize=8)
    for mode, run in runs.items():
        w = run.windows
        t = w["t"] + run.scenario.window_ms / 2000.0
        c = COLORS["goodput"] if run.scenario.mode == "bypass" else COLORS["timeouts"]
        a1.plot(t, w["p99_ms"], color=c, label=f"{mode}: p99")
    shade(a1, [(sc.slow_start_ms / 1000, sc.slow_end_ms / 1000)], label="reporting slow")
    a1.set_yscale("log")
    _log_ms_ticks(a1)
    decorate(a1, xlabel="time (s)", ylabel="core path p99 (ms)", legend=False)
    a1.legend(loc="upper left", fontsize=8)
    a0.figure.tight_layout()
    return axes


# =========================================================================== 7 · isolation
@dataclass(frozen=True)
class IsolationScenario:
    """Light queries and heavy deliveries (the seed's Spring Festival red-envelope clusters).
    Times in ms, rates per second.

    Shared (``separated=False``): one pool of ``workers`` workers with one FIFO queue serves
    both. Separated: ``query_workers`` serve queries, the rest deliveries. A request that has
    waited ``patience_ms`` in the queue is dropped (its user has left; an assumption). Query
    traffic is multiplied by ``surge_factor`` inside the surge window.
    """

    query_per_s: float = 150.0
    query_ms: float = 20.0
    delivery_per_s: float = 50.0
    delivery_ms: float = 100.0
    workers: int = 20
    query_workers: int = 8
    separated: bool = False
    patience_ms: float = 1000.0
    surge_factor: float = 10.0
    surge_start_ms: float = 10_000.0
    surge_end_ms: float = 20_000.0
    horizon_ms: float = 30_000.0
    window_ms: float = 500.0

    def __post_init__(self):
        check_number("query_per_s", self.query_per_s, low=0.0, high=MAX_RATE_PER_S)
        check_number("query_ms", self.query_ms, low=0.0, low_open=True, high=1e6)
        check_number("delivery_per_s", self.delivery_per_s, low=0.0, high=MAX_RATE_PER_S)
        check_number("delivery_ms", self.delivery_ms, low=0.0, low_open=True, high=1e6)
        object.__setattr__(self, "workers", check_int("workers", self.workers, low=2, high=MAX_WORKERS))
        object.__setattr__(self, "query_workers", check_int("query_workers", self.query_workers, low=1, high=self.workers - 1))
        if not isinstance(self.separated, bool):
            raise ValueError(f"separated must be True or False, got {self.separated!r}")
        check_number("patience_ms", self.patience_ms, low=0.0, low_open=True, high=1e7)
        check_number("surge_factor", self.surge_factor, low=0.0, high=1000.0)
        _check_window("surge_start_ms", self.surge_start_ms, "surge_end_ms", self.surge_end_ms)
        _check_horizon(self)
        check_number("query surge rate (query_per_s × surge_factor)",
                     self.query_per_s * self.surge_factor, high=MAX_RATE_PER_S)

    def work_erlangs(self, query_factor: float = 1.0) -> tuple[float, float]:
        """Offered work (busy workers needed) of queries and deliveries."""
        return (capacity.utilisation(self.query_per_s * query_factor, self.query_ms),
                capacity.utilisation(self.delivery_per_s, self.delivery_ms))


SEED_ISOLATION = IsolationScenario(
    query_per_s=150.0,  # assumption: "信息查询的服务相对没有那么重要，业务流程比较轻量级"
    query_ms=20.0,  # assumption: light
    delivery_per_s=50.0,  # assumption: "红包礼包发货则属于非常核心的业务，业务流程比较重"
    delivery_ms=100.0,  # assumption: heavy
    workers=20,  # assumption; "两边的机器和部署的服务基本一致"
    query_workers=8,  # assumption: the separated split
    surge_factor=10.0,  # assumption: the "手Q春节红包" query peak
)


def shared_pool_success(query_erlangs: float, delivery_erlangs: float, workers: int) -> float:
    """Fluid approximation of the share of requests a shared FIFO pool with impatient users
    serves: 1 while the offered work fits, else ``workers / (query + delivery work)``, the
    same share for both classes (FIFO does not know which request matters)."""
    q = check_number("query_erlangs", query_erlangs, low=0.0)
    d = check_number("delivery_erlangs", delivery_erlangs, low=0.0)
    w = check_int("workers", workers, low=1)
    total = q + d
    return 1.0 if total <= w else w / total


def separated_success(erlangs: float, workers: int) -> float:
    """The same fluid approximation for one class in its own pool: ``min(1, workers / work)``."""
    return shared_pool_success(erlangs, 0.0, workers)


@dataclass
class _IsoState:
    env: simpy.Environment
    sc: IsolationScenario
    rng: np.random.Generator
    rec: Recorder
    pools: dict
    arrive: list = field(default_factory=list)
    kind: list = field(default_factory=list)  # 0 query, 1 delivery
    outcome: list = field(default_factory=list)  # 0 in system, 1 served, 2 gave up


def iso_users(env, st: _IsoState, delivery: bool):
    """Users of one kind: queries (surging in the surge window) or deliveries."""
    sc = st.sc
    if delivery:
        seg = [(0.0, sc.horizon_ms, sc.delivery_per_s)]
    else:
        seg = _segments(sc.query_per_s, sc.horizon_ms, sc.surge_start_ms, sc.surge_end_ms, sc.surge_factor)
    yield from _poisson(env, st.rng, seg, lambda: env.process(iso_request(env, st, delivery)))


def iso_request(env, st: _IsoState, delivery: bool):
    """One query or delivery: wait for a worker of its pool (at most ``patience_ms``), then
    hold it for an exponential service time."""
    sc = st.sc
    i = len(st.arrive)
    st.arrive.append(env.now)
    st.kind.append(int(delivery))
    st.outcome.append(0)
    name = "delivery" if delivery else "query"
    st.rec.count(f"{name}_offered", env.now)
    pool = st.pools[delivery] if sc.separated else st.pools[None]
    req = pool.request()
    yield req | env.timeout(sc.patience_ms)
    if not req.triggered:
        req.cancel()
        st.outcome[i] = 2
        st.rec.count(f"{name}_gave_up", env.now)
        return
    yield env.timeout(st.rng.exponential(sc.delivery_ms if delivery else sc.query_ms))
    pool.release(req)
    st.outcome[i] = 1
    st.rec.count(f"{name}_served", env.now)


def simulate_isolation(
    scenario: IsolationScenario = SEED_ISOLATION, seed: int = 0, *, max_events: int = DEFAULT_MAX_EVENTS
) -> Run:
    """Run the shared or separated clusters; ``windows``: query_/delivery_ offered, served,
    gave_up (per s) and ``delivery_success`` / ``query_success`` (share of the requests arriving
    in the window that were served)."""
    seed = _check_run_args(scenario, IsolationScenario, seed, max_events)
    sc = scenario
    env = simpy.Environment()
    names = [f"{k}_{m}" for k in ("query", "delivery") for m in ("offered", "served", "gave_up")]
    rec = Recorder(sc.horizon_ms, sc.window_ms, counters=names)
    if sc.separated:
        pools = {False: simpy.Resource(env, capacity=sc.query_workers),
                 True: simpy.Resource(env, capacity=sc.workers - sc.query_workers)}
    else:
        pools = {None: simpy.Resource(env, capacity=sc.workers)}
    st = _IsoState(env, sc, make_rng(seed), rec, pools)
    env.process(iso_users(env, st, False))
    env.process(iso_users(env, st, True))
    status = _bounded(env, sc, max_events)
    w = rec.arrays()
    arrive = np.asarray(st.arrive, float)
    kind = np.asarray(st.kind, np.int8)
    outcome = np.asarray(st.outcome, np.int8)
    n = len(w["t"])
    for k, name in ((0, "query"), (1, "delivery")):
        m = (kind == k) & (outcome != 0)
        w[f"{name}_success"] = _window_share(arrive[m], outcome[m] == 1, sc.window_ms, n)
    ledger = Ledger(arrived=len(arrive), served=int((outcome == 1).sum()),
                    timed_out=int((outcome == 2).sum()), rejected=0,
                    in_system=int((outcome == 0).sum()))
    done = outcome != 0
    surge = (arrive >= sc.surge_start_ms + 2000.0) & (arrive < sc.surge_end_ms) & done
    normal = (arrive < sc.surge_start_ms) & done
    summary = {
        "separated": sc.separated,
        "delivery_success_surge": _share(outcome == 1, surge & (kind == 1)),
        "query_success_surge": _share(outcome == 1, surge & (kind == 0)),
        "delivery_success_normal": _share(outcome == 1, normal & (kind == 1)),
        "query_success_normal": _share(outcome == 1, normal & (kind == 0)),
    }
    return Run(sc, seed, status, ledger, w, summary, {"arrive_ms": arrive, "kind": kind, "outcome": outcome})


def plot_isolation(runs: dict, ax=None):
    """Share of deliveries (solid) and queries (dotted) served over time (s), one colour per
    labelled run; the query surge shaded."""
    if ax is None:
        _, ax = new_figure(height=3.0)
    colors = [COLORS["timeouts"], COLORS["goodput"], COLORS["queue"], COLORS["latency"]]
    sc0 = next(iter(runs.values())).scenario
    for j, (label, run) in enumerate(runs.items()):
        w = run.windows
        t = w["t"] + run.scenario.window_ms / 2000.0
        ax.plot(t, w["delivery_success"], color=colors[j % 4], label=f"{label}: deliveries")
        ax.plot(t, w["query_success"], color=colors[j % 4], ls=":", lw=1.5, label=f"{label}: queries")
    shade(ax, [(sc0.surge_start_ms / 1000, sc0.surge_end_ms / 1000)], label=f"query surge ×{sc0.surge_factor:g}")
    decorate(ax, xlabel="time (s)", ylabel="share served", ylim=(0, 1.05), legend=False)
    _legend_right(ax)
    ax.set_xlim(0, sc0.horizon_ms / 1000)
    return ax


# =========================================================================== 7b · storage split
def storage_split(utilisation: float, stores: int, p_down: float) -> dict:
    """One store split into ``stores`` independently deployed stores of the same size (the seed's
    "从1个分离为3个"), the load spread evenly (an assumption). Returns per-store utilisation
    ``ρ / k``; mean response in units of the service time for one server with a queue (M/M/1,
    ``1 / (1 − ρ)``); the share of the data one store failure takes down (``1 / k``); with each
    store down on a given day with probability ``p`` independently: the chance that everything is
    down (``p^k``), that something is down (``1 − (1 − p)^k``) and the expected share of the data
    down, ``p`` whatever ``k``: splitting shrinks the blast radius, not the expected loss."""
    rho = check_number("utilisation", utilisation, low=0.0, high=1.0, high_open=True)
    k = check_int("stores", stores, low=1, high=1000)
    p = check_probability("p_down", p_down)
    return {
        "utilisation": rho / k,
        "response_in_service_times": 1.0 / (1.0 - rho / k),
        "blast_radius": 1.0 / k,
        "p_all_down": p**k,
        "p_any_down": 1.0 - (1.0 - p) ** k,
        "expected_share_down": p,
    }


def simulate_storage_days(stores: int, p_down: float, days: int = 100_000, seed: int = 0) -> dict:
    """Monte Carlo of :func:`storage_split`'s failure part: each day each store is down with
    probability ``p_down``, independently (physically isolated, "即使服务器硬件故障，也不会相互影响").
    Returns the measured shares of days with everything down, something down, and the mean share
    of the data down."""
    k = check_int("stores", stores, low=1, high=1000)
    p = check_probability("p_down", p_down)
    n = check_int("days", days, low=1, high=10_000_000)
    rng = make_rng(check_seed(seed))
    down = rng.random((n, k)) < p
    per_day = down.sum(axis=1)
    return {
        "p_all_down": float(np.mean(per_day == k)),
        "p_any_down": float(np.mean(per_day > 0)),
        "expected_share_down": float(per_day.mean() / k),
    }


# =========================================================================== 8 · business checks
@dataclass(frozen=True)
class GiftConfigScenario:
    """One day of an activity whose gift has a resource pool of ``pool_gifts`` while the operator
    configured a daily limit of ``daily_limit`` (the seed's 100 vs 200). Times in ms.

    Claims arrive as a Poisson stream. A claim is refused ("sold out today", a correct answer) once
    the day's delivered gifts reach the live limit; otherwise it takes a gift from the pool, and
    fails with an error when the pool is empty. The limit counts delivered gifts, so a failed
    claim does not move it. The monitor computes the success rate (errors against all answered
    claims) over each ``monitor_cycle_ms`` cycle and alarms at the end of the first cycle below
    ``alarm_below``; ``fix_ms`` later the operator sets the limit to the pool. With ``check``, a
    configuration check runs when the config is published: a limit above the pool is refused and
    the operator publishes the corrected limit before the activity goes live.
    """

    claims_per_s: float = 5.0
    pool_gifts: int = 100
    daily_limit: int = 200
    monitor_cycle_ms: float = 600_000.0
    alarm_below: float = 0.9
    fix_ms: float = 300_000.0
    check: bool = False
    horizon_ms: float = 3_600_000.0

    def __post_init__(self):
        check_number("claims_per_s", self.claims_per_s, low=0.0, low_open=True, high=MAX_RATE_PER_S)
        object.__setattr__(self, "pool_gifts", check_int("pool_gifts", self.pool_gifts, low=0, high=10_000_000))
        object.__setattr__(self, "daily_limit", check_int("daily_limit", self.daily_limit, low=0, high=10_000_000))
        check_number("monitor_cycle_ms", self.monitor_cycle_ms, low=1.0, high=MAX_HORIZON_MS)
        check_probability("alarm_below", self.alarm_below)
        check_number("fix_ms", self.fix_ms, low=0.0, high=MAX_HORIZON_MS)
        if not isinstance(self.check, bool):
            raise ValueError(f"check must be True or False, got {self.check!r}")
        check_number("horizon_ms", self.horizon_ms, low=0.0, low_open=True, high=MAX_HORIZON_MS)
        check_number("expected claims (claims_per_s × horizon_ms / 1000)",
                     self.claims_per_s * self.horizon_ms / 1000.0, high=2_000_000.0)


SEED_GIFT_CONFIG = GiftConfigScenario(
    claims_per_s=5.0,  # assumption: a modest promotion, 18 000 claims an hour
    pool_gifts=100,  # "原本只允许1天放量100个礼包的资源"
    daily_limit=200,  # "错误地配置为每天放量200个"
    monitor_cycle_ms=600_000.0,  # "每10分钟为一个周期"
    alarm_below=0.9,  # assumption: the seed does not say what success rate alarms
    fix_ms=300_000.0,  # assumption: 5 min from the alarm to a corrected config ("十多分钟" in all)
    check=False,
)


def check_gift_config(daily_limit: int, pool_gifts: int) -> list:
    """The configuration check's gift rule (one of the seed's "数十种业务的搭配检查规则"):
    a daily limit above the gift's resource pool is refused before the config goes live. Returns
    the list of violations (empty: the config may be published)."""
    lim = check_int("daily_limit", daily_limit, low=0)
    pool = check_int("pool_gifts", pool_gifts, low=0)
    if lim > pool:
        return [f"daily_limit {lim} exceeds the resource pool of {pool} gifts: claim {pool + 1} would fail"]
    return []


def config_errors_fluid(sc: GiftConfigScenario = SEED_GIFT_CONFIG) -> dict:
    """Fluid version of :func:`simulate_gift_config` (claims at exactly λ per second). The pool
    is empty at ``t_e = pool / λ``; the cycle ending at ``k × C`` alarms if its error share
    ``(kC − max(t_e, (k − 1)C)) / C`` exceeds ``1 − alarm_below``; the fix lands ``fix_ms`` after
    the alarm; errors are the claims between ``t_e`` and the fix, ``λ (t_fix − t_e)``. It applies
    the model's own rules without the randomness, so it checks the bookkeeping, not the premise."""
    lam = sc.claims_per_s / 1000.0
    if sc.check or sc.daily_limit <= sc.pool_gifts:
        return {"exhausted_ms": math.inf, "alarm_ms": math.inf, "fixed_ms": math.inf, "errors": 0.0}
    t_e = sc.pool_gifts / lam
    c = sc.monitor_cycle_ms
    k = max(1, math.ceil(t_e / c))
    alarm = math.inf
    while k * c <= sc.horizon_ms:
        start = max(t_e, (k - 1) * c)
        if (k * c - start) / c > 1.0 - sc.alarm_below:
            alarm = k * c
            break
        k += 1
    fixed = min(alarm + sc.fix_ms, sc.horizon_ms)
    errors = lam * max(0.0, fixed - t_e) if t_e < sc.horizon_ms else 0.0
    return {"exhausted_ms": t_e, "alarm_ms": alarm, "fixed_ms": fixed, "errors": errors}


@dataclass
class _GiftState:
    env: simpy.Environment
    sc: GiftConfigScenario
    rng: np.random.Generator
    pool: simpy.Container
    limit: int
    delivered: int = 0
    answers: list = field(default_factory=list)  # (t_ms, code) 1 gift, 2 refused by the limit, 3 error
    cycle_ok: int = 0
    cycle_err: int = 0
    alarm_ms: float = math.inf
    fixed_ms: float = math.inf


def gift_claims(env, st: _GiftState):
    """The users: a Poisson stream of claims, each handled by :func:`gift_claim`."""
    sc = st.sc
    yield from _poisson(env, st.rng, [(0.0, sc.horizon_ms, sc.claims_per_s)], lambda: gift_claim(st))


def gift_claim(st: _GiftState):
    """One claim: refused once the day's deliveries reach the live limit; otherwise take a gift
    from the resource pool, an error when the pool is empty ("资源池当天已经没有资源了")."""
    if st.delivered >= st.limit:
        code = 2
    elif st.pool.level >= 1:
        st.pool.get(1)
        st.delivered += 1
        code = 1
    else:
        code = 3
    st.answers.append((st.env.now, code))
    if code == 3:
        st.cycle_err += 1
    else:
        st.cycle_ok += 1


def gift_monitor(env, st: _GiftState):
    """The business alarm: every cycle, the success rate of the cycle's claims; below
    ``alarm_below`` it alarms once and starts :func:`gift_operator`."""
    sc = st.sc
    while True:
        yield env.timeout(sc.monitor_cycle_ms)
        n = st.cycle_ok + st.cycle_err
        rate = st.cycle_ok / n if n else 1.0
        st.cycle_ok = st.cycle_err = 0
        if rate < sc.alarm_below and math.isinf(st.alarm_ms):
            st.alarm_ms = env.now
            env.process(gift_operator(env, st))


def gift_operator(env, st: _GiftState):
    """The operator: ``fix_ms`` after the alarm, the limit is set to the pool."""
    yield env.timeout(st.sc.fix_ms)
    st.limit = st.sc.pool_gifts
    st.fixed_ms = env.now


def simulate_gift_config(
    scenario: GiftConfigScenario = SEED_GIFT_CONFIG, seed: int = 0, *, max_events: int = DEFAULT_MAX_EVENTS
) -> Run:
    """Run one day of the mis-configured gift. ``summary``: gifts, refused (by the limit),
    errors, first_error_claim (the claim number of the first error: pool + 1 without the check),
    alarm_ms, fixed_ms, published_limit and violations (of the configuration check)."""
    seed = _check_run_args(scenario, GiftConfigScenario, seed, max_events)
    sc = scenario
    violations = check_gift_config(sc.daily_limit, sc.pool_gifts)
    limit = sc.pool_gifts if (sc.check and violations) else sc.daily_limit
    env = simpy.Environment()
    st = _GiftState(env, sc, make_rng(seed), simpy.Container(env, init=sc.pool_gifts, capacity=max(sc.pool_gifts, 1)),
                    limit)
    env.process(gift_claims(env, st))
    env.process(gift_monitor(env, st))
    status = _bounded(env, sc, max_events)
    t = np.asarray([a[0] for a in st.answers], float)
    code = np.asarray([a[1] for a in st.answers], np.int8)
    err = np.flatnonzero(code == 3)
    ledger = Ledger(arrived=len(code), served=int((code == 1).sum()), timed_out=0,
                    rejected=int((code >= 2).sum()), in_system=0,
                    extra={"refused": int((code == 2).sum()), "errors": int((code == 3).sum())})
    summary = {
        "gifts": int((code == 1).sum()),
        "refused": int((code == 2).sum()),
        "errors": int((code == 3).sum()),
        "first_error_claim": int(err[0]) + 1 if len(err) else 0,
        "alarm_ms": st.alarm_ms,
        "fixed_ms": st.fixed_ms,
        "published_limit": limit,
        "violations": violations,
    }
    return Run(sc, seed, status, ledger, {"t": np.zeros(0)}, summary, {"t_ms": t, "code": code})


def unverified_launches(activities: int, gifts_per_activity: int, p_verify: float) -> float:
    """Expected activities launched with at least one gift nobody claimed for real, when the
    verification is an oral agreement ("口头约定") and each gift is verified with probability
    ``p`` independently: ``activities × (1 − p^gifts)``. A program gate leaves none."""
    a = check_int("activities", activities, low=0)
    g = check_int("gifts_per_activity", gifts_per_activity, low=1)
    p = check_probability("p_verify", p_verify)
    return a * (1.0 - p**g)


def simulate_verification(
    activities: int = 400, gifts_per_activity: int = 10, p_verify: float = 0.99, enforced: bool = False,
    seed: int = 0,
) -> dict:
    """One month of launches. The colleague claims each gift with the test QQ number with
    probability ``p_verify`` (the claim leaves a participation record). Oral agreement: every
    activity launches. Enforced ("通过程序去保证的"): the platform checks that the test QQ
    number has a record in every sub-activity and refuses the launch otherwise, sending the
    colleague back; the launch goes through once every gift has a record. Returns launched
    unverified activities, refused launch attempts and gifts verified in all."""
    a = check_int("activities", activities, low=0, high=1_000_000)
    g = check_int("gifts_per_activity", gifts_per_activity, low=1, high=10_000)
    p = check_number("p_verify", p_verify, low=0.0, low_open=True, high=1.0)
    if not isinstance(enforced, bool):
        raise ValueError(f"enforced must be True or False, got {enforced!r}")
    rng = make_rng(check_seed(seed))
    unverified = refused = 0
    for _ in range(a):
        records = rng.random(g) < p  # a record for each gift the colleague really claimed
        while enforced and not records.all():  # the gate: every sub-activity needs a record
            refused += 1
            records |= rng.random(g) < p
        unverified += int(not records.all())
    return {"unverified_launched": unverified, "refused_launches": refused}


# =========================================================================== verdicts over runs
# A verdict in the notebook ("ejection overloads the survivors", "both services fall") is a count
# over random seeds 0 … n − 1, never one run's outcome. Each helper below runs the scenarios of one
# section with the same seed, applies the section's verdicts (plain functions of the runs, named
# in VERDICTS) and returns how many runs each verdict holds in.
COUNT_SEEDS = 20


def count_runs(simulate, scenarios: dict, verdicts: dict, seeds: int = COUNT_SEEDS) -> dict:
    """Run every scenario in ``scenarios`` (name -> scenario) with ``simulate(sc, seed=k)`` for
    k = 0 … seeds − 1 and count, for each ``verdicts`` entry (name -> function of the dict of
    runs of one seed, returning a bool), the seeds in which it holds. Returns name -> count, and
    ``"runs"``: the number of seeds."""
    n = check_int("seeds", seeds, low=1, high=10_000)
    counts = dict.fromkeys(verdicts, 0)
    for k in range(n):
        runs = {name: simulate(sc, seed=k) for name, sc in scenarios.items()}
        for name, holds in verdicts.items():
            counts[name] += bool(holds(runs))
    counts["runs"] = n
    return counts


def near(count: int, runs: int) -> bool:
    """A count is *near* when more than a tenth of the runs went the other way (for 20 runs:
    3 … 17): the result sits close to its threshold and a plain yes/no would overstate it."""
    c = check_int("count", count, low=0)
    n = check_int("runs", runs, low=1)
    if c > n:
        raise ValueError(f"count must be at most runs={n}, got {c}")
    return 0.1 * n < c < 0.9 * n


def count_text(count: int, runs: int) -> str:
    """``"20/20 runs"``, or ``"11/20 runs (near)"`` when :func:`near`."""
    return f"{count}/{runs} runs{' (near)' if near(count, runs) else ''}"


def _recovered_half(lost: float, got: float, base: float) -> bool:
    """A fix recovers more than half of what ejection lost: ``got − lost > (base − lost) / 2``."""
    return got - lost > (base - lost) / 2


EJECTION_COUNT_HORIZON_MS = 18_000.0  # §3's overload counts: 7 s after the blip (the notebook says so)

EJECTION_VERDICTS = {
    # the light load: A ejected at the closed-form delay, no other machine ejected, A back
    # within one probe interval of its recovery, and the pool better off than without ejection
    "ejected on time": lambda r: abs(r["ejection"].summary["first_ejection_delay_ms"] - ejection_delay_ms(
        r["ejection"].scenario.bad_start_ms, r["ejection"].scenario.check_interval_ms,
        r["ejection"].scenario.threshold)) < 1.0,
    "only A ejected": lambda r: r["ejection"].summary["ejections"] == 1,
    "A back within a probe": lambda r: all(
        b * 1000 - r["ejection"].scenario.bad_end_ms <= r["ejection"].scenario.probe_interval_ms + 1.0
        for _, _, b in r["ejection"].log["ejections"]),
    "ejection helps": lambda r: r["ejection"].summary["success_bad"] > r["no ejection"].summary["success_bad"],
}

OVERLOAD_VERDICTS = {
    # ejection overloads the survivors: more than A ejected, and the pool serves less after the
    # blip than the same load without ejection
    "ejection overloads": lambda r: r["ejection"].summary["ejections"] > 1
    and r["ejection"].summary["success_after"] < r["no ejection"].summary["success_after"],
    "panic 50% enters panic": lambda r: r["panic 50%"].ledger.extra["panic_requests"] > 0,
    "panic 75% enters panic": lambda r: r["panic 75%"].ledger.extra["panic_requests"] > 0,
    # a panic threshold "holds" the group when it wins back more than half of what ejection lost
    "panic 50% holds": lambda r: _recovered_half(r["ejection"].summary["success_after"],
                                                 r["panic 50%"].summary["success_after"],
                                                 r["no ejection"].summary["success_after"]),
    "panic 75% holds": lambda r: _recovered_half(r["ejection"].summary["success_after"],
                                                 r["panic 75%"].summary["success_after"],
                                                 r["no ejection"].summary["success_after"]),
}


def ejection_counts(scenario: EjectionScenario = SEED_EJECTION, seeds: int = COUNT_SEEDS) -> dict:
    """§3 at light load (A dead): counts of :data:`EJECTION_VERDICTS` over ``seeds`` runs."""
    scs = {"no ejection": replace(scenario, ejection=False), "ejection": scenario}
    return count_runs(simulate_ejection, scs, EJECTION_VERDICTS, seeds)


def overload_counts(
    scenario: EjectionScenario = SEED_EJECTION_OVERLOAD, seeds: int = COUNT_SEEDS,
    horizon_ms: float = EJECTION_COUNT_HORIZON_MS, panic=(0.5, 0.75),
) -> dict:
    """§3 under overload (A's blip): counts of :data:`OVERLOAD_VERDICTS` over ``seeds`` runs of
    no ejection, ejection and ejection with panic thresholds 50% and 75%, each cut at
    ``horizon_ms`` (shorter than the figure's run, for speed)."""
    sc = replace(scenario, horizon_ms=horizon_ms)
    p50, p75 = panic
    scs = {"no ejection": replace(sc, ejection=False), "ejection": sc,
           "panic 50%": replace(sc, panic_threshold=p50), "panic 75%": replace(sc, panic_threshold=p75)}
    return count_runs(simulate_ejection, scs, OVERLOAD_VERDICTS, seeds)


DATACENTRE_VERDICTS = {
    "A and C answer 99%": lambda r: r["ejection"].summary["success_bad_late"] >= 0.99,
    "only B ejected": lambda r: sorted(k for k, _, _ in r["ejection"].log["ejections"]) == [
        k for k in range(r["ejection"].scenario.servers) if r["ejection"].scenario.bad(k, r["ejection"].scenario.bad_start_ms)],
}


def datacentre_counts(scenario: EjectionScenario = SEED_DATACENTRES, seeds: int = COUNT_SEEDS) -> dict:
    """§7 datacentres: counts of :data:`DATACENTRE_VERDICTS` (ejection only) over ``seeds`` runs."""
    return count_runs(simulate_ejection, {"ejection": scenario}, DATACENTRE_VERDICTS, seeds)


FAILOVER_VERDICTS = {
    "crash: answered ≥ 99%": lambda r: r["crash"].summary["success_down"] >= 0.99,
    # both fall: fewer than half answered once A's queue passed the timeout, both services busy
    "surge: both fall": lambda r: r["surge"].summary["success_surge_settled"] < 0.5
    and r["surge"].summary["util_a_surge"] > 0.9 and r["surge"].summary["util_b_surge"] > 0.9,
}


def failover_counts(
    crash: FailoverScenario = SEED_FAILOVER, surge: FailoverScenario = SEED_FAILOVER_SURGE,
    seeds: int = COUNT_SEEDS, tail_ms: float = 2000.0,
) -> dict:
    """§2: counts of :data:`FAILOVER_VERDICTS` over ``seeds`` runs of the crash and the surge,
    each cut ``tail_ms`` after its fault window ends (a request is over within two timeouts)."""
    scs = {"crash": replace(crash, horizon_ms=min(crash.horizon_ms, crash.down_end_ms + tail_ms)),
           "surge": replace(surge, horizon_ms=min(surge.horizon_ms, surge.surge_end_ms + tail_ms))}
    return count_runs(simulate_failover, scs, FAILOVER_VERDICTS, seeds)


ISOLATION_VERDICTS = {
    "separated: deliveries ≥ 99%": lambda r: r["separated"].summary["delivery_success_surge"] >= 0.99,
    "shared: deliveries < separated": lambda r: r["shared pool"].summary["delivery_success_surge"]
    < r["separated"].summary["delivery_success_surge"],
    "separated: queries < shared": lambda r: r["separated"].summary["query_success_surge"]
    < r["shared pool"].summary["query_success_surge"],
}


def isolation_counts(
    scenario: IsolationScenario = SEED_ISOLATION, seeds: int = COUNT_SEEDS, surge_ms: float = 4000.0
) -> dict:
    """§7 light/heavy: counts of :data:`ISOLATION_VERDICTS` over ``seeds`` runs of both designs.
    For speed each run's surge is cut to its first ``surge_ms`` (the summary leaves out the
    first 2 s, so 4 s leaves 2 s of surge measured) and the run ends one patience after it."""
    end = min(scenario.surge_end_ms, scenario.surge_start_ms + check_number("surge_ms", surge_ms, low=2500.0))
    sc = replace(scenario, surge_end_ms=end, horizon_ms=min(scenario.horizon_ms, end + scenario.patience_ms + 500.0))
    scs = {"shared pool": replace(sc, separated=False), "separated": replace(sc, separated=True)}
    return count_runs(simulate_isolation, scs, ISOLATION_VERDICTS, seeds)


def pool_designs(base: PoolScenario = SEED_POOL_INCIDENT) -> dict:
    """§4's four designs built from ``base``: one pool with its timeout, one pool with 500 ms,
    fast/slow pools (60 workers at 1 s, 40 at 5 s) and async I/O."""
    return {
        "one pool, 5 s": base,
        "one pool, 500 ms": replace(base, timeout_ms=500.0, slow_timeout_ms=500.0),
        "fast/slow pools, 1 s / 5 s": replace(base, timeout_ms=1000.0, slow_timeout_ms=5000.0, slow_workers=40),
        "async I/O, 5 s": replace(base, io="async"),
    }


def pool_conclusion_holds(patience_ms: float, base: PoolScenario = SEED_POOL_INCIDENT, seed: int = 0) -> bool:
    """Does §4's conclusion hold when users give up after ``patience_ms`` in the queue (one run
    per design, ``seed``)? It holds when, for the requests arriving while calls hang, the single
    5 s pool makes users wait longest, the 500 ms pool answers fewer than 60% of the slow
    requests and the fast/slow pools at least 90% of them."""
    p = check_number("patience_ms", patience_ms, low=0.0, low_open=True, allow_inf=True)
    d = pool_designs(replace(base, user_timeout_ms=p))
    s = {k: simulate_pool(d[k], seed=seed).summary for k in ("one pool, 5 s", "one pool, 500 ms", "fast/slow pools, 1 s / 5 s")}
    long = s["one pool, 5 s"]["mean_wait_hang_ms"]
    return bool(long > s["one pool, 500 ms"]["mean_wait_hang_ms"] and long > s["fast/slow pools, 1 s / 5 s"]["mean_wait_hang_ms"]
                and s["one pool, 500 ms"]["success_slow"] < 0.6 and s["fast/slow pools, 1 s / 5 s"]["success_slow"] >= 0.9)
