"""Notebook 04's helpers (hotkeylab.metastable.lesson), its what-if widget driven kernel-side, and
its exercise checks. The model's own tests are in test_metastable*.py."""

import math
import pickle
from dataclasses import replace

import matplotlib.pyplot as plt
import numpy as np
import pytest
from ipywidgets import fixed, interactive

from hotkeylab import capacity
from hotkeylab.exercise_sets import nb04_metastable as ex
from hotkeylab.exercise_sets import nb04a_mitigations as ex4a
from hotkeylab.exercises import check, ids
from hotkeylab.metastable import (
    SEED_INCIDENT,
    RetryPolicy,
    Scenario,
    closed_form,
    closed_forms,
    fluid,
    lesson,
    simulate,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# ---------------------------------------------------------------------- the short clock tells the story
@pytest.fixture(scope="module")
def short_runs():
    return lesson.compare(["none", "degrade", "restart", "no_retries", "queue_limit"], seed=0)


def test_short_incident_is_stuck_and_the_seed_fixes_recover(short_runs):
    assert not short_runs["none"].recovered
    for name in ("degrade", "restart", "no_retries", "queue_limit"):
        assert short_runs[name].recovered, name
    for run in short_runs.values():
        run.check()


def test_compare_serial_equals_pool(short_runs):
    serial = lesson.compare(["none", "queue_limit"], executor="serial")
    for name, run in serial.items():
        assert np.array_equal(run.windows["goodput"], short_runs[name].windows["goodput"])
        assert run.summary == short_runs[name].summary


def test_short_incident_storm_growth_matches_closed_form():
    sc = replace(lesson.SHORT_INCIDENT, queue_limit=None)  # the growth the seed's bound stops at 250
    iso = sc.second_owner.end_ms / 1e3
    sim = lesson.slope(simulate(sc, seed=0), "queue", iso + 5, sc.horizon_ms / 1e3)
    assert sim == pytest.approx(closed_forms(sc)["growth_stuck"], rel=0.05)


def test_trigger_growth_matches_closed_form_without_timeouts():
    sc = replace(lesson.SHORT_INCIDENT, timeout_ms=math.inf, retry=RetryPolicy(max_attempts=1))
    run = simulate(sc, seed=0)
    so = sc.second_owner
    sim = lesson.slope(run, "queue", so.start_ms / 1e3, so.end_ms / 1e3)
    assert sim == pytest.approx(closed_forms(sc)["growth_two_owners"], abs=0.3)
    assert run.summary["timeouts"] == 0


def test_comparison_rows_and_markdown(short_runs):
    rows = lesson.comparison_rows(short_runs)
    assert [r["name"] for r in rows] == list(short_runs)
    assert rows[0]["recovered"] is False and rows[0]["recovery_time_s"] is None
    md = lesson.comparison_markdown(rows)
    assert md.count("\n") == len(rows) + 1
    assert "**no**" in md and lesson.MITIGATIONS["degrade"].label in md
    assert "source" not in lesson.comparison_markdown(rows, source=False).splitlines()[0]


def test_small_multiples_and_story_draw(short_runs):
    fig, axes = lesson.small_multiples(short_runs, ncols=2)
    assert axes.shape == (3, 2) and not axes[2, 1].get_visible()
    fig2, (top, bot) = lesson.story_panels(short_runs["degrade"])
    labels = top.get_legend().get_texts()
    assert any("degraded upstream" in t.get_text() for t in labels)
    ax = lesson.onset(short_runs["none"], 15, 30)
    assert ax.get_ylabel() == "queue (batches)"


# ---------------------------------------------------------------------- mitigations
def test_every_mitigation_builds_a_scenario():
    for name, mit in lesson.MITIGATIONS.items():
        sc = lesson.mitigate(name)
        assert isinstance(sc, Scenario)
        assert mit.kind in ("—", "intervention", "protection")
    assert lesson.mitigate("queue_limit").queue_limit == capacity.safe_queue_limit(200, 16, lesson.SAFETY)
    assert lesson.mitigate("backoff_full").retry.max_attempts == 3


def test_unknown_mitigation_names_the_parameter():
    with pytest.raises(ValueError, match="mitigation"):
        lesson.mitigate("pray")
    with pytest.raises(ValueError, match="mitigation"):
        lesson.compare(["none", "pray"], executor="serial")
    with pytest.raises(ValueError, match="mitigation"):
        lesson.cell_scenario(mitigation="degrade")  # interventions are not swept


# ---------------------------------------------------------------------- reading a run
def _w():
    t = np.arange(10.0)
    return {"t": t, "q": 3.0 * t + 1.0, "g": np.where(t < 4, 0.0, 5.0)}


def test_slope_mean_first_time_first_below():
    w = _w()
    assert lesson.slope(w, "q", 0, 10) == pytest.approx(3.0)
    assert lesson.mean_between(w, "g", 4, 10) == 5.0
    assert lesson.first_time(w, "g", 1.0) == 4.0
    assert lesson.first_time(w, "g", 10.0) is None
    assert lesson.first_below(w, "q", 10.0, after_s=1) == 1.0
    with pytest.raises(ValueError, match="t1_s"):
        lesson.slope(w, "q", 3, 4)
    with pytest.raises(ValueError, match="t1_s"):
        lesson.mean_between(w, "q", 20, 30)


def test_timeout_share_vs_queue_is_a_share(short_runs):
    q, share = lesson.timeout_share_vs_queue(short_runs["none"])
    assert len(q) == len(share) and np.all((share >= 0) & (share <= 1))


# ---------------------------------------------------------------------- closed forms
def test_band_user_rates_against_capacity():
    lo, hi = lesson.band_user_rates(SEED_INCIDENT)
    mu = capacity.tps_ceiling(SEED_INCIDENT.batch_ms)
    assert capacity.batcher_batch_rate(hi) == pytest.approx(mu, rel=1e-6)
    assert lo == pytest.approx(hi / 2)  # one retry in the storm
    rows_lo, rows_hi = capacity.bistable_band(mu * SEED_INCIDENT.batch_max_rows, 1)
    assert lo == pytest.approx(rows_lo, rel=0.02) and hi == pytest.approx(rows_hi, rel=0.02)
    assert lo < SEED_INCIDENT.user_rate_per_s * SEED_INCIDENT.peak.factor < hi
    assert lesson.band_user_rates(SEED_INCIDENT, retries=math.inf)[0] == 0.0
    with pytest.raises(ValueError, match="retries"):
        lesson.band_user_rates(SEED_INCIDENT, retries=-1)


def test_drain_time():
    mu = capacity.tps_ceiling(16)
    assert lesson.drain_time_s(625.0, 0.0) == pytest.approx(10.0)
    assert lesson.drain_time_s(150.0, 720.0) == pytest.approx(150.0 / (mu - capacity.batcher_batch_rate(720.0)))
    assert lesson.drain_time_s(1.0, 2000.0) == math.inf
    with pytest.raises(ValueError, match="queue_batches"):
        lesson.drain_time_s(-1.0, 0.0)


def test_restart_wave_grows_with_patience_and_load():
    sc = lesson.SHORT_INCIDENT
    b = [lesson.restart_wave(replace(sc, retry=replace(sc.retry, patience_ms=p)))["backlog_batches"]
         for p in (300.0, 600.0, 1000.0)]
    assert b[0] < b[1] < b[2]
    assert lesson.restart_wave(sc)["restart_works"]
    assert not lesson.restart_wave(replace(sc, retry=replace(sc.retry, patience_ms=1000.0)))["restart_works"]
    assert lesson.restart_wave(sc, 600.0)["backlog_batches"] <= lesson.restart_wave(sc, 1000.0)["backlog_batches"]
    none = lesson.restart_wave(replace(sc, retry=RetryPolicy(max_attempts=1)))
    assert none["wave_rows"] == 0 and none["restart_works"]
    lim = lesson.restart_limit_rate(sc)
    assert lesson.restart_wave(sc, 0.99 * lim)["restart_works"]
    assert not lesson.restart_wave(sc, 1.01 * lim)["restart_works"]


def test_trigger_boundary():
    assert lesson.trigger_boundary_s(20.0) == math.inf  # two owners still keep up
    xs = np.array([27.0, 30.0, 40.0])
    b = lesson.trigger_boundary_s(xs)
    assert np.all(np.diff(b) < 0) and np.all(np.isfinite(b))
    assert b[0] == pytest.approx(closed_forms(SEED_INCIDENT)["effective_queue_two_owners"]
                                 / closed_forms(SEED_INCIDENT)["growth_two_owners"])
    grid = closed_form.trigger_boundary_grid(xs, np.array([600.0, 800.0]), SEED_INCIDENT)
    assert grid[0] == pytest.approx(b)
    assert grid[1, 0] == pytest.approx(lesson.trigger_boundary_s(27.0, user_rate_per_s=800.0))


# ---------------------------------------------------------------------- phase diagram cells
def test_phase_cell_small_and_large_trigger():
    assert lesson.phase_cell(cross_batch_ms=20.0, duration_s=10.0) == 1.0
    assert lesson.phase_cell(cross_batch_ms=34.0, duration_s=10.0) == 0.0
    assert lesson.phase_cell(cross_batch_ms=34.0, duration_s=10.0, mitigation="queue_limit") == 1.0
    assert pickle.loads(pickle.dumps(lesson.phase_cell)) is lesson.phase_cell


def test_cell_scenario_windows_and_slow_db():
    sc = lesson.cell_scenario(30.0, 12.0, 700.0)
    assert sc.second_owner.end_ms - sc.second_owner.start_ms == 12_000.0
    assert sc.horizon_ms == sc.second_owner.end_ms + lesson.PHASE_AFTER_MS
    slow = lesson.cell_scenario(duration_s=5.0, slow_factor=2.0)
    assert slow.second_owner is None and slow.slow_db.factor == 2.0
    with pytest.raises(ValueError, match="duration_s"):
        lesson.cell_scenario(duration_s=-1.0)


def test_phase_figure_draws_both_kinds():
    g = np.array([[1.0, 0.0], [1.0, 0.0]])
    fig, axes = lesson.phase_figure({"a": g, "b": g}, [20.0, 30.0], [5.0, 10.0])
    assert axes.shape == (1, 2)
    fig, axes = lesson.phase_figure({"a": g}, [20.0, 30.0], [500.0, 700.0], kind="load")
    with pytest.raises(ValueError, match="kind"):
        lesson.phase_figure({"a": g}, [20.0, 30.0], [5.0, 10.0], kind="nope")


# ---------------------------------------------------------------------- hysteresis
def test_hysteresis_two_states_inside_the_band():
    up = lesson.hysteresis_point(800.0, "up")
    down = lesson.hysteresis_point(800.0, "down")
    assert up == pytest.approx(800.0, rel=0.05)
    assert down < 0.05 * 800.0
    assert lesson.hysteresis_point(400.0, "down") == pytest.approx(400.0, rel=0.05)
    with pytest.raises(ValueError, match="direction"):
        lesson.hysteresis_point(400.0, "sideways")


def test_hysteresis_collects_and_plots():
    h = lesson.hysteresis([400.0, 800.0])
    assert set(h) == {"offered", "up", "down"} and h["up"].shape == (2,)
    ax = lesson.plot_hysteresis(h, band=lesson.band_user_rates())
    assert ax.get_xlabel() == "offered load (user requests/s)"


# ---------------------------------------------------------------------- the what-if widget
def _widget(wi, show=False):
    controls = lesson.whatif_controls()
    controls["show"] = fixed(show)
    return interactive(wi.update, **controls)


def test_widget_children_order():
    w = _widget(lesson.WhatIf())
    labels = [c.description for c in w.children[:7]]
    assert labels == ["load (user requests/s)", "C's batch time (ms)", "trigger duration (s)",
                      "M: client timeout (ms)", "N: batch time in B (ms)", "QueueMaxSize (batches)", "retry policy"]


def test_widget_default_is_the_seed_stuck_and_the_figure_persists():
    wi = lesson.WhatIf()
    fig = wi.fig
    w = _widget(wi)  # interactive runs the function once on creation
    r = w.result
    assert not r.recovered and r.max_queue > 100
    assert r.closed["capacity_one_owner"] == pytest.approx(62.5)
    assert wi.fig is fig and wi.calls == 1
    assert len(wi.lines["goodput"].get_xdata()) == len(r.run.windows["t"])
    assert wi.span.get_width() == pytest.approx(30.0)
    assert "stuck" in r._repr_markdown_()


def test_widget_queue_limit_and_no_retries_recover():
    wi = lesson.WhatIf()
    w = _widget(wi)
    w.children[5].value = 6  # QueueMaxSize
    w.update()
    assert w.result.recovered and w.result.scenario.queue_limit == 6
    w.children[5].value = None
    w.children[6].value = "no retries"
    w.update()
    assert w.result.recovered and w.result.scenario.retry.max_attempts == 1
    assert wi.calls >= 3


def test_widget_short_trigger_and_low_load_recover():
    wi = lesson.WhatIf()
    w = _widget(wi)
    w.children[2].value = 0.0  # no trigger at all
    w.update()
    assert w.result.recovered and w.result.scenario.second_owner is None
    assert wi.span.get_width() == 0.0
    w.children[2].value = 30.0
    w.children[0].value = 400.0  # below the bistable band
    w.update()
    assert w.result.recovered


def test_widget_as_in_the_notebook_displays():
    w = interactive(lesson.WhatIf().update, **lesson.whatif_controls())
    assert w.result is not None


def test_widget_bad_input_names_the_parameter():
    wi = lesson.WhatIf()
    with pytest.raises(ValueError, match="retry"):
        wi.update(retry="forever", show=False)
    with pytest.raises(ValueError, match="trigger_s"):
        wi.update(trigger_s=-5.0, show=False)
    with pytest.raises(ValueError, match="queue_limit"):
        wi.update(queue_limit=-1, show=False)


# ---------------------------------------------------------------------- exercises
def test_exercise_ids_registered():
    assert {"04.band_edge_patience", "04.drain_partial_degrade", "04a.limit_far_owner",
            "04a.worst_wait_limit"} <= set(ids())


def test_expected_answers_come_from_the_package():
    r = ex.retries_within(ex.PATIENCE_MS)
    assert r == 3
    mu_c = capacity.tps_ceiling(SEED_INCIDENT.cross_batch_ms)  # exercise 1: one owner in C alone
    lam = ex.band_edge_at_patience()
    assert capacity.batcher_batch_rate((r + 1) * lam) == pytest.approx(mu_c, rel=1e-6)
    mu = capacity.tps_ceiling(SEED_INCIDENT.batch_ms)
    n_bar = (16.0 + ex4a.FAR_BATCH_MS) / 2
    assert ex4a.limit_for_far_owner() == math.floor((200 - 20 - n_bar) / n_bar)
    assert ex.drain_with_partial_degrade_s() == pytest.approx(
        ex.DRAIN_QUEUE / (mu - capacity.batcher_batch_rate(2 * ex.DEGRADE_KEEP * 720.0)))
    assert ex4a.worst_wait_behind_limit_ms() == ex4a.BIG_LIMIT * 16 + 20 + 16


def test_partial_degrade_answer_agrees_with_the_fluid_model():
    """Exercise 3's closed form (kept users retried once behind the backlog) against the fluid
    model integrated from the backlog to an empty queue, ramp included."""
    t, q = fluid.integrate(ex.DRAIN_QUEUE, ex.DEGRADE_KEEP * 720.0, SEED_INCIDENT,
                           capacity.tps_ceiling(SEED_INCIDENT.batch_ms), 60.0)
    assert q[-1] == 0.0
    assert t[np.argmax(q <= 0.0)] == pytest.approx(ex.drain_with_partial_degrade_s(), rel=0.02)


@pytest.mark.parametrize(
    "exercise_id, right, wrong",
    [
        ("04.band_edge_patience", ex.band_edge_at_patience, lambda: lesson.band_user_rates(retries=1)[0]),
        ("04a.limit_far_owner", ex4a.limit_for_far_owner, lambda: math.floor(200 / 29.5)),
        ("04.drain_partial_degrade", ex.drain_with_partial_degrade_s, lambda: ex.DRAIN_QUEUE / 62.5),
        ("04a.worst_wait_limit", ex4a.worst_wait_behind_limit_ms, lambda: ex4a.BIG_LIMIT * 16.0),
    ],
)
def test_right_answer_ok_wrong_answer_specific(exercise_id, right, wrong):
    assert check(exercise_id, right()).ok
    fb = check(exercise_id, wrong())
    assert not fb.ok and fb.message
    assert not check(exercise_id, None).ok
    assert not check(exercise_id, math.nan).ok


def test_feedback_names_the_mistake():
    assert "one retry" in check("04.band_edge_patience", closed_form.band_user_rates(ex._C_ONLY, retries=1)[0]).message
    assert "B's N" in check("04.band_edge_patience", closed_form.band_user_rates(SEED_INCIDENT, retries=3)[0]).message
    assert "M / N̄" in check("04a.limit_far_owner", 6).message
    assert "round down" in check("04a.limit_far_owner", 5.5).message
    assert "largest" in check("04a.limit_far_owner", 3).message
    assert "no users" in check("04.drain_partial_degrade", ex.DRAIN_QUEUE / 62.5).message
    assert "queue alone" in check("04a.worst_wait_limit", ex4a.BIG_LIMIT * 16).message
    kept_once = lesson.drain_time_s(ex.DRAIN_QUEUE, ex.DEGRADE_KEEP * 720.0)
    assert "retried" in check("04.drain_partial_degrade", kept_once).message


def test_drain_horizon_cuts_no_run_before_it_drains():
    """FULL_QUEUE_600's horizon is shorter than it used to be (250 s): every one of the notebook's
    20 seeds must still empty its queue, with a margin, before it; and the shorter run is an exact
    prefix of the longer one, so no printed drain statistic depends on the cut."""
    sc = lesson.FULL_QUEUE_600
    res = lesson.drain_from_bound(range(20))
    assert res["drained"].all()
    assert res["horizon_after_s"] == sc.horizon_ms / 1e3 - sc.trigger_window[1] / 1e3
    assert np.nanmax(res["drain_s"]) <= res["horizon_after_s"] - 5.0
    # the rejections after the recovery come early, while the queue is near the bound: well before
    # the fastest drain (the notebook prints the latest)
    assert np.all(res["last_rejected_s"][res["rejected_after"] > 0] < 0.25 * np.nanmin(res["drain_s"]))
    slowest = int(res["seeds"][np.nanargmax(res["drain_s"])])
    short = simulate(sc, seed=slowest).windows
    long_ = simulate(replace(sc, horizon_ms=sc.horizon_ms + 30_000.0), seed=slowest).windows
    n = len(short["queue"])
    for key in ("queue", "rejected", "goodput", "timeouts", "retries"):
        assert np.array_equal(np.asarray(long_[key])[:n], np.asarray(short[key])), key
    assert np.all(np.asarray(long_["queue"])[n:] < 0.5)  # nothing happens after the cut


def test_queue_at_equals_the_full_runs_window():
    sc = lesson.SHORT_INCIDENT
    t_s = lesson.ACT_MS / 1e3
    got = lesson.queue_at(sc, t_s, seeds=[0, 1])
    full = [simulate(sc, seed=s_).windows["queue"][int(t_s) - 1] for s_ in (0, 1)]
    assert np.array_equal(got, np.asarray(full))
    with pytest.raises(ValueError, match="t_s"):
        lesson.queue_at(sc, 2 * sc.horizon_ms / 1e3)


def _tick_labels(ax):
    ax.figure.canvas.draw()
    lo, hi = ax.get_ylim()
    locs = [y for y in ax.yaxis.get_majorticklocs() if lo <= y <= hi]
    return locs, [t.get_text() for t in ax.get_yticklabels() if t.get_visible() and t.get_text()]


def test_queue_axes_tick_only_at_powers_of_ten():
    """Figures 03/06 (incident_figure) and 08 (the what-if widget) put the queue on a symlog axis;
    the default locator adds a stray "0" label just below 10⁰."""
    from hotkeylab.metastable import figures

    run = simulate(replace(SEED_INCIDENT, horizon_ms=8_000.0), seed=0)
    fig, axes = figures.incident_figure(run)
    wi = lesson.WhatIf()
    wi.redraw(wi.update())
    for ax in (axes[2], wi.qax):
        locs, labels = _tick_labels(ax)
        assert locs and all(math.isclose(math.log10(y), round(math.log10(y))) for y in locs), locs
        assert "0" not in labels and "$\\mathdefault{0}$" not in labels, labels
        assert "floor = 0" in ax.get_ylabel()


def _nb04_prose() -> str:
    """Notebook 04's prose as the reader sees it: its markdown cells and the markdown its code cells
    display (prose built with f-strings from the scenario), whitespace collapsed (a phrase may
    break across lines)."""
    import json
    from pathlib import Path

    nb = json.loads((Path(__file__).parent.parent / "notebooks" / "04_metastable_retry_storm.ipynb").read_text())
    parts = []
    for c in nb["cells"]:
        if c["cell_type"] == "markdown":
            parts.append("".join(c["source"]))
        for o in c.get("outputs", []):
            md = o.get("data", {}).get("text/markdown")
            if md:
                parts.append("".join(md))
    return " ".join(" ".join(p.split()) for p in parts)


def test_worked_numbers_in_the_prose_come_from_the_scenario():
    """The few numbers notebook 04's markdown works through by hand (so the reader sees the arithmetic)
    must be the scenario's and the closed forms': this recomputes each and finds it in the text."""
    sc = SEED_INCIDENT
    text = _nb04_prose()
    lam, T, M, N, NC = sc.user_rate_per_s, sc.batch_max_wait_ms, sc.timeout_ms, sc.batch_ms, sc.cross_batch_ms
    P, cap = sc.retry.patience_ms, sc.retry.cap_ms
    lt = lam * T / 1000
    R = math.floor(P / M)
    assert R == closed_forms(sc)["attempts_per_request_stuck"] - 1
    phrases = [
        f"At {lam:.0f} requests/s, λT = {lt:g} rows",
        f"{lt + 1:g} rows per batch, so batches/s ≈ {lam:.0f} / {lt + 1:g} ≈ {lam / (lt + 1):.0f}",
        f"At the peak λT = {lt * sc.peak.factor:g}",
        f"more than {P:g} ms after the first, so R = ⌊{P:g}/{M:g}⌋ = {R}",
        f"within 0–{cap:g} ms",
        f"3 × N = {3 * N:g} ms",
        f"{lam / (R + 1):.0f} users/s each sent twice are {lam:.0f} attempts/s",
        f"After a {M:g} ms timeout a retry still fits the {P:g} ms patience only if its delay is below {P - M:g} ms",
        f"between 0 and {cap:g}·σ ms that happens with probability min(1, {(P - M) / cap:g}/σ)",
        f"N̄ = {(N + NC) / 2:g} ms",
        f"| N | time of one merged commit (合并提交), the lock held | {N:g} ms in B, {NC:g} ms from C |",
        f"37 (C alone, 1000/{NC:g})",
    ]
    assert R + 1 == 2  # "each sent twice"
    assert round(1000 / NC) == 37
    missing = [p for p in phrases if p not in text]
    assert not missing, missing
