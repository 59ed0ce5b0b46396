"""07 · Gateway cascade: a client release, a hot cache shard, and penetration to MySQL (seed 001).

The incident (JD 京麦 API gateway, a Saturday morning in 2015): a new client release polled the
order API every 5 s; as installs grew the gateway peaked at 1.9 million calls per minute. The
alarms came in this order: gateway performance (interfaces time out), gateway availability, Jimdb
(Redis) failover again and again, Jimdb connection lost, (DBA scales Jimdb up) Jimdb recovers,
gateway CPU surges and servers go down. Jstack then showed constant young GC, Jmap a SQL that scans
a MySQL table in full. The postmortem's four problems:

1. monitoring (performance and error counters) is written to Jimdb; the call surge makes one shard
   hot; it fails over again and again;
2. call logs go through JMQ to Elasticsearch; JMQ connections run short, messages pile up, the
   sending threads push the thread count up and the JVM into frequent young GC;
3. the access layer's defence checks (token and pin) read Jimdb; when Jimdb is unavailable the code
   goes *through* it to MySQL, which collapses;
4. a parameter-loss bug in the defence layer turns a query into a full-table scan: the last straw.

Model: a **time-stepped** simulation (one step = ``step_ms``, a fixed number of ``steps``) in which
one module-level function per actor the postmortem names runs each step, in a fixed order: the
DBA's scale-up and the login block (:func:`dba_scaleup`, :func:`release_block`), the clients
(:func:`clients_step`), admission (:func:`admission`, :func:`token_bucket_step`), the hosts'
restarts (:func:`hosts_restart`), the gateway's access queue (:func:`gateway`, :func:`access_step`),
jimdb (:func:`cache_lookups`, :func:`jimdb_step`), the penetration to MySQL (:func:`penetration`),
the full-table scan (:func:`full_table_scan`), MySQL (:func:`gateway_db`, :func:`mysql_step`), the
calls' fate (:func:`call_fate`, :func:`mean_latency_ms`), the call logs and the JVMs
(:func:`call_logs`, :func:`log_sender_step`, :func:`jvm_step`, :func:`host_crashes`), the gauges and
the alarms (:func:`gauges`, :func:`alarms_step`); :func:`simulate` wires them together in code: clients → access layer (defence
checks, dispatch) → Jimdb hot shard / app layer → MySQL; monitoring → Jimdb; call logs → JMQ → ES;
the fallback *Jimdb unavailable → MySQL*. :data:`GATEWAY_GRAPH` describes the same dependencies for
the drawing (:func:`plot_graph`) only; the simulation does not read it. The seed draws Poisson
arrivals and the load balancer's uneven host weights.

The last straw (问题四) is modelled as a mechanism: a lost parameter turns a fallback lookup into a
full-table scan; MySQL runs every scan it accepts (a caller's timeout does not stop it) and the scan's
rows stream into the issuing host's heap (``state._Scans``), where the bounded log queue already
holds most of the room. The scans keep MySQL saturated (down, for its callers) after Jimdb recovers,
and their rows finish off the hosts.

Fixes (:class:`Fixes`, switches; parameters in :class:`Scenario`): the postmortem's five numbered
fixes (解决问题一 … 五: degrade monitoring; degrade logging; local JVM cache, the code-bug fix and
split Jimdb clusters; token-bucket admission; check the SQL for full scans; six switches here, as
the code-bug fix and the SQL check are one switch and the local cache is a hit ratio), the block of
the release at login (how the flood actually drained, 想一想), and two standard hot-key defences:
request coalescing (singleflight) and negative caching.

Ledger (requests): ``arrived = served + timed_out (waited too long in the access queue, or failed at a
dependency) + rejected (token bucket) + in_system (access queue at the end)``. Every node also keeps
its own flows (``in = out + dropped + Δstored``) in :attr:`Run.flows`.

Units: milliseconds in the API (``*_ms``), rates per second (``*_per_s``); windowed arrays have one
entry per step with ``t`` in seconds; plots use minutes because the incident lasts hours.

Where to start reading: :mod:`.scenario` (the parameters, each with its seed sentence, and the
fixes), then :mod:`.model` (the actors in step order, then ``simulate``) with :mod:`.hosts` (logs,
JVMs, gauges), :mod:`.alarms` (the alarms and the people reacting to them) and :mod:`.state` (what
carries over between steps); :mod:`.results` holds the named per-step columns and :class:`Run`.
:mod:`.closed_form` and :mod:`.plateau` (a whole scenario at its plateau) hold the formulas the
tests check the model against, :mod:`.hot_key` the request-level check of coalescing,
:mod:`.experiments` the sweeps; :mod:`.figures` and :mod:`.lesson` serve the notebook and load on
first use.
"""

