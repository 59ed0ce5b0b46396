"""Exercises of notebook 10 · Capstone: your system. Expected answers come from
:mod:`hotkeylab.capstone` (closed forms and, for the choice question, its simulated runs)."""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache

from .. import capacity
from ..capstone import SYSTEM_A, ZONES, Trigger, YourSystem, predict, report
from ..exercises import as_number, as_whole, exercise

#: Team C's numbers for the QueueMaxSize exercise: parameters of the question, not results.
TEAM_C = YourSystem(
    name="team C",
    rtt_ms=1.0,
    round_trips=8.0,
    statement_ms=4.0,  # N = 8 × 1 + 4 = 12 ms
    batch_max_rows=20,
    batch_max_wait_ms=20.0,
    timeout_ms=320.0,
    retry_attempts=3,
    normal_rate_per_s=500.0,
    safety=0.5,
)

#: A payment hot row for the "bounded but above capacity" exercise: no batcher, a measured commit, a
#: QueueMaxSize that passes the seed's rule, and a primary 2× slower for 10 s on a 30-s clock.
PAYMENT = YourSystem(
    name="payment row",
    measured_commit_ms=4.0,
    timeout_ms=500.0,
    retry_attempts=3,
    retry_patience_ms=1_000.0,
    queue_limit=50,
    normal_rate_per_s=250.0,
    peak_factor=1.2,
)
PAYMENT_TRIGGER = Trigger(kind="slow_db", slow_factor=2.0, start_s=5.0, duration_s=10.0, horizon_s=30.0)

#: The protections offered in the choice exercise, with why each is or is not the answer.
PROTECTIONS = {
    "queue_limit": "a QueueMaxSize at the safe limit",
    "retry_budget": "a 20% retry budget",
    "backoff": "3 attempts with exponential backoff and full jitter",
    "more_threads": "more hot-key threads",
    "restart": "restarting the server",
    "degrade": "degrading the upstream",
}


def safe_queue_limit_c() -> int:
    """The seed's safe QueueMaxSize for :data:`TEAM_C`: ⌊M/N × safety⌋."""
    return report(TEAM_C, Trigger(kind="slow_db"), runs=False).safe_queue_limit


def round_trips_out_of_band() -> int:
    """Fewest round trips system A must drop (at its RTT) for its peak to sit below the band."""
    for k in range(int(SYSTEM_A.round_trips) + 1):
        if report(replace(SYSTEM_A, round_trips=SYSTEM_A.round_trips - k), runs=False).zone_peak == ZONES[0]:
            return k
    raise RuntimeError("no number of round trips moves the peak below the band")  # pragma: no cover


@lru_cache(maxsize=1)
def _system_a_runs() -> dict:
    rep = report(SYSTEM_A, runs=("safe QueueMaxSize", "retry budget"))
    return {r["label"]: r for r in rep.rows()}


def payment_verdict() -> str:
    """The closed forms' verdict for :data:`PAYMENT` ("stuck": its peak is above capacity)."""
    return predict(PAYMENT, PAYMENT_TRIGGER).verdict


def first_protection() -> str:
    """The protection (a key of :data:`PROTECTIONS`) that lets system A through the seed's trigger
    with no timeout at all: the run with the safe QueueMaxSize, if the simulation agrees."""
    rows = _system_a_runs()
    ok = rows["safe QueueMaxSize"]
    return "queue_limit" if ok["recovered"] and ok["timeouts_max"] == 0 else "retry_budget"


@exercise("10.safe_queue_limit")
def _safe_queue_limit(answer):
    c = TEAM_C
    n = c.commit_ms
    k = safe_queue_limit_c()
    crit = capacity.critical_queue_length(c.timeout_ms, n)
    a = as_number(answer)
    if a is None:
        return False, f"expected a whole number of batches, got {answer!r}"
    if math.isclose(a, crit, rel_tol=0.01):
        return False, f"{a:g} is M/N itself; the seed multiplies it by the safety factor ({c.safety:g})."
    if not a.is_integer():
        return False, f"QueueMaxSize counts whole batches: got {answer!r}; round down."
    a = int(a)
    if a == k:
        return True, (f"{k} batches: N = {c.round_trips:g} × {c.rtt_ms:g} + {c.statement_ms:g} = {n:g} ms, "
                      f"M/N = {crit:g}, × {c.safety:g} = {crit * c.safety:g}, rounded down.")
    if a == math.floor(crit):
        return False, f"{a} is ⌊M/N⌋ without the safety factor ({c.safety:g})."
    eff = math.floor((c.timeout_ms - c.batch_max_wait_ms - n) / n * c.safety)
    if a == eff:
        return False, (f"{a} uses the effective threshold (M − T − N)/N: stricter, and defensible, but the seed's "
                       "rule is ⌊M/N × safety⌋.")
    return False, (f"{a} is {'too high' if a > k else 'too low'}: derive N from RTT × round trips + statement time, "
                   "then ⌊M/N × safety⌋.")


