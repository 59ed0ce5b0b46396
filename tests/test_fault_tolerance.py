"""09 · fault tolerance: closed forms vs simulations, ledgers, determinism, bad input, widgets."""

import itertools
import math
from dataclasses import replace

import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hotkeylab import capacity, exercises
from hotkeylab import fault_tolerance as ft
from hotkeylab.sim import LedgerError, Outcome

SIMS = {
    ft.RetryScenario: ft.simulate_retry,
    ft.FailoverScenario: ft.simulate_failover,
    ft.EjectionScenario: ft.simulate_ejection,
    ft.PoolScenario: ft.simulate_pool,
    ft.DeliveryScenario: ft.simulate_delivery,
    ft.ReportScenario: ft.simulate_report,
    ft.IsolationScenario: ft.simulate_isolation,
    ft.GiftConfigScenario: ft.simulate_gift_config,
}
PRESETS = (ft.SEED_RETRY, ft.SEED_FAILOVER_SURGE, ft.SEED_EJECTION_OVERLOAD, ft.SEED_POOL_INCIDENT,
           ft.SEED_DELIVERY, ft.SEED_REPORT, ft.SEED_ISOLATION, ft.SEED_GIFT_CONFIG)


# --------------------------------------------------------------------------- the seed's numbers
def test_seed_pool_numbers():
    """100 workers, 5 s timeout, 100 ms service: the seed's 1000/s and 20/s, and the issue's
    671, 290, 169, 39 per second at 1%, 5%, 10%, 50% hanging calls."""
    cap = [ft.pool_capacity_per_s(100, 100.0, 5000.0, h) for h in (0.0, 0.01, 0.05, 0.1, 0.5, 1.0)]
    assert [int(c) for c in cap] == [1000, 671, 289, 169, 39, 20]
    assert [round(c) for c in cap[1:5]] == [671, 290, 169, 39]
    # the seed: one worker serves 50 requests in 5 s, or one hung call
    assert 5000.0 / ft.holding_ms(100.0, 5000.0, 0.0) == pytest.approx(50.0, rel=1e-6)
    # holding = (1 − h)·service + h·timeout when the timeout is far above the service time
    assert ft.holding_ms(100.0, 5000.0, 0.1) == pytest.approx(0.9 * 100 + 0.1 * 5000, rel=1e-9)


def test_seed_retry_numbers():
    assert ft.user_success(0.95, 2) == pytest.approx(0.9975)
    assert ft.user_success(0.95, 2) == capacity.retry_success(0.95, 2)
    assert ft.attempts_per_user(0.95, 2) == pytest.approx(capacity.retry_amplification(0.05, 2))
    assert ft.attempts_per_user(0.0, 2) == 2.0  # "如果服务真的出问题，很可能带来双倍流量"
    assert ft.attempts_per_user(0.0, 2, clicks=3) == 6.0  # users' repeated clicks on top
    assert ft.attempts_per_user(1.0, 2, clicks=3) == 1.0
    sc = ft.SEED_RETRY
    assert sc.capacity_per_s == 200.0
    assert ft.storm_sustains(sc.users_per_s, sc.capacity_per_s, 2)
    assert not ft.storm_sustains(sc.users_per_s, sc.capacity_per_s, 1)
    # the fault overloads the backend with retries, not without
    assert ft.retry_load_per_s(sc.users_per_s, sc.fault_success, 2) > sc.capacity_per_s
    assert ft.retry_load_per_s(sc.users_per_s, sc.fault_success, 1) < sc.capacity_per_s


def test_percentile_timeouts_match_the_seed():
    """p99.9 of an exponential 100 ms / 700 ms service sits just under the seed's 1 s / 5 s."""
    p_fast = ft.service_percentile_ms(100.0, 0.999)
    p_slow = ft.service_percentile_ms(700.0, 0.999)
    assert 600 < p_fast < 1000 and 4000 < p_slow < 5000
    assert ft.service_percentile_ms(100.0, 0.5, shape=2.0) < 100.0  # gamma median below mean


def test_gamma_closed_forms_against_numerical_integration():
    from scipy import integrate, stats

    for m, t, k in [(100.0, 150.0, 2.0), (700.0, 500.0, 1.0), (100.0, 5000.0, 0.5), (50.0, 20.0, 4.0)]:
        dist = stats.gamma(a=k, scale=m / k)
        expect = integrate.quad(lambda x, d=dist: d.sf(x), 0, t)[0]  # E[min(X, T)] = ∫ P(X > x)
        assert ft.mean_capped_ms(m, t, k) == pytest.approx(expect, rel=1e-6)
        assert ft.share_within(m, t, k) == pytest.approx(dist.cdf(t), rel=1e-9)
    assert ft.mean_capped_ms(100.0, math.inf) == 100.0
    assert ft.share_within(100.0, math.inf) == 1.0


def test_erlang_b_and_pool_success():
    assert ft.erlang_b(1, 1.0) == pytest.approx(0.5)
    assert ft.erlang_b(2, 1.0) == pytest.approx(0.2)
    assert ft.erlang_b(3, 0.0) == 0.0
    assert ft.pool_success(0.0, 4, 8, 50.0, dead=1) == pytest.approx(0.75)  # the seed's A of ABCD
    assert ft.pool_success(0.0, 3, 8, 50.0) == 1.0
    c = ft.cascade_successes(960.0, 4, 8, 50.0)
    assert len(c) == 4 and c[0] > 0.5 > c[1] > c[2] > c[3]  # one ejection cascades


def test_ejection_delay_closed_form():
    assert ft.ejection_delay_ms(10_000.0, 1000.0) == pytest.approx(1000.0)
    assert ft.ejection_delay_ms(10_400.0, 1000.0) == pytest.approx(600.0)
    assert ft.ejection_delay_ms(10_600.0, 1000.0) == pytest.approx(1400.0)
    # averaged over the phase the delay is one interval
    u = np.linspace(0, 1000, 2001)[:-1]
    assert np.mean([ft.ejection_delay_ms(x, 1000.0) for x in u]) == pytest.approx(1000.0, rel=1e-3)


def test_gift_distribution_against_brute_force():
    """Enumerate every sequence of call outcomes (the tail after the user stops sums to 1)."""
    probs = dict(ok=0.45, connect_fail=0.15, read_lost=0.1, read_delivered=0.3)
    for clicks, cap in [(1, None), (3, None), (4, 2), (3, 1)]:
        exact: dict = {}
        for seq in itertools.product(probs, repeat=clicks):
            gifts = reads = 0
            for o in seq:
                if cap is not None and reads >= cap:
                    break  # AMS refuses the click
                gifts += o in ("ok", "read_delivered")
                reads += o.startswith("read")
                if o == "ok":
                    break  # the user saw success
            p = float(np.prod([probs[o] for o in seq]))
            exact[gifts] = exact.get(gifts, 0.0) + p
        got = ft.gift_distribution(probs["ok"], probs["connect_fail"], probs["read_lost"],
                                   probs["read_delivered"], clicks, read_cap=cap)
        assert sum(got["pmf"].values()) == pytest.approx(1.0)
        for g, p in exact.items():
            assert got["pmf"].get(g, 0.0) == pytest.approx(p, abs=1e-12), (clicks, cap, g)
        dup = sum(max(0, g - 1) * p for g, p in exact.items())
        assert got["duplicates"] == pytest.approx(dup, abs=1e-12)


