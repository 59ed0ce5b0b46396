"""hotkeylab.hot_row: the hot row under S2PL, the group commit, and M/D/1 on the lock."""

from __future__ import annotations

import math
from dataclasses import replace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hotkeylab import capacity, hot_row
from hotkeylab.hot_row import (
    SEED_GROUP_COMMIT,
    SEED_LOCK,
    SEED_ROW,
    GroupCommit,
    HotRow,
    OpenLoop,
    simulate_group_commit,
    simulate_open_loop,
    simulate_threads,
    sweep_threads,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# --------------------------------------------------------------------------- presets
def test_presets_carry_the_seed_numbers():
    # "单次耗时为4次rtt+2条SQL耗时+1次commit耗时" is one serial thread's whole cycle
    assert SEED_ROW.cycle_ms == pytest.approx(capacity.lock_hold_ms(0.5)) == pytest.approx(2.9)
    assert 1000 / SEED_ROW.cycle_ms == pytest.approx(344.8, abs=0.05)  # the seed writes 345
    assert 1000 / hot_row.SEED_ROW_CROSS_DC.cycle_ms == pytest.approx(144.9, abs=0.05)  # the seed writes 144
    # outside the lock: the begin round trip + the SELECT's way in + the COMMIT reply's way back
    assert SEED_ROW.outside_ms == pytest.approx(2 * SEED_ROW.rtt_ms)
    assert SEED_ROW.before_lock_ms == pytest.approx(1.5 * SEED_ROW.rtt_ms)
    assert SEED_ROW.after_lock_ms == pytest.approx(0.5 * SEED_ROW.rtt_ms)
    assert SEED_ROW.hold_ms == pytest.approx(2 * 0.5 + 3 * 0.3)
    assert (SEED_GROUP_COMMIT.max_rows, SEED_GROUP_COMMIT.max_wait_ms, SEED_GROUP_COMMIT.commit_ms) == (20, 20, 16)
    # the seed's merged commit: 16 ms at RTT 0.5, 27 ms at 1.5 ("平均耗时为16ms左右", "27ms左右")
    assert hot_row.SEED_MERGED.cycle_ms == pytest.approx(16.0)
    assert replace(hot_row.SEED_MERGED, rtt_ms=1.5).cycle_ms == pytest.approx(27.0)
    assert SEED_LOCK.rho == pytest.approx(0.5)


@pytest.mark.parametrize("rtt_ms", [0.5, 1.5])
def test_one_serial_thread_runs_at_the_seeds_rate(rtt_ms):
    # closed form, simulation and the seed's own arithmetic 1000 / (4 × RTT + 3 × 0.3) agree
    sc = replace(SEED_ROW, rtt_ms=rtt_ms, threads=1, horizon_ms=5_000.0)
    seed_tps = 1000 / (4 * rtt_ms + 3 * 0.3)
    run = simulate_threads(sc, seed=0)
    assert hot_row.closed_loop_tps(sc, 1) == pytest.approx(seed_tps)
    assert capacity.closed_loop_tps(1, sc.cycle_ms, sc.hold_ms) == pytest.approx(seed_tps)
    assert run.tps == pytest.approx(seed_tps, rel=0.005)
    assert run.mean_latency_ms == pytest.approx(sc.cycle_ms)
    # the lock is busy hold / cycle of the time: the rest is the network outside it
    assert run.summary["lock_busy_share"] == pytest.approx(sc.hold_ms / sc.cycle_ms, rel=0.01)


def test_a_second_thread_gains_only_the_outside_part():
    for sc in (SEED_ROW, hot_row.SEED_MERGED, replace(hot_row.SEED_MERGED, rtt_ms=1.5)):
        gain = capacity.extra_thread_gain(sc.cycle_ms, sc.hold_ms)
        assert gain == pytest.approx(min(1.0, sc.outside_ms / sc.hold_ms))
        one = simulate_threads(sc, seed=0, threads=1, horizon_ms=20_000.0, warmup_ms=500.0)
        many = [simulate_threads(sc, seed=0, threads=n, horizon_ms=20_000.0, warmup_ms=500.0) for n in (2, 8)]
        for run in many:
            assert run.tps / one.tps - 1 == pytest.approx(gain, abs=0.01)
            assert run.summary["lock_busy_share"] == pytest.approx(1.0, abs=0.005)
    # the seed's merged commit: 2 RTT = 1 ms of 16 outside the lock, so 1/15
    assert capacity.extra_thread_gain(16.0, 15.0) == pytest.approx(1 / 15)
    assert capacity.extra_thread_gain(16.0, 15.0, threads=32) == pytest.approx(1 / 15)


# --------------------------------------------------------------------------- (a) closed loop
def test_tps_plateaus_at_the_lock_ceiling():
    sweep = sweep_threads(SEED_ROW, threads=[1, 2, 4, 8, 16, 32], seed=0)
    ceiling = capacity.tps_ceiling(SEED_ROW.hold_ms)
    assert sweep.ceiling_tps == pytest.approx(ceiling)
    # one thread also spends 2 round trips outside the lock, so it stays below the ceiling
    assert sweep.tps[0] == pytest.approx(1000 / SEED_ROW.cycle_ms, rel=0.01)
    assert sweep.tps[0] < 0.7 * ceiling
    # from 2 threads on the lock is never idle: flat at 1000 / hold, never above it
    for tps in sweep.tps[1:]:
        assert tps == pytest.approx(ceiling, rel=0.01)
    np.testing.assert_allclose(sweep.tps, sweep.tps_closed_form, rtol=0.01)
    # 32 threads do not beat 2
    assert sweep.tps[-1] <= sweep.tps[1] * 1.01


def test_plateau_holds_with_random_hold_times():
    sc = replace(SEED_ROW, threads=16, hold_cv=0.5, horizon_ms=20_000.0, warmup_ms=500.0)
    run = simulate_threads(sc, seed=3)
    assert run.tps == pytest.approx(capacity.tps_ceiling(sc.hold_ms), rel=0.03)


@pytest.mark.parametrize("threads", [1, 4, 16, 32])
def test_latency_follows_littles_law(threads):
    run = simulate_threads(SEED_ROW, seed=1, threads=threads, horizon_ms=3000.0)
    # L = λ W: the threads are the customers, TPS the rate, latency the time in system
    assert capacity.littles_law(rate_per_s=run.tps, time_in_system_ms=run.mean_latency_ms) == pytest.approx(
        threads, rel=0.02
    )
    assert run.mean_latency_ms == pytest.approx(hot_row.closed_loop_latency_ms(run.scenario), rel=0.02)
    if threads >= 2:  # at the plateau: latency = threads × hold
        assert run.mean_latency_ms == pytest.approx(threads * SEED_ROW.hold_ms, rel=0.02)


def test_lock_intervals_never_overlap_and_feed_the_gantt():
    run = simulate_threads(SEED_ROW, seed=0, threads=4, horizon_ms=200.0)
    ivs = sorted(run.holds, key=lambda iv: iv.start)
    assert run.ledger.served <= len(ivs) <= run.ledger.served + 4
    for a, b in zip(ivs, ivs[1:], strict=False):
        assert a.end <= b.start + 1e-9  # S2PL: one owner at a time
    assert {iv.owner for iv in ivs} == {f"thread {i}" for i in range(1, 5)}
    # a thread is never outside the lock and holding it at once
    for name in {iv.owner for iv in ivs}:
        mine = sorted([iv for iv in ivs if iv.owner == name] + [iv for iv in run.outside if iv.owner == name],
                      key=lambda iv: iv.start)
        for a, b in zip(mine, mine[1:], strict=False):
            assert a.end <= b.start + 1e-9
    ax = hot_row.plot_gantt(run, t_max_ms=30.0)
    assert len(ax.get_yticks()) == 4


# --------------------------------------------------------------------------- (c) group commit
@pytest.mark.parametrize(
    "changes",
    [
        {},  # the seed: 600/s, 20 rows / 20 ms
        {"rate_per_s": 1500.0},  # most batches fill up to 20 rows
        {"rate_per_s": 300.0, "max_wait_ms": 5.0, "commit_ms": 4.0, "per_batch_ms": 4.0},
        {"rate_per_s": 600.0, "servers": 2},  # each batcher sees half the requests
    ],
)
def test_batch_rate_matches_the_closed_form(changes):
    run = simulate_group_commit(SEED_GROUP_COMMIT, seed=2, horizon_ms=30_000.0, **changes)
    s = run.summary
    assert s["batch_rate_per_s"] == pytest.approx(hot_row.group_commit_batch_rate(run.scenario), rel=0.02)
    assert s["batch_rate_closed_form"] == pytest.approx(hot_row.group_commit_batch_rate(run.scenario))
    mean_rows = capacity.batcher_mean_batch_size(
        run.scenario.rate_per_s / run.scenario.servers, run.scenario.max_rows, run.scenario.max_wait_ms
    )
    assert s["mean_batch_rows"] == pytest.approx(mean_rows, rel=0.03)


def test_seed_load_closes_most_batches_on_the_timer():
    run = simulate_group_commit(SEED_GROUP_COMMIT, seed=0)
    s = run.summary
    assert s["timer_share"] > 0.9
    assert s["batch_rate_per_s"] > 1.4 * SEED_GROUP_COMMIT.rate_per_s / SEED_GROUP_COMMIT.max_rows
    assert s["rho"] < 1 and s["lock_utilisation"] == pytest.approx(s["rho_lock"], rel=0.03)
    assert s["mean_n_ms"] == pytest.approx(s["mean_n_closed_form_ms"], rel=0.02)
    assert s["mean_n_closed_form_ms"] == pytest.approx(SEED_GROUP_COMMIT.commit_ms, rel=0.01)  # the calibration
    assert s["rows_per_s"] == pytest.approx(SEED_GROUP_COMMIT.rate_per_s, rel=0.03)
    # a request waits at most max_wait_ms in the batcher, then its own commit (and any queue)
    assert s["mean_latency_ms"] > SEED_GROUP_COMMIT.commit_ms
    assert run.latency_ms.min() >= SEED_GROUP_COMMIT.n_ms(1) - 1e-9
    assert run.batch_rows.max() <= SEED_GROUP_COMMIT.max_rows


def test_n_grows_with_the_rows():
    sc = SEED_GROUP_COMMIT
    assert sc.n_ms(sc.rows_at_commit_ms) == pytest.approx(sc.commit_ms)
    assert sc.n_ms(0) == pytest.approx(capacity.lock_hold_ms(0.5))  # the seed's transaction without inserts
    assert hot_row.SEED_GROUP_COMMIT_FIXED_N.n_ms(1) == hot_row.SEED_GROUP_COMMIT_FIXED_N.n_ms(20) == 16.0
    assert sc.with_fixed_share(1.0).per_row_ms == 0.0


def test_two_servers_overload_the_row_only_if_n_is_mostly_per_batch():
    fixed = hot_row.SEED_GROUP_COMMIT_FIXED_N
    one = simulate_group_commit(fixed, seed=0, horizon_ms=10_000.0)
    two = simulate_group_commit(fixed, seed=0, horizon_ms=10_000.0, servers=2)
    assert one.summary["rho"] < 1 < two.summary["rho"]
    assert two.summary["lock_utilisation"] == pytest.approx(1.0, abs=0.01)
    assert two.summary["rows_per_s"] < 0.85 * one.summary["rows_per_s"]
    assert two.summary["mean_latency_ms"] > 10 * one.summary["mean_latency_ms"]
    # N(rows): half-size batches cost less each, so two servers at 600/s keep up
    two_n = simulate_group_commit(SEED_GROUP_COMMIT, seed=0, horizon_ms=10_000.0, servers=2)
    assert two_n.summary["rho"] < 1
    assert two_n.summary["lock_utilisation"] == pytest.approx(two_n.summary["rho_lock"], rel=0.03)
    assert two_n.summary["rows_per_s"] == pytest.approx(SEED_GROUP_COMMIT.rate_per_s, rel=0.03)
    # the threshold share of N paid per batch, from the closed form, splits the simulated outcomes
    f = hot_row.overload_share(replace(SEED_GROUP_COMMIT, servers=2))
    assert 0 < f < 1
    assert hot_row.group_commit_rho(replace(SEED_GROUP_COMMIT.with_fixed_share(f), servers=2))["rho"] == (
        pytest.approx(1.0, abs=1e-6))
    below = simulate_group_commit(SEED_GROUP_COMMIT.with_fixed_share(f - 0.1), seed=0, servers=2)
    above = simulate_group_commit(SEED_GROUP_COMMIT.with_fixed_share(min(1.0, f + 0.1)), seed=0, servers=2)
    assert below.summary["lock_utilisation"] < 0.97
    assert above.summary["lock_utilisation"] == pytest.approx(1.0, abs=0.01)
    assert above.summary["mean_queue_batches"] > 20 * max(below.summary["mean_queue_batches"], 0.05)


def test_more_threads_per_server_add_lock_waiters_not_throughput():
    base = replace(SEED_GROUP_COMMIT, rate_per_s=780.0, horizon_ms=15_000.0)
    assert hot_row.group_commit_rho(base)["rho"] < 1
    one = simulate_group_commit(base, seed=4)
    four = simulate_group_commit(base, seed=4, threads_per_server=4)
    assert four.summary["rows_per_s"] == pytest.approx(one.summary["rows_per_s"], rel=0.01)
    assert one.summary["mean_lock_waiters"] < four.summary["mean_lock_waiters"]


# --------------------------------------------------------------------------- (d) M/D/1 on the lock
@pytest.mark.parametrize("rho", [0.2, 0.5, 0.8])
def test_md1_wait_within_5_percent_of_pollaczek_khinchine(rho):
    # ~1.1 M transactions at ρ = 0.8: the spread over seeds is ~0.8 %, so 5 % is > 6 sd away
    sc = SEED_LOCK.at_load(rho, horizon_ms=4_000_000.0)
    run = simulate_open_loop(sc, seed=11, engine="fast")
    expected = capacity.md1_mean_wait_ms(sc.rate_per_s, sc.hold_ms)
    assert run.summary["samples"] > 200_000
    assert run.mean_wait_ms == pytest.approx(expected, rel=0.05)


def test_mm1_wait_within_5_percent_of_pollaczek_khinchine():
    sc = SEED_LOCK.at_load(0.5, hold_cv=1.0, horizon_ms=4_000_000.0)
    run = simulate_open_loop(sc, seed=12, engine="fast")
    assert run.mean_wait_ms == pytest.approx(capacity.pk_mean_wait_ms(sc.rate_per_s, sc.hold_ms, 1.0), rel=0.05)


def test_simpy_engine_within_5_percent_at_half_load():
    sc = SEED_LOCK.at_load(0.5, horizon_ms=1_000_000.0)  # ~170 000 transactions
    run = simulate_open_loop(sc, seed=5, engine="simpy")
    assert run.mean_wait_ms == pytest.approx(capacity.md1_mean_wait_ms(sc.rate_per_s, sc.hold_ms), rel=0.05)


@pytest.mark.parametrize("rho,cv", [(0.5, 0.0), (0.9, 0.7), (1.3, 0.0)])
def test_simpy_and_fast_engines_give_the_same_waits(rho, cv):
    sc = SEED_LOCK.at_load(rho, hold_cv=cv, horizon_ms=5_000.0, warmup_ms=0.0)
    a = simulate_open_loop(sc, seed=7, engine="simpy")
    b = simulate_open_loop(sc, seed=7, engine="fast")
    assert a.ledger.as_dict() == b.ledger.as_dict()
    np.testing.assert_allclose(a.arrival_ms, b.arrival_ms, rtol=0, atol=1e-9)
    np.testing.assert_allclose(a.wait_ms, b.wait_ms, rtol=0, atol=1e-6)


# --------------------------------------------------------------------------- determinism, bounds
def test_same_seed_same_transactions_other_seed_other_result():
    # the contract suite compares ledgers and windows; here: every lock interval and latency
    t1 = simulate_threads(SEED_ROW, seed=4, threads=5, hold_cv=0.3)
    t2 = simulate_threads(SEED_ROW, seed=4, threads=5, hold_cv=0.3)
    assert t1.holds == t2.holds and t1.summary == t2.summary
    np.testing.assert_array_equal(t1.latency_ms, t2.latency_ms)
    a = simulate_group_commit(SEED_GROUP_COMMIT, seed=9, horizon_ms=5_000.0, warmup_ms=500.0)
    b = simulate_group_commit(SEED_GROUP_COMMIT, seed=10, horizon_ms=5_000.0, warmup_ms=500.0)
    assert a.summary != b.summary
    o1 = simulate_open_loop(SEED_LOCK, seed=4, engine="fast")
    o2 = simulate_open_loop(SEED_LOCK, seed=5, engine="fast")
    assert o1.wait_ms.size != o2.wait_ms.size or not np.array_equal(o1.wait_ms, o2.wait_ms)


def test_overload_ends_at_the_horizon_with_the_books_balanced():
    # ρ > 1 on the lock: batches of one row (N(1) ≈ 3.9 ms) at 3000 requests/s
    run = simulate_group_commit(SEED_GROUP_COMMIT, seed=0, rate_per_s=3000.0, max_rows=1, horizon_ms=2_000.0,
                                warmup_ms=100.0)  # fmt: skip
    assert run.summary["rho"] > 10
    assert not run.status.truncated and run.status.t_end_ms <= 2_000.0
    assert run.ledger.in_system > 0.9 * run.ledger.arrived
    run.ledger.check()
    # the event cap stops an overloaded run early, still balanced
    capped = simulate_group_commit(SEED_GROUP_COMMIT, seed=0, rate_per_s=3000.0, max_rows=1, max_events=5_000)
    assert capped.status.truncated and capped.status.events == 5_000
    capped.ledger.check()
    for engine in ("simpy", "fast"):
        o = simulate_open_loop(SEED_LOCK.at_load(1.5, horizon_ms=10_000.0, max_events=2_000), seed=0, engine=engine)
        assert o.status.truncated
        o.ledger.check()
        assert o.ledger.in_system > 0
    assert math.isinf(SEED_LOCK.at_load(1.5).closed_form_wait_ms())


# --------------------------------------------------------------------------- ledgers (property tests)
@settings(max_examples=25, deadline=None)
@given(
    threads=st.integers(1, 12),
    rtt_ms=st.floats(0.0, 3.0),
    round_trips=st.integers(0, 12),
    outside=st.floats(0.0, 1.0),
    hold_cv=st.sampled_from([0.0, 0.3, 1.0]),
    horizon_ms=st.floats(5.0, 300.0),
    seed=st.integers(0, 2**31),
)
def test_closed_loop_ledger_balances(threads, rtt_ms, round_trips, outside, hold_cv, horizon_ms, seed):
    sc = HotRow(rtt_ms=rtt_ms, round_trips=round_trips, outside_round_trips=outside * round_trips, threads=threads,
                hold_cv=hold_cv, horizon_ms=horizon_ms, warmup_ms=0.0)  # fmt: skip
    run = simulate_threads(sc, seed=seed)
    run.ledger.check()
    assert run.ledger.in_system <= threads
    # a thread may have released the lock and still wait for its COMMIT reply at the horizon
    assert run.ledger.served <= len(run.holds) <= run.ledger.served + threads


@settings(max_examples=25, deadline=None)
@given(
    rate_per_s=st.floats(0.0, 2500.0),
    max_rows=st.integers(1, 30),
    max_wait_ms=st.floats(0.0, 40.0),
    commit_ms=st.floats(0.5, 40.0),
    fixed_share=st.floats(0.05, 1.0),
    servers=st.integers(1, 3),
    threads_per_server=st.integers(1, 3),
    horizon_ms=st.floats(50.0, 1500.0),
    seed=st.integers(0, 2**31),
)
def test_group_commit_ledger_balances(rate_per_s, max_rows, max_wait_ms, commit_ms, fixed_share, servers,
                                      threads_per_server, horizon_ms, seed):  # fmt: skip
    sc = GroupCommit(rate_per_s=rate_per_s, max_rows=max_rows, max_wait_ms=max_wait_ms, commit_ms=commit_ms,
                     per_batch_ms=fixed_share * commit_ms, outside_ms=0.25 * fixed_share * commit_ms,
                     servers=servers, threads_per_server=threads_per_server, horizon_ms=horizon_ms,
                     warmup_ms=0.0, window_ms=horizon_ms / 2)  # fmt: skip
    run = simulate_group_commit(sc, seed=seed)
    run.ledger.check()
    assert run.ledger.served == run.latency_ms.size
    assert (run.batch_rows <= max_rows).all()


@settings(max_examples=25, deadline=None)
@given(
    rho=st.floats(0.0, 2.0),
    hold_ms=st.floats(0.1, 30.0),
    hold_cv=st.sampled_from([0.0, 0.5, 1.0]),
    horizon_ms=st.floats(10.0, 3000.0),
    engine=st.sampled_from(["simpy", "fast"]),
    seed=st.integers(0, 2**31),
)
def test_open_loop_ledger_balances(rho, hold_ms, hold_cv, horizon_ms, engine, seed):
    sc = OpenLoop(hold_ms=hold_ms, hold_cv=hold_cv, horizon_ms=horizon_ms, warmup_ms=0.0).at_load(rho)
    run = simulate_open_loop(sc, seed=seed, engine=engine)
    run.ledger.check()
    assert (run.wait_ms >= -1e-9).all()


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "make,name",
    [
        (lambda: HotRow(threads=0), "threads"),
        (lambda: HotRow(warmup_ms=2000.0), "warmup_ms"),
        (lambda: HotRow(rtt_ms=0, statement_ms=0), "rtt_ms"),
        (lambda: GroupCommit(max_rows=0), "max_rows"),
        (lambda: GroupCommit(commit_ms=0), "commit_ms"),
        (lambda: GroupCommit(per_batch_ms=17.0), "per_batch_ms"),
        (lambda: GroupCommit(outside_ms=3.0), "outside_ms"),
        (lambda: SEED_GROUP_COMMIT.with_fixed_share(0), "share"),
        (lambda: HotRow(outside_round_trips=5), "outside_round_trips"),
        (lambda: capacity.closed_loop_tps(1, 1.0, 2.0), "cycle_ms"),
        (lambda: capacity.extra_thread_gain(2.0, 1.0, threads=0), "threads"),
        (lambda: GroupCommit(rate_per_s=math.inf), "rate_per_s"),
        (lambda: OpenLoop(hold_ms=0), "hold_ms"),
        (lambda: SEED_LOCK.at_load(-0.1), "rho"),
        (lambda: simulate_threads(SEED_ROW, seed=-1), "seed"),
        (lambda: simulate_open_loop(SEED_LOCK, engine="ciw"), "engine"),
        (lambda: simulate_group_commit(SEED_GROUP_COMMIT, threads_per_server=0), "threads_per_server"),
        (lambda: sweep_threads(SEED_ROW, threads=[1, 0]), "threads"),
        (lambda: sweep_threads(SEED_ROW, threads=[]), "threads"),
    ],
)
def test_bad_input_names_the_parameter(make, name):
    # NaN, strings, negatives and non-integral ints on every field are tests/test_contract.py's;
    # these are the boundaries, the cross-field ranges and the helpers' own arguments
    with pytest.raises(ValueError, match=name):
        make()


