"""06 · The pending records: the store the batch scans and the ledger of every record.
"""

from __future__ import annotations

import bisect

from ..sim import Ledger
from .scenario import (
    INF,
)

__all__ = [
    "RecordLedger",
    "PendingStore",
]


# --------------------------------------------------------------------------- records
class RecordLedger(Ledger):
    """Where every order's record went: ``created = completed + pending + cancelled``.

    The kernel's :class:`hotkeylab.sim.Ledger` under a record's names: a record *arrives* when
    it is created, is *served* when completed, *times out* when it expires (cancelled) and stays
    *in the system* while pending; nothing is rejected. ``check()`` is the kernel's.
    """

    def __init__(self, created: int = 0, completed: int = 0, pending: int = 0, cancelled: int = 0,
                 extra: dict | None = None):
        super().__init__(arrived=created, served=completed, timed_out=cancelled, rejected=0,
                         in_system=pending, extra=dict(extra or {}))

    created = property(lambda self: self.arrived, doc="records created (orders left pending, or completed at once)")
    completed = property(lambda self: self.served, doc="records completed, at once or by the batch")
    pending = property(lambda self: self.in_system, doc="records still pending")
    cancelled = property(lambda self: self.timed_out, doc="records cancelled: pending past order_expiry_ms")

    def __repr__(self) -> str:
        return (f"RecordLedger(created={self.created}, completed={self.completed}, pending={self.pending}, "
                f"cancelled={self.cancelled}, extra={self.extra!r})")

    def as_dict(self) -> dict:
        return {"created": self.created, "completed": self.completed, "pending": self.pending,
                "cancelled": self.cancelled, **self.extra}


class PendingStore:
    """The pending records, oldest first, as runs of consecutive record ids created at the same
    instant (``[lo, hi)`` created at ``t``): one row per record in the real table, a few thousand
    intervals here."""

    def __init__(self):
        self.lo: list[int] = []
        self.hi: list[int] = []
        self.t: list[float] = []
        self.total = 0
        self.next_id = 0

    def add(self, t_ms: float, n: int) -> None:
        if n <= 0:
            return
        self.lo.append(self.next_id)
        self.next_id += n
        self.hi.append(self.next_id)
        self.t.append(t_ms)
        self.total += n

    def _first(self, t_from_ms: float) -> int:
        return bisect.bisect_left(self.t, t_from_ms)

    def count(self, t_from_ms: float = -INF) -> int:
        """Pending records created at or after ``t_from_ms``."""
        if not self.t or self.t[0] >= t_from_ms:
            return self.total
        i = self._first(t_from_ms)
        return sum(h - lo for lo, h in zip(self.lo[i:], self.hi[i:], strict=True))

    def first_id(self, t_from_ms: float = -INF) -> int:
        """The id of the oldest pending record created at or after ``t_from_ms``."""
        i = self._first(t_from_ms)
        return self.lo[i] if i < len(self.lo) else self.next_id

    def take(self, cursor: int, k: int, bound: int) -> tuple[list, int]:
        """Up to ``k`` pending ids in ``[cursor, bound)``, oldest first, as ``(a, b, t)``
        segments; returns them and the cursor after the last."""
        segs = []
        i = bisect.bisect_right(self.hi, cursor)
        while k > 0 and i < len(self.lo):
            a = max(self.lo[i], cursor)
            if a >= bound:
                break
            b = min(self.hi[i], bound, a + k)
            segs.append((a, b, self.t[i]))
            k -= b - a
            cursor = b
            i += 1
        return segs, cursor

    def remove(self, a: int, b: int) -> int:
        """Remove the pending ids in ``[a, b)``; returns how many were still pending."""
        removed = 0
        lo, hi, ts = self.lo, self.hi, self.t
        i = bisect.bisect_right(hi, a)
        while i < len(lo) and lo[i] < b:
            x, y = max(lo[i], a), min(hi[i], b)
            removed += y - x
            if x == lo[i] and y == hi[i]:
                del lo[i], hi[i], ts[i]
                continue
            if x == lo[i]:
                lo[i] = y
            elif y == hi[i]:
                hi[i] = x
            else:  # a hole in the middle: split
                lo.insert(i + 1, y)
                hi.insert(i + 1, hi[i])
                ts.insert(i + 1, ts[i])
                hi[i] = x
                i += 1
            i += 1
        self.total -= removed
        return removed
