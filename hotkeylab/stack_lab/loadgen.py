"""04b · The upstream: Poisson users, a client deadline M, the seed's retries, and the degrade switch.

Start reading at :func:`user`. Users arrive as a Poisson process at the turn's rate (×1.2 in the
peak). Each user request sends attempts over gRPC with a deadline of M ms; an attempt that times out
(``DEADLINE_EXCEEDED``) or is rejected (``RESOURCE_EXHAUSTED``) is retried after a delay drawn in
0–50 ms ×scale (at least ``min_delay_ms``), while the retry would start within the user's patience
(300 ms ×scale after the first attempt): 04's ``SEED_RETRY``. While datacentre C is an owner, users
whose client sits in C (``c_share``) send to server C, the others to B; isolation stops C's traffic.
Degrading drops new user requests; retries of requests already in flight go on, as in 04's model.

Run as ``python -m hotkeylab.stack_lab.loadgen config.json out.json``. It writes every user and
every attempt to ``out.json`` and exits; it dies with its parent.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import sys
import time

from .wire import ERROR, OK, REJECTED, SERVICE, TIMEOUT, dumps, loads


def _in(window, t_ms: float) -> bool:
    return window is not None and window[0] <= t_ms < window[1]


class LoadGen:
    def __init__(self, cfg: dict):
        self.cfg = cfg
        self.rng = random.Random(cfg["seed"])
        self.t0 = time.time()
        self.users: list = []  # [arrival_ms, region, served, attempts, gave_up]
        self.attempts: list = []  # (user, send_ms, end_ms, outcome, server)
        self.degraded = 0

    def now_ms(self) -> float:
        return (time.time() - self.t0) * 1000.0

    async def user(self, uid: int, stubs: dict) -> None:
        """One user request: attempts until one is answered in time or the patience runs out."""
        c = self.cfg
        rec = self.users[uid]
        first = self.now_ms()
        while True:
            t = self.now_ms()
            target = "C" if rec[1] == "C" and _in(c["second_owner"], t) else "B"
            rec[3] += 1
            try:
                await stubs[target]({"id": uid * 1000 + rec[3]}, timeout=c["timeout_ms"] / 1000.0)
                outcome = OK
            except Exception as exc:  # grpc.aio.AioRpcError: which status?
                code = getattr(exc, "code", lambda: None)()
                name = getattr(code, "name", "")
                outcome = TIMEOUT if name == "DEADLINE_EXCEEDED" else REJECTED if name == "RESOURCE_EXHAUSTED" else ERROR
                if outcome == ERROR:
                    print(f"attempt error: {exc!r}", file=sys.stderr, flush=True)
            end = self.now_ms()
            self.attempts.append((uid, round(t, 3), round(end, 3), outcome, target))
            if outcome == OK:
                rec[2] = 1
                return
            delay = max(c["min_delay_ms"], self.rng.uniform(0.0, c["cap_ms"]))
            if end + delay - first > c["patience_ms"] or rec[3] >= c["max_attempts"]:
                rec[4] = 1
                return
            await asyncio.sleep(delay / 1000.0)

    async def run(self) -> None:
        import grpc

        c = self.cfg
        channels, stubs = [], {}
        for name, port in c["ports"].items():
            ch = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
            channels.append(ch)
            stubs[name] = ch.unary_unary(f"/{SERVICE}/Commit", request_serializer=dumps, response_deserializer=loads)
        for ch in channels:
            await asyncio.wait_for(ch.channel_ready(), timeout=10)
        # the clock starts once this process is ready (a slow start must not become a burst)
        self.t0 = time.time() + 0.3
        await asyncio.sleep(0.3)
        tasks = set()
        t = 0.0
        horizon = c["horizon_ms"]
        while True:
            peak = c["peak"]
            rate = c["user_rate_per_s"] * (peak[2] if _in(peak, t) else 1.0)
            t += self.rng.expovariate(rate / 1000.0)
            if t >= horizon:
                break
            delay = t - self.now_ms()
            if delay > 0:
                await asyncio.sleep(delay / 1000.0)
            if _in(c["degrade"], t):
                self.degraded += 1
                continue
            region = "C" if self.rng.random() < c["c_share"] else "B"
            uid = len(self.users)
            self.users.append([round(t, 3), region, 0, 0, 0])
            task = asyncio.create_task(self.user(uid, stubs))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        if tasks:
            await asyncio.wait(tasks)
        for ch in channels:
            await ch.close()


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    from .orchestrate import die_with_parent_here

    die_with_parent_here()
    with open(argv[0]) as fh:
        cfg = json.load(fh)
    cfg["max_attempts"] = math.inf if cfg["max_attempts"] is None else cfg["max_attempts"]
    lg = LoadGen(cfg)
    asyncio.run(lg.run())
    with open(argv[1], "w") as fh:
        json.dump({"t0": lg.t0, "users": lg.users, "attempts": lg.attempts, "degraded": lg.degraded}, fh)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