def test_expected_duplicates_closed_form():
    sc = ft.SEED_DELIVERY
    e = ft.expected_duplicates(sc)
    assert set(e) == set(ft.PROTECTIONS)
    assert e["user_limit"]["duplicates"] == e["order_id"]["duplicates"] == 0.0
    assert e["async_queue"]["duplicates"] == 0.0
    assert 0 < e["read_cap"]["duplicates"] < e["none"]["duplicates"]
    # worst case of the seed: every call is a timeout-success
    worst = replace(sc, p_connect_fail=0.0, p_read_lost=0.0, p_read_delivered=1.0, clicks=10)
    w = ft.expected_duplicates(worst)
    assert w["none"]["duplicates"] == pytest.approx(9000.0)  # 10 gifts each
    assert w["read_cap"]["duplicates"] == pytest.approx(1000.0)  # "最多只能刷到2次禮包"
    # async: a delivery slower than the async timeout duplicates again
    slow = replace(sc, async_timeout_ms=7000.0)
    assert ft.expected_duplicates(slow)["async_queue"]["duplicates"] > 0


# --------------------------------------------------------------------------- closed form vs simulation
@pytest.mark.parametrize("hang", [0.01, 0.05, 0.1, 0.5])
def test_worker_pool_capacity_matches_closed_form(hang):
    """SimPy worker pool (100 workers, each with an endless backlog) against
    workers / ((1 − h)·service + h·timeout): within 4% (about 3 standard errors at 50 000 calls)."""
    m = ft.measure_capacity(replace(ft.SEED_POOL, hang_share=hang), seed=1, target_completions=50_000)
    assert not m["truncated"]
    assert m["capacity_per_s"] == pytest.approx(m["closed_form_per_s"], rel=0.04)
    assert m["success_share"] == pytest.approx(1 - hang, abs=0.01)


def test_short_timeout_keeps_capacity_but_fails_the_long_requests():
    base = replace(ft.SEED_POOL, timeout_ms=500.0, service_shape=1.0)
    m = ft.measure_capacity(replace(base, hang_share=0.1), seed=0, target_completions=30_000)
    assert m["capacity_per_s"] == pytest.approx(m["closed_form_per_s"], rel=0.04)
    assert m["capacity_per_s"] > 3 * ft.pool_capacity_per_s(100, 100.0, 5000.0, 0.1)
    # the slow business (700 ms) under a 500 ms timeout: about half of it fails
    sc = replace(ft.SEED_POOL_INCIDENT, hang_share=0.0, timeout_ms=500.0, slow_timeout_ms=500.0,
                 slow_share=0.5, rate_per_s=200.0, horizon_ms=30_000.0)
    run = ft.simulate_pool(sc, seed=0)
    assert run.summary["success_slow"] == pytest.approx(ft.share_within(700.0, 500.0), abs=0.03)
    assert run.summary["success_fast"] > 0.98


def test_pool_fixes_compared():
    base = replace(ft.SEED_POOL_INCIDENT, horizon_ms=25_000.0)
    seedlike = ft.simulate_pool(base, seed=0)
    short = ft.simulate_pool(replace(base, timeout_ms=500.0, slow_timeout_ms=500.0), seed=0)
    split = ft.simulate_pool(replace(base, timeout_ms=1000.0, slow_timeout_ms=5000.0, slow_workers=40), seed=0)
    asyn = ft.simulate_pool(replace(base, io="async"), seed=0)
    assert ft.shared_mix_capacity_per_s(100, 0.1, 100, 5000, 0.1, 700, 5000) < base.rate_per_s
    assert seedlike.summary["peak_queue"] > 500 and seedlike.summary["mean_wait_hang_ms"] > 1000
    assert short.summary["peak_queue"] < 5 and short.summary["success_slow"] < 0.6
    assert split.summary["success_slow"] > 0.9 and split.summary["mean_wait_hang_ms"] < 1000
    # async keeps the throughput, not the user's wait: the wait is the holding time
    hold = 0.9 * ft.holding_ms(100, 5000, 0.1) + 0.1 * ft.holding_ms(700, 5000, 0.1)
    assert asyn.summary["peak_queue"] < 5
    assert asyn.summary["mean_wait_hang_ms"] == pytest.approx(hold + base.cpu_ms, rel=0.15)
    assert ft.async_capacity_per_s(100, 2.0, 10_000, hold) > 10 * base.rate_per_s


def test_retry_blip_matches_closed_form():
    """The seed's blip (95% success) with one retry, plenty of capacity: 99.75% success and
    1.05 calls per user, within 0.2 and 1 percentage points."""
    sc = replace(ft.SEED_BLIP, users_per_s=400.0, workers=40, fault_start_ms=0.0,
                 fault_end_ms=math.inf, horizon_ms=50_000.0)
    run = ft.simulate_retry(sc, seed=3)
    s = run.summary
    assert s["success_fault"] == pytest.approx(ft.user_success(0.95, 2), abs=0.002)
    assert s["calls_per_user_fault"] == pytest.approx(ft.attempts_per_user(0.95, 2), abs=0.01)
    run.ledger.check()


def test_repeated_clicks_multiply_the_load():
    sc = replace(ft.SEED_RETRY, users_per_s=20.0, workers=50, normal_success=0.0, fault_success=0.0,
                 clicks=3, reclick_ms=100.0, horizon_ms=5000.0)
    run = ft.simulate_retry(sc, seed=0)
    done = run.log["outcome"] != Outcome.IN_SYSTEM
    assert np.all(run.log["calls"][done] == 6)  # 2 calls × 3 clicks
    assert run.ledger.served == 0 and run.ledger.rejected == done.sum()


def test_gated_retry_survives_what_always_retry_does_not():
    runs = {p: ft.simulate_retry(replace(ft.SEED_RETRY, policy=p), seed=0) for p in ft.RETRY_POLICIES}
    assert not runs["always"].summary["recovered"]  # stuck after the fault: 2 × 120 > 200
    assert runs["always"].summary["wasted"] > 1000
    assert runs["gated"].summary["recovered"] and runs["none"].summary["recovered"]
    assert runs["gated"].summary["calls_per_user_fault"] < 1.05
    # during a blip the gate lets the retries through: the gated policy gets the 99.75%
    blip = ft.simulate_retry(replace(ft.SEED_BLIP, policy="gated"), seed=0)
    assert blip.summary["success_fault"] > 0.99


