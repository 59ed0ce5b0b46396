"""What a run returns (:class:`Run`) and how the state becomes one; the model's pieces by name.

The model reads top to bottom in :mod:`.model` (the SimPy engine: who waits for what) and
:mod:`.state` (the rules and counts); its random numbers are in :mod:`.rng` and :mod:`.arrivals`.
This module keeps their old import path (``from hotkeylab.metastable.core import State, …``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import sim
from ..sim import Ledger, RunStatus
from .arrivals import arrival_times
from .arrivals import as_reached as _as_reached
from .rng import K_PRE as _K_PRE
from .rng import _splitmix, hashed_uniform, hashed_uniforms
from .scenario import Scenario
from .state import State
from .terms import (
    _WEIGHTED,
    PENDING,
    REJECTED,
    SERVED,
    TIMED_OUT,
    WINDOW_COUNTERS,
    WINDOW_LEVELS,
    Batch,
    _grown,
)

__all__ = [
    "PENDING", "SERVED", "TIMED_OUT", "REJECTED", "WINDOW_COUNTERS", "WINDOW_LEVELS", "Batch", "Run", "RunSummary",
    "State", "arrival_times", "hashed_uniform", "hashed_uniforms", "finish_run",
    "_K_PRE", "_WEIGHTED", "_as_reached", "_grown", "_splitmix",
]


@dataclass(frozen=True)
class RunSummary(sim.Summary):
    """One row for a comparison table (:func:`.analysis.summarise`). Counts over the whole run."""

    recovered: bool
    """some 5-s block after the trigger passes and every later one does (:func:`.analysis.recovery`)"""
    recovery_time_s: float | None
    """from the end of the trigger to recovery (s; None if not recovered)"""
    user_requests: int
    """user requests that arrived (count)"""
    served_share: float
    """user requests answered within M / arrived (0-1; 1 when none arrived: nothing was lost)"""
    goodput_lost: int
    """user requests not answered within M (count)"""
    timeouts: int
    """attempts that timed out (count)"""
    retries: int
    """retries sent (count)"""
    rejected: int
    """attempts refused at the queue bound (count)"""
    wasted_rows: int
    """rows committed after their client gave up (rows)"""
    committed_rows: int
    """rows committed (rows)"""
    wasted_share: float
    """wasted_rows / committed_rows (0-1; 0 when nothing committed)"""
    max_queue: float
    """largest window mean of the batches waiting (batches)"""
    truncated: bool
    """the event cap stopped the run before the horizon"""


@dataclass
class Run(sim.Run):
    """One simulated run. ``windows`` maps names to equal-length arrays (``t`` in seconds,
    counters per second, ``queue`` in batches, ``busy`` in [0, 1]); ``summary``: :class:`RunSummary`."""

    Summary = RunSummary

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
    summary: RunSummary | dict = field(default_factory=dict)

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
    server = dict(S.rows, rows_in=len(S.att_status) - S.throttled, waiting=waiting, budget_denied=S.budget_denied,
                  throttled=S.throttled, c_batches_after_isolation=S.c_after_isolation,
                  c_last_commit_ms=S.c_last_commit_ms)
    run = Run(S.sc, S.seed, engine, w, ledger, att_ledger, server, status)
    run.recovered, run.recovery_time_s = recovery(run)
    run.summary = summarise(run)
    return run
