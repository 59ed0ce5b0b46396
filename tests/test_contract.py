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