# --------------------------------------------------------------------------- widgets, kernel-side
def _child(w, description):
    return next(c for c in w.children if getattr(c, "description", None) == description)


def test_threads_widget_callback():
    w = hot_row.widget_threads()  # the same interactive the notebook displays
    assert w.result["threads"] == 8
    _child(w, "worker threads").value = 32
    w.update()
    assert w.result["threads"] == 32
    assert w.result["tps"] == pytest.approx(capacity.tps_ceiling(SEED_ROW.hold_ms), rel=0.01)
    _child(w, "RTT (ms)").value = 1.5
    w.update()
    cross = hot_row.SEED_ROW_CROSS_DC
    assert w.result["tps"] == pytest.approx(capacity.tps_ceiling(cross.hold_ms), rel=0.01)
    assert w.result["mean_latency_ms"] == pytest.approx(32 * cross.hold_ms, rel=0.02)
    _child(w, "worker threads").value = 1  # the slider's end: one serial thread at the seed's 144.9
    w.update()
    assert w.result["tps"] == pytest.approx(1000 / cross.cycle_ms, rel=0.01)


def test_batching_widget_callback():
    w = hot_row.widget_batching()
    assert w.result["rho"] < 1
    _child(w, "servers").value = 2
    w.update()
    assert w.result["rho"] < 1  # N grows with the rows: half-size batches cost less
    _child(w, "per-batch share").value = 1.0
    w.update()
    assert w.result["rho"] > 1
    _child(w, "N (ms)").value = 2  # the slider's end: N below the 2 round trips outside the lock
    w.update()
    assert w.result["batch_rate_per_s"] > 0
    assert w.result["batch_rate_per_s"] == pytest.approx(w.result["batch_rate_closed_form"], rel=0.03)


