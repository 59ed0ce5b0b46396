"""07 · The hot-key micro-model: one key on one host, request by request, to check the
coalescing closed form (:func:`.closed_form.coalesced_rate_per_s`) that the step model uses."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..sim import make_rng
from ..validate import check_choice, check_int, check_number
from .closed_form import coalesced_rate_per_s


@dataclass(frozen=True)
class KeyFetches:
    """Request-level result for one key on one host: ``fetch_rate_per_s`` backend calls/s and the
    share of requests answered without one (``hit_ratio``); ``closed_form_per_s`` beside it."""

    mode: str
    rate_per_s: float
    hold_ms: float
    arrivals: int
    fetches: int
    horizon_ms: float
    fetch_rate_per_s: float
    hit_ratio: float
    closed_form_per_s: float


def simulate_key_fetches(
    rate_per_s: float,
    hold_ms: float,
    *,
    mode: str = "singleflight",
    seed: int = 0,
    horizon_ms: float = 60_000.0,
    max_arrivals: int = 2_000_000,
) -> KeyFetches:
    """Poisson requests for one hot key on one host, request by request.

    - ``none``: every request calls the backend.
    - ``singleflight``: a request arriving while a call for the key is in flight (``hold_ms`` =
      fetch time) waits for it and shares its answer.
    - ``ttl``: a local cache entry (or a negative-cache entry for a key that does not exist) stays
      fresh ``hold_ms`` after the fetch that filled it.
    """
    lam = check_number("rate_per_s", rate_per_s, low=0.0, low_open=True, high=1e7)
    hold = check_number("hold_ms", hold_ms, low=0.0, high=1e9)
    check_choice("mode", mode, ("none", "singleflight", "ttl"))
    hz = check_number("horizon_ms", horizon_ms, low=0.0, low_open=True, high=1e9)
    cap = check_int("max_arrivals", max_arrivals, low=1, high=100_000_000)
    rng = make_rng(seed)
    expected = int(lam * hz / 1000.0 * 1.2) + 100
    gaps = rng.exponential(1000.0 / lam, size=min(expected, cap))
    times = np.cumsum(gaps)
    times = times[times < hz]
    fetches = 0
    busy_until = -math.inf
    if mode == "none":
        fetches = len(times)
    else:
        for t in times.tolist():
            if t >= busy_until:  # nothing in flight / cache stale: this request fetches
                fetches += 1
                busy_until = t + hold
    n = len(times)
    closed = lam if mode == "none" else coalesced_rate_per_s(lam, hold)
    return KeyFetches(
        mode=mode,
        rate_per_s=lam,
        hold_ms=hold,
        arrivals=n,
        fetches=fetches,
        horizon_ms=hz,
        fetch_rate_per_s=fetches / hz * 1000.0,
        hit_ratio=1.0 - fetches / n if n else 0.0,
        closed_form_per_s=closed,
    )

