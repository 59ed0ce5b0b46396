"""Exercises of notebook 01 · The hot row. Expected values are computed by the package."""

from __future__ import annotations

from dataclasses import replace

from .. import capacity, hot_row
from ..exercises import as_number, close_to, exercise

#: the seed's monthly peak: "大概高峰期比平时多20%流量"
PEAK_RATE_PER_S = 1.2 * hot_row.SEED_GROUP_COMMIT.rate_per_s


@exercise("01.latency_32_threads")
def latency_32_threads(answer):
    """Mean latency per transaction (ms) of 32 worker threads on the seed's row at RTT 0.5 ms."""
    expected = hot_row.closed_loop_latency_ms(hot_row.SEED_ROW, 32)
    return close_to(
        answer, expected, rel=0.02, unit="ms",
        hint="Little's law: 32 transactions are always in flight and the row commits 1000 / hold "
        "of them per second, so each one takes 32 / TPS.",
    )  # fmt: skip


@exercise("01.peak_batch_rate")
def peak_batch_rate(answer):
    """Merged batches/s the seed's batcher (20 rows / 20 ms) makes at the +20% peak."""
    sc = hot_row.SEED_GROUP_COMMIT
    expected = capacity.batcher_batch_rate(PEAK_RATE_PER_S, sc.max_rows, sc.max_wait_ms)
    naive = PEAK_RATE_PER_S / sc.max_rows
    ok, msg = close_to(
        answer, expected, rel=0.02, unit="batches/s",
        hint="Most batches still close on the 20 ms timer: use capacity.batcher_batch_rate.",
    )  # fmt: skip
    if not ok and as_number(answer) is not None and abs(float(answer) - naive) < 0.05 * naive:
        msg = (f"{float(answer):g} batches/s assumes every batch is full (λ / 20); at this load most "
               "batches close on the 20 ms timer with fewer rows. Use capacity.batcher_batch_rate.")  # fmt: skip
    return ok, msg


@exercise("01.two_servers_batch_rate")
def two_servers_batch_rate(answer):
    """Batches/s reaching the row lock when the seed's 600 requests/s are split over 2 servers."""
    expected = hot_row.group_commit_batch_rate(replace(hot_row.SEED_GROUP_COMMIT, servers=2))
    return close_to(
        answer, expected, rel=0.02, unit="batches/s",
        hint="Each server's batcher sees 300 requests/s and makes its own batches: "
        "2 × capacity.batcher_batch_rate(300).",
    )  # fmt: skip


