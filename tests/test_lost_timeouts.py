"""08 · lost timeouts: the timing wheel, ledger, Little's law, the leak, conditions, fixes, widget."""

import math
from dataclasses import replace

import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hotkeylab import exercises
from hotkeylab import lost_timeouts as lt
from hotkeylab.exercise_sets import nb08_lost_timeouts as nb08

SC = lt.SEED_INCIDENT
# a short version of the seed: exit at 60 s, hang at 120 s, 60 s of leak, no GC trouble yet
SHORT = replace(SC, horizon_ms=180_000.0, window_ms=5_000.0)


# --------------------------------------------------------------------------- the timing wheel
@st.composite
def wheel_scripts(draw):
    tick = draw(st.floats(1.0, 50.0, allow_nan=False, allow_infinity=False))
    slots = draw(st.integers(1, 16))
    n = draw(st.integers(1, 60))
    gaps = draw(st.lists(st.floats(0.0, 3.0 * tick), min_size=n, max_size=n))
    # delays up to 3 turns of the wheel, so many timeouts carry rounds
    delays = draw(st.lists(st.floats(0.0, 3.0 * tick * slots), min_size=n, max_size=n))
    cancel = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    cancel_after = draw(st.lists(st.floats(0.0, 4.0 * tick * slots), min_size=n, max_size=n))
    return tick, slots, gaps, delays, cancel, cancel_after


@given(wheel_scripts())
def test_wheel_fires_each_timer_once_never_early_at_most_one_tick_late(script):
    tick, slots, gaps, delays, cancel, cancel_after = script
    wheel = lt.HashedWheelTimer(tick, slots, start_ms=0.0)
    fired: dict[int, int] = {}
    cancelled: set[int] = set()
    handles = []
    # events: adds at increasing times; cancels at add time + cancel_after
    t = 0.0
    plan = []
    for i, (g, d) in enumerate(zip(gaps, delays, strict=True)):
        t += g
        plan.append((t, 0, i, d))
        if cancel[i]:
            plan.append((t + cancel_after[i], 1, i, None))
    plan.sort(key=lambda e: (e[0], e[1]))

    def run_ticks_until(now):
        while wheel.next_tick_ms <= now:
            tick_time = wheel.next_tick_ms
            for h in wheel.advance():
                fired[h.task] = fired.get(h.task, 0) + 1
                assert h.fired_at_ms == tick_time

    for when, kind, i, d in plan:
        run_ticks_until(when)
        if kind == 0:
            handles.append(wheel.new_timeout(i, d, when))
        else:
            h = handles[i]
            if h.cancel():
                cancelled.add(i)
            assert not h.cancel()  # twice: no effect
    while wheel.live:
        run_ticks_until(wheel.next_tick_ms)
    assert wheel.live == 0
    for i, h in enumerate(handles):
        if i in cancelled:
            assert i not in fired and h.is_cancelled and h.fired_at_ms is None
        else:
            assert fired.get(i) == 1, f"timer {i} fired {fired.get(i, 0)} times"
            late = h.fired_at_ms - h.deadline_ms
            assert late > 0.0  # never at or before its deadline
            assert late <= tick * (1 + 1e-9) + 1e-9  # at most one tick late
    # a few more turns: nothing fires again
    for _ in range(3 * slots):
        assert wheel.advance() == []


def test_wheel_rounds_for_timeouts_longer_than_one_turn():
    assert lt.wheel_span_ms() == pytest.approx(15_360.0)
    assert lt.wheel_rounds(1000.0) == 0
    assert lt.wheel_rounds(20_000.0) == 1
    assert lt.wheel_rounds(40_000.0) == 2
    w = lt.HashedWheelTimer()
    short = w.new_timeout("short", 1000.0, 0.0)
    long_ = w.new_timeout("long", 20_000.0, 0.0)
    w.advance()  # files both
    assert short.remaining_rounds == 0 and long_.remaining_rounds == 1
    assert short.slot == math.floor(1000.0 / 30.0) and long_.slot == math.floor(20_000.0 / 30.0) % 512
    now_, later = w.occupancy()
    assert now_.sum() == 1 and later.sum() == 1
    fired = w.advance_to(21_000.0)
    assert [h.task for h in fired] == ["short", "long"]
    assert 0 < short.fired_at_ms - 1000.0 <= 30.0 and 0 < long_.fired_at_ms - 20_000.0 <= 30.0


def test_measured_lateness_is_half_a_tick_on_average():
    late = lt.measure_lateness(n=3000, seed=1)
    assert late.min() > 0 and late.max() <= lt.DUBBO_TICK_MS + 1e-9
    assert late.mean() == pytest.approx(lt.DUBBO_TICK_MS / 2, rel=0.05)


