"""09 · §5 Timeout-success and duplicate delivery (seed 003: "发货服务却在第8秒执行发货成功"): a
gift delivered after AMS's timeout, and a user who clicks again.

Read top to bottom: :class:`DeliveryScenario` and its presets, then the actors - :func:`gift_users`,
:func:`gift_user` (clicks again on "领取失败"), :func:`ams_claim` (AMS under one protection),
:func:`delivery_call` (connect, write, read with a timeout), :func:`delivery_service` (delivers,
perhaps after the caller gave up) and :func:`async_deliverer` (the asynchronous queue) - then
:func:`simulate_delivery`. The exact closed form is :func:`~.closed_form.gift_distribution`.

The ledger counts clicks (:class:`hotkeylab.sim.Outcome`): ``SERVED`` (shown success),
``TIMED_OUT`` (shown "领取失败"), ``REJECTED`` (refused: already claimed, or the read-timeout cap),
``IN_SYSTEM`` (no answer yet).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import simpy

from ..sim import Outcome, Recorder, make_rng
from ..validate import check_choice, check_int, check_number, param
from . import common
from .closed_form import MAX_CLICKS, gift_distribution
from .results import DeliverySummary

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
#: what AMS shows the user for one click, as the click's ledger outcome
SHOWN = {"success": Outcome.SERVED, "failed": Outcome.TIMED_OUT, "refused": Outcome.REJECTED}


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

    users: int = param(1000, kind="int", low=0, high=1_000_000)
    users_per_s: float = param(20.0, low=0.0, low_open=True, high=common.MAX_RATE_PER_S)
    timeout_ms: float = param(6000.0, low=0.0, low_open=True, high=1e7)
    slow_ms: float = param(8000.0, low=0.0, low_open=True, high=1e7)  # > timeout_ms
    ok_ms: float = param(50.0, low=0.0, low_open=True, high=1e7)  # < timeout_ms
    connect_timeout_ms: float = param(1000.0, low=0.0, low_open=True, high=1e7)
    p_connect_fail: float = param(0.1, kind="probability")
    p_read_lost: float = param(0.1, kind="probability")
    p_read_delivered: float = param(0.3, kind="probability")  # the three sum to at most 1
    clicks: int = param(3, kind="int", low=1, high=MAX_CLICKS)
    think_ms: float = param(3000.0, low=0.0, low_open=True, high=1e7)
    protection: str = param("none", kind="choice", choices=PROTECTIONS)
    read_cap: int = param(2, kind="int", low=1, high=MAX_CLICKS)
    async_timeout_ms: float = param(60_000.0, low=0.0, low_open=True, high=1e8)
    async_retry_ms: float = param(10_000.0, low=0.0, low_open=True, high=1e8)
    async_max_attempts: int = param(20, kind="int", low=1, high=10_000)
    script: tuple | None = None  # outcomes of the first calls, each one of OUTCOMES (None: drawn)
    horizon_ms: float = common.horizon_param(1_800_000.0)
    window_ms: float = common.window_param(10_000.0)
    max_events: int = common.events_param()  # the run's event cap (status.truncated if it stops the run)

    def __post_init__(self):
        common.check_scenario_fields(self)
        if self.slow_ms <= self.timeout_ms:
            raise ValueError(
                f"slow_ms must be > timeout_ms ({self.timeout_ms:g}): a timeout-success completes "
                f"after the timeout, got {self.slow_ms!r}"
            )
        check_number("ok_ms", self.ok_ms, low=0.0, low_open=True, high=self.timeout_ms, high_open=True)
        total = self.p_connect_fail + self.p_read_lost + self.p_read_delivered
        if total > 1.0 + 1e-12:
            raise ValueError(f"p_connect_fail + p_read_lost + p_read_delivered must be <= 1, got {total:g}")
        if self.script is not None:
            if not isinstance(self.script, tuple) or not self.script:
                raise ValueError(f"script must be None or a non-empty tuple of outcomes, got {self.script!r}")
            for j, o in enumerate(self.script):
                check_choice(f"script[{j}]", o, OUTCOMES)

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
    common.check_scenario("scenario", sc, DeliveryScenario)
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
class _DeliveryState(common.RunState):  # sc: a DeliveryScenario
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
        if self.sc.script is not None and j < len(self.sc.script):
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
    att = common.Attempt(env)
    delay = sc.ok_ms if outcome == "ok" else sc.slow_ms
    env.process(delivery_service(env, st, u, order, outcome, delay, att))
    yield att.done | env.timeout(timeout_ms)
    if att.done.triggered:
        return att.done.value
    att.abandoned = True
    return "read_timeout"


def delivery_service(env, st: _DeliveryState, u: int, order, outcome: str, delay: float, att: common.Attempt):
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
    scenario: DeliveryScenario = SEED_DELIVERY, seed: int = 0
) -> common.Run:
    """Run the delivery model. The ledger counts clicks: served (shown success), timed_out
    (shown "领取失败"), rejected (refused), in_system (no answer yet). ``summary`` has the
    gifts, duplicates and users without a gift, per ``users``; ``log["events"]`` the
    ``(t_ms, actor, what)`` list for :func:`plot_sequence`."""
    seed = common.check_run_args(scenario, DeliveryScenario, seed)
    sc = scenario
    env = simpy.Environment()
    rec = Recorder(sc.horizon_ms, sc.window_ms,
                   counters=("offered", "goodput", "timeouts", "rejected", "gifts", "duplicates"))
    st = _DeliveryState(env, sc, make_rng(seed), rec)
    env.process(gift_users(env, st))
    status = common.bounded(env, sc)
    w = rec.arrays()
    gifts = np.asarray(st.gifts, int)
    outcome, books = common.ledger([SHOWN.get(c[2], Outcome.IN_SYSTEM) for c in st.clicks], gifts=int(gifts.sum()),
                            duplicates=int(np.maximum(gifts - 1, 0).sum()), calls=st.calls_made,
                            async_pending=st.async_pending)
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
    log = {"events": sorted(st.log, key=lambda e: e[0]), "gifts": gifts, "outcome": outcome}
    return common.Run(sc, seed, status, books, w, DeliverySummary(**summary), log)
