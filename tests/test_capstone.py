"""10 · Capstone: the report's numbers against the closed forms, input checks, the simulated
trigger with and without mitigations, the widget kernel-side, the exercises."""

import math
import re
from dataclasses import FrozenInstanceError, replace

import matplotlib.pyplot as plt
import pytest
from hypothesis import given
from hypothesis import strategies as st
from ipywidgets import fixed, interactive

from hotkeylab import capacity, capstone
from hotkeylab.capstone import (
    SYSTEM_A,
    SYSTEM_B,
    TRIGGER_B,
    VARIANTS,
    ZONES,
    Trigger,
    report,
)
from hotkeylab.exercise_sets import nb10_capstone as ex10
from hotkeylab.exercises import check, ids
from hotkeylab.metastable import SEED_INCIDENT, closed_forms, lesson


@pytest.fixture(scope="module")
def rep_a():
    return report(SYSTEM_A)


@pytest.fixture(scope="module")
def rep_b():
    return report(SYSTEM_B, TRIGGER_B)


# ---------------------------------------------------------------------- system A = notebook 04
def test_system_a_scenario_is_notebook_04s_short_clock():
    assert capstone.scenario(SYSTEM_A) == lesson.SHORT_INCIDENT
    assert capstone.scenario(SYSTEM_A).retry == SEED_INCIDENT.retry


def test_system_a_numbers_match_the_closed_forms():
    r = report(SYSTEM_A, runs=False)
    assert r.runs == {}
    assert r.commit_ms == pytest.approx(capacity.lock_hold_ms(0.5, 11, 1, 10.5)) == pytest.approx(16.0)
    k, fixed_ms = capacity.fit_round_trips([(0.5, 16.0), (1.5, 27.0)])
    assert SYSTEM_A.round_trips == pytest.approx(k) and SYSTEM_A.statement_ms == pytest.approx(fixed_ms)
    assert r.far_commit_ms == pytest.approx(27.0)
    assert r.capacity_per_s == pytest.approx(capacity.tps_ceiling(16.0)) == pytest.approx(62.5)
    assert r.capacity_two_owners_per_s == pytest.approx(capacity.alternating_owners_tps([16.0, 27.0]))
    assert r.demand_normal_per_s == pytest.approx(capacity.batcher_batch_rate(600.0))
    assert r.demand_peak_per_s == pytest.approx(capacity.batcher_batch_rate(720.0))
    assert r.critical_queue == pytest.approx(capacity.critical_queue_length(200.0, 16.0)) == pytest.approx(12.5)
    assert r.effective_queue == pytest.approx((200 - 20 - 16) / 16)
    assert r.safe_queue_limit == capacity.safe_queue_limit(200.0, 16.0, 0.5) == lesson.mitigate("queue_limit").queue_limit
    assert r.worst_wait_safe_ms == pytest.approx(6 * 21.5 + 20 + 27)
    assert r.retries_in_storm == 1
    assert r.band == pytest.approx(lesson.band_user_rates(SEED_INCIDENT))
    assert r.band[0] == pytest.approx(r.band[1] / 2)
    assert capacity.batcher_batch_rate(r.band[1]) == pytest.approx(r.capacity_per_s, rel=1e-6)
    assert (r.zone_normal, r.zone_peak) == (ZONES[0], ZONES[1])
    assert r.safe_retries == 0
    cf = closed_forms(SEED_INCIDENT)
    assert r.trigger_growth_per_s == pytest.approx(cf["growth_two_owners"])
    assert r.time_to_threshold_s == pytest.approx(lesson.trigger_boundary_s(27.0))
    assert r.trigger_reaches_threshold and r.predicted_stuck and r.prediction.startswith("stuck")
    # the seed's QueueMaxSize far above M/N (250 assumed, as in 04): behind it a request waits seconds
    assert r.worst_wait_entered_ms == pytest.approx(250 * 21.5 + 20 + 27)


