"""07 · gateway cascade: client arithmetic, alarm order, flows and ledger, fixes, closed forms vs
simulation, bad input, widget."""

import math
from dataclasses import replace

import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hotkeylab import exercises
from hotkeylab import gateway_cascade as gw

SC = gw.SEED_INCIDENT
M = gw.MIN_MS


@pytest.fixture(scope="module")
def incident():
    return gw.simulate(SC, seed=0)


@pytest.fixture(scope="module")
def comparison():
    return gw.compare_fixes(SC, seed=0)


# --------------------------------------------------------------------------- client arithmetic
def test_client_count_for_the_seeds_peak():
    # 1.9 M calls/min from clients polling every 5 s: 1.9e6 / 12 polls per client-minute
    assert gw.clients_for_calls_per_min(1_900_000, 5_000) == pytest.approx(1_900_000 / 12)
    assert gw.clients_for_calls_per_min(1_900_000, 5_000) == pytest.approx(158_333.33, abs=0.01)
    # with the assumed baseline subtracted, the preset's installs give exactly 1.9 M/min
    n = gw.clients_for_calls_per_min(1_900_000, 5_000, baseline_per_min=SC.baseline_per_s * 60)
    assert SC.installs_max == pytest.approx(n)
    assert SC.peak_calls_per_s * 60 == pytest.approx(1_900_000)
    back = gw.calls_per_min(n, 5_000, baseline_per_min=SC.baseline_per_s * 60)
    assert back == pytest.approx(1_900_000)
    assert gw.clients_for_calls_per_min(1_900_000, 2_000, calls_per_poll=2) == pytest.approx(1_900_000 / 60)


def test_simulated_peak_matches_the_closed_form(incident):
    peak = incident.peaks()["clients"]
    assert peak == pytest.approx(1_900_000, rel=0.01)  # Poisson noise over one minute: ~0.1 %


# --------------------------------------------------------------------------- the seed's story
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alarms_fire_in_the_seeds_order(seed):
    run = gw.simulate(SC, seed=seed)
    assert run.alarm_order() == list(gw.SEED_ALARM_ORDER)
    # what jstack and jmap found was there when the hosts went down
    down = run.alarm_ms("host_down")
    assert run.alarm_ms("young_gc") < down
    assert run.alarm_ms("full_scan") < down
    assert run.windows["full_scans"].sum() > 0


