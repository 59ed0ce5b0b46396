"""10 · Capstone: your system. A team enters its own numbers once and gets the course's analysis.

Enter the numbers in a :class:`YourSystem` (a frozen dataclass, checked on creation), describe a
trigger with :class:`Trigger`, and call :func:`report`:

>>> from dataclasses import replace
>>> from hotkeylab.capstone import SYSTEM_A, Trigger, report
>>> mine = replace(SYSTEM_A, name="our ledger", normal_rate_per_s=400.0)
>>> r = report(mine, Trigger(), runs=False)       # closed forms only; runs=True adds the simulation
>>> round(r.capacity_per_s, 1), r.safe_queue_limit
(62.5, 6)

The report holds the lock hold and TPS ceiling (notebooks 01–02), the critical queue length M/N and
a safe QueueMaxSize (04 §3, §8), the bistable band of the retry policy in user requests/s and where
the normal load and the peak sit in it (04a), the closed form of the trigger (04 §1, 04a), and
runs of the trigger with and without the mitigations on the fast engine (a short clock: at most
120 s). :data:`CHECKLIST` collects the defences all five seeds teach, each with its notebook.

Only public APIs are used: :mod:`hotkeylab.capacity`, :mod:`hotkeylab.metastable` (``Scenario``,
``Window``, ``RetryPolicy``, ``PercentBudget``, ``simulate``, ``closed_forms``,
``effective_timeout_queue``) and its lesson helpers (``band_user_rates``, ``story``,
``small_multiples``), :mod:`hotkeylab.plotting`, :mod:`hotkeylab.validate`. Times are ms in
arguments (``*_ms``), seconds on plot axes and where a name ends in ``_s``.

Where to start reading: :mod:`.scenario` (:class:`YourSystem`, the inputs you fill in), then
:mod:`.closed_form` (:func:`predict`: the six comparisons) and :mod:`.model` (:func:`report`: the
prediction beside 20 random seeds of the simulation). :mod:`.figures` and :mod:`.lesson` serve the
notebook and load on first use.
"""

from __future__ import annotations

from ..lazy import lazy_exports
from .closed_form import (  # noqa: F401
    MIN_SEEDS,
    NEAR,
    VERDICTS,
    Condition,
    Prediction,
    attempts_after_rejection,
    band,
    mm1k_blocking,
    predict,
    safe_retries,
    scenario,
    turned_away_share,
    zone,
)
from .model import (  # noqa: F401
    Report,
    SimCount,
    add_runs,
    combine,
    report,
    variant_system,
)
from .scenario import (  # noqa: F401
    BUDGET,
    PEAK_START_S,
    SYSTEM_A,
    SYSTEM_B,
    TRIGGER_B,
    VARIANTS,
    ZONES,
    Trigger,
    YourSystem,
)

_LAZY = {
    "plot_zones": "figures",
    "plot_runs": "figures",
    "ChecklistItem": "lesson",
    "_NB": "lesson",
    "CHECKLIST": "lesson",
    "CONFIG_RULES": "lesson",
    "ConfigCheck": "lesson",
    "config_checks": "lesson",
    "checklist_markdown": "lesson",
    "Dashboard": "lesson",
    "dashboard_controls": "lesson",
    "FIELDS": "lesson",
    "FIELD_HELP": "lesson",
    "systems_markdown": "lesson",
}

__all__ = [
    "YourSystem",
    "Trigger",
    "Report",
    "SYSTEM_A",
    "SYSTEM_B",
    "TRIGGER_B",
    "BUDGET",
    "PEAK_START_S",
    "VARIANTS",
    "ZONES",
    "CHECKLIST",
    "ChecklistItem",
    "scenario",
    "report",
    "add_runs",
    "predict",
    "Prediction",
    "Condition",
    "SimCount",
    "combine",
    "variant_system",
    "turned_away_share",
    "attempts_after_rejection",
    "mm1k_blocking",
    "config_checks",
    "ConfigCheck",
    "CONFIG_RULES",
    "NEAR",
    "MIN_SEEDS",
    "VERDICTS",
    "band",
    "zone",
    "safe_retries",
    "plot_zones",
    "plot_runs",
    "checklist_markdown",
    "Dashboard",
    "dashboard_controls",
    "FIELDS",
    "FIELD_HELP",
    "systems_markdown",
]


# figures and notebook helpers load on first use (they import matplotlib)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
