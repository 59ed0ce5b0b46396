"""02 · Closed form: owners taking turns on one row lock.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import capacity
from .scenario import (
    Owner,
)


def turn_taking_tps(owners: Sequence[Owner]) -> float:
    """Closed form for owners' serial threads sharing one row lock, constant RTTs.

    One owner: ``1000 / cycle`` (the lock is idle while the owner is outside it). Several owners
    take strict turns when each owner's time outside the lock (``outside_round_trips × rtt``) is no
    longer than the other owners' holds together: its next SELECT then reaches the server while
    the lock is still held, the lock is never idle, and one round serves one batch of each in
    ``sum(hold)`` ms: ``n × 1000 / sum(hold)``. Outside that regime the owners do not alternate
    (the nearer one takes the lock twice in a row) and only :func:`simulate_lock` answers: a
    ``ValueError`` says so. With ``outside_round_trips=0`` this is the seed's ``1000 / mean(cycle)``
    (:func:`capacity.alternating_owners_tps`).
    """
    os_ = tuple(owners)
    if not os_:
        raise ValueError("owners must list at least one Owner, got ()")
    if len(os_) == 1:
        return capacity.tps_ceiling(os_[0].cycle_ms())
    holds = [o.hold_ms() for o in os_]
    for o, h in zip(os_, holds, strict=True):
        outside = o.cycle_ms() - h
        if outside > sum(holds) - h + 1e-9:
            raise ValueError(
                f"owners do not take strict turns: {o.name!r} is outside the lock {outside:g} ms, longer than "
                f"the other owners' holds ({sum(holds) - h:g} ms); use simulate_lock"
            )
    return capacity.tps_ceiling(sum(holds)) * len(os_)
