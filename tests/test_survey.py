"""Notebook 04a's helpers (hotkeylab.metastable.survey) and its exercise checks."""

import math
from dataclasses import replace

import matplotlib.pyplot as plt
import numpy as np
import pytest

from hotkeylab import capacity
from hotkeylab.exercise_sets import nb04a_mitigations as ex
from hotkeylab.exercises import check, ids
from hotkeylab.metastable import (
    SEED_INCIDENT,
    SEED_RETRY,
    RetryPolicy,
    closed_forms,
    lesson,
    survey,
    verdicts,
)

S = lesson.SHORT_INCIDENT


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# ---------------------------------------------------------------------- storm_attempts: the policy's own rule
def test_storm_attempts_matches_hand_counts():
    # seed: retry 1 starts at 200 + U(0, 50) <= 300, retry 2 at >= 400 > 300
    assert survey.storm_attempts(SEED_RETRY, 200.0) == 2.0
    assert survey.storm_attempts(replace(SEED_RETRY, patience_ms=150.0), 200.0) == 1.0
    # no patience: the cap decides; unlimited stays unlimited
    assert survey.storm_attempts(RetryPolicy(max_attempts=5, patience_ms=math.inf), 200.0) == 5.0
    assert math.isinf(survey.storm_attempts(RetryPolicy(patience_ms=math.inf), 200.0))
    assert survey.storm_attempts(RetryPolicy(max_attempts=1, patience_ms=300.0), 200.0) == 1.0
    # 0–50 ms delays, 500 ms patience: retry 2 at 400 + at most 100 always fits, retry 3 never
    assert survey.storm_attempts(replace(SEED_RETRY, patience_ms=500.0), 200.0) == 3.0


@pytest.mark.parametrize("f", [1.5, 2.0, 3.0, 4.0, 10.0])
def test_stretched_interval_matches_the_uniform_closed_form(f):
    # a retry is sent iff 200 + f·U(0, 50) <= 300: probability min(1, 100 / (50 f))
    expected = 1.0 + min(1.0, 100.0 / (50.0 * f))
    assert survey.storm_attempts(SEED_RETRY, 200.0, stretch=f) == pytest.approx(expected, abs=0.005)


def test_exponential_full_jitter_two_retries_in_600_ms():
    # retry 1 always (200 + U(0, 100) <= 600); retry 2 iff U(0,100) + U(0,200) <= 200: probability 3/4
    pol = RetryPolicy(max_attempts=5, base_ms=100.0, multiplier=2.0, cap_ms=1000.0, jitter="full", patience_ms=600.0)
    assert survey.storm_attempts(pol, 200.0) == pytest.approx(2.75, abs=0.005)


def test_decorrelated_first_delay_exceeds_the_patience():
    pol = replace(lesson.mitigate("backoff_decorrelated").retry, patience_ms=300.0)
    assert survey.storm_attempts(pol, 200.0) == 1.0


def test_storm_attempts_falls_with_the_stretch_and_refuses_bad_input():
    xs = [survey.storm_attempts(SEED_RETRY, 200.0, stretch=f) for f in (1, 2, 3, 5, 8, 13)]
    assert all(a >= b for a, b in zip(xs, xs[1:], strict=False))
    with pytest.raises(ValueError, match="timeout_ms"):
        survey.storm_attempts(SEED_RETRY, 0.0)
    with pytest.raises(ValueError, match="stretch"):
        survey.storm_attempts(SEED_RETRY, 200.0, stretch=-1.0)


# ---------------------------------------------------------------------- demand, ceiling, exits
def test_storm_demand_and_ceiling_agree_with_the_band():
    lam = survey.peak_rate(S)
    assert lam == pytest.approx(S.user_rate_per_s * S.peak.factor)
    assert survey.storm_demand(S, 2.0) == pytest.approx(capacity.batcher_batch_rate(2 * lam))
    a_star = survey.attempts_ceiling(S)
    assert survey.storm_demand(S, a_star) == pytest.approx(capacity.tps_ceiling(S.batch_ms), rel=1e-6)
    assert a_star * lam == pytest.approx(lesson.band_user_rates(S)[1], rel=1e-6)
    assert 1.0 < a_star < 2.0  # one retry per request already sustains the storm at the seed's peak


def test_user_rate_for_batches_inverts_the_batcher():
    for lam in (50.0, 600.0, 2000.0):
        b = capacity.batcher_batch_rate(lam)
        assert survey.user_rate_for_batches(b) == pytest.approx(lam, rel=1e-6)
    assert survey.user_rate_for_batches(0.0) == 0.0
    assert math.isinf(survey.user_rate_for_batches(1e9))


def test_storm_exit_and_drain_edge():
    mu = capacity.tps_ceiling(S.batch_ms)
    q_eff = closed_forms(S)["effective_queue_one_owner"]
    t = survey.storm_exit_s(S, 250.0, 1.0)
    assert t == pytest.approx((250.0 - q_eff) / (mu - capacity.batcher_batch_rate(survey.peak_rate(S))))
    assert math.isinf(survey.storm_exit_s(S, 250.0, 2.0))  # the storm sustains itself
    assert survey.storm_exit_s(S, 5.0, 2.0) == 0.0          # already below the threshold: nothing to leave
    lam = survey.drain_edge_rate(SEED_INCIDENT, 250.0, 35.0, 2.0)
    assert survey.storm_exit_s(SEED_INCIDENT, 250.0, 2.0, lam) == pytest.approx(35.0, rel=1e-4)
    assert lam < lesson.band_user_rates(SEED_INCIDENT)[0]  # dying in time asks for a load below the band


