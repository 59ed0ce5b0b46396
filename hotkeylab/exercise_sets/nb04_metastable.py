"""Exercises of notebook 04 · Metastable retry storms. Each asks for a case the notebook does not
print; expected answers come from :mod:`hotkeylab.capacity`, :func:`hotkeylab.metastable.closed_forms`
and :mod:`hotkeylab.metastable.closed_form`; nothing is typed in."""

from __future__ import annotations

import math
from dataclasses import replace

from .. import capacity
from ..exercises import Mistake, numeric
from ..metastable import SEED_INCIDENT, closed_form

_SC = SEED_INCIDENT
_LAM_PEAK = _SC.user_rate_per_s * _SC.peak.factor

#: Parameters of the questions (not results): a user who keeps trying for 750 ms (so that exactly 3
#: retries fit: the 3rd starts by 3 × 200 + 3 × 50 = 750 ms, a 4th never before 800 ms), with the key
#: owned by one server in C alone (every merged commit takes C's N, so no printed rate applies); a backlog met
#: by a partial degrade whose kept users still time out behind it and retry once (R = 1, the seed
#: incident's). The far-owner and big-bound exercises moved to notebook 04a (nb04a_mitigations).
PATIENCE_MS = 750.0
DRAIN_QUEUE = 180.0
DEGRADE_KEEP = 0.3


#: the key owned by one server in C alone: N = C's merged-commit time
_C_ONLY = replace(_SC, batch_ms=_SC.cross_batch_ms)


def retries_within(patience_ms: float, sc=_SC) -> int:
    """Retries that fit in the patience once every attempt times out: floor(P / M)."""
    return max(0, math.floor(patience_ms / sc.timeout_ms))


def _one_retry_edge():
    r = retries_within(PATIENCE_MS)
    return [Mistake(closed_form.band_user_rates(_C_ONLY, retries=1)[0], rel=0.02, message=lambda a: (
        f"{a:.0f}/s is the edge with one retry (300 ms patience); {PATIENCE_MS:g} ms leaves room "
        f"for {r} retries after {_SC.timeout_ms:g} ms timeouts.")),
        Mistake(closed_form.band_user_rates(_SC, retries=r)[0], rel=0.02, message=lambda a: (
            f"{a:.0f}/s is the edge with B's N = {_SC.batch_ms:g} ms; a server in C commits in "
            f"{_SC.cross_batch_ms:g} ms, so μ = 1000 / {_SC.cross_batch_ms:g}."))]


@numeric("04.band_edge_patience", rel=0.02, unit="requests/s", mistakes=_one_retry_edge,
         hint=f"R = floor({PATIENCE_MS:g} / {_SC.timeout_ms:g}) = {retries_within(PATIENCE_MS)}; solve "
         f"batcher_batch_rate({retries_within(PATIENCE_MS) + 1}λ) = 1000 / {_SC.cross_batch_ms:g} "
         "(in the timer regime batcher_batch_rate(x) ≈ x / (1 + xT), so x ≈ μ / (1 − μT)).")  # fmt: skip
def band_edge_at_patience() -> float:
    """Lowest user rate (requests/s) at which a storm sustains itself with one owner in C alone,
    when users keep retrying for :data:`PATIENCE_MS`: batcher_batch_rate((R + 1) λ) = 1000 / N_C."""
    sc = replace(_C_ONLY, retry=replace(_C_ONLY.retry, patience_ms=PATIENCE_MS))
    return closed_form.band_user_rates(sc, retries=retries_within(PATIENCE_MS))[0]


def _kept_attempts_per_s() -> float:
    """Attempts/s of the kept users while the backlog makes them time out: (R + 1) × kept users."""
    return (retries_within(_SC.retry.patience_ms) + 1) * DEGRADE_KEEP * _LAM_PEAK


def _drain_mistakes():
    mu = capacity.tps_ceiling(_SC.batch_ms)
    return [
        Mistake(DRAIN_QUEUE / mu, rel=0.02, message=lambda a: (
            f"{a:g} s is Q/μ, the drain with no users at all; {100 * DEGRADE_KEEP:.0f}% of the users still "
            "make batches (and few rows per batch: the timer closes them).")),
        Mistake(closed_form.drain_time_s(DRAIN_QUEUE, DEGRADE_KEEP * _LAM_PEAK, _SC), rel=0.02, message=lambda a: (
            f"{a:g} s counts each kept request once; behind the backlog it times out and is retried "
            "once, so the kept users send (R + 1) attempts each.")),
    ]  # fmt: skip


@numeric("04.drain_partial_degrade", rel=0.02, unit="s", mistakes=_drain_mistakes,
         hint=f"Q / (μ − batcher_batch_rate(2 × {DEGRADE_KEEP:g} × {_LAM_PEAK:g})).")
def drain_with_partial_degrade_s() -> float:
    """Seconds to empty :data:`DRAIN_QUEUE` batches with one owner when the upstream keeps
    :data:`DEGRADE_KEEP` of the peak's users, whose attempts time out behind the backlog and are
    retried once: Q / (μ − batcher_batch_rate((R + 1) × kept users)). The fluid model's last
    stretch below the timeout ramp (a fraction of a second) is left out."""
    mu = capacity.tps_ceiling(_SC.batch_ms)
    made = capacity.batcher_batch_rate(_kept_attempts_per_s(), _SC.batch_max_rows, _SC.batch_max_wait_ms)
    return math.inf if made >= mu else DRAIN_QUEUE / (mu - made)
