"""08 · dubbo's timeout machinery: ``DefaultFuture``'s ``HashedWheelTimer`` (a wheel of slots ticking every
30 ms) and one timeout in it.
"""

from __future__ import annotations

import math

import numpy as np

from ..validate import check_int, check_number
from .scenario import (
    DUBBO_SLOTS,
    DUBBO_TICK_MS,
)

__all__ = [
    "WheelTimeout",
    "HashedWheelTimer",
]

# =========================================================================== the timing wheel
_ST_INIT, _ST_CANCELLED, _ST_EXPIRED = 0, 1, 2


class WheelTimeout:
    """One timer in a :class:`HashedWheelTimer` (Netty/dubbo's ``HashedWheelTimeout``).

    ``deadline_ms`` is absolute; ``fired_at_ms`` is set when it expires. ``cancel()`` stops it.
    """

    __slots__ = ("timer", "deadline_ms", "task", "remaining_rounds", "state", "slot", "key", "fired_at_ms")

    def __init__(self, timer, deadline_ms, task, key):
        self.timer = timer
        self.deadline_ms = deadline_ms
        self.task = task
        self.remaining_rounds = 0
        self.state = _ST_INIT
        self.slot = None
        self.key = key
        self.fired_at_ms = None

    @property
    def is_cancelled(self) -> bool:
        return self.state == _ST_CANCELLED

    @property
    def is_expired(self) -> bool:
        return self.state == _ST_EXPIRED

    def cancel(self) -> bool:
        """Stop this timer; False if it already expired or was cancelled."""
        return self.timer.cancel(self)

    def __repr__(self) -> str:
        state = ("pending", "cancelled", "expired")[self.state]
        return f"WheelTimeout(deadline_ms={self.deadline_ms:g}, {state}, rounds={self.remaining_rounds})"


class HashedWheelTimer:
    """A hashed timing wheel: ``slots`` buckets, one visited every ``tick_ms``.

    As in Netty's ``HashedWheelTimer`` (which dubbo copies): a new timeout waits in a pending list
    until the next tick, which files it in bucket ``c mod slots``, where tick ``c`` is the first
    tick strictly after its deadline, with ``remaining_rounds = (c − current tick) // slots`` full
    turns to wait. Each tick visits one bucket: timeouts with no rounds left expire, the others
    lose one round. So a timeout never fires before its deadline and at most one tick after it,
    and adding or cancelling one costs O(1) whatever the number of timers.

    Time is driven by the caller: tick ``k`` (0-based) happens at ``start_ms + (k + 1) × tick_ms``;
    :meth:`advance` processes the next tick and returns what expired, in order.
    """

    def __init__(self, tick_ms: float = DUBBO_TICK_MS, slots: int = DUBBO_SLOTS, start_ms: float = 0.0):
        # at least 1 ms: a finer tick leaves deadline / tick_ms beyond a float (and no wheel ticks so fast)
        self.tick_ms = check_number("tick_ms", tick_ms, low=1.0, high=3_600_000.0)
        self.slots = check_int("slots", slots, low=1, high=1 << 20)
        self.start_ms = check_number("start_ms", start_ms, low=0.0)
        self.tick = 0  # ticks processed so far
        self._buckets = [{} for _ in range(self.slots)]
        self._pending: list[WheelTimeout] = []
        self._seq = 0
        self.live = 0  # timeouts neither expired nor cancelled

    # -- time
    def tick_time_ms(self, k: int) -> float:
        """When tick ``k`` (0-based) happens."""
        return self.start_ms + (k + 1) * self.tick_ms

    @property
    def next_tick_ms(self) -> float:
        """When the next tick (the one :meth:`advance` processes) happens."""
        return self.tick_time_ms(self.tick)

    @property
    def last_tick_ms(self) -> float:
        """When the last processed tick happened (``start_ms`` before the first)."""
        return self.start_ms + self.tick * self.tick_ms

    def _fire_tick(self, deadline: float) -> int:
        """The first tick strictly after ``deadline`` (guarded against float rounding)."""
        c = max(0, math.floor((deadline - self.start_ms) / self.tick_ms))
        while self.tick_time_ms(c) <= deadline:
            c += 1
        while c > 0 and self.tick_time_ms(c - 1) > deadline:
            c -= 1
        return c

    # -- add / cancel / expire
    def new_timeout(self, task, delay_ms: float, now_ms: float) -> WheelTimeout:
        """Schedule ``task`` to expire ``delay_ms`` after ``now_ms``; returns its handle.

        ``now_ms`` must lie between the last processed tick and the next one (the caller drives
        time and must :meth:`advance` the wheel when a tick is due).
        """
        delay = check_number("delay_ms", delay_ms, low=0.0)
        now = check_number("now_ms", now_ms, low=self.last_tick_ms, high=self.next_tick_ms)
        self._seq += 1
        t = WheelTimeout(self, now + delay, task, self._seq)
        self._pending.append(t)
        self.live += 1
        return t

    def cancel(self, timeout: WheelTimeout) -> bool:
        """Cancel a pending timeout (it will never fire); False if it expired or was cancelled."""
        if timeout.timer is not self:
            raise ValueError("timeout must belong to this timer")
        if timeout.state != _ST_INIT:
            return False
        timeout.state = _ST_CANCELLED
        self.live -= 1
        if timeout.slot is not None:
            del self._buckets[timeout.slot][timeout.key]
            timeout.slot = None
        return True

    def advance(self) -> list[WheelTimeout]:
        """Process the next tick: file pending timeouts into buckets, then expire the due ones
        in the current bucket. Returns the expired timeouts (their ``fired_at_ms`` set)."""
        k = self.tick
        now = self.tick_time_ms(k)
        slots = self.slots
        if self._pending:
            for t in self._pending:
                if t.state != _ST_INIT:
                    continue
                c = self._fire_tick(t.deadline_ms)
                t.remaining_rounds = (c - k) // slots
                t.slot = max(c, k) % slots
                self._buckets[t.slot][t.key] = t
            self._pending = []
        bucket = self._buckets[k % slots]
        expired = []
        if bucket:
            for key in list(bucket):
                t = bucket[key]
                if t.remaining_rounds <= 0:
                    del bucket[key]
                    t.state = _ST_EXPIRED
                    t.slot = None
                    t.fired_at_ms = now
                    expired.append(t)
                else:
                    t.remaining_rounds -= 1
        self.live -= len(expired)
        self.tick = k + 1
        return expired

    def advance_to(self, now_ms: float) -> list[WheelTimeout]:
        """Process every tick due at or before ``now_ms``; returns all expired timeouts in order."""
        now = check_number("now_ms", now_ms, low=0.0)
        out = []
        while self.next_tick_ms <= now:
            out.extend(self.advance())
        return out

    # -- looking inside
    def occupancy(self) -> tuple[np.ndarray, np.ndarray]:
        """Per slot: timeouts due this turn (no rounds left) and timeouts waiting more turns.
        Pending (not yet filed) timeouts are not counted."""
        now_ = np.zeros(self.slots, dtype=int)
        later = np.zeros(self.slots, dtype=int)
        for i, b in enumerate(self._buckets):
            for t in b.values():
                if t.remaining_rounds <= 0:
                    now_[i] += 1
                else:
                    later[i] += 1
        return now_, later
