"""Exercise checks for the notebooks: ``check(exercise_id, answer)`` returns specific feedback.

Each notebook's exercises live in their own module under :mod:`hotkeylab.exercise_sets` (one file
per notebook, e.g. ``nb01_hot_row.py``) and register themselves with :func:`exercise`. The expected
answers are computed by the package, never typed in.

Most exercises ask for one number: :func:`numeric` registers the function that computes it, and
states only what differs from one exercise to the next (tolerance, unit, hint, and the known wrong
answers that deserve their own feedback, as :class:`Mistake`). Exercises with other answers (whole
numbers, choices) register a checker with :func:`exercise`.

>>> from hotkeylab.exercises import check
>>> check("02.tps_at_3ms", 100)          # doctest: +SKIP
"""

from __future__ import annotations

import importlib
import math
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["Feedback", "Mistake", "exercise", "numeric", "check", "ids", "close_to", "as_number", "as_whole"]

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


def as_whole(answer, unit: str, advice: str | None = None) -> tuple[int | None, str]:
    """``(n, "")`` when the answer is a whole number (``"3"``, ``3.0``), else ``(None, why)``: "expected a
    whole number of <unit>" when it is no number; for a fraction, "<unit> come whole: …; <advice>"
    when ``advice`` is given, else the same words as for no number. Never truncates 2.7 to 2."""
    a = as_number(answer)
    if a is None or (not a.is_integer() and advice is None):
        return None, f"expected a whole number of {unit}, got {answer!r}"
    if not a.is_integer():
        return None, f"{unit} come whole: got {answer!r}; {advice}"
    return int(a), ""


@dataclass(frozen=True)
class Mistake:
    """A known wrong answer: an answer within ``rel`` (or ``abs``) of ``value`` gets ``message`` (a
    string, or a function of the answer as a float) instead of the generic "too high / too low"."""

    value: float
    message: str | Callable[[float], str]
    rel: float = 0.01
    abs: float = 0.0

    def matches(self, a: float) -> bool:
        return math.isclose(a, self.value, rel_tol=self.rel, abs_tol=self.abs)

    def feedback(self, a: float) -> str:
        return self.message(a) if callable(self.message) else self.message


def numeric(
    exercise_id: str,
    *,
    rel: float,
    unit: str = "",
    hint: str = "",
    mistakes: Callable[[], Iterable[Mistake]] | None = None,
):
    """Decorator: register the function that computes a numeric exercise's expected answer.

    An answer is checked with :func:`close_to` against ``expected()`` (computed when checked);
    first, one that matches a known mistake (``mistakes()``, also computed when checked) gets that
    mistake's message, unless the mistake coincides with the expected answer. The function is
    returned unchanged, so the exercise set still offers the expected value (to tests, say)."""

    def register(expected: Callable[[], float]):
        def check_answer(answer):
            value = expected()
            a = as_number(answer)
            if mistakes is not None and a is not None:
                for m in mistakes():
                    if m.matches(a) and not m.matches(value):
                        return False, m.feedback(a)
            return close_to(answer, value, rel=rel, unit=unit, hint=hint)

        exercise(exercise_id)(check_answer)
        return expected

    return register
