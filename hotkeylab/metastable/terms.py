"""The model's vocabulary, shared by :mod:`.state` and both engines: what became of a request or
an attempt, what each window counts, a merged batch, and the backoff's power."""

from __future__ import annotations

import math
from dataclasses import dataclass

PENDING, SERVED, TIMED_OUT, REJECTED = 0, 1, 2, 3
GROW = 1 << 16  # per-request arrays grow by this many requests at a time
WINDOW_COUNTERS = (
    "offered",  # new user requests reaching system A (per s)
    "degraded",  # user requests shed upstream by degrading (per s)
    "attempts",  # attempts sent, first tries and retries (per s)
    "retries",  # retry attempts sent (per s)
    "goodput",  # user requests answered within the client timeout (per s)
    "timeouts",  # attempts the client gave up on at M (per s)
    "rejected",  # attempts refused: queue full, CoDel, local throttle (per s)
    "gave_up",  # user requests abandoned after their last failure (per s)
    "processed",  # rows committed by the hot-key thread (per s)
    "wasted",  # rows committed after their client had given up (per s)
    "dropped",  # rows the server skipped: deadline drop, CoDel, restart (per s)
    "batches",  # merged commits (per s)
)
WINDOW_LEVELS = ("queue", "busy")  # batches waiting (time average); share of time committing
_WEIGHTED = ("goodput", "processed", "wasted", "dropped")


def _grown(base: float, mult: float, e: int) -> float:
    """``base × mult^e``, inf where the power overflows a float (the cap then applies)."""
    try:
        return base * mult**e
    except OverflowError:
        return math.inf


@dataclass
class Batch:
    """A merged batch: the attempts it carries and when it entered the hot-key queue."""

    bid: int
    atts: list
    enq_t: float = 0.0
    owner: int = 0  # 0: server B (the primary's datacentre), 1: server C (with owner_queues)
