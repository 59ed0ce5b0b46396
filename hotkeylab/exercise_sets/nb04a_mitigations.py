"""Exercises of notebook 04a · Retry storms: the mitigations surveyed. Expected answers come from
:mod:`hotkeylab.metastable.closed_form` and :mod:`hotkeylab.metastable.presets`; nothing is typed in."""

from __future__ import annotations

import math
from dataclasses import replace

from ..exercises import Mistake, as_number, exercise, numeric
from ..metastable import (
    SEED_INCIDENT,
    SEED_QUEUE_LIMIT,
    closed_form,
    effective_timeout_queue,
    presets,
)

_SC = presets.SHORT_INCIDENT
#: The policy of exercise 1: the seed's interval (0–50 ms) and patience, capped at this many attempts.
CAP_ATTEMPTS = 4
#: Exercise 2: the backlog (a full queue) and the length of the stretch window (seconds).
STRETCH_QUEUE = float(SEED_QUEUE_LIMIT)
STRETCH_WINDOW_S = presets.ACT_FOR_MS / 1e3
#: Exercises 3 and 4 (moved from notebook 04), on the seed incident: C's servers in a datacentre whose
#: merged commit takes 43 ms; a bound of 40 batches the operators want to make safe by raising M.
_SEED = SEED_INCIDENT
FAR_BATCH_MS = 43.0
BIG_LIMIT = 40


def capped_policy():
    """The seed's retries with a cap of :data:`CAP_ATTEMPTS` attempts."""
    return replace(_SC.retry, max_attempts=CAP_ATTEMPTS)


def _capped_mistakes():
    return [
        Mistake(CAP_ATTEMPTS, rel=1e-9, message=(
            f"{CAP_ATTEMPTS} is the cap. With M = {_SC.timeout_ms:g} ms per failed attempt, when does "
            f"attempt 3 start, and is that within the patience of {_SC.retry.patience_ms:g} ms?")),
        Mistake(1.0, rel=1e-9, message=(
            f"the first retry starts at M plus a delay of at most {_SC.retry.cap_ms:g} ms, "
            f"within the patience of {_SC.retry.patience_ms:g} ms: it is sent.")),
    ]  # fmt: skip


@numeric("04a.capped_attempts", rel=0.01, unit="attempts", mistakes=_capped_mistakes,
         hint="Attempt k + 1 starts at k·M plus k delays; count those that start within the patience.")
def capped_attempts() -> float:
    """Attempts a user request makes in the storm (every attempt timing out) under :func:`capped_policy`."""
    return closed_form.storm_attempts(capped_policy(), _SC.timeout_ms)


def _stretch_at_capacity() -> float:
    """The stretch at which the storm's demand just equals the capacity: necessary, not enough."""
    ceiling = closed_form.attempts_ceiling(_SC)
    lo, hi = 1.0, 1000.0
    for _ in range(40):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if closed_form.storm_attempts(_SC.retry, _SC.timeout_ms, stretch=mid) < ceiling else (mid, hi)
    return hi


@numeric("04a.stretch_factor", rel=0.03, unit="×",
         hint=f"Attempts per request 1 + P(retry fits) give the demand; the full queue "
         f"({STRETCH_QUEUE:g} batches) must drain to the threshold within {STRETCH_WINDOW_S:g} s.",
         mistakes=lambda: [Mistake(_stretch_at_capacity(), rel=0.05, message=lambda a: (
             f"{a:g} only brings the storm's demand down to the capacity: the queue then stops "
             "growing but does not shrink. It must also fall back below the threshold within "
             f"the {STRETCH_WINDOW_S:g} s window."))])  # fmt: skip
def stretch_factor() -> float:
    """Smallest stretch of the retry interval with which a window of :data:`STRETCH_WINDOW_S` takes
    a full queue back below the timeout threshold at the peak."""
    return closed_form.stretch_needed(_SC, STRETCH_QUEUE, STRETCH_WINDOW_S)


def limit_for_far_owner() -> int:
    """Largest QueueMaxSize for which a request accepted behind a full queue is still answered
    within M while B (16 ms) and a C server with :data:`FAR_BATCH_MS` ms take turns."""
    n_bar = (_SEED.batch_ms + FAR_BATCH_MS) / 2
    return math.floor(effective_timeout_queue(_SEED, n_bar) + 1e-9)


@numeric("04a.worst_wait_limit", rel=0.01, unit="ms",
         hint=f"{BIG_LIMIT} × N + T + N with N = {_SEED.batch_ms:g} ms, T = {_SEED.batch_max_wait_ms:g} ms.",
         mistakes=lambda: [Mistake(BIG_LIMIT * _SEED.batch_ms, rel=0.01, message=lambda a: (
             f"{a:g} ms is the queue alone; add the batcher's wait T and the request's own commit N."))])  # fmt: skip
def worst_wait_behind_limit_ms() -> float:
    """Worst wait (ms) of a request accepted behind a full queue of :data:`BIG_LIMIT` batches with
    one owner: its batcher wait T, the queue, its own commit. The smallest M that answers it in time."""
    return BIG_LIMIT * _SEED.batch_ms + _SEED.batch_max_wait_ms + _SEED.batch_ms


@exercise("04a.limit_far_owner")
def _limit_far_owner(answer):
    k = limit_for_far_owner()
    a = as_number(answer)
    if a is None or not a.is_integer():
        return False, f"QueueMaxSize counts whole batches: got {answer!r}; round down."
    n_bar = (_SEED.batch_ms + FAR_BATCH_MS) / 2
    worst = int(a) * n_bar + _SEED.batch_max_wait_ms + n_bar
    if int(a) == k:
        return True, f"{k} batches: the last accepted request waits at most {worst:g} ms ≤ M = {_SEED.timeout_ms:g} ms."
    if int(a) == math.floor(_SEED.timeout_ms / n_bar):
        return False, f"{a:g} is M / N̄: add the batcher's wait (≤ {_SEED.batch_max_wait_ms:g} ms) and the request's own commit."
    if a > k:
        return False, f"with {a:g} batches ahead a request can wait {worst:g} ms > M."
    return False, f"{a:g} is safe but smaller than needed: find the largest limit."