def test_wheel_refuses_bad_input():
    w = lt.HashedWheelTimer(30.0, 8)
    with pytest.raises(ValueError, match="delay_ms"):
        w.new_timeout(None, -1.0, 0.0)
    w.advance_to(100.0)
    with pytest.raises(ValueError, match="now_ms"):
        w.new_timeout(None, 10.0, 50.0)  # before the last processed tick
    with pytest.raises(ValueError, match="now_ms"):
        w.new_timeout(None, 10.0, 1000.0)  # ticks are due first
    other = lt.HashedWheelTimer()
    h = other.new_timeout(None, 5.0, 0.0)
    with pytest.raises(ValueError, match="timeout"):
        w.cancel(h)
    for kw, name in (({"tick_ms": 0}, "tick_ms"), ({"slots": 0}, "slots"), ({"start_ms": -1}, "start_ms")):
        with pytest.raises(ValueError, match=name):
            lt.HashedWheelTimer(**kw)


# --------------------------------------------------------------------------- scenario & input
def test_preset_reads_like_the_seed():
    assert SC.call_mode == "async" and SC.exit_kind == "abrupt" and SC.fix == "none"
    assert SC.hang_at_ms is not None and SC.exit_at_ms is not None
    assert (SC.tick_ms, SC.slots) == (30.0, 512)
    assert SC.executor_shutdown_ms == SC.exit_at_ms
    assert SC.exit_stall_ms > 0  # the failing machine stops answering before it drops
    assert SC.leak_start_ms == SC.hang_at_ms  # the hang comes after the shutdown
    assert SC.leak_per_s == pytest.approx(SC.rate_per_s / (SC.providers - 1))
    assert lt.HEALTHY.leak_start_ms is None and lt.HEALTHY.executor_shutdown_ms is None
    # the hang before the shutdown: calls whose timeout fires after the shutdown leak
    early = replace(SC, hang_at_ms=10_000.0)
    assert early.leak_start_ms == pytest.approx(SC.exit_at_ms - SC.timeout_ms - SC.tick_ms / 2)


