"""The metastable retry storm model (seed 000): contract, calibration, engines, closed forms."""

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hotkeylab import capacity
from hotkeylab.metastable import (
    DEGRADED,
    NORMAL,
    SEED_INCIDENT,
    SEED_RETRY,
    AdaptiveThrottle,
    CoDel,
    GrpcThrottle,
    PercentBudget,
    RetryPolicy,
    Scenario,
    Window,
    closed_forms,
    drain_time_s,
    simulate,
)

# A compressed timeline for the slower tests: peak from 5 s, second owner 10–30 s, 60 s in all.
SHORT = replace(
    SEED_INCIDENT,
    horizon_ms=60_000.0,
    peak=Window(5_000.0, math.inf, 1.2),
    second_owner=Window(10_000.0, 30_000.0),
)


@pytest.fixture(scope="module")
def seed_run():
    return simulate(SEED_INCIDENT, engine="fast", seed=0)


# ----------------------------------------------------------------------------- the contract
def test_contract_windows_and_ledger(seed_run):
    w = seed_run.windows
    for key in ("t", "offered", "goodput", "timeouts", "retries", "queue"):
        assert key in w
    assert len({len(v) for v in w.values()}) == 1
    assert len(w["t"]) == SEED_INCIDENT.horizon_ms / SEED_INCIDENT.window_ms
    seed_run.ledger.check()
    seed_run.check()
    assert isinstance(seed_run.recovered, bool)


def test_seed_incident_stays_stuck_after_isolation(seed_run):
    """Isolation at 90 s removes the trigger, yet goodput stays ~0 while the server is busy."""
    w = seed_run.windows
    last = w["t"] >= w["t"][-1] - 60
    assert not seed_run.recovered
    assert w["goodput"][last].mean() < 0.02 * w["offered"][last].mean()
    assert w["busy"][last].mean() > 0.99  # the hot-key thread is busy all the time …
    assert w["wasted"][last].sum() > 0.98 * w["processed"][last].sum()  # … with stale work
    assert w["retries"][last].mean() > 0.9 * w["offered"][last].mean()  # every request retried
    assert w["queue"][last].mean() > capacity.critical_queue_length(200, 16)


def test_trigger_builds_a_queue_past_m_over_n(seed_run):
    w = seed_run.windows
    so = SEED_INCIDENT.second_owner
    during = (w["t"] >= so.start_ms / 1000) & (w["t"] < so.end_ms / 1000)
    assert w["queue"][during].max() > capacity.critical_queue_length(
        SEED_INCIDENT.timeout_ms, SEED_INCIDENT.batch_ms
    )


@pytest.mark.parametrize(
    "change",
    [
        {"retry": RetryPolicy(max_attempts=1)},
        {"queue_limit": 6},
        {"degrade": Window(120_000.0, 210_000.0, 0.0)},
        {"restart_at_ms": 90_000.0},
    ],
    ids=["no-retries", "queue-limit-6", "degrade", "restart"],
)
def test_the_seeds_fixes_recover(change):
    run = simulate(replace(SEED_INCIDENT, **change), seed=0)
    run.check()
    assert run.recovered


def test_degrading_recovers_and_restoring_traffic_stays_healthy():
    run = simulate(DEGRADED, seed=0)
    w = run.windows
    assert run.recovered
    after = w["t"] >= DEGRADED.degrade.end_ms / 1000 + 5
    assert w["goodput"][after].sum() >= 0.99 * w["offered"][after].sum()
    assert w["timeouts"][after].sum() == 0


def test_normal_traffic_is_healthy_in_19_of_20_seeds():
    healthy = 0
    for seed in range(20):
        run = simulate(NORMAL, seed=seed)
        w = run.windows
        healthy += run.recovered and w["timeouts"].sum() == 0
    assert healthy >= 19


def test_queue_limit_at_the_safe_limit_never_times_out():
    k = capacity.safe_queue_limit(SEED_INCIDENT.timeout_ms, SEED_INCIDENT.cross_batch_ms, 1.0)
    run = simulate(replace(SEED_INCIDENT, queue_limit=k), seed=0)
    assert run.recovered
    assert run.windows["timeouts"].sum() == 0
    assert run.windows["queue"].max() <= k


