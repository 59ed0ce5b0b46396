"""Exercises of notebook 09 · Fault tolerance. Expected answers come from
hotkeylab.fault_tolerance and hotkeylab.capacity, never typed in."""

from __future__ import annotations

from dataclasses import replace

from .. import capacity
from .. import fault_tolerance as ft
from ..exercises import numeric


@numeric("09.two_retries", rel=1e-4, hint="A request fails only if all three independent calls fail: 1 − 0.05³.")
def two_retries() -> float:
    """The backend's success rate drops to 95%; AMS retries twice (3 calls per click).
    What share of user requests succeeds?"""
    return capacity.retry_success(0.95, 3)


@numeric("09.storm_load", rel=0.01, unit="calls/s",
         hint="A click makes 1 + 0.5 calls and fails with 0.5²; clicks per user = 1 + 0.25 + 0.25².")
def storm_load() -> float:
    """The backend's success rate drops to 50%; AMS retries once and users click up to 3 times
    while a click fails. Calls per second reaching the backend at 120 user requests/s?"""
    return ft.retry_load_per_s(120.0, 0.5, 2, 3)


@numeric("09.pool_2pct", rel=0.01, unit="requests/s",
         hint="holding = 0.98 × 100 ms + 0.02 × 5000 ms; capacity = workers / holding.")
def pool_2pct() -> float:
    """The seed's pool (100 workers, 5 s timeout, 100 ms service): capacity at 2% hanging calls."""
    return ft.pool_capacity_per_s(100, 100.0, 5000.0, 0.02)


@numeric("09.failover_mean", rel=0.01, unit="ms",
         hint="99% take 50 ms; 1% wait for the connect timeout, then 50 ms at the backup.")
def failover_mean() -> float:
    """Primary/backup, 50 ms service, 1000 ms connect timeout; the primary is unreachable 1% of
    the time. Mean latency over all requests (ms), ignoring queueing?"""
    return ft.mean_latency_ms(50.0, 1000.0, 0.01)


@numeric("09.cap_worst_case", rel=0.01, unit="gifts",
         hint="Connect failures do not count: a user gets min(B, 2) gifts, B ~ Binomial(4, 1/2); "
         "a duplicate when B ≥ 2.")  # fmt: skip
def cap_worst_case() -> float:
    """Half the delivery calls fail at connect, half time out at read and deliver later; users
    click up to 4 times; the read-timeout cap is 2 (per user, read timeouts only; a user with 2
    is refused). Duplicate gifts per 1000 users?"""
    return 1000 * ft.gift_distribution(0.0, 0.5, 0.0, 0.5, 4, read_cap=2)["duplicates"]


@numeric("09.bypass_latency", rel=0.01, unit="ms", hint="core + E[min(R, 20)] = core + m·(1 − e^(−20/m)).")
def bypass_latency() -> float:
    """The reporting service slows to a 50 ms mean (exponential); 30 ms of core steps and a
    20 ms bypass timeout. Mean core-path latency (ms)?"""
    return ft.core_latency_ms(30.0, 50.0, 20.0)


@numeric("09.config_errors", rel=0.01, unit="claims",
         hint="The pool is empty after 100 / 2 s; every claim from then until 15 min fails.")
def config_errors() -> float:
    """Pool 100, daily limit 200, claims at 2/s; the alarm fires at the end of the first 10-min
    cycle and the fix lands 5 min later. Failed claims (fluid)?"""
    return ft.config_errors_fluid(replace(ft.SEED_GIFT_CONFIG, claims_per_s=2.0))["errors"]


@numeric("09.split_any_down", rel=0.01, hint="Nothing is down with probability 0.99⁵; something is down otherwise.")
def split_any_down() -> float:
    """Five isolated stores, each down on a day with probability 1%: share of days with
    something down?"""
    return ft.storage_split(0.6, 5, 0.01)["p_any_down"]
