"""What a run returns (:class:`Run`) and how the state becomes one; the model's pieces by name.

The model reads top to bottom in :mod:`.model` (the SimPy engine: who waits for what) and
:mod:`.state` (the rules and counts); its random numbers are in :mod:`.rng` and :mod:`.arrivals`.
This module keeps their old import path (``from hotkeylab.metastable.core import State, …``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..sim import Ledger, RunStatus
from .arrivals import arrival_times
from .arrivals import as_reached as _as_reached
from .rng import K_PRE as _K_PRE
from .rng import _splitmix, hashed_uniform, hashed_uniforms
from .scenario import Scenario
from .state import (
    _WEIGHTED,
    PENDING,
    REJECTED,
    SERVED,
    TIMED_OUT,
    WINDOW_COUNTERS,
    WINDOW_LEVELS,
    Batch,
    State,
    _grown,
)

__all__ = [
    "PENDING", "SERVED", "TIMED_OUT", "REJECTED", "WINDOW_COUNTERS", "WINDOW_LEVELS", "Batch", "Run",
    "State", "arrival_times", "hashed_uniform", "hashed_uniforms", "finish_run",
    "_K_PRE", "_WEIGHTED", "_as_reached", "_grown", "_splitmix",
]


@dataclass
class Run:
    """One simulated run. ``windows`` maps names to equal-length arrays (``t`` in seconds,
    counters per second, ``queue`` in batches, ``busy`` in [0, 1])."""

    scenario: Scenario
    seed: int
    engine: str
    windows: dict
    ledger: Ledger  # user requests
    attempt_ledger: Ledger  # attempts (first tries and retries)
    server: dict  # rows at the server: in, committed, wasted, rejected, dropped, waiting
    status: RunStatus
    recovered: bool = False
    recovery_time_s: float | None = None
    summary: dict = field(default_factory=dict)

    @property
    def truncated(self) -> bool:
        return self.status.truncated

    def check(self) -> Run:
        """Check every ledger (users, attempts, server rows); raise if anything is lost."""
        self.ledger.check()
        self.attempt_ledger.check()
        s = self.server
        if s["rows_in"] != s["committed"] + s["rejected"] + s["dropped"] + s["waiting"]:
            from ..sim import LedgerError

            raise LedgerError(f"server rows do not balance: {s}")
        return self


def finish_run(S: State, engine: str, status: RunStatus, batcher_atts: list) -> Run:
    """The run of ``S`` (a :class:`State`) once an engine has stopped at ``status``."""
    from .analysis import recovery, summarise

    S.rec.close(status.t_end_ms)
    w = S.rec.arrays()
    st = S.att_status
    n_att = len(st)
    a_served = st.count(SERVED)
    a_to = st.count(TIMED_OUT)
    a_rej = st.count(REJECTED)
    att_ledger = Ledger(n_att, a_served, a_to, a_rej, n_att - a_served - a_to - a_rej)
    oc = S.outcome[: S.n_arrived] if S.n_arrived < len(S.outcome) else S.outcome
    served, to, rej = oc.count(SERVED), oc.count(TIMED_OUT), oc.count(REJECTED)
    ledger = Ledger(
        S.n_arrived,
        served,
        to,
        rej,
        S.n_arrived - served - to - rej,
        extra={"degraded": int(round(w["degraded"].sum() * S.sc.window_ms / 1000.0))},
    )
    waiting = len(batcher_atts) + sum(len(b.atts) for q in S.queues for b in q)
    if S.in_service is not None:
        waiting += len(S.in_service.atts)
    server = dict(S.rows, rows_in=S._rows_in, waiting=waiting, budget_denied=S.budget_denied,
                  throttled=S.throttled, c_batches_after_isolation=S.c_after_isolation,
                  c_last_commit_ms=S.c_last_commit_ms)
    run = Run(S.sc, S.seed, engine, w, ledger, att_ledger, server, status)
    run.recovered, run.recovery_time_s = recovery(run)
    run.summary = summarise(run)
    return run
