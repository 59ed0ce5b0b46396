"""04b · The lab's parameters: the four turns on 04's model clock, and one time scale for the stack.

Start reading here. A turn is a :class:`hotkeylab.metastable.Scenario` on notebook 04's clock (the
seed's numbers: K = 20 rows, T = 20 ms, N = 16 / 27 ms, M = 200 ms, λ = 600/s, +20% peak, retry
0–50 ms, patience 300 ms, QueueMaxSize 250). :func:`scaled` stretches every time by one factor
``scale`` and divides every rate by it, so rows per batch (λT), queue lengths in batches (M/N) and
retries per request are unchanged and the model's verdicts carry over; the real stack and the model
beside it both run the scaled scenario. :class:`StackConfig` holds what only the real stack needs
(the RTTs it injects, the share of users in datacentre C, how many round trips a merged commit makes).

Why scale 3: the 2-core machine runs a MariaDB, two gRPC servers, a load generator and other
people's jobs. In the storm every user request comes back as retries and rejections: at scale 2 we
measured about 2 000 RPCs/s through Python gRPC, and with the machine's load average at 8 (other
jobs) the servers' event loops fell behind from the start. At scale 3 it is a third of scale 1's RPC
rate, the injected RTTs are 1.5 ms and 4.5 ms (a ~0.1 ms sleep overshoot is under 7%), and a run of
60 model seconds takes 3 real minutes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .. import capacity, rtt
from ..metastable import SEED_INCIDENT, Scenario, Window
from ..validate import check_choice, check_fields, check_int, check_number, param

__all__ = [
    "SCALE",
    "SAFETY",
    "TURNS",
    "TURN_LABELS",
    "StackConfig",
    "turn_scenario",
    "scaled",
    "check_supported",
    "round_trips",
]

#: The one time factor (ours): every time ×3, every rate ÷3 (see the module docstring).
SCALE = 3.0
#: The safety factor of the bounded-queue turn: QueueMaxSize = floor(M/N × 0.5), as 04's table.
SAFETY = 0.5
#: The four turns the lab measures, in the order the notebook shows them.
TURNS = ("healthy", "stuck", "degrade", "bounded")
TURN_LABELS = {
    "healthy": "healthy: peak, one owner",
    "stuck": "second owner in the peak, isolated, nothing else",
    "degrade": "the same, then upstream degraded",
    "bounded": "the same with QueueMaxSize ≤ (M/N) × safety",
}

# The lab's clock (model seconds; ours, a shorter version of 04's SHORT_INCIDENT): the peak from
# 5 s, datacentre C an owner from 10 s to 25 s (isolation at 25 s), degrade 35–45 s, end at 60 s.
PEAK_MS = 5_000.0
OWNER_MS = (10_000.0, 25_000.0)
DEGRADE_MS = (35_000.0, 45_000.0)
HORIZON_MS = 60_000.0
HEALTHY_HORIZON_MS = 30_000.0


def round_trips() -> int:
    """Round trips per merged commit: the slope of the seed's two measurements (16 ms at 0.5 ms RTT,
    27 ms at 1.5 ms), ``capacity.fit_round_trips`` → 11 (notebook 02)."""
    return int(round(rtt.FITTED.round_trips))


def turn_scenario(turn: str, *, horizon_ms: float | None = None) -> Scenario:
    """One turn on 04's clock (unscaled). ``horizon_ms`` shortens it (the live tests do)."""
    check_choice("turn", turn, TURNS)
    base = replace(
        SEED_INCIDENT,
        peak=Window(PEAK_MS, math.inf, SEED_INCIDENT.peak.factor),
        second_owner=Window(*OWNER_MS),
        owner_queues=True,  # server C has its own queue and thread, as on the real stack
        horizon_ms=HORIZON_MS,
    )
    if turn == "healthy":
        sc = replace(base, second_owner=None, owner_queues=False, horizon_ms=HEALTHY_HORIZON_MS)
    elif turn == "stuck":
        sc = base
    elif turn == "degrade":
        sc = replace(base, degrade=Window(*DEGRADE_MS, 0.0))
    else:
        sc = replace(base, queue_limit=capacity.safe_queue_limit(base.timeout_ms, base.batch_ms, SAFETY))
    if horizon_ms is not None:
        check_number("horizon_ms", horizon_ms, low=sc.window_ms, high=sc.horizon_ms)
        sc = replace(sc, horizon_ms=float(horizon_ms))
    return sc


def _w(w: Window | None, s: float) -> Window | None:
    if w is None:
        return None
    return Window(w.start_ms * s, w.end_ms * s, w.factor)


