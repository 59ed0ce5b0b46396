"""04b · From raw logs to timelines and the nothing-lost ledger (pure functions, no database).

Start reading at :func:`ledger_from_logs`. The load generator logs every user and attempt (with its
outcome as the client saw it); each server logs the attempt ids it committed and rejected, its queue
length every ``sample_ms`` and its own count of rows committed after their deadline; the database
holds one row per committed attempt in ``t_trans``. The ledger checks, across the processes::

    rows in t_trans  =  rows the servers committed  =  answers + wasted

with *answers* the attempts the clients saw answered (load generator) and *wasted* the committed
rows whose attempt the client did not see answered; and, the other way round, every attempt the
clients saw time out is a wasted row, a row in a rejected batch whose rejection arrived after the
deadline, or an attempt no server received in time (``unreached``). The servers' own count of rows
committed after the deadline is a second, independent measure of waste; the gap between the two
(``boundary``: replies racing the deadline) is reported, not hidden.

:func:`windows_from_logs` bins the logs into 04's window names (``offered``, ``goodput``,
``timeouts``, ``retries``, ``rejected``, ``committed``, ``wasted``, ``queue`` …), per second.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .wire import OK, REJECTED, TIMEOUT

__all__ = ["Ledger", "ledger_from_logs", "windows_from_logs", "WINDOW_KEYS", "attempt_id"]

WINDOW_KEYS = ("t", "offered", "degraded", "attempts", "retries", "timeouts", "rejected", "goodput",
               "gave_up", "committed", "wasted", "queue", "queue_b", "queue_c", "batches")


def attempt_id(user: int, k: int) -> int:
    """The id of attempt ``k`` (1, 2, …) of user request ``user``, as stored in ``t_trans.amount``."""
    return user * 1000 + k


@dataclass(frozen=True)
class Ledger:
    """Counts of one measured run, each from the process that knows it."""

    users: int  # user requests made (after degrading), load generator
    attempts: int  # attempts sent (first tries + retries), load generator
    answered: int  # attempts the clients saw answered in time, load generator
    timed_out: int  # attempts that hit the deadline, load generator
    rejected: int  # attempts the clients saw rejected by a full queue, load generator
    errors: int  # any other status (should be 0), load generator
    served_users: int  # users with an answered attempt, load generator
    db_rows: int  # rows in t_trans for this run, database
    server_committed: int  # rows the servers committed, servers
    server_rejected: int  # rows in batches the servers rejected, servers
    server_late: int  # rows the servers committed after the attempt's deadline, servers
    db_not_server: int  # ids in t_trans that no server counted, or counted and not in t_trans
    answered_not_committed: int  # answered attempts with no row in t_trans (database ∩ load generator)
    wasted: int  # rows in t_trans whose attempt the client did not see answered
    rejected_late: int  # rows rejected by a server whose client saw a timeout instead
    unreached: int  # timed-out attempts that no server committed or rejected

    @property
    def boundary(self) -> int:
        """Wasted by the clients' account minus wasted by the servers' clocks (replies racing M)."""
        return self.wasted - self.server_late

    @property
    def wasted_share(self) -> float:
        return self.wasted / self.db_rows if self.db_rows else 0.0

    def problems(self) -> list[str]:
        out = []
        if self.db_rows != self.server_committed or self.db_not_server:
            out.append(f"rows in t_trans {self.db_rows} vs rows the servers committed {self.server_committed} "
                       f"({self.db_not_server} ids differ)")
        if self.answered_not_committed:
            out.append(f"{self.answered_not_committed} answered attempts have no row in t_trans")
        if self.db_rows != self.answered + self.wasted:
            out.append(f"rows {self.db_rows} != answers {self.answered} + wasted {self.wasted}")
        if self.attempts != self.answered + self.timed_out + self.rejected + self.errors:
            out.append("attempts != answered + timed out + rejected + errors")
        if self.timed_out + self.errors != self.wasted + self.rejected_late + self.unreached:
            out.append(f"timeouts {self.timed_out} + errors {self.errors} != wasted {self.wasted} + rejected late "
                       f"{self.rejected_late} + unreached {self.unreached}")
        if self.server_rejected != self.rejected + self.rejected_late:
            out.append(f"servers rejected {self.server_rejected} rows, clients saw {self.rejected} + "
                       f"{self.rejected_late} late")
        if self.errors:
            out.append(f"{self.errors} attempts ended with an unexpected status")
        return out

    def check(self) -> None:
        """Raise AssertionError naming whatever is unaccounted for."""
        p = self.problems()
        if p:
            raise AssertionError("; ".join(p))


def ledger_from_logs(users, attempts, servers: dict, db_ids) -> Ledger:
    """The ledger from the load generator's logs, the servers' id lists and the ids in t_trans.

    ``attempts``: ``(user, send_ms, end_ms, outcome, server)`` in the order they ended (one user's
    attempts end in order); ``servers``: name → ``{"committed_ids", "rejected_ids", "stats"}``."""
    count: dict[int, int] = {}
    outcome_of: dict[int, int] = {}
    for a in attempts:
        count[a[0]] = count.get(a[0], 0) + 1
        outcome_of[attempt_id(a[0], count[a[0]])] = a[3]
    committed = [i for s in servers.values() for i in s["committed_ids"]]
    rejected = [i for s in servers.values() for i in s["rejected_ids"]]
    c_set, r_set, db = set(committed), set(rejected), set(db_ids)
    answered = {i for i, o in outcome_of.items() if o == OK}
    timed = {i for i, o in outcome_of.items() if o not in (OK, REJECTED)}
    return Ledger(
        users=len(users), attempts=len(attempts), answered=len(answered),
        timed_out=sum(1 for o in outcome_of.values() if o == TIMEOUT),
        rejected=sum(1 for o in outcome_of.values() if o == REJECTED),
        errors=sum(1 for o in outcome_of.values() if o not in (OK, TIMEOUT, REJECTED)),
        served_users=sum(1 for u in users if u[2]),
        db_rows=len(db_ids), server_committed=len(committed), server_rejected=len(rejected),
        server_late=sum(int(s["stats"]["wasted_rows"]) for s in servers.values()),
        db_not_server=len(db ^ c_set) + (len(committed) - len(c_set)),
        answered_not_committed=len(answered - db),
        wasted=len(db - answered),
        rejected_late=len(r_set & timed),
        unreached=len(timed - c_set - r_set),
    )


def windows_from_logs(users, attempts, servers: dict, *, t0: float, horizon_ms: float, window_ms: float,
                      degraded_times=()) -> dict:
    """Bin the logs into windows of ``window_ms`` over ``[0, horizon_ms)``; rates per second.

    ``users``: ``[arrival_ms, region, served, attempts, gave_up]``; ``attempts``: ``(user, send_ms,
    end_ms, outcome, server)``; ``servers``: name → ``{"samples": [(wall, waiting, busy)],
    "batches": [(start wall, end wall, rows)]}``; ``t0`` the wall time of ms 0.
    Goodput counts attempts answered in time by the window they are answered in (as 04's model).
    """
    n = int(np.ceil(horizon_ms / window_ms))
    per_s = 1000.0 / window_ms
    edges = np.arange(n + 1) * window_ms

    def hist(times, weights=None):
        times = np.asarray(times, dtype=float)
        h, _ = np.histogram(times, bins=edges, weights=weights)
        return h * per_s

    a = np.array([(x[1], x[2], x[3]) for x in attempts], dtype=float).reshape(-1, 3)
    send, end, out = a[:, 0], a[:, 1], a[:, 2]
    u = np.array([(x[0], x[3]) for x in users], dtype=float).reshape(-1, 2)
    first_try = np.zeros(len(a), dtype=bool)
    seen = set()
    for k, x in enumerate(attempts):
        if x[0] not in seen:
            seen.add(x[0])
            first_try[k] = True
    last_end: dict = {}
    for x in attempts:  # a user who gave up did so when its last attempt failed
        last_end[x[0]] = max(last_end.get(x[0], -np.inf), x[2])
    gave = [last_end[k] for k, x in enumerate(users) if x[4] and k in last_end]
    w = {
        "t": edges[:-1] / 1000.0,
        "offered": hist(u[:, 0]),
        "degraded": hist(list(degraded_times)),
        "attempts": hist(send),
        "retries": hist(send[~first_try]),
        "timeouts": hist(end[out == TIMEOUT]),
        "rejected": hist(end[out == REJECTED]),
        "goodput": hist(end[out == OK]),
        "gave_up": hist(gave) if gave else np.zeros(n),
    }
    committed = np.zeros(n)
    batches = np.zeros(n)
    for s in servers.values():
        b = np.array(s["batches"], dtype=float).reshape(-1, 3)
        ends = (b[:, 1] - t0) * 1000.0
        committed += hist(ends, b[:, 2])
        batches += hist(ends)
    w["committed"] = committed
    w["batches"] = batches
    # wasted rows per window: committed rows minus rows answered in time (both by commit end);
    # the run's total comes from the servers' counters (Ledger), this is its timeline.
    w["wasted"] = np.clip(committed - w["goodput"], 0.0, None)
    for name, key in (("B", "queue_b"), ("C", "queue_c")):
        s = servers.get(name)
        if s is None or not s["samples"]:
            w[key] = np.zeros(n)
            continue
        smp = np.array(s["samples"], dtype=float).reshape(-1, 3)
        ts = (smp[:, 0] - t0) * 1000.0
        idx = np.floor(ts / window_ms).astype(int)
        keep = (idx >= 0) & (idx < n)
        tot = np.bincount(idx[keep], weights=smp[keep, 1], minlength=n)
        cnt = np.bincount(idx[keep], minlength=n)
        w[key] = np.divide(tot, cnt, out=np.zeros(n), where=cnt > 0)
    w["queue"] = w["queue_b"] + w["queue_c"]
    return {k: np.asarray(w[k], dtype=float) for k in WINDOW_KEYS}
