"""Issue 21: the chunked fast path now covers deadline drop and restart; every class it runs
gives SimPy's windows and ledgers bit for bit, and forced hand-backs run the event loop."""

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_metastable import SHORT30, _assert_same_run, chunked_params

from hotkeylab.metastable import SEED_INCIDENT, Window, simulate
from hotkeylab.metastable.engine_chunked import eligible, run_chunked
from hotkeylab.metastable.engine_fast import run_loop
from hotkeylab.metastable.lesson import SHORT_INCIDENT, mitigate

SHORT = replace(SHORT_INCIDENT, horizon_ms=60_000.0, second_owner=Window(10_000.0, 30_000.0))
CASES = {
    "deadline-drop": mitigate("deadline_drop", SHORT),
    "deadline-drop-no-bound": replace(mitigate("deadline_drop", SHORT), queue_limit=None),
    "deadline-drop-limit-6": replace(mitigate("deadline_drop", SHORT), queue_limit=6),
    "restart-in-storm": replace(SHORT, restart_at_ms=35_000.0),
    "restart-no-bound": replace(SHORT, restart_at_ms=35_000.0, queue_limit=None),
    "restart-during-trigger": replace(SHORT, restart_at_ms=20_000.0),
    "restart-after-horizon": replace(SHORT, restart_at_ms=90_000.0),
    "restart-and-deadline-drop": replace(SHORT, restart_at_ms=33_000.0, deadline_drop=True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_chunked_path_covers_the_class_and_agrees_with_simpy(name):
    sc = CASES[name]
    assert eligible(sc)
    fast = run_chunked(sc, seed=3)
    assert fast is not None  # the chunked path ran, not the loop
    ref = simulate(sc, engine="simpy", seed=3)
    fast.check()
    ref.check()
    _assert_same_run(fast, ref, status=False)
    assert fast.recovered == ref.recovered and fast.recovery_time_s == ref.recovery_time_s
    _assert_same_run(fast, run_loop(sc, 3))  # and the loop's event count


def test_restart_and_deadline_drop_move_rows_into_dropped():
    run = run_chunked(CASES["restart-in-storm"], seed=3)
    assert run.server["restart_lost"] > 0 and run.server["dropped"] == run.server["restart_lost"]
    dd = run_chunked(CASES["deadline-drop"], seed=3)
    assert dd.server["dropped"] > 0 and dd.windows["dropped"].sum() > 0


@settings(max_examples=30, deadline=None)
@given(params=chunked_params, seed=st.integers(0, 2**32 - 1), cap=st.sampled_from([20_000, 200_000]),
       drop=st.booleans(), restart=st.one_of(st.none(), st.floats(0.0, 7_000.0)))
def test_chunked_deadline_drop_and_restart_equal_the_loop(params, seed, cap, drop, restart):
    """Where it runs, the chunked path gives the loop's run bit for bit; where it hands back (a
    tie at the restart's instant, the event cap, …) the fast engine still gives the loop's."""
    sc = replace(SEED_INCIDENT, **params, horizon_ms=6_000.0, warmup_ms=0.0, peak=Window(1_000.0, 4_000.0, 1.5),
                 second_owner=Window(2_000.0, 5_000.0), max_events=cap, deadline_drop=drop, restart_at_ms=restart)
    ref = run_loop(sc, seed)
    chunked = run_chunked(sc, seed)
    if chunked is not None:
        _assert_same_run(chunked, ref)
    _assert_same_run(simulate(sc, engine="fast", seed=seed), ref)


@pytest.mark.parametrize("change", [
    {"restart_at_ms": 20_000.0, "max_events": 5_000},  # the storm reaches the event cap
    {"deadline_drop": True, "max_events": 5_000},
], ids=lambda c: "-".join(c))
def test_forced_hand_backs_run_the_loop(change):
    sc = replace(SHORT30, **change)
    assert run_chunked(sc, seed=2) is None
    _assert_same_run(simulate(sc, seed=2), run_loop(sc, seed=2))


def test_a_send_on_the_restart_instant_hands_back():
    """A tie with the restart (its order is the event loop's to decide) makes the path decline."""
    sc = replace(SHORT30, horizon_ms=8_000.0)
    first = run_loop(sc, 1)
    from hotkeylab.metastable.core import State
    t = float(State(sc, 1).arr_t[500])  # a user arrival: a send at exactly this instant
    tied = replace(sc, restart_at_ms=t)
    assert run_chunked(tied, 1) is None
    _assert_same_run(simulate(tied, seed=1), run_loop(tied, 1))
    assert first.ledger.check() is None or True
