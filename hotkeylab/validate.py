"""Parameter checks shared by every model.

Each check raises ``ValueError`` whose message names the parameter, the value it got and the
allowed range, e.g. ``rtt_ms must be a finite number >= 0, got -1``. Models call these instead of
writing their own, so every notebook's bad input reads the same way.
"""

from __future__ import annotations

import math
import sys
from dataclasses import MISSING, dataclass, field, fields
from numbers import Integral, Real

__all__ = [
    "check_number",
    "check_int",
    "check_probability",
    "check_choice",
    "Spec",
    "param",
    "declared_ranges",
    "check_fields",
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
    """One of a fixed set of strings (or other hashable values)."""
    allowed = sorted(map(str, choices))
    try:
        ok = value in choices
    except TypeError:  # an unhashable value, e.g. a list, tested against a set
        ok = False
    if not ok:
        raise ValueError(f"{name} must be one of {allowed!r}, got {value!r}")
    return value


# --- declared ranges on dataclass fields ------------------------------------------------------
#
# A scenario declares each field's range once, where the field is defined:
#
#     @dataclass(frozen=True)
#     class Scenario:
#         batch_max_rows: int = param(20, kind="int", low=1, high=10_000)
#         timeout_ms: float = param(250.0, low=0.0, low_open=True, high=3.6e6)
#
#         def __post_init__(self):
#             check_fields(self)          # one line, the same for every model
#
# ``check_fields`` enforces every declaration with the checks above (so every message names the
# parameter, the value and the range) and normalises an integral float given for an int field
# (``20.0`` becomes ``20``) on the frozen instance.


@dataclass(frozen=True)
class Spec:
    """The declared range of one parameter: ``kind`` is "number", "int", "probability",
    "choice" or "bool"; ``optional`` also allows None."""

    kind: str = "number"
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    allow_inf: bool = False
    choices: tuple = ()
    optional: bool = False

    def check(self, name: str, value):
        """Return the checked (normalised) value, or raise ValueError naming ``name``."""
        if value is None and self.optional:
            return None
        if self.kind == "number":
            return check_number(name, value, low=self.low, high=self.high, low_open=self.low_open,
                                high_open=self.high_open, allow_inf=self.allow_inf)
        if self.kind == "int":
            return check_int(name, value, low=self.low, high=self.high)
        if self.kind == "probability":
            return check_probability(name, value)
        if self.kind == "choice":
            return check_choice(name, value, self.choices)
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise ValueError(f"{name} must be True or False, got {value!r}")
            return value
        raise ValueError(f"Spec.kind must be one of ['bool', 'choice', 'int', 'number', "
                         f"'probability'], got {self.kind!r}")

    def ends(self, current=None) -> list:
        """The values at the ends of this range, the ones a contract test runs a model at: both
        ends of a closed range, the nearest float inside an open end, infinity where it is allowed,
        and the largest finite float (or 10**18 for an int) where there is no upper end; every
        choice; the other boolean than ``current`` (both if ``current`` is not a bool)."""
        if self.kind == "probability":
            return [0.0, 1.0]
        if self.kind == "choice":
            return list(self.choices)
        if self.kind == "bool":
            return [not current] if isinstance(current, bool) else [False, True]
        if self.kind == "int":
            return [0 if self.low is None else int(self.low), 10**18 if self.high is None else int(self.high)]
        out = []
        if self.low is not None:
            out.append(math.nextafter(self.low, math.inf) if self.low_open else float(self.low))
        if self.high is not None:
            out.append(math.nextafter(self.high, -math.inf) if self.high_open else float(self.high))
        else:
            out.append(math.inf if self.allow_inf else sys.float_info.max)
        return out


_KINDS = ("number", "int", "probability", "choice", "bool")


def param(default=MISSING, *, kind: str = "number", low=None, high=None, low_open=False,
          high_open=False, allow_inf=False, choices=(), optional=False, default_factory=MISSING,
          **field_kwargs):
    """A dataclass field carrying its declared range (see :func:`check_fields`)."""
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {sorted(_KINDS)!r}, got {kind!r}")
    spec = Spec(kind, low, high, low_open, high_open, allow_inf, tuple(choices), optional)
    metadata = dict(field_kwargs.pop("metadata", {}) or {}, range=spec)
    if default_factory is not MISSING:
        return field(default_factory=default_factory, metadata=metadata, **field_kwargs)
    return field(default=default, metadata=metadata, **field_kwargs)


def declared_ranges(cls_or_obj) -> dict:
    """``{field name: Spec}`` for every field of a dataclass that declares a range."""
    return {f.name: f.metadata["range"] for f in fields(cls_or_obj) if "range" in f.metadata}


def check_fields(obj) -> None:
    """Check every declared field of the dataclass instance ``obj``; normalise integral floats
    for int fields in place (frozen instances included). Raises the first ValueError found."""
    for name, spec in declared_ranges(obj).items():
        value = getattr(obj, name)
        checked = spec.check(name, value)
        if checked is not value and type(checked) is not type(value):
            object.__setattr__(obj, name, checked)
