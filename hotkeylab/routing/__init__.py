"""03 · Split routing: region-filtered server lists give one hot key two owners (seed 000).

The seed's RPC client routes a hot key like this::

    allServerList = getAllServerListFromRegistry()
    serverList    = filterRegion(allServerList)          # only servers in the client's datacentre
    targetServer  = serverList[hash(hotKey) % serverList.size()]

The list is sorted by ip, so every client *in one datacentre* picks the same owner. But a client
in datacentre B and a client in datacentre C filter to different lists, so a hot key gets one owner
per datacentre that has servers: locally unique is not globally unique.

Four parts, each with its closed form beside it (:mod:`.closed_form`):

1. **Routing** (pure functions, :mod:`.serverlist`): :class:`Server`, :class:`Layout`,
   :func:`filter_region`, :func:`server_list`, :func:`owner_indices` (schemes ``modulo`` |
   ``consistent`` | ``rendezvous``), :func:`owners_by_dc`, :func:`owner_counts`.
2. **Remapping** when one of n servers leaves: :func:`remap_fraction` (measured over many keys)
   against :func:`remap_fraction_closed` (``(n−1)/n`` for modulo, ``1/n`` for consistent and
   rendezvous hashing).
3. **Transient dual ownership** while clients learn a new serverList (:mod:`.transient`: the
   actors :func:`registry` and :func:`client`, then :func:`simulate_transient`) against
   :func:`dual_owner_share_closed`.
4. **Owners sharing the hot row lock** (:mod:`.model`: the actors :func:`users`, :func:`batcher`
   and :func:`owner`, then :func:`simulate_lock`; ``engine="fast"`` computes the same run with
   numpy for sweeps, :mod:`.fast`) against
   :func:`capacity.alternating_owners_tps <hotkeylab.capacity.alternating_owners_tps>` and
   :func:`lock_throughput_closed`. Two batcher models: ``shared`` (the seed's simplification, one
   batcher dealing to the owners in turn) and ``per_owner`` (each owner batches its own region's
   clients, ``split`` between regions). :func:`lock_utilisation`, :func:`seed_band`,
   :func:`split_band` and :func:`timeout_share_closed` give where "dormant, then the peak tips it"
   holds; :func:`band_verdicts` counts it over seeds.

Hashes are stable across processes (BLAKE2b of the key's UTF-8 bytes), never Python's ``hash()``,
which is salted per process. Times are in milliseconds; rates per second.

Where to start reading: :mod:`.scenario` (the parameters and presets, each with its seed
sentence), :mod:`.serverlist` (how a client picks the owner), then :mod:`.model` (the lock's actors
top to bottom, then ``simulate_lock``) and :mod:`.transient` (the registry and the polling
clients). :mod:`.closed_form` holds the formulas the tests check the models against;
:mod:`.results` the run records; :mod:`.fast` the numpy engine for sweeps; :mod:`.figures` and
:mod:`.lesson` serve the notebook and load on first use.
"""

from __future__ import annotations

from ..lazy import lazy_exports
from .closed_form import (  # noqa: F401
    critical_rate_per_s,
    demand_batches_per_s,
    dual_owner_share_closed,
    healthy_rate_per_s,
    lock_throughput_closed,
    lock_utilisation,
    mean_commit_ms,
    owner_batch_rates,
    remap_fraction_closed,
    seed_band,
    split_band,
    timeout_queue,
    timeout_share_closed,
)
from .fast import band_verdicts, simulate_lock_fast  # noqa: F401
from .model import LockState, OpenBatch, batcher, owner, simulate_lock, users  # noqa: F401
from .results import BandVerdict, LockRun, TransientRun  # noqa: F401
from .scenario import (  # noqa: F401
    BATCHERS,
    HEALTHY_SHARE,
    HOT_KEY,
    ONE_OWNER,
    PER_OWNER,
    ROUTINGS,
    SCHEMES,
    SEED_BATCH_MS,
    SEED_INCIDENT,
    SEED_TRANSIENT,
    LockScenario,
    TransientScenario,
)
from .serverlist import (  # noqa: F401
    SEED_LAYOUT,
    Layout,
    Server,
    deployment_check,
    filter_region,
    hot_key_tps,
    isolate_owner,
    key_hashes,
    make_layout,
    owner_counts,
    owner_indices,
    owners_by_dc,
    remap_fraction,
    route,
    server_list,
    sort_by_ip,
    stable_hash,
)
from .transient import TransientState, client, registry, simulate_transient  # noqa: F401

_LAZY = {
    "SCHEME_STYLE": "figures",
    "plot_owner_view": "figures",
    "plot_band_map": "figures",
    "plot_transient": "figures",
    "OwnerView": "lesson",
    "owner_view": "lesson",
    "explore": "lesson",
    "explore_transient": "lesson",
    "FixRow": "lesson",
    "compare_fixes": "lesson",
}

__all__ = [
    "SCHEMES",
    "SCHEME_STYLE",
    "ROUTINGS",
    "Server",
    "Layout",
    "make_layout",
    "SEED_LAYOUT",
    "SEED_BATCH_MS",
    "HOT_KEY",
    "stable_hash",
    "key_hashes",
    "sort_by_ip",
    "filter_region",
    "server_list",
    "owner_indices",
    "route",
    "owners_by_dc",
    "owner_counts",
    "isolate_owner",
    "deployment_check",
    "hot_key_tps",
    "remap_fraction",
    "remap_fraction_closed",
    "TransientScenario",
    "SEED_TRANSIENT",
    "TransientRun",
    "TransientState",
    "registry",
    "client",
    "simulate_transient",
    "dual_owner_share_closed",
    "BATCHERS",
    "LockScenario",
    "SEED_INCIDENT",
    "ONE_OWNER",
    "PER_OWNER",
    "LockRun",
    "LockState",
    "OpenBatch",
    "users",
    "batcher",
    "owner",
    "simulate_lock",
    "simulate_lock_fast",
    "demand_batches_per_s",
    "owner_batch_rates",
    "lock_utilisation",
    "mean_commit_ms",
    "timeout_queue",
    "critical_rate_per_s",
    "timeout_share_closed",
    "healthy_rate_per_s",
    "seed_band",
    "split_band",
    "lock_throughput_closed",
    "HEALTHY_SHARE",
    "BandVerdict",
    "band_verdicts",
    "OwnerView",
    "owner_view",
    "plot_owner_view",
    "explore",
    "plot_band_map",
    "plot_transient",
    "explore_transient",
    "FixRow",
    "compare_fixes",
]

# figures and notebook helpers load on first use (they import matplotlib)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