def test_restart_fails_when_the_retry_wave_alone_exceeds_capacity():
    """At higher load with longer patience the in-flight retries refill the queue at once."""
    sc = replace(SHORT, horizon_ms=120_000.0, restart_at_ms=30_000.0)
    assert simulate(sc, seed=0).recovered
    hot = replace(sc, user_rate_per_s=900.0, retry=replace(SEED_RETRY, patience_ms=1000.0))
    assert not simulate(hot, seed=0).recovered


# ----------------------------------------------------------------------------- engines
ENGINE_CASES = {
    "seed": SHORT,
    "degrade": replace(SHORT, degrade=Window(35_000.0, 45_000.0, 0.0)),
    "restart": replace(SHORT, restart_at_ms=31_000.0),
    "queue-limit": replace(SHORT, queue_limit=6),
    "codel-lifo": replace(SHORT, codel=CoDel(), discipline="adaptive_lifo"),
    "deadline-drop": replace(SHORT, deadline_drop=True),
    "grpc-throttle": replace(SHORT, retry=replace(SEED_RETRY, budget=GrpcThrottle())),
    "percent-budget": replace(SHORT, retry=replace(SEED_RETRY, budget=PercentBudget())),
    "client-throttle": replace(SHORT, client_throttle=AdaptiveThrottle(window_ms=10_000.0)),
    "backoff-decorrelated": replace(
        SHORT,
        retry=RetryPolicy(max_attempts=4, base_ms=10, multiplier=2, cap_ms=400, jitter="decorrelated", patience_ms=2_000),
    ),
    "backoff-equal": replace(
        SHORT, retry=RetryPolicy(max_attempts=3, base_ms=20, multiplier=2, cap_ms=200, jitter="equal")
    ),
    "slow-db-suppress": replace(
        SHORT, second_owner=None, slow_db=Window(10_000.0, 20_000.0, 2.0), suppress_retries=Window(30_000.0, 35_000.0)
    ),
}


@pytest.mark.parametrize("name", sorted(ENGINE_CASES))
def test_engines_agree_exactly(name):
    sc = replace(ENGINE_CASES[name], horizon_ms=45_000.0)
    fast = simulate(sc, engine="fast", seed=5)
    ref = simulate(sc, engine="simpy", seed=5)
    fast.check()
    ref.check()
    for key in fast.windows:
        np.testing.assert_array_equal(fast.windows[key], ref.windows[key], err_msg=key)
    assert fast.ledger.as_dict() == ref.ledger.as_dict()
    assert fast.attempt_ledger.as_dict() == ref.attempt_ledger.as_dict()
    assert fast.server == ref.server
    assert fast.recovered == ref.recovered


