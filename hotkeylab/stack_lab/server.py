"""04b · One hot-key server: a gRPC server with the seed's business group commit and one committing thread.

Start reading at :class:`HotKeyServer`. Each ``Commit`` RPC is one attempt of one user request. The
batcher merges attempts into a batch that closes at ``batch_max_rows`` rows or ``batch_max_wait_ms``
after its first row ("以固定条数(最高20条)/固定时间间隔(最高20ms)的形式合并提交"); a closed batch joins
the queue, or is rejected at once (``RESOURCE_EXHAUSTED``) when ``queue_limit`` batches already
wait (QueueMaxSize). One thread commits one batch at a time ("单Server中的单线程处理") with the
seed's transaction, the RTT slept before each of its round trips as notebook 01b does::

    BEGIN; SELECT count FROM t_account WHERE account_id = 123 FOR UPDATE;
    INSERT INTO t_trans … (7 chunks: the batchInsert);  <内部计算, compute_ms>;
    UPDATE t_account SET count = count + rows WHERE account_id = 123; COMMIT;

11 round trips (the slope of the seed's 16 ms / 27 ms, notebook 02). A chunk with no rows is a
``DO 0`` round trip, so the commit time does not depend on the rows (04's assumption). The server
answers every attempt of a committed batch; the client may have given up already: the server counts
a row as *wasted* when its commit finished after the attempt's gRPC deadline.

Why gRPC with generic handlers and JSON messages: deadlines, cancellation and status codes are
gRPC's own (what the seed's RPC framework gives); generic handlers need no ``protoc`` step at
install or run time, and messages of three fields gain nothing from protobuf.

Run as ``python -m hotkeylab.stack_lab.server --name B --rtt-ms 1 --db-port P``; it prints
``PORT <n>`` once listening on 127.0.0.1 (an ephemeral port) and dies with its parent.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import threading
import time
from collections import deque

from .wire import SERVICE, dumps, loads

HOT_ACCOUNT = 123
INSERT_CHUNKS = 7  # 11 round trips − BEGIN, SELECT, UPDATE, COMMIT


class HotKeyServer:
    """Batcher + bounded FIFO queue + one committing thread, for one hot key."""

    def __init__(self, name: str, rtt_ms: float, db_port: int, loop: asyncio.AbstractEventLoop):
        self.name, self.rtt_s, self.db_port, self.loop = name, rtt_ms / 1000.0, db_port, loop
        self.server_id = 0 if name == "B" else 1
        self.cond = threading.Condition()
        self.queue: deque = deque()  # closed batches waiting for the thread
        self.open: list = []  # the batch being filled
        self.open_timer = None
        self.conn = None
        self.compute_s = 0.0
        self.configure({"run_id": 0, "batch_max_rows": 20, "batch_max_wait_ms": 20.0, "queue_limit": None})
        threading.Thread(target=self._commit_loop, daemon=True).start()
        loop.create_task(self._sampler())

    # ------------------------------------------------------------------ control
    def configure(self, cfg: dict) -> dict:
        with self.cond:
            self.run_id = int(cfg["run_id"])
            self.max_rows = int(cfg["batch_max_rows"])
            self.max_wait_s = float(cfg["batch_max_wait_ms"]) / 1000.0
            self.limit = None if cfg.get("queue_limit") is None else int(cfg["queue_limit"])
            self.sample_s = float(cfg.get("sample_ms", 100.0)) / 1000.0
            if "compute_ms" in cfg:
                self.compute_s = float(cfg["compute_ms"]) / 1000.0
            self.stats = {"committed_rows": 0, "committed_batches": 0, "wasted_rows": 0, "answered_rows": 0,
                          "rejected_rows": 0, "rejected_batches": 0, "rolled_back": 0}
            self.committed_ids: list = []  # attempt ids committed, for the cross-process ledger
            self.rejected_ids: list = []  # attempt ids in rejected batches
            self.samples: list = []  # (wall time, batches waiting, thread busy)
            self.batches: list = []  # (start wall, end wall, rows)
            self.busy = False
        return {"ok": True}

    def snapshot(self, ids: bool = False) -> dict:
        with self.cond:
            extra = {"committed_ids": list(self.committed_ids), "rejected_ids": list(self.rejected_ids)} if ids else {}
            return {**extra, "name": self.name, "stats": dict(self.stats), "samples": list(self.samples),
                    "batches": list(self.batches), "waiting": len(self.queue) + (1 if self.open else 0),
                    "busy": self.busy, "compute_ms": self.compute_s * 1000.0}

    async def _sampler(self):
        while True:
            with self.cond:
                self.samples.append((time.time(), len(self.queue), int(self.busy)))
                period = self.sample_s
            await asyncio.sleep(period)

    # ------------------------------------------------------------------ the batcher (event loop)
    async def commit(self, request: dict, context) -> dict:
        remaining = context.time_remaining()
        deadline = time.time() + remaining if remaining is not None else math.inf
        fut = self.loop.create_future()
        self.open.append((int(request["id"]), deadline, fut))
        if len(self.open) == 1:
            self.open_timer = self.loop.call_later(self.max_wait_s, self._close)
        if len(self.open) >= self.max_rows:
            self._close()
        # the row stays in its batch if the client gives up: the shield keeps the commit going
        ok = await asyncio.shield(fut)
        if not ok:
            import grpc

            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "queue full")
        return {"ok": True}

    def _close(self):
        if self.open_timer is not None:
            self.open_timer.cancel()
            self.open_timer = None
        batch, self.open = self.open, []
        if not batch:
            return
        with self.cond:
            if self.limit is not None and len(self.queue) >= self.limit:
                self.stats["rejected_rows"] += len(batch)
                self.stats["rejected_batches"] += 1
                self.rejected_ids.extend(i for i, _, _ in batch)
                rejected = True
            else:
                self.queue.append(batch)
                self.cond.notify()
                rejected = False
        if rejected:
            for _, _, fut in batch:
                if not fut.done():
                    fut.set_result(False)

    # ------------------------------------------------------------------ the committing thread
    def _connect(self):
        import pymysql

        return pymysql.connect(host="127.0.0.1", port=self.db_port, user="root", password="",
                               database="hotkeylab", autocommit=False, connect_timeout=5)

    def _sleep_rtt(self):
        if self.rtt_s > 0:
            time.sleep(self.rtt_s)

    def transaction(self, ids: list[int], run_id: int) -> None:
        """The seed's merged commit of ``ids`` (one row each in t_trans), RTT before each round trip."""
        if self.conn is None:
            self.conn = self._connect()
        cur = self.conn.cursor()
        try:
            self._sleep_rtt()
            cur.execute("BEGIN")
            self._sleep_rtt()
            cur.execute("SELECT count FROM t_account WHERE account_id = %s FOR UPDATE", (HOT_ACCOUNT,))
            cur.fetchone()
            per = max(1, math.ceil(len(ids) / INSERT_CHUNKS))
            for k in range(INSERT_CHUNKS):
                chunk = ids[k * per:(k + 1) * per]
                self._sleep_rtt()
                if chunk:
                    values = ", ".join(["(%s, %s, %s, %s)"] * len(chunk))
                    args = [v for i in chunk for v in (run_id, HOT_ACCOUNT, self.server_id, i)]
                    cur.execute(f"INSERT INTO t_trans (run_id, account_id, worker, amount) VALUES {values}", args)
                else:
                    cur.execute("DO 0")
            if self.compute_s > 0:
                time.sleep(self.compute_s)  # "内部一堆计算同时计算出需要累加的value"
            self._sleep_rtt()
            cur.execute("UPDATE t_account SET count = count + %s WHERE account_id = %s", (len(ids), HOT_ACCOUNT))
            self._sleep_rtt()
            self.conn.commit()
        except Exception:
            self.conn.rollback()
            raise
        finally:
            cur.close()

    def _commit_loop(self):
        while True:
            with self.cond:
                while not self.queue:
                    self.cond.wait()
                batch = self.queue.popleft()
                self.busy = True
                run_id = self.run_id
            t0 = time.time()
            try:
                self.transaction([i for i, _, _ in batch], run_id)
                ok = True
            except Exception as exc:  # a lost commit would break the ledger: count it, say it
                print(f"{self.name}: commit failed: {exc!r}", file=sys.stderr, flush=True)
                ok = False
            t1 = time.time()
            with self.cond:
                self.busy = False
                if ok:
                    self.stats["committed_rows"] += len(batch)
                    self.stats["committed_batches"] += 1
                    late = sum(1 for _, d, _ in batch if t1 > d)
                    self.stats["wasted_rows"] += late
                    self.stats["answered_rows"] += len(batch) - late
                    self.batches.append((t0, t1, len(batch)))
                    self.committed_ids.extend(i for i, _, _ in batch)
                else:
                    self.stats["rolled_back"] += 1
            for _, _, fut in batch:
                self.loop.call_soon_threadsafe(_finish, fut, ok)

    def calibrate(self, n: int, rows: int) -> dict:
        """Commit ``n`` batches of ``rows`` rows back to back (run_id 0) and return their times."""
        with self.cond:
            if self.queue or self.busy:
                raise RuntimeError("calibrate needs an idle server")
            self.busy = True
        times = []
        try:
            for _ in range(n):
                t0 = time.perf_counter()
                self.transaction(list(range(rows)), 0)
                times.append((time.perf_counter() - t0) * 1000.0)
        finally:
            with self.cond:
                self.busy = False
        return {"times_ms": times}


