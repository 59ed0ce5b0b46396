"""Exercises of notebook 03 · Split routing. Expected answers are computed by the package."""

from __future__ import annotations

import math
from dataclasses import replace

from .. import capacity, routing
from ..exercises import Mistake, as_whole, exercise, numeric

#: Exercise 1's layout: clients in three datacentres, servers only in B and C, primary in B. A's
#: clients find no server in their region and fall back to the whole list (the model's assumption).
THREE_DC_LAYOUT = routing.make_layout({"A": 0, "B": 4, "C": 3}, client_dcs=("A", "B", "C"), primary_dc="B")

#: Exercise 2's layout: 12 servers, 8 in B and 4 in C, on the seed's per-region lists.
TWELVE_LAYOUT = routing.make_layout({"B": 8, "C": 4}, primary_dc="B")

#: Exercise 3's peak: +30% instead of the seed's +20%.
PEAK_30 = 1.3

#: The timeout-threshold exercise: the owner in C alone, clients that wait 300 ms.
C_ALONE_TIMEOUT_MS = 300.0


def owners_three_dcs() -> int:
    """Servers that process the hot key when every datacentre routes on its own filterRegion list."""
    return len({s.name for s in routing.owners_by_dc(THREE_DC_LAYOUT).values()})


def _growth_at_peak() -> float:
    """Batches/s by which the two owners' backlog grows at a +30% peak."""
    sc = routing.SEED_INCIDENT
    demand = capacity.batcher_batch_rate(PEAK_30 * sc.rate_per_s, sc.max_rows, sc.max_wait_ms)
    return capacity.queue_growth_rate(demand, 0.0, capacity.alternating_owners_tps(sc.owners_ms))


def _growth_at_seed_peak() -> float:
    """The same at the seed's +20% peak: the answer of someone who kept the printed demand."""
    sc = routing.SEED_INCIDENT
    return capacity.queue_growth_rate(
        routing.demand_batches_per_s(sc, peak=True), 0.0, capacity.alternating_owners_tps(sc.owners_ms)
    )


def _c_ms() -> float:
    return max(routing.SEED_INCIDENT.owners_ms)


@numeric("03.timeout_queue_c", rel=0.02, unit="batches",
         hint="(M − T − N)/N with M = 300 ms, T = 20 ms and N = C's merged-commit time.",
         mistakes=lambda: [Mistake(capacity.critical_queue_length(C_ALONE_TIMEOUT_MS, _c_ms()), rel=0.01, message=(
             "That is the seed's M/N. The request also waits up to T in the batcher and then for its own "
             "commit: (M − T − N)/N."))])  # fmt: skip
def timeout_queue_c() -> float:
    """Batches ahead of a request on C's lone owner at which a 300 ms client starts timing out."""
    return capacity.timeout_queue_length(C_ALONE_TIMEOUT_MS, _c_ms(), routing.SEED_INCIDENT.max_wait_ms)


def _threshold_two_owners() -> float:
    sc = routing.SEED_INCIDENT
    return capacity.timeout_queue_length(sc.timeout_ms, sum(sc.owners_ms) / len(sc.owners_ms), sc.max_wait_ms)


def _backlog_seconds_seed_peak() -> float:
    return _threshold_two_owners() / _growth_at_seed_peak()


def backlog_seconds_seed_rule() -> float:
    """The same with the seed's M/N: the answer of someone who leaves out T and the request's own N."""
    sc = routing.SEED_INCIDENT
    mean_batch_ms = sum(sc.owners_ms) / len(sc.owners_ms)
    return capacity.critical_queue_length(sc.timeout_ms, mean_batch_ms) / _growth_at_peak()


@numeric("03.remap_region_list", rel=0.02, unit="of keys",
         hint="B's clients hash over B's list only: how many servers are on it before and after?",
         mistakes=lambda: [
             Mistake(routing.remap_fraction_closed(TWELVE_LAYOUT.count("B") + TWELVE_LAYOUT.count("C"), "modulo"),
                     rel=0.0, abs=1e-3, message=(
                         "That would hold for one global list of all 12. B's clients route on B's list.")),
             Mistake(routing.remap_fraction_closed(TWELVE_LAYOUT.count("B"), "consistent"), rel=0.0, abs=1e-3,
                     message="That is what consistent or rendezvous hashing would move; modulo moves far more."),
         ])  # fmt: skip
def remap_region_list() -> float:
    """12 servers on per-region lists (8 in B, 4 in C), modulo; one B server leaves: the share of
    keys whose owner changes for B's clients."""
    return routing.remap_fraction_closed(TWELVE_LAYOUT.count("B"), "modulo")


@numeric("03.remap_modulo_12", rel=0.02, unit="of keys",
         hint=("The last server leaves, so server i < 11 keeps index i; a key stays only if h mod 12 = h mod 11 = i. "
               "The pair (h mod 12, h mod 11) repeats every 132 values of h: count the values that keep their owner."),
         mistakes=lambda: [Mistake(routing.remap_fraction_closed(12, "consistent"), rel=0.0, abs=1e-3, message=(
             "1/12 is only the leaving server's keys, what consistent or rendezvous hashing would move. With modulo "
             "the divisor changes from 12 to 11, so a key at index i keeps its owner only if h mod 11 is i too."))])  # fmt: skip
def remap_modulo_12() -> float:
    """Share of keys that move when 12 servers on one list become 11 under modulo placement (the last
    server leaves; by the coprimality of 12 and 11 the share is the same whichever server leaves)."""
    return routing.remap_fraction_closed(12, "modulo")


