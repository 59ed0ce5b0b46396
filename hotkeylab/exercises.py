"""Exercise checks for the notebooks: ``check(exercise_id, answer)`` returns specific feedback.

Each notebook's exercises live in their own module under :mod:`hotkeylab.exercise_sets` (one file
per notebook, e.g. ``nb01_hot_row.py``) and register themselves with :func:`exercise`. The expected
answers are computed by the package, never typed in.

>>> from hotkeylab.exercises import check
>>> check("02.tps_at_3ms", 100)          # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import math
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Feedback", "exercise", "check", "ids", "close_to"]

_REGISTRY: dict[str, Callable] = {}
_LOADED = False


@dataclass(frozen=True)
class Feedback:
    """The verdict on an answer: ``ok`` and a message saying why."""

    exercise_id: str
    ok: bool
    message: str

    def __str__(self) -> str:
        return f"{'✔ correct' if self.ok else '✘ not yet'} ({self.exercise_id}): {self.message}"

    __repr__ = __str__

    def _repr_markdown_(self) -> str:
        return f"{'✔ **correct**' if self.ok else '✘ **not yet**'} — {self.message}"

    def __bool__(self) -> bool:
        return self.ok


def exercise(exercise_id: str):
    """Decorator: register ``fn(answer) -> (ok, message)`` under ``exercise_id``."""

    def register(fn):
        if exercise_id in _REGISTRY:
            raise ValueError(f"exercise_id {exercise_id!r} is registered twice")
        _REGISTRY[exercise_id] = fn
        return fn

    return register


def _load(prefix: str | None = None) -> None:
    """Import the exercise sets: all of them, or only notebook ``prefix``'s (``"04a"`` loads
    ``nb04a_*.py``), so one notebook's checks do not depend on another notebook's set importing."""
    global _LOADED
    if _LOADED:
        return
    from . import exercise_sets

    for mod in pkgutil.iter_modules(exercise_sets.__path__):
        if prefix is None or mod.name.startswith(f"nb{prefix}_"):
            importlib.import_module(f"{exercise_sets.__name__}.{mod.name}")
    if prefix is None:
        _LOADED = True


def ids() -> list[str]:
    """Every registered exercise id."""
    _load()
    return sorted(_REGISTRY)


def check(exercise_id: str, answer) -> Feedback:
    """Check ``answer`` for ``exercise_id``; unknown ids raise ValueError listing the known ones."""
    if exercise_id not in _REGISTRY:
        _load(exercise_id.split(".", 1)[0])
    if exercise_id not in _REGISTRY:
        _load()
    if exercise_id not in _REGISTRY:
        raise ValueError(f"exercise_id must be one of {sorted(_REGISTRY)}, got {exercise_id!r}")
    ok, message = _REGISTRY[exercise_id](answer)
    return Feedback(exercise_id, bool(ok), message)


def as_number(answer) -> float | None:
    """The answer as a float, or None when it is not a number (NaN included): one parse for every
    checker, so ``"12"``, ``12`` and ``12.0`` are the same answer."""
    try:
        a = float(answer)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(a) else a


def close_to(answer, expected: float, *, rel: float = 0.02, unit: str = "", hint: str = ""):
    """Helper for numeric exercises: ``(ok, message)`` within relative tolerance ``rel``."""
    try:
        a = float(answer)
    except (TypeError, ValueError):
        return False, f"expected a number{f' in {unit}' if unit else ''}, got {answer!r}"
    if math.isnan(a):
        return False, "got NaN; compute a number"
    u = f" {unit}" if unit else ""
    if math.isclose(a, expected, rel_tol=rel, abs_tol=1e-12):
        return True, f"{a:g}{u} matches {expected:.4g}{u}."
    direction = "too high" if a > expected else "too low"
    return False, f"{a:g}{u} is {direction}. {hint}".strip()