def test_stretch_needed_is_where_the_window_just_drains():
    f = survey.stretch_needed(S, 250.0, 30.0)
    a = survey.storm_attempts(S.retry, S.timeout_ms, stretch=f)
    assert survey.storm_exit_s(S, 250.0, a) == pytest.approx(30.0, rel=0.01)
    assert survey.stretch_needed(S, 5.0, 30.0) == 1.0
    # the committed counts bracket it: x4 stays stuck, x6 recovers (notebook 04a, exercise 2)
    assert 4.0 < f < 6.0


# ---------------------------------------------------------------------- restart, tables, figures
def test_restart_scenario_and_run():
    sc = survey.restart_scenario(300.0, window_ms=100.0, after_ms=10_000.0)
    assert sc.restart_at_ms == lesson.ACT_MS and sc.retry.patience_ms == 300.0
    assert sc.horizon_ms == lesson.ACT_MS + 10_000.0 and sc.window_ms == 100.0
    with pytest.raises(ValueError, match="patience_ms"):
        survey.restart_scenario(-1.0)


def _fake_counts():
    """A verdicts-like mapping built from the experiments, with made-up numbers (no simulation)."""
    rng = np.random.default_rng(0)
    out = {}
    for name, e in verdicts.EXPERIMENTS.items():
        rec = np.arange(verdicts.SEEDS) < (verdicts.SEEDS // 2 if name == "mit_percent" else verdicts.SEEDS)
        share = np.where(rec, 0.95 + 0.05 * rng.random(verdicts.SEEDS), 0.0)
        out[name] = verdicts.Count(name, e.label, e.measure, rec, share, share, 1.0 + rng.random(verdicts.SEEDS),
                                   np.zeros(verdicts.SEEDS), np.full(verdicts.SEEDS, 250.0),
                                   np.zeros(verdicts.SEEDS), False)
    return out


def test_survey_rows_markdown_and_figure():
    V = _fake_counts()
    rows = survey.survey_rows(V)
    assert [r["name"] for r in rows][0] == "none"
    assert {r["name"] for r in rows} == set(lesson.MITIGATIONS)
    pct = next(r for r in rows if r["name"] == "percent")
    assert pct["knife_edge"] and "knife-edge" in pct["text"]
    md = survey.survey_markdown(rows)
    assert md.count("\n") == len(rows) + 1 and "**" in md
    fig, axes = survey.plot_survey(V)
    assert len(axes) == 2 and axes[0].get_xlim() == axes[1].get_xlim()
    assert survey.share_text(V["mit_none"], "rejected") == "0%"


def test_backoff_grid_and_figure():
    V = _fake_counts()
    bg = survey.backoff_grid(V)
    assert bg["k"].shape == (len(verdicts.BACKOFF_ATTEMPTS) * len(verdicts.BACKOFF_KINDS),
                             len(verdicts.BACKOFF_PATIENCE_MS))
    j_inf = bg["cols"].index("inf")
    assert [bg["closed"][i, j_inf] for i in range(len(bg["rows"]))] == [float(a) for a, _ in bg["rows"]]
    fig, axes = survey.plot_backoff(bg)
    assert len(axes) == 3


def test_restart_zoom_and_phase_load_figures():
    runs = {"a": survey.restart_run(150.0, seed=0, window_ms=500.0)}
    fig, axes = survey.plot_restart_zoom(runs, 58.0, 64.0, texts={"a": "1/1"})
    assert axes.shape == (2, 1)
    assert survey.restart_zoom_top(runs) > 0
    assert set(survey.restart_zoom_clipped(runs, 58.0, 64.0)) == {"a"}
    xs, loads = [24.0, 34.0], [400.0, 500.0, 600.0]
    ax = survey.plot_phase_load(np.array([[1, 1], [1, 0], [1, 0]]), xs, loads, duration_s=20.0, after_s=40.0,
                                queue_batches=250.0)
    labels = ax.get_legend_handles_labels()[1]
    assert not any("upper edge" in lab for lab in labels)  # outside the loads plotted: not drawn, not listed


# ---------------------------------------------------------------------- exercises
def test_exercises_are_registered():
    assert {"04a.capped_attempts", "04a.stretch_factor"} <= set(ids())


def test_capped_attempts_checker():
    assert ex.capped_attempts() == 2.0
    assert check("04a.capped_attempts", ex.capped_attempts()).ok
    assert check("04a.capped_attempts", "2").ok
    fb = check("04a.capped_attempts", ex.CAP_ATTEMPTS)
    assert not fb.ok and "cap" in fb.message
    assert not check("04a.capped_attempts", 1).ok
    assert not check("04a.capped_attempts", 3).ok
    assert not check("04a.capped_attempts", "two").ok


def test_stretch_factor_checker():
    f = ex.stretch_factor()
    assert check("04a.stretch_factor", f).ok
    assert check("04a.stretch_factor", round(f, 2)).ok
    # only bringing the demand down to the capacity is not enough: the backlog must drain in time
    lam = survey.peak_rate(S)
    a_star = survey.attempts_ceiling(S)
    f_cap = 2.0 / (a_star - 1.0)  # 1 + 2 / f = a*
    assert survey.storm_attempts(S.retry, S.timeout_ms, stretch=f_cap) == pytest.approx(a_star, abs=0.01)
    fb = check("04a.stretch_factor", f_cap)
    assert not fb.ok and "window" in fb.message
    assert not check("04a.stretch_factor", lesson.STRETCH_FACTOR).ok
    assert not check("04a.stretch_factor", float("nan")).ok
    assert lam > 0
