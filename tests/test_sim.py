import numpy as np
import pytest
import simpy
from hypothesis import given
from hypothesis import strategies as st

from hotkeylab.sim import Ledger, LedgerError, Recorder, make_rng, run_bounded


def test_rng_is_seeded():
    assert make_rng(3).random() == make_rng(3).random()
    with pytest.raises(ValueError, match="seed"):
        make_rng(-1)
    with pytest.raises(ValueError, match="seed"):
        make_rng(1.5)


def test_run_bounded_stops_a_zero_delay_loop():
    env = simpy.Environment()

    def spinner(env):
        while True:
            yield env.timeout(0)

    env.process(spinner(env))
    status = run_bounded(env, until_ms=10.0, max_events=1000)
    assert status.truncated
    assert status.events == 1000
    assert status.t_end_ms == 0.0


def test_run_bounded_reaches_horizon():
    env = simpy.Environment()

    def ticker(env):
        while True:
            yield env.timeout(1.0)

    env.process(ticker(env))
    status = run_bounded(env, until_ms=50.0, max_events=10_000)
    assert not status.truncated
    assert status.t_end_ms == 50.0


def test_run_bounded_reports_the_horizon_when_the_last_event_comes_earlier():
    """A run that was not cut short reports the horizon, not its last event's time (the models
    used to rebuild RunStatus to say so)."""
    env = simpy.Environment()

    def once(env):
        yield env.timeout(3.0)

    env.process(once(env))
    status = run_bounded(env, until_ms=50.0, max_events=10_000)
    assert not status.truncated
    assert env.now == 3.0
    assert status.t_end_ms == 50.0


def test_recorder_counts_and_levels():
    r = Recorder(horizon_ms=1000, window_ms=100, counters=["a"], levels=["q"], weighted=["b"])
    r.count("a", 5)
    r.count("a", 99.9)
    r.count("a", 150)
    r.count("a", 5000)  # outside: ignored
    r.count("b", 120, 3.0)
    with pytest.raises(ValueError, match="not weighted"):
        r.count("a", 10, 2.0)
    r.level("q", 50, 2.0)  # q = 0 on [0, 50), 2 from 50
    r.level("q", 150, 0.0)
    r.close()
    w = r.arrays()
    assert w["t"][:3].tolist() == [0.0, 0.1, 0.2]
    assert w["a"][:2].tolist() == [20.0, 10.0]  # per second
    assert w["b"][:2].tolist() == [0.0, 30.0]
    assert w["q"][:3].tolist() == [1.0, 1.0, 0.0]
    assert len({len(v) for v in w.values()}) == 1
    with pytest.raises(ValueError, match="window_ms"):
        Recorder(horizon_ms=10, window_ms=20)


@given(st.lists(st.tuples(st.floats(0, 999), st.floats(0, 50)), max_size=30))
def test_recorder_level_integral_is_exact(changes):
    r = Recorder(horizon_ms=1000, window_ms=10, levels=["q"])
    changes = sorted(changes)
    for t, v in changes:
        r.level("q", t, v)
    r.close()
    area = 0.0
    last_t, last_v = 0.0, 0.0
    for t, v in changes:
        area += last_v * (t - last_t)
        last_t, last_v = t, v
    area += last_v * (1000 - last_t)
    assert np.sum(r.arrays()["q"]) * 10 == pytest.approx(area, rel=1e-9, abs=1e-6)


def test_ledger():
    led = Ledger(arrived=10, served=5, timed_out=2, rejected=1, in_system=2)
    assert led.check() is led
    with pytest.raises(LedgerError, match="off by 1"):
        Ledger(arrived=10, served=5, timed_out=2, rejected=1, in_system=1).check()
    with pytest.raises(LedgerError, match="negative"):
        Ledger(arrived=0, served=1, in_system=-1).check()