def _finish(fut, ok):
    if not fut.done():
        fut.set_result(ok)


async def serve(name: str, rtt_ms: float, db_port: int) -> None:
    import grpc

    loop = asyncio.get_running_loop()
    hk = HotKeyServer(name, rtt_ms, db_port, loop)
    stop = asyncio.Event()

    async def commit(req, ctx):
        return await hk.commit(req, ctx)

    async def configure(req, ctx):
        return hk.configure(req)

    async def stats(req, ctx):
        return hk.snapshot(ids=bool(req.get("ids")))

    async def calibrate(req, ctx):
        return await loop.run_in_executor(None, hk.calibrate, int(req["n"]), int(req["rows"]))

    async def shutdown(req, ctx):
        loop.call_later(0.05, stop.set)
        return {"ok": True}

    def h(fn):
        return grpc.unary_unary_rpc_method_handler(fn, request_deserializer=loads, response_serializer=dumps)

    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {
        "Commit": h(commit), "Configure": h(configure), "Stats": h(stats), "Calibrate": h(calibrate),
        "Shutdown": h(shutdown)}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"PORT {port}", flush=True)
    await stop.wait()
    await server.stop(0.5)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="one hot-key server of the 04b stack")
    ap.add_argument("--name", choices=("B", "C"), required=True)
    ap.add_argument("--rtt-ms", type=float, required=True)
    ap.add_argument("--db-port", type=int, required=True)
    args = ap.parse_args(argv)
    from .orchestrate import die_with_parent_here

    die_with_parent_here()
    asyncio.run(serve(args.name, args.rtt_ms, args.db_port))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
