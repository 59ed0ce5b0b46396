"""hotkeylab.rtt (notebook 02): the seed's numbers, the fitted transaction, the SimPy lock model
against its closed forms, bad input."""

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
    assert rtt.SKETCH.hold_ms(rtt.RTT_B_MS) == pytest.approx(2.9)
    assert round(rtt.SKETCH.tps(rtt.RTT_B_MS), 1) == 344.8  # seed: 345
    assert round(rtt.SKETCH.tps(rtt.RTT_C_MS), 1) == 144.9  # seed: 144


def test_fitted_transaction_goes_through_the_measurements():
    assert rtt.FITTED.round_trips == 11.0
    assert rtt.FITTED.fixed_ms == pytest.approx(10.5)
    for r, batch in rtt.MEASURED:
        assert rtt.FITTED.hold_ms(r) == pytest.approx(batch)
    assert rtt.FITTED.tps(rtt.RTT_C_MS) / rtt.FITTED.tps(rtt.RTT_B_MS) == pytest.approx(16 / 27)


def test_fitted_transaction_refuses_negative_lines():
    with pytest.raises(ValueError, match="round_trips"):
        rtt.fitted_transaction([(0.5, 27.0), (1.5, 16.0)])
    with pytest.raises(ValueError, match="statements"):
        rtt.fitted_transaction(statements=0)


def test_transaction_validates():
    with pytest.raises(ValueError, match="round_trips"):
        rtt.Transaction(round_trips=-1)
    with pytest.raises(ValueError, match="statement_ms"):
        rtt.Transaction(statement_ms=float("nan"))
    with pytest.raises(ValueError, match="rtt_ms"):
        rtt.Owner("X", rtt_ms=-0.5)


@pytest.mark.parametrize("owners", [(0,), (1,), (0, 1), (1, 0)])
def test_simulation_matches_closed_form_exactly_with_constant_rtt(owners):
    os_ = tuple(rtt.SEED_OWNERS[i] for i in owners)
    run = rtt.simulate_lock(os_, horizon_ms=20_000, seed=0)
    assert not run.status.truncated
    cycle_ms = sum(o.hold_ms() for o in os_)
    # within one cycle of the formula
    assert abs(run.tps() - run.closed_form_tps()) <= 1000.0 * len(os_) / run.horizon_ms + 1e-9
    assert run.closed_form_tps() == pytest.approx(1000.0 * len(os_) / cycle_ms)


def test_two_owners_give_the_seed_46_5():
    run = rtt.simulate_lock(horizon_ms=60_000, seed=0)
    assert run.closed_form_tps() == pytest.approx(capacity.alternating_owners_tps([16, 27]))
    assert run.tps() == pytest.approx(46.5, abs=0.05)
    # strict alternation: the owners' commit counts differ by at most one
    assert abs(run.commits["B"] - run.commits["C"]) <= 1


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
    t = rtt.Transaction(round_trips=k, statements=3, statement_ms=sm)
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


def test_scenarios_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        rtt.SKETCH.round_trips = 5


def test_figures_draw():
    for f in (rtt.plot_tps_vs_rtt, rtt.plot_hold_vs_rtt, rtt.plot_hold_budget):
        ax = f()
        assert ax.get_xlabel()
        assert ax.get_ylabel() or f is rtt.plot_hold_budget
    with pytest.raises(ValueError, match="rtt_max_ms"):
        rtt.plot_tps_vs_rtt(rtt_max_ms=0)
