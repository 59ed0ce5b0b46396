"""Exercises of notebook 01 · The hot row. Expected values are computed by the package."""

from __future__ import annotations

from dataclasses import replace

from .. import capacity, hot_row
from ..exercises import as_number, close_to, exercise

#: the seed's monthly peak: "大概高峰期比平时多20%流量"
PEAK_RATE_PER_S = 1.2 * hot_row.SEED_GROUP_COMMIT.rate_per_s
#: "在RTT为1.5ms的情况下一次合并提交平均耗时为27ms左右"
CROSS_DC_MERGED = replace(hot_row.SEED_MERGED, rtt_ms=1.5)


@exercise("01.latency_32_threads")
def latency_32_threads(answer):
    """Mean latency per transaction (ms) of 32 worker threads on the seed's row at RTT 0.5 ms."""
    expected = hot_row.closed_loop_latency_ms(hot_row.SEED_ROW, 32)
    ok, msg = close_to(
        answer, expected, rel=0.02, unit="ms",
        hint="Little's law: 32 transactions are always in flight and the row commits 1000 / hold "
        "of them per second, so each one takes 32 / TPS; the hold is the part of the cycle under the lock.",
    )  # fmt: skip
    cycle_answer = 32 * hot_row.SEED_ROW.cycle_ms
    if not ok and as_number(answer) is not None and abs(float(answer) - cycle_answer) < 0.02 * cycle_answer:
        msg = (f"{float(answer):g} ms charges each thread the whole 2.9 ms cycle; with 32 threads the lock "
               "is never idle and the 2 round trips outside it overlap other threads' holds: use the hold.")
    return ok, msg


@exercise("01.second_thread_gain_cross_dc")
def second_thread_gain_cross_dc(answer):
    """Most a second hot-key thread can add (in %) to the merged commit at RTT 1.5 ms (27 ms)."""
    sc = CROSS_DC_MERGED
    expected = 100 * capacity.extra_thread_gain(sc.cycle_ms, sc.hold_ms)
    return close_to(
        answer, expected, rel=0.03, unit="%",
        hint="Only the 2 round trips outside the lock (2 × 1.5 ms) can overlap another thread's hold: "
        "gain = cycle / hold − 1 with cycle 27 ms.",
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


@exercise("01.two_servers_lock_rho_peak")
def two_servers_lock_rho_peak(answer):
    """Row-lock utilisation at the +20% peak with the load split over 2 servers, N growing with rows."""
    sc = replace(hot_row.SEED_GROUP_COMMIT, rate_per_s=PEAK_RATE_PER_S, servers=2)
    expected = hot_row.group_commit_rho(sc)["rho_lock"]
    return close_to(
        answer, expected, rel=0.02,
        hint="Two batchers of 360 requests/s each: batches/s B = 2 × capacity.batcher_batch_rate(360). "
        "The lock is held (per_batch_ms − outside_ms) per batch plus per_row_ms per row: "
        "ρ = (B × (per_batch_ms − outside_ms) + λ × per_row_ms) / 1000.",
    )  # fmt: skip