def test_incident_story_details(incident):
    run = incident
    assert len(run.failovers) >= 3  # "相当频繁"
    assert run.events["dba_scaleup_ms"] == pytest.approx(run.alarm_ms("jimdb_connection_lost") + SC.dba_reaction_ms)
    # MySQL collapses while jimdb is down ("mysql 恶化成服务宕机") and stays down after jimdb
    # recovers, while the full scans it is running keep it saturated
    w = run.windows
    down = w["jimdb_up"] == 0
    assert w["mysql_util"][down].min() > 1.0
    assert run.alarm_ms("mysql_down") < run.alarm_ms("jimdb_recovered")
    k_rec = int(run.alarm_ms("jimdb_recovered") // SC.step_ms)
    assert (w["mysql_ok"][k_rec : k_rec + 60] < 0.5).all()
    # once the scans are gone (their hosts died) MySQL runs at about the seed's 85 %
    late = slice(int(100 * M / SC.step_ms), None)
    assert w["scans_running"][late].max() == 0
    assert w["mysql_util"][late].mean() == pytest.approx(0.85, abs=0.03)
    assert len({h for _, h in run.crashes}) >= 10
    assert w["jmq_backlog"][-1] > 10_000_000


def test_full_scans_are_the_last_straw(incident, comparison):
    """问题四: the scans' rows in the heaps break hosts whose log buffers already fill most of it;
    without the scans (the full-scan fix alone) no host dies, though the logs still fill their buffers."""
    run = incident
    w = run.windows
    k = int(run.crashes[0][0] // SC.step_ms) - 1
    room = SC.heap_mb - SC.live_mb
    assert w["scan_mb_max"][k] > 0.1 * room  # scan rows were a real part of the full heap
    assert run.crashes[0][0] > run.alarm_ms("jimdb_recovered")  # after jimdb recovered, as the seed lists
    fixed = comparison.runs[gw.FIX_LABELS["fix_full_scan"]]
    assert fixed.crashes == [] and fixed.windows["full_scans"].sum() == 0
    assert fixed.windows["logs_dropped"].sum() > 0  # the log buffers were full all the same
    assert fixed.windows["heap_used"].max() < 1.0
    # MySQL still goes down in the full-scan-fix run, but only while jimdb is failed over
    fw = fixed.windows
    assert (fw["mysql_ok"] < 0.5).any()
    assert (fw["jimdb_up"][fw["mysql_ok"] < 0.5] == 0).all()


def test_without_the_flood_nothing_happens():
    quiet = gw.simulate(replace(SC, installs_max=20_000.0), seed=0)
    assert quiet.alarms == []
    assert quiet.ledger.timed_out == 0


# --------------------------------------------------------------------------- flows and ledger
def _check_flows(run):
    for node, f in run.flows.items():
        delta = np.diff(f["stored"], prepend=0.0)
        resid = f["in"] - f["out"] - f["dropped"] - delta
        scale = max(1.0, float(np.abs(f["in"]).max()))
        assert np.abs(resid).max() <= 1e-9 * scale, node
        for key in ("in", "out", "dropped", "stored"):
            assert f[key].min() >= -1e-9 * scale, (node, key)


def test_flow_conservation_per_node(incident, comparison):
    _check_flows(incident)
    for run in comparison.runs.values():
        _check_flows(run)
        run.ledger.check()


def test_ledger_matches_the_windows(incident):
    w, led = incident.windows, incident.ledger
    assert led.arrived == w["arrivals"].sum()
    assert led.served == w["served"].sum()
    assert led.rejected == w["rejected"].sum()
    assert led.timed_out == w["failed"].sum() + w["timeouts"].sum()
    assert led.in_system == w["queue"][-1]


_FIX_SETS = st.lists(st.sampled_from(gw.FIX_NAMES), unique=True, max_size=len(gw.FIX_NAMES))


@given(
    installs=st.floats(0.0, 2e6),
    poll_ms=st.floats(500.0, 60_000.0),
    hit=st.floats(0.0, 1.0),
    fixes=_FIX_SETS,
    steps=st.integers(20, 300),
    step_ms=st.floats(100.0, 5_000.0),
    hosts=st.integers(1, 30),
    capacity=st.floats(10.0, 5_000.0),
    mid_frac=st.floats(0.0, 1.0),
    timeout_ms=st.floats(50.0, 10_000.0),
    fixes_frac=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**31),
)
def test_ledger_and_flows_balance_for_random_parameters(
    installs, poll_ms, hit, fixes, steps, step_ms, hosts, capacity, mid_frac, timeout_ms, fixes_frac, seed
):
    horizon = steps * step_ms
    sc = replace(
        SC,
        installs_max=installs,
        poll_interval_ms=poll_ms,
        local_cache_hit_ratio=hit,
        steps=steps,
        step_ms=step_ms,
        hosts=hosts,
        host_capacity_per_s=capacity,
        ramp_mid_ms=mid_frac * horizon,
        ramp_scale_ms=max(1.0, horizon / 20),
        client_timeout_ms=timeout_ms,
        failover_after_ms=horizon / 10,
        failover_ms=horizon / 20,
        dba_reaction_ms=horizon / 10,
        restart_ms=horizon / 10,
        heap_mb=64.0,
        live_mb=16.0,
        young_mb=8.0,
    )
    run = gw.simulate(gw.with_fixes(sc, fixes, at_ms=fixes_frac * horizon), seed=seed)
    run.ledger.check()
    _check_flows(run)
    assert len(run.windows["t"]) == steps
    assert all(np.isfinite(run.windows[k]).all() for k in ("gateway_util", "mysql_util", "jimdb_util"))


def test_the_seed_draws_the_arrivals():
    # same seed, same result: tests/test_contract.py; here, another seed gives other arrivals
    short = replace(SC, steps=3_000)
    a, c = gw.simulate(short, seed=7), gw.simulate(short, seed=8)
    assert not np.array_equal(a.windows["arrivals"], c.windows["arrivals"])


def test_runs_are_bounded_by_the_step_count():
    sc = replace(SC, installs_max=5e7, steps=500, host_capacity_per_s=10.0, hosts=1)
    run = gw.simulate(sc, seed=0)
    assert len(run.windows["t"]) == 500
    run.ledger.check()
    # the access queue holds at most client_timeout worth of arrivals
    assert run.ledger.in_system <= run.windows["arrivals"][-3:].sum()


# --------------------------------------------------------------------------- fixes
@pytest.mark.parametrize("name", gw.FIX_NAMES)
def test_each_fix_lowers_the_peak_of_its_target(comparison, name):
    base = comparison.runs["the incident"].peaks()
    fixed = comparison.runs[gw.FIX_LABELS[name]].peaks()
    target = gw.FIX_TARGETS[name]
    assert fixed[target] < base[target] * 0.97, (name, target, fixed[target], base[target])


def test_fixes_together_keep_every_component_below_capacity(comparison):
    for label in ("seed's fixes together", "all together"):
        run = comparison.runs[label]
        p = run.peaks()
        assert max(p[c] for c in ("gateway", "jimdb", "mysql", "jmq")) < 1.0, label
        assert run.crashes == [] and run.failovers == []
        assert run.alarm_order() == ["availability"]  # only: polls refused by the token bucket
        assert run.outcome_shares()["failed"] < 0.001


def test_fixes_that_stop_the_jimdb_failovers(comparison):
    for name in ("degrade_monitoring", "local_cache", "split_clusters", "singleflight", "token_bucket"):
        run = comparison.runs[gw.FIX_LABELS[name]]
        assert run.failovers == [], name
        assert run.windows["full_scans"].sum() == 0, name
    for name in ("degrade_logging", "token_bucket", "fix_full_scan"):
        assert comparison.runs[gw.FIX_LABELS[name]].crashes == [], name
    # blocking the release 20 min after the first alarm comes after the scans started: too late
    assert comparison.runs[gw.FIX_LABELS["block_release"]].crashes != []


def test_block_release_drains_the_flood(comparison):
    run = comparison.runs[gw.FIX_LABELS["block_release"]]
    t_block = run.events["block_at_ms"]
    assert t_block == pytest.approx(run.alarm_ms("performance") + SC.block_reaction_ms)
    w = run.windows
    k = int(t_block // SC.step_ms)
    later = k + int(2 * SC.drain_ms // SC.step_ms)
    assert w["active"][later] == pytest.approx(w["active"][k] * math.exp(-2), rel=0.01)


def test_fixes_applied_late_are_off_before():
    sc = gw.with_fixes(replace(SC, steps=3_000), ["degrade_monitoring"], at_ms=30 * M)
    run = gw.simulate(sc, seed=0)
    base = gw.simulate(replace(SC, steps=3_000), seed=0)
    k = int(30 * M // SC.step_ms)
    np.testing.assert_array_equal(run.windows["jimdb_ops"][:k], base.windows["jimdb_ops"][:k])
    assert run.windows["jimdb_ops"][k + 10] < 0.6 * base.windows["jimdb_ops"][k + 10]


# --------------------------------------------------------------------------- closed forms vs simulation
def _healthy(**kw):
    """A load every component carries: nothing fails, so closed forms apply exactly."""
    return replace(SC, installs_max=60_000.0, steps=3_600, **kw)


def test_shard_load_with_a_local_cache_matches_the_closed_form():
    for hit in (0.0, 0.5, 0.95):
        run = gw.simulate(_healthy(local_cache_hit_ratio=hit), seed=0)
        assert run.alarms == []
        w, sc = run.windows, run.scenario
        lam = w["active"] * 1000.0 / sc.poll_interval_ms + sc.baseline_per_s  # expected calls/s
        expected = np.array([gw.shard_load_per_s(x, 2, 2.0, hit) for x in lam])
        # sum over an hour of Poisson arrivals (~10^8): agreement within 0.5 %
        assert w["jimdb_ops"].sum() == pytest.approx(expected.sum(), rel=0.005)


def test_peak_loads_match_the_simulated_plateau():
    sc = replace(_healthy(), ramp_mid_ms=5 * M, ramp_scale_ms=30_000.0)
    run = gw.simulate(sc, seed=1)
    w = run.windows
    late = slice(int(30 * M // sc.step_ms), None)
    pk = gw.peak_loads(sc)
    assert w["jimdb_ops"][late].mean() == pytest.approx(pk["jimdb"][0], rel=0.01)
    assert w["mysql_work"][late].mean() == pytest.approx(pk["mysql"][0], rel=0.01)
    assert w["arrivals"][late].mean() == pytest.approx(pk["gateway"][0], rel=0.01)


@pytest.mark.parametrize(
    "mode, rate, hold_ms",
    [("singleflight", 1_583.0, 1.0), ("singleflight", 1_583.0, 50.0), ("singleflight", 200.0, 5.0),
     ("ttl", 1_583.0, 1_000.0), ("ttl", 20.0, 1_000.0), ("ttl", 5.0, 100.0), ("none", 100.0, 5.0)],
)  # fmt: skip
def test_coalescing_micro_simulation_matches_lambda_over_one_plus_lambda_hold(mode, rate, hold_ms):
    horizon_ms = max(200_000.0, 20_000 / rate * 1000.0)  # at least 20,000 requests
    r = gw.simulate_key_fetches(rate, hold_ms, mode=mode, seed=3, horizon_ms=horizon_ms)
    assert r.arrivals > 19_000
    # renewal-reward: >= 1,000 fetch cycles in every case here; 4 % covers the Monte-Carlo noise
    assert r.fetch_rate_per_s == pytest.approx(r.closed_form_per_s, rel=0.04)
    if mode == "ttl":
        assert r.hit_ratio == pytest.approx(gw.ttl_hit_ratio(rate, hold_ms), abs=0.01)


def test_coalesced_utilisation_is_the_fixed_point():
    from scipy.optimize import brentq

    for lam, callers, net, cap, other in [
        (1583, 40, 1.0, 80_000, 63_333), (500, 20, 2.0, 20_000, 0), (10, 4, 0.5, 1e3, 900), (5, 3, 0.0, 50, 10),
    ]:  # fmt: skip
        u = gw.coalesced_utilisation(lam, callers, net, cap, other)

        def gap(x, lam=lam, callers=callers, net=net, cap=cap, other=other):
            lat_ms = net + 1000.0 / cap / (1 - x)  # network + service time 1/C over (1 − u)
            return (other + callers * lam / (1 + lam * lat_ms / 1000)) / cap - x

        assert u == pytest.approx(brentq(gap, other / cap, 1 - 1e-12, xtol=1e-14), rel=1e-9)
        assert 0 <= u < 1
    # the seed's shard: an 80,000 ops/s shard serves one op in 12.5 µs, so 40 coalescing callers
    # push it close to full (the old s / (1 − u) with s = 1 ms gave 0.86)
    lam = SC.peak_calls_per_s / SC.hosts
    u = gw.coalesced_utilisation(lam, 40, 1.0, 80_000, SC.peak_calls_per_s * 2)
    assert 0.98 < u < 0.99
    assert gw.mm1_latency_ms(1.0, 80_000, 0.0, math.inf) == pytest.approx(1.0125)
    assert gw.mm1_latency_ms(1.0, 80_000, 1.0, 500.0) == 500.0
    # writes alone fill the shard: callers wait for the timeout
    u = gw.coalesced_utilisation(100, 10, 1.0, 1_000, 1_200, timeout_ms=500)
    assert u == pytest.approx(1.2 + 10 * 100 / (1 + 100 * 0.5) / 1_000)


def test_singleflight_shard_load_in_the_simulation():
    sc = gw.with_fixes(replace(SC, ramp_mid_ms=5 * M, ramp_scale_ms=30_000.0, steps=1_800), ["singleflight"])
    run = gw.simulate(sc, seed=0)
    w = run.windows
    late = slice(int(20 * M // sc.step_ms), None)
    lam = sc.peak_calls_per_s
    per_key = lam / sc.hosts  # each host looks up token and pin once per call
    u = gw.coalesced_utilisation(per_key, sc.hosts * 2, sc.jimdb_net_ms, sc.shard_ops_per_s, lam * 2.0)
    assert w["jimdb_util"][late].mean() == pytest.approx(u, rel=0.01)
    assert u < 1.0 < gw.shard_load_per_s(lam, 2, 2.0) / sc.shard_ops_per_s


def test_jmq_backlog_grows_at_the_closed_form_rate(incident):
    w, sc = incident.windows, incident.scenario
    # minutes 45-55: every host up, JMQ saturated, ES behind
    a, b = int(45 * M // sc.step_ms), int(55 * M // sc.step_ms)
    slope = (w["jmq_backlog"][b] - w["jmq_backlog"][a]) / ((b - a) * sc.step_ms / 1000.0)
    assert slope == pytest.approx(gw.backlog_growth_per_s(sc.jmq_msgs_per_s, sc.es_docs_per_s), rel=0.01)
    assert gw.hours_to_backlog(800e6, 15_000, 2_000) == pytest.approx(800e6 / 13_000 / 3600)
    assert math.isinf(gw.hours_to_backlog(1.0, 1.0, 2.0))


def test_log_buffers_fill_at_the_closed_form_time():
    # a step load (every install polls from minute 5), even hosts, jimdb protected (no scans), no
    # CPU lost to GC or threads: the closed form's assumptions
    sc = replace(
        SC, ramp_mid_ms=5 * M, ramp_scale_ms=1.0, lb_jitter=0.0, local_cache_hit_ratio=0.95, steps=3_600,
        gc_pause_ms=0.0, thread_cpu_share=0.0,
    )  # fmt: skip
    run = gw.simulate(sc, seed=0)
    w = run.windows
    first_drop = np.flatnonzero(w["logs_dropped"] > 0)[0] * sc.step_ms
    assert first_drop == pytest.approx(5 * M + gw.heap_fill_s(sc) * 1000.0, rel=0.01)
    assert run.crashes == []  # a bounded buffer: the logs alone do not kill the hosts
    late = slice(int(50 * M // sc.step_ms), None)
    assert w["young_gc_per_s"][late].mean() == pytest.approx(gw.young_gc_per_s(sc), rel=0.02)
    # a smaller heap, the same buffer: the logs alone fill it and the hosts die
    small = gw.simulate(replace(sc, heap_mb=sc.live_mb + sc.log_buffer_mb * 0.9), seed=0)
    assert len(small.crashes) >= sc.hosts


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "field, value",
    [
        ("poll_interval_ms", 0.0),
        ("hosts", 0),
        ("host_capacity_per_s", 0.0),
        ("live_mb", 1e9),
        ("jimdb_timeout_ms", 0.5),
        ("full_scan_ms", 0.0),
        ("check_reads_per_call", 0),
        ("dba_capacity_factor", 0.5),
        ("app_queries_per_call", 1.5),
        ("local_cache_hit_ratio", 1.01),
        ("fixes", ("token_bucket",)),
        ("step_ms", 0.0),
        ("steps", 0),
        ("steps", gw.MAX_STEPS + 1),
        ("hosts", gw.MAX_HOST_STEPS // SC.steps + 1),  # hosts × steps bounds the scans' memory
    ],
)
def test_bad_scenario_raises_naming_the_parameter(field, value):
    with pytest.raises(ValueError, match=field):
        replace(SC, **{field: value})


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: gw.simulate(SC, seed=-1), "seed"),
        (lambda: gw.simulate({"installs_max": 1}), "scenario"),
        (lambda: gw.Fixes(token_bucket="yes"), "token_bucket"),
        (lambda: gw.with_fixes(SC, ["retry_harder"]), "names"),
        (lambda: gw.clients_for_calls_per_min(-1, 5000), "calls_per_min"),
        (lambda: gw.clients_for_calls_per_min(100, 5000, baseline_per_min=200), "baseline_per_min"),
        (lambda: gw.clients_for_calls_per_min(100, 0), "poll_interval_ms"),
        (lambda: gw.calls_per_min(10, 5000, calls_per_poll=0), "calls_per_poll"),
        (lambda: gw.shard_load_per_s(100, 2, 2, 1.5), "hit_ratio"),
        (lambda: gw.coalesced_rate_per_s(-1, 1), "rate_per_s"),
        (lambda: gw.coalesced_utilisation(1, 1, 1, 0), "capacity_per_s"),
        (lambda: gw.coalesced_utilisation(1, 1, -1, 10), "network_ms"),
        (lambda: gw.alarm_order_map(heap_mb=(100.0,)), "heap_mb"),
        (lambda: gw.alarm_order_map(seeds=[]), "seeds"),
        (lambda: gw.ttl_hit_ratio(10, -1), "ttl_ms"),
        (lambda: gw.simulate_key_fetches(10, 1, mode="lru"), "mode"),
        (lambda: gw.simulate_key_fetches(0, 1), "rate_per_s"),
        (lambda: gw.explore(poll_s=0, plot=False), "poll_s"),
        (lambda: gw.explore(fixes=("magic",), plot=False), "fixes"),
        (lambda: gw.GATEWAY_GRAPH.node("redis"), "name"),
        (lambda: gw.Graph(nodes=(gw.Node("a", "a", (0, 0)),), edges=(gw.Edge("a", "b"),)), "endpoint"),
        (lambda: gw.Graph(nodes=(gw.Node("a", "a", (0, 0)),) * 2, edges=()), "nodes"),
        # issue #20: mm1_latency_ms and installs_at check their input
        (lambda: gw.mm1_latency_ms(1.0, 80_000, math.nan, 500.0), "utilisation"),
        (lambda: gw.mm1_latency_ms(1.0, -80_000, 0.5, 500.0), "capacity_per_s"),
        (lambda: gw.mm1_latency_ms(-1.0, 80_000, 0.5, 500.0), "fixed_ms"),
        (lambda: gw.mm1_latency_ms(1.0, 80_000, 0.5, math.nan), "timeout_ms"),
        (lambda: gw.installs_at(SC, math.nan), "t_ms"),
        (lambda: gw.installs_at(SC, [0.0, math.nan]), "t_ms"),
        (lambda: gw.installs_at(SC, "soon"), "t_ms"),
        (lambda: gw.peak_loads(None), "scenario"),
        (lambda: gw.heap_fill_s({"hosts": 20}), "scenario"),
        (lambda: gw.young_gc_per_s(SC, calls_per_s=-1.0), "calls_per_s"),
        (lambda: gw.simulate_key_fetches(1e7, 1.0, horizon_ms=1e9), "max_arrivals"),
        (lambda: gw.simulate_key_fetches(10, 1, max_arrivals=gw.MAX_ARRIVALS + 1), "max_arrivals"),
        (lambda: gw.StepLog(("t", "queue")).add(queue=1.0, t=0.0), "column"),
        (lambda: gw.FlowLog(("a", "b")).add(a=(1, 1, 0, 0)), "column"),
    ],
)
def test_bad_arguments_raise_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --------------------------------------------------------------------------- graph, figures, widget
def test_graph_reads_like_the_postmortem():
    g = gw.GATEWAY_GRAPH
    assert set(g.successors("access")) == {"jimdb", "monitoring", "app", "mysql", "logs"}
    assert g.successors("access", kinds=("fallback",)) == ["mysql"]
    assert g.successors("logs") == ["jmq"] and g.successors("jmq") == ["es"]
    assert set(g.successors("monitoring")) == {"jimdb", "jimdb_mon"}


def test_figures_draw(incident, comparison):
    fig = gw.plot_graph_moments(incident, [(30 * M, "a"), (incident.failovers[0] + 5_000, "b")])
    assert len(fig.axes) == 3
    split = comparison.runs[gw.FIX_LABELS["split_clusters"]]
    gw.plot_graph(split, 60 * M)
    util = gw.node_utilisation(incident, incident.failovers[0] + 5_000)
    assert util["jimdb"][1] is True and util["mysql"][0] > 1
    gw.plot_timelines(incident)
    gw.plot_compact(incident)
    gw.plot_fixes(comparison)
    with pytest.raises(ValueError, match="t_ms"):
        gw.node_utilisation(incident, 1e12)
    plt.close("all")


def test_widget_driven_kernel_side():
    from ipywidgets import SelectMultiple, fixed, interactive

    w = interactive(
        gw.explore,
        installs_k=(10.0, 300.0, 10.0),
        poll_s=(1.0, 60.0, 1.0),
        hit_ratio=(0.0, 0.99, 0.01),
        fixes=SelectMultiple(options=[n for n in gw.FIX_NAMES if n != "local_cache"], value=()),
        seed=fixed(0),
        plot=fixed(False),
    )
    w.update()
    assert w.result["alarm_order"] == list(gw.SEED_ALARM_ORDER)  # the default: the incident
    assert w.result["peak_calls_per_min"] == pytest.approx(1_900_000, rel=0.01)
    w.children[1].value = 30.0  # poll every 30 s: a sixth of the load, nothing fails
    w.update()
    assert w.result["alarms"] == {} and w.result["host_crashes"] == 0
    w.children[1].value = 5.0
    w.children[2].value = 0.95  # a local cache: jimdb holds, no fallback, no scans, no crash
    w.update()
    assert w.result["failovers"] == 0 and w.result["host_crashes"] == 0
    w.children[2].value = 0.0
    w.children[3].value = ("fix_full_scan",)  # failovers, mysql down while jimdb is, no host dies
    w.update()
    assert w.result["failovers"] > 0 and w.result["host_crashes"] == 0
    plt.close("all")


# --------------------------------------------------------------------------- exercises
def test_exercises_accept_the_answer_and_reject_others():
    ok = {
        "07.clients_2s": (SC.jmq_msgs_per_s / SC.logs_per_call - SC.baseline_per_s) * 2.0 / SC.calls_per_poll,
        "07.shard_ops_local_cache": SC.peak_calls_per_s * (2 * 0.2 + 2),
        "07.singleflight_rate": 1_500 / (1 + 1_500 * 0.002),
        "07.hours_to_backlog": 800e6 / (SC.es_docs_per_s - SC.baseline_per_s * SC.logs_per_call) / 3600,
        "07.scans_to_oom": (SC.heap_mb - SC.live_mb) / SC.full_scan_result_mb,
        "07.slowest_poll": SC.installs_max / (80_000 / 2.2 - SC.baseline_per_s),
    }
    for eid, value in ok.items():
        assert exercises.check(eid, value).ok, eid
        assert not exercises.check(eid, value * 1.5).ok, eid
        assert not exercises.check(eid, "many").ok, eid
    # the known slips get their own message, not "too high"
    assert "other traffic" in exercises.check("07.clients_2s", SC.jmq_msgs_per_s * 2.0).message
    assert "keep arriving" in exercises.check("07.hours_to_backlog", 800e6 / SC.es_docs_per_s / 3600).message
    full_queue = (SC.heap_mb - SC.live_mb - SC.log_buffer_mb) / SC.full_scan_result_mb
    assert "full log queue" in exercises.check("07.scans_to_oom", full_queue).message


def test_early_stop_keeps_the_alarm_order_and_singleflight_needs_the_queue_term():
    full = gw.simulate(SC, seed=1)
    short = gw.simulate(SC, seed=1, stop_when_order_decided=True)
    assert short.alarm_order() == full.alarm_order()
    assert len(short.windows["t"]) <= len(full.windows["t"])
    lam = SC.peak_calls_per_s / SC.hosts
    callers = SC.hosts * SC.check_reads_per_call
    b = SC.peak_calls_per_s * SC.monitor_writes_per_call / SC.shard_ops_per_s
    a = callers * lam / SC.shard_ops_per_s
    assert b + a / (1 + lam * SC.jimdb_net_ms / 1000) > 1  # the round trip alone: overloaded
    u = gw.coalesced_utilisation(lam, callers, SC.jimdb_net_ms, SC.shard_ops_per_s, b * SC.shard_ops_per_s)
    assert b < u < 1  # the queue term brings it just under capacity


def test_step_and_flow_logs_keep_their_columns():
    log = gw.StepLog(("t", "queue"))
    log.add(t=0.0, queue=3.0)
    log.add(t=1.0, queue=5.0)
    np.testing.assert_array_equal(log.arrays()["queue"], [3.0, 5.0])
    flows = gw.FlowLog(("a", "b"))
    flows.add(a=(1, 1, 0, 0), b=(2, 1, 1, 0))
    assert flows.arrays()["b"]["dropped"].tolist() == [1.0]


def test_key_fetches_cover_the_whole_horizon():
    # the first block of gaps may fall short of the horizon: more are drawn, none is cut off
    r = gw.simulate_key_fetches(1000.0, 0.0, mode="none", seed=1, horizon_ms=60_000.0)
    assert r.arrivals == r.fetches and r.fetch_rate_per_s == pytest.approx(1000.0, rel=0.02)
    assert r.closed_form_per_s == 1000.0 and r.hit_ratio == 0.0


def test_latency_and_installs_of_valid_input():
    # issue #20: the checks refuse bad input only; valid input gives what it gave
    assert gw.mm1_latency_ms(1.0, 80_000, 0.5, 500.0) == pytest.approx(1.0 + 12.5e-3 / 0.5)
    assert gw.mm1_latency_ms(1.0, 80_000, 3.0, 500.0) == 500.0
    assert gw.installs_at(SC, SC.ramp_mid_ms) == pytest.approx(SC.installs_max / 2)
    np.testing.assert_allclose(gw.installs_at(SC, [0.0, math.inf]), [gw.installs_at(SC, 0.0), SC.installs_max])
