"""07 · The hot-key micro-model: one key on one host, request by request, to check the
coalescing closed form (:func:`.closed_form.coalesced_rate_per_s`) that the step model uses."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..sim import PoissonSource, make_rng
from ..validate import check_choice, check_int, check_number
from .closed_form import coalesced_rate_per_s

#: the most arrivals one run may draw (bounds its memory: a few arrays of this many floats)
MAX_ARRIVALS = 2_000_000


@dataclass(frozen=True)
class KeyFetches:
    """Request-level result for one key on one host: ``fetches`` backend calls for ``arrivals``
    requests over ``horizon_ms``; :attr:`fetch_rate_per_s`, :attr:`hit_ratio` (the share of
    requests answered without a backend call) and :attr:`closed_form_per_s` beside them."""

    mode: str
    rate_per_s: float
    hold_ms: float
    arrivals: int
    fetches: int
    horizon_ms: float

    @property
    def fetch_rate_per_s(self) -> float:
        return self.fetches / self.horizon_ms * 1000.0

    @property
    def hit_ratio(self) -> float:
        return 1.0 - self.fetches / self.arrivals if self.arrivals else 0.0

    @property
    def closed_form_per_s(self) -> float:
        """:func:`.closed_form.coalesced_rate_per_s` (every request fetches with ``none``)."""
        return self.rate_per_s if self.mode == "none" else coalesced_rate_per_s(self.rate_per_s, self.hold_ms)


def _arrival_times(rng, rate_per_s: float, horizon_ms: float, first_block: int) -> np.ndarray:
    """Poisson arrival times in ``[0, horizon_ms)``: gaps (:class:`hotkeylab.sim.PoissonSource`)
    drawn in blocks (the first of ``first_block``) until the horizon is passed."""
    source = PoissonSource(rng, rate_per_s)
    blocks, t_last = [], 0.0
    while t_last < horizon_ms:
        times = t_last + np.cumsum(source.gaps(first_block if not blocks else 4096))
        blocks.append(times)
        t_last = float(times[-1])
    times = blocks[0] if len(blocks) == 1 else np.concatenate(blocks)
    return times[times < horizon_ms]


def simulate_key_fetches(
    rate_per_s: float,
    hold_ms: float,
    *,
    mode: str = "singleflight",
    seed: int = 0,
    horizon_ms: float = 60_000.0,
    max_arrivals: int = MAX_ARRIVALS,
) -> KeyFetches:
    """Poisson requests for one hot key on one host, request by request.

    - ``none``: every request calls the backend.
    - ``singleflight``: a request arriving while a call for the key is in flight (``hold_ms`` =
      fetch time) waits for it and shares its answer.
    - ``ttl``: a local cache entry (or a negative-cache entry for a key that does not exist) stays
      fresh ``hold_ms`` after the fetch that filled it.

    The expected arrivals ``rate_per_s × horizon_ms / 1000`` must not exceed ``max_arrivals``.
    """
    lam = check_number("rate_per_s", rate_per_s, low=0.0, low_open=True, high=1e7)
    hold = check_number("hold_ms", hold_ms, low=0.0, high=1e9)
    check_choice("mode", mode, ("none", "singleflight", "ttl"))
    hz = check_number("horizon_ms", horizon_ms, low=0.0, low_open=True, high=1e9)
    cap = check_int("max_arrivals", max_arrivals, low=1, high=MAX_ARRIVALS)
    expected = lam * hz / 1000.0
    if expected > cap:
        raise ValueError(
            f"rate_per_s × horizon_ms / 1000 must be <= max_arrivals ({cap:,}), got {expected:,.0f}"
        )
    rng = make_rng(seed)
    times = _arrival_times(rng, lam, hz, int(expected * 1.2) + 100)
    fetches = 0
    busy_until = -math.inf
    if mode == "none":
        fetches = len(times)
    else:
        for t in times.tolist():
            if t >= busy_until:  # nothing in flight / cache stale: this request fetches
                fetches += 1
                busy_until = t + hold
    return KeyFetches(mode, lam, hold, len(times), fetches, hz)