@pytest.mark.parametrize(
    "field, value",
    [
        ("rate_per_s", 0.0),
        ("providers", 1),
        ("hung_share", 1.5),
        ("call_mode", "oneway"),
        ("timeout_ms", 0.0),
        ("exit_kind", "crash"),
        ("fix", "upgrade"),
        ("max_outstanding", 0),
        ("tick_ms", 0.0),
        ("tick_ms", 0.5),  # finer than 1 ms: deadline / tick would leave a float
        ("slots", 0),
        ("heap_mb", 0.0),
        ("base_live_mb", 5000.0),
        ("gc_cost", -0.1),
        ("gc_sample_ms", 0.5),
        ("horizon_ms", 0.0),
        ("window_ms", 1e9),
        ("b_nodes", 0),
        ("b_leaking_nodes", 11),
        ("max_events", lt.MAX_EVENTS + 1),
        ("max_events", 0),
        ("hung_share", float("nan")),
    ],
)
def test_bad_scenario_raises_naming_the_parameter(field, value):
    with pytest.raises(ValueError, match=field):
        replace(SC, **{field: value})


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: lt.simulate(SHORT, seed=-1), "seed"),
        (lambda: lt.simulate(SHORT, seed=0.5), "seed"),
        (lambda: lt.simulate(SHORT, max_events=0), "max_events"),
        (lambda: lt.simulate({"rate_per_s": 1}), "scenario"),
        (lambda: lt.fluid("seed"), "scenario"),
        (lambda: lt.fluid(SC, dt_ms=0.0), "dt_ms"),
        (lambda: lt.healthy_in_flight(-1, 0.2, 1000, 20), "rate_per_s"),
        (lambda: lt.healthy_in_flight(100, 2, 1000, 20), "hung_share"),
        (lambda: lt.healthy_bound(100, 0), "timeout_ms"),
        (lambda: lt.leaked_calls(100, 0.2, -5, 0), "t_ms"),
        (lambda: lt.gc_fraction(-0.1, 0.015), "heap_used_fraction"),
        (lambda: lt.heap_fraction_at_gc(1.5, 0.015), "gc_share"),
        (lambda: lt.wheel_rounds(-1), "delay_ms"),
        (lambda: lt.leak_start(-1, 0, 1000), "hang_at_ms"),
        (lambda: lt.leak_start(0, 60_000, 0), "timeout_ms"),
        (lambda: lt.p_shutdown_at_kill(-1, 20), "rate_per_s"),
        (lambda: lt.t0_experiment(SHORT, seeds=0), "seeds"),
        (lambda: lt.t0_experiment(SHORT, hang_before_ms=-5), "hang_before_ms"),
        (lambda: lt.shutdown_count(SHORT, seeds=0), "seeds"),
        (lambda: lt.assumption_ranges(SHORT, horizon_ms=0), "horizon_ms"),
        (lambda: lt.conditions_table(SHORT, fix="maybe"), "fix"),
        (lambda: lt.compare_fixes(SHORT, cap=0), "cap"),
        (lambda: lt.compare_fixes(SHORT, reuse=[1]), "reuse"),
        (lambda: lt.cluster_view([1.0], 100, 200, 10, 11), "b_leaking_nodes"),
        (lambda: lt.measure_lateness(n=0), "n"),
        (lambda: lt.demo_wheel(rate_per_s=0), "rate_per_s"),
    ],
)
def test_bad_arguments_raise_value_error(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --------------------------------------------------------------------------- closed forms
def test_closed_forms():
    # Little: 3/4 of 100 calls/s live 20 ms, 1/4 live timeout + half a tick
    assert lt.healthy_in_flight(100, 0.25, 1000, 20, 30) == pytest.approx(0.75 * 100 * 0.020 + 25 * 1.015, rel=1e-6)
    assert lt.healthy_bound(100, 1000, 30) == pytest.approx(103.0)
    assert lt.leak_rate_per_s(100, 0.25) == 25.0
    assert lt.leaked_calls(100, 0.25, 720_000, 120_000) == pytest.approx(15_000.0)
    assert lt.leaked_calls(100, 0.25, 100_000, 120_000) == 0.0
    assert lt.gc_fraction(0.25, 0.015) == pytest.approx(0.005)
    assert lt.gc_fraction(1.0, 0.015) == 1.0
    for g in (0.05, 0.5, 0.98):
        assert lt.gc_fraction(lt.heap_fraction_at_gc(g, 0.015), 0.015) == pytest.approx(g)


def test_cluster_view_moves_the_lost_share_to_the_others():
    v = lt.cluster_view([1.0, 0.5, 0.0], 100, 200, 10, 3)
    assert v["leaking_per_s"].tolist() == [100.0, 50.0, 0.0]
    assert v["healthy_per_s"][0] == pytest.approx(100.0)
    assert v["healthy_per_s"][2] == pytest.approx(1000 / 7)
    assert v["healthy_latency_ms"][0] == pytest.approx(10.0)  # M/M/1: 1000 / (200 − 100)
    assert v["healthy_latency_ms"][2] == pytest.approx(1000 / (200 - 1000 / 7))
    over = lt.cluster_view([0.0], 100, 200, 10, 6)  # the others would need 250/s > 200/s
    assert math.isinf(over["healthy_latency_ms"][0])


# --------------------------------------------------------------------------- simulation
def _healthy_little_scenario(**kw):
    # a provider hangs from the start, no exit, timeouts work: the steady state of Little's law
    return replace(SC, exit_at_ms=None, hang_at_ms=0.0, horizon_ms=300_000.0, **kw)


def test_littles_law_in_the_healthy_case():
    """Time-average calls in flight vs λ W (closed form): within 5% (Monte-Carlo noise at this
    horizon is about 2%); no call outlives its timeout by more than one tick."""
    sc = _healthy_little_scenario()
    run = lt.simulate(sc, seed=3)
    s = run.summary
    expected = lt.healthy_in_flight(sc.rate_per_s, 1 / sc.providers, sc.timeout_ms, sc.service_ms, sc.tick_ms)
    assert s["mean_in_flight"] == pytest.approx(expected, rel=0.05)
    assert s["mean_in_flight"] == pytest.approx(s["little_in_flight"], rel=1e-9)  # L = λW exactly
    assert s["mean_in_flight"] < lt.healthy_bound(sc.rate_per_s, sc.timeout_ms, sc.tick_ms)
    assert s["max_sojourn_ms"] <= sc.timeout_ms + sc.tick_ms + 1e-6
    assert s["max_sojourn_ms"] > sc.timeout_ms  # the hung provider's calls wait the full timeout
    assert s["lost_timeouts"] == 0 and not s["leaks"]
    assert s["timed_out"] > 0


def test_the_leak_grows_as_lambda_hung_times_t():
    sc = replace(SC, horizon_ms=300_000.0, gc_cost=0.0)  # no GC feedback
    run = lt.simulate(sc, seed=1)
    t_end = sc.horizon_ms
    expected = lt.leaked_calls(sc.rate_per_s, sc.share_of_hung(t_end), t_end, sc.leak_start_ms)
    assert run.summary["stuck_end"] == pytest.approx(expected, rel=0.05)
    assert run.summary["stuck_on_hung"] == run.summary["stuck_end"]  # all on the hung provider
    assert run.summary["lost_timeouts"] >= run.summary["stuck_end"]
    assert run.summary["executor_shutdown_s"] == pytest.approx(sc.exit_at_ms / 1000)
    assert run.summary["first_lost_s"] > sc.hang_at_ms / 1000
    # only the killed provider's stalled calls timed out, all before the shutdown; after it every
    # timeout is rejected
    w = run.windows
    assert w["timeouts"][w["t"] > (sc.exit_at_ms + sc.window_ms) / 1000].sum() == 0
    assert 0 < run.summary["timed_out"] <= sc.rate_per_s / sc.providers * sc.exit_stall_ms / 1000


def test_fluid_model_agrees_with_the_simulation():
    """In-flight within 3% at 300 s and 500 s; the GC spiral (GC ≥ 50%) within 15 s."""
    run = lt.simulate(SC, seed=0)
    f = lt.fluid(SC)
    for t in (300, 500):
        i = int(np.flatnonzero(run.samples["t"] == t)[0])
        assert run.samples["in_flight"][i] == pytest.approx(f["in_flight"][i], rel=0.03)
    t_sim = float(run.samples["t"][np.flatnonzero(run.samples["gc"] >= 0.5)[0]])
    assert t_sim == pytest.approx(f["gc50_s"], abs=15)
    assert run.summary["dead_s"] == pytest.approx(f["dead_s"], abs=15)
    assert run.summary["heap_end_pct"] > 95
    assert run.samples["serving"][-1] < 0.05  # the machine has stopped serving
    d = run.dump
    assert d is not None and d["futures"] == max(d["by_provider"].values()) + sum(
        v for k, v in d["by_provider"].items() if k != 1
    )
    assert d["by_provider"][1] / d["futures"] > 0.99  # the dump points at the hung provider


def test_same_seed_same_run_other_seed_other_run():
    # the contract suite compares ledgers and windows; here: every sample and the summary
    a, b = lt.simulate(SHORT, seed=7), lt.simulate(SHORT, seed=7)
    for k in a.samples:
        np.testing.assert_array_equal(a.samples[k], b.samples[k])
    assert a.summary == b.summary
    c = lt.simulate(SHORT, seed=8)
    assert c.summary["calls"] != a.summary["calls"]


def test_ranges_are_declared_once_and_integral_floats_become_ints():
    from hotkeylab.validate import declared_ranges

    assert set(declared_ranges(SC)) == {f for f in SC.__dataclass_fields__}
    sc = replace(SC, providers=7.0, slots=64.0, max_outstanding=10.0, max_events=1000.0)
    assert (sc.providers, sc.slots, sc.max_outstanding, sc.max_events) == (7, 64, 10, 1000)
    assert all(type(v) is int for v in (sc.providers, sc.slots, sc.max_outstanding, sc.max_events))
    assert replace(SC, hung_share=None, exit_at_ms=None, hang_at_ms=None).leak_start_ms is None


def test_the_scenario_cap_bounds_a_run_and_simulate_can_lower_it():
    a = lt.simulate(replace(SHORT, max_events=5_000))
    b = lt.simulate(SHORT, max_events=5_000)
    assert a.status == b.status and a.status.truncated and a.status.events == 5_000
    assert a.summary == b.summary


def test_no_function_local_imports_in_the_package():
    """scenario <-> closed_form and machine <-> model were circles closed by imports inside
    functions; every module now imports at its top only."""
    import ast
    import pathlib

    for path in pathlib.Path(lt.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner = [n for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))]
                # figures/lesson import matplotlib/ipywidgets lazily; no module imports a sibling late
                assert not [n for n in inner if isinstance(n, ast.ImportFrom) and n.level > 0], (path.name, node.name)


