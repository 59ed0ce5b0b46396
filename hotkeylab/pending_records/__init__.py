"""06 · Pending-record collapse: a backlog inside the database takes the primary down (seed 000).

The seed's second incident ("当前模型的另一次故障重现"), a chain the author draws as::

    库存hotKey没有及时补充                       the inventory hot key is not replenished in time
    |- hotKey无法处理成功留下pending记录          orders on it fail and leave pending records
    |- pending记录累积过多导致批处理在有效时间内无法完成处理   the batch can't finish in its window
    |- hotKey补充完毕后 … 批处理扫描数据库超时      replenished, but the batch's scan times out
    |- 批处理产生的慢SQL在反复批处理之后累积巨量的慢SQL  slow SQL piles up run after run
    |- 数据库整体被拖垮导致主从切换                 the database is dragged down: failover
    |- 新主库重复类似行为                          the new primary does the same

"The same queue, only this time it accumulates in the database's records, not in a server's
queue" - and the same trigger: processing time > timeout.

Model (SimPy, one process function per actor the seed names):

- :func:`order_source` - orders on the inventory hot key; each creates a record that completes at
  once, or stays *pending* (occasionally when in stock; always when out of stock).
- :func:`replenisher` - the inventory runs out at ``stockout_ms`` and is replenished at
  ``replenish_ms``.
- :func:`batch_job` - every ``batch_period_ms`` starts a :func:`batch_run`: one scan of the pending
  records in a time range (no row limit in the seed's version: its cost grows with the backlog),
  then the rows fetched are retried in chunks. The run gives up after ``batch_timeout_ms``.
- :func:`slow_query` - the scan's SQL on the primary. A client-side timeout does not cancel it:
  it runs until it is done or the primary dies, whether or not its batch run still waits.
- :func:`business_traffic` / :func:`business_query` - the other business's queries on the same
  primary, with a client timeout.
- :class:`Database` - the primary as ``db_slots`` CPU slots: a query holds one slot until it
  finishes; the others wait in FIFO order (business queries and probes leave the queue when their
  client gives up; slow SQL does not).
- :func:`health_checker` - probes the primary; after ``health_failures`` probes in a row go
  unanswered within ``health_timeout_ms`` it declares the primary dead and fails over: every query
  on it is killed, the database is unavailable for ``failover_ms``, then a new primary with the same
  data (the pending records are replicated) and the same workload takes over.

Fixes (the seed's order): replenish (``replenish_ms``), stop the batch (``stop_batch_ms``), a row
limit per run (``limit_from_ms`` with ``fix_row_limit``); ``row_limit`` puts a limit on every run
from the start.

Ledgers: records ``created = completed + pending + cancelled`` (:class:`RecordLedger`; a pending
record older than ``order_expiry_ms`` is cancelled when the batch reaches it - our assumption, the
seed names no expiry; until then it stays in the table and in every scan) and business queries
``arrived = served + timed_out + rejected + in_system`` (:class:`hotkeylab.sim.Ledger`; rejected =
refused during a failover or killed by one).

Units: milliseconds in the API (``*_ms``), per second for rates (``*_per_s``); windowed arrays are
per second with window starts ``t`` in seconds.

Where to start reading: :mod:`.scenario` (the parameters, each with its seed sentence), then
:mod:`.model` (the actors, then ``simulate``) with :mod:`.database` (the primary's slots and the slow SQL)
and :mod:`.records` (the pending store and its ledger). :mod:`.closed_form` holds the formulas the
tests check the model against; :mod:`.figures` and :mod:`.lesson` serve the notebook and load on first use.
"""

from __future__ import annotations

from ..lazy import lazy_exports
from . import closed_form, database, model, records, results, scenario
from .closed_form import *  # noqa: F403
from .database import *  # noqa: F403
from .model import *  # noqa: F403
from .records import *  # noqa: F403
from .results import *  # noqa: F403
from .scenario import *  # noqa: F403

# figures and notebook helpers load on first use (they import matplotlib)
_FIGURES = ("plot_timeline", "plot_slow_sql", "mpl_line", "plot_fixes", "plot_scan_vs_backlog",
            "plot_consumption", "plot_business_loss")
_LAZY = {**dict.fromkeys(_FIGURES, "figures"), "explore": "lesson", "explore_controls": "lesson"}

__all__ = [
    *scenario.__all__,
    *records.__all__,
    *database.__all__,
    *model.__all__,
    *results.__all__,
    *closed_form.__all__,
    *_LAZY,
]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
