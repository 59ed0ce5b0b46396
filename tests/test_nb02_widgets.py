"""Notebook 02's what-if widget driven kernel-side, and its exercise checks."""

import math

import matplotlib.pyplot as plt
import pytest
from ipywidgets import interactive

from hotkeylab import capacity, rtt
from hotkeylab.exercise_sets import nb02_rtt_math as ex
from hotkeylab.exercises import check, ids


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _widget():
    # the same call as the notebook's widget cell
    return interactive(rtt.rtt_whatif, **rtt.whatif_controls())


def test_widget_default_is_c_as_measured():
    w = _widget()
    w.update()
    r = w.result
    assert r.cycle_ms == pytest.approx(rtt.BATCH_C_MS)
    assert r.hold_ms == pytest.approx(rtt.BATCH_C_MS - rtt.OUTSIDE_ROUND_TRIPS * rtt.RTT_C_MS)
    assert r.tps == pytest.approx(capacity.tps_ceiling(rtt.BATCH_C_MS))
    assert r.tps_b == pytest.approx(capacity.tps_ceiling(rtt.BATCH_B_MS))
    assert r.pair_tps == pytest.approx(rtt.turn_taking_tps(rtt.SEED_OWNERS))
    assert r.ax is not None


def test_widget_children_are_rtt_round_trips_fixed_time():
    w = _widget()
    labels = [c.description for c in w.children[:3]]
    assert labels == ["rtt (ms)", "round trips per cycle", "rtt-independent time (ms)"]
    assert w.children[1].min == rtt.OUTSIDE_ROUND_TRIPS


def test_moving_rtt_slider_follows_capacity():
    w = _widget()
    w.children[0].value = 0.5
    w.update()
    r = w.result
    assert r.cycle_ms == pytest.approx(capacity.lock_hold_ms(0.5, r.round_trips, 1, r.fixed_ms))
    assert r.tps == pytest.approx(capacity.tps_ceiling(rtt.BATCH_B_MS))
    w.children[0].value = 3.0
    w.update()
    assert w.result.tps == pytest.approx(capacity.tps_ceiling(capacity.lock_hold_ms(3.0, r.round_trips, 1, r.fixed_ms)))
    assert w.result.tps < r.tps


def test_round_trip_slider_each_round_trip_costs_one_rtt():
    w = _widget()
    w.update()
    before = w.result
    w.children[1].value = int(before.round_trips) - 1
    w.update()
    assert before.cycle_ms - w.result.cycle_ms == pytest.approx(before.rtt_ms)
    assert before.hold_ms - w.result.hold_ms == pytest.approx(before.rtt_ms)
    assert w.result.tps > before.tps


def test_sketch_settings_reproduce_the_seed_sketch():
    w = _widget()
    w.children[1].value = int(rtt.SKETCH.round_trips)
    w.children[2].value = rtt.SKETCH.fixed_ms
    for rtt_ms in (rtt.RTT_B_MS, rtt.RTT_C_MS):
        w.children[0].value = rtt_ms
        w.update()
        assert w.result.tps == pytest.approx(capacity.tps_ceiling(capacity.lock_hold_ms(rtt_ms)))
    assert round(w.result.tps_b, 1) == 344.8
    assert round(w.result.tps_c, 1) == 144.9
    # the sketch's owners do not take strict turns: the pair's rate is left to the simulation
    assert math.isnan(w.result.pair_tps)


def test_fewest_round_trips_leave_only_the_outside_ones():
    w = _widget()
    w.children[1].value = w.children[1].min
    w.update()
    assert w.result.under_lock_round_trips == 0
    assert w.result.hold_ms == pytest.approx(w.result.fixed_ms)
    assert w.result.pair_tps == pytest.approx(2 * capacity.tps_ceiling(2 * w.result.fixed_ms))


