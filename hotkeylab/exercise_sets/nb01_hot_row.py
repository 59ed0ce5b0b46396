"""Exercises of notebook 01 · The hot row. Expected values are computed by the package."""

from __future__ import annotations

from dataclasses import replace

from .. import capacity, hot_row
from ..exercises import Mistake, numeric

#: the seed's monthly peak: "大概高峰期比平时多20%流量"
SEED_PEAK_RATE_PER_S = 1.2 * hot_row.SEED_GROUP_COMMIT.rate_per_s
#: a shorter batcher timer for exercise 3 (the 20 ms one's answer is printed in the notebook)
SHORT_WAIT_MS = 10.0
#: a peak 30 % above our 600/s (heavier than the seed's "大概高峰期比平时多20%流量", so that the answer
#: is not the 720/s line printed in the notebook)
PEAK_RATE_PER_S = 1.3 * hot_row.SEED_GROUP_COMMIT.rate_per_s
#: "在RTT为1.5ms的情况下一次合并提交平均耗时为27ms左右"
CROSS_DC_MERGED = replace(hot_row.SEED_MERGED, rtt_ms=1.5)
#: exercise 1's row: the seed's, its owner 1.5 ms away
_ROW = hot_row.SEED_ROW_CROSS_DC


@numeric("01.latency_32_threads", rel=0.02, unit="ms",
         hint="Little's law: 32 transactions are always in flight and the row commits 1000 / hold "
         "of them per second, so each one takes 32 / TPS; the hold is the part of the cycle under the lock.",
         mistakes=lambda: [Mistake(32 * _ROW.cycle_ms, rel=0.02, message=lambda a: (
             f"{a:g} ms charges each thread the whole {_ROW.cycle_ms:g} ms cycle; with 32 threads the lock "
             "is never idle and the 2 round trips outside it overlap other threads' holds: use the hold."))])  # fmt: skip
def latency_32_threads() -> float:
    """Mean latency per transaction (ms) of 32 worker threads on the seed's row at RTT 1.5 ms."""
    return hot_row.closed_loop_latency_ms(_ROW, 32)


@numeric("01.second_thread_gain_cross_dc", rel=0.03, unit="%",
         hint="Only the 2 round trips outside the lock (2 × 1.5 ms) can overlap another thread's hold: "
         "gain = cycle / hold − 1 with cycle 27 ms.")  # fmt: skip
def second_thread_gain_cross_dc() -> float:
    """Most a second hot-key thread can add (in %) to the merged commit at RTT 1.5 ms (27 ms)."""
    sc = CROSS_DC_MERGED
    return 100 * capacity.extra_thread_gain(sc.cycle_ms, sc.hold_ms)


@numeric("01.peak_batch_rate", rel=0.02, unit="batches/s",
         hint="Most batches still close on the timer, now 10 ms: one cycle is the wait for the first row "
         "(1/λ) plus about the timer; or use capacity.batcher_batch_rate(720, 20, 10).",
         mistakes=lambda: [Mistake(SEED_PEAK_RATE_PER_S / hot_row.SEED_GROUP_COMMIT.max_rows, rel=0.05,
                                   message=lambda a: f"{a:g} batches/s assumes every batch is full (λ / 20); at "
                                   "this load most batches close on the timer with fewer rows. Use "
                                   "capacity.batcher_batch_rate.")])  # fmt: skip
def peak_batch_rate() -> float:
    """Merged batches/s at the seed's +20% peak (720/s) with 20 rows / a 10 ms timer."""
    sc = hot_row.SEED_GROUP_COMMIT
    return capacity.batcher_batch_rate(SEED_PEAK_RATE_PER_S, sc.max_rows, SHORT_WAIT_MS)


@numeric("01.two_servers_lock_rho_peak", rel=0.02,
         hint="Two batchers of 390 requests/s each: batches/s B = 2 × capacity.batcher_batch_rate(390). "
         "The lock is held (per_batch_ms − outside_ms) per batch plus per_row_ms per row: "
         "ρ = (B × (per_batch_ms − outside_ms) + λ × per_row_ms) / 1000.")  # fmt: skip
def two_servers_lock_rho_peak() -> float:
    """Row-lock utilisation at the +30% peak (780/s) split over 2 servers, N growing with rows."""
    sc = replace(hot_row.SEED_GROUP_COMMIT, rate_per_s=PEAK_RATE_PER_S, servers=2)
    return hot_row.group_commit_rho(sc)["rho_lock"]
