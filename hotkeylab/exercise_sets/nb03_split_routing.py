"""Exercises of notebook 03 · Split routing. Expected answers are computed by the package."""

from __future__ import annotations

from dataclasses import replace

from .. import capacity, routing
from ..exercises import as_number, close_to, exercise

#: Exercise 1's layout: servers in three datacentres, clients in all three, primary in B.
THREE_DC_LAYOUT = routing.make_layout({"A": 2, "B": 4, "C": 3}, primary_dc="B")


def owners_three_dcs() -> int:
    """Servers that process the hot key when every datacentre routes on its own filterRegion list."""
    return len({s.name for s in routing.owners_by_dc(THREE_DC_LAYOUT).values()})


def backlog_seconds() -> float:
    """Seconds for the two-owner backlog to reach the timeout threshold (M − T − N̄)/N̄ at the peak."""
    sc = routing.SEED_INCIDENT
    mean_batch_ms = sum(sc.owners_ms) / len(sc.owners_ms)
    growth = capacity.queue_growth_rate(
        routing.demand_batches_per_s(sc, peak=True), 0.0, capacity.alternating_owners_tps(sc.owners_ms)
    )
    return capacity.timeout_queue_length(sc.timeout_ms, mean_batch_ms, sc.max_wait_ms) / growth


def backlog_seconds_seed_rule() -> float:
    """The same with the seed's M/N: the answer of someone who leaves out T and the request's own N."""
    sc = routing.SEED_INCIDENT
    mean_batch_ms = sum(sc.owners_ms) / len(sc.owners_ms)
    growth = capacity.queue_growth_rate(
        routing.demand_batches_per_s(sc, peak=True), 0.0, capacity.alternating_owners_tps(sc.owners_ms)
    )
    return capacity.critical_queue_length(sc.timeout_ms, mean_batch_ms) / growth


def per_owner_critical_rate() -> float:
    """Per-owner batchers, 10% of users in C: the load where the lock's utilisation reaches 1."""
    return routing.critical_rate_per_s(replace(routing.PER_OWNER, split=(0.9, 0.1)))


@exercise("03.owners_three_dcs")
def _owners_three_dcs(answer):
    expected = owners_three_dcs()
    a = as_number(answer)
    if a is None or not a.is_integer():  # int(2.7) would quietly accept 2.7 as 2
        return False, f"expected a whole number of servers, got {answer!r}"
    a = int(a)
    if a == expected:
        return True, (f"{a}: one owner per datacentre that has servers — each filterRegion list "
                      "picks its own.")
    if a == 1:
        return False, "1 would need every client to route on the same list. Which list does a client in A use?"
    return False, f"{a} is not it. Count the datacentres that have both clients and servers."


@exercise("03.remap_modulo_12")
def _remap_modulo_12(answer):
    expected = routing.remap_fraction_closed(12, "modulo")
    if isinstance(answer, (int, float)) and abs(float(answer) - routing.remap_fraction_closed(12, "consistent")) < 1e-3:
        return False, "1/12 is what consistent or rendezvous hashing would move; modulo moves far more."
    return close_to(answer, expected, rel=0.02, unit="of keys",
                    hint="A key stays only if h mod 12 and h mod 11 name the same server.")


@exercise("03.backlog_seconds")
def _backlog_seconds(answer):
    a = as_number(answer)
    if a is not None and abs(a - backlog_seconds_seed_rule()) < 0.03 * backlog_seconds_seed_rule():
        return False, ("That is the seed's M/N. A request also waits up to T in the batcher and then for its own "
                       "commit: use (M − T − N)/N.")
    return close_to(answer, backlog_seconds(), rel=0.05, unit="s",
                    hint="Threshold (M − T − N)/N with N the mean batch time, divided by demand − capacity in batches/s.")


@exercise("03.per_owner_critical_rate")
def _per_owner_critical_rate(answer):
    a = as_number(answer)
    shared = routing.critical_rate_per_s(routing.SEED_INCIDENT)
    if a is not None and abs(a - shared) < 0.03 * shared:
        return False, ("That is the shared batcher's edge. Per owner, each region's stream has its own batcher: "
                       "r(0.9λ)·16 + r(0.1λ)·27 = 1000.")
    return close_to(answer, per_owner_critical_rate(), rel=0.02, unit="requests/s",
                    hint="Solve r(0.9λ)·16 + r(0.1λ)·27 = 1000 for λ (r = capacity.batcher_batch_rate), e.g. by bisection.")


def global_c_owner_timeout_s() -> float:
    """Global list, the hot key's single owner in C: seconds at normal load until requests time out."""
    sc = routing.SEED_INCIDENT
    c_ms = max(sc.owners_ms)
    alone = routing.hot_key_tps([routing.SEED_LAYOUT.by_name("c1")])
    growth = capacity.queue_growth_rate(routing.demand_batches_per_s(sc, peak=False), 0.0, alone)
    return capacity.timeout_queue_length(sc.timeout_ms, c_ms, sc.max_wait_ms) / growth


@exercise("03.global_c_owner_timeout_s")
def _global_c_owner_timeout_s(answer):
    a = as_number(answer)
    alone = routing.hot_key_tps([routing.SEED_LAYOUT.by_name("c1")])
    if a is not None and abs(a - alone) < 0.02 * alone:
        return False, "That is the owner's capacity in merged commits/s; the question asks for seconds until timeouts."
    return close_to(answer, global_c_owner_timeout_s(), rel=0.05, unit="s",
                    hint="Threshold (M − T − N)/N with N = 27 ms, divided by normal demand − 1000/27 batches/s.")
