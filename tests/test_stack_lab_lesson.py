"""Notebook 04b's lesson numbers (hotkeylab.stack_lab.compare): closed forms against the committed
measurements, and bad input refused with ValueError. No database: the committed CSVs only."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from hotkeylab import capacity
from hotkeylab.stack_lab import StackConfig, compare, scenario


@pytest.fixture(scope="module")
def runs():
    _, rs = compare.load_runs()
    return {r.turn: r for r in rs if r.repeat == 0}


def test_commit_time_parts_add_up_to_the_target(runs):
    cfg = StackConfig()
    run = runs["stuck"]
    p = compare.commit_time_parts(run, cfg.rtt_ms("B"), scenario.round_trips(), cfg.target_batch_ms)
    assert p["rtt_total_ms"] == pytest.approx(scenario.round_trips() * cfg.rtt_ms("B"))
    assert p["rtt_total_ms"] + p["sql_ms"] + p["compute_ms"] == pytest.approx(cfg.target_batch_ms)
    assert p["sql_ms"] > 0  # the bare commit took longer than the slept RTTs: SQL, driver, overshoot
    assert p["measured_ms"] - p["target_ms"] == pytest.approx(p["remeasured_minus_target_ms"])


@pytest.mark.parametrize("kw", [{"rtt_ms": -1.0}, {"round_trips": 0}, {"target_ms": 0.0}, {"rtt_ms": math.nan}])
def test_commit_time_parts_refuses_bad_input(runs, kw):
    args = {"rtt_ms": 1.5, "round_trips": 11, "target_ms": 48.0} | kw
    name = next(iter(kw))
    with pytest.raises(ValueError, match=name):
        compare.commit_time_parts(runs["stuck"], **args)


def test_bounded_waits_one_owner_under_m_two_owners_over(runs):
    run = runs["bounded"]
    w = compare.bounded_waits(run)
    lim = run.scenario.queue_limit
    assert w["limit"] == lim
    assert w["one_owner_ms"] == pytest.approx(lim * run.batch_ms_b)
    assert w["two_owners_ms"] == pytest.approx(lim * (run.batch_ms_b + run.batch_ms_c))
    assert w["one_owner_total_ms"] < w["timeout_ms"] < w["two_owners_ms"]
    with pytest.raises(ValueError, match="queue_limit"):
        compare.bounded_waits(replace(run, scenario=replace(run.scenario, queue_limit=None)))


def test_goodput_share_matches_the_data(runs):
    run = runs["bounded"]
    sc = run.scenario
    so = sc.second_owner
    during = compare.goodput_share(sc, run.windows, so.start_ms / 1e3, so.end_ms / 1e3)
    after = compare.goodput_share(sc, run.windows, so.end_ms / 1e3, sc.horizon_ms / 1e3)
    assert during < 0.1 < 0.9 < after  # two owners: a full bounded queue waits > M; one owner: < M
    t = np.asarray(run.windows["t"])
    keep = (t >= so.end_ms / 1e3)
    assert after == pytest.approx(run.windows["goodput"][keep].sum() / run.windows["offered"][keep].sum())
    for a, b, name in ((-1.0, 10.0, "start_s"), (10.0, 10.0, "end_s"), (0.0, 1e9, "end_s")):
        with pytest.raises(ValueError, match=name):
            compare.goodput_share(sc, run.windows, a, b)


def test_drain_parts_closed_forms_and_order(runs):
    run = runs["degrade"]
    p = compare.drain_parts(run)
    assert p["queue"] == pytest.approx(p["queue_b"] + p["queue_c"])
    assert p["closed_s"] == pytest.approx(p["queue"] / capacity.tps_ceiling(run.batch_ms_b))
    assert p["turns_s"] == pytest.approx((p["queue_b"] * run.batch_ms_b + p["queue_c"] * run.batch_ms_c) / 1e3)
    # each refinement moves toward the measured reading, and the reading comes last (window centres)
    assert p["closed_s"] <= p["turns_s"] <= p["at_rate_s"] <= p["last_commit_s"] <= p["reading_s"]
    assert p["reading_s"] - p["last_commit_s"] <= 1.5 * p["window_s"]
    assert p["reading_s"] == compare.compare_turn(run, seeds=1)["real_drain_s"]
    with pytest.raises(ValueError, match="degrade"):
        compare.drain_parts(runs["stuck"])


def test_threshold_factors():
    assert compare.threshold_factors([1.0, 1.5, 2.0], [20, 20, 0]) == (1.5, 2.0)
    assert compare.threshold_factors([1.0, 1.5, 2.0], [20, 11, 10]) == (1.5, 2.0)
    assert compare.threshold_factors([1.0, 2.0], [20, 19]) is None
    for factors, ks, name in (([1.0, 1.0], [20, 0], "ascending"), ([1.0, 2.0], [20], "same length"),
                              ([1.0, 2.0], [20, 21], "recovered"), ([1.0, 2.0], [20, -1], "recovered")):
        with pytest.raises(ValueError, match=name):
            compare.threshold_factors(factors, ks)


def test_stall_sweep_refuses_bad_input(runs):
    run = runs["degrade"]
    for factors, seeds, name in (([], 2, "factors"), ([0.5], 2, "factors"), ([1.0], 0, "seeds")):
        with pytest.raises(ValueError, match=name):
            compare.stall_sweep(run, 150.0, 153.0, factors, seeds=seeds)


def test_stall_sweep_no_stretch_recovers(runs):
    # factor 1 is the model beside the degrade run unchanged: it recovers (as compare_turn says)
    assert compare.stall_sweep(runs["degrade"], 150.0, 153.0, [1.0], seeds=2) == [2]


def test_measured_crossing_uses_the_measured_n(runs):
    run = runs["stuck"]
    sc = compare.model_scenario(run)
    assert sc.batch_ms == run.batch_ms_b
    real = compare.compare_turn(run, seeds=1)["real_cross_s"]
    assert real == compare.turn_times(sc, run.windows)["cross_s"]
    # two batchers cross M/N (measured N_B) within the first window, as the closed form says
    g2 = compare.growth_closed_form(run, 2)
    crit = capacity.critical_queue_length(sc.timeout_ms, run.batch_ms_b)
    assert crit / g2 < sc.window_ms / 1e3
    assert real == sc.window_ms / 2e3


# --------------------------------------------------------------------------- the verdict block, scaled
def test_verdict_block_is_04s_scaled_like_every_other_time():
    from hotkeylab.metastable.analysis import BLOCK_S

    assert compare.BLOCK_S == pytest.approx(BLOCK_S * scenario.SCALE)


def test_verdict_at_scale_one_is_04s_recovery_on_the_stacks_clock(runs):
    from types import SimpleNamespace

    from hotkeylab.metastable.analysis import recovery

    for run in runs.values():
        shim = SimpleNamespace(truncated=False, scenario=run.scenario, windows=run.windows,
                               status=SimpleNamespace(t_end_ms=run.scenario.horizon_ms))
        assert compare.verdict(run, scale=1.0) == recovery(shim), run.turn


def test_verdict_scaled_block_absorbs_the_bounded_turns_single_window_dips(runs):
    # with 04's block unscaled (2 windows) the bounded run's later one-window dips fail blocks and
    # push its recovery far past the isolation; with 5 windows it recovers at the isolation
    b = runs["bounded"]
    rec1, s1 = compare.verdict(b, scale=1.0)
    rec3, s3 = compare.verdict(b)
    assert rec1 and rec3 and s3 == 0.0 and s1 > 10 * b.scenario.window_ms / 1000.0
    assert compare.verdict(runs["stuck"]) == (False, None)


@pytest.mark.parametrize("scale", [0.0, -1.0, math.nan, 100.0])
def test_verdict_refuses_bad_scale(runs, scale):
    with pytest.raises(ValueError, match="scale"):
        compare.verdict(runs["bounded"], scale=scale)
