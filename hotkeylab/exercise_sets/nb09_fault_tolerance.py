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


@numeric("09.failover_timeout", rel=0.01, unit="ms",
         hint="mean = (1 − f)·S + f·(T + S) = S + f·T; solve S + f·T = 60 ms for T.")
def failover_timeout() -> float:
    """Primary/backup, 50 ms service; the primary is unreachable 2% of the time and every
    failover waits the connect timeout first. Longest connect timeout that keeps the mean
    latency over all requests at or below 60 ms, ignoring queueing?"""
    service, share, target = 50.0, 0.02, 60.0
    return (target - ft.mean_latency_ms(service, 0.0, share)) / share  # mean_latency_ms is linear in T


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


@numeric("09.config_errors_quiet", rel=0.01, unit="claims",
         hint="The pool lasts 100 / 0.15 s, past the first cycle; the first cycle with more than 10% "
         "errors alarms; errors run from the empty pool to the fix, 5 min after that alarm.")  # fmt: skip
def config_errors_quiet() -> float:
    """Pool 100, daily limit 200, a quiet gift with claims at 0.15/s; the alarm fires at the end of
    the first 10-min cycle whose success rate is below 90% and the fix lands 5 min later. Failed
    claims (fluid)?"""
    return ft.config_errors_fluid(replace(ft.SEED_GIFT_CONFIG, claims_per_s=0.15))["errors"]


@numeric("09.split_any_down", rel=0.01, hint="Nothing is down with probability 0.99⁵; something is down otherwise.")
def split_any_down() -> float:
    """Five isolated stores, each down on a day with probability 1%: share of days with
    something down?"""
    return ft.storage_split(0.6, 5, 0.01)["p_any_down"]


@numeric("09.split_two_down", rel=0.01, unit="days a year",
         hint="P(two or more of 5 down) = 1 − 0.99⁵ − 5 × 0.01 × 0.99⁴, times 365.")
def split_two_down() -> float:
    """Five isolated stores, each down on a day with probability 1%, independently: days a year
    on which two or more stores are down at once (at least 40% of the data)?"""
    k, p = 5, 0.01
    none_or_one = (1 - p) ** k + k * p * (1 - p) ** (k - 1)  # binomial: no store or exactly one down
    return 365 * (1 - none_or_one)
