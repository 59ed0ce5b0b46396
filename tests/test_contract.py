"""One contract over every model in :mod:`hotkeylab.registry` (GUIDE §3).

- same seed, same result (ledger and every window);
- the ledger balances over random valid loads and random seeds (hypothesis);
- bad input (NaN, a string, a non-integral value for an int, a negative value for a field whose
  preset is positive) raises ValueError naming the parameter, at construction or at simulate;
- an integral float for an int field is accepted as that int or refused with a ValueError, never a
  TypeError later.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hotkeylab.registry import entries

ENTRIES = entries()
IDS = [e.name for e in ENTRIES]

# Cases that still break the contract (issue #20), marked strict: a fix makes the case pass, the
# strict xfail then fails, and the case must leave this list. Empty it, do not grow it.
KNOWN: set[str] = set()


def _params(cases, ids):
    return [pytest.param(*c, id=i, marks=pytest.mark.xfail(strict=True, reason="issue #20"))
            if i in KNOWN else pytest.param(*c, id=i) for c, i in zip(cases, ids, strict=True)]


def _fields(entry, kind):
    out = []
    for f in dataclasses.fields(entry.preset):
        v = getattr(entry.preset, f.name)
        declared = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
        if isinstance(v, bool) or v is None:
            continue
        # the declared type decides (a float field may hold an int preset such as round_trips = 4)
        if kind is float and declared.startswith("float") and isinstance(v, (int, float)):
            out.append(f.name)
        elif kind is int and declared.startswith("int") and isinstance(v, int):
            out.append(f.name)
    return out


def _windows(run):
    w = getattr(run, "windows", None)
    return w if isinstance(w, dict) else {}


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_same_seed_same_result(entry):
    a, b = entry.run(seed=3), entry.run(seed=3)
    assert a.ledger.as_dict() == b.ledger.as_dict()
    wa, wb = _windows(a), _windows(b)
    assert wa.keys() == wb.keys()
    for k in wa:
        np.testing.assert_array_equal(np.asarray(wa[k]), np.asarray(wb[k]), err_msg=k)


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.load], ids=[e.name for e in ENTRIES if e.load])
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(factor=st.floats(0.05, 3.0), seed=st.integers(0, 10_000))
def test_ledger_balances_over_random_loads(entry, factor, seed):
    load = getattr(entry.preset, entry.load) * factor
    entry.run(seed=seed, **{entry.load: load}).ledger.check()


def _bad_values(entry):
    cases = []
    for name in _fields(entry, float):
        cases += [(name, math.nan), (name, "x")]
        if getattr(entry.preset, name) > 0:
            cases.append((name, -1.0))
    for name in _fields(entry, int):
        cases += [(name, 2.5), (name, "x")]
        if getattr(entry.preset, name) > 0:
            cases.append((name, -1))
    return cases


BAD = [(e, name, v) for e in ENTRIES for name, v in _bad_values(e)]


@pytest.mark.parametrize(("entry", "name", "value"), _params(BAD, [f"{e.name}:{n}={v!r}" for e, n, v in BAD]))
def test_bad_input_raises_a_value_error_naming_the_parameter(entry, name, value):
    with pytest.raises(ValueError, match=name):
        entry.run(seed=0, **{name: value})


INTEGRAL = [(e, name) for e in ENTRIES for name in _fields(e, int)]


@pytest.mark.parametrize(("entry", "name"), _params(INTEGRAL, [f"{e.name}:{n}" for e, n in INTEGRAL]))
def test_integral_float_for_an_int_field_is_the_int_or_a_value_error(entry, name):
    value = float(getattr(entry.preset, name))
    try:
        run = entry.run(seed=0, **{name: value})
    except ValueError as err:
        assert name in str(err)
        return
    run.ledger.check()


# ------------------------------------------------------------- the ends of the declared ranges
#
# Every field a scenario declares with ``validate.param`` is run at the ends of its range, a few
# fields at a time (hypothesis draws which fields and which end), with the event cap lowered so the
# run is quick: the contract is that the cap, not the parameters, bounds the run. The full-size
# version (every end at its own cap, in a memory-limited child) is tests/hostile_contract_bounds.py.

# the declared cap of each model and the value used here: events for the event-driven models, time
# steps for the time-stepped gateway (07). Every model's declared cap must allow it.
CAPS = {"max_events": 2_000, "steps": 200}


def _declared(entry):
    from hotkeylab.validate import declared_ranges

    return declared_ranges(entry.preset)


def _cap(entry) -> str | None:
    return next((name for name in CAPS if name in _declared(entry)), None)


CAPPED = [e for e in ENTRIES if _cap(e)]


def test_every_model_declares_a_cap():
    missing = [e.name for e in ENTRIES if _cap(e) is None]
    assert not missing, f"no declared max_events or steps: {missing}"


@st.composite
def _ends_of(draw, entry):
    ranges = {k: v for k, v in _declared(entry).items() if k != _cap(entry)}
    names = draw(st.lists(st.sampled_from(sorted(ranges)), min_size=1, max_size=3, unique=True))
    return {n: draw(st.sampled_from(ranges[n].ends(getattr(entry.preset, n)))) for n in names}


@pytest.mark.parametrize("entry", CAPPED, ids=[e.name for e in CAPPED])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_run_at_the_ends_of_its_ranges_ends_within_its_cap(entry, data):
    import time

    changes = data.draw(_ends_of(entry), label="changes")
    cap = _cap(entry)
    t0 = time.process_time()
    try:
        run = entry.run(seed=0, **changes, **{cap: CAPS[cap]})
    except ValueError as err:  # a combination the scenario refuses: it must say which field
        assert any(n in str(err) for n in [f.name for f in dataclasses.fields(entry.preset)]), str(err)
        return
    seconds = time.process_time() - t0
    run.ledger.check()
    status = getattr(run, "status", None)
    if cap == "max_events" and status is not None:
        assert status.events <= CAPS[cap] + 1, (status.events, CAPS[cap])
    assert seconds < 20.0, f"{seconds:.1f} s CPU for {changes!r}"


# ------------------------------------------------------------- no data: one marker, never NaN
#
# A summary value with no samples (a zero rate, a horizon shorter than one service) is
# hotkeylab.sim.NO_DATA (None), never NaN, and a figure built from a summary skips it (issue #20).


def _no_sample_scenarios(entry):
    """Changes that leave the model (nearly) without samples: a 1 ms horizon, one step, zero load."""
    names = {f.name for f in dataclasses.fields(entry.preset)}
    out = []
    if "horizon_ms" in names:
        tiny = {"horizon_ms": 1.0}
        tiny.update({n: 0.0 for n in ("warmup_ms",) if n in names})
        tiny.update({n: 1.0 for n in ("window_ms", "gc_sample_ms") if n in names})
        out.append(tiny)
    if "steps" in names:
        out.append({"steps": 1})
    if entry.load:
        out.append({entry.load: 0.0})
    return out


def _nan_inside(v) -> bool:
    if isinstance(v, (float, np.floating)):
        return bool(np.isnan(v))
    if isinstance(v, dict):
        return any(_nan_inside(x) for x in v.values())
    if isinstance(v, (list, tuple, np.ndarray)):
        return any(_nan_inside(x) for x in v)
    return False


def _figure_nans(fig) -> list[str]:
    """Labels of the lines and bars in ``fig`` whose data hold a NaN."""
    bad = []
    for ax in fig.axes:
        for line in ax.get_lines():
            xy = np.asarray(line.get_xydata(), dtype=float)
            if xy.size and np.isnan(xy).any():
                bad.append(f"line {line.get_label()!r}")
        for patch in ax.patches:
            if np.isnan(patch.get_bbox().bounds).any():
                bad.append(f"patch {patch.get_label()!r}")
    return bad


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_a_summary_with_no_samples_says_no_data_never_nan(entry):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hotkeylab import sim

    ran = 0
    for changes in _no_sample_scenarios(entry):
        try:
            run = entry.run(seed=0, **changes)
        except ValueError as err:  # e.g. a rate that must be > 0: the scenario says which field
            assert any(n in str(err) for n in changes), str(err)
            continue
        ran += 1
        run.check()
        s = run.summary
        assert isinstance(s, sim.Summary), type(s)
        nan = [k for k, v in s.items() if _nan_inside(v)]
        assert not nan, f"NaN (not NO_DATA) in {changes!r}: {nan}"
        assert s.as_dict() == dict(s) and list(s.as_dict()) == list(s)  # typed fields, mapping kept
        shown = s.as_dict(no_data=sim.NO_DATA_TEXT)
        assert all((shown[k] == sim.NO_DATA_TEXT) == (v is sim.NO_DATA) for k, v in s.items())
        # a figure built from the summary: its numbers, the no-data ones skipped
        numbers = {k: v for k, v in s.items() if v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))}
        x, y = sim.plottable(range(len(numbers)), list(numbers.values()))
        assert len(x) == sum(v is not None for v in numbers.values())
        x, y = x[np.isfinite(y)], y[np.isfinite(y)]  # inf (a closed form past its edge) is not drawn either
        fig, ax = plt.subplots()
        ax.plot(x, y, "o", label="summary")
        ax.bar(x, y)
        try:
            assert not _figure_nans(fig), _figure_nans(fig)
        finally:
            plt.close(fig)
    assert ran, f"no no-sample scenario accepted for {entry.name}"


def test_the_figures_that_take_summary_values_skip_no_data():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hotkeylab import fault_tolerance as ft
    from hotkeylab import hot_row

    empty = ft.simulate_report(dataclasses.replace(ft.SEED_REPORT, horizon_ms=1.0, window_ms=1.0), seed=0)
    assert empty.summary.mean_latency_slow_ms is None
    full = ft.simulate_report(ft.SEED_REPORT, seed=0)
    sweep = {"bypass": [(100.0, full.summary.mean_latency_slow_ms), (300.0, empty.summary.mean_latency_slow_ms)]}
    axes = ft.plot_report({"bypass": full}, sweep=sweep)
    dup = ft.plot_duplicates({p: {"duplicates": 1.0} for p in ft.PROTECTIONS},
                             {p: (None if i == 0 else 1.0) for i, p in enumerate(ft.PROTECTIONS)})
    gc = hot_row.simulate_group_commit(hot_row.SEED_GROUP_COMMIT, horizon_ms=1.0, warmup_ms=0.0, window_ms=1.0)
    assert gc.summary.mean_latency_ms is None
    batching = hot_row.plot_batching(gc)
    try:
        for fig in {axes[0].figure, dup.figure, batching[0].figure}:
            assert not _figure_nans(fig), _figure_nans(fig)
        dots = [ln for ln in axes[0].get_lines() if ln.get_marker() == "o"]
        assert len(dots) == 1 and len(dots[0].get_xdata()) == 1  # the no-data point is skipped
    finally:
        plt.close("all")