def test_runs_are_bounded_even_when_absurd():
    sc = replace(SC, rate_per_s=100_000.0, horizon_ms=3_600_000.0, tick_ms=1.0)
    run = lt.simulate(sc, seed=0, max_events=20_000)
    assert run.status.truncated and run.status.events == 20_000
    run.ledger.check()


@given(
    rate=st.floats(5.0, 300.0),
    providers=st.integers(2, 6),
    hung_share=st.one_of(st.none(), st.floats(0.0, 1.0)),
    mode=st.sampled_from(lt.MODES),
    exit_at=st.one_of(st.none(), st.floats(0.0, 20_000.0)),
    exit_kind=st.sampled_from(lt.EXIT_KINDS),
    hang_at=st.one_of(st.none(), st.floats(0.0, 20_000.0)),
    fix=st.sampled_from(lt.FIXES),
    cap=st.one_of(st.none(), st.integers(1, 50)),
    timeout=st.floats(10.0, 5000.0),
    tick=st.floats(1.0, 100.0),
    slots=st.integers(1, 64),
    max_events=st.integers(50, 20_000),
    seed=st.integers(0, 2**16),
)
def test_ledger_balances_for_random_parameters(
    rate, providers, hung_share, mode, exit_at, exit_kind, hang_at, fix, cap, timeout, tick, slots, max_events, seed
):
    sc = replace(
        SC,
        rate_per_s=rate,
        providers=providers,
        hung_share=hung_share,
        call_mode=mode,
        exit_at_ms=exit_at,
        exit_kind=exit_kind,
        hang_at_ms=hang_at,
        fix=fix,
        max_outstanding=cap,
        timeout_ms=timeout,
        tick_ms=tick,
        slots=slots,
        horizon_ms=30_000.0,
        window_ms=1000.0,
    )
    run = lt.simulate(sc, seed=seed, max_events=max_events)
    led = run.ledger.check()
    assert led.arrived == led.served + led.timed_out + led.rejected + led.in_system
    assert led.rejected == sum(led.extra.values())
    assert run.summary["stuck_end"] <= led.in_system
    if cap is not None:
        assert led.in_system <= cap * providers
    if sc.timeouts_lost_from_ms is None:
        assert run.summary["lost_timeouts"] == 0
    if not run.status.truncated:
        # every completed call ended within timeout + one tick, unless its timeout was lost
        if sc.timeouts_lost_from_ms is None:
            assert run.summary["max_sojourn_ms"] <= timeout + tick + 1e-6