def test_a_bounded_queue_changes_the_prediction():
    r = report(replace(SYSTEM_A, queue_limit=6), runs=False)
    assert r.worst_wait_entered_ms == pytest.approx(6 * 21.5 + 20 + 27)
    assert not r.predicted_stuck and "≤ M" in r.prediction
    big = report(replace(SYSTEM_A, queue_limit=200), runs=False)  # "远大于临界QueueSize"
    assert big.predicted_stuck
    above = report(replace(SYSTEM_A, normal_rate_per_s=1100.0), runs=False)
    assert above.zone_peak == ZONES[2] and above.predicted_stuck and "above capacity" in above.prediction


def test_budget_moves_the_lower_edge():
    r = report(SYSTEM_A, runs=False)
    b = capstone.BUDGET
    assert r.band_with_budget[0] == pytest.approx((r.band[1] - b.min_per_s) / (1 + b.percent))
    assert r.band_with_budget[0] > SYSTEM_A.peak_rate_per_s  # why the budget recovers in 04
    with_budget = report(replace(SYSTEM_A, retry_budget_percent=0.2), runs=False)
    assert with_budget.band == pytest.approx(r.band_with_budget)
    assert with_budget.zone_peak == ZONES[0]


def test_measured_commit_overrides_the_derived_one():
    s = replace(SYSTEM_A, measured_commit_ms=20.0)
    assert s.commit_ms == 20.0 and s.derived_commit_ms == pytest.approx(16.0)
    assert s.far_commit_ms == pytest.approx(20.0 + 11 * (1.5 - 0.5))
    r = report(s, runs=False)
    assert r.capacity_per_s == pytest.approx(50.0)
    assert "measured 20 ms" in r.closed_form_markdown()


def test_zones_and_safe_retries():
    edges = (500.0, 1000.0)
    assert capstone.zone(499.0, edges) == ZONES[0]
    assert capstone.zone(500.0, edges) == ZONES[1]
    assert capstone.zone(1000.0, edges) == ZONES[2]
    assert capstone.safe_retries(720.0, 1233.1) == 0
    assert capstone.safe_retries(400.0, 1233.1) == 2  # 1233/3 = 411 > 400, 1233/4 < 400
    assert capstone.safe_retries(1300.0, 1233.1) is None
    for peak in (100.0, 300.0, 700.0, 1200.0):
        r = capstone.safe_retries(peak, 1233.1)
        assert 1233.1 / (r + 1) > peak and 1233.1 / (r + 2) <= peak


def test_unlimited_retries_have_no_lower_edge():
    s = replace(SYSTEM_A, retry_patience_ms=math.inf)
    r = report(s, runs=False)
    assert math.isinf(r.retries_in_storm) and r.band[0] == 0.0 and r.zone_normal == ZONES[1]
    assert "R = ∞" in r.closed_form_markdown()


def test_slow_db_trigger_closed_form():
    r = report(SYSTEM_B, TRIGGER_B, runs=False)
    n_slow = 10.0 * 2.5
    assert r.capacity_trigger_per_s == pytest.approx(1000 / n_slow)
    assert r.trigger_threshold == pytest.approx((500 - 20 - n_slow) / n_slow)
    assert r.trigger_growth_per_s == pytest.approx(capacity.batcher_batch_rate(750.0) - 40.0)
    assert r.time_to_threshold_s == pytest.approx(r.trigger_threshold / r.trigger_growth_per_s)
    assert r.zone_peak == ZONES[0] and not r.predicted_stuck and "dies out" in r.prediction
    assert r.safety_for_trigger == pytest.approx((500 - 20 - n_slow) / (n_slow * 50.0))
    second = report(SYSTEM_B, runs=False)  # a second owner: two owners still outrun the peak
    assert second.trigger_growth_per_s < 0 and math.isinf(second.time_to_threshold_s)


# ---------------------------------------------------------------------- the simulated trigger
def test_system_a_runs_reproduce_notebook_04(rep_a):
    assert tuple(rep_a.runs) == VARIANTS
    assert rep_a.recovered() == {"as entered": False, "safe QueueMaxSize": True, "retry budget": True, "both": True}
    rows = {r["label"]: r for r in rep_a.rows()}
    ref = lesson.compare(["none", "queue_limit", "percent"], executor="serial")
    for label, name in (("as entered", "none"), ("safe QueueMaxSize", "queue_limit"), ("retry budget", "percent")):
        assert rows[label]["served_share"] == pytest.approx(ref[name].summary["served_share"])
        assert rows[label]["timeouts"] == ref[name].summary["timeouts"]
    assert rows["safe QueueMaxSize"]["timeouts"] == 0 and rows["safe QueueMaxSize"]["max_queue"] <= 6
    for run in rep_a.runs.values():
        run.check()


