"""08 · Lost timeouts: when timeout tasks cannot run, in-flight calls pile up until the heap is full
(seed 002).

The incident: several machines of service B hung one night; memory and full-GC time had risen on
them, and the remaining B machines took a surge of requests at a higher latency. B's log held::

    [dubbo-future-timeout-thread-1] WARN ...HashedWheelTimer$HashedWheelTimeout
    -  [DUBBO] An exception was thrown by TimerTask., dubbo version: 2.7.12, ...
    java.util.concurrent.RejectedExecutionException: Task ...DefaultFuture$TimeoutCheckTask$$Lambda...
    rejected from java.util.concurrent.ThreadPoolExecutor@...[Terminated, pool size = 0, ...]

The seed traces it to dubbo issue 8172 / PR 8188 (a bug it dates to 2.7.10 and fixed in 2.7.13).
In 2.7.12, ``DefaultFuture.closeChannel`` (run when a connection to a provider closes) shuts down
the executor of every future still pending on that channel, then fails the future. An
asynchronous call's future holds the consumer's shared executor, so after an abrupt exit with
calls in flight, every later timeout task is rejected; ``HashedWheelTimeout.expire()`` catches the
exception and only logs it. A call whose provider answers still completes; a call to a provider
that hangs (process alive, never answers) never completes, and its future stays in memory. A
synchronous call's future holds its own ``ThreadlessExecutor`` (the shared one is never shut
down); a graceful removal waits for the channel's pending calls to drain before it closes it. The
seed's three conditions (asynchronous calls, an abrupt provider exit, a hung provider) come out of
these mechanisms, not from a branch on them.

dubbo has two consumer executors (a global one, then ``SHARED_EXECUTOR``); the model merges them
into one. The model's death threshold (``DEAD_GC_SHARE``) is ours; the JVM's GC overhead limit is
checked separately (``jvm_oom_s``).

Model (one SimPy process function per actor):

- :func:`consumer` - one machine of service B: upstream requests arrive (Poisson); each request B
  serves makes one call to service C, registers its future and a timeout in the timing wheel.
- :func:`provider` - one machine of service C: answers after a service time, unless it has exited
  or hangs; its process plays its lifecycle (a stall, then an abrupt or graceful exit; or a hang).
- :func:`timer_worker` - the wheel's worker thread: ticks every ``tick_ms`` and expires due timeouts.
- :func:`executor_worker` - the shared executor that runs the timeout notifications.
- :func:`gc` - the JVM heap and its collector: live data sets the share of time spent in full GC,
  which takes CPU and serving capacity away from the machine.
- :class:`HashedWheelTimer` - the timing wheel itself (tick 30 ms, 512 slots in dubbo's
  ``DefaultFuture`` timer), a real small data structure: add, cancel, expire, rounds.

Closed forms beside it: Little's law for the healthy in-flight count (``λ × W``, bounded by
``λ × (timeout + tick)``), the leak ``λ_hung × t``, the GC share ``k u / (1 − u)`` and a fluid
model (:func:`fluid`) that integrates them with the GC feedback, fast enough for the widget.

Ledger of calls to C: ``arrived = served (answered) + timed_out (the timeout task ran) + rejected
(refused by an outstanding-call cap, failed on a closed connection, or no provider left) +
in_system (futures still pending)``.

Units: milliseconds in the API (``*_ms``), rates per second (``*_per_s``), memory in MB (``*_mb``)
or KB (``*_kb``); windows and samples carry time ``t`` in seconds.

Where to start reading: :mod:`.scenario` (the parameters, each with its seed sentence), then
:mod:`.model` (the actors: consumer, provider, the timer's worker, GC, then ``simulate``), with
:mod:`.machine` (the B machine's state: calls, executors, ``close_channel``) and :mod:`.timer`
(dubbo's hashed wheel). :mod:`.closed_form` holds the formulas the tests check the model against;
:mod:`.experiments` the runs the notebook shows; :mod:`.figures` and :mod:`.lesson` load on first use.
"""

from __future__ import annotations

from ..lazy import lazy_exports
from .closed_form import (  # noqa: F401
    fluid,
    gc_fraction,
    healthy_bound,
    healthy_in_flight,
    heap_fraction_at_gc,
    leak_rate_per_s,
    leak_start,
    leaked_calls,
    p_shutdown_at_kill,
    wheel_rounds,
    wheel_span_ms,
)
from .experiments import (  # noqa: F401
    alert_time_s,
    assumption_ranges,
    cluster_view,
    compare_fixes,
    conditions_table,
    demo_wheel,
    measure_lateness,
    measure_tick_work,
    shutdown_count,
    t0_experiment,
)
from .machine import (  # noqa: F401
    Machine,
    RejectedExecution,
)
from .model import (  # noqa: F401
    Run,
    consumer,
    executor_worker,
    gc,
    provider,
    simulate,
    timer_worker,
)
from .scenario import (  # noqa: F401
    DEAD_GC_SHARE,
    DUBBO_SLOTS,
    DUBBO_TICK_MS,
    EXIT_KINDS,
    FIX_LABELS,
    FIXES,
    GRACEFUL_WAIT_MS,
    HEALTHY,
    JVM_GC_HEAP_FREE_LIMIT,
    JVM_GC_TIME_LIMIT,
    MODES,
    SEED_INCIDENT,
    Scenario,
)
from .timer import (  # noqa: F401
    HashedWheelTimer,
    WheelTimeout,
)

_LAZY = {
    "plot_wheel": "figures",
    "plot_t0_timeline": "figures",
    "plot_t0_timelines": "figures",
    "plot_monitors": "figures",
    "plot_leak": "figures",
    "plot_cluster": "figures",
    "log_calls_axis": "figures",
    "plot_fixes": "figures",
    "explore": "lesson",
    "widget": "lesson",
}

__all__ = [
    "DUBBO_TICK_MS",
    "DUBBO_SLOTS",
    "MODES",
    "EXIT_KINDS",
    "FIXES",
    "FIX_LABELS",
    "DEAD_GC_SHARE",
    "JVM_GC_TIME_LIMIT",
    "JVM_GC_HEAP_FREE_LIMIT",
    "GRACEFUL_WAIT_MS",
    "leak_start",
    "p_shutdown_at_kill",
    "t0_experiment",
    "plot_t0_timeline",
    "assumption_ranges",
    "shutdown_count",
    "WheelTimeout",
    "HashedWheelTimer",
    "RejectedExecution",
    "Scenario",
    "SEED_INCIDENT",
    "HEALTHY",
    "Run",
    "consumer",
    "provider",
    "timer_worker",
    "executor_worker",
    "gc",
    "simulate",
    "wheel_rounds",
    "wheel_span_ms",
    "healthy_in_flight",
    "healthy_bound",
    "leak_rate_per_s",
    "leaked_calls",
    "gc_fraction",
    "heap_fraction_at_gc",
    "fluid",
    "conditions_table",
    "compare_fixes",
    "alert_time_s",
    "cluster_view",
    "demo_wheel",
    "measure_lateness",
    "plot_wheel",
    "plot_monitors",
    "plot_leak",
    "plot_cluster",
    "plot_fixes",
    "explore",
    "widget",
    "Machine",
]


# figures and notebook helpers load on first use (they import matplotlib)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