# --------------------------------------------------------------------------- the three conditions
def test_only_all_three_conditions_leak_and_the_fix_removes_it():
    """The rows come out of the mechanism (no row is predicted): the shared executor is shut down
    only by an abrupt exit of async calls (closeChannel finds their futures pending); a leak needs
    that and a hung provider."""
    rows = lt.conditions_table(SC, seed=0, horizon_ms=150_000.0)
    assert len(rows) == 8 and "predicted" not in rows[0]
    for r in rows:
        all_three = r["async"] and r["abrupt_exit"] and r["hung_provider"]
        assert r["leaks"] == all_three, r
        shut = r["async"] and r["abrupt_exit"]
        assert (r["shutdown_s"] is not None) == shut, r
        if r["abrupt_exit"]:
            assert r["failed_on_disconnect"] > 0  # calls were pending on the dropped channel
    no_hang = next(r for r in rows if r["async"] and r["abrupt_exit"] and not r["hung_provider"])
    assert no_hang["stuck_end"] == 0 and no_hang["lost_timeouts"] == 0  # no call needed its timeout
    fixed = lt.conditions_table(SC, seed=0, horizon_ms=150_000.0, fix="no_shutdown")
    assert not any(r["leaks"] for r in fixed) and all(r["shutdown_s"] is None for r in fixed)


def test_sync_calls_keep_their_timeouts_because_their_executor_is_their_own():
    sync = lt.simulate(replace(SHORT, call_mode="sync"), seed=0)
    assert sync.summary["failed_on_disconnect"] > 0  # closeChannel ran on pending sync calls ...
    assert sync.summary["executor_shutdown_s"] is None  # ... and shut down only their own executors
    assert sync.summary["lost_timeouts"] == 0 and sync.summary["timed_out"] > 0
    inline = lt.simulate(replace(SHORT, fix="inline_timeout"), seed=0)
    assert inline.summary["executor_shutdown_s"] is not None
    assert inline.summary["lost_timeouts"] == 0 and not inline.summary["leaks"]


def test_graceful_exit_is_safe_because_it_drains_not_because_it_is_graceful():
    graceful = lt.simulate(replace(SHORT, exit_kind="graceful"), seed=0)
    assert graceful.summary["executor_shutdown_s"] is None and not graceful.summary["leaks"]
    assert graceful.summary["failed_on_disconnect"] == 0  # nothing pending when the channel closed
    # a graceful exit whose pending calls cannot drain within dubbo's wait (they neither get an
    # answer nor time out within GRACEFUL_WAIT_MS) shuts the executor down just the same
    slow = replace(SHORT, exit_kind="graceful", timeout_ms=2 * lt.GRACEFUL_WAIT_MS)
    run = lt.simulate(slow, seed=0)
    wait_s = lt.GRACEFUL_WAIT_MS / 1000
    assert run.summary["executor_shutdown_s"] == pytest.approx(SC.exit_at_ms / 1000 + wait_s, abs=0.02)
    assert run.summary["leaks"]


def test_a_clean_kill_shuts_the_executor_down_only_if_a_call_is_pending():
    """M/G/inf: the calls pending on a provider answering normally are Poisson with mean λ_p S, so a
    kill without a stall shuts the executor down with probability 1 − exp(−λ_p S); within 3 sd."""
    clean = replace(SC, exit_stall_ms=0.0, hang_at_ms=None)
    n = 60
    r = lt.shutdown_count(clean, seeds=n)
    p = r["p_closed_form"]
    assert p == pytest.approx(1 - math.exp(-SC.rate_per_s / SC.providers * SC.service_ms / 1000))
    assert abs(r["shut_down"] - n * p) <= 3 * math.sqrt(n * p * (1 - p))
    assert 0 < r["shut_down"] < n
    stalled = lt.shutdown_count(replace(SC, hang_at_ms=None), seeds=20)
    assert stalled["shut_down"] == 20  # the preset's 2 s stall leaves ~20 calls pending at the kill


