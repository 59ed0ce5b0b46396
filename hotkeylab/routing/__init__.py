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
clients); both draw their Poisson streams through the kernel's :class:`hotkeylab.sim.PoissonSource`
(the lock model keeps its own batcher: :mod:`hotkeylab.batcher` says why).
:mod:`.closed_form` holds the formulas the tests check the models against;
:mod:`.results` the run records; :mod:`.fast` the numpy engine for sweeps; :mod:`.figures` and
:mod:`.lesson` serve the notebook and load on first use.
"""

from __future__ import annotations

from ..lazy import lazy_exports
from . import closed_form, fast, model, results, scenario, serverlist, transient
from .closed_form import *  # noqa: F403
from .fast import *  # noqa: F403
from .model import *  # noqa: F403
from .results import *  # noqa: F403
from .scenario import *  # noqa: F403
from .serverlist import *  # noqa: F403
from .transient import *  # noqa: F403

# figures and notebook helpers load on first use (they import matplotlib)
_FIGURES = ("SCHEME_STYLE", "plot_owner_view", "plot_band_map", "plot_transient")
_LESSON = ("explore", "explore_transient", "FixRow", "compare_fixes")
_LAZY = {**dict.fromkeys(_FIGURES, "figures"), **dict.fromkeys(_LESSON, "lesson")}

__all__ = [
    *scenario.__all__,
    *serverlist.__all__,
    *closed_form.__all__,
    *transient.__all__,
    *model.__all__,
    *fast.__all__,
    *results.__all__,
    *_LAZY,
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
