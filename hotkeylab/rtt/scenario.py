"""02 · The seed's numbers: the measured merged commits, the transaction's cycle, the two owners.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .. import capacity
from ..validate import check_number

# --------------------------------------------------------------------------- the seed's numbers
#: "机房B内应用和主库的rtt在0.5ms左右" — RTT between the app in datacentre B and the primary.
RTT_B_MS = 0.5
#: "机房C内应用和主库的rtt在1.5ms" — RTT from datacentre C to the primary (in B).
RTT_C_MS = 1.5
#: "在RTT为0.5ms的情况下平均耗时为16ms左右" — one merged commit, measured, same datacentre.
BATCH_B_MS = 16.0
#: "在RTT为1.5ms的情况下一次合并提交平均耗时为27ms左右" — one merged commit, cross-datacentre.
BATCH_C_MS = 27.0
#: The two measurements as ``(rtt_ms, batch_ms)`` points for :func:`capacity.fit_round_trips`.
MEASURED = ((RTT_B_MS, BATCH_B_MS), (RTT_C_MS, BATCH_C_MS))
#: Round trips of every cycle spent outside the row lock: the begin round trip (1), the SELECT
#: request's way in before it executes and takes the lock (½), the COMMIT reply's way back after
#: the COMMIT executed and released it (½). The seed: "基本不存在时间交叠的空间(除了set autocommit
#: 和commit后的那仅有的RTT)". Our reading; the seed gives no count.
OUTSIDE_ROUND_TRIPS = 2


@dataclass(frozen=True)
class Transaction:
    """One cycle of an owner's serial hot-key thread: one merged commit, begin to COMMIT reply.

    ``cycle = round_trips × rtt + fixed`` with ``fixed = statements × statement_ms + other_ms``
    (the time that does not depend on the RTT). The lock is held for
    ``hold = (round_trips − outside_round_trips) × rtt + fixed``: all the RTT-independent time is
    taken to be under the lock (an assumption for ``other_ms``; the sketch's three statements are).
    The defaults are the seed's sketch.
    """

    #: "单次耗时为4次rtt" — network round trips per cycle (begin included).
    round_trips: float = 4
    #: "2条SQL耗时+1次commit耗时" — statements executed (SELECT, UPDATE, the commit).
    statements: float = 3
    #: "commit和SQL耗时为0.3ms" — server time per statement, ms.
    statement_ms: float = 0.3
    #: RTT-independent time beyond the sketch's statements (batchInsert, computation…), ms. Ours.
    other_ms: float = 0.0
    #: round trips of the cycle outside the lock (see :data:`OUTSIDE_ROUND_TRIPS`)
    outside_round_trips: float = OUTSIDE_ROUND_TRIPS

    def __post_init__(self):
        check_number("round_trips", self.round_trips, low=0.0)
        check_number("statements", self.statements, low=0.0)
        check_number("statement_ms", self.statement_ms, low=0.0)
        check_number("other_ms", self.other_ms, low=0.0)
        check_number("outside_round_trips", self.outside_round_trips, low=0.0, high=float(self.round_trips))

    @property
    def fixed_ms(self) -> float:
        """The part of the cycle (and of the hold) that does not depend on the RTT, ms."""
        return self.statements * self.statement_ms + self.other_ms

    @property
    def under_lock_round_trips(self) -> float:
        """Round trips spent holding the lock: ``round_trips − outside_round_trips``."""
        return self.round_trips - self.outside_round_trips

    def cycle_ms(self, rtt_ms: float) -> float:
        """One merged commit, begin to COMMIT reply, at ``rtt_ms``: the seed's "单次耗时"."""
        rtt = check_number("rtt_ms", rtt_ms, low=0.0)
        return self.round_trips * rtt + self.fixed_ms

    def hold_ms(self, rtt_ms: float) -> float:
        """Time the row lock is held per merged commit at ``rtt_ms`` (SELECT executes → COMMIT executes)."""
        rtt = check_number("rtt_ms", rtt_ms, low=0.0)
        return self.under_lock_round_trips * rtt + self.fixed_ms

    def tps(self, rtt_ms: float) -> float:
        """Merged commits/s of one owner's serial thread: ``1000 / cycle`` (the seed's TPS)."""
        return capacity.tps_ceiling(self.cycle_ms(rtt_ms))

    def lock_ceiling(self, rtt_ms: float) -> float:
        """Most merged commits/s the row lock admits with this hold, ``1000 / hold``, reached only
        if other owners fill the time this owner spends outside the lock."""
        return capacity.tps_ceiling(self.hold_ms(rtt_ms))


#: The seed's sketch: 4 round trips + 2 SQL + 1 commit at 0.3 ms ("1000/(0.5*4+0.3*3)=345 TPS").
SKETCH = Transaction()


def fitted_transaction(points: Sequence[Sequence[float]] = MEASURED, sketch: Transaction = SKETCH) -> Transaction:
    """The cycle that reproduces measured ``(rtt_ms, batch_ms)`` points.

    The slope of :func:`capacity.fit_round_trips` is the number of round trips per cycle; of the
    intercept, ``sketch``'s statements keep their time and the rest is ``other_ms``. Rounded to 9
    decimals to drop the least-squares floating-point noise (11.000000000000002 → 11.0).
    """
    rt, fixed = capacity.fit_round_trips(points)
    if rt < sketch.outside_round_trips or fixed < sketch.fixed_ms:
        raise ValueError(
            f"points must fit a line with round_trips >= {sketch.outside_round_trips:g} and fixed_ms >= "
            f"{sketch.fixed_ms:g} (the sketch's statements), got {rt:g} and {fixed:g}"
        )
    return Transaction(round_trips=round(rt, 9), statements=sketch.statements, statement_ms=sketch.statement_ms,
                       other_ms=round(fixed - sketch.fixed_ms, 9), outside_round_trips=sketch.outside_round_trips)


#: Fitted to the two measured merged commits: 11 round trips per cycle + 10.5 ms (the sketch's
#: 3 × 0.3 ms and 9.6 ms more); 9 round trips + 10.5 ms under the lock.
FITTED = fitted_transaction()


# --------------------------------------------------------------------------- SimPy: owners and one row lock
@dataclass(frozen=True)
class Owner:
    """A server whose hot-key thread commits merged batches on the hot row, ``rtt_ms`` from the
    primary database."""

    name: str
    rtt_ms: float
    txn: Transaction = FITTED

    def __post_init__(self):
        check_number("rtt_ms", self.rtt_ms, low=0.0)

    def hold_ms(self) -> float:
        return self.txn.hold_ms(self.rtt_ms)

    def cycle_ms(self) -> float:
        return self.txn.cycle_ms(self.rtt_ms)


#: "同一个hotKey分布在两台机器这两台机器分属于机房B和机房C" — the two owners during the incident.
SEED_OWNERS = (Owner("B", RTT_B_MS), Owner("C", RTT_C_MS))
