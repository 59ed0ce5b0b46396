"""hotkeylab.rtt (notebook 02): the seed's numbers, the fitted cycle and the part under the lock, the
SimPy lock model against its closed forms, 01b's committed measurements, bad input."""

import dataclasses

import matplotlib.pyplot as plt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hotkeylab import capacity, rtt


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_sketch_reproduces_the_seed():
    assert rtt.SKETCH.cycle_ms(rtt.RTT_B_MS) == pytest.approx(2.9)
    assert rtt.SKETCH.cycle_ms(rtt.RTT_B_MS) == pytest.approx(capacity.lock_hold_ms(rtt.RTT_B_MS))
    assert round(rtt.SKETCH.tps(rtt.RTT_B_MS), 1) == 344.8  # seed: 345
    assert round(rtt.SKETCH.tps(rtt.RTT_C_MS), 1) == 144.9  # seed: 144


def test_fitted_transaction_goes_through_the_measurements():
    k, fixed = capacity.fit_round_trips(rtt.MEASURED)
    assert rtt.FITTED.round_trips == pytest.approx(k)  # 11: round trips per merged commit (whole cycle)
    assert rtt.FITTED.fixed_ms == pytest.approx(fixed)  # 10.5 ms
    # the sketch's statements keep their 0.9 ms; the rest of the intercept is other_ms
    assert rtt.FITTED.statements * rtt.FITTED.statement_ms == pytest.approx(rtt.SKETCH.fixed_ms)
    assert rtt.FITTED.other_ms == pytest.approx(fixed - rtt.SKETCH.fixed_ms)
    for r, batch in rtt.MEASURED:
        assert rtt.FITTED.cycle_ms(r) == pytest.approx(batch)
        assert rtt.FITTED.tps(r) == pytest.approx(capacity.tps_ceiling(batch))
    assert rtt.FITTED.tps(rtt.RTT_C_MS) / rtt.FITTED.tps(rtt.RTT_B_MS) == pytest.approx(16 / 27)


def test_part_under_the_lock_is_the_cycle_minus_two_round_trips():
    assert rtt.OUTSIDE_ROUND_TRIPS == 2  # begin + the SELECT's way in (½) + the COMMIT reply's way back (½)
    for t in (rtt.SKETCH, rtt.FITTED):
        assert t.under_lock_round_trips == t.round_trips - rtt.OUTSIDE_ROUND_TRIPS
        for r in (0.0, rtt.RTT_B_MS, rtt.RTT_C_MS, 3.0):
            assert t.cycle_ms(r) - t.hold_ms(r) == pytest.approx(rtt.OUTSIDE_ROUND_TRIPS * r)
            assert t.lock_ceiling(r) >= t.tps(r)
    assert rtt.SKETCH.hold_ms(rtt.RTT_B_MS) == pytest.approx(2 * rtt.RTT_B_MS + rtt.SKETCH.fixed_ms)
    assert rtt.FITTED.hold_ms(rtt.RTT_B_MS) == pytest.approx(rtt.BATCH_B_MS - 2 * rtt.RTT_B_MS)
    assert rtt.FITTED.hold_ms(rtt.RTT_C_MS) == pytest.approx(rtt.BATCH_C_MS - 2 * rtt.RTT_C_MS)


def test_fitted_transaction_refuses_impossible_lines():
    with pytest.raises(ValueError, match="round_trips"):
        rtt.fitted_transaction([(0.5, 27.0), (1.5, 16.0)])
    with pytest.raises(ValueError, match="fixed_ms"):
        rtt.fitted_transaction([(0.5, 2.0), (1.5, 6.0)])  # intercept 0 < the sketch's 0.9 ms


def test_transaction_validates():
    with pytest.raises(ValueError, match="round_trips"):
        rtt.Transaction(round_trips=-1)
    with pytest.raises(ValueError, match="statement_ms"):
        rtt.Transaction(statement_ms=float("nan"))
    with pytest.raises(ValueError, match="rtt_ms"):
        rtt.Owner("X", rtt_ms=-0.5)
    with pytest.raises(ValueError, match="outside_round_trips"):
        rtt.Transaction(round_trips=1)  # fewer round trips than the 2 outside the lock
    with pytest.raises(ValueError, match="other_ms"):
        rtt.Transaction(other_ms=-1)


