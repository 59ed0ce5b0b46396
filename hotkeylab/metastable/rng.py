"""The model's random numbers, fixed functions of the seed (never of the order of events).

- User arrival times come from one numpy stream (see :mod:`.arrivals`).
- The uniform behind request *i*'s *k*-th retry delay (stream 0) or local-throttle draw (stream
  1) is drawn up front for the first :data:`K_PRE` attempts of every request, and for later
  attempts is a hash of (seed, i, k, stream): :func:`hashed_uniform`. So both engines, whatever
  order they handle events in at one instant, see the same numbers.
"""

from __future__ import annotations

import numpy as np

__all__ = ["K_PRE", "hashed_uniform", "hashed_uniforms", "AttemptUniforms"]

K_PRE = 6  # uniforms drawn up front per request and stream; later attempts hash
_M64 = (1 << 64) - 1
_U = np.uint64


def _splitmix(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _M64
    return x ^ (x >> 31)


def hashed_uniform(seed: int, i: int, k: int, stream: int) -> float:
    """A uniform in [0, 1) that depends only on (seed, request, attempt, stream)."""
    z = _splitmix(_splitmix(_splitmix(seed) ^ i) ^ (k * 8 + stream))
    return (z >> 11) * (1.0 / (1 << 53))


def _splitmix_np(x: np.ndarray) -> np.ndarray:
    """:func:`_splitmix` on a uint64 array (numpy's uint64 arithmetic wraps mod 2**64 as ``& _M64``)."""
    x = x + _U(0x9E3779B97F4A7C15)
    x = (x ^ (x >> _U(30))) * _U(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> _U(27))) * _U(0x94D049BB133111EB)
    return x ^ (x >> _U(31))


def hashed_uniforms(seed: int, i: np.ndarray, k: np.ndarray, stream: int) -> np.ndarray:
    """:func:`hashed_uniform` for arrays of requests ``i`` and attempts ``k`` (bit-identical)."""
    with np.errstate(over="ignore"):
        z = _splitmix_np(_splitmix_np(_U(_splitmix(seed)) ^ i.astype(np.uint64))
                         ^ (k.astype(np.uint64) * _U(8) + _U(stream)))
    return (z >> _U(11)).astype(np.float64) * (1.0 / (1 << 53))


def up_front(seed: int, n: int) -> np.ndarray:
    """The uniforms drawn up front: shape (2 streams, n requests, K_PRE attempts)."""
    return np.random.default_rng([seed, 0x5EED]).random((2, n, K_PRE))


class AttemptUniforms:
    """The uniforms of ``n`` requests' attempts: ``retry(i, k)`` (stream 0) and ``throttle(i, k)``
    (stream 1), equal to ``up_front(seed, n)[stream, i, k]`` for ``k < K_PRE``, else hashed."""

    def __init__(self, seed: int, n: int):
        self.table = up_front(seed, n)
        # each stream flat, as a memoryview of the table: indexing gives a Python float as a list
        # would, without a list's 32 bytes per number (6 numbers per request and stream)
        self._flat: list = [None, None]
        self._h_seed = _splitmix(seed)
        self._h_req: dict = {}

    def uniform(self, i: int, k: int, stream: int) -> float:
        if k < K_PRE:
            return float(self.table[stream, i, k])
        return self._hashed(i, k, stream)

    def _hashed(self, i: int, k: int, stream: int) -> float:
        """:func:`hashed_uniform`, with the request's part of the hash (two of its three
        splitmix rounds) kept per request: a throttled request retries dozens of times."""
        h = self._h_req.get(i)
        if h is None:
            h = self._h_req[i] = _splitmix(self._h_seed ^ i)
        return (_splitmix(h ^ (k * 8 + stream)) >> 11) * (1.0 / (1 << 53))

    def _stream(self, i: int, k: int, stream: int) -> float:
        if k < K_PRE:
            flat = self._flat[stream]
            if flat is None:
                flat = self._flat[stream] = self.table[stream].reshape(-1).data
            return flat[i * K_PRE + k]
        return self._hashed(i, k, stream)

    def retry(self, i: int, k: int) -> float:
        """Stream 0, the retry delay's uniform (:meth:`_stream` inlined: it runs once per retry)."""
        if k < K_PRE:
            flat = self._flat[0]
            if flat is None:
                flat = self._flat[0] = self.table[0].reshape(-1).data
            return flat[i * K_PRE + k]
        return self._hashed(i, k, 0)

    def throttle(self, i: int, k: int) -> float:
        return self._stream(i, k, 1)
