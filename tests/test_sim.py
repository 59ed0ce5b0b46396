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