@pytest.fixture(scope="module")
def t0_exp():
    return lt.t0_experiment(SC, hang_before_ms=30_000.0, seeds=20)


def test_t0_closed_form_against_the_simulation(t0_exp):
    """The hang 30 s before the shutdown: stuck calls issued before the shutdown match
    λ s (T + tick/2) over 20 seeds (Poisson noise about 5%), and t0 separates the last call that
    timed out from the first one that stuck, within a tick and an arrival gap."""
    exp = t0_exp
    assert exp["shut_down_in"] == 20
    assert exp["t0_ms"] == pytest.approx(SC.exit_at_ms - SC.timeout_ms - SC.tick_ms / 2)
    assert exp["t0_ms"] == lt.leak_start(SC.exit_at_ms - 30_000.0, SC.exit_at_ms, SC.timeout_ms, SC.tick_ms)
    total = exp["stuck_before_shutdown"].sum()
    expected = 20 * exp["expected_before_shutdown"]
    assert abs(total - expected) <= 3 * math.sqrt(expected)
    gap = 1000.0 / (SC.rate_per_s / SC.providers)  # mean time between calls to the hung provider
    early = exp["earliest_stuck_ms"] - exp["t0_ms"]
    late = exp["latest_timed_out_ms"] - exp["t0_ms"]
    assert np.all(late < early)
    assert abs(np.mean(early)) < SC.tick_ms / 2 + 2 * gap and abs(np.mean(late)) < SC.tick_ms / 2 + 2 * gap
    # the hang after the shutdown: t0 is the hang
    assert lt.leak_start(120_000.0, 60_000.0, 1000.0) == 120_000.0


def test_t0_outlier_seed_is_a_burst_at_one_tick_and_the_typical_seed_is_the_median(t0_exp):
    """fig03: the seed farthest from the closed form owes its excess to one burst of calls to the
    hung provider whose timeouts fire at one tick (random routing clumps); it is the largest burst
    of the 20 seeds, far above the λ_p × tick expected per tick; the typical seed is the median."""
    exp = t0_exp
    seeds = list(exp["seed_list"])
    counts, burst = exp["stuck_before_shutdown"], exp["max_stuck_in_one_tick"]
    j = seeds.index(exp["outlier_seed"])
    assert abs(counts[j] - exp["expected_before_shutdown"]) == max(abs(counts - exp["expected_before_shutdown"]))
    assert burst[j] > np.delete(burst, j).max()
    per_tick = SC.rate_per_s / SC.providers * SC.tick_ms / 1000
    assert burst[j] >= 5 * per_tick
    # without that burst the seed is within 2 Poisson sd of the closed form
    assert abs(counts[j] - (burst[j] - per_tick) - exp["expected_before_shutdown"]) < 2 * math.sqrt(
        exp["expected_before_shutdown"])
    k = seeds.index(exp["typical_seed"])
    assert abs(counts[k] - np.median(counts)) == min(abs(counts - np.median(counts)))
    axes = lt.plot_t0_timelines(exp)
    assert axes[0].get_legend() is None and axes[1].get_legend() is not None
    plt.close("all")


def test_a_tick_touches_the_calls_of_one_tick_not_every_live_timeout():
    """The wheel demo's answer: a tick files λ tick new timeouts and visits one bucket (λ tick
    expiring, plus the long ones taking a round off), while λ × (time each stays) are live."""
    lam, t, long_t, share, tick = 100.0, 1000.0, 20_000.0, 0.1, lt.DUBBO_TICK_MS
    w = lt.measure_tick_work(lam, t, long_t, share, duration_ms=300_000.0, seed=3)
    per_tick = lam * tick / 1000
    touched = per_tick * (2 + share * lt.wheel_rounds(long_t))
    live = lam * ((1 - share) * (t + tick / 2) + share * (long_t + tick / 2)) / 1000 + per_tick / 2
    assert w["touched"].mean() == pytest.approx(touched, rel=0.05)
    assert w["live"].mean() == pytest.approx(live, rel=0.05)
    assert w["live"].mean() > 30 * w["touched"].mean()
    with pytest.raises(ValueError, match="rate_per_s"):
        lt.measure_tick_work(rate_per_s=0.0)


