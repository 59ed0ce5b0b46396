import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hotkeylab import capacity as c


def test_seed_lock_hold_and_tps():
    assert c.lock_hold_ms(0.5) == pytest.approx(2.9)
    assert c.lock_hold_ms(1.5) == pytest.approx(6.9)
    assert round(c.tps_ceiling(c.lock_hold_ms(0.5)), 1) == 344.8  # seed: 345
    assert round(c.tps_ceiling(c.lock_hold_ms(1.5)), 1) == 144.9  # seed: 144


def test_fit_round_trips_on_the_seed_measurements():
    rt, fixed = c.fit_round_trips([(0.5, 16), (1.5, 27)])
    assert rt == pytest.approx(11.0)
    assert fixed == pytest.approx(10.5)


def test_fit_round_trips_is_least_squares_on_noisy_points():
    rng = np.random.default_rng(1)
    rtts = np.linspace(0.2, 3.0, 30)
    ys = 7.0 * rtts + 4.0 + rng.normal(0, 0.05, rtts.size)
    rt, fixed = c.fit_round_trips(zip(rtts, ys, strict=True))
    assert rt == pytest.approx(7.0, abs=0.1)
    assert fixed == pytest.approx(4.0, abs=0.1)


def test_alternating_owners():
    assert c.alternating_owners_tps([16, 27]) == pytest.approx(1000 / 21.5)
    assert round(c.alternating_owners_tps([16, 27]), 1) == 46.5  # seed: 46
    share = c.alternating_owners_tps([16, 27]) / c.alternating_owners_tps([16])
    assert round(100 * share, 1) == 74.4  # the seed writes 74% (its own 46 / 62)
    assert c.alternating_owners_tps([16]) == pytest.approx(62.5)


def test_queue_limits():
    assert c.critical_queue_length(200, 16) == 12.5
    assert c.safe_queue_limit(200, 16, 1.0) == 12
    assert c.safe_queue_limit(200, 16, 0.5) == 6
    assert c.critical_queue_length(math.inf, 16) == math.inf


def test_retries():
    assert c.retry_success(0.95, 2) == pytest.approx(0.9975)
    assert c.retry_success(0.999, 1) == pytest.approx(0.999)
    assert c.retry_amplification(1.0, 3) == 3
    assert c.retry_amplification(0.0, 5) == 1
    assert c.retry_amplification(0.5, math.inf) == pytest.approx(2.0)
    assert c.retry_amplification(0.05, 2) == pytest.approx(1.05)


@given(st.floats(0, 1), st.integers(1, 50))
def test_retry_amplification_matches_series(p, a):
    assert c.retry_amplification(p, a) == pytest.approx(sum(p**k for k in range(a)), rel=1e-9)


def test_littles_law_and_pk():
    assert c.littles_law(rate_per_s=100, time_in_system_ms=50) == pytest.approx(5.0)
    # M/M/1 at rho = 0.5: Wq = S
    assert c.pk_mean_wait_ms(50, 10, 1.0) == pytest.approx(10.0)
    # M/D/1 is half of M/M/1
    assert c.md1_mean_wait_ms(50, 10) == pytest.approx(5.0)
    assert c.pk_mean_wait_ms(100, 10) == math.inf


def test_bistable_band_and_growth():
    assert c.bistable_band(62.5, 1) == pytest.approx((31.25, 62.5))
    assert c.bistable_band(62.5, math.inf) == (0.0, 62.5)
    assert c.queue_growth_rate(47.5, 10, 46.5) == pytest.approx(11.0)


def test_batcher_rate_limits():
    # timer-bound at low load: one batch per (1/λ + T)
    assert c.batcher_batch_rate(10, 20, 20) == pytest.approx(1000 / (100 + 20), rel=1e-6)
    # count-bound at very high load: λ / k
    assert c.batcher_batch_rate(1e6, 20, 20) == pytest.approx(1e6 / 20, rel=1e-3)
    assert c.batcher_batch_rate(600) == pytest.approx(46.3, abs=0.05)
    assert c.batcher_batch_rate(720) == pytest.approx(47.5, abs=0.05)
    assert c.batcher_mean_batch_size(600) == pytest.approx(600 / c.batcher_batch_rate(600))


