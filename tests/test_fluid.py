"""The fluid (drift) model of the hot-key queue against its own closed forms and the simulation.

Scenarios are built field by field (not from the presets) so the tests do not move when
SEED_INCIDENT's timeline or queue bound is recalibrated.
"""

import math

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from hotkeylab import capacity  # noqa: E402
from hotkeylab.metastable import RetryPolicy, Scenario, Window, simulate  # noqa: E402
from hotkeylab.metastable import fluid as F  # noqa: E402

M, T, N = 200.0, 20.0, 16.0
MU = 1000.0 / N  # one owner: 62.5 batches/s
MU2 = 1000.0 / ((16.0 + 27.0) / 2)  # two owners taking turns: 46.5 batches/s
RETRY = RetryPolicy(max_attempts=math.inf, base_ms=50.0, multiplier=1.0, cap_ms=50.0,
                    jitter="full", patience_ms=300.0)
BASE = Scenario(user_rate_per_s=600.0, batch_max_rows=20, batch_max_wait_ms=T, batch_ms=N,
                cross_batch_ms=27.0, timeout_ms=M, retry=RETRY, queue_limit=None, peak=None,
                second_owner=None, horizon_ms=90_000.0)
#: user rate 600, peak ×1.2 from 5 s, a second owner for the first 30 s, no queue bound
STUCK = BASE.with_(peak=Window(5_000.0, math.inf, 1.2), second_owner=Window(0.0, 30_000.0))
SEEDS = (0, 1, 2)
LO, HI = (M - T - N) / N, (M - N) / N  # 10.25 and 11.5 batches


@pytest.fixture(scope="module")
def stuck_runs():
    return [simulate(STUCK, engine="fast", seed=s) for s in SEEDS]


def _slope(run, t0, t1):
    t, q = run.windows["t"], run.windows["queue"]
    m = (t >= t0) & (t <= t1)
    return float(np.polyfit(t[m], q[m], 1)[0])


# --------------------------------------------------------------------------- (a) timeout share
def test_timeout_share_is_zero_below_and_one_above_the_ramp():
    below = np.linspace(0.0, LO, 50)
    above = np.linspace(HI, 5 * HI, 50)
    assert np.all(F.timeout_share(below, BASE) == 0.0)
    assert np.all(F.timeout_share(above, BASE) == 1.0)
    mid = F.timeout_share(np.linspace(LO + 1e-6, HI - 1e-6, 50), BASE)
    assert np.all((mid > 0) & (mid < 1)) and np.all(np.diff(mid) > 0)
    assert F.timeout_share((LO + HI) / 2, BASE) == pytest.approx(0.5)  # uniform wait in [0, T]
    assert isinstance(F.timeout_share(3.0, BASE), float)
    # another geometry, and the batch_ms override (two owners: the 21.5 ms mean)
    other = BASE.with_(timeout_ms=300.0, batch_max_wait_ms=10.0, batch_ms=25.0)
    assert F.timeout_share((300 - 10 - 25) / 25 - 1e-9, other) == 0.0
    assert F.timeout_share((300 - 25) / 25, other) == 1.0
    assert F.timeout_share((M - 21.5) / 21.5, BASE, batch_ms=21.5) == 1.0


def test_retries_attempts_and_drift_levels():
    assert F.retries_per_request(BASE) == 1  # 300 ms patience, 200 ms timeout
    assert F.retries_per_request(BASE.with_(retry=RetryPolicy(max_attempts=4))) == 3
    assert F.retries_per_request(BASE.with_(retry=RetryPolicy(max_attempts=4, patience_ms=700))) == 3
    assert F.retries_per_request(BASE.with_(retry=RetryPolicy(max_attempts=1))) == 0
    assert F.attempt_rate(0.0, 720.0, BASE) == 720.0
    assert F.attempt_rate(HI, 720.0, BASE) == pytest.approx(1440.0)
    assert F.attempt_rate((LO + HI) / 2, 720.0, BASE) == pytest.approx(720.0 * 1.5)
    d = F.drift(np.array([0.0, HI, 30.0]), 720.0, BASE, MU)
    assert d[0] == pytest.approx(capacity.batcher_batch_rate(720.0) - MU)
    assert d[1] == d[2] == pytest.approx(capacity.batcher_batch_rate(1440.0) - MU)
    bounded = BASE.with_(queue_limit=20)
    assert F.drift(20.0, 720.0, bounded, MU) == 0.0  # the full queue cannot grow
    assert F.drift(25.0, 300.0, bounded, MU) < 0  # but it can drain


