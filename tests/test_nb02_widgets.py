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
    assert r.hold_ms == pytest.approx(rtt.BATCH_C_MS)
    assert r.tps == pytest.approx(capacity.tps_ceiling(rtt.BATCH_C_MS))
    assert r.tps_b == pytest.approx(capacity.tps_ceiling(rtt.BATCH_B_MS))
    assert r.ax is not None


def test_widget_children_are_rtt_round_trips_statement_time():
    w = _widget()
    labels = [c.description for c in w.children[:3]]
    assert labels == ["rtt (ms)", "round trips under lock", "time per statement (ms)"]


def test_moving_rtt_slider_follows_capacity():
    w = _widget()
    w.children[0].value = 0.5
    w.update()
    r = w.result
    k, stmts, sm = r.round_trips, r.statements, r.statement_ms
    assert r.hold_ms == pytest.approx(capacity.lock_hold_ms(0.5, k, stmts, sm))
    assert r.tps == pytest.approx(capacity.tps_ceiling(rtt.BATCH_B_MS))
    w.children[0].value = 3.0
    w.update()
    assert w.result.tps == pytest.approx(capacity.tps_ceiling(capacity.lock_hold_ms(3.0, k, stmts, sm)))
    assert w.result.tps < r.tps


def test_round_trip_slider_each_round_trip_costs_one_rtt():
    w = _widget()
    w.update()
    before = w.result
    w.children[1].value = int(before.round_trips) - 1
    w.update()
    assert before.hold_ms - w.result.hold_ms == pytest.approx(before.rtt_ms)
    assert w.result.tps > before.tps


def test_sketch_settings_reproduce_the_seed_sketch():
    w = _widget()
    w.children[1].value = int(rtt.SKETCH.round_trips)
    w.children[2].value = rtt.SKETCH.statement_ms
    for rtt_ms in (rtt.RTT_B_MS, rtt.RTT_C_MS):
        w.children[0].value = rtt_ms
        w.update()
        assert w.result.tps == pytest.approx(capacity.tps_ceiling(capacity.lock_hold_ms(rtt_ms)))
    assert round(w.result.tps_b, 1) == 344.8
    assert round(w.result.tps_c, 1) == 144.9


def test_zero_round_trips_makes_datacentres_equal():
    w = _widget()
    w.children[1].value = 0
    w.update()
    assert w.result.c_over_b == pytest.approx(1.0)
    assert w.result.network_share == 0.0


def test_statement_slider_moves_only_the_fixed_part():
    w = _widget()
    w.update()
    a = w.result
    w.children[2].value = 1.0
    w.update()
    b = w.result
    assert a.network_ms == b.network_ms
    assert a.hold_ms - b.hold_ms == pytest.approx(a.statements * (a.statement_ms - 1.0))


def test_whatif_markdown_and_no_draw():
    r = rtt.rtt_whatif(draw=False)
    assert r.ax is None
    assert "27.0 ms" in r._repr_markdown_()
    with pytest.raises(ValueError, match="rtt_ms"):
        rtt.rtt_whatif(rtt_ms=-1, draw=False)


# ---------------------------------------------------------------------- exercises
def test_exercise_ids_registered():
    assert {"02.tps_at_3ms", "02.commits_at_3ms", "02.round_trips_to_remove", "02.no_round_trips"} <= set(ids())


def test_expected_answers_come_from_capacity():
    assert ex.tps_at_3ms() == pytest.approx(1000 / (4 * 3 + 3 * 0.3))
    assert ex.commits_at_3ms() == pytest.approx(1000 / (11 * 3 + 10.5))
    assert ex.round_trips_to_remove() == 8
    assert ex.no_round_trips() == pytest.approx(1000 / 10.5)


@pytest.mark.parametrize(
    "exercise_id, right, wrong",
    [
        ("02.tps_at_3ms", lambda: ex.tps_at_3ms(), lambda: ex.tps_at_3ms() * 1.2),
        ("02.commits_at_3ms", lambda: ex.commits_at_3ms(), lambda: ex.tps_at_3ms()),
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
    assert "sketch" in check("02.commits_at_3ms", ex.tps_at_3ms()).message
    assert "16.5 ms" in check("02.round_trips_to_remove", 7).message
    assert "fewer" in check("02.round_trips_to_remove", 9).message
    assert "whole" in check("02.round_trips_to_remove", 7.5).message
    assert not check("02.round_trips_to_remove", "eight").ok
    assert not check("02.tps_at_3ms", math.nan).ok
    assert not check("02.tps_at_3ms", None).ok