# --------------------------------------------------------------------------- exercises
def test_exercises_accept_the_computed_answer_and_reject_others():
    from hotkeylab.exercises import check

    merged_cross = replace(hot_row.SEED_MERGED, rtt_ms=1.5)
    expected = {
        "01.latency_32_threads": 32 * hot_row.SEED_ROW_CROSS_DC.hold_ms,
        "01.second_thread_gain_cross_dc": 100 * (27.0 / (27.0 - 2 * 1.5) - 1),
        "01.peak_batch_rate": capacity.batcher_batch_rate(720, max_rows=20, max_wait_ms=10),
        "01.two_servers_lock_rho_peak": hot_row.group_commit_rho(
            replace(SEED_GROUP_COMMIT, rate_per_s=780.0, servers=2))["rho_lock"],
    }
    assert merged_cross.cycle_ms == pytest.approx(27.0)
    for eid, value in expected.items():
        assert check(eid, value).ok, eid
        assert not check(eid, 1.5 * value).ok, eid
        assert not check(eid, "many").ok, eid
    # the naive answers get specific feedback
    fb = check("01.peak_batch_rate", 720 / 20)
    assert not fb.ok and "timer" in fb.message
    fb = check("01.latency_32_threads", 32 * hot_row.SEED_ROW_CROSS_DC.cycle_ms)
    assert not fb.ok and "hold" in fb.message
    # the exercises' inputs are not the ones printed in the notebook body
    assert not check("01.latency_32_threads", hot_row.closed_loop_latency_ms(SEED_ROW, 32)).ok
    assert not check("01.peak_batch_rate", capacity.batcher_batch_rate(720)).ok
    assert not check("01.two_servers_lock_rho_peak", hot_row.group_commit_rho(
        replace(SEED_GROUP_COMMIT, rate_per_s=720.0, servers=2))["rho_lock"]).ok


# --------------------------------------------------------------------------- bounded at the ends (#20)
def test_largest_horizon_runs_to_the_cap_and_huge_times_are_refused():
    import sys

    run = simulate_open_loop(SEED_LOCK, seed=0, horizon_ms=sys.float_info.max, max_events=1_000)
    assert run.status.truncated and run.ledger.arrived == 1_000
    run.ledger.check()
    with pytest.raises(ValueError, match="rtt_ms"):
        hot_row.simulate_threads(hot_row.SEED_ROW, seed=0, rtt_ms=sys.float_info.max)
    with pytest.raises(ValueError, match="max_events"):
        simulate_group_commit(SEED_GROUP_COMMIT, seed=0, max_events=10**9)
