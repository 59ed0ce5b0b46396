"""Reading a run: slopes, means and first crossings of its windowed series, and the share of
attempts that timed out against the queue. Each takes a run (or its ``windows`` mapping); times
are seconds, the window starts ``t``."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["windows_of", "window_mask", "slope", "mean_between", "first_time", "first_below",
           "timeout_share_vs_queue"]


def windows_of(run) -> dict:
    """The windowed arrays of a run (or a mapping that already is one)."""
    return run.windows if hasattr(run, "windows") else run


def window_mask(w, t0_s: float, t1_s: float) -> np.ndarray:
    """True for the windows of ``w`` starting in [t0_s, t1_s)."""
    t = np.asarray(w["t"])
    return (t >= t0_s) & (t < t1_s)


def slope(run, name: str, t0_s: float, t1_s: float) -> float:
    """Least-squares slope (per second) of series ``name`` over windows starting in [t0_s, t1_s)."""
    w = windows_of(run)
    m = window_mask(w, t0_s, t1_s)
    if m.sum() < 2:
        raise ValueError(f"t1_s must leave at least two windows after t0_s={t0_s:g}, got t1_s={t1_s!r}")
    t = np.asarray(w["t"])[m]
    return float(np.polyfit(t, np.asarray(w[name])[m], 1)[0])


def mean_between(run, name: str, t0_s: float, t1_s: float) -> float:
    """Mean of series ``name`` over windows starting in [t0_s, t1_s)."""
    w = windows_of(run)
    m = window_mask(w, t0_s, t1_s)
    if not m.any():
        raise ValueError(f"t1_s must leave at least one window after t0_s={t0_s:g}, got t1_s={t1_s!r}")
    return float(np.mean(np.asarray(w[name])[m]))


def _first(run, name: str, hit, after_s: float) -> float | None:
    w = windows_of(run)
    t = np.asarray(w["t"])
    idx = np.nonzero((t >= after_s) & hit(np.asarray(w[name])))[0]
    return float(t[idx[0]]) if len(idx) else None


def first_time(run, name: str, above: float, after_s: float = 0.0) -> float | None:
    """Start (s) of the first window at or after ``after_s`` where ``name`` exceeds ``above``."""
    return _first(run, name, lambda x: x > above, after_s)


def first_below(run, name: str, below: float, after_s: float = 0.0) -> float | None:
    """Start (s) of the first window at or after ``after_s`` where ``name`` is below ``below``."""
    return _first(run, name, lambda x: x < below, after_s)


def timeout_share_vs_queue(run, t0_s: float = 0.0, t1_s: float = math.inf) -> tuple[np.ndarray, np.ndarray]:
    """Per window in [t0_s, t1_s): (mean queue in batches, share of attempts that timed out)."""
    w = windows_of(run)
    m = window_mask(w, t0_s, t1_s) & (np.asarray(w["attempts"]) > 0)
    q = np.asarray(w["queue"])[m]
    share = np.asarray(w["timeouts"])[m] / np.asarray(w["attempts"])[m]
    return q, np.minimum(share, 1.0)