# The chunked path of the fast engine (engine_chunked) runs FIFO scenarios a batch at a time;
# these cases exercise every rule it reimplements: each jitter, attempt caps, patience,
# suppression, slow database, degrading, M = inf, no batching wait, one-row batches, and the
# queue limit (refusals, including retries that all leave at one instant and keep their order).
SHORT30 = replace(SHORT, horizon_ms=30_000.0, queue_limit=None)  # the chunked path's plain FIFO cases
CHUNKED_CASES = {
    "seed": SHORT30,
    "jitter-none-backoff": replace(
        SHORT30, retry=RetryPolicy(max_attempts=5, base_ms=10, multiplier=2, cap_ms=300, jitter="none")
    ),
    "jitter-full-capped": replace(
        SHORT30, retry=RetryPolicy(max_attempts=3, base_ms=40.0, multiplier=1.5, cap_ms=100.0, jitter="full")
    ),
    "jitter-equal-patience": replace(
        SHORT30,
        retry=RetryPolicy(base_ms=20, multiplier=2, cap_ms=200, jitter="equal", patience_ms=1_500.0),
    ),
    "jitter-decorrelated-many": replace(
        SHORT30,
        retry=RetryPolicy(base_ms=5.0, cap_ms=80.0, jitter="decorrelated", patience_ms=3_000.0, min_delay_ms=0.5),
    ),
    "infinite-m": replace(SHORT30, timeout_ms=math.inf),
    "slow-db-suppress-degrade": replace(
        SHORT30,
        second_owner=None,
        slow_db=Window(8_000.0, 16_000.0, 2.5),
        suppress_retries=Window(18_000.0, 20_000.0),
        degrade=Window(21_000.0, 24_000.0, 0.3),
    ),
    "no-batch-wait": replace(SHORT30, batch_max_wait_ms=0.0, batch_max_rows=5, user_rate_per_s=300.0),
    "one-row-batches": replace(SHORT30, batch_max_rows=1, batch_ms=1.5, cross_batch_ms=2.0),
    "queue-limit-6": replace(SHORT30, queue_limit=6),
    "queue-limit-0-same-instant-retries": replace(
        SHORT30, queue_limit=0, retry=RetryPolicy(max_attempts=4, base_ms=5.0, cap_ms=5.0, jitter="none")
    ),
    "queue-limit-12-stuck-at-the-bound": replace(  # refusals every few ms, retried within the chunk
        SHORT30, queue_limit=12, retry=RetryPolicy(base_ms=20.0, cap_ms=60.0, jitter="equal", patience_ms=800.0)
    ),
    "queue-limit-9-decorrelated": replace(
        SHORT30, queue_limit=9, retry=RetryPolicy(max_attempts=5, base_ms=2.0, cap_ms=60.0, jitter="decorrelated")
    ),
}


def _assert_same_run(a, b, *, status: bool = True):
    """Bit-for-bit: windows, both ledgers, the server's books, summary and (between the fast paths,
    which count the same events; SimPy counts its own) the run status."""
    assert a.windows.keys() == b.windows.keys()
    for key in b.windows:
        np.testing.assert_array_equal(a.windows[key], b.windows[key], err_msg=key)
    assert a.ledger.as_dict() == b.ledger.as_dict()
    assert a.attempt_ledger.as_dict() == b.attempt_ledger.as_dict()
    assert a.server == b.server
    if status:
        assert a.status == b.status
    assert a.summary == b.summary


@pytest.mark.parametrize("name", sorted(CHUNKED_CASES))
def test_chunked_path_agrees_with_simpy_exactly(name):
    from hotkeylab.metastable.engine_chunked import run_chunked

    sc = CHUNKED_CASES[name]
    fast = run_chunked(sc, seed=11)
    assert fast is not None  # the chunked path ran (not the event loop)
    ref = simulate(sc, engine="simpy", seed=11)
    ref.check()
    fast.check()
    _assert_same_run(fast, ref, status=False)
    assert fast.recovered == ref.recovered
    assert fast.recovery_time_s == ref.recovery_time_s



chunked_params = st.fixed_dictionaries(
    {
        "user_rate_per_s": st.floats(0.0, 1500.0),
        "batch_max_rows": st.integers(1, 40),
        "batch_max_wait_ms": st.one_of(st.just(0.0), st.floats(0.0, 40.0)),
        "batch_ms": st.floats(1.0, 40.0),
        "cross_batch_ms": st.floats(1.0, 60.0),
        "timeout_ms": st.one_of(st.floats(50.0, 600.0), st.just(math.inf)),
        "window_ms": st.sampled_from([1_000.0, 500.0, 333.3, 70.0]),
        "slow_db": st.one_of(st.none(), st.builds(Window, st.just(1_500.0), st.floats(1_500.0, 4_000.0), st.floats(0.5, 3.0))),
        "degrade": st.one_of(st.none(), st.builds(Window, st.just(3_000.0), st.floats(3_000.0, 6_000.0), st.floats(0.0, 1.0))),
        "suppress_retries": st.one_of(st.none(), st.builds(Window, st.just(2_500.0), st.floats(2_500.0, 4_000.0))),
        "queue_limit": st.one_of(st.none(), st.integers(0, 30)),
        "retry": st.builds(
            RetryPolicy,
            max_attempts=st.one_of(st.integers(1, 6), st.just(math.inf)),
            base_ms=st.floats(0.0, 100.0),
            multiplier=st.one_of(st.just(1.0), st.floats(1.0, 3.0)),
            cap_ms=st.floats(0.0, 400.0),
            jitter=st.sampled_from(["none", "full", "equal", "decorrelated"]),
            min_delay_ms=st.sampled_from([1.0, 0.05]),
            patience_ms=st.one_of(st.floats(0.0, 2_000.0), st.just(math.inf)),
        ),
    }
)


