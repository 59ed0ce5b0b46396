"""The committed verdicts (hotkeylab/data/verdicts_04.csv) are current and reproducible: every
experiment has 20 seeds, its fingerprint matches today's scenario, and re-running a sample of rows
gives the same numbers. A failure here means: run `make verdicts` and re-execute notebooks 04/04a."""

from __future__ import annotations

import csv
import math

import numpy as np
import pytest

from hotkeylab.metastable import verdicts


def _rows():
    with verdicts.DATA.open() as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def test_every_experiment_has_all_seeds_and_a_current_fingerprint():
    counts = verdicts.load()
    assert set(counts) == set(verdicts.EXPERIMENTS), "experiments without rows: run `make verdicts`"
    stale = [n for n, c in counts.items() if c.stale]
    assert not stale, f"stale rows (model or preset changed): {stale}; run `make verdicts`"
    for c in counts.values():
        assert c.n == verdicts.SEEDS


def _sample():
    """One seed per experiment, rotating through the seeds so that every seed index is covered."""
    names = list(verdicts.EXPERIMENTS)
    return [(n, k % verdicts.SEEDS) for k, n in enumerate(names)]


@pytest.mark.parametrize("name, seed", _sample(), ids=[f"{n}-{s}" for n, s in _sample()])
def test_a_sample_of_rows_reproduces_exactly(name, seed):
    stored = next(r for r in _rows() if r["experiment"] == name and int(r["seed"]) == seed)
    fresh = verdicts.run_row(name, seed)
    assert {k: str(v) for k, v in fresh.items()} == stored


def test_count_texts_say_knife_edge_between_the_ends():
    rec = np.array([True] * 9 + [False] * 11)
    z = np.zeros(20)
    c = verdicts.Count("x", "x", "recovery", rec, z, z, z, z, z, z * math.nan, False)
    assert c.text == "recovered in 9/20 seeds (knife-edge)" and c.knife_edge
    c0 = verdicts.Count("x", "x", "recovery", rec & False, z, z, z, z, z, z, False)
    assert c0.text == "stuck in 20/20 seeds" and not c0.knife_edge
    h = verdicts.Count("x", "x", "healthy", rec, z + 0.995, z, z, z, z, z, False)
    assert h.text == "healthy in 20/20 seeds"


def test_unknown_experiment_is_a_clear_error():
    with pytest.raises(ValueError, match="experiment"):
        verdicts.run_row("no_such_run", 0)


def test_seed_incident_verdicts_as_issue_16_requires():
    V = verdicts.load()
    assert V["seed"].k == 0  # stuck in 20/20
    for name in ("degraded", "short_degrade", "short_no_retries", "short_queue_limit_6"):
        assert V[name].k == V[name].n, name