def test_gate_threshold_lies_inside_its_noise_range():
    """§1's gate must close in the fault and stay open in the blip with 3 standard errors of a
    rate over one gate window to spare, and it must close wherever one retry could overload the
    backend (notebook 09 derives the range and the midpoint)."""
    sc = ft.SEED_RETRY
    n = sc.users_per_s * sc.gate_window_ms / 1000
    def se(p):
        return math.sqrt(p * (1 - p) / n)
    lo, hi = sc.fault_success + 3 * se(sc.fault_success), ft.SEED_BLIP.fault_success - 3 * se(ft.SEED_BLIP.fault_success)
    assert lo < sc.gate_threshold < hi
    assert sc.gate_threshold > 1 - ft.retry_storm_error_share(sc)


def test_failover_latency_and_backup_load():
    run = ft.simulate_failover(ft.SEED_FAILOVER, seed=0)
    sc = ft.SEED_FAILOVER
    s = run.summary
    assert s["failover_share_down"] == 1.0 and s["success_down"] == 1.0
    assert s["mean_latency_down_ms"] == pytest.approx(ft.failover_latency_ms(sc.service_ms, sc.timeout_ms), rel=0.03)
    assert s["mean_latency_normal_ms"] == pytest.approx(sc.service_ms, rel=0.1)
    assert s["util_b_down"] == pytest.approx(ft.backup_utilisation(sc.rate_per_s, sc.service_ms, sc.workers, 1.0), rel=0.1)
    refused = ft.simulate_failover(replace(sc, down_kind="refused"), seed=0)
    assert refused.summary["mean_latency_down_ms"] == pytest.approx(
        ft.failover_latency_ms(sc.service_ms, sc.refused_ms), rel=0.1)
    assert ft.mean_latency_ms(50.0, 500.0, 0.0) == 50.0
    assert ft.backup_mean_utilisation(100.0, 50.0, 10, 0.001) == pytest.approx(0.0005)


def test_failover_surge_takes_both_down():
    run = ft.simulate_failover(ft.SEED_FAILOVER_SURGE, seed=0)
    s = run.summary
    assert ft.SEED_FAILOVER_SURGE.rate_per_s * ft.SEED_FAILOVER_SURGE.surge_factor > ft.SEED_FAILOVER_SURGE.capacity_per_s
    assert s["success_surge_settled"] < 0.1
    assert s["util_a_surge"] > 0.95 and s["util_b_surge"] > 0.95
    assert run.ledger.extra["wasted"] > 1000


def test_ejection_light_load():
    sc = ft.SEED_EJECTION
    without = ft.simulate_ejection(replace(sc, ejection=False), seed=0)
    assert without.summary["success_bad"] == pytest.approx(ft.pool_success(sc.rate_per_s, 4, 8, 50.0, dead=1), abs=0.04)
    lost, delays = [], []
    for seed in range(4):
        run = ft.simulate_ejection(sc, seed=seed)
        lost.append(run.summary["lost_to_bad"])
        delays.append(run.summary["first_ejection_delay_ms"])
        assert run.summary["success_bad_late"] > 0.995  # A is out; a rare busy refusal elsewhere
        assert run.summary["success_after"] == 1.0  # A re-added once healthy
        ej = run.log["ejections"]
        assert ej[0][0] == 0 and ej[0][2] * 1000 >= sc.bad_end_ms  # re-added after recovery
    expect = ft.ejection_delay_ms(sc.bad_start_ms, sc.check_interval_ms, sc.threshold)
    assert delays == [expect] * 4
    assert np.mean(lost) == pytest.approx(sc.rate_per_s / sc.servers * expect / 1000, rel=0.25)
    late = ft.simulate_ejection(replace(sc, bad_start_ms=10_600.0), seed=0)
    assert late.summary["first_ejection_delay_ms"] == pytest.approx(ft.ejection_delay_ms(10_600.0, 1000.0))


def test_ejection_under_overload_cascades_and_panic_stops_it():
    o = ft.SEED_EJECTION_OVERLOAD
    none = ft.simulate_ejection(replace(o, ejection=False), seed=0).summary
    ej = ft.simulate_ejection(o, seed=0).summary
    panic = ft.simulate_ejection(replace(o, panic_threshold=0.75), seed=0).summary
    assert none["success_after"] == pytest.approx(ft.pool_success(o.rate_per_s, 4, o.workers, o.service_ms), abs=0.03)
    assert ej["success_after"] < none["success_after"] - 0.15
    assert ej["min_in_rotation"] < 3
    assert panic["success_after"] > ej["success_after"] + 0.15


def test_delivery_matches_closed_form():
    e = ft.expected_duplicates(ft.SEED_DELIVERY, per_users=1)
    for prot, users in (("none", 8000), ("read_cap", 8000), ("user_limit", 3000), ("order_id", 3000),
                        ("async_queue", 3000)):
        run = ft.simulate_delivery(replace(ft.SEED_DELIVERY, users=users, users_per_s=200.0, protection=prot), seed=1)
        s = run.summary
        assert s["users"] == users
        # duplicates per user: within 0.02 (about 3 standard errors at 8000 users)
        assert s["duplicates"] / users == pytest.approx(e[prot]["duplicates"], abs=0.02), prot
        assert s["no_gift_per_1000"] / 1000 == pytest.approx(e[prot]["no_gift"], abs=0.005), prot
        assert run.ledger.in_system == 0
    worst = replace(ft.SEED_DELIVERY, users=50, p_connect_fail=0.0, p_read_lost=0.0, p_read_delivered=1.0,
                    clicks=4, protection="read_cap")
    assert ft.simulate_delivery(worst, seed=0).summary["max_gifts"] == 2
    assert ft.simulate_delivery(replace(worst, protection="none"), seed=0).summary["max_gifts"] == 4


def test_seed_sequence():
    run = ft.simulate_delivery(ft.SEED_SEQUENCE, seed=0)
    ev = run.log["events"]
    shown = [(t, w) for t, a, w in ev if a == "AMS" and w != "call delivery"]
    gifts = [t for t, a, w in ev if a == "account"]
    assert shown[0] == (6000.0, "failed")  # "等待6s后，无响应，我们给用户提示“领取失败”"
    assert gifts[0] == 8000.0  # "发货服务却在第8秒执行发货成功"
    assert len(gifts) == 2 and run.summary["duplicates"] == 1
    prot = ft.simulate_delivery(replace(ft.SEED_SEQUENCE, protection="order_id"), seed=0)
    assert prot.summary["duplicates"] == 0 and prot.ledger.served == 1


def test_report_latency_matches_closed_form():
    for mode, tmo in (("bypass", 20.0), ("blocking", None)):
        sc = replace(ft.SEED_REPORT, mode=mode, rate_per_s=40.0, slow_start_ms=0.0, slow_end_ms=math.inf,
                     horizon_ms=40_000.0)
        run = ft.simulate_report(sc, seed=0)
        expect = ft.core_latency_ms(sc.core_ms, sc.slow_report_ms, tmo)
        assert run.summary["mean_latency_slow_ms"] == pytest.approx(expect, rel=0.05), mode
    seed = {m: ft.simulate_report(replace(ft.SEED_REPORT, mode=m), seed=0).summary for m in ft.REPORT_MODES}
    sc = ft.SEED_REPORT
    assert ft.report_capacity_per_s(sc.workers, sc.core_ms, sc.slow_report_ms, None) < sc.rate_per_s
    assert ft.report_capacity_per_s(sc.workers, sc.core_ms, sc.slow_report_ms, 20.0) > sc.rate_per_s
    assert seed["blocking"]["peak_queue"] > 100 and seed["bypass"]["peak_queue"] < 5
    assert seed["bypass"]["p99_latency_slow_ms"] < 200 < 1000 < seed["blocking"]["p99_latency_slow_ms"]


