"""The group-commit batcher: one SimPy actor for the models whose batcher works alike.

:func:`batcher` takes rows from a ``simpy.Store`` and closes a batch at ``max_rows`` rows or
``max_wait_ms`` after its first row, whichever comes first; one batch is open at a time. What a
closed batch becomes (a queue for a hot-key thread, records) is the model's ``close`` callback.
Used by :mod:`hotkeylab.hot_row` (the seed's group commit, one batcher per server; its runs are
bit-identical to its former own batcher, event counts included).

Not used, on purpose, by two models whose batcher closes batches the same way but runs otherwise:

- :mod:`hotkeylab.routing` (:func:`hotkeylab.routing.model.batcher`): its users append each
  request straight to the open batch and trigger its "opened" and "full" events, one SimPy event
  per request, where this actor costs a put, a get and a condition. With this actor the lock
  model's windows, ledger and intervals come out identical, but a run takes about three times the
  SimPy events (128,503 → 364,509 for ``SEED_INCIDENT``) and four to six times as long, and a run that
  reaches ``max_events`` stops earlier in simulated time, so its results change.
- :mod:`hotkeylab.metastable` (:func:`hotkeylab.metastable.model.batcher`): a restart interrupts
  it and throws its open batch away (so the open batch lives on the shared world, not in the
  actor); the hot-key queue may refuse a closed batch (its rows are answered "rejected" at once);
  closing a batch wakes the idle hot-key thread; it tests ``get not in got`` where this actor
  tests ``get.triggered`` (they differ for a row taken at the very instant the timer fires); and
  its second policy, ``batcher="leader"`` (leader/follower, as MySQL's binlog group commit),
  closes a batch when the thread is free rather than on a timer. Its SimPy and fast engines are
  kept identical to each other by tests, so its actors stay as they are.
"""

from __future__ import annotations

__all__ = ["batcher"]


def batcher(env, inbox, max_rows: int, max_wait_ms: float, close):
    """Actor: group commit. A batch opens with the first row taken from ``inbox`` and closes at
    ``max_rows`` rows or ``max_wait_ms`` after it opened, whichever comes first. Then
    ``close(rows, t_open_ms, by_timer)`` gets the batch; if it returns an event (a ``put`` into
    a bounded queue, say) the batcher waits for it before it opens the next batch."""
    while True:
        rows = [(yield inbox.get())]  # a batch opens with its first row …
        t_open = env.now
        timer = env.timeout(max_wait_ms)  # … and its timer starts now
        by_timer = False
        while len(rows) < max_rows:
            get = inbox.get()
            yield get | timer
            if get.triggered:  # a row arrived (possibly at the same instant as the timer)
                rows.append(get.value)
            else:  # the timer fired first: withdraw the get, or it would take the next row
                get.cancel()
                by_timer = True
                break
        handed_over = close(rows, t_open, by_timer)
        if handed_over is not None:
            yield handed_over
