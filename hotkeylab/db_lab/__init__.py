"""01b · The hot row on a real database: a private MariaDB/InnoDB instance under the seed's transaction.

Notebook 01 models the hot row as a lock held for ``round trips × RTT + statements × SQL time``
(:func:`hotkeylab.capacity.lock_hold_ms`) and predicts that the row admits at most
``1000 / hold`` transactions per second however many threads push on it
(:func:`hotkeylab.capacity.tps_ceiling`). This module checks that against the real thing.

- :class:`Instance` starts a private ``mariadbd`` (temporary datadir, loopback only, a free port,
  no system service) and stops it by its pid file. A missing MariaDB raises
  :class:`MariaDBNotFound`, which says how to install it.
- :func:`run_experiment` runs the seed's transaction (seed 000, "SQL示意代码")::

      BEGIN;
      SELECT count FROM t_account WHERE account_id = 123 FOR UPDATE;   -- the row lock
      INSERT INTO t_trans VALUES (…), (…), …;                          -- batchInsert, 20 rows each
      UPDATE t_account SET count = count + <rows> WHERE account_id = 123;
      COMMIT;

  from ``threads`` client threads (PyMySQL, one connection each). The network is emulated on the
  client: a sleep of ``rtt_ms`` before every statement sent while the row lock is held (each
  INSERT, the UPDATE and the COMMIT), so the lock is held ``(inserts + 2)`` round trips, as it would
  be over a real link. That is notebook 01's account plus the INSERTs: the lock is taken when the
  SELECT executes and released when the COMMIT executes, so a real link holds it for the SELECT
  reply's way back (½ RTT), each INSERT (1), the UPDATE (1) and the COMMIT's way in (½); the sleeps
  place each whole RTT before a statement, which moves the half-trips but keeps their sum. Outside
  the lock a real link adds 2 RTT (``begin`` 1, the SELECT's way in ½, the COMMIT reply's way back
  ½); ``rtt_outside_lock=True`` sleeps one RTT before BEGIN and one before the SELECT for them. Each run records TPS, the measured hold (lock granted → COMMIT returned),
  the wait to acquire the lock, the COMMIT time, the measured length of the sleeps, and checks
  nothing was lost: rows the clients committed = the row's counter increase = rows in ``t_trans``.
- ``shared_row=False`` is the control: each worker updates its own row, so there is no hot row and
  TPS shows what the client and server can do without the lock.
- :func:`run_grid` sweeps threads × RTT × statements; ``python -m hotkeylab.db_lab`` (``make db-lab``)
  writes the results and the machine description to ``hotkeylab/data/db_lab_runs.csv`` and one run's
  lock grants and COMMIT returns to ``hotkeylab/data/db_lab_trace.csv``. Notebooks read those files
  (:func:`load_runs`, :func:`load_trace`) and run without a database.

Times are in ms in the API and the files. Two departures from the model are measured, not hidden:
InnoDB releases the row lock before the COMMIT's log flush returns to the client (see
:func:`early_release_fraction`), and ``time.sleep`` overshoots, so the model is fed the measured
sleep, not the nominal RTT.

Where to start reading: :mod:`.scenario` (:class:`Experiment`, the statement orders, the grid),
then :mod:`.model` (one client thread's transaction loop, :func:`run_experiment`) and
:mod:`.instance` (the private server). :mod:`.results` holds what a run measured and how runs are
picked, :mod:`.closed_form` the model beside the measurements, :mod:`.files` the committed CSVs,
``__main__`` the ``make db-lab`` command; :mod:`.figures` and :mod:`.lesson` serve the notebook and
load on first use (they import matplotlib).
"""

from __future__ import annotations

from ..lazy import lazy_exports
from . import closed_form, files, instance, model, results, scenario
from .closed_form import *  # noqa: F403
from .files import *  # noqa: F403
from .files import _loadavg  # noqa: F401  (stack_lab's machine description)
from .instance import *  # noqa: F403
from .instance import _LIVE, _SBIN, _which  # noqa: F401  (the tests patch and watch these)
from .model import *  # noqa: F403
from .results import *  # noqa: F403
from .scenario import *  # noqa: F403

# figures, the notebook's widget and the `make db-lab` command load on first use (matplotlib)
_LAZY = {
    "plot_tps_vs_threads": "figures",
    "plot_latency_vs_threads": "figures",
    "plot_trace": "figures",
    "plot_hold_budget": "figures",
    "what_if_orders": "lesson",
    "main": "__main__",
}

__all__ = [
    *scenario.__all__,
    *instance.__all__,
    *model.__all__,
    *results.__all__,
    *closed_form.__all__,
    *files.__all__,
    *(name for name in _LAZY if name != "main"),
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
