"""Tests of hotkeylab.routing (notebook 03 · split routing)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hotkeylab import capacity, routing  # noqa: E402
from hotkeylab.exercises import check  # noqa: E402
from hotkeylab.routing import SEED_INCIDENT, SEED_LAYOUT, SEED_TRANSIENT  # noqa: E402

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KEYS = [f"account:{i}" for i in range(1000)]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# --------------------------------------------------------------------------- layouts for hypothesis
@st.composite
def layouts(draw):
    n_dc = draw(st.integers(1, 4))
    dcs = ["A", "B", "C", "D"][:n_dc]
    counts = {dc: draw(st.integers(0, 6)) for dc in dcs}
    if sum(counts.values()) == 0:
        counts[dcs[0]] = 1
    clients = draw(st.lists(st.sampled_from(dcs), min_size=1, max_size=n_dc, unique=True))
    primary = draw(st.sampled_from(dcs))
    return routing.make_layout(counts, client_dcs=clients, primary_dc=primary)


key_text = st.text(min_size=0, max_size=20)


# --------------------------------------------------------------------------- 1. routing
def test_stable_hash_is_the_same_in_another_process_with_another_hash_salt():
    code = ("from hotkeylab import routing as r; "
            "print(r.stable_hash('account:123'), {k: v.name for k, v in r.owners_by_dc(r.SEED_LAYOUT).items()})")
    outs = set()
    for salt in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": salt}
        outs.add(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                check=True).stdout)
    here = f"{routing.stable_hash('account:123')} {{'B': 'b2', 'C': 'c2'}}\n"
    assert outs == {here}


def test_server_list_is_sorted_by_ip_numerically():
    servers = [routing.Server("x", "10.0.0.100", "A"), routing.Server("y", "10.0.0.9", "A")]
    assert [s.ip for s in routing.sort_by_ip(servers)] == ["10.0.0.9", "10.0.0.100"]
    lay = routing.Layout(tuple(servers), ("A",), "A", ("A",))
    assert routing.server_list(lay, "A")[0].name == "y"


def test_seed_layout_gives_the_hot_key_one_owner_per_datacentre():
    owners = routing.owners_by_dc(SEED_LAYOUT)
    assert owners["B"].dc == "B" and owners["C"].dc == "C"
    assert np.all(routing.owner_counts(SEED_LAYOUT, KEYS, "region") == 2)
    for scheme in routing.SCHEMES:
        assert np.all(routing.owner_counts(SEED_LAYOUT, KEYS, "global", scheme) == 1)
        assert np.all(routing.owner_counts(SEED_LAYOUT, KEYS, "primary", scheme) == 1)


@FAST
@given(layouts(), st.lists(key_text, min_size=1, max_size=8), st.sampled_from(routing.SCHEMES))
def test_global_list_gives_exactly_one_owner_per_key(layout, keys, scheme):
    assert np.all(routing.owner_counts(layout, keys, "global", scheme) == 1)
    assert np.all(routing.owner_counts(layout, keys, "primary", scheme) == 1)


@FAST
@given(layouts(), key_text, st.sampled_from(routing.SCHEMES))
def test_region_lists_give_one_owner_per_region_that_has_servers(layout, key, scheme):
    owners = routing.owners_by_dc(layout, key, "region", scheme)
    with_servers = [dc for dc in layout.client_dcs if layout.count(dc) > 0]
    for dc in with_servers:
        assert owners[dc].dc == dc  # a region's owner is in that region
    assert len({owners[dc].name for dc in with_servers}) == len(with_servers)
    total = len({s.name for s in owners.values()})
    assert len(with_servers) <= total <= len(with_servers) + 1  # + the fallback list's owner
    assert routing.owner_counts(layout, [key], "region", scheme)[0] == total


def test_isolating_cs_owner_moves_the_key_to_another_c_server():
    lay = SEED_LAYOUT
    for _ in range(SEED_LAYOUT.count("C") - 1):
        before = routing.owners_by_dc(lay)["C"]
        lay, iso = routing.isolate_owner(lay, rounds=1)
        assert iso == [before]
        after = routing.owners_by_dc(lay)
        assert after["C"].dc == "C" and after["C"] != before and after["B"].dc == "B"
    lay, _ = routing.isolate_owner(lay, rounds=1)  # the last C server goes: C falls back to B's list
    owners = routing.owners_by_dc(lay)
    assert lay.count("C") == 0 and owners["B"] == owners["C"]


def test_deployment_check_flags_servers_outside_the_primary_datacentre():
    flagged = routing.deployment_check(SEED_LAYOUT)
    assert {s.name for s in flagged} == {"c1", "c2", "c3"}
    clean = SEED_LAYOUT.without(s.name for s in flagged)
    assert routing.deployment_check(clean) == ()
    assert np.all(routing.owner_counts(clean, KEYS, "region") == 1)


def test_hot_key_tps_uses_alternating_owners():
    b, c = SEED_LAYOUT.by_name("b1"), SEED_LAYOUT.by_name("c1")
    assert routing.hot_key_tps([b, c]) == pytest.approx(capacity.alternating_owners_tps([16, 27]))
    assert routing.hot_key_tps([b, b]) == pytest.approx(62.5)
    assert routing.hot_key_tps([c]) == pytest.approx(1000 / 27)


# --------------------------------------------------------------------------- 2. remapping
@pytest.mark.parametrize("scheme", routing.SCHEMES)
@pytest.mark.parametrize("n", [2, 3, 5, 7, 10])
def test_remap_fraction_matches_closed_form(n, scheme):
    # 20 000 keys: binomial standard error <= 0.0036; tolerance 0.02 absolute
    assert routing.remap_fraction(n, scheme) == pytest.approx(routing.remap_fraction_closed(n, scheme), abs=0.02)


@FAST
@given(st.integers(2, 12), st.integers(0, 1000))
def test_remap_fraction_closed_form_over_random_key_samples(n, seed):
    # 4 000 keys: standard error <= 0.008; tolerance 0.04 absolute (5 standard errors)
    got = routing.remap_fraction(n, "modulo", n_keys=4000, seed=seed)
    assert got == pytest.approx((n - 1) / n, abs=0.04)
    for scheme in ("consistent", "rendezvous"):  # averaged over who leaves: exactly 1/n
        assert routing.remap_fraction(n, scheme, n_keys=500, seed=seed) == pytest.approx(1 / n, abs=1e-12)


@FAST
@given(st.integers(2, 9), st.sampled_from(["consistent", "rendezvous"]), st.data())
def test_consistent_and_rendezvous_move_only_the_leaving_servers_keys(n, scheme, data):
    leaving = data.draw(st.integers(0, n - 1))
    servers = routing.make_layout({"A": n}).servers
    h = routing.key_hashes(f"k{i}" for i in range(300))
    before = routing.owner_indices(h, servers, scheme)
    after = routing.owner_indices(h, servers[:leaving] + servers[leaving + 1 :], scheme)
    after = after + (after >= leaving)
    moved = after != before
    assert np.all(before[moved] == leaving)
    assert np.all(moved[before == leaving])


# --------------------------------------------------------------------------- 3. transient dual ownership
@pytest.mark.parametrize("scheme", routing.SCHEMES)
def test_transient_share_matches_closed_form(scheme):
    # rare changes (λ·P = 1/60): tolerance 10%, using the run's own number of changes
    sc = replace(SEED_TRANSIENT, scheme=scheme, poll_ms=1000.0, horizon_ms=24 * 3_600_000.0)
    run = routing.simulate_transient(sc, seed=3)
    rate = run.n_changes / (sc.horizon_ms / 60_000.0)
    closed = routing.dual_owner_share_closed(sc.poll_ms, rate, sc.n_clients, sc.n_servers, scheme)
    assert run.share_key_time == pytest.approx(closed, rel=0.10)
    run.ledger.check()


def test_transient_no_delay_or_no_change_means_one_owner():
    for sc in (replace(SEED_TRANSIENT, poll_ms=0.0), replace(SEED_TRANSIENT, changes_per_min=0.0)):
        run = routing.simulate_transient(sc, seed=1)
        assert run.share_key_time == 0.0 and run.share_time_any == 0.0
        run.ledger.check()


@FAST
@given(
    poll_ms=st.floats(0, 30_000),
    changes=st.floats(0, 600),
    n_clients=st.integers(1, 30),
    n_servers=st.integers(2, 9),
    scheme=st.sampled_from(routing.SCHEMES),
    max_events=st.integers(1, 3000),
    seed=st.integers(0, 10_000),
)
@example(poll_ms=9.6e-252, changes=1.75, n_clients=1, n_servers=2, scheme="modulo", max_events=11, seed=0)
@example(poll_ms=2.225073858507e-311, changes=1.0, n_clients=1, n_servers=2, scheme="modulo", max_events=5, seed=0)
def test_transient_ledger_balances_and_run_is_bounded(poll_ms, changes, n_clients, n_servers, scheme,
                                                      max_events, seed):
    sc = routing.TransientScenario(n_servers=n_servers, n_clients=n_clients, n_keys=50, poll_ms=poll_ms,
                                   changes_per_min=changes, scheme=scheme, horizon_ms=120_000.0,
                                   window_ms=10_000.0, max_events=max_events)
    run = routing.simulate_transient(sc, seed=seed)
    run.ledger.check()
    assert run.status.events <= max_events
    assert 0.0 <= run.share_key_time <= run.share_time_any <= 1.0
    assert np.all((run.windows["multi_keys"] >= 0) & (run.windows["multi_keys"] <= 1 + 1e-9))


# --------------------------------------------------------------------------- 4. owners sharing the lock
SATURATED = replace(SEED_INCIDENT, rate_per_s=3000.0, peak_factor=1.0, horizon_ms=20_000.0)


@pytest.mark.parametrize("owners_ms", [(16.0, 27.0), (16.0,), (27.0,), (16.0, 16.0, 27.0)])
def test_shared_lock_throughput_matches_alternating_owners_tps(owners_ms):
    names = tuple(f"o{i}" for i in range(len(owners_ms)))
    run = routing.simulate_lock(replace(SATURATED, owners_ms=owners_ms, owner_names=names), seed=0)
    # saturated owners take turns: measured commits/s within 1% of 1000 / mean(batch_ms)
    assert run.rate_per_s("commits", 2, 20) == pytest.approx(capacity.alternating_owners_tps(owners_ms), rel=0.01)
    run.ledger.check()


def test_owners_alternate_on_the_lock_when_both_are_busy():
    run = routing.simulate_lock(SATURATED, seed=0)
    holders = [o for o, s, _ in run.intervals if s > 1000.0][:40]
    assert all(a != b for a, b in zip(holders, holders[1:], strict=False))
    assert {o for o, *_ in run.intervals} == {"B owner", "C owner"}


@pytest.mark.parametrize("rate", [600.0, 720.0])
def test_batch_rate_matches_batcher_closed_form(rate):
    sc = replace(SEED_INCIDENT, rate_per_s=rate, peak_factor=1.0, horizon_ms=60_000.0, owners_ms=(16.0,),
                 owner_names=("B owner",))
    run = routing.simulate_lock(sc, seed=2)
    # ~2 800 batches with a near-regular timer: tolerance 3%
    assert run.rate_per_s("batches", 1, 60) == pytest.approx(capacity.batcher_batch_rate(rate), rel=0.03)


def test_peak_one_owner_keeps_up_two_owners_build_a_backlog():
    one = routing.simulate_lock(routing.ONE_OWNER, seed=0)
    two = routing.simulate_lock(SEED_INCIDENT, seed=0)
    peak = routing.demand_batches_per_s(SEED_INCIDENT, peak=True)
    assert capacity.alternating_owners_tps([16, 27]) < peak < capacity.alternating_owners_tps([16])
    assert one.windows["queue"].max() < 2.0 and one.ledger.timed_out == 0
    growth = capacity.queue_growth_rate(peak, 0.0, capacity.alternating_owners_tps([16, 27]))
    t, q = two.windows["t"], two.windows["queue"]
    m = t >= 60
    slope = np.polyfit(t[m], q[m], 1)[0]
    # queue slope during the peak within 30% of demand − capacity (about 1 batch/s)
    assert slope == pytest.approx(growth, rel=0.30)
    assert two.queue_end > 40 and two.ledger.timed_out > two.ledger.served
    for r in (one, two):
        r.ledger.check()


@FAST
@given(
    rate=st.floats(1.0, 5000.0),
    peak=st.floats(0.1, 5.0),
    owners=st.lists(st.floats(0.5, 60.0), min_size=1, max_size=3),
    max_rows=st.integers(1, 40),
    max_wait=st.floats(0.0, 50.0),
    timeout=st.floats(1.0, 1000.0),
    max_events=st.integers(1, 20_000),
    seed=st.integers(0, 10_000),
)
@example(rate=1.0, peak=1.0, owners=[1.0], max_rows=1, max_wait=0.0, timeout=1.0, max_events=7, seed=0)
def test_lock_ledger_balances_and_run_is_bounded(rate, peak, owners, max_rows, max_wait, timeout, max_events, seed):
    sc = routing.LockScenario(rate_per_s=rate, peak_factor=peak, peak_start_ms=1000.0, owners_ms=tuple(owners),
                              owner_names=tuple(f"o{i}" for i in range(len(owners))), max_rows=max_rows,
                              max_wait_ms=max_wait, timeout_ms=timeout, horizon_ms=3000.0, window_ms=500.0,
                              max_events=max_events)
    run = routing.simulate_lock(sc, seed=seed)
    run.ledger.check()
    assert run.status.events <= max_events
    assert run.queue_end >= 0 and np.all(run.windows["queue"] >= -1e-9)


# --------------------------------------------------------------------------- 4b. batcher models
def _same_run(a, b):
    assert a.ledger.as_dict() == b.ledger.as_dict()
    assert all(np.array_equal(a.windows[k], b.windows[k]) for k in a.windows)
    assert a.intervals == b.intervals and a.queue_end == b.queue_end


@pytest.mark.parametrize("sc", [
    replace(SEED_INCIDENT, horizon_ms=20_000.0, peak_start_ms=10_000.0),
    replace(routing.ONE_OWNER, horizon_ms=20_000.0),
    replace(routing.PER_OWNER, horizon_ms=15_000.0, split=(0.9, 0.1)),
    replace(routing.PER_OWNER, horizon_ms=8_000.0, rate_per_s=3000.0, split=(0.99, 0.01)),
    replace(routing.PER_OWNER, horizon_ms=8_000.0, rate_per_s=300.0, split=(0.0, 1.0)),
    replace(SEED_INCIDENT, horizon_ms=3000.0, peak_start_ms=0.0, max_rows=1, max_wait_ms=0.0),
    replace(SEED_INCIDENT, horizon_ms=3000.0, peak_start_ms=1500.0, max_wait_ms=0.0, owners_ms=(16.0, 16.0, 27.0),
            owner_names=("a", "b", "c")),
], ids=["shared", "one", "per_owner_10", "per_owner_sat", "per_owner_c_only", "rows1", "three_owners"])
def test_fast_engine_gives_the_simpy_run(sc):
    _same_run(routing.simulate_lock(sc, seed=5), routing.simulate_lock(sc, seed=5, engine="fast"))


def test_per_owner_with_every_user_in_one_region_is_that_owner_alone():
    for split, alone in [((1.0, 0.0), routing.ONE_OWNER),
                         ((0.0, 1.0), replace(SEED_INCIDENT, owners_ms=(27.0,), owner_names=("C owner",)))]:
        sc = replace(routing.PER_OWNER, split=split, horizon_ms=40_000.0)
        ref = replace(alone, horizon_ms=40_000.0)
        for engine in ("simpy", "fast"):
            _same_run(routing.simulate_lock(sc, seed=2, engine=engine), routing.simulate_lock(ref, seed=2, engine=engine))
        assert routing.lock_utilisation(sc, 600.0) == pytest.approx(routing.lock_utilisation(ref, 600.0))
        assert routing.critical_rate_per_s(sc) == pytest.approx(routing.critical_rate_per_s(ref), rel=1e-9)


def test_shared_batcher_closed_forms_are_the_seeds_arithmetic():
    sc = SEED_INCIDENT
    # one batcher dealing in turn: ρ = r(λ) · mean(N) / 1000, the edge where r(λ) = 1000 / 21.5
    assert routing.lock_utilisation(sc, 600.0) == pytest.approx(capacity.batcher_batch_rate(600.0) * 21.5 / 1000)
    star = routing.critical_rate_per_s(sc)
    assert capacity.batcher_batch_rate(star) == pytest.approx(capacity.alternating_owners_tps([16, 27]), rel=1e-6)
    lo, hi = routing.seed_band(sc)
    assert lo == pytest.approx(hi / 1.2) and lo < sc.rate_per_s < hi
    assert routing.timeout_queue(sc) == pytest.approx(capacity.timeout_queue_length(200, 21.5, 20))
    # the variability band sits inside the fluid one (waits time out before the lock falls behind)
    vlo, vhi = routing.seed_band(sc, variability=True)
    assert vhi < hi and vlo < lo


def test_per_owner_utilisation_is_the_sum_over_owners_and_grows_with_cs_share():
    rhos = []
    for c in (0.0, 0.01, 0.1, 0.3, 0.5):
        sc = replace(routing.PER_OWNER, split=(1 - c, c))
        r = routing.owner_batch_rates(sc, 600.0)
        assert r[0] == pytest.approx(capacity.batcher_batch_rate((1 - c) * 600.0))
        assert r[1] == pytest.approx(capacity.batcher_batch_rate(c * 600.0))
        rhos.append(routing.lock_utilisation(sc, 600.0))
    assert all(a < b for a, b in zip(rhos, rhos[1:], strict=False))
    lo, hi = routing.split_band(routing.PER_OWNER, 600.0)
    for c, inside in [(lo * 0.9, False), ((lo + hi) / 2, True), (hi * 1.1, False)]:
        sc = replace(routing.PER_OWNER, split=(1 - c, c))
        assert (routing.lock_utilisation(sc, 600.0) < 1 <= routing.lock_utilisation(sc, 720.0)) == inside


@pytest.mark.parametrize("split, rate", [((0.5, 0.5), 3000.0), ((0.99, 0.01), 2000.0), ((0.9, 0.1), 3000.0),
                                         ((1.0, 0.0), 3000.0)])
def test_region_split_lock_throughput_matches_closed_form(split, rate):
    sc = replace(routing.PER_OWNER, split=split, rate_per_s=rate, peak_factor=1.0, horizon_ms=60_000.0)
    run = routing.simulate_lock(sc, seed=1, engine="fast")
    closed = routing.lock_throughput_closed(routing.owner_batch_rates(sc, rate), sc.owners_ms)
    # saturated lock: measured merged commits/s within 1.5% of the water-filling total
    assert run.rate_per_s("commits", 5, 60) == pytest.approx(closed.sum(), rel=0.015)
    # each owner within 5% of its share (an unsaturated owner's own batch stream varies by a few %)
    per_owner = [sum(1 for o, s, _ in run.intervals if o == name and s >= 5000.0) / 55.0 for name in sc.owner_names]
    assert per_owner == pytest.approx(list(closed), rel=0.05, abs=0.3)
    # and the lock is never idle: Σ commits × N fills the time
    assert np.dot(per_owner, sc.owners_ms) == pytest.approx(1000.0, rel=0.01)


def test_lock_throughput_closed_properties():
    assert routing.lock_throughput_closed([100, 100], [16, 27]) == pytest.approx([1000 / 43] * 2)
    assert routing.lock_throughput_closed([10, 10], [16, 27]) == pytest.approx([10, 10])  # fits: all served
    x = routing.lock_throughput_closed([200, 5], [16, 27])
    assert x[1] == pytest.approx(5) and x[0] == pytest.approx((1000 - 5 * 27) / 16)
    assert np.dot(x, [16, 27]) == pytest.approx(1000)


HALF = replace(routing.PER_OWNER, split=(0.5, 0.5))


@pytest.mark.parametrize("sc, lam, expect", [
    (SEED_INCIDENT, 560.0, "both"),      # inside both closed-form bands (fluid 519–623, variability 510–613)
    (SEED_INCIDENT, 720.0, "not dormant"),  # ρ = 1.02 at normal load
    (SEED_INCIDENT, 400.0, "not tipped"),   # the peak, 480/s, fits with room
    (HALF, 40.0, "not tipped"),          # half-half per-owner: the peak, 48/s, is below both bands
    (HALF, 110.0, "not dormant"),        # above the fluid edge (87/s)
], ids=["shared_inside", "shared_above", "shared_below", "half_below", "half_above"])
def test_band_verdicts_far_from_the_edges_agree_with_the_closed_form(sc, lam, expect):
    lo, hi = routing.seed_band(sc, variability=True)
    flo, fhi = routing.seed_band(sc)
    where = {"both": max(lo, flo) < lam < min(hi, fhi), "not dormant": lam > 1.1 * fhi,
             "not tipped": 1.2 * lam < 0.95 * min(hi, fhi)}
    assert where[expect]  # the load is where the closed forms say
    v = routing.band_verdicts(sc, [lam], seeds=10, duration_s=30.0)[0]  # 10 seeds of 30 s
    if expect == "both":
        assert v.both == v.n
    elif expect == "not dormant":
        assert v.dormant == 0
    else:
        assert v.tipped == 0 and v.dormant == v.n


# --------------------------------------------------------------------------- the actors
def test_actors_are_module_level_process_functions_not_closures():
    import ast
    import inspect

    for simulate in (routing.simulate_lock, routing.simulate_transient):
        fn = ast.parse(inspect.getsource(simulate)).body[0]
        nested = [n.name for n in ast.walk(fn) if isinstance(n, ast.FunctionDef) and n is not fn]
        assert nested == [], f"{simulate.__name__} hides {nested}"
    for actor in (routing.users, routing.batcher, routing.owner, routing.registry, routing.client):
        assert inspect.isgeneratorfunction(actor)
        assert len(inspect.getsource(actor).splitlines()) <= 50  # one screen


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: routing.Layout((), ("B",), "B", ("B",)), "servers"),
        (lambda: routing.owner_indices(np.array([1], dtype=np.uint64), []), "servers"),
        (lambda: routing.owner_counts(SEED_LAYOUT, []), "keys"),
        (lambda: routing.server_list(SEED_LAYOUT, "D"), "client_dc"),
        (lambda: routing.make_layout({"B": 1}, client_dcs=("Z",)), "client_dc"),
        (lambda: routing.make_layout({"B": 1}, primary_dc="Z"), "primary_dc"),
        (lambda: routing.make_layout({"B": 0, "C": 0}), "servers"),
        (lambda: routing.make_layout({}), "counts"),
        (lambda: routing.route("k", SEED_LAYOUT.servers, scheme="md5"), "scheme"),
        (lambda: routing.server_list(SEED_LAYOUT, "B", routing="anycast"), "routing"),
        (lambda: routing.Server("x", "not-an-ip", "B"), "ip"),
        (lambda: SEED_LAYOUT.without(["z9"]), "name"),
        (lambda: routing.remap_fraction_closed(1), "n_servers"),
        (lambda: routing.dual_owner_share_closed(-5.0, 1.0, 20, 7), "poll_ms"),
        (lambda: routing.simulate_transient(SEED_TRANSIENT, seed=-1), "seed"),
        (lambda: routing.LockScenario(owners_ms=()), "owners_ms"),
        (lambda: routing.LockScenario(owners_ms=(16.0, -27.0)), "owners_ms[1]"),
        (lambda: routing.LockScenario(timeout_ms=0.0), "timeout_ms"),
        (lambda: routing.simulate_lock(SEED_INCIDENT, seed=1.5), "seed"),
        (lambda: routing.simulate_lock(SEED_INCIDENT, seed=-1, engine="fast"), "seed"),
        (lambda: routing.simulate_lock(SEED_INCIDENT, engine="turbo"), "engine"),
        (lambda: routing.LockScenario(owner_names="BC"), "owner_names"),
        (lambda: routing.LockScenario(owner_names=("B owner", "")), "owner_names[1]"),
        (lambda: routing.LockScenario(owners_ms="16"), "owners_ms"),
        (lambda: routing.LockScenario(batchers="per_owner", split="ab"), "split"),
        (lambda: routing.make_layout({"B": 1, "C": 1}, client_dcs="BC"), "client_dcs"),
        (lambda: routing.Layout(SEED_LAYOUT.servers, "BC", "B", ("B", "C")), "client_dcs"),
        (lambda: routing.Layout(SEED_LAYOUT.servers, ("B",), "B", "BC"), "datacentres"),
        (lambda: routing.LockScenario(batchers="two"), "batchers"),
        (lambda: routing.LockScenario(split=(0.5, 0.5)), "split"),
        (lambda: routing.LockScenario(batchers="per_owner", split=(0.5, 0.6)), "split"),
        (lambda: routing.LockScenario(batchers="per_owner", split=(1.0,)), "split"),
        (lambda: routing.LockScenario(batchers="per_owner", split=(1.5, -0.5)), "split[0]"),
        (lambda: routing.lock_throughput_closed([1.0], [16.0, 27.0]), "demands_per_s"),
        (lambda: routing.band_verdicts(SEED_INCIDENT, [600.0], seeds=0), "seeds"),
        (lambda: routing.explore(n_b=0, n_c=0), "n_b + n_c"),
        (lambda: routing.stable_hash(123), "key"),
    ],
)
def test_bad_input_raises_value_error_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{__import__('re').escape(name)}"):
        call()


# --------------------------------------------------------------------------- fixes
def test_fixes_computed_with_the_model():
    rows = {r.name: r for r in routing.compare_fixes(n_keys=1000)}
    seed = rows["seed: filterRegion lists"]
    assert seed.mean_owners == 2.0 and seed.share_split == 1.0 and seed.share_backlog == 1.0
    glob = rows["route on the global list"]
    assert glob.share_split == 0.0 and glob.min_tps == pytest.approx(1000 / 27)
    assert 1 - glob.share_in_primary == pytest.approx(3 / 7, abs=0.05)  # 3 of 7 servers are in C
    for name in ("pin owners to the primary's DC", "deployment check (巡检) removes C", "pin + consistent hashing"):
        assert rows[name].share_in_primary == 1.0 and rows[name].min_tps == pytest.approx(62.5)
        assert rows[name].share_backlog == 0.0
    assert rows["pin owners to the primary's DC"].moved_on_isolation == pytest.approx(3 / 4, abs=0.04)
    assert rows["pin + consistent hashing"].moved_on_isolation == pytest.approx(1 / 4, abs=1e-12)


# --------------------------------------------------------------------------- widgets, kernel-side
def test_owner_widget_driven_kernel_side():
    from ipywidgets import interactive

    w = interactive(routing.explore, n_b=(0, 8), n_c=(0, 8), isolate_rounds=(0, 8),
                    scheme=list(routing.SCHEMES), routing=list(routing.ROUTINGS), load_per_s=(300.0, 1200.0, 10.0))
    w.update()
    assert w.result.n_owners == 2 and w.result.growth > 0
    controls = {c.description: c for c in w.children if hasattr(c, "description")}
    controls["routing"].value = "primary"
    w.update()
    assert w.result.n_owners == 1 and w.result.tps == pytest.approx(62.5) and w.result.growth < 0
    controls["routing"].value = "region"
    controls["isolate_rounds"].value = 3  # all of C isolated: C's clients fall back to the B list
    w.update()
    assert w.result.n_owners == 1 and all(s.dc == "B" for s in w.result.owners.values())
    assert "owner" in w.result._repr_markdown_()


def test_transient_widget_driven_kernel_side():
    from ipywidgets import interactive

    w = interactive(routing.explore_transient, poll_ms=(0.0, 10_000.0, 500.0), changes_per_min=(0.0, 10.0, 0.5),
                    scheme=list(routing.SCHEMES), seed=(0, 9))
    w.children[0].value = 0.0
    w.update()
    assert w.result.share_key_time == 0.0
    w.children[0].value = 5000.0
    w.update()
    assert w.result.share_key_time > 0.0
    w.result.ledger.check()


def test_plots_draw_without_error():
    ax = routing.plot_owner_view(routing.owner_view())
    assert ax.texts
    ax = routing.plot_transient(routing.simulate_transient(replace(SEED_TRANSIENT, horizon_ms=600_000.0)))
    assert ax.get_lines()


# --------------------------------------------------------------------------- exercises
def test_exercises_accept_the_computed_answers_and_reject_others():
    from hotkeylab.exercise_sets import nb03_split_routing as ex

    assert check("03.owners_three_dcs", ex.owners_three_dcs()).ok
    assert not check("03.owners_three_dcs", 1).ok
    assert check("03.remap_modulo_12", 11 / 12).ok
    assert not check("03.remap_modulo_12", 1 / 12).ok
    assert check("03.backlog_seconds", ex.backlog_seconds()).ok
    assert not check("03.backlog_seconds", 2 * ex.backlog_seconds()).ok
    assert not check("03.backlog_seconds", ex.backlog_seconds_seed_rule()).ok  # M/N leaves out T and N
    # the threshold is (M − T − N̄)/N̄ = 7.37 batches, below the seed's M/N = 9.30
    assert ex.backlog_seconds() < ex.backlog_seconds_seed_rule()
    assert check("03.per_owner_critical_rate", ex.per_owner_critical_rate()).ok
    assert not check("03.per_owner_critical_rate", routing.critical_rate_per_s(SEED_INCIDENT)).ok
    # a C owner alone cannot keep up even at normal load: timeouts come after a finite time
    c_alone = capacity.alternating_owners_tps([27.0])
    assert routing.demand_batches_per_s(SEED_INCIDENT, peak=False) > c_alone
    assert check("03.global_c_owner_timeout_s", ex.global_c_owner_timeout_s()).ok
    assert not check("03.global_c_owner_timeout_s", c_alone).ok
    assert not check("03.global_c_owner_timeout_s", 2 * ex.global_c_owner_timeout_s()).ok


# --------------------------------------------------------------------------- bounded at the ends (#20)
@pytest.mark.parametrize("engine", ["simpy", "fast"])
def test_lock_run_at_the_largest_rate_ends_at_its_cap_truncated(engine):
    sc = replace(SEED_INCIDENT, rate_per_s=1e6, horizon_ms=1e8, max_events=5_000)
    run = routing.simulate_lock(sc, seed=0, engine=engine)
    run.ledger.check()
    assert run.status.truncated and run.status.t_end_ms < sc.horizon_ms
    assert run.ledger.arrived <= sc.max_events
    with pytest.raises(ValueError, match="max_events"):
        replace(SEED_INCIDENT, max_events=routing.MAX_EVENTS_LOCK + 1)


def test_transient_keeps_one_owner_array_per_server_out():
    # a change every 0.6 ms for an hour: versions share the owner array of their server out
    sc = replace(SEED_TRANSIENT, changes_per_min=1e5, n_keys=100_000, max_events=50_000)
    run = routing.simulate_transient(sc, seed=0)
    run.ledger.check()
    assert run.status.truncated and run.n_changes > 1_000


def test_model_and_fast_engine_import_without_a_circle():
    code = "import hotkeylab.routing.fast, hotkeylab.routing.model, hotkeylab.routing.figures"
    subprocess.run([sys.executable, "-c", code], check=True)