# --------------------------------------------------------------------------- (b) stuck growth
def test_stuck_growth_matches_the_simulated_queue_slope(stuck_runs):
    fp = F.fixed_points(720.0, BASE, MU)
    assert fp.stuck == math.inf
    sim = np.mean([_slope(r, 40.0, 85.0) for r in stuck_runs])
    print(f"stuck growth: fluid {fp.stuck_excess_per_s:.2f}, simulated {sim:.2f} batches/s")
    assert fp.stuck_excess_per_s == pytest.approx(sim, rel=0.10)
    assert not any(r.recovered for r in stuck_runs)


def test_two_owner_growth_matches_the_simulation(stuck_runs):
    """With two owners demand alone (47.5/s) exceeds capacity (46.5/s): no healthy state."""
    fp = F.fixed_points(720.0, BASE, MU2)
    assert fp.healthy is None and not fp.bistable and fp.stuck == math.inf
    sim = np.mean([_slope(r, 18.0, 28.0) for r in stuck_runs])
    print(f"two-owner growth: fluid {fp.stuck_excess_per_s:.2f}, simulated {sim:.2f} batches/s")
    assert fp.stuck_excess_per_s == pytest.approx(sim, rel=0.10)


# --------------------------------------------------------------------------- (c) drain time
@pytest.mark.parametrize("seed", SEEDS)
def test_drain_time_after_degrading_to_zero(seed):
    """100-ms windows so that the queue at 45 s and the moment it empties are read sharply."""
    sc = STUCK.with_(degrade=Window(45_000.0, 90_000.0, 0.0), window_ms=100.0)
    run = simulate(sc, engine="fast", seed=seed)
    t, q = run.windows["t"], run.windows["queue"]
    q0 = float(np.interp(45.0, t + 0.05, q))  # window averages sit at window centres
    tt, qq = F.integrate(q0, 0.0, BASE, MU, t_s=30.0, dt_s=0.01)
    fluid = float(tt[np.argmax(qq <= 0.0)])
    assert fluid == pytest.approx(q0 / MU, abs=0.011)
    after = (t >= 45.0) & (q < 0.5)
    assert after.any()
    sim = float(t[np.argmax(after)]) - 45.0
    print(f"seed {seed}: Q0 = {q0:.0f} batches, fluid drain {fluid:.2f} s, simulated {sim:.2f} s")
    assert abs(sim - fluid) <= 2.0


# --------------------------------------------------------------------------- (d) fixed points
def test_unstable_boundary_inside_the_ramp_at_the_peak():
    fp = F.fixed_points(720.0, BASE, MU)
    assert fp.ramp == pytest.approx((LO, HI))
    assert fp.healthy == 0.0 and fp.bistable
    assert LO < fp.unstable < HI
    assert F.drift(fp.unstable, 720.0, BASE, MU) == pytest.approx(0.0, abs=1e-6)
    # the boundary separates the two fates
    assert F.integrate(fp.unstable - 0.05, 720.0, BASE, MU, t_s=10.0)[1][-1] == 0.0
    assert F.integrate(fp.unstable + 0.05, 720.0, BASE, MU, t_s=10.0)[1][-1] > 50.0


def test_no_bistability_at_low_load():
    fp = F.fixed_points(300.0, BASE, MU)
    assert fp.healthy == 0.0
    assert fp.unstable is None and fp.stuck is None and fp.stuck_excess_per_s is None
    assert not fp.bistable
    assert F.integrate(30.0, 300.0, BASE, MU, t_s=5.0)[1][-1] == 0.0


def test_queue_bound_sets_the_stuck_state():
    at_20 = F.fixed_points(720.0, BASE.with_(queue_limit=20), MU)
    assert at_20.stuck == 20.0 and at_20.bistable and LO < at_20.unstable < HI
    t, q = F.integrate(15.0, 720.0, BASE.with_(queue_limit=20), MU, t_s=5.0)
    assert q.max() == 20.0 and q[-1] == 20.0
    # a bound below the ramp (the seed's QueueMaxSize rule) leaves nothing to time out: no storm
    at_6 = F.fixed_points(720.0, BASE.with_(queue_limit=6), MU)
    assert at_6.stuck is None and at_6.unstable is None and not at_6.bistable


