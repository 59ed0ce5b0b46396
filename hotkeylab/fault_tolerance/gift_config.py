"""09 · §8 Business-level checks (seed 003: "礼包发放到101个的时候，就报错了"): a gift's daily limit
configured above its resource pool, a configuration check that refuses it, and a verification
enforced by the platform instead of an oral agreement.

Read top to bottom: :class:`GiftConfigScenario` and its preset, its fluid closed form, then the
actors - :func:`gift_claims`, :func:`gift_claim` (the limit, then the pool), :func:`gift_monitor`
(the 10-minute success-rate alarm) and :func:`gift_operator` (fixes the limit) - then
:func:`simulate_gift_config`; last :func:`simulate_verification`.

A claim's answer is a :class:`Claim`: ``GIFT`` is ``Outcome.SERVED``; ``REFUSED`` (the limit is
reached, a correct answer) and ``ERROR`` (the pool is empty) are both ``Outcome.REJECTED``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np
import simpy

from ..sim import Outcome, check_seed, make_rng
from ..validate import check_int, check_number, param
from . import common
from .closed_form import check_gift_config
from .results import GiftConfigSummary


class Claim(IntEnum):
    """What one claim gets."""

    GIFT = 1  # a gift from the pool
    REFUSED = 2  # the day's limit is reached ("sold out today")
    ERROR = 3  # the pool is empty: "资源池当天已经没有资源了"


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

    claims_per_s: float = param(5.0, low=0.0, low_open=True, high=common.MAX_RATE_PER_S)
    pool_gifts: int = param(100, kind="int", low=0, high=10_000_000)
    daily_limit: int = param(200, kind="int", low=0, high=10_000_000)
    monitor_cycle_ms: float = param(600_000.0, low=1.0, high=common.MAX_HORIZON_MS)
    alarm_below: float = param(0.9, kind="probability")
    fix_ms: float = param(300_000.0, low=0.0, high=common.MAX_HORIZON_MS)
    check: bool = param(False, kind="bool")
    horizon_ms: float = common.horizon_param(3_600_000.0)
    max_events: int = common.events_param()  # the run's event cap (status.truncated if it stops the run)

    def __post_init__(self):
        common.check_scenario_fields(self)
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


def config_errors_fluid(sc: GiftConfigScenario = SEED_GIFT_CONFIG) -> dict:
    """Fluid version of :func:`simulate_gift_config` (claims at exactly λ per second). The pool
    is empty at ``t_e = pool / λ``; the cycle ending at ``k × C`` alarms if its error share
    ``(kC − max(t_e, (k − 1)C)) / C`` exceeds ``1 − alarm_below``; the fix lands ``fix_ms`` after
    the alarm; errors are the claims between ``t_e`` and the fix, ``λ (t_fix − t_e)``. It applies
    the model's own rules without the randomness, so it checks the bookkeeping, not the premise."""
    common.check_scenario("sc", sc, GiftConfigScenario)
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
    yield from common.poisson(env, st.rng, [(0.0, sc.horizon_ms, sc.claims_per_s)], lambda: gift_claim(st))


def gift_claim(st: _GiftState):
    """One claim: refused once the day's deliveries reach the live limit; otherwise take a gift
    from the resource pool, an error when the pool is empty ("资源池当天已经没有资源了")."""
    if st.delivered >= st.limit:
        code = Claim.REFUSED
    elif st.pool.level >= 1:
        st.pool.get(1)
        st.delivered += 1
        code = Claim.GIFT
    else:
        code = Claim.ERROR
    st.answers.append((st.env.now, code))
    if code == Claim.ERROR:
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
    scenario: GiftConfigScenario = SEED_GIFT_CONFIG, seed: int = 0
) -> common.Run:
    """Run one day of the mis-configured gift. ``summary``: gifts, refused (by the limit),
    errors, first_error_claim (the claim number of the first error: pool + 1 without the check),
    alarm_ms, fixed_ms, published_limit and violations (of the configuration check)."""
    seed = common.check_run_args(scenario, GiftConfigScenario, seed)
    sc = scenario
    violations = check_gift_config(sc.daily_limit, sc.pool_gifts)
    limit = sc.pool_gifts if (sc.check and violations) else sc.daily_limit
    env = simpy.Environment()
    st = _GiftState(env, sc, make_rng(seed), simpy.Container(env, init=sc.pool_gifts, capacity=max(sc.pool_gifts, 1)),
                    limit)
    env.process(gift_claims(env, st))
    env.process(gift_monitor(env, st))
    status = common.bounded(env, sc)
    t = np.asarray([a[0] for a in st.answers], float)
    code = np.asarray([a[1] for a in st.answers], np.int8)
    err = np.flatnonzero(code == Claim.ERROR)
    _, books = common.ledger(np.where(code == Claim.GIFT, Outcome.SERVED, Outcome.REJECTED),
                      refused=int((code == Claim.REFUSED).sum()), errors=int((code == Claim.ERROR).sum()))
    summary = {
        "gifts": int((code == Claim.GIFT).sum()),
        "refused": int((code == Claim.REFUSED).sum()),
        "errors": int((code == Claim.ERROR).sum()),
        "first_error_claim": int(err[0]) + 1 if len(err) else 0,
        "alarm_ms": st.alarm_ms,
        "fixed_ms": st.fixed_ms,
        "published_limit": limit,
        "violations": violations,
    }
    return common.Run(sc, seed, status, books, {"t": np.zeros(0)}, GiftConfigSummary(**summary), {"t_ms": t, "code": code})


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