def test_system_b_recovers_with_and_without_mitigations(rep_b):
    assert all(rep_b.recovered().values())
    rows = {r["label"]: r for r in rep_b.rows()}
    assert rows["as entered"]["timeouts"] > 0  # the trigger hurts while it lasts …
    assert rows["as entered"]["max_queue"] <= SYSTEM_B.queue_limit
    # … and the safe limit does not cover a 2.5× slowdown: its safety factor is above what it needs
    assert rep_b.safety_for_trigger < SYSTEM_B.safety and rows["safe QueueMaxSize"]["timeouts"] > 0


def test_closed_form_prediction_matches_the_simulation(rep_a, rep_b):
    assert rep_a.predicted_stuck == (not rep_a.runs["as entered"].recovered)
    assert rep_b.predicted_stuck == (not rep_b.runs["as entered"].recovered)


def test_selected_runs_only_and_bad_run_label():
    r = report(SYSTEM_A, runs=("safe QueueMaxSize",))
    assert list(r.runs) == ["safe QueueMaxSize"] and r.runs["safe QueueMaxSize"].scenario.queue_limit == 6
    with pytest.raises(ValueError, match="runs"):
        report(SYSTEM_A, runs=("everything",))


def test_no_trigger_is_healthy():
    r = report(SYSTEM_A, Trigger(duration_s=0.0), runs=("as entered",))
    sc = r.runs["as entered"].scenario
    assert sc.second_owner is None and sc.slow_db is None
    assert r.runs["as entered"].recovered and not r.trigger_reaches_threshold


@given(rate=st.floats(100.0, 1400.0), peak=st.floats(1.0, 1.6), timeout=st.floats(80.0, 800.0),
       limit=st.one_of(st.none(), st.integers(0, 50)))
def test_ledgers_balance_for_random_systems(rate, peak, timeout, limit):
    s = replace(SYSTEM_A, normal_rate_per_s=rate, peak_factor=peak, timeout_ms=timeout, queue_limit=limit)
    r = report(s, Trigger(start_s=5.0, duration_s=10.0, horizon_s=30.0), runs=("as entered",))
    run = r.runs["as entered"]
    run.check()
    led = run.ledger
    assert led.arrived == led.served + led.timed_out + led.rejected + led.in_system


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize("change, name", [
    ({"rtt_ms": -1.0}, "rtt_ms"),
    ({"round_trips": math.nan}, "round_trips"),
    ({"statement_ms": -0.1}, "statement_ms"),
    ({"measured_commit_ms": 0.0}, "measured_commit_ms"),
    ({"rtt_ms": 0.0, "statement_ms": 0.0}, "round_trips × rtt_ms"),
    ({"batch_max_rows": 0}, "batch_max_rows"),
    ({"batch_max_rows": 2.5}, "batch_max_rows"),
    ({"timeout_ms": 30.0}, "timeout_ms must be > commit_ms"),
    ({"retry_attempts": 0}, "retry_attempts"),
    ({"retry_multiplier": 0.5}, "retry_multiplier"),
    ({"retry_jitter": "random"}, "retry_jitter"),
    ({"retry_patience_ms": -5.0}, "retry_patience_ms"),
    ({"retry_budget_percent": -0.1}, "retry_budget_percent"),
    ({"queue_limit": -1}, "queue_limit"),
    ({"normal_rate_per_s": 0.0}, "normal_rate_per_s"),
    ({"peak_factor": 0.5}, "peak_factor"),
    ({"safety": 1.5}, "safety"),
    ({"name": ""}, "name"),
])
def test_bad_system_names_the_parameter(change, name):
    with pytest.raises(ValueError, match=re.escape(name)):
        replace(SYSTEM_A, **change)