def test_batcher_rate_vs_monte_carlo():
    rng = np.random.default_rng(7)
    lam, k, T = 0.6, 20, 20.0  # per ms
    n_batches, t, i = 0, 0.0, 0
    gaps = rng.exponential(1 / lam, 400_000)
    arrivals = np.cumsum(gaps)
    while i < arrivals.size - k:
        open_t = arrivals[i]
        j = i + 1
        while j < i + k and arrivals[j] <= open_t + T:
            j += 1
        n_batches += 1
        i = j
    t = arrivals[i]
    assert n_batches / t * 1000 == pytest.approx(c.batcher_batch_rate(600, k, T), rel=0.01)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: c.lock_hold_ms(-1), "rtt_ms"),
        (lambda: c.lock_hold_ms(float("nan")), "rtt_ms"),
        (lambda: c.lock_hold_ms(0.5, round_trips=-2), "round_trips"),
        (lambda: c.lock_hold_ms(0, statement_ms=0), "positive hold"),
        (lambda: c.tps_ceiling(0), "hold_ms"),
        (lambda: c.tps_ceiling(float("inf")), "hold_ms"),
        (lambda: c.fit_round_trips([(1, 2)]), "points"),
        (lambda: c.fit_round_trips([(1, 2), (1, 3)]), "distinct"),
        (lambda: c.alternating_owners_tps([]), "batch_ms"),
        (lambda: c.alternating_owners_tps([16, 0]), "batch_ms[1]"),
        (lambda: c.critical_queue_length(200, 0), "batch_ms"),
        (lambda: c.safe_queue_limit(200, 16, 0), "safety"),
        (lambda: c.safe_queue_limit(200, 16, 1.5), "safety"),
        (lambda: c.retry_success(1.2, 2), "p_success"),
        (lambda: c.retry_success(0.5, 0), "attempts"),
        (lambda: c.retry_amplification(-0.1, 2), "p_fail"),
        (lambda: c.retry_amplification(0.1, 1.5), "attempts"),
        (lambda: c.littles_law(rate_per_s=-1, time_in_system_ms=1), "rate_per_s"),
        (lambda: c.pk_mean_wait_ms(10, 1, -1), "service_scv"),
        (lambda: c.batcher_batch_rate(600, 0), "max_rows"),
        (lambda: c.bistable_band(0, 1), "service_rate_per_s"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name.replace("[", r"\[").replace("]", r"\]")):
        call()


def test_booleans_are_not_numbers():
    with pytest.raises(ValueError, match="rtt_ms"):
        c.lock_hold_ms(True)
    with pytest.raises(ValueError, match="attempts"):
        c.retry_success(0.5, True)


def test_closed_loop_tps_one_serial_thread_is_the_seeds_rate():
    # one thread: 1000 / cycle, the seed's 345 at RTT 0.5 ms; many threads: 1000 / hold
    cycle, hold = c.lock_hold_ms(0.5), 2 * 0.5 + 3 * 0.3
    assert c.closed_loop_tps(1, cycle, hold) == pytest.approx(1000 / 2.9)
    assert c.closed_loop_tps(32, cycle, hold) == pytest.approx(c.tps_ceiling(hold))
    assert c.extra_thread_gain(cycle, hold) == pytest.approx(cycle / hold - 1)
    assert c.extra_thread_gain(16.0, 15.0) == pytest.approx(1 / 15)  # the seed's merged commit


@given(st.floats(0.1, 50), st.floats(0.0, 50), st.integers(1, 64))
def test_extra_thread_gain_never_beats_the_outside_share(hold, outside, n):
    gain = c.extra_thread_gain(hold + outside, hold, threads=n)
    assert 0.0 <= gain <= min(n - 1, outside / hold) + 1e-9
