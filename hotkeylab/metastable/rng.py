"""The model's random numbers, fixed functions of the seed (never of the order of events).

- User arrival times come from one numpy stream (see :mod:`.arrivals`).
- The uniform behind request *i*'s *k*-th retry delay (stream 0) or local-throttle draw (stream
  1) is, for the first :data:`K_PRE` attempts, an entry of one table drawn from a seeded stream
  (:func:`up_front`; read in blocks by :class:`UpFront`, so a run never holds the whole table),
  and for later attempts a hash of (seed, i, k, stream): :func:`hashed_uniform`. So both engines, whatever
  order they handle events in at one instant, see the same numbers.
"""

from __future__ import annotations

from array import array

import numpy as np

__all__ = ["K_PRE", "hashed_uniform", "hashed_uniforms", "up_front", "UpFront", "AttemptUniforms"]

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
    """The uniforms drawn up front: shape (2 streams, n requests, K_PRE attempts). The definition;
    the engines read it block by block through :class:`UpFront`, which gives the same numbers."""
    return np.random.default_rng([seed, 0x5EED]).random((2, n, K_PRE))


BLOCK_BITS = 13  # a block holds 2**13 uniforms (64 kB, ~1,365 requests)
_MASK = (1 << BLOCK_BITS) - 1
CACHE_BLOCKS = 256  # blocks kept per stream (16 MB): the requests still in their first K_PRE attempts


class UpFront:
    """:func:`up_front` without the table: each block of a stream is drawn when a request in it
    first needs one (the generator jumped ahead with ``PCG64.advance`` to the block's place in
    the stream: each double is one 64-bit draw), and at most :data:`CACHE_BLOCKS` per stream are
    kept (the oldest drawn is dropped, and drawn again if needed again). Memory is bounded by the
    cache, not by the number of requests: a request needs its block only while it makes its first
    K_PRE attempts, so the blocks in use are the recent ones.

    ``views[stream][b]`` is block ``b`` as a memoryview (indexing gives a Python float), or None."""

    def __init__(self, seed: int, n: int):
        self.n = n
        self._state = np.random.PCG64(np.random.SeedSequence([seed, 0x5EED])).state
        n_blocks = (n * K_PRE + _MASK) >> BLOCK_BITS
        self.views: tuple[list, list] = ([None] * n_blocks, [None] * n_blocks)
        self._arrays: tuple[dict, dict] = ({}, {})  # the blocks held, oldest first
        self.drawn = 0  # blocks drawn (a block drawn again after eviction counts again)

    def block(self, stream: int, b: int) -> np.ndarray:
        """Block ``b`` of ``stream``: up_front(seed, n)[stream].reshape(-1)[b·2**13 : (b+1)·2**13]."""
        held = self._arrays[stream]
        blk = held.get(b)
        if blk is None:
            size = self.n * K_PRE
            lo = b << BLOCK_BITS
            if not 0 <= lo < size:
                raise IndexError(f"block {b} outside stream {stream} of {self.n} requests")
            bg = np.random.PCG64()
            bg.state = self._state
            bg.advance(stream * size + lo)
            blk = np.random.Generator(bg).random(min(1 << BLOCK_BITS, size - lo))
            self.drawn += 1
            if len(held) >= CACHE_BLOCKS:
                old = next(iter(held))  # the oldest drawn (dicts keep insertion order)
                del held[old]
                self.views[stream][old] = None
            held[b] = blk
            self.views[stream][b] = blk.data
        return blk

    def take(self, stream: int, flat: np.ndarray) -> np.ndarray:
        """The uniforms at flat positions ``flat`` (request × K_PRE + attempt) of ``stream``."""
        flat = np.asarray(flat, dtype=np.int64)
        out = np.empty(flat.size)
        if not flat.size:
            return out
        b = flat >> BLOCK_BITS
        lo, hi = int(b.min()), int(b.max())
        if lo == hi:
            out[:] = self.block(stream, lo)[flat & _MASK]
            return out
        ub, inv = np.unique(b, return_inverse=True)
        step = max(1, CACHE_BLOCKS // 2)  # a group of blocks fits the cache
        for g in range(0, ub.size, step):
            grp = ub[g : g + step].tolist()
            cat = np.zeros(len(grp) << BLOCK_BITS)  # the last block of a stream may be short
            for q, x in enumerate(grp):
                blk = self.block(stream, x)
                cat[q << BLOCK_BITS : (q << BLOCK_BITS) + blk.size] = blk
            m = (inv >= g) & (inv < g + len(grp))
            out[m] = cat[((inv[m] - g) << BLOCK_BITS) + (flat[m] & _MASK)]
        return out


class AttemptUniforms:
    """The uniforms of ``n`` requests' attempts: ``retry(i, k)`` (stream 0) and ``throttle(i, k)``
    (stream 1), equal to ``up_front(seed, n)[stream, i, k]`` for ``k < K_PRE`` (read from
    :class:`UpFront` blocks), else hashed."""

    def __init__(self, seed: int, n: int):
        self.table = UpFront(seed, n)
        self._views = self.table.views
        self._h_seed = _splitmix(seed)
        self._h_req = array("Q")  # per request, its part of the hash (0: not computed yet)

    def uniform(self, i: int, k: int, stream: int) -> float:
        return self._stream(i, k, stream)

    def _hashed(self, i: int, k: int, stream: int) -> float:
        """:func:`hashed_uniform`, with the request's part of the hash (two of its three
        splitmix rounds) kept per request: a throttled request retries dozens of times."""
        hr = self._h_req
        if i >= len(hr):  # grown to the requests reached (8 B each; a run reaches ≤ its event cap)
            hr.frombytes(bytes(8 * max(i + 1 - len(hr), len(hr), 1024)))
        h = hr[i]
        if not h:  # (a part that is 0 is recomputed each time: still correct)
            h = hr[i] = _splitmix(self._h_seed ^ i)
        return (_splitmix(h ^ (k * 8 + stream)) >> 11) * (1.0 / (1 << 53))

    def _stream(self, i: int, k: int, stream: int) -> float:
        if k < K_PRE:
            j = i * K_PRE + k
            v = self._views[stream][j >> BLOCK_BITS]
            if v is None:
                self.table.block(stream, j >> BLOCK_BITS)
                v = self._views[stream][j >> BLOCK_BITS]
            return v[j & _MASK]
        return self._hashed(i, k, stream)

    def retry(self, i: int, k: int) -> float:
        """Stream 0, the retry delay's uniform (:meth:`_stream` inlined: it runs once per retry)."""
        if k < K_PRE:
            j = i * K_PRE + k
            v = self._views[0][j >> BLOCK_BITS]
            if v is None:
                self.table.block(0, j >> BLOCK_BITS)
                v = self._views[0][j >> BLOCK_BITS]
            return v[j & _MASK]
        return self._hashed(i, k, 0)

    def throttle(self, i: int, k: int) -> float:
        return self._stream(i, k, 1)