def test_isolation_matches_fluid_closed_form():
    sc = ft.SEED_ISOLATION
    q, d = sc.work_erlangs(sc.surge_factor)
    shared = ft.simulate_isolation(sc, seed=0).summary
    sep = ft.simulate_isolation(replace(sc, separated=True), seed=0).summary
    assert shared["delivery_success_surge"] == pytest.approx(ft.shared_pool_success(q, d, sc.workers), abs=0.06)
    assert shared["query_success_surge"] == pytest.approx(ft.shared_pool_success(q, d, sc.workers), abs=0.06)
    assert sep["delivery_success_surge"] > 0.99
    assert sep["query_success_surge"] == pytest.approx(ft.separated_success(q, sc.query_workers), abs=0.06)
    assert shared["delivery_success_normal"] > 0.99 and sep["delivery_success_normal"] > 0.99


# --------------------------------------------------------------------------- ledgers, bounds, determinism
small = dict(horizon_ms=st.floats(200.0, 3000.0), window_ms=st.just(100.0))

scenario_strategies = [
    st.builds(ft.RetryScenario, users_per_s=st.floats(0, 400), workers=st.integers(1, 8),
              service_ms=st.floats(1, 50), timeout_ms=st.floats(5, 500),
              normal_success=st.floats(0, 1), fault_success=st.floats(0, 1),
              fault_start_ms=st.floats(0, 1000), fault_end_ms=st.floats(1000, 2000),
              attempts=st.integers(1, 3), policy=st.sampled_from(ft.RETRY_POLICIES),
              clicks=st.integers(1, 3), reclick_ms=st.floats(1, 300), **small),
    st.builds(ft.FailoverScenario, rate_per_s=st.floats(0, 500), workers=st.integers(1, 10),
              service_ms=st.floats(1, 100), timeout_ms=st.floats(5, 500),
              down_start_ms=st.floats(0, 1000), down_end_ms=st.floats(1000, 2000),
              down_kind=st.sampled_from(ft.DOWN_KINDS), surge_start_ms=st.floats(0, 500),
              surge_end_ms=st.floats(500, 2000), surge_factor=st.floats(0, 5),
              backup=st.booleans(), **small),
    st.builds(ft.EjectionScenario, servers=st.integers(1, 5), rate_per_s=st.floats(0, 1000),
              workers=st.integers(1, 8), service_ms=st.floats(1, 100), ejection=st.booleans(),
              threshold=st.floats(0, 1), check_interval_ms=st.floats(50, 500),
              min_calls=st.integers(1, 5), probe_interval_ms=st.floats(50, 500),
              panic_threshold=st.floats(0, 1), bad_start_ms=st.floats(0, 1000),
              bad_end_ms=st.floats(1000, 3000), bad_success=st.floats(0, 1), **small),
    st.builds(ft.PoolScenario, rate_per_s=st.floats(0, 500), workers=st.integers(2, 30),
              timeout_ms=st.floats(5, 1000), service_ms=st.floats(1, 200),
              service_shape=st.floats(0.5, 4), hang_share=st.floats(0, 1),
              slow_share=st.floats(0, 1), slow_timeout_ms=st.floats(5, 1000),
              slow_workers=st.integers(0, 1), io=st.sampled_from(ft.IO_MODES),
              max_inflight=st.integers(1, 50), user_timeout_ms=st.floats(10, 2000), **small),
    st.builds(ft.DeliveryScenario, users=st.integers(0, 60), users_per_s=st.floats(1, 100),
              p_connect_fail=st.floats(0, 0.3), p_read_lost=st.floats(0, 0.3),
              p_read_delivered=st.floats(0, 0.4), clicks=st.integers(1, 4),
              protection=st.sampled_from(ft.PROTECTIONS), read_cap=st.integers(1, 3),
              horizon_ms=st.floats(1000, 40_000), window_ms=st.just(1000.0)),
    st.builds(ft.ReportScenario, rate_per_s=st.floats(0, 500), workers=st.integers(1, 20),
              core_ms=st.floats(1, 50), report_ms=st.floats(0.5, 50), report_timeout_ms=st.floats(1, 50),
              mode=st.sampled_from(ft.REPORT_MODES), slow_report_ms=st.floats(1, 500),
              slow_start_ms=st.floats(0, 1000), slow_end_ms=st.floats(1000, 3000), **small),
    st.builds(ft.IsolationScenario, query_per_s=st.floats(0, 300), delivery_per_s=st.floats(0, 100),
              query_ms=st.floats(1, 50), delivery_ms=st.floats(1, 200), workers=st.integers(2, 10),
              query_workers=st.just(1), separated=st.booleans(), patience_ms=st.floats(1, 500),
              surge_factor=st.floats(0, 10), surge_start_ms=st.floats(0, 1000),
              surge_end_ms=st.floats(1000, 2000), **small),
]


@given(sc=st.one_of(scenario_strategies), seed=st.integers(0, 2**16), cap=st.sampled_from([300, 50_000]))
def test_property_ledger_balances_and_runs_are_bounded(sc, seed, cap):
    run = SIMS[type(sc)](replace(sc, max_events=cap), seed)
    run.ledger.check()
    assert run.status.events <= cap
    assert run.status.t_end_ms <= sc.horizon_ms
    n = len(run.windows["t"])
    assert all(len(v) == n for v in run.windows.values())


def test_unstable_runs_end_at_the_event_cap():
    storm = replace(ft.SEED_RETRY, users_per_s=5000.0, horizon_ms=600_000.0)
    run = ft.simulate_retry(replace(storm, max_events=50_000), seed=0)
    assert run.truncated and run.status.events == 50_000
    run.ledger.check()
    assert run.ledger.in_system > 0
    m = ft.measure_capacity(replace(ft.SEED_POOL, max_events=1000), seed=0)
    assert m["truncated"]


@pytest.mark.parametrize("sc", PRESETS, ids=lambda sc: type(sc).__name__)
def test_presets_run_to_their_horizon_within_the_event_cap(sc):
    # the cap's upper end bounds a run's time (common.MAX_EVENTS); the seed's runs stay well below it
    assert sc.max_events == ft.MAX_EVENTS
    run = SIMS[type(sc)](sc, seed=0)
    assert not run.truncated and run.status.events < ft.MAX_EVENTS


def test_delivery_without_a_script_draws_the_outcomes():
    assert ft.SEED_DELIVERY.script is None
    run = ft.simulate_delivery(replace(ft.SEED_DELIVERY, users=50), seed=0)
    run.ledger.check()


