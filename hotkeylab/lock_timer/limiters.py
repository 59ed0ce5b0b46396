"""05 · The two limiter designs: the seed's channel bucket (a ticker goroutine fills a buffered
channel; ``Taken`` waits on it or on a timer) and a reservation limiter (no ticker, no wait that
holds anything)."""

from __future__ import annotations

import math

import simpy

from ..validate import check_choice
from .scenario import RESERVATIONS

__all__ = ["TOKEN", "TokenChannel", "ChannelBucket", "refill", "ReservationLimiter"]

# --------------------------------------------------------------------------- limiters
TOKEN = object()  # what the seed's channel carries (the tokens are identical, so BucketCh counts them)


class TokenChannel(simpy.Container):
    """``BucketCh``: a buffered channel of identical tokens. ``get()`` is ``<-BucketCh`` (wait for one
    token), ``put()`` is ``BucketCh <- token``; ``level`` is ``len(BucketCh)``. Holding a count
    instead of a list of token objects keeps a receive O(1) for any ``burst`` (a list pops from
    its front: 10^7 tokens made every receive take milliseconds)."""

    def get(self, amount: int = 1):
        return super().get(amount)

    def put(self, amount: int = 1):
        return super().put(amount)


class ChannelBucket:
    """The seed's ``RateLimit``: a buffered channel ``BucketCh`` of capacity ``burst`` that a ticker
    goroutine (:func:`refill`) fills at ``rate_per_s``; :meth:`taken` is the seed's ``Taken``."""

    def __init__(self, env: simpy.Environment, rate_per_s: float, burst: int, start_full: bool):
        self.env = env
        self.rate_per_s = rate_per_s
        self.burst = burst
        self.ch = TokenChannel(env, capacity=burst, init=burst if start_full else 0)  # BucketCh
        self.handed_out = 0  # tokens received by some request
        self.wasted = 0  # tokens received by requests whose timer then fired

    def taken(self, count: int, time_duration_ms: float):
        """``Taken(count)``: a timer of ``count × TimeDuration``; ``count`` times, take a token or
        give up when the timer fires (``select`` on both). Returns ``(ok, tokens_received)``.

        Tokens received before the timer fires are not given back (the seed's code drops them).
        """
        env = self.env
        timer = env.timeout(count * time_duration_ms)  # time.NewTimer(count * TimeDuration)
        got = 0
        for _ in range(count):
            get = self.ch.get()  # case <-this.BucketCh
            yield get | timer  # select { token, timer }
            if get.triggered:  # a token (if both are ready, the token is already taken)
                got += 1
                self.handed_out += 1
            else:  # case <-timer.C: return errors.New("not get bucket")
                get.cancel()
                self.wasted += got
                return False, got
        return True, got


def refill(env: simpy.Environment, bucket: ChannelBucket):
    """The limiter's ticker goroutine: every ``1000 / r`` ms, put a token into ``BucketCh``
    unless it is full (``select { case ch <- token: default: }``)."""
    interval = 1000.0 / bucket.rate_per_s
    ch = bucket.ch
    while True:
        yield env.timeout(interval)
        if ch.level < bucket.burst:
            ch.put()


class ReservationLimiter:
    """A limiter that reserves instead of waiting on a channel (no ticker, nothing held).

    ``style="xrate"`` follows golang.org/x/time/rate's ``Limiter.reserveN``: refill the tokens
    for the time elapsed (capped at ``burst``), subtract ``n`` (the count may go negative: a debt
    paid back by later arrivals), and the caller waits ``−tokens / r``; if that wait exceeds the
    caller's budget, or ``n > burst``, refuse and change nothing. ``Wait``/``WaitN`` do this
    with the context's deadline as the budget and then sleep; ``Allow`` is the budget-0 case;
    ``Reserve`` hands the delay to the caller.

    ``style="guava"`` follows Guava's ``SmoothBursty`` ``tryAcquire(permits, timeout)``: refuse
    at once when the next free ticket lies more than ``timeout`` ahead; otherwise wait until the
    next free ticket and push it ``permits / r`` further - the request's own permits are paid for
    by the *next* caller. (Real Guava starts with no stored permits; here ``start_full`` decides.)
    """

    def __init__(self, rate_per_s: float, burst: int, start_full: bool, style: str = "xrate"):
        self.rate_per_s = rate_per_s
        self.burst = burst
        self.style = check_choice("style", style, RESERVATIONS)
        self.tokens = float(burst) if start_full else 0.0
        self.last_ms = 0.0  # xrate: time of the last update
        self.next_free_ms = 0.0  # guava: the next free ticket
        self.handed_out = 0
        self.wasted = 0  # never: a refused caller consumes nothing

    def reserve(self, now_ms: float, n: int, max_wait_ms: float) -> tuple[bool, float]:
        """Try to reserve ``n`` tokens at ``now_ms`` waiting at most ``max_wait_ms``.
        Returns ``(ok, wait_ms)``; on refusal ``wait_ms`` is the wait that was too long."""
        r = self.rate_per_s
        if self.style == "xrate":
            if n > self.burst:
                return False, math.inf
            elapsed = max(0.0, now_ms - self.last_ms)
            tokens = (
                min(float(self.burst), self.tokens + elapsed * r / 1000.0) if r > 0 else self.tokens
            )
            tokens -= n
            if tokens >= 0:
                wait = 0.0
            else:
                wait = math.inf if r == 0 else -tokens * 1000.0 / r
            if wait > max_wait_ms:
                return False, wait
            self.tokens, self.last_ms = tokens, now_ms
            self.handed_out += n
            return True, wait
        # guava SmoothBursty
        if self.next_free_ms - max_wait_ms > now_ms:
            return False, self.next_free_ms - now_ms
        interval = math.inf if r == 0 else 1000.0 / r
        if now_ms > self.next_free_ms:  # resync: store the permits made while idle
            if r > 0:
                self.tokens = min(
                    float(self.burst), self.tokens + (now_ms - self.next_free_ms) / interval
                )
            self.next_free_ms = now_ms
        wait = self.next_free_ms - now_ms
        spend = min(float(n), self.tokens)
        fresh = n - spend
        if fresh > 0:
            self.next_free_ms += fresh * interval
        self.tokens -= spend
        self.handed_out += n
        return True, wait
