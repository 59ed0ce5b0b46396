"""Exercises of notebook 04 · Metastable retry storms. Expected answers come from
:mod:`hotkeylab.capacity`, :func:`hotkeylab.metastable.closed_forms` and
:mod:`hotkeylab.metastable.lesson`; nothing is typed in."""

from __future__ import annotations

import math

from .. import capacity
from ..exercises import as_number, close_to, exercise
from ..metastable import SEED_INCIDENT, closed_forms, effective_timeout_queue, lesson

#: Backlog (batches) for the "how long must retries be suppressed" exercise: a parameter of the
#: question, not a result.
SUPPRESS_QUEUE = 600.0

_SC = SEED_INCIDENT
_LAM_PEAK = _SC.user_rate_per_s * _SC.peak.factor


def effective_queue_two_owners() -> float:
    """Batches ahead at which a new request times out while the owners alternate 16/27 ms,
    counting its wait in the batcher and its own commit: (M − T − N̄) / N̄."""
    return effective_timeout_queue(_SC, (_SC.batch_ms + _SC.cross_batch_ms) / 2)


def storm_growth() -> float:
    """Queue growth (batches/s) in the storm after isolation: every request sent twice."""
    return closed_forms(_SC)["growth_stuck"]


def suppress_duration_s() -> float:
    """Seconds of suppressed retries needed to drain :data:`SUPPRESS_QUEUE` batches at the peak."""
    return lesson.drain_time_s(SUPPRESS_QUEUE, _LAM_PEAK, _SC)


def band_lower_edge() -> float:
    """Lowest user rate (requests/s) at which a storm with one retry per request sustains itself."""
    return lesson.band_user_rates(_SC, retries=1)[0]


def safe_limit_slow() -> int:
    """Largest QueueMaxSize such that a request accepted behind a full queue is answered within M
    when every batch takes C's 27 ms (its batcher wait and its own commit included)."""
    return math.floor(effective_timeout_queue(_SC, _SC.cross_batch_ms) + 1e-9)


@exercise("04.effective_queue_two_owners")
def _effective_queue_two_owners(answer):
    a = as_number(answer)
    n_bar = (_SC.batch_ms + _SC.cross_batch_ms) / 2
    if a is not None and math.isclose(a, _SC.timeout_ms / n_bar, rel_tol=0.01):
        return False, (f"{a:g} is M / N̄: it forgets the request's own wait in the batcher (up to "
                       f"{_SC.batch_max_wait_ms:g} ms) and its own commit.")
    if a is not None and math.isclose(a, capacity.critical_queue_length(_SC.timeout_ms, _SC.batch_ms), rel_tol=0.01):
        return False, f"{a:g} is M / N with one owner; while two owners alternate, a batch takes {n_bar:g} ms on average."
    return close_to(answer, effective_queue_two_owners(), rel=0.02, unit="batches",
                    hint=f"(M − T − N̄) / N̄ with M = {_SC.timeout_ms:g}, T = {_SC.batch_max_wait_ms:g}, "
                         f"N̄ = {n_bar:g} ms.")


@exercise("04.storm_growth")
def _storm_growth(answer):
    cf = closed_forms(_SC)
    a = as_number(answer)
    doubled = 2 * cf["demand_peak"] - cf["capacity_one_owner"]
    if a is not None and math.isclose(a, doubled, rel_tol=0.02):
        return False, (f"{a:g} doubles the users' batches; retries mostly fill the existing batches (up to "
                       f"{_SC.batch_max_rows} rows), so use batcher_batch_rate(2 × {_LAM_PEAK:g}).")
    return close_to(answer, storm_growth(), rel=0.02, unit="batches/s",
                    hint=f"batcher_batch_rate(2 × {_LAM_PEAK:g}) − 1000 / {_SC.batch_ms:g}.")


@exercise("04.suppress_duration")
def _suppress_duration(answer):
    a = as_number(answer)
    mu = capacity.tps_ceiling(_SC.batch_ms)
    if a is not None and math.isclose(a, SUPPRESS_QUEUE / mu, rel_tol=0.02):
        return False, (f"{a:g} s would do with no traffic at all; the users keep sending "
                       f"{closed_forms(_SC)['demand_peak']:.1f} batches/s while only retries are suppressed.")
    return close_to(answer, suppress_duration_s(), rel=0.02, unit="s",
                    hint="Q / (μ − user batches/s at the peak).")


@exercise("04.band_lower_edge")
def _band_lower_edge(answer):
    lo, hi = lesson.band_user_rates(_SC, retries=1)
    a = as_number(answer)
    if a is not None and math.isclose(a, hi, rel_tol=0.03):
        return False, f"{a:g} requests/s is the upper edge, where the users alone fill the thread."
    ok, msg = close_to(answer, lo, rel=0.02, unit="requests/s",
                       hint="Find λ with batcher_batch_rate(2λ) = 1000 / N, or use μ·20 / (R + 1).")
    return ok, msg


@exercise("04.safe_limit_slow")
def _safe_limit_slow(answer):
    k = safe_limit_slow()
    a = as_number(answer)
    if a is None:
        return False, f"expected a whole number of batches, got {answer!r}"
    if not a.is_integer():
        return False, f"QueueMaxSize counts whole batches: got {answer!r}; round down."
    a = int(a)
    worst = a * _SC.cross_batch_ms + _SC.batch_max_wait_ms + _SC.cross_batch_ms
    if a == k:
        return True, (f"{k} batches: the last accepted request waits at most {worst:g} ms ≤ M = "
                      f"{_SC.timeout_ms:g} ms.")
    if a > k:
        return False, (f"with {a} batches ahead a request can wait {a:g} × {_SC.cross_batch_ms:g} + "
                       f"{_SC.batch_max_wait_ms:g} + {_SC.cross_batch_ms:g} = {worst:g} ms > M.")
    return False, f"{a} is safe but smaller than needed: find the largest limit."