@pytest.mark.parametrize("window_ms", [0.3, 0.1, 0.7, 1 / 3])
def test_recorder_level_ends_on_window_edges_that_round(window_ms):
    """(i + 1) * w can floor back to i (0.3 * 3 // 0.3 == 2): the spread must still advance."""
    horizon = 30 * window_ms
    r = Recorder(horizon_ms=horizon, window_ms=window_ms, levels=["q"])
    r.level("q", 0.0, 1.0)
    r.level("q", horizon, 0.0)
    r.close()
    q = r.arrays()["q"]
    assert np.sum(q) * window_ms == pytest.approx(horizon, rel=1e-9)


def test_sweep_pool_does_not_fork_the_caller():
    """A forked child of a threaded Jupyter kernel can hang on an inherited lock: the pool the sweep
    makes for itself must start its workers another way wherever the platform allows."""
    import multiprocessing

    from hotkeylab import sweep

    pool = sweep.process_pool(max_workers=1)
    try:
        method = pool._mp_context.get_start_method()
        if "forkserver" in multiprocessing.get_all_start_methods():
            assert method == "forkserver"
        assert pool.submit(abs, -3).result(timeout=60) == 3
    finally:
        pool.shutdown()


# --- kernel parts shared by every lesson (declared ranges, outcomes, sources, percentiles) -----

from dataclasses import dataclass  # noqa: E402

from hotkeylab import sim, validate  # noqa: E402


@dataclass(frozen=True)
class _Declared:
    rows: int = validate.param(20, kind="int", low=1, high=1000)
    timeout_ms: float = validate.param(250.0, low=0.0, low_open=True)
    share: float = validate.param(0.5, kind="probability")
    mode: str = validate.param("fifo", kind="choice", choices=("fifo", "lifo"))
    limit: int | None = validate.param(None, kind="int", low=1, optional=True)

    def __post_init__(self):
        validate.check_fields(self)


def test_declared_ranges_normalise_integral_floats_and_name_the_parameter():
    s = _Declared(rows=20.0, timeout_ms=3)
    assert s.rows == 20 and type(s.rows) is int
    assert type(s.timeout_ms) is float
    assert set(validate.declared_ranges(_Declared)) == {"rows", "timeout_ms", "share", "mode", "limit"}
    for kwargs, name in [({"rows": 2.5}, "rows"), ({"rows": 0}, "rows"), ({"rows": True}, "rows"),
                         ({"timeout_ms": float("nan")}, "timeout_ms"), ({"timeout_ms": None}, "timeout_ms"),
                         ({"share": 1.5}, "share"), ({"mode": ["fifo"]}, "mode"), ({"limit": 0}, "limit")]:
        with pytest.raises(ValueError, match=name):
            _Declared(**kwargs)
    assert _Declared(limit=None).limit is None


def test_check_choice_refuses_unhashable_values_with_a_value_error():
    with pytest.raises(ValueError, match="mode must be one of"):
        validate.check_choice("mode", ["a"], {"a", "b"})


@given(st.lists(st.sampled_from(list(sim.Outcome)), max_size=200))
def test_ledger_from_outcomes_balances(codes):
    led = sim.Ledger.from_outcomes(np.array(codes, dtype=np.int8), wasted=3).check()
    assert led.arrived == len(codes)
    assert led.served == codes.count(sim.Outcome.SERVED)
    assert led.extra == {"wasted": 3}


def test_ledger_from_outcomes_refuses_unknown_codes():
    with pytest.raises(ValueError, match="Outcome codes"):
        sim.Ledger.from_outcomes(np.array([0, 7]))
    with pytest.raises(ValueError, match="Outcome codes"):
        sim.Ledger.from_outcomes(np.array([0.5]))


def test_poisson_source_block_size_keeps_the_stream_and_bounds_memory():
    a = sim.PoissonSource(make_rng(1), 100.0, block=1)
    b = sim.PoissonSource(make_rng(1), 100.0, block=64)
    ga = [a.next_gap() for _ in range(200)]
    gb = [b.next_gap() for _ in range(200)]
    assert np.allclose(ga, gb)
    t = sim.PoissonSource(make_rng(2), 200.0).times(0.0, 60_000.0)
    assert np.all(np.diff(t) > 0) and t[-1] < 60_000.0
    assert abs(t.size - 12_000) < 5 * np.sqrt(12_000)  # mean 12,000, within 5 sd
    with pytest.raises(ValueError, match="max_count"):
        sim.PoissonSource(make_rng(0), 1e9).times(0.0, 1e6, max_count=1000)
    with pytest.raises(ValueError, match="rate_per_s"):
        sim.PoissonSource(make_rng(0), 0.0)