def test_different_seeds_differ():
    a = ft.simulate_retry(ft.SEED_RETRY, seed=0)
    b = ft.simulate_retry(ft.SEED_RETRY, seed=1)
    assert a.ledger.as_dict() != b.ledger.as_dict()


def test_ledger_check_catches_a_broken_book():
    run = ft.simulate_ejection(replace(ft.SEED_EJECTION, horizon_ms=2000.0), seed=0)
    broken = replace(run.ledger, served=run.ledger.served + 1)
    with pytest.raises(LedgerError):
        broken.check()


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "preset, field, value",
    [
        (ft.SEED_RETRY, "workers", 0),
        (ft.SEED_RETRY, "normal_success", 1.5),
        (ft.SEED_RETRY, "fault_end_ms", 5.0),
        (ft.SEED_RETRY, "policy", "sometimes"),
        (ft.SEED_RETRY, "attempts", 0),
        (ft.SEED_FAILOVER, "down_kind", "reset"),
        (ft.SEED_FAILOVER, "backup", "yes"),
        (ft.SEED_FAILOVER, "window_ms", 1e9),
        (ft.SEED_EJECTION, "bad_server", 4),
        (ft.SEED_EJECTION, "panic_threshold", 2.0),
        (ft.SEED_EJECTION, "servers", 0),
        (ft.SEED_POOL, "hang_share", 1.1),
        (ft.SEED_POOL, "io", "epoll"),
        (ft.SEED_POOL, "slow_workers", 100),
        (ft.SEED_POOL, "service_shape", 0.0),
        (ft.SEED_DELIVERY, "protection", "hope"),
        (ft.SEED_DELIVERY, "slow_ms", 5000.0),
        (ft.SEED_DELIVERY, "p_read_delivered", 0.9),
        (ft.SEED_DELIVERY, "script", ("ok", "lost")),
        (ft.SEED_DELIVERY, "script", ()),
        (ft.SEED_DELIVERY, "script", ["ok"]),
        (ft.SEED_RETRY, "max_events", 0),
        (ft.SEED_POOL, "max_events", ft.MAX_EVENTS + 1),
        (ft.SEED_DELIVERY, "read_cap", 0),
        (ft.SEED_REPORT, "mode", "async"),
        (ft.SEED_REPORT, "report_timeout_ms", 0.0),
        (ft.SEED_ISOLATION, "query_workers", 20),
        (ft.SEED_ISOLATION, "separated", 1),
        (ft.SEED_ISOLATION, "horizon_ms", 0.0),
    ],
)
def test_bad_scenario_raises_naming_the_parameter(preset, field, value):
    name = "script" if field == "script" else ("p_" if field.startswith("p_") else field)
    with pytest.raises(ValueError, match=name):
        replace(preset, **{field: value})


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: ft.simulate_retry(ft.SEED_RETRY, seed=-1), "seed"),
        (lambda: ft.simulate_retry(ft.SEED_FAILOVER), "scenario"),
        (lambda: ft.simulate_pool(ft.SEED_POOL, seed=1.5), "seed"),
        (lambda: ft.measure_capacity(replace(ft.SEED_POOL, io="async")), "io"),
        (lambda: ft.measure_capacity(ft.SEED_POOL, horizon_ms=100.0, warmup_ms=200.0), "horizon_ms"),
        (lambda: ft.pool_capacity_per_s(0, 100, 5000, 0.1), "workers"),
        (lambda: ft.pool_capacity_per_s(100, 100, 5000, -0.1), "hang_share"),
        (lambda: ft.holding_ms(100, 0, 0.1), "timeout_ms"),
        (lambda: ft.service_percentile_ms(100, 1.0), "q"),
        (lambda: ft.attempts_per_user(1.2, 2), "p_success"),
        (lambda: ft.attempts_per_user(0.5, 0), "attempts"),
        (lambda: ft.user_success(0.5, 2, clicks=0), "clicks"),
        (lambda: ft.storm_sustains(100, 0, 2), "capacity_per_s"),
        (lambda: ft.failover_latency_ms(-1, 500), "service_ms"),
        (lambda: ft.mean_latency_ms(50, 500, 2.0), "failover_share"),
        (lambda: ft.erlang_b(0, 1.0), "workers"),
        (lambda: ft.erlang_b(3, -1.0), "offered_erlangs"),
        (lambda: ft.pool_success(10, 4, 8, 50, dead=5), "dead"),
        (lambda: ft.ejection_delay_ms(100, 0), "check_interval_ms"),
        (lambda: ft.gift_distribution(0.5, 0.5, 0.5, 0.0, 3), "must be 1"),
        (lambda: ft.gift_distribution(1.0, 0, 0, 0, 0), "clicks"),
        (lambda: ft.expected_duplicates(ft.SEED_RETRY), "scenario"),
        (lambda: ft.core_latency_ms(30, 0, 20), "report_mean_ms"),
        (lambda: ft.shared_pool_success(1, 1, 0), "workers"),
        (lambda: ft.async_capacity_per_s(100, 0, 10, 100), "cpu_ms"),
        (lambda: ft.separated_mix_capacity_per_s(0, 10, 0.1, 100, 1000, 0.1, 700, 5000), "fast_workers"),
        # issue #20: huge counts end at once with a ValueError, None or empty input names its parameter
        (lambda: ft.erlang_b(10**12, 5.0), "workers"),
        (lambda: ft.cascade_successes(100.0, 10**9, 8, 50.0), "servers"),
        (lambda: ft.gift_distribution(0.5, 0.5, 0.0, 0.0, 10**6), "clicks"),
        (lambda: ft.surge_fill_ms(None), "sc"),
        (lambda: ft.retry_stuck_count(None), "scenario"),
        (lambda: ft.config_errors_fluid(None), "sc"),
        (lambda: ft.pool_designs(None), "base"),
        (lambda: ft.ejection_counts(None), "scenario"),
        (lambda: ft.count_runs(ft.simulate_ejection, {}, {"x": bool}, seeds=1), "scenarios"),
        (lambda: ft.count_runs(ft.simulate_ejection, {"e": ft.SEED_EJECTION}, {}, seeds=1), "verdicts"),
        (lambda: ft.plot_retry({}), "runs"),
        (lambda: ft.plot_sequence(None), "run"),
        (lambda: ft.plot_capacity_curve(timeouts_ms=()), "timeouts_ms"),
    ],
)
def test_bad_arguments_raise_value_error(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --------------------------------------------------------------------------- figures & widgets
def test_figures_draw():
    short = dict(horizon_ms=4000.0)
    retry = {p: ft.simulate_retry(replace(ft.SEED_RETRY, policy=p, fault_start_ms=1000, fault_end_ms=2000, **short))
             for p in ft.RETRY_POLICIES}
    ft.plot_retry(retry)
    ft.plot_failover(ft.simulate_failover(replace(ft.SEED_FAILOVER, down_start_ms=1000, down_end_ms=2000, **short)),
                     ft.simulate_failover(replace(ft.SEED_FAILOVER_SURGE, surge_start_ms=1000, surge_end_ms=2000, **short)))
    ej = ft.simulate_ejection(replace(ft.SEED_EJECTION, bad_start_ms=1000, bad_end_ms=3000, **short))
    ft.plot_ejection({"with": ej, "without": ft.simulate_ejection(replace(ej.scenario, ejection=False))})
    ft.plot_capacity_curve(timeouts_ms=(5000.0, 500.0), points={5000.0: [(0.1, 170.0)]}, offered_per_s=300.0)
    ft.plot_pool_runs({"a": ft.simulate_pool(replace(ft.SEED_POOL_INCIDENT, hang_start_ms=1000, hang_end_ms=2000, **short))})
    ft.plot_sequence(ft.simulate_delivery(ft.SEED_SEQUENCE))
    ft.plot_duplicates(ft.expected_duplicates(), {"none": 400.0})
    rep = {m: ft.simulate_report(replace(ft.SEED_REPORT, mode=m, slow_start_ms=1000, slow_end_ms=2000, **short))
           for m in ft.REPORT_MODES}
    ft.plot_report(rep, {"bypass": [(3.0, 33.0)]})
    iso = {k: ft.simulate_isolation(replace(ft.SEED_ISOLATION, separated=k, surge_start_ms=1000, surge_end_ms=2000, **short))
           for k in (False, True)}
    ft.plot_isolation(iso)
    plt.close("all")


def test_pool_widget_driven_kernel_side():
    from ipywidgets import interactive

    w = interactive(ft.explore_pool, workers=(10, 200, 10), timeout_ms=(100.0, 10_000.0, 100.0),
                    hang_share=(0.0, 1.0, 0.01), service_ms=(10.0, 500.0, 10.0), seed=0,
                    target_completions=2000, plot=False)
    w.update()
    r = w.result
    assert r["capacity_closed_per_s"] == pytest.approx(ft.pool_capacity_per_s(100, 100, 5000, 0.05))
    assert r["capacity_sim_per_s"] == pytest.approx(r["capacity_closed_per_s"], rel=0.15)
    w.children[1].value = 500.0  # the seed's shorter timeout
    w.update()
    assert w.result["capacity_closed_per_s"] > 2.5 * r["capacity_closed_per_s"]
    w.children[2].value = 1.0  # every call hangs
    w.update()
    assert w.result["capacity_closed_per_s"] == pytest.approx(100 * 1000 / 500.0)
    plt.close("all")


def test_ejection_widget_driven_kernel_side():
    from ipywidgets import interactive

    w = interactive(ft.explore_ejection, rate_per_s=(20.0, 1500.0, 20.0), threshold=(0.0, 1.0, 0.05),
                    panic_threshold=(0.0, 1.0, 0.05), check_interval_ms=(100.0, 5000.0, 100.0),
                    ejection=True, seed=0, horizon_ms=30_000.0, plot=False)
    w.update()
    assert w.result["success_bad_late"] == 1.0
    assert w.result["closed_no_ejection"] == pytest.approx(0.75, abs=1e-3)
    w.children[4].value = False  # no ejection: one dead machine of four
    w.update()
    assert w.result["success_bad"] == pytest.approx(0.75, abs=0.05)
    w.children[4].value = True
    w.children[0].value = 960.0  # overload: ejection concentrates the load
    w.update()
    assert w.result["ejections"] > 5
    plt.close("all")


# --------------------------------------------------------------------------- exercises
def test_exercises_accept_the_computed_answers_and_refuse_others():
    right = {
        "09.two_retries": capacity.retry_success(0.95, 3),
        "09.storm_load": ft.retry_load_per_s(120, 0.5, 2, 3),
        "09.pool_2pct": ft.pool_capacity_per_s(100, 100, 5000, 0.02),
        "09.failover_timeout": (60 - ft.mean_latency_ms(50, 0, 0.02)) / 0.02,
        "09.config_errors_quiet": ft.config_errors_fluid(replace(ft.SEED_GIFT_CONFIG, claims_per_s=0.15))["errors"],
        "09.split_two_down": 365 * (1 - 0.99**5 - 5 * 0.01 * 0.99**4),
        "09.cap_worst_case": 1000 * ft.gift_distribution(0, 0.5, 0, 0.5, 4, read_cap=2)["duplicates"],
        "09.bypass_latency": ft.core_latency_ms(30, 50, 20),
    }
    for eid, value in right.items():
        assert exercises.check(eid, value).ok, eid
        assert not exercises.check(eid, value * 1.5).ok, eid
        assert not exercises.check(eid, "lots").ok, eid
    # the hand derivations of the solutions: 120 × (1 + 0.5) × (1 + 0.25 + 0.25²); 1000 × P(Binomial(4, 1/2) ≥ 2)
    assert exercises.check("09.storm_load", 120 * 1.5 * (1 + 0.25 + 0.25**2)).ok
    assert exercises.check("09.cap_worst_case", 1000 * (1 - 5 / 16)).ok
    # the inputs printed in section 1 and in the Fixes table no longer answer them
    assert not exercises.check("09.storm_load", ft.retry_load_per_s(120, 0.0, 2, 3)).ok
    assert not exercises.check("09.cap_worst_case", 1000 * ft.gift_distribution(0, 0, 0, 1, 4, read_cap=2)["duplicates"]).ok
    # the new cases are not the numbers printed in sections 2, 7 and 8
    assert exercises.check("09.failover_timeout", 500.0).ok and not exercises.check("09.failover_timeout", ft.mean_latency_ms(50, 500, 0.01)).ok
    assert not exercises.check("09.config_errors_quiet", ft.config_errors_fluid(ft.SEED_GIFT_CONFIG)["errors"]).ok
    assert not exercises.check("09.split_two_down", 365 * 0.01).ok


# --------------------------------------------------------------------------- issue #18, part 09
def test_failover_surge_share_covers_the_whole_surge():
    """``success_surge`` counts every request arriving in the surge (it used to skip the first
    2 s and printed 0.000); the calls arriving before A's queue wait passes the timeout
    (``surge_fill_ms``, fluid) are answered, so the whole-window share is at least fill/duration."""
    sc = ft.SEED_FAILOVER_SURGE
    fill = ft.surge_fill_ms(sc)
    assert fill == pytest.approx(sc.timeout_ms * sc.capacity_per_s / (sc.rate_per_s * sc.surge_factor - sc.capacity_per_s))
    duration = sc.surge_end_ms - sc.surge_start_ms
    for seed in range(3):
        run = ft.simulate_failover(sc, seed=seed)
        s, log = run.summary, run.log
        fin = ~np.isnan(log["done_ms"])
        a = log["arrive_ms"]
        whole = (a >= sc.surge_start_ms) & (a < sc.surge_end_ms) & fin
        early = (a >= sc.surge_start_ms) & (a < sc.surge_start_ms + fill) & fin
        assert s["success_surge"] == pytest.approx(log["ok"][whole].mean())
        assert log["ok"][early].mean() > 0.95
        assert s["success_surge"] >= 0.95 * fill / duration
        assert s["success_surge_settled"] < s["success_surge"]
        assert s["success_surge_settled"] < 0.2
    assert ft.surge_fill_ms(replace(sc, surge_factor=1.5)) == math.inf
    assert ft.surge_both_fall_factor(sc) == pytest.approx(sc.capacity_per_s / sc.rate_per_s)


def test_failover_surge_below_the_factor_keeps_up():
    """Below ``surge_both_fall_factor`` A keeps up and almost every request is answered; above
    it both fall (the range quoted in the assumptions table)."""
    sc = ft.SEED_FAILOVER_SURGE
    f = ft.surge_both_fall_factor(sc)
    low = ft.simulate_failover(replace(sc, surge_factor=0.75 * f), seed=0).summary
    high = ft.simulate_failover(replace(sc, surge_factor=1.25 * f), seed=0).summary
    assert low["success_surge"] > 0.95
    assert high["success_surge_settled"] < 0.5


def test_datacentre_ejection_keeps_the_group_up():
    """The seed's ABC case: all of B's machines fail together; the router ejects both and A and
    C carry the load at the closed-form success of the machines left."""
    sc = ft.SEED_DATACENTRES
    assert sc.names == ["A1", "A2", "B1", "B2", "C1", "C2"]
    run = ft.simulate_ejection(sc, seed=0)
    run.ledger.check()
    ejected = {sc.names[k] for k, _, _ in run.log["ejections"]}
    assert ejected == {"B1", "B2"}
    closed = ft.datacentre_loss_success(sc.rate_per_s, sc.servers, sc.datacentres, sc.workers, sc.service_ms)
    assert run.summary["success_bad_late"] == pytest.approx(closed, abs=0.02)
    none = ft.simulate_ejection(replace(sc, ejection=False), seed=0).summary
    assert none["success_bad"] == pytest.approx(1 - 1 / sc.datacentres, abs=0.03)
    top = ft.datacentre_loss_max_rate(sc.servers, sc.datacentres, sc.workers, sc.service_ms, 0.99)
    assert ft.datacentre_loss_success(top, 6, 3, 8, 50.0) == pytest.approx(0.99, abs=1e-6)
    assert sc.rate_per_s < top
    with pytest.raises(ValueError, match="datacentres"):
        replace(sc, servers=7)
    with pytest.raises(ValueError, match="bad_datacentre"):
        replace(sc, bad_datacentre=3)


def test_storage_split_closed_form_and_monte_carlo():
    s = ft.storage_split(0.6, 3, 0.02)
    assert s["utilisation"] == pytest.approx(0.2)
    assert s["blast_radius"] == pytest.approx(1 / 3)
    mc = ft.simulate_storage_days(3, 0.02, days=200_000, seed=0)
    assert mc["p_any_down"] == pytest.approx(s["p_any_down"], rel=0.03)
    assert mc["expected_share_down"] == pytest.approx(s["expected_share_down"], rel=0.03)
    assert ft.storage_split(0.6, 1, 0.02)["expected_share_down"] == s["expected_share_down"]
    with pytest.raises(ValueError, match="utilisation"):
        ft.storage_split(1.0, 3, 0.1)


def test_storage_days_refuse_more_store_days_than_declared():
    from hotkeylab.fault_tolerance.isolation import MAX_STORE_DAYS

    stores = 1000
    most = MAX_STORE_DAYS // stores
    with pytest.raises(ValueError, match=rf"days .*must be an integer >= 1 and <= {most}, got {most + 1}$"):
        ft.simulate_storage_days(stores, 0.01, days=most + 1)
    with pytest.raises(ValueError, match=r"days .*<= 10000000, got 10000001$"):
        ft.simulate_storage_days(1, 0.01, days=10_000_001)
    small = ft.simulate_storage_days(stores, 0.5, days=10, seed=3)
    assert small == ft.simulate_storage_days(stores, 0.5, days=10, seed=3)
    assert small["expected_share_down"] == pytest.approx(0.5, abs=0.03)


def test_gift_config_fails_at_gift_101_and_the_check_refuses_it():
    sc = ft.SEED_GIFT_CONFIG
    run = ft.simulate_gift_config(sc, seed=0)
    run.ledger.check()
    s = run.summary
    assert s["first_error_claim"] == sc.pool_gifts + 1  # "禮包發放到101個的時候，就報錯了"
    assert s["gifts"] == sc.pool_gifts
    assert s["alarm_ms"] == sc.monitor_cycle_ms
    fluid = ft.config_errors_fluid(sc)
    errs = [ft.simulate_gift_config(sc, seed=k).summary["errors"] for k in range(20)]
    assert np.mean(errs) == pytest.approx(fluid["errors"], rel=0.03)
    assert ft.check_gift_config(200, 100) and not ft.check_gift_config(100, 100)
    checked = ft.simulate_gift_config(replace(sc, check=True), seed=0).summary
    assert checked["errors"] == 0 and checked["published_limit"] == sc.pool_gifts
    assert checked["gifts"] == sc.pool_gifts
    # a correct limit: the 101st claim is refused by the limit, not an error
    ok = ft.simulate_gift_config(replace(sc, daily_limit=100), seed=0).summary
    assert ok["errors"] == 0 and ok["refused"] > 0
    with pytest.raises(ValueError, match="claims_per_s"):
        replace(sc, claims_per_s=0.0)


def test_verification_gate():
    closed = ft.unverified_launches(400, 10, 0.99)
    sims = [ft.simulate_verification(400, 10, 0.99, seed=k)["unverified_launched"] for k in range(20)]
    assert np.mean(sims) == pytest.approx(closed, rel=0.05)
    gated = [ft.simulate_verification(400, 10, 0.99, enforced=True, seed=k) for k in range(20)]
    assert all(g["unverified_launched"] == 0 for g in gated)
    assert np.mean([g["refused_launches"] for g in gated]) >= 0.9 * closed
    with pytest.raises(ValueError, match="p_verify"):
        ft.simulate_verification(p_verify=0.0)


def test_retry_storm_range_and_stuck_counts():
    """The assumptions table's range for section 1: a storm can start only above
    ``capacity / users − 1`` failing calls; below it always-retry never stays stuck, and the gated
    policy is never stuck at the seed's preset (counts over 20 seeds)."""
    sc = ft.SEED_RETRY
    e = ft.retry_storm_error_share(sc)
    assert e == pytest.approx(sc.capacity_per_s / sc.users_per_s - 1.0)
    assert ft.retry_load_per_s(sc.users_per_s, 1 - e, 2) == pytest.approx(sc.capacity_per_s)
    assert ft.retry_stuck_count(replace(sc, policy="gated"), seeds=20) == 0
    assert ft.retry_stuck_count(replace(sc, fault_success=1 - 0.9 * e), seeds=20) == 0
    with pytest.raises(ValueError, match="seeds"):
        ft.retry_stuck_count(sc, seeds=0)


# --------------------------------------------------------------------------- verdicts as counts
def test_near_and_count_text():
    """Near: more than a tenth of the runs went the other way; bad input names the parameter."""
    assert [ft.near(k, 20) for k in (0, 2, 3, 17, 18, 20)] == [False, False, True, True, False, False]
    assert ft.count_text(20, 20) == "20/20 runs" and ft.count_text(11, 20) == "11/20 runs (near)"
    with pytest.raises(ValueError, match="count"):
        ft.near(21, 20)
    with pytest.raises(ValueError, match="seeds"):
        ft.count_runs(ft.simulate_ejection, {"ejection": ft.SEED_EJECTION}, {}, seeds=0)


def test_count_runs_counts_each_seed_once():
    """count_runs applies each verdict to the runs of one seed: a verdict true for even seeds
    only holds in half of them."""
    c = ft.count_runs(ft.simulate_ejection, {"e": replace(ft.SEED_EJECTION, horizon_ms=2000.0, bad_start_ms=0.0,
                                                           bad_end_ms=1000.0)},
                      {"even": lambda r: r["e"].seed % 2 == 0, "always": lambda r: True}, seeds=6)
    assert c == {"even": 3, "always": 6, "runs": 6}


def test_ejection_light_load_counts():
    """§3, A dead at light load: ejected at the closed-form delay, alone, back within a probe,
    and the pool better off, in at least 19 of 20 runs."""
    c = ft.ejection_counts()
    assert c["runs"] == 20
    for key in ft.EJECTION_VERDICTS:
        assert c[key] >= 19, (key, c)


def test_overload_counts_direction():
    """§3 under overload: ejection overloads the survivors in ≥ 18/20 runs; a 75% panic
    threshold holds in ≥ 18/20; Envoy's 50% does not hold in most runs (≤ 10/20)."""
    c = ft.overload_counts()
    assert c["ejection overloads"] >= 18, c
    assert c["panic 75% holds"] >= 18, c
    assert c["panic 50% holds"] <= 10, c
    # a router without ejection ejects no one: the verdict cannot hold
    c0 = ft.overload_counts(replace(ft.SEED_EJECTION_OVERLOAD, ejection=False), seeds=3)
    assert c0["ejection overloads"] == 0, c0
    light = ft.overload_counts(replace(ft.SEED_EJECTION_OVERLOAD, rate_per_s=80.0), seeds=5)
    assert light["ejection overloads"] == 0, light  # at light load ejecting A overloads no one


def test_failover_counts_direction():
    """§2: the crash is answered in ≥ 18/20 runs; the ×3 surge takes both down in ≥ 18/20; a
    surge below capacity / load takes neither down (0/5)."""
    c = ft.failover_counts()
    assert c["crash: answered ≥ 99%"] >= 18 and c["surge: both fall"] >= 18, c
    f = 0.9 * ft.surge_both_fall_factor(ft.SEED_FAILOVER_SURGE)
    low = ft.failover_counts(surge=replace(ft.SEED_FAILOVER_SURGE, surge_factor=f), seeds=5)
    assert low["surge: both fall"] == 0, low


def test_isolation_and_datacentre_counts_direction():
    """§7: separated deliveries served ≥ 99% and better than shared in ≥ 18/20 runs; losing B
    leaves only B's machines ejected and A and C at 99% in ≥ 18/20."""
    c = ft.isolation_counts()
    assert min(c[k] for k in ft.ISOLATION_VERDICTS) >= 18, c
    d = ft.datacentre_counts()
    assert min(d[k] for k in ft.DATACENTRE_VERDICTS) >= 18, d
    heavy = ft.datacentre_counts(replace(ft.SEED_DATACENTRES, rate_per_s=3 * ft.datacentre_loss_max_rate(6, 3, 8, 50.0)),
                                 seeds=5)
    assert heavy["A and C answer 99%"] == 0, heavy


def test_pool_conclusion_patience_range():
    """§4's ranking holds at the preset's 10 s patience and fails at 1 s (users leave before a
    hung call's 5 s timeout, so the separate slow pool cannot answer 90%)."""
    assert ft.pool_conclusion_holds(10_000.0)
    assert not ft.pool_conclusion_holds(1000.0)
    with pytest.raises(ValueError, match="patience_ms"):
        ft.pool_conclusion_holds(0.0)


def test_read_cap_counts_read_timeouts_per_user_and_refuses_only_after_the_cap():
    """Exercise 5's rule, as ``gift_distribution`` implements it: connect failures do not count;
    the third click is refused only when the first two both timed out at read."""
    g = ft.gift_distribution(0.0, 0.5, 0.0, 0.5, 3, read_cap=2)
    assert g["calls"] == pytest.approx(1 + 1 + (1 - 0.5**2))
    only_connect = ft.gift_distribution(0.0, 1.0, 0.0, 0.0, 3, read_cap=2)
    assert only_connect["calls"] == pytest.approx(3)  # never refused
    assert ft.gift_distribution(0.0, 0.0, 1.0, 0.0, 3, read_cap=2)["calls"] == pytest.approx(2)


def test_erlang_b_stops_once_it_underflows_and_keeps_its_value():
    """The recursion stops when B has underflowed to 0 (it would stay 0): a large pool at a small
    load ends at once with the value of the full recursion."""
    assert ft.erlang_b(ft.MAX_WORKERS, 1.0) == 0.0
    b = 1.0
    for k in range(1, 41):
        b = 5.0 * b / (k + 5.0 * b)
    assert ft.erlang_b(40, 5.0) == b


def test_importing_the_package_loads_no_plotting():
    import subprocess
    import sys

    code = ("import sys, hotkeylab.fault_tolerance, hotkeylab.fault_tolerance.model\n"
            "print(','.join(m for m in ('matplotlib', 'ipywidgets', 'IPython') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_practice_outcomes_are_ledger_outcomes():
    """One set of outcome codes: each run's log holds hotkeylab.sim.Outcome codes whose ledger is
    the run's; the practice-specific answers are named (ejection's Answer, gift_config's Claim)."""
    ej = ft.simulate_ejection(replace(ft.SEED_EJECTION_OVERLOAD, horizon_ms=12_000.0), seed=0)
    assert ej.ledger.rejected == int(np.isin(ej.log["answer"], [ft.Answer.ERROR, ft.Answer.BUSY, ft.Answer.NO_SERVER]).sum())
    for run in (ej, ft.simulate_retry(replace(ft.SEED_RETRY, horizon_ms=12_000.0), seed=0),
                ft.simulate_pool(replace(ft.SEED_POOL_INCIDENT, horizon_ms=12_000.0), seed=0)):
        from hotkeylab.sim import Ledger

        assert Ledger.from_outcomes(run.log["outcome"]).as_dict().items() <= run.ledger.as_dict().items()
    g = ft.simulate_gift_config(ft.SEED_GIFT_CONFIG, seed=0)
    assert int((g.log["code"] == ft.Claim.ERROR).sum()) == g.ledger.extra["errors"]