@pytest.mark.parametrize("change, name", [
    ({"kind": "earthquake"}, "kind"),
    ({"horizon_s": 600.0}, "horizon_s"),
    ({"duration_s": 200.0}, "duration_s"),
    ({"start_s": -1.0}, "start_s"),
    ({"slow_factor": 0.5}, "slow_factor"),
])
def test_bad_trigger_names_the_parameter(change, name):
    with pytest.raises(ValueError, match=name):
        Trigger(**change)


def test_report_refuses_other_objects():
    with pytest.raises(ValueError, match="system"):
        report(SEED_INCIDENT)
    with pytest.raises(ValueError, match="trigger"):
        capstone.scenario(SYSTEM_A, "second owner")


def test_system_is_frozen():
    with pytest.raises(FrozenInstanceError):
        SYSTEM_A.rtt_ms = 1.0


# ---------------------------------------------------------------------- rendering and figures
def test_markdown_and_checklist(rep_a):
    md = rep_a.markdown()
    for piece in ("62.5 merged commits/s", "12.50 batches", "617 – 1233", "in the bistable band", "**stuck**",
                  "| as entered | 250 | no | **no** |"):
        assert piece in md
    cl = capstone.checklist_markdown(rep_a)
    assert cl.count("\n") == len(capstone.CHECKLIST) + 1
    assert "✘ 250 (safe: ≤ 6)" in cl and "(04_metastable_retry_storm.ipynb)" in cl
    for item in capstone.CHECKLIST:
        for nb in item.notebooks:
            assert f"[{nb}]" in cl
    assert SYSTEM_A.name in cl and SYSTEM_A.name not in capstone.checklist_markdown()
    ok = report(replace(SYSTEM_A, name="fixed", queue_limit=6, retry_attempts=3, retry_multiplier=2.0,
                        retry_budget_percent=0.2), runs=False)
    cl_two = capstone.checklist_markdown(rep_a, ok)
    assert "✔ 6 (safe: ≤ 6)" in cl_two and "cap ✔, backoff+jitter ✔, budget ✔" in cl_two
    assert cl_two.splitlines()[0].endswith(f"| {SYSTEM_A.name} | fixed |")
    with pytest.raises(ValueError, match="reports"):
        capstone.checklist_markdown(SYSTEM_A)


def test_systems_table_lists_every_field():
    md = capstone.systems_markdown(SYSTEM_A, SYSTEM_B)
    for name in capstone.FIELDS[1:]:
        assert f"`{name}`" in md and name in capstone.FIELD_HELP
    assert "| N | the merged commit used (ms) | 16 | 10 |" in md
    with pytest.raises(ValueError, match="system"):
        capstone.systems_markdown(SEED_INCIDENT)


def test_every_checklist_notebook_exists():
    from pathlib import Path

    nbdir = Path(__file__).resolve().parents[1] / "notebooks"
    for item in capstone.CHECKLIST:
        for nb in item.notebooks:
            assert (nbdir / f"{capstone._NB[nb]}.ipynb").exists(), nb


def test_figures_draw(rep_a):
    ax = capstone.plot_zones(rep_a)
    assert ax.get_xlabel() == "user requests/s to the hot key"
    assert ax.get_xlim()[1] >= rep_a.band[1]
    fig, axes = capstone.plot_runs(rep_a)
    assert axes.shape == (2, 2)
    plt.close("all")
    with pytest.raises(ValueError, match="runs"):
        capstone.plot_runs(report(SYSTEM_A, runs=False))


# ---------------------------------------------------------------------- the widget, kernel-side
def _widget(d, show=False):
    controls = capstone.dashboard_controls(d.base)
    controls["show"] = fixed(show)
    return interactive(d.update, **controls)


def test_widget_children_order():
    w = _widget(capstone.Dashboard())
    assert [c.description for c in w.children[:7]] == [
        "normal load (user requests/s)", "peak factor", "M: client timeout (ms)", "RTT to the primary (ms)",
        "user patience (ms)", "QueueMaxSize (batches)", "trigger duration (s)"]