@settings(max_examples=40, deadline=None)
@given(params=chunked_params, seed=st.integers(0, 2**32 - 1), cap=st.sampled_from([20_000, 200_000]))
def test_chunked_path_equals_the_event_loop_on_random_scenarios(params, seed, cap):
    """Where the chunked path runs it gives the event loop's run bit for bit; where it declines
    (a tie at one instant, the event cap, refusals on every batch) the fast engine runs the loop."""
    from hotkeylab.metastable.engine_chunked import eligible, run_chunked
    from hotkeylab.metastable.engine_fast import run_loop

    sc = replace(
        SEED_INCIDENT,
        **params,
        horizon_ms=6_000.0,
        warmup_ms=0.0,
        peak=Window(1_000.0, 4_000.0, 1.5),
        second_owner=Window(2_000.0, 5_000.0),
        max_events=cap,
    )
    assert eligible(sc) == (sc.timeout_ms - sc.batch_max_wait_ms >= 10.0)
    ref = run_loop(sc, seed)
    chunked = run_chunked(sc, seed)
    if chunked is not None:
        _assert_same_run(chunked, ref)
    _assert_same_run(simulate(sc, engine="fast", seed=seed), ref)


@pytest.mark.parametrize(
    "change",
    [
        {"codel": CoDel()},
        {"discipline": "adaptive_lifo"},
        {"client_throttle": AdaptiveThrottle()},
        {"retry": replace(SEED_RETRY, budget=GrpcThrottle())},
        {"timeout_ms": 25.0},  # M − T below the shortest chunk
        {"max_events": 50_000},  # the storm reaches the event cap
    ],
    ids=lambda c: "-".join(c),
)
def test_chunked_path_declines_what_it_does_not_model(change):
    """Outside its rules and at the event cap the chunked path declines and the loop runs."""
    from hotkeylab.metastable.engine_chunked import run_chunked
    from hotkeylab.metastable.engine_fast import run_loop

    sc = replace(SHORT30, **change)
    assert run_chunked(sc, seed=2) is None
    _assert_same_run(simulate(sc, seed=2), run_loop(sc, seed=2))


def test_another_seed_gives_other_windows():
    # same seed, same windows and ledger: tests/test_contract.py; here, another seed differs
    a, c = (simulate(SHORT, seed=s) for s in (3, 4))
    assert not np.array_equal(a.windows["offered"], c.windows["offered"])


# ----------------------------------------------------------------------------- closed forms
def test_batch_demand_matches_the_batcher_closed_form():
    run = simulate(replace(NORMAL, peak=None, horizon_ms=200_000.0), seed=2)
    measured = run.windows["batches"][5:].mean()
    assert measured == pytest.approx(capacity.batcher_batch_rate(600.0), rel=0.01)


def test_two_owners_commit_at_the_alternating_rate(seed_run):
    w = seed_run.windows
    end_s = SEED_INCIDENT.second_owner.end_ms / 1000
    busy_two = (w["t"] >= end_s - 15) & (w["t"] < end_s - 1)  # the queue is never empty by then
    assert w["busy"][busy_two].min() == 1.0
    rate = w["batches"][busy_two].mean()
    assert rate == pytest.approx(capacity.alternating_owners_tps([16, 27]), rel=0.02)
    after = w["t"] >= end_s + 10
    assert w["batches"][after].mean() == pytest.approx(capacity.tps_ceiling(SEED_INCIDENT.batch_ms), rel=0.01)


