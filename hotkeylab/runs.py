"""Kernel: the base of every model's result (:class:`Run`), its typed summary (:class:`Summary`)
and the one marker of a value with no samples (:data:`NO_DATA`). Re-exported by :mod:`hotkeylab.sim`.

No data. When a summary value has no samples to be computed from - a mean, percentile, share or
time over nothing (a zero rate, a horizon shorter than one service, an event that never happened)
- it is :data:`NO_DATA`, which is ``None``; never NaN. A :class:`Summary` turns any NaN it is given
into ``NO_DATA``; tables show it as :data:`NO_DATA_TEXT` (``Summary.as_dict(no_data=NO_DATA_TEXT)``);
figures skip it (:func:`plottable`) and never draw a NaN point.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np

__all__ = ["NO_DATA", "NO_DATA_TEXT", "is_no_data", "plottable", "Summary", "Run"]

#: The one marker of a summary value that has no samples to be computed from: a mean, percentile,
#: share or time over nothing (a zero rate, a horizon shorter than one service, an event that never
#: happened). Never NaN: a :class:`Summary` turns NaN into ``NO_DATA``; tables show it as
#: :data:`NO_DATA_TEXT`; figures skip it (:func:`plottable`), they do not plot it.
NO_DATA = None
NO_DATA_TEXT = "no data"


def is_no_data(value) -> bool:
    """True for the :data:`NO_DATA` marker (and for a NaN that has not been turned into it yet)."""
    return value is None or (isinstance(value, (float, np.floating)) and math.isnan(value))


def _no_nan(value):
    if isinstance(value, (float, np.floating)) and math.isnan(value):
        return NO_DATA
    if isinstance(value, dict) and any(is_no_data(v) for v in value.values()):
        return {k: _no_nan(v) for k, v in value.items()}
    return value


def plottable(xs, ys=None):
    """The points a figure may draw: ``(x, y)`` pairs whose value is not :data:`NO_DATA` (or NaN),
    as two float arrays; with one argument, the values themselves. A figure passes summary values
    through this, so a run with no samples leaves a gap, never a NaN point."""
    if ys is None:
        return np.asarray([v for v in xs if not is_no_data(v)], dtype=float)
    pairs = [(x, y) for x, y in zip(xs, ys, strict=True) if not (is_no_data(x) or is_no_data(y))]
    return (np.asarray([p[0] for p in pairs], dtype=float), np.asarray([p[1] for p in pairs], dtype=float))


@dataclass(frozen=True)
class Summary(Mapping):
    """The key numbers of one run, typed: each model declares a frozen dataclass deriving from
    this one, one field per number, its unit in the field's docstring. A value with no samples is
    :data:`NO_DATA` (None), never NaN (NaN given to the constructor becomes None).

    Read fields by name (``run.summary.tps``); the mapping interface (``run.summary["tps"]``,
    ``dict(run.summary)``) is kept for tables and older callers. :meth:`as_dict` gives a plain
    dict, with ``no_data=NO_DATA_TEXT`` the form a table shows.
    """

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            w = _no_nan(v)
            if w is not v:
                object.__setattr__(self, f.name, w)

    def as_dict(self, no_data=NO_DATA) -> dict:
        """The fields in declaration order; :data:`NO_DATA` values replaced by ``no_data``."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        return d if no_data is NO_DATA else {k: no_data if v is NO_DATA else v for k, v in d.items()}

    def __getitem__(self, name: str):
        if name not in self.__dataclass_fields__:
            raise KeyError(name)
        return getattr(self, name)

    def __iter__(self):
        return iter(self.__dataclass_fields__)

    def __len__(self) -> int:
        return len(self.__dataclass_fields__)


class Run:
    """The base of what every model's ``simulate`` returns (each model's result is a dataclass
    deriving from it, with at least the fields ``status`` (:class:`RunStatus`) and ``ledger``
    (:class:`Ledger`)).

    - ``check()``: the ledger balances (raises :class:`LedgerError` if not); returns the run.
    - ``summary``: the run's key numbers as the model's own frozen :class:`Summary` dataclass
      (named by the class attribute ``Summary``), read as ``run.summary.<field>``; ``.as_dict()``
      for tables. A value with no samples is :data:`NO_DATA` (None, shown as "no data", skipped by
      figures), never NaN.

    A model that computes its summary inside ``simulate`` stores it (as its ``Summary``, or as a
    dict of the same fields, which becomes one); a model whose summary follows from the run's own
    data overrides :meth:`summarise` instead.
    """

    Summary: ClassVar[type] = Summary

    @property
    def summary(self) -> Summary:
        stored = self.__dict__.get("_summary")
        return stored if stored is not None else self.summarise()

    @summary.setter
    def summary(self, value) -> None:
        if isinstance(value, Mapping) and not isinstance(value, Summary):
            value = self.Summary(**value) if value else None
        elif value is not None and not isinstance(value, Summary):
            raise ValueError(f"summary must be a {self.Summary.__name__} or a dict, got {type(value).__name__}")
        object.__setattr__(self, "_summary", value)

    def summarise(self) -> Summary:
        """The summary computed from the run's data (models that store none override this)."""
        raise AttributeError(f"{type(self).__name__} has no summary")

    def check(self):
        """Raise :class:`LedgerError` unless the ledger balances; return the run."""
        self.ledger.check()
        return self
