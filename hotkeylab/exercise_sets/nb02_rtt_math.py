"""Exercises of notebook 02 · RTT arithmetic. Expected answers come from :mod:`hotkeylab.capacity`
and :mod:`hotkeylab.rtt` (the seed's numbers, the fitted cycle, :func:`rtt.turn_taking_tps`);
nothing is typed in."""

from __future__ import annotations

import math
from dataclasses import replace

from .. import capacity, rtt
from ..exercises import Mistake, as_whole, exercise, numeric

#: RTT for the "what if the owner were further away" exercises (ms).
FAR_RTT_MS = 3.0
_SK = rtt.SKETCH
_FT = rtt.FITTED
_SKETCH_TXT = f"{_SK.round_trips:g} × rtt + {_SK.statements:g} × {_SK.statement_ms:g} ms"
_FIT_TXT = f"{_FT.round_trips:g} round trips + {_FT.fixed_ms:.1f} ms"
#: A stored procedure: the client's one call is the cycle's only round trip, half of it before
#: the SELECT inside the procedure takes the lock, half after the COMMIT released it.
STORED_PROCEDURE = replace(_FT, round_trips=1, outside_round_trips=1)


def _pair(txn: rtt.Transaction, rtt_far_ms: float = rtt.RTT_C_MS) -> float:
    return rtt.turn_taking_tps((rtt.Owner("B", rtt.RTT_B_MS, txn), rtt.Owner("far", rtt_far_ms, txn)))


def _seed_style_pair(txn: rtt.Transaction, rtt_far_ms: float = rtt.RTT_C_MS) -> float:
    """The seed's simplification: whole cycles taken as lock time, 1000 / mean(cycle)."""
    return capacity.alternating_owners_tps([txn.cycle_ms(rtt.RTT_B_MS), txn.cycle_ms(rtt_far_ms)])


@numeric("02.tps_at_3ms", rel=0.01, unit="TPS", hint=f"Use the sketch's cycle: {_SKETCH_TXT}, then 1000 / cycle.",
         mistakes=lambda: [Mistake(_SK.lock_ceiling(FAR_RTT_MS), "that is 1000 / lock hold; one serial owner also "
                                   "waits for its 2 round trips outside the lock.")])  # fmt: skip
def tps_at_3ms() -> float:
    """One owner with the seed's sketch (4 round trips + 3 × 0.3 ms) at RTT 3 ms: 1000 / cycle."""
    return _SK.tps(FAR_RTT_MS)


@numeric("02.commits_at_3ms", rel=0.01, unit="merged commits/s",
         hint=(f"Hold = ({_FT.round_trips:g} − {_FT.outside_round_trips:g}) × rtt + {_FT.fixed_ms:.1f} ms "
               "for each owner; check that neither owner's own cycle is longer than the two holds."),
         mistakes=lambda: [
             Mistake(_seed_style_pair(_FT, FAR_RTT_MS), "that counts both whole cycles as lock time (the seed's "
                     f"simplification); each owner spends {_FT.outside_round_trips:g} round trips outside the lock "
                     "while the other holds it."),
             Mistake(_FT.tps(FAR_RTT_MS), "that is the far owner alone; the question asks for both owners taking turns."),
         ])  # fmt: skip
def commits_at_3ms() -> float:
    """Owners in B and 3 ms away taking turns, fitted cycle (9 of its 11 round trips under the lock)."""
    return _pair(_FT, FAR_RTT_MS)


def round_trips_to_remove() -> int:
    """Fewest round trips C must drop from its cycle so that its batch is no longer than B's 16 ms."""
    return math.ceil((_FT.cycle_ms(rtt.RTT_C_MS) - rtt.BATCH_B_MS) / rtt.RTT_C_MS - 1e-9)


@numeric("02.no_round_trips", rel=0.01, unit="merged commits/s",
         hint=f"No round trip is under the lock: each hold is the {_FT.fixed_ms:.1f} ms of RTT-independent time.",
         mistakes=lambda: [
             Mistake(_seed_style_pair(STORED_PROCEDURE), "that takes each whole call as lock time; the call's own "
                     "round trip is outside the lock."),
             Mistake(STORED_PROCEDURE.tps(rtt.RTT_C_MS), "that is C alone; the question asks for B and C taking turns."),
         ])  # fmt: skip
def no_round_trips() -> float:
    """Owners in B and C taking turns when each merged commit is one stored-procedure call."""
    return _pair(STORED_PROCEDURE)


@exercise("02.round_trips_to_remove")
def _round_trips_to_remove(answer):
    k = round_trips_to_remove()
    rt, fixed = _FT.round_trips, _FT.fixed_ms
    a, why = as_whole(answer, "round trips", "round up.")
    if a is None:
        return False, why
    if a == k:
        cycle = (rt - k) * rtt.RTT_C_MS + fixed
        return True, (f"{k} round trips: C's batch becomes {cycle:.1f} ms, {capacity.tps_ceiling(cycle):.1f}/s, "
                      f"at least B's {capacity.tps_ceiling(rtt.BATCH_B_MS):.1f}/s.")
    if 0 <= a < k:
        cycle = (rt - a) * rtt.RTT_C_MS + fixed
        return False, (f"with {a} removed C's batch still takes {cycle:.1f} ms ({capacity.tps_ceiling(cycle):.1f}/s), "
                       f"more than B's {rtt.BATCH_B_MS:g} ms. Each round trip is worth {rtt.RTT_C_MS:g} ms in C.")
    if k < a <= rt:
        return False, f"{a} works, but fewer are enough: find the smallest number."
    return False, f"C makes only {rt:g} round trips per batch; answer between 0 and {rt:g}."