def scaled(sc: Scenario, scale: float = SCALE) -> Scenario:
    """``sc`` with every time ×``scale`` and every rate ÷``scale`` (rows per batch, M/N and the
    retries per request unchanged). ``scaled(sc, 1)`` is ``sc``."""
    s = check_number("scale", scale, low=0.5, high=20.0)
    r = sc.retry
    return replace(
        sc,
        user_rate_per_s=sc.user_rate_per_s / s,
        batch_max_wait_ms=sc.batch_max_wait_ms * s,
        batch_ms=sc.batch_ms * s,
        cross_batch_ms=sc.cross_batch_ms * s,
        timeout_ms=sc.timeout_ms * s,
        retry=replace(r, base_ms=r.base_ms * s, cap_ms=r.cap_ms * s, min_delay_ms=r.min_delay_ms * s,
                      patience_ms=r.patience_ms * s),
        peak=_w(sc.peak, s),
        second_owner=_w(sc.second_owner, s),
        degrade=_w(sc.degrade, s),
        horizon_ms=sc.horizon_ms * s,
        window_ms=sc.window_ms * s,
        warmup_ms=sc.warmup_ms * s,
    )


def check_supported(sc: Scenario) -> Scenario:
    """Refuse, before anything starts, a scenario the real stack cannot run: it has the seed's
    timer batcher, FIFO queues, the seed's retry (no backoff, full jitter, no budget), and the
    peak / second owner / degrade windows only."""
    if not isinstance(sc, Scenario):
        raise ValueError(f"scenario must be a metastable Scenario, got {type(sc).__name__}")
    unsupported = {
        "batcher": (sc.batcher, "timer"), "discipline": (sc.discipline, "fifo"),
        "deadline_drop": (sc.deadline_drop, False), "codel": (sc.codel, None),
        "client_throttle": (sc.client_throttle, None), "slow_db": (sc.slow_db, None),
        "restart_at_ms": (sc.restart_at_ms, None), "suppress_retries": (sc.suppress_retries, None),
        "stretch_retries": (sc.stretch_retries, None), "retry.multiplier": (sc.retry.multiplier, 1.0),
        "retry.jitter": (sc.retry.jitter, "full"), "retry.budget": (sc.retry.budget, None),
    }
    for name, (got, want) in unsupported.items():
        if got != want:
            raise ValueError(f"{name} must be {want!r} on the real stack (it runs the seed's design), got {got!r}")
    if sc.degrade is not None and sc.degrade.factor != 0.0:
        raise ValueError(f"degrade.factor must be 0 on the real stack (the team cut the traffic), got {sc.degrade.factor}")
    if not math.isinf(sc.retry.max_attempts):
        check_int("retry.max_attempts", sc.retry.max_attempts, low=1, high=1000)
    check_number("user_rate_per_s", sc.user_rate_per_s, low=1.0, high=800.0)
    check_number("horizon_ms", sc.horizon_ms, low=2_000.0, high=900_000.0)
    check_number("timeout_ms", sc.timeout_ms, low=10.0, high=10_000.0)
    if sc.queue_limit is not None:
        check_int("queue_limit", sc.queue_limit, low=0, high=100_000)
    return sc


@dataclass(frozen=True)
class StackConfig:
    """What only the real stack needs, on 04's clock (scaled with the turn).

    - ``rtt_b_ms`` / ``rtt_c_ms``: the seed's RTTs, "机房B内…0.5ms左右 / 机房C内…1.5ms", slept before
      every statement of the merged commit (01b's emulation), ×scale.
    - ``c_share``: share of users whose clients sit in datacentre C and, while C is an owner, send
      to server C (ours: half; the seed gives no split).
    - ``sample_ms``: how often each server records its queue length.
    - ``retry_seed``: seeds the load generator's Poisson users and retry jitter.
    """

    scale: float = param(SCALE, low=0.5, high=20.0)
    rtt_b_ms: float = param(rtt.RTT_B_MS, low=0.0, high=50.0)
    rtt_c_ms: float = param(rtt.RTT_C_MS, low=0.0, high=50.0)
    c_share: float = param(0.5, low=0.0, high=1.0)
    sample_ms: float = param(100.0, low=10.0, high=5_000.0)
    retry_seed: int = param(0, kind="int", low=0, high=2**31 - 1)

    def __post_init__(self):
        check_fields(self)

    def rtt_ms(self, server: str) -> float:
        check_choice("server", server, ("B", "C"))
        return (self.rtt_b_ms if server == "B" else self.rtt_c_ms) * self.scale

    @property
    def target_batch_ms(self) -> float:
        """What one merged commit from B should take on the stack: the seed's 16 ms ×scale."""
        return rtt.BATCH_B_MS * self.scale