def test_stuck_queue_grows_at_the_predicted_rate():
    """Queue growth = (user + retry batches) − consumption; stuck, every request is sent twice.
    (Without the seed's bound, which would stop the growth at 250 batches.)"""
    cf = closed_forms(SEED_INCIDENT)
    assert cf["attempts_per_request_stuck"] == 2
    w = simulate(replace(SEED_INCIDENT, queue_limit=None), seed=0).windows
    late = w["t"] >= 150
    attempts_per_user = w["attempts"][late].sum() / w["offered"][late].sum()
    assert attempts_per_user == pytest.approx(2.0, rel=0.02)
    slope = np.polyfit(w["t"][late], w["queue"][late], 1)[0]
    assert slope == pytest.approx(cf["growth_stuck"], rel=0.1)


def test_timeouts_start_between_the_effective_and_the_critical_queue(seed_run):
    """Below (M − T − N)/N batches no one times out; above M/N (plus the batcher) everyone does."""
    cf = closed_forms(SEED_INCIDENT)
    w = seed_run.windows
    low = w["queue"] < cf["effective_queue_one_owner"] - 3
    high = w["queue"] > cf["critical_queue"] + 3
    assert low.any() and high.any()
    assert w["timeouts"][low & (w["t"] > 5)].sum() <= 0.01 * w["attempts"][low].sum()
    assert w["goodput"][high].sum() <= 0.02 * w["attempts"][high].sum()


@pytest.mark.parametrize("rate", [300.0, 500.0, 600.0, 720.0])
def test_stuck_queue_follows_the_growth_rate_and_drain_time(rate):
    """After a big trigger every request times out and is sent twice. The queue then moves at
    growth = batcher(2λ) − μ: it drains in Q / (μ − demand) if growth < 0 (the bistable band's
    lower side), and the storm sustains itself if growth > 0."""
    sc = replace(
        SHORT,
        user_rate_per_s=rate,
        peak=None,
        queue_limit=None,
        horizon_ms=120_000.0,
        second_owner=None,
        slow_db=Window(10_000.0, 25_000.0, 3.0),
    )
    cf = closed_forms(sc)
    assert cf["demand_normal"] < cf["capacity_one_owner"]  # healthy without a trigger
    run = simulate(sc, seed=1)
    run.check()
    w = run.windows
    stuck = (w["t"] >= 30) & (w["queue"] > 20)
    slope = np.polyfit(w["t"][stuck], w["queue"][stuck], 1)[0]
    assert slope == pytest.approx(cf["growth_stuck"], abs=0.6)
    end_s = sc.slow_db.end_ms / 1000
    q_end = w["queue"][w["t"] == end_s - 1][0]  # the backlog in the trigger's last second
    drain = drain_time_s(sc, q_end)
    if cf["storm_sustains"]:
        assert drain == math.inf and not run.recovered
    elif drain < 80:  # fits in the horizon: recovered about when the backlog is gone
        assert run.recovered
        assert run.recovery_time_s == pytest.approx(drain, abs=2 * 5.0)
    else:
        assert not run.recovered  # still draining at the horizon


def test_without_retries_every_trigger_is_forgotten():
    for factor, dur in [(2.0, 10_000.0), (3.0, 20_000.0), (1.5, 30_000.0)]:
        sc = replace(
            SHORT,
            horizon_ms=120_000.0,
            second_owner=None,
            slow_db=Window(10_000.0, 10_000.0 + dur, factor),
            retry=RetryPolicy(max_attempts=1),
        )
        assert simulate(sc, seed=0).recovered


def test_infinite_timeout_means_no_timeouts():
    run = simulate(replace(SHORT, timeout_ms=math.inf), seed=0)
    run.check()
    assert run.windows["timeouts"].sum() == 0
    assert run.windows["retries"].sum() == 0


# ----------------------------------------------------------------------------- bounded, balanced
def test_explosive_retries_end_at_the_event_cap():
    """Unlimited attempts and patience: attempts grow without bound; the cap ends the run."""
    sc = replace(
        SHORT,
        retry=RetryPolicy(max_attempts=math.inf, base_ms=0.0, cap_ms=0.0, jitter="none", min_delay_ms=0.001),
        max_events=200_000,
        queue_limit=0,
    )
    for engine in ("fast", "simpy"):
        run = simulate(replace(sc, horizon_ms=20_000.0), engine=engine, seed=0)
        assert run.truncated
        assert not run.recovered
        run.check()


