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
:mod:`.experiments` the runs the notebook shows, :mod:`.wheel_demos` the wheel measured; :mod:`.figures`
and :mod:`.lesson` load on first use.
"""

from __future__ import annotations

from ..lazy import lazy_exports
from . import closed_form, experiments, machine, model, scenario, timer, wheel_demos
from .closed_form import *  # noqa: F403
from .experiments import *  # noqa: F403
from .machine import *  # noqa: F403
from .model import *  # noqa: F403
from .scenario import *  # noqa: F403
from .timer import *  # noqa: F403
from .wheel_demos import *  # noqa: F403

# figures and notebook helpers load on first use (they import matplotlib)
_FIGURES = ("plot_wheel", "plot_t0_timeline", "plot_t0_timelines", "plot_monitors", "plot_leak",
            "plot_cluster", "log_calls_axis", "plot_fixes")
_LAZY = {**dict.fromkeys(_FIGURES, "figures"), "explore": "lesson", "widget": "lesson"}

__all__ = [
    *scenario.__all__,
    *timer.__all__,
    *machine.__all__,
    *model.__all__,
    *closed_form.__all__,
    *experiments.__all__,
    *wheel_demos.__all__,
    *_LAZY,
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
