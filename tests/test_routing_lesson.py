"""Tests of notebook 03's lesson pieces added after the cold read (#19): its new exercises and figures."""

from __future__ import annotations

from dataclasses import replace

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from hotkeylab import capacity, routing  # noqa: E402
from hotkeylab.exercise_sets import nb03_split_routing as ex  # noqa: E402
from hotkeylab.exercises import check  # noqa: E402
from hotkeylab.routing import SEED_INCIDENT, SEED_TRANSIENT  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_timeout_threshold_exercise_needs_the_formula_not_the_seed_rule():
    n_c = max(SEED_INCIDENT.owners_ms)
    expected = (ex.C_ALONE_TIMEOUT_MS - SEED_INCIDENT.max_wait_ms - n_c) / n_c
    assert ex.timeout_queue_c() == pytest.approx(expected)
    assert check("03.timeout_queue_c", expected).ok
    result = check("03.timeout_queue_c", capacity.critical_queue_length(ex.C_ALONE_TIMEOUT_MS, n_c))
    assert not result.ok and "M/N" in result.message


def test_region_list_remap_uses_the_regions_list_size():
    n_b = ex.TWELVE_LAYOUT.count("B")
    assert ex.remap_region_list() == pytest.approx((n_b - 1) / n_b)
    assert check("03.remap_region_list", ex.remap_region_list()).ok
    n_all = len(ex.TWELVE_LAYOUT.servers)
    result = check("03.remap_region_list", (n_all - 1) / n_all)  # the global list's answer
    assert not result.ok and "global" in result.message
    # the simulation agrees with the closed form the exercise expects
    assert routing.remap_fraction(n_b, "modulo", n_keys=5000) == pytest.approx(ex.remap_region_list(), abs=0.02)


def test_three_dcs_exercise_routes_the_fallback_list():
    owners = routing.owners_by_dc(ex.THREE_DC_LAYOUT)
    assert set(owners) == {"A", "B", "C"}
    assert ex.THREE_DC_LAYOUT.count("A") == 0  # A's clients fall back to the whole list
    assert check("03.owners_three_dcs", len({s.name for s in owners.values()})).ok


def test_backlog_exercise_uses_the_larger_peak():
    """At +30% the backlog grows faster than at the seed's +20%, so timeouts come sooner, and the
    +20% answer printed earlier in the notebook is a named mistake."""
    assert ex.backlog_seconds() < ex._backlog_seconds_seed_peak()
    result = check("03.backlog_seconds", ex._backlog_seconds_seed_peak())
    assert not result.ok and "30%" in result.message


def test_band_map_left_panel_has_its_own_legend():
    po = routing.PER_OWNER
    shared_v = routing.band_verdicts(SEED_INCIDENT, [600.0], seeds=2, duration_s=5.0)
    c = 0.0175
    per_owner_v = [(c, v) for v in routing.band_verdicts(replace(po, split=(1 - c, c)), [500.0], seeds=2,
                                                          duration_s=5.0)]
    left, right = routing.plot_band_map(SEED_INCIDENT, po, shared_v, per_owner_v)
    labels = [t.get_text() for t in left.get_legend().get_texts()]
    assert any("variability" in s for s in labels) and any("fluid" in s for s in labels)
    assert "dormant" in left.get_xlabel() and "tipped" in left.get_xlabel()
    assert right.get_legend() is not None


def test_transient_figure_shows_both_means_apart():
    run = routing.simulate_transient(replace(SEED_TRANSIENT, horizon_ms=120_000.0, window_ms=1000.0), seed=0)
    ax = routing.plot_transient(run)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(f"{100 * run.share_key_time:.2f}%" in s for s in labels)  # the numbers are on the figure
    (inset,) = ax.child_axes
    assert inset.get_ylim()[1] < 0.5 * ax.get_ylim()[1]  # zoomed in on the two means


def test_backlog_exercise_prints_what_it_needs_and_names_the_rough_roads():
    """The answer divides by demand − capacity, a small difference: the approximation 1/(1/λ + T) and
    the seed's rounded 46 TPS are named mistakes, and the two-decimal printed inputs are accepted."""
    r_exact, r_approx = ex.peak30_batch_rates()
    lam = ex.PEAK_30 * SEED_INCIDENT.rate_per_s
    assert r_exact == pytest.approx(capacity.batcher_batch_rate(lam))
    assert r_approx < r_exact
    result = check("03.backlog_seconds", ex._backlog_seconds_approx_rate())
    assert not result.ok and "1/(1/λ + T)" in result.message
    result = check("03.backlog_seconds", ex._backlog_seconds_rounded_capacity())
    assert not result.ok and "46" in result.message
    threshold = round(ex._threshold_two_owners(), 2)
    cap = round(capacity.alternating_owners_tps(SEED_INCIDENT.owners_ms), 2)
    assert check("03.backlog_seconds", threshold / (round(r_exact, 2) - cap)).ok


def test_band_map_labels_of_one_share_do_not_stack():
    po = routing.PER_OWNER
    shared_v = routing.band_verdicts(SEED_INCIDENT, [600.0], seeds=2, duration_s=5.0)
    c = 0.05
    loads = [220.0, 240.0, 300.0]  # the first two within a factor 1.45: their labels go to opposite sides
    per_owner_v = [(c, v) for v in routing.band_verdicts(replace(po, split=(1 - c, c)), loads, seeds=2,
                                                          duration_s=5.0)]
    _, right = routing.plot_band_map(SEED_INCIDENT, po, shared_v, per_owner_v)
    sides = {a.xy[1]: a.get_ha() for a in right.texts}
    assert sides[220.0] != sides[240.0]
    assert all(a.get_bbox_patch() is not None for a in right.texts)
