"""The verdict of a turn, measured or modelled: notebook 04's ``recovery`` read on 04's own clock.

Every time on the stack is 04's ×SCALE (N, M, intervals, windows), so 04's verdict block is too:
:data:`BLOCK_S`. :func:`verdict` judges a measured run and the model runs beside it alike.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..metastable import analysis
from ..metastable.analysis import recovery
from ..validate import check_number
from .scenario import SCALE

__all__ = ["BLOCK_S", "verdict", "measured_verdict"]

#: 04's verdict block on the stack's clock (s): 04's ``BLOCK_S`` ×SCALE, like every other time on the
#: stack (5 windows of 3 s). Measured runs and the model beside them are both judged by it (:func:`verdict`).
BLOCK_S = analysis.BLOCK_S * SCALE


def verdict(run, scale: float = SCALE) -> tuple[bool, float | None]:
    """04's ``recovery`` on 04's own clock: ``(recovered, seconds from the isolation, stack clock)``.

    ``run`` is a measured run or a model run on the scaled scenario. Its times are divided by
    ``scale`` before 04's ``recovery`` reads them, so 04's 5-s block (goodput ≥ 90% of offered in
    every block from some block on after the trigger) is ``5 × scale`` s here, and the time it
    returns is multiplied back. Shares (goodput / offered) do not change with the clock. ``scale=1``
    is ``recovery`` on the stack's clock itself: 5 s rounded to whole 3-s windows, 6 s."""
    s = check_number("scale", scale, low=0.5, high=20.0)
    sc = run.scenario
    trig = sc.trigger_window
    on_04 = SimpleNamespace(window_ms=sc.window_ms / s, warmup_ms=sc.warmup_ms / s,
                            trigger_window=None if trig is None else (trig[0] / s, trig[1] / s))
    status = getattr(run, "status", None)
    t_end_ms = sc.horizon_ms if status is None else status.t_end_ms
    shim = SimpleNamespace(truncated=bool(getattr(run, "truncated", False)), scenario=on_04,
                           windows={"t": np.asarray(run.windows["t"], dtype=float) / s,
                                    "goodput": run.windows["goodput"], "offered": run.windows["offered"]},
                           status=SimpleNamespace(t_end_ms=t_end_ms / s))
    rec, after_s = recovery(shim)
    return rec, None if after_s is None else after_s * s


def measured_verdict(run) -> tuple[bool, float | None]:
    """:func:`verdict` of a measured timeline: ``(recovered, seconds from the isolation)``."""
    return verdict(run)
