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