def test_fixed_slider_moves_cycle_and_hold_alike():
    w = _widget()
    w.update()
    a = w.result
    w.children[2].value = 5.0
    w.update()
    b = w.result
    assert a.network_ms == b.network_ms
    assert a.cycle_ms - b.cycle_ms == pytest.approx(a.fixed_ms - 5.0)
    assert a.hold_ms - b.hold_ms == pytest.approx(a.fixed_ms - 5.0)


@pytest.mark.parametrize("rtt_ms", [0.1, 3.0])
@pytest.mark.parametrize("k", [2, 20])
@pytest.mark.parametrize("fixed", [0.5, 20.0])
def test_every_slider_end_gives_finite_numbers(rtt_ms, k, fixed):
    r = rtt.rtt_whatif(rtt_ms, k, fixed, draw=False)
    assert 0 < r.hold_ms <= r.cycle_ms
    assert r.tps > 0 and r.tps_b >= r.tps_c
    assert "ms" in r._repr_markdown_()


def test_whatif_markdown_and_no_draw():
    r = rtt.rtt_whatif(draw=False)
    assert r.ax is None
    assert "27.0 ms" in r._repr_markdown_()
    with pytest.raises(ValueError, match="rtt_ms"):
        rtt.rtt_whatif(rtt_ms=-1, draw=False)


# ---------------------------------------------------------------------- exercises
def test_exercise_ids_registered():
    assert {"02.tps_at_3ms", "02.commits_at_3ms", "02.round_trips_to_remove", "02.no_round_trips"} <= set(ids())


def test_expected_answers_come_from_the_account():
    f = rtt.FITTED
    assert ex.tps_at_3ms() == pytest.approx(1000 / (4 * 3 + 3 * 0.3))
    # B (hold 16 − 2 × 0.5) and an owner 3 ms away (hold 43.5 − 2 × 3) taking turns
    hold_far = f.cycle_ms(3.0) - 2 * 3.0
    assert ex.commits_at_3ms() == pytest.approx(2000 / (rtt.BATCH_B_MS - 2 * rtt.RTT_B_MS + hold_far))
    assert ex.round_trips_to_remove() == 8
    assert ex.no_round_trips() == pytest.approx(2000 / (2 * f.fixed_ms))


@pytest.mark.parametrize(
    "exercise_id, right, wrong",
    [
        ("02.tps_at_3ms", lambda: ex.tps_at_3ms(), lambda: ex.tps_at_3ms() * 1.2),
        ("02.commits_at_3ms", lambda: ex.commits_at_3ms(), lambda: rtt.FITTED.tps(3.0)),
        ("02.round_trips_to_remove", lambda: ex.round_trips_to_remove(), lambda: ex.round_trips_to_remove() - 1),
        ("02.no_round_trips", lambda: ex.no_round_trips(), lambda: capacity.tps_ceiling(rtt.BATCH_B_MS)),
    ],
)
def test_right_answer_ok_wrong_answer_not(exercise_id, right, wrong):
    assert check(exercise_id, right()).ok
    fb = check(exercise_id, wrong())
    assert not fb.ok
    assert fb.message


def test_feedback_is_specific():
    seed_style = capacity.alternating_owners_tps([rtt.FITTED.cycle_ms(rtt.RTT_B_MS), rtt.FITTED.cycle_ms(3.0)])
    assert "simplification" in check("02.commits_at_3ms", seed_style).message
    assert "alone" in check("02.commits_at_3ms", rtt.FITTED.tps(3.0)).message
    assert "outside the lock" in check("02.tps_at_3ms", rtt.SKETCH.lock_ceiling(3.0)).message
    assert "16.5 ms" in check("02.round_trips_to_remove", 7).message
    assert "fewer" in check("02.round_trips_to_remove", 9).message
    assert "whole" in check("02.round_trips_to_remove", 7.5).message
    assert "C alone" in check("02.no_round_trips", ex.STORED_PROCEDURE.tps(rtt.RTT_C_MS)).message
    assert not check("02.round_trips_to_remove", "eight").ok
    assert not check("02.tps_at_3ms", math.nan).ok
    assert not check("02.tps_at_3ms", None).ok
