"""Exercises of notebook 02 · RTT arithmetic. Expected answers come from :mod:`hotkeylab.capacity`
and the seed's numbers in :mod:`hotkeylab.rtt`; nothing is typed in."""

from __future__ import annotations

import math

from .. import capacity, rtt
from ..exercises import as_number, close_to, exercise

#: RTT for the "what if the owner were further away" exercises (ms).
FAR_RTT_MS = 3.0
_SK = rtt.SKETCH
_SKETCH_TXT = f"{_SK.round_trips:g} × rtt + {_SK.statements:g} × {_SK.statement_ms:g} ms"
_RT, _FIXED = capacity.fit_round_trips(rtt.MEASURED)
_FIT_TXT = f"{_RT:.0f} round trips + {_FIXED:.1f} ms"


def tps_at_3ms() -> float:
    """The seed's sketch (4 round trips + 3 × 0.3 ms) at RTT 3 ms."""
    return capacity.tps_ceiling(
        capacity.lock_hold_ms(FAR_RTT_MS, rtt.SKETCH.round_trips, rtt.SKETCH.statements, rtt.SKETCH.statement_ms)
    )


def commits_at_3ms() -> float:
    """The fitted transaction (11 round trips + 10.5 ms) at RTT 3 ms."""
    rt, fixed = capacity.fit_round_trips(rtt.MEASURED)
    return capacity.tps_ceiling(rt * FAR_RTT_MS + fixed)


def round_trips_to_remove() -> int:
    """Fewest round trips C must drop so that its batch is no longer than B's 16 ms (62.5/s)."""
    rt, fixed = capacity.fit_round_trips(rtt.MEASURED)
    hold_c = rt * rtt.RTT_C_MS + fixed
    return math.ceil((hold_c - rtt.BATCH_B_MS) / rtt.RTT_C_MS - 1e-9)


def no_round_trips() -> float:
    """Commits/s when no round trip happens under the lock: only the 10.5 ms of work is left."""
    _, fixed = capacity.fit_round_trips(rtt.MEASURED)
    return capacity.tps_ceiling(fixed)


@exercise("02.tps_at_3ms")
def _tps_at_3ms(answer):
    return close_to(
        answer,
        tps_at_3ms(),
        rel=0.01,
        unit="TPS",
        hint=f"Use the sketch's hold: {_SKETCH_TXT}, then 1000 / hold.",
    )


@exercise("02.commits_at_3ms")
def _commits_at_3ms(answer):
    sketch = tps_at_3ms()
    try:
        if math.isclose(float(answer), sketch, rel_tol=0.01):
            return False, (
                f"{float(answer):g} is the sketch's ceiling ({_SKETCH_TXT}); use the fitted line "
                f"({_FIT_TXT}) that matches the measured commits."
            )
    except (TypeError, ValueError):
        pass
    return close_to(
        answer,
        commits_at_3ms(),
        rel=0.01,
        unit="merged commits/s",
        hint=f"Hold = {_RT:.0f} × {FAR_RTT_MS:g} ms + {_FIXED:.1f} ms; commits/s = 1000 / hold.",
    )


@exercise("02.round_trips_to_remove")
def _round_trips_to_remove(answer):
    k = round_trips_to_remove()
    rt, fixed = capacity.fit_round_trips(rtt.MEASURED)
    a = as_number(answer)
    if a is None:
        return False, f"expected a whole number of round trips, got {answer!r}"
    if not a.is_integer():
        return False, f"round trips come whole: got {answer!r}; round up."
    a = int(a)
    if a == k:
        hold = (rt - k) * rtt.RTT_C_MS + fixed
        return True, (
            f"{k} round trips: C's batch becomes {hold:.1f} ms, {capacity.tps_ceiling(hold):.1f}/s, "
            f"at least B's {capacity.tps_ceiling(rtt.BATCH_B_MS):.1f}/s."
        )
    if 0 <= a < k:
        hold = (rt - a) * rtt.RTT_C_MS + fixed
        return False, (
            f"with {a} removed C still holds the lock {hold:.1f} ms per batch "
            f"({capacity.tps_ceiling(hold):.1f}/s), more than B's {rtt.BATCH_B_MS:g} ms. Each round trip "
            f"is worth {rtt.RTT_C_MS:g} ms in C."
        )
    if k < a <= rt:
        return False, f"{a} works, but fewer are enough: find the smallest number."
    return False, f"C makes only {rt:g} round trips under the lock; answer between 0 and {rt:g}."


@exercise("02.no_round_trips")
def _no_round_trips(answer):
    return close_to(
        answer,
        no_round_trips(),
        rel=0.01,
        unit="merged commits/s",
        hint=f"With no round trip under the lock, the hold is only the RTT-independent {_FIXED:.1f} ms.",
    )