@pytest.mark.parametrize("owners", [(0,), (1,), (0, 1), (1, 0)])
def test_simulation_matches_closed_form_with_constant_rtt(owners):
    os_ = tuple(rtt.SEED_OWNERS[i] for i in owners)
    run = rtt.simulate_lock(os_, horizon_ms=20_000, seed=0)
    assert not run.status.truncated
    # within one period of the formula
    assert abs(run.tps() - run.closed_form_tps()) <= 1000.0 * len(os_) / run.horizon_ms + 1e-9


def test_one_owner_runs_at_its_cycle_and_leaves_the_lock_idle_outside():
    for o in rtt.SEED_OWNERS:
        run = rtt.simulate_lock((o,), horizon_ms=20_000, seed=0)
        assert run.closed_form_tps() == pytest.approx(capacity.tps_ceiling(o.cycle_ms()))
        assert run.lock_busy_share() == pytest.approx(o.hold_ms() / o.cycle_ms(), abs=0.01)


def test_two_owners_keep_the_lock_busy_and_beat_the_seeds_simplification():
    run = rtt.simulate_lock(horizon_ms=60_000, seed=0)
    holds = sum(o.hold_ms() for o in rtt.SEED_OWNERS)
    assert run.closed_form_tps() == pytest.approx(2000.0 / holds)  # 15 + 24 ms per pair of batches
    assert run.tps() == pytest.approx(run.closed_form_tps(), rel=0.002)
    assert run.lock_busy_share() == pytest.approx(1.0, abs=0.01)
    assert run.tps() > capacity.alternating_owners_tps([rtt.BATCH_B_MS, rtt.BATCH_C_MS])
    # strict alternation: the owners' commit counts differ by at most one
    assert abs(run.commits["B"] - run.commits["C"]) <= 1


def test_no_time_outside_the_lock_gives_the_seeds_46_5():
    t = dataclasses.replace(rtt.FITTED, outside_round_trips=0)
    owners = (rtt.Owner("B", rtt.RTT_B_MS, t), rtt.Owner("C", rtt.RTT_C_MS, t))
    run = rtt.simulate_lock(owners, horizon_ms=60_000, seed=0)
    seed = capacity.alternating_owners_tps([rtt.BATCH_B_MS, rtt.BATCH_C_MS])
    assert rtt.turn_taking_tps(owners) == pytest.approx(seed)
    assert run.tps() == pytest.approx(seed, rel=0.002)


def test_a_long_outside_part_breaks_the_alternation():
    # the sketch: C spends 3 ms outside the lock, longer than B's 1.9 ms hold, so B takes the lock
    # again before C is back: no strict turns, and the closed form refuses
    owners = (rtt.Owner("B", rtt.RTT_B_MS, rtt.SKETCH), rtt.Owner("C", rtt.RTT_C_MS, rtt.SKETCH))
    with pytest.raises(ValueError, match="strict turns"):
        rtt.turn_taking_tps(owners)
    run = rtt.simulate_lock(owners, horizon_ms=20_000, seed=0)
    assert run.commits["B"] == pytest.approx(2 * run.commits["C"], abs=2)
    assert run.lock_busy_share() < 0.95
    # each owner is still bounded by its own cycle
    for o in owners:
        assert run.tps(o.name) <= capacity.tps_ceiling(o.cycle_ms()) + 1000.0 / run.horizon_ms


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_rtt_agrees_within_2_percent(seed):
    run = rtt.simulate_lock(horizon_ms=120_000, seed=seed, rtt_cv=0.5, keep_intervals=False)
    assert run.tps() == pytest.approx(run.closed_form_tps(), rel=0.02)


def test_same_seed_same_run():
    a = rtt.simulate_lock(horizon_ms=5_000, seed=7, rtt_cv=1.0)
    b = rtt.simulate_lock(horizon_ms=5_000, seed=7, rtt_cv=1.0)
    assert a.commits == b.commits
    assert a.intervals == b.intervals


def test_lock_is_never_held_twice():
    run = rtt.simulate_lock(horizon_ms=3_000, seed=3, rtt_cv=0.8)
    iv = sorted(run.intervals, key=lambda x: x[1])
    for (_, _, end), (_, start, _) in zip(iv, iv[1:], strict=False):
        assert start >= end - 1e-9