def test_window_percentiles_per_window_and_empty_marker():
    t = np.array([1.0, 2.0, 3.0, 15.0, 99.0])
    v = np.array([10.0, 20.0, 30.0, 5.0, 1.0])
    p = sim.window_percentiles(t, v, 10.0, 3, qs=(50, 100), empty=-1.0)
    assert p[:, 0].tolist() == [20.0, 30.0]
    assert p[:, 1].tolist() == [5.0, 5.0]
    assert p[:, 2].tolist() == [-1.0, -1.0]
    with pytest.raises(ValueError, match="same length"):
        sim.window_percentiles(t, v[:2], 10.0, 3)


def test_recorder_window_floor_bounds_memory():
    with pytest.raises(ValueError, match="window_ms must be >="):
        Recorder(horizon_ms=1000, window_ms=1e-12)
    assert Recorder(horizon_ms=1e6, window_ms=1.0).n == 1_000_000


def test_a_typed_summary_turns_nan_into_no_data_and_keeps_a_mapping():
    import dataclasses
    import math

    @dataclasses.dataclass(frozen=True)
    class S(sim.Summary):
        rate_per_s: float
        """a rate (1/s)"""
        p99_ms: float | None
        """a percentile (ms; no data with no sample)"""
        shares: dict

    s = S(2.5, math.nan, {"a": np.float64("nan"), "b": 1.0})
    assert s.rate_per_s == 2.5 and s.p99_ms is sim.NO_DATA and s.shares == {"a": None, "b": 1.0}
    assert s["rate_per_s"] == 2.5 and list(s) == ["rate_per_s", "p99_ms", "shares"] and len(s) == 3
    assert dict(s) == s.as_dict() and s.get("nope") is None and "p99_ms" in s
    assert s.as_dict(no_data=sim.NO_DATA_TEXT)["p99_ms"] == "no data"
    with pytest.raises(KeyError):
        s["nope"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.rate_per_s = 1.0
    assert sim.is_no_data(None) and sim.is_no_data(math.nan) and not sim.is_no_data(0.0)
    x, y = sim.plottable([1, 2, 3], [1.0, None, math.nan])
    assert x.tolist() == [1.0] and y.tolist() == [1.0]
    assert sim.plottable([None, 2.0]).tolist() == [2.0]


def test_run_base_holds_status_ledger_and_a_typed_summary():
    import dataclasses

    @dataclasses.dataclass(frozen=True)
    class S(sim.Summary):
        served: int
        """served (count)"""

    @dataclasses.dataclass(frozen=True)
    class Stored(sim.Run):
        Summary = S
        status: sim.RunStatus
        ledger: Ledger
        summary: S | dict = dataclasses.field(default_factory=dict)

    @dataclasses.dataclass
    class Computed(sim.Run):
        Summary = S
        status: sim.RunStatus
        ledger: Ledger

        def summarise(self) -> S:
            return S(self.ledger.served)

    st_ = sim.RunStatus(10.0, 3, False)
    a = Stored(st_, Ledger(2, 2), {"served": 2})  # a dict becomes the model's Summary
    assert isinstance(a.summary, S) and a.summary.served == 2 and a.check() is a
    assert dataclasses.replace(a).summary == a.summary
    b = Computed(st_, Ledger(3, 3))
    assert b.summary == S(3) and b.summary["served"] == 3
    with pytest.raises(LedgerError):
        Computed(st_, Ledger(3, 1)).check()
    with pytest.raises(AttributeError):
        Stored(st_, Ledger()).summary  # noqa: B018 - none stored, none computed
    with pytest.raises(ValueError, match="summary"):
        Stored(st_, Ledger(), summary=3)


# --------------------------------------------------------------------------- the kernel's batcher
def test_batcher_closes_at_max_rows_or_max_wait_and_waits_on_the_hand_over():
    from hotkeylab.batcher import batcher

    env = simpy.Environment()
    inbox, out, closed = simpy.Store(env), simpy.Store(env, capacity=1), []

    def close(rows, t_open, by_timer):
        closed.append((list(rows), t_open, env.now, by_timer))
        return out.put(rows)  # a bounded queue: the batcher waits until there is room

    def rows_at(env, times):
        for t in times:
            yield env.timeout(t - env.now)
            inbox.put(t)

    env.process(batcher(env, inbox, 3, 10.0, close))
    env.process(rows_at(env, [1.0, 2.0, 3.0, 4.0, 20.0, 35.0]))
    env.run(until=100.0)
    # full at its 3rd row; then the timer (10 ms after the first row), still waiting for room
    assert closed[0] == ([1.0, 2.0, 3.0], 1.0, 3.0, False)
    assert closed[1] == ([4.0], 4.0, 14.0, True)
    assert len(closed) == 2 and out.items == [[1.0, 2.0, 3.0]] and out.put_queue
    assert inbox.items == [20.0, 35.0]  # nothing taken while the hand-over waits


# --------------------------------------------------------------------------- PoissonSource
def test_poisson_source_gaps_set_rate_and_through_keep_the_stream():
    from hotkeylab import sim as ksim

    # gaps(k) draws exactly what the block lacks: a model that pre-draws k keeps its stream
    a, b = make_rng(4), make_rng(4)
    src = ksim.PoissonSource(a, 250.0)
    assert np.array_equal(src.gaps(1000), b.exponential(4.0, 1000)) and a.random() == b.random()
    # one at a time with a rate change from the next gap on (a peak)
    a, b = make_rng(5), make_rng(5)
    one = ksim.PoissonSource(a, 100.0, block=1)
    got = [one.next_gap() for _ in range(3)]
    one.set_rate(400.0)
    got += [one.next_gap() for _ in range(3)]
    assert got == [b.exponential(10.0) for _ in range(3)] + [b.exponential(2.5) for _ in range(3)]
    # through: the arrivals after t up to and including the first at or after stop, vectorised,
    # the same floats as summing next_gap() one after another; the gaps beyond stay for the rate
    # then in force
    ref = ksim.PoissonSource(make_rng(6), 50.0, block=1)
    src = ksim.PoissonSource(make_rng(6), 50.0, block=64)
    first = src.through(0.0, 500.0, 10_000)
    src.set_rate(200.0)
    second = src.through(float(first[-1]), 900.0, 10_000, past=True)
    t, seq = 0.0, []
    while t < 500.0:
        t += ref.next_gap()
        seq.append(t)
    ref.set_rate(200.0)
    while t <= 900.0:
        t += ref.next_gap()
        seq.append(t)
    assert np.array_equal(np.concatenate((first, second)), seq)
    assert first[-2] < 500.0 <= first[-1] and second[-2] <= 900.0 < second[-1]
    assert src.through(0.0, 1e9, 7).size == 7  # at most max_count
    # a mean gap given exactly (60 000 / changes per minute is not 1000 / (changes / 60))
    assert ksim.PoissonSource(make_rng(0), block=1, mean_ms=60_000.0 / 1.75).mean_ms == 60_000.0 / 1.75
    with pytest.raises(ValueError, match="rate_per_s"):
        ksim.PoissonSource(make_rng(0), 10.0).set_rate(-1.0)


def test_window_means_group_like_the_percentiles():
    """Means by event-time window: the same grouping as the percentiles, ``empty`` where a window
    has no event, events outside the windows ignored, a length mismatch a ValueError."""
    t = np.array([1.0, 12.0, 3.0, 15.0, 29.0, 45.0])
    v = np.array([2.0, 10.0, 4.0, 20.0, 7.0, 1.0])
    m = sim.window_means(t, v, 10.0, 4, empty=-1.0)
    assert m.tolist() == [3.0, 15.0, 7.0, -1.0]
    assert np.isnan(sim.window_means([], [], 10.0, 2)).all()
    with pytest.raises(ValueError, match="same length"):
        sim.window_means(t, v[:2], 10.0, 3)