def test_figures_are_readable_log_axes_and_legends_match_what_is_drawn():
    """fig04/06/07: log axes of call counts have a tick per decade from 1 (no 0, no stray tick),
    every labelled line is in a legend, no line hides another one it equals."""
    run = lt.simulate(SHORT, seed=0)
    healthy = lt.simulate(replace(SHORT, fix="no_shutdown"), seed=0)
    axes = lt.plot_fixes(lt.compare_fixes(SHORT, seed=0, cap=200, reuse=[run, healthy]))
    ax = axes[0]
    assert ax.get_yscale() == "log"
    ticks = [t for t in ax.get_yticks() if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]]
    assert ticks == [10.0**k for k in range(len(ticks))] and len(ticks) >= 3
    assert [lab.get_text() for lab in ax.get_yticklabels()][:3] == ["1", "10", "100"]
    assert "log scale" in ax.get_ylabel()
    fixed_line, inline_line = axes[1].lines[1], axes[1].lines[2]
    assert np.array_equal(fixed_line.get_ydata(), inline_line.get_ydata())
    assert inline_line.get_linewidth() > fixed_line.get_linewidth() and inline_line.get_zorder() < fixed_line.get_zorder()
    legend = {t.get_text() for t in axes[1].get_legend().get_texts()}
    assert len(legend) == 4
    plt.close("all")
    for ax in lt.plot_leak(run, healthy):
        drawn = {ln.get_label() for ln in ax.lines if not ln.get_label().startswith("_")}
        assert drawn == {t.get_text() for t in ax.get_legend().get_texts()}
    zoom = ax
    little = next(ln for ln in zoom.lines if ln.get_label().startswith("Little: "))
    work = next(ln for ln in zoom.lines if ln.get_label().startswith("timeouts work"))
    assert little.get_zorder() > work.get_zorder()
    plt.close("all")
    lt.explore(plot=True)
    from hotkeylab.plotting import LiveFigure

    fig = LiveFigure.latest.fig  # the widget keeps one figure outside pyplot between slider moves
    assert fig.axes[0].get_yscale() == "log" and fig.axes[0].get_ylim()[0] == 1.0
    plt.close("all")


def test_model_death_threshold_is_ours_and_the_jvm_rule_is_separate():
    """Ours: dead at GC share >= 98%. The JVM: GC share > 98% and < 2% free. They coincide only
    while k <= g f / (1 - f) = 0.02; with a dearer GC the JVM throws later (or not in the run)."""
    k_max = lt.JVM_GC_TIME_LIMIT * lt.JVM_GC_HEAP_FREE_LIMIT / (1 - lt.JVM_GC_HEAP_FREE_LIMIT)
    assert lt.heap_fraction_at_gc(lt.DEAD_GC_SHARE, k_max) == pytest.approx(1 - lt.JVM_GC_HEAP_FREE_LIMIT)
    run = lt.simulate(SC, seed=0)
    assert run.summary["dead_s"] is not None
    assert run.summary["jvm_oom_s"] == pytest.approx(run.summary["dead_s"], abs=2)
    dear = lt.simulate(replace(SC, gc_cost=0.05), seed=0)
    assert dear.summary["dead_s"] is not None
    assert dear.summary["jvm_oom_s"] is None or dear.summary["jvm_oom_s"] > dear.summary["dead_s"]


def test_assumption_ranges_all_die_and_the_fixed_stays_near_little():
    rows = lt.assumption_ranges()
    assert len(rows) == 16
    for r in rows:
        assert r["minutes_after_hang"] is not None, r
        assert r["minutes_after_hang"] == pytest.approx(r["fill_min"], rel=0.05, abs=0.2), r
        assert r["fixed_in_flight"] < 200, r


def test_fixes_compared():
    runs = lt.compare_fixes(SHORT, seed=0, cap=200)
    labels = list(runs)
    seed_run, fixed, inline, capped = (runs[k] for k in labels)
    assert seed_run.summary["leaks"] and seed_run.summary["stuck_end"] > 1000
    for r in (fixed, inline):
        assert not r.summary["leaks"]
        assert r.summary["in_flight_end"] < 2 * lt.healthy_bound(SC.rate_per_s, SC.timeout_ms)
    assert capped.summary["in_flight_end"] <= 200 + 10
    assert capped.summary["refused_by_cap"] > 0
    assert capped.summary["heap_end_mb"] < SC.base_live_mb + 210 * SC.retained_kb / 1024
    # the alert on the in-flight count fires within seconds of the leak's start
    t_alert = lt.alert_time_s(seed_run)
    assert SC.hang_at_ms / 1000 < t_alert < SC.hang_at_ms / 1000 + 15
    assert lt.alert_time_s(fixed) is None
    again = lt.compare_fixes(SHORT, seed=0, cap=200, reuse=[seed_run, fixed])
    assert again[labels[0]] is seed_run and again[labels[1]] is fixed
    assert again[labels[2]].summary == inline.summary