scenario_params = st.fixed_dictionaries(
    {
        "user_rate_per_s": st.floats(0.0, 1500.0),
        "batch_max_rows": st.integers(1, 40),
        "batch_max_wait_ms": st.floats(0.0, 50.0),
        "batch_ms": st.floats(1.0, 40.0),
        "timeout_ms": st.one_of(st.floats(5.0, 500.0), st.just(math.inf)),
        "queue_limit": st.one_of(st.none(), st.integers(0, 30)),
        "deadline_drop": st.booleans(),
        "discipline": st.sampled_from(["fifo", "adaptive_lifo"]),
        "codel": st.one_of(st.none(), st.just(CoDel())),
        "client_throttle": st.one_of(st.none(), st.just(AdaptiveThrottle(window_ms=2_000.0))),
        "restart_at_ms": st.one_of(st.none(), st.floats(0.0, 4_000.0)),
        "retry": st.builds(
            RetryPolicy,
            max_attempts=st.one_of(st.integers(1, 6), st.just(math.inf)),
            base_ms=st.floats(0.0, 100.0),
            multiplier=st.floats(1.0, 3.0),
            cap_ms=st.floats(0.0, 500.0),
            jitter=st.sampled_from(["none", "full", "equal", "decorrelated"]),
            patience_ms=st.one_of(st.floats(0.0, 2_000.0), st.just(math.inf)),
            budget=st.one_of(st.none(), st.just(GrpcThrottle()), st.just(PercentBudget())),
        ),
    }
)


@pytest.mark.parametrize("engine", ["fast", "simpy"])
@settings(max_examples=25, deadline=None)
@given(params=scenario_params, seed=st.integers(0, 2**32 - 1), cap=st.sampled_from([2_000, 60_000]))
def test_ledgers_balance_for_random_scenarios(engine, params, seed, cap):
    sc = replace(
        SEED_INCIDENT,
        **params,
        horizon_ms=5_000.0,
        window_ms=500.0,
        warmup_ms=0.0,
        peak=Window(1_000.0, 3_000.0, 1.5),
        second_owner=Window(1_000.0, 2_500.0),
        max_events=cap,
    )
    run = simulate(sc, engine=engine, seed=seed)
    run.check()  # users, attempts and server rows all balance
    led = run.ledger
    assert led.arrived == round(run.windows["offered"].sum() * sc.window_ms / 1000.0)
    assert run.attempt_ledger.arrived >= led.arrived - led.in_system


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: Scenario(batch_ms=0), "batch_ms"),
        (lambda: Scenario(batch_max_rows=0), "batch_max_rows"),
        (lambda: Scenario(discipline="random"), "discipline"),
        (lambda: Scenario(horizon_ms=0), "horizon_ms"),
        (lambda: Scenario(degrade=Window(0, 10, 2.0)), "degrade.factor"),
        (lambda: Scenario(retry="twice"), "retry"),
        (lambda: Window(10, 5), "Window.end_ms"),
        (lambda: RetryPolicy(max_attempts=0), "max_attempts"),
        (lambda: RetryPolicy(jitter="some"), "jitter"),
        (lambda: RetryPolicy(multiplier=0.5), "multiplier"),
        (lambda: RetryPolicy(min_delay_ms=0), "min_delay_ms"),
        (lambda: CoDel(target_ms=10, interval_ms=5), "interval_ms"),
        (lambda: GrpcThrottle(max_tokens=0), "max_tokens"),
        (lambda: simulate(SHORT, engine="turbo"), "engine"),
        (lambda: simulate(SHORT, seed=-3), "seed"),
        (lambda: simulate("SEED_INCIDENT"), "scenario"),
    ],
)
def test_bad_parameters_raise_value_error_naming_them(make, name):
    with pytest.raises(ValueError, match=name):
        make()
