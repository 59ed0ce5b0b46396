"""05 · A token-bucket limiter waited on while holding the global mutex (seed 004).

The incident: the access layer kept being OOM-killed and customers saw mass timeouts, yet little
traffic reached the business layer. The cause was a QPS limiter::

    if val, exist := rateMap.Load(key1); exist {        // fast path: no mutex
        return true, val.(*RateLimit).Taken(count)
    }
    Lock.Lock()
    defer Lock.Unlock()                                  // held until the function returns ...
    ...
    if val, exist := rateMap.Load(key2); exist {        // most production traffic ends here
        return true, val.(*RateLimit).Taken(count)      // ... so Taken waits under the mutex
    }

and ``Taken(count)`` waits for ``count`` tokens from a buffered channel, or gives up when a timer
of ``count × TimeDuration`` fires. Under the mutex a key2 request holds the lock for microseconds
while tokens are in the bucket, and for up to ``count × TimeDuration`` once the bucket is empty:
"a single-lane road where the one car on it keeps stopping at the toll booth".

Model (SimPy, one process function per actor):

- :func:`source` - Poisson user requests; each picks the key1 or the key2 path.
- :func:`request` - one goroutine per request: the rate-limit gate under one of three designs.
- :func:`refill` - the limiter's ticker goroutine: one token into the channel every ``1/r``.
- :class:`ChannelBucket` - the seed's ``RateLimit``: ``BucketCh`` (a :class:`TokenChannel`, a
  ``simpy.Container`` of up to ``burst`` identical tokens) and :meth:`ChannelBucket.taken`, the
  seed's ``Taken`` (``AnyOf(timer, token)``).
- :class:`ReservationLimiter` - reservation semantics (golang.org/x/time/rate, Guava): no ticker,
  a reservation computed at once, then a sleep that holds nothing.
- the global mutex is a :class:`Mutex`, a ``simpy.Resource(capacity=1)`` granting in arrival order.

Designs (``Scenario.design``):

- ``"seed"``: key2 takes the mutex, looks up, and calls ``Taken`` while still holding it.
- ``"fix"``: key2 looks the limiter up in the lock-free map (the mutex only guards creating a
  missing limiter, once) and calls ``Taken`` holding nothing.
- ``"reserve"``: as ``"fix"``, but the limiter reserves: if ``count`` tokens are available within
  the same ``count × TimeDuration`` budget, the request sleeps until then (holding nothing);
  otherwise it is refused at once, consuming nothing.

The client (assumed, the seed names no number): it gives up after ``client_timeout_ms``. Go's
``sync.Mutex`` cannot be cancelled and ``Taken`` does not watch the request's context, so the
goroutine stays blocked (and keeps its memory) after its client has gone; when it finally gets
its token it finds the context cancelled and the access layer drops it: the token is spent, the
business layer never sees the request (outcome ``CLIENT_GONE``).

Ledger: ``arrived = served (forwarded to the business layer while its client still waited)
+ timed_out (Taken's timer fired, or the client had gone when the request passed the gate)
+ rejected (refused at once) + in_system (still blocked when the run ends)``; ``extra`` splits
``timed_out`` into ``timer_fired`` and ``client_gone``.

The log: every request writes timestamped lines, as the seed's access layer would: ``access:
recv`` when it arrives, ``ratelimit: ...`` when the limiter code returns, ``proxy: ...`` when it
forwards or finds its client gone (:meth:`Run.log_lines`; :func:`log_gaps` reads them back).

Units: milliseconds in the API (``*_ms``), per second for rates (``*_per_s``); windowed arrays are
per second with window starts ``t`` in seconds.

Where to start reading: :mod:`.scenario` (the parameters, each with its seed sentence), then
:mod:`.model` (the gate, the users and one goroutine per request, then ``simulate``) and
:mod:`.limiters` (the seed's ``RateLimit`` and the reservation design). :mod:`.closed_form` holds
the formulas the tests check the model against; :mod:`.results` what a run returns;
:mod:`.figures` and :mod:`.lesson` serve the notebook and are imported only when first used, so
importing the model loads neither matplotlib nor ipywidgets.
"""

from __future__ import annotations

from ..lazy import lazy_exports
from . import closed_form, limiters, model, results, scenario
from .closed_form import *  # noqa: F403
from .limiters import *  # noqa: F403
from .model import *  # noqa: F403
from .results import *  # noqa: F403
from .scenario import *  # noqa: F403

# figures and notebook helpers load on first use (they import matplotlib)
_FIGURES = ("plot_lane", "plot_run", "plot_designs", "plot_convoy_vs_formula", "plot_sweep")
_LESSON = ("sweep_offered", "log_gaps", "pk_comparison", "per_machine_rho", "explore")
_LAZY = {**dict.fromkeys(_FIGURES, "figures"), **dict.fromkeys(_LESSON, "lesson")}

__all__ = [
    *scenario.__all__,
    *closed_form.__all__,
    *limiters.__all__,
    *results.__all__,
    *model.__all__,
    *_LAZY,
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