@exercise("10.round_trips_out_of_band")
def _round_trips_out_of_band(answer):
    k = round_trips_out_of_band()
    a, why = as_whole(answer, "round trips", "round up.")
    if a is None:
        return False, why
    peak = SYSTEM_A.peak_rate_per_s
    if not 0 <= a <= SYSTEM_A.round_trips:
        return False, f"system A makes {SYSTEM_A.round_trips:g} round trips; drop between 0 and that many."

    def lower(j):
        r = report(replace(SYSTEM_A, round_trips=SYSTEM_A.round_trips - j), runs=False)
        return r.commit_ms, r.band[0]

    n, lo = lower(a)
    if a == k:
        return True, (f"{k} round trips: N = {n:g} ms and the band's lower edge rises to {lo:.0f}/s, above the "
                      f"peak's {peak:.0f}/s; with {k - 1} it is {lower(k - 1)[1]:.0f}/s.")
    if a < k:
        return False, (f"with {a} dropped N = {n:g} ms and the lower edge is {lo:.0f}/s, still below the "
                       f"peak's {peak:.0f}/s: the storm can sustain itself.")
    return False, f"{a} works (lower edge {lo:.0f}/s) but is more than needed: find the fewest."


@exercise("10.first_protection")
def _first_protection(answer):
    keys = sorted(PROTECTIONS)
    if answer not in PROTECTIONS:
        return False, f"answer with one of {keys}, got {answer!r}"
    rows = _system_a_runs()
    q, b = rows["safe QueueMaxSize"], rows["retry budget"]
    if answer == first_protection():
        return True, (f"{PROTECTIONS[answer]}: {q['timeouts']:,} timeouts and {100 * q['served_share']:.1f}% served in "
                      f"time; the excess is rejected at the door ({q['rejected']:,} attempts) and retried into a "
                      "short queue, so the storm never starts.")
    why = {
        "retry_budget": (f"it recovers, but only after the storm has started: {b['timeouts']:,} timeouts and "
                         f"{100 * b['served_share']:.1f}% served in time."),
        "backoff": ("in a storm every attempt fails, so each request is still sent 3 times whatever the delays: "
                    "stuck (04 §9.2)."),
        "more_threads": "threads on one hot row under S2PL add latency, not commits (01).",
        "restart": "a restart is an operator's intervention after the storm, not a protection configured before it.",
        "degrade": "degrading is an operator's intervention, and the question says the upstream cannot degrade.",
        "queue_limit": "",
    }
    return False, why[answer]


@exercise("10.payment_bounded")
def _payment_bounded(answer):
    expected = payment_verdict()
    if answer not in ("recovers", "stuck"):
        return False, f"answer with 'recovers' or 'stuck', got {answer!r}"
    p = PAYMENT
    r = report(p, PAYMENT_TRIGGER, runs=False)
    cap = r.band[1]
    if answer == expected:
        return True, (f"stuck: the peak ({p.peak_rate_per_s:.0f}/s) is above what one thread commits "
                      f"(1000 / {p.commit_ms:g} ms = {cap:.0f}/s). The bounded queue keeps every accepted request "
                      f"under M ({r.worst_wait_entered_ms:.0f} ms behind a full queue), so no attempt times out, but "
                      "a bound turns the excess into rejections; it cannot add capacity.")
    return False, (f"every accepted request is answered within M ({r.worst_wait_entered_ms:.0f} ms ≤ "
                   f"{p.timeout_ms:g} ms), true, but compare the peak ({p.peak_rate_per_s:.0f}/s) with the thread's "
                   f"capacity 1000 / N first: no queue bound serves more than that.")
