"""Parameter checks shared by every model.

Each check raises ``ValueError`` whose message names the parameter, the value it got and the
allowed range, e.g. ``rtt_ms must be a finite number >= 0, got -1``. Models call these instead of
writing their own, so every notebook's bad input reads the same way.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

__all__ = [
    "check_number",
    "check_int",
    "check_probability",
    "check_choice",
]


def _is_real(value) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def check_number(
    name: str,
    value,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    allow_inf: bool = False,
) -> float:
    """Return ``float(value)`` if it is a real number inside the range, else raise ValueError.

    ``low``/``high`` are inclusive unless ``low_open``/``high_open``. NaN is always refused;
    infinity only with ``allow_inf`` (and then still subject to the bounds).
    """
    lo = "" if low is None else (f"> {low:g}" if low_open else f">= {low:g}")
    hi = "" if high is None else (f"< {high:g}" if high_open else f"<= {high:g}")
    bounds = " and ".join(b for b in (lo, hi) if b)
    kind = "a number" if allow_inf else "a finite number"
    allowed = f"{kind} {bounds}".strip()
    if not _is_real(value):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    v = float(value)
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    if low is not None and (v < low or (low_open and v == low)):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    if high is not None and (v > high or (high_open and v == high)):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return v


def check_int(name: str, value, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``int(value)`` if it is an integer (not a bool) within [low, high], else raise."""
    bounds = " and ".join(
        b for b in ((f">= {low}" if low is not None else ""), (f"<= {high}" if high is not None else "")) if b
    )
    allowed = f"an integer {bounds}".strip()
    if isinstance(value, bool) or not isinstance(value, Integral):
        if _is_real(value) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be {allowed}, got {value!r}")
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return v


def check_probability(name: str, value) -> float:
    """A probability in [0, 1]."""
    return check_number(name, value, low=0.0, high=1.0)


def check_choice(name: str, value, choices) -> str:
    """One of a fixed set of strings."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)!r}, got {value!r}")
    return value