from __future__ import annotations

from ..lazy import lazy_exports
from .alarms import (  # noqa: F401
    alarms_step,
    dba_scaleup,
    order_decided,
    release_block,
)
from .closed_form import (  # noqa: F401
    backlog_growth_per_s,
    calls_per_min,
    clients_for_calls_per_min,
    coalesced_rate_per_s,
    coalesced_utilisation,
    hours_to_backlog,
    mm1_latency_ms,
    shard_load_per_s,
    ttl_hit_ratio,
)
from .experiments import (  # noqa: F401
    FixComparison,
    OrderMap,
    alarm_order_map,
    compare_fixes,
    default_variants,
)
from .graph import (  # noqa: F401
    GATEWAY_GRAPH,
    Edge,
    Graph,
    Node,
)
from .hosts import (  # noqa: F401
    call_logs,
    gauges,
    host_crashes,
    hosts_restart,
    jvm_step,
    log_sender_step,
)
from .hot_key import (  # noqa: F401
    MAX_ARRIVALS,
    KeyFetches,
    simulate_key_fetches,
)
from .model import (  # noqa: F401
    access_step,
    admission,
    cache_lookups,
    call_fate,
    clients_step,
    full_table_scan,
    gateway,
    gateway_db,
    jimdb_step,
    mean_latency_ms,
    mysql_step,
    penetration,
    simulate,
    token_bucket_step,
)
from .plateau import (  # noqa: F401
    heap_fill_s,
    peak_loads,
    young_gc_per_s,
)
from .results import (  # noqa: F401
    FlowLog,
    Run,
    StepLog,
    node_utilisation,
)
from .scenario import (  # noqa: F401
    ALARM_TEXT,
    COMPONENTS,
    FIX_LABELS,
    FIX_NAMES,
    FIX_TARGETS,
    LOCAL_CACHE_FIX_HIT,
    MAX_HOST_STEPS,
    MAX_STEPS,
    MAX_UTIL,
    MIN_MS,
    SEED_ALARM_ORDER,
    SEED_FIX_NAMES,
    SEED_INCIDENT,
    Fixes,
    Scenario,
    installs_at,
    with_fixes,
)
from .state import (  # noqa: F401
    World,
)

_LAZY = {
    "plot_order_map": "figures_map",
    "plot_graph": "figures",
    "plot_graph_moments": "figures",
    "plot_timelines": "figures",
    "plot_fixes": "figures",
    "plot_compact": "figures",
    "explore": "lesson",
}

__all__ = [
    "alarms_step",
    "dba_scaleup",
    "order_decided",
    "release_block",
    "backlog_growth_per_s",
    "calls_per_min",
    "clients_for_calls_per_min",
    "coalesced_rate_per_s",
    "coalesced_utilisation",
    "heap_fill_s",
    "hours_to_backlog",
    "mm1_latency_ms",
    "peak_loads",
    "shard_load_per_s",
    "ttl_hit_ratio",
    "young_gc_per_s",
    "FixComparison",
    "OrderMap",
    "alarm_order_map",
    "compare_fixes",
    "default_variants",
    "GATEWAY_GRAPH",
    "Edge",
    "Graph",
    "Node",
    "call_logs",
    "gauges",
    "host_crashes",
    "hosts_restart",
    "jvm_step",
    "log_sender_step",
    "KeyFetches",
    "MAX_ARRIVALS",
    "simulate_key_fetches",
    "access_step",
    "admission",
    "cache_lookups",
    "call_fate",
    "clients_step",
    "full_table_scan",
    "gateway",
    "gateway_db",
    "jimdb_step",
    "mean_latency_ms",
    "mysql_step",
    "penetration",
    "simulate",
    "token_bucket_step",
    "FlowLog",
    "Run",
    "StepLog",
    "node_utilisation",
    "ALARM_TEXT",
    "COMPONENTS",
    "FIX_LABELS",
    "FIX_NAMES",
    "FIX_TARGETS",
    "LOCAL_CACHE_FIX_HIT",
    "MAX_HOST_STEPS",
    "MAX_STEPS",
    "MAX_UTIL",
    "MIN_MS",
    "SEED_ALARM_ORDER",
    "SEED_FIX_NAMES",
    "SEED_INCIDENT",
    "Fixes",
    "Scenario",
    "installs_at",
    "with_fixes",
    "World",
    "plot_order_map",
    "plot_graph",
    "plot_graph_moments",
    "plot_timelines",
    "plot_fixes",
    "plot_compact",
    "explore",
]


# figures and notebook helpers load on first use (they import matplotlib)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