@given(
    rtt_b=st.floats(0.0, 5.0),
    rtt_c=st.floats(0.0, 5.0),
    k=st.integers(0, 15),
    sm=st.floats(0.01, 5.0),
    cv=st.floats(0.0, 2.0),
    seed=st.integers(0, 10_000),
)
def test_any_parameters_end_and_respect_the_ceiling(rtt_b, rtt_c, k, sm, cv, seed):
    t = rtt.Transaction(round_trips=k, statements=3, statement_ms=sm, outside_round_trips=min(k, 2))
    owners = (rtt.Owner("B", rtt_b, t), rtt.Owner("C", rtt_c, t))
    run = rtt.simulate_lock(owners, horizon_ms=500, seed=seed, rtt_cv=cv, max_events=5_000)
    assert run.status.t_end_ms <= 500 + 1e-9
    # the lock can never be busy longer than the horizon
    busy = sum(end - start for _, start, end in run.intervals)
    assert busy <= 500 + 1e-6


def test_bounded_by_event_cap():
    t = rtt.Transaction(round_trips=10, statements=0, statement_ms=0.0)
    owners = (rtt.Owner("B", 1e-6, t),)
    run = rtt.simulate_lock(owners, horizon_ms=1e6, seed=0, max_events=1000)
    assert run.status.truncated
    assert run.status.events == 1000


def test_simulate_lock_bad_input():
    with pytest.raises(ValueError, match="owners"):
        rtt.simulate_lock(())
    with pytest.raises(ValueError, match="distinct"):
        rtt.simulate_lock((rtt.SEED_OWNERS[0], rtt.SEED_OWNERS[0]))
    with pytest.raises(ValueError, match="round_trips"):
        rtt.simulate_lock((rtt.Owner("B", 0.5, rtt.Transaction(round_trips=2.5)),))
    with pytest.raises(ValueError, match="horizon_ms"):
        rtt.simulate_lock(horizon_ms=0)
    with pytest.raises(ValueError, match="rtt_cv"):
        rtt.simulate_lock(rtt_cv=-1)
    with pytest.raises(ValueError, match="seed"):
        rtt.simulate_lock(seed=-1)
    zero = rtt.Owner("Z", 0.0, rtt.Transaction(round_trips=3, statements=0, statement_ms=0))
    with pytest.raises(ValueError, match="owners\\[0\\]"):
        rtt.simulate_lock((zero,))
    with pytest.raises(ValueError, match="owners"):
        rtt.turn_taking_tps(())


def test_scenarios_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        rtt.SKETCH.round_trips = 5


def test_lab_rows_read_01bs_committed_measurements():
    from hotkeylab import db_lab

    machine, rows = rtt.lab_rows()
    assert machine.get("mariadb")
    _, runs = db_lab.load_runs()
    for row in rows:
        one = db_lab.hot_runs(runs, row.rtt_ms)[1]
        assert row.one_thread_tps == one.tps and row.one_thread_hold_ms == one.hold_ms
        # one client thread is a serial owner: its rate is 1000 / its cycle, not 1000 / its hold
        assert row.one_thread_tps == pytest.approx(capacity.tps_ceiling(row.one_thread_cycle_ms), rel=0.02)
        # more threads keep the lock busy: the plateau is near 1000 / hold (01b: early release lifts it)
        assert row.plateau_tps == pytest.approx(capacity.tps_ceiling(row.one_thread_hold_ms), rel=0.05)
    k, _ = rtt.lab_fit(rows)["hold"]
    assert k == pytest.approx(rows[0].round_trips_under_lock, abs=0.3)  # the fit recovers the lab's 3


def test_figures_draw():
    for f in (rtt.plot_tps_vs_rtt, rtt.plot_hold_vs_rtt, rtt.plot_hold_budget, rtt.plot_cycle):
        ax = f()
        assert ax.get_xlabel()
        assert ax.get_ylabel() or f in (rtt.plot_hold_budget, rtt.plot_cycle)
    with pytest.raises(ValueError, match="rtt_max_ms"):
        rtt.plot_tps_vs_rtt(rtt_max_ms=0)