# --------------------------------------------------------------------------- (e) bad input
@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: F.attempt_rate(0.0, -1.0, BASE), "lam"),
        (lambda: F.drift(0.0, -5.0, BASE, MU), "lam"),
        (lambda: F.fixed_points(-1.0, BASE, MU), "lam"),
        (lambda: F.drift(0.0, 720.0, BASE, 0.0), "capacity_per_s"),
        (lambda: F.fixed_points(720.0, BASE, 0.0), "capacity_per_s"),
        (lambda: F.integrate(1.0, 720.0, BASE, 0.0, t_s=1.0), "capacity_per_s"),
        (lambda: F.integrate(-1.0, 720.0, BASE, MU, t_s=1.0), "q0"),
        (lambda: F.timeout_share(-1.0, BASE), "q"),
        (lambda: F.timeout_share(1.0, "not a scenario"), "sc"),
        (lambda: F.retries_per_request(BASE.with_(retry=RetryPolicy())), "patience_ms"),
        (lambda: F.plot_phase_portrait(BASE, [], MU), "loads"),
        (lambda: F.plot_phase_portrait(BASE, [-3.0], MU), "loads"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --------------------------------------------------------------------------- (f) the portrait
def test_phase_portrait_draws_one_line_per_load():
    loads = [300.0, 600.0, 720.0]
    run = simulate(BASE.with_(user_rate_per_s=720.0, horizon_ms=8_000.0, window_ms=250.0,
                              slow_db=Window(3_000.0, 3_400.0, 3.0)), engine="fast", seed=0)
    for sc in (BASE, BASE.with_(queue_limit=25)):
        ax = F.plot_phase_portrait(sc, loads, MU, runs=[run])
        assert len(ax.fluid_lines) == len(loads)
        assert sum(line.get_label().startswith("λ =") for line in ax.lines) == len(loads)
        assert ax.get_xlim() == pytest.approx((0.0, 3 * M / N))
        assert ax.get_xlabel() == "queue (batches waiting)"
        assert ax.get_ylabel() == "queue growth (batches/s)"
        assert ax.collections  # the simulated points
        plt.close(ax.figure)
    _, ax = plt.subplots()
    assert F.plot_phase_portrait(BASE, [720.0], MU2, ax=ax, xmax=20.0) is ax
    assert ax.get_xlim() == pytest.approx((0.0, 20.0))
    plt.close(ax.figure)


# ---------------------------------------------------------------------- the band, and a drain from the bound
def test_band_edges_come_from_the_batcher_and_the_retries():
    """Notebook 04 §6: a storm sustains itself iff batcher_batch_rate((R + 1) λ) > μ. The lower edge
    solves it with equality, the upper edge is where the users alone reach μ; the fluid model
    agrees: bistable just inside the band, not just outside it."""
    from hotkeylab.metastable import lesson

    sc = BASE.with_(queue_limit=250)
    lo, hi = lesson.band_user_rates(sc, retries=1)
    assert capacity.batcher_batch_rate(2 * lo) == pytest.approx(MU, rel=1e-9)
    assert capacity.batcher_batch_rate(hi) == pytest.approx(MU, rel=1e-9)
    assert lo == pytest.approx(hi / 2)
    assert lo < MU * 20 / 2 < hi  # the full-batch hand rule μK/(R + 1) lies inside
    assert F.fixed_points(1.01 * lo, sc, MU).bistable
    assert not F.fixed_points(0.99 * lo, sc, MU).bistable
    assert F.fixed_points(0.99 * hi, sc, MU).bistable


def test_normal_load_drains_from_the_bound_as_the_fluid_model_says():
    """At 600/s (below the band) a queue left at the seed's bound of 250 by a slow database leaves
    the bound at once (production below μ, so almost nothing is rejected) and drains; the time is
    near the fluid model's 250 / |drift|, which counts R + 1 attempts and no rejections."""
    from hotkeylab.metastable import lesson

    res = lesson.drain_from_bound(seeds=range(3))
    sc = lesson.FULL_QUEUE_600
    assert np.all(res["queue_at_end"] > 0.95 * sc.queue_limit)
    assert res["drained"].all()
    fluid_s = sc.queue_limit / -F.drift(50.0, sc.user_rate_per_s, sc, MU)
    assert np.all(np.abs(res["drain_s"] / fluid_s - 1) < 0.35)
    assert np.all(res["rejected_after"] < 0.01 * sc.user_rate_per_s * fluid_s)