def test_widget_default_is_system_a_stuck_and_the_figure_persists():
    d = capstone.Dashboard()
    fig = d.fig
    w = _widget(d)
    r = w.result
    assert r.system == SYSTEM_A and not r.runs["as entered"].recovered
    assert d.fig is fig and d.calls == 1
    assert len(d.lines["goodput"].get_xdata()) == len(r.runs["as entered"].windows["t"])
    assert d.span.get_width() == pytest.approx(30.0)
    assert d.m_peak.get_xdata()[0] == pytest.approx(720.0)
    assert "stuck" in capstone.Dashboard.summary(r)


def test_widget_queue_limit_low_load_and_short_patience_recover():
    d = capstone.Dashboard()
    w = _widget(d)
    w.children[5].value = 6  # QueueMaxSize
    w.update()
    assert w.result.runs["as entered"].recovered and w.result.system.queue_limit == 6
    w.children[5].value = "entered"
    w.children[0].value = 450.0  # peak 540/s: below the band
    w.update()
    assert w.result.zone_peak == ZONES[0] and w.result.runs["as entered"].recovered
    w.children[0].value = 600.0
    w.children[4].value = 150.0  # patience below M: no retry fits
    w.update()
    assert w.result.retries_in_storm == 0 and w.result.runs["as entered"].recovered
    assert d.calls >= 4


def test_widget_trigger_duration_and_rtt():
    d = capstone.Dashboard()
    w = _widget(d)
    w.children[6].value = 0.0
    w.update()
    assert w.result.runs["as entered"].recovered and d.span.get_width() == 0.0
    w.children[3].value = 1.0  # RTT 1 ms: N = 21.5 ms
    w.update()
    assert w.result.commit_ms == pytest.approx(21.5)


def test_widget_as_in_the_notebook_displays():
    w = interactive(capstone.Dashboard().update, **capstone.dashboard_controls())
    assert w.result is not None


def test_widget_bad_input_names_the_parameter():
    d = capstone.Dashboard()
    with pytest.raises(ValueError, match="timeout_ms"):
        d.update(timeout_ms=10.0, show=False)
    with pytest.raises(ValueError, match="duration_s"):
        d.update(trigger_s=-5.0, show=False)
    with pytest.raises(ValueError, match="system"):
        capstone.Dashboard(base=SEED_INCIDENT)


# ---------------------------------------------------------------------- exercises
def test_exercise_ids_registered():
    assert {"10.safe_queue_limit", "10.round_trips_out_of_band", "10.first_protection"} <= set(ids())


def test_expected_answers_come_from_the_package():
    assert ex10.safe_queue_limit_c() == capacity.safe_queue_limit(320.0, 12.0, 0.5) == 13
    k = ex10.round_trips_out_of_band()
    assert report(replace(SYSTEM_A, round_trips=11 - k), runs=False).zone_peak == ZONES[0]
    assert report(replace(SYSTEM_A, round_trips=12 - k), runs=False).zone_peak == ZONES[1]
    assert ex10.first_protection() == "queue_limit"


@pytest.mark.parametrize("exercise_id, right, wrong, says", [
    ("10.safe_queue_limit", 13, 26, "without the safety factor"),
    ("10.safe_queue_limit", 13, 26.67, "M/N itself"),
    ("10.safe_queue_limit", 13, 13.33, "round down"),
    ("10.safe_queue_limit", 13, 12, "effective threshold"),
    ("10.safe_queue_limit", 13, 40, "too high"),
    ("10.round_trips_out_of_band", 5, 4, "still below"),
    ("10.round_trips_out_of_band", 5, 4.3, "whole"),
    ("10.round_trips_out_of_band", 5, 7, "more than needed"),
    ("10.first_protection", "queue_limit", "backoff", "3 times"),
    ("10.first_protection", "queue_limit", "retry_budget", "timeouts"),
    ("10.first_protection", "queue_limit", "more_threads", "S2PL"),
    ("10.first_protection", "queue_limit", "circuit_breaker", "one of"),
])
def test_right_answer_ok_wrong_answer_specific(exercise_id, right, wrong, says):
    assert check(exercise_id, right).ok
    fb = check(exercise_id, wrong)
    assert not fb.ok and says in fb.message
