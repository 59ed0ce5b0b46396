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


def test_a_run_on_course_past_the_cap_goes_to_the_loop_early(monkeypatch):
    """A batch per send (``batch_max_wait_ms=0``) with a cap at 40 % of the run's events: the
    chunked path, which cannot stop at the cap, hands the run to the loop within the first quarter
    of its horizon instead of giving up at the cap; the run is the loop's."""
    import hotkeylab.metastable.engine_chunked as ec

    full = run_loop(replace(SHORT30, batch_max_wait_ms=0.0), 2)
    assert not full.status.truncated
    sc = replace(SHORT30, batch_max_wait_ms=0.0, max_events=int(0.4 * full.status.events))
    said = []
    real = ec.on_course_past_cap

    def spy(events, t, H, cap):
        hit = real(events, t, H, cap)
        if hit:
            said.append(t)
        return hit

    monkeypatch.setattr(ec, "on_course_past_cap", spy)
    assert run_chunked(sc, seed=2) is None
    assert said and said[0] <= sc.horizon_ms / 4
    ref = run_loop(sc, seed=2)
    assert ref.status.truncated
    _assert_same_run(simulate(sc, seed=2), ref)


def test_a_run_under_the_cap_is_not_handed_back_by_the_projection():
    """The projection leaves the chunked path a run that ends below its cap (here 0.9 of it)."""
    full = run_loop(replace(SHORT30, batch_max_wait_ms=0.0), 2)
    sc = replace(SHORT30, batch_max_wait_ms=0.0, max_events=int(full.status.events / 0.9))
    chunked = run_chunked(sc, seed=2)
    assert chunked is not None
    _assert_same_run(chunked, run_loop(sc, seed=2))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 50.0), st.integers(0, 3), st.integers(0, 4)), max_size=60),
       st.floats(0.05, 20.0), st.floats(10.0, 200.0))
def test_the_event_calendar_pops_in_one_heaps_order(steps, w, H):
    """:class:`_Calendar` against one heap of ``(t, seq, kind, x)``: each step pushes an event
    ``dt`` after the last popped time and pops ``pops`` events; the popped sequences are equal
    (events after the horizon are never popped by either: the loop stops there)."""
    from heapq import heappop, heappush

    from hotkeylab.metastable.engine_fast import _Calendar

    cal, ref, seq = _Calendar(H, w), [], 0
    now, got, want = 0.0, [], []
    for dt, kind, pops in steps:
        seq += 1
        cal.push(now + dt, kind, seq)
        if now + dt <= H:
            heappush(ref, (now + dt, seq, kind, seq))
        for _ in range(pops):
            if not cal.heap:
                cal.refill()
            if not cal.heap:
                assert not ref
                break
            item = heappop(cal.heap)
            got.append(item)
            want.append(heappop(ref))
            now = item[0]
    while cal.heap or cal.refill():
        got.append(heappop(cal.heap))
        want.append(heappop(ref))
    assert not ref
    assert [(t, k, x) for t, _, k, x in got] == [(t, k, x) for t, _, k, x in want]  # (seq: its own)
