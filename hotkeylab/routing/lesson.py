"""03 · Notebook helpers: the owner-view widget, the transient widget, the fixes table."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import matplotlib.pyplot as plt
import numpy as np

from .. import capacity
from ..validate import check_int, check_number
from .figures import plot_owner_view, plot_transient
from .results import TransientRun
from .scenario import SEED_BATCH_MS, SEED_TRANSIENT
from .serverlist import (
    SEED_LAYOUT,
    Layout,
    OwnerView,
    deployment_check,
    filter_region,
    hot_key_tps,
    key_hashes,
    make_layout,
    owner_counts,
    owner_indices,
    owner_view,
    server_list,
)
from .transient import simulate_transient


def explore(
    n_b: int = 4, n_c: int = 3, isolate_rounds: int = 0, scheme: str = "modulo", routing: str = "region",
    load_per_s: float = 720.0,
) -> OwnerView:
    """Widget callback: draw the owner picture for ``n_b`` servers in B and ``n_c`` in C and
    return the :class:`OwnerView` (its summary says whether the lock keeps up at ``load_per_s``)."""
    nb = check_int("n_b", n_b, low=0, high=12)
    nc = check_int("n_c", n_c, low=0, high=12)
    if nb + nc == 0:
        raise ValueError("n_b + n_c must be at least 1 (servers to route to), got 0")
    layout = make_layout({"B": nb, "C": nc}, client_dcs=("B", "C"), primary_dc="B")
    rounds = min(check_int("isolate_rounds", isolate_rounds, low=0), nb + nc - 1)
    view = owner_view(layout, isolate_rounds=rounds, routing=routing, scheme=scheme, load_per_s=load_per_s)
    plot_owner_view(view)
    plt.show()
    return view


def explore_transient(poll_ms: float = 2000.0, changes_per_min: float = 2.0, scheme: str = "modulo",
                      seed: int = 0) -> TransientRun:
    """Widget callback: 10 minutes of serverList changes reaching 20 polling clients (windows of
    1 s); draws :func:`plot_transient` and returns the run (its summary prints the shares)."""
    sc = replace(SEED_TRANSIENT, poll_ms=poll_ms, changes_per_min=changes_per_min, scheme=scheme,
                 horizon_ms=600_000.0, window_ms=1000.0)
    run = simulate_transient(sc, seed)
    plot_transient(run)
    plt.show()
    return run


@dataclass(frozen=True)
class FixRow:
    """One fix evaluated over many hot keys."""

    name: str
    mean_owners: float
    share_split: float       # keys with more than one owner
    share_in_primary: float  # keys whose only owner is in the primary's datacentre
    min_tps: float           # worst key's merged commits/s
    share_backlog: float     # keys whose lock capacity is below the demand
    moved_on_isolation: float  # keys that change owner when one server of the primary's DC leaves


def compare_fixes(
    layout: Layout = SEED_LAYOUT, n_keys: int = 2000, load_per_s: float = 720.0,
    batch_ms: Mapping[str, float] = SEED_BATCH_MS, vnodes: int = 100,
) -> list[FixRow]:
    """The seed's routing and its fixes, each evaluated on ``n_keys`` hot keys of ``layout``."""
    k = check_int("n_keys", n_keys, low=1, high=1_000_000)
    demand = capacity.batcher_batch_rate(check_number("load_per_s", load_per_s, low=0.0, low_open=True))
    keys = [f"account:{i}" for i in range(k)]
    checked = layout.without(s.name for s in deployment_check(layout))
    cases = [
        ("seed: filterRegion lists", layout, "region", "modulo"),
        ("route on the global list", layout, "global", "modulo"),
        ("pin owners to the primary's DC", layout, "primary", "modulo"),
        ("deployment check (巡检) removes C", checked, "region", "modulo"),
        ("pin + consistent hashing", layout, "primary", "consistent"),
    ]
    h = key_hashes(keys)
    rows = []
    for name, lay, routing, scheme in cases:
        per_dc = []
        for dc in lay.client_dcs:
            lst = server_list(lay, dc, routing)
            per_dc.append([lst[i] for i in owner_indices(h, lst, scheme, vnodes)])
        counts = owner_counts(lay, keys, routing, scheme, vnodes)
        tps = np.array([hot_key_tps([col[i] for col in per_dc], batch_ms) for i in range(k)])
        in_primary = np.array([all(col[i].dc == lay.primary_dc for col in per_dc) and counts[i] == 1
                               for i in range(k)])
        # isolate each server of the primary's DC in turn; share of keys that move (any client DC)
        moved_shares = []
        for victim in filter_region(lay.servers, lay.primary_dc):
            after = lay.without([victim.name])
            moved = np.zeros(k, dtype=bool)
            for j, dc in enumerate(lay.client_dcs):
                lst = server_list(after, dc, routing)
                new = [lst[i] for i in owner_indices(h, lst, scheme, vnodes)]
                moved |= np.array([a.name != b.name for a, b in zip(per_dc[j], new, strict=True)])
            moved_shares.append(moved.mean())
        rows.append(FixRow(name, float(counts.mean()), float(np.mean(counts > 1)), float(in_primary.mean()),
                           float(tps.min()), float(np.mean(tps < demand)), float(np.mean(moved_shares))))
    return rows
