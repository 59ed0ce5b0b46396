"""Exercises of notebook 09 · Fault tolerance. Expected answers come from
hotkeylab.fault_tolerance and hotkeylab.capacity, never typed in."""

from __future__ import annotations

from .. import capacity
from .. import fault_tolerance as ft
from ..exercises import close_to, exercise


@exercise("09.two_retries")
def _two_retries(answer):
    """The backend's success rate drops to 95%; AMS retries twice (3 calls per click).
    What share of user requests succeeds?"""
    return close_to(
        answer,
        capacity.retry_success(0.95, 3),
        rel=1e-4,
        hint="A request fails only if all three independent calls fail: 1 − 0.05³.",
    )


@exercise("09.storm_load")
def _storm_load(answer):
    """The backend's success rate drops to 50%; AMS retries once and users click up to 3 times
    while a click fails. Calls per second reaching the backend at 120 user requests/s?"""
    return close_to(
        answer,
        ft.retry_load_per_s(120.0, 0.5, 2, 3),
        rel=0.01,
        unit="calls/s",
        hint="A click makes 1 + 0.5 calls and fails with 0.5²; clicks per user = 1 + 0.25 + 0.25².",
    )


@exercise("09.pool_2pct")
def _pool_2pct(answer):
    """The seed's pool (100 workers, 5 s timeout, 100 ms service): capacity at 2% hanging calls."""
    return close_to(
        answer,
        ft.pool_capacity_per_s(100, 100.0, 5000.0, 0.02),
        rel=0.01,
        unit="requests/s",
        hint="holding = 0.98 × 100 ms + 0.02 × 5000 ms; capacity = workers / holding.",
    )


@exercise("09.failover_mean")
def _failover_mean(answer):
    """Primary/backup, 50 ms service, 1000 ms connect timeout; the primary is unreachable 1% of
    the time. Mean latency over all requests (ms), ignoring queueing?"""
    return close_to(
        answer,
        ft.mean_latency_ms(50.0, 1000.0, 0.01),
        rel=0.01,
        unit="ms",
        hint="99% take 50 ms; 1% wait for the connect timeout, then 50 ms at the backup.",
    )


@exercise("09.cap_worst_case")
def _cap_worst_case(answer):
    """Half the delivery calls fail at connect, half time out at read and deliver later; users
    click up to 4 times; the read-timeout cap is 2 (per user, read timeouts only; a user with 2
    is refused). Duplicate gifts per 1000 users?"""
    g = ft.gift_distribution(0.0, 0.5, 0.0, 0.5, 4, read_cap=2)
    return close_to(
        answer,
        1000 * g["duplicates"],
        rel=0.01,
        unit="gifts",
        hint="Connect failures do not count: a user gets min(B, 2) gifts, B ~ Binomial(4, 1/2); "
        "a duplicate when B ≥ 2.",
    )


@exercise("09.bypass_latency")
def _bypass_latency(answer):
    """The reporting service slows to a 50 ms mean (exponential); 30 ms of core steps and a
    20 ms bypass timeout. Mean core-path latency (ms)?"""
    return close_to(
        answer,
        ft.core_latency_ms(30.0, 50.0, 20.0),
        rel=0.01,
        unit="ms",
        hint="core + E[min(R, 20)] = core + m·(1 − e^(−20/m)).",
    )


@exercise("09.config_errors")
def _config_errors(answer):
    """Pool 100, daily limit 200, claims at 2/s; the alarm fires at the end of the first 10-min
    cycle and the fix lands 5 min later. Failed claims (fluid)?"""
    from dataclasses import replace

    return close_to(
        answer,
        ft.config_errors_fluid(replace(ft.SEED_GIFT_CONFIG, claims_per_s=2.0))["errors"],
        rel=0.01,
        unit="claims",
        hint="The pool is empty after 100 / 2 s; every claim from then until 15 min fails.",
    )


@exercise("09.split_any_down")
def _split_any_down(answer):
    """Five isolated stores, each down on a day with probability 1%: share of days with
    something down?"""
    return close_to(
        answer,
        ft.storage_split(0.6, 5, 0.01)["p_any_down"],
        rel=0.01,
        hint="Nothing is down with probability 0.99⁵; something is down otherwise.",
    )