def test_plots_draw_without_error():
    run = lt.simulate(SHORT, seed=0)
    healthy = lt.simulate(replace(SHORT, fix="no_shutdown"), seed=0)
    lt.plot_monitors(run)
    lt.plot_leak(run, healthy)
    lt.plot_cluster(run)
    lt.plot_fixes({"a": run, "b": healthy})
    lt.plot_wheel(lt.demo_wheel())
    ax = lt.plot_t0_timeline(lt.t0_experiment(SHORT, seeds=1))
    assert len(ax.lines) > 10  # one bar per call near the boundary, plus the two markers
    plt.close("all")


# --------------------------------------------------------------------------- widget & exercises
def test_widget_driven_kernel_side():
    from ipywidgets import interactive

    w = interactive(
        lt.explore,
        rate_per_s=(20.0, 400.0, 10.0),
        hung_share=(0.0, 1.0, 0.05),
        heap_mb=(256.0, 4096.0, 256.0),
        timeout_ms=(100.0, 5000.0, 100.0),
        plot=False,
    )
    w.update()
    default = w.result
    assert default["leak_per_s"] == pytest.approx(25.0)
    assert default["dead_s"] is not None and default["heap_end_pct"] > 95
    assert default["fixed_in_flight_end"] < 2 * default["healthy_in_flight"]
    w.children[1].value = 0.0  # nothing goes to the hung provider: no leak
    w.update()
    assert w.result["leak_per_s"] == 0.0 and w.result["dead_s"] is None
    w.children[1].value = 0.25
    w.children[2].value = 4096.0  # a bigger heap only buys time
    w.update()
    assert w.result["dead_s"] is None or w.result["dead_s"] > default["dead_s"]
    assert w.result["in_flight_end"] > 10_000
    w.children[3].value = 5000.0  # the timeout sets the healthy level, not the leak
    w.update()
    assert w.result["leak_per_s"] == pytest.approx(25.0)
    assert w.result["healthy_in_flight"] > 4 * default["healthy_in_flight"]
    lt.explore(plot=True)
    ui = lt.widget()
    assert [c.description for c in ui.children[:4]] == [
        "calls/s", "share to hung provider", "heap (MB)", "timeout (ms)"]
    ui.children[0].value = 200.0
    ui.update()
    assert ui.result["leak_per_s"] == pytest.approx(50.0)
    plt.close("all")


def test_exercises_accept_the_computed_answers_and_refuse_others():
    right = {
        "08.healthy_in_flight": lt.healthy_in_flight(200, 0.2, 2000, 20, 30),
        "08.minutes_to_fill": (2048 - 256) / (100 / 8 * 32 / 1024) / 60,
        "08.wheel_rounds": lt.wheel_rounds(40_000),
        "08.safe_cap": nb08.safe_cap(),
        "08.p_shutdown": 1 - math.exp(-30 * 0.050),
        "08.t0": (60_000 - 3000 - 15) / 1000,
        "08.gc_cost_limit": 0.98 * 0.02 / 0.98,
    }
    for ex_id, answer in right.items():
        assert exercises.check(ex_id, answer).ok, ex_id
        assert not exercises.check(ex_id, answer * 2 + 1).ok, ex_id
        assert not exercises.check(ex_id, "many").ok, ex_id


def test_safe_cap_refuses_under_one_in_a_million_and_a_cap_at_the_mean_refuses_often():
    from scipy.stats import poisson

    mean = lt.leak_rate_per_s(100, 0.25) * (1000 + 30) / 1000
    cap = nb08.safe_cap()
    assert poisson.sf(cap - 1, mean) < nb08.SAFE_CAP_REFUSAL <= poisson.sf(cap - 2, mean)
    # the old answer, ceil(Little's mean), refuses a large share of calls (Poisson arrivals)
    assert poisson.sf(math.ceil(mean) - 1, mean) > 0.3
    # Monte Carlo: Poisson arrivals, each pending for timeout + tick; the count a call finds is Poisson(mean)
    rng = np.random.default_rng(0)
    arrivals = np.cumsum(rng.exponential(1 / 25.0, 200_000))
    found = np.searchsorted(arrivals, arrivals, side="left") - np.searchsorted(arrivals, arrivals - 1.03, side="right")
    assert abs(found.mean() - mean) < 0.2
    assert np.mean(found >= math.ceil(mean)) == pytest.approx(poisson.sf(math.ceil(mean) - 1, mean), abs=0.02)


def test_exercise_2_input_is_not_the_preset():
    preset = (SC.heap_mb - SC.base_live_mb) / (SC.leak_per_s * SC.retained_kb / 1024) / 60
    assert abs(nb08.minutes_to_fill_input() - preset) > 1
