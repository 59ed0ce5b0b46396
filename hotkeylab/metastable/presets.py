"""The lesson's clocks: the seed's incident compressed for comparisons and sweeps, when operators
act on it, and the full-queue run behind notebook 04's drain estimate. Data only (scenarios and
times in ms); the closed forms, experiments and figures all start from these."""

from __future__ import annotations

import math
from dataclasses import replace

from .scenario import SEED_INCIDENT, Window

__all__ = ["SHORT_INCIDENT", "ACT_MS", "ACT_FOR_MS", "SAFETY", "STRETCH_FACTOR", "FULL_QUEUE_600"]

#: The seed's incident on a compressed clock, for comparisons and sweeps: the month-start peak
#: (+20%) from 5 s, the second owner in datacentre C from 15 s to 45 s (isolation at 45 s), the
#: horizon at 120 s. Everything else (600 requests/s, batcher 20 rows / 20 ms, N = 16 / 27 ms,
#: M = 200 ms, the seed's retries) is :data:`~hotkeylab.metastable.SEED_INCIDENT`'s.
SHORT_INCIDENT = replace(
    SEED_INCIDENT,
    peak=Window(5_000.0, math.inf, 1.2),
    second_owner=Window(15_000.0, 45_000.0),
    horizon_ms=120_000.0,
)
#: When operators act on the short clock (15 s after isolation), and for how long.
ACT_MS = 60_000.0
ACT_FOR_MS = 30_000.0
#: Safety factor for ``capacity.safe_queue_limit`` in the bounded-queue mitigation.
SAFETY = 0.5
#: The seed's measure 2 as the mitigation table runs it: every retry delay ×10 for 30 s.
STRETCH_FACTOR = 10.0

#: The check behind notebook 04's drain estimate from the bound: the normal load (600 requests/s,
#: one owner) after a storm has filled the seed's bound. A slow database (every merged commit
#: 4 × N) from 2 s to 10 s fills the queue to QueueMaxSize; from 10 s the thread is back at
#: full speed and nothing else happens until the horizon. The horizon, 220 s after the database
#: recovers, is 1.27 × the fluid model's drain from the bound (173 s) and 13 s past the slowest of
#: seeds 0–19 (207 s); a run is cut there, since the queue is empty and nothing happens after it.
#: :func:`~hotkeylab.metastable.experiments.drain_from_bound` reports the margin and the tests
#: check that no seed is cut off before it drains. (Runs are prefixes of longer ones: the same
#: seed gives the same windows up to any horizon.)
FULL_QUEUE_600 = replace(
    SEED_INCIDENT,
    peak=None,
    second_owner=None,
    slow_db=Window(2_000.0, 10_000.0, 4.0),
    warmup_ms=1_000.0,
    horizon_ms=230_000.0,
)