def peak30_batch_rates() -> tuple[float, float]:
    """Batches/s at the +30% peak: exact (``capacity.batcher_batch_rate``) and the text's
    approximation 1/(1/λ + T), which counts every batch as open for the full timer."""
    sc = routing.SEED_INCIDENT
    lam = PEAK_30 * sc.rate_per_s
    return capacity.batcher_batch_rate(lam, sc.max_rows, sc.max_wait_ms), 1.0 / (1.0 / lam + sc.max_wait_ms / 1000)


def _backlog_seconds_approx_rate() -> float:
    """The answer of someone who used r ≈ 1/(1/λ + T) for the +30% demand."""
    sc = routing.SEED_INCIDENT
    growth = capacity.queue_growth_rate(peak30_batch_rates()[1], 0.0, capacity.alternating_owners_tps(sc.owners_ms))
    return _threshold_two_owners() / growth


def _backlog_seconds_rounded_capacity() -> float:
    """The answer of someone who took the seed's rounded 46 TPS as the capacity."""
    capacity_46 = float(math.floor(capacity.alternating_owners_tps(routing.SEED_INCIDENT.owners_ms)))
    return _threshold_two_owners() / (peak30_batch_rates()[0] - capacity_46)


@numeric("03.backlog_seconds", rel=0.05, unit="s",
         hint=("Threshold (M − T − N)/N with N the mean batch time, divided by demand − capacity in batches/s. "
               "Use the exact +30% rate printed under the question, to two decimals: demand − capacity is a small "
               "difference of two nearly equal rates, so an error that is small on r (such as the approximation "
               "1/(1/λ + T)) is large on the difference and on the answer."),
         mistakes=lambda: [
             Mistake(backlog_seconds_seed_rule(), rel=0.03, message=(
                 "That is the seed's M/N. A request also waits up to T in the batcher and then for its own "
                 "commit: use (M − T − N)/N.")),
             Mistake(_backlog_seconds_seed_peak(), rel=0.03, message=(
                 "That is the +20% peak printed above. At +30% the batcher makes more batches: "
                 "use r(1.3 λ), printed under the question.")),
             Mistake(_backlog_seconds_approx_rate(), rel=0.05, message=(
                 "That uses r ≈ 1/(1/λ + T). At +30% more batches fill their 20 rows before the timer, so the "
                 "approximation undercounts r, and the answer divides by demand − capacity, a small difference "
                 "that the error swamps. Use the exact rate printed under the question.")),
             Mistake(_backlog_seconds_rounded_capacity(), rel=0.05, message=(
                 "That takes the seed's rounded 46 TPS as the capacity. The answer divides by a small difference, "
                 "so keep 1000/N̄ unrounded.")),
         ])  # fmt: skip
def backlog_seconds() -> float:
    """Seconds for the two-owner backlog to reach (M − T − N̄)/N̄ at a +30% peak."""
    sc = routing.SEED_INCIDENT
    mean_batch_ms = sum(sc.owners_ms) / len(sc.owners_ms)
    return capacity.timeout_queue_length(sc.timeout_ms, mean_batch_ms, sc.max_wait_ms) / _growth_at_peak()


@numeric("03.per_owner_critical_rate", rel=0.02, unit="requests/s",
         hint="Solve r(0.9λ)·16 + r(0.1λ)·27 = 1000 for λ (r = capacity.batcher_batch_rate), e.g. by bisection.",
         mistakes=lambda: [Mistake(routing.critical_rate_per_s(routing.SEED_INCIDENT), rel=0.03, message=(
             "That is the shared batcher's edge. Per owner, each region's stream has its own batcher: "
             "r(0.9λ)·16 + r(0.1λ)·27 = 1000."))])  # fmt: skip
def per_owner_critical_rate() -> float:
    """Per-owner batchers, 10% of users in C: the load where the lock's utilisation reaches 1."""
    return routing.critical_rate_per_s(replace(routing.PER_OWNER, split=(0.9, 0.1)))


def _c_alone_tps() -> float:
    return routing.hot_key_tps([routing.SEED_LAYOUT.by_name("c1")])


@numeric("03.global_c_owner_timeout_s", rel=0.05, unit="s",
         hint="Threshold (M − T − N)/N with N = 27 ms, divided by normal demand − 1000/27 batches/s.",
         mistakes=lambda: [Mistake(_c_alone_tps(), rel=0.02, message=(
             "That is the owner's capacity in merged commits/s; the question asks for seconds until timeouts."))])  # fmt: skip
def global_c_owner_timeout_s() -> float:
    """Global list, the hot key's single owner in C: seconds at normal load until requests time out."""
    sc = routing.SEED_INCIDENT
    c_ms = max(sc.owners_ms)
    growth = capacity.queue_growth_rate(routing.demand_batches_per_s(sc, peak=False), 0.0, _c_alone_tps())
    return capacity.timeout_queue_length(sc.timeout_ms, c_ms, sc.max_wait_ms) / growth


@exercise("03.owners_three_dcs")
def _owners_three_dcs(answer):
    expected = owners_three_dcs()
    a, why = as_whole(answer, "servers")  # int(2.7) would quietly accept 2.7 as 2
    if a is None:
        return False, why
    if a == expected:
        return True, (f"{a}: B's and C's lists each pick their own owner, and A's clients, hashing over "
                      "the whole list, pick a third.")
    if a == 1:
        return False, "1 would need every client to route on the same list. Which list does a client in A use?"
    return False, (f"{a} is not it. B's and C's clients route on their own lists; A's fall back to the whole "
                   "list. Route the key for each and count the distinct servers.")
