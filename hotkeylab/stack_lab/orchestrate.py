"""04b · Starting, running and stopping the stack: a private MariaDB, servers B and C, a load generator.

Start reading at :class:`Stack` and :func:`run_turn`. ``with Stack() as st:`` starts a private
MariaDB (:class:`hotkeylab.db_lab.Instance`: temporary datadir, 127.0.0.1, a free port) and two
server processes (:mod:`.server`, ephemeral gRPC ports on 127.0.0.1); ``run_turn(st, "stuck")``
configures the servers, calibrates the merged commit, starts a load-generator process (:mod:`.loadgen`)
for the turn, waits for it and for the queues to empty, and returns a :class:`Measured` run:
windows, the :class:`~.ledger.Ledger`, the measured N of B and C. Leaving the ``with`` stops every
process and removes the datadir, also after an error.

Every child is started with ``PR_SET_PDEATHSIG`` (db_lab's pattern: the kernel sends it SIGTERM when
its parent dies) and checks, once running, that its parent is still the one that started it, so a
SIGKILLed parent leaves no server, load generator or mariadbd behind. The datadir of a SIGKILLed
parent is removed by a janitor process that waits for the parent to die (:func:`_spawn_janitor`).
Parameters are checked (``ValueError``) before anything starts.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from .. import db_lab
from ..metastable import Scenario
from .ledger import Ledger, ledger_from_logs, windows_from_logs
from .scenario import StackConfig, check_supported, scaled, turn_scenario

__all__ = ["Stack", "Measured", "run_turn", "die_with_parent_here", "CALIBRATION_BATCHES"]

CALIBRATION_BATCHES = 15  # merged commits each server makes alone before a run, to measure its N
_PARENT_ENV = "HOTKEYLAB_STACK_PARENT"


def die_with_parent_here() -> None:
    """In a child: SIGTERM me when my parent dies (Linux), and exit now if it is already gone."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except OSError:  # pragma: no cover
            pass
    want = os.environ.get(_PARENT_ENV)
    if want is not None and os.getppid() != int(want):
        os._exit(3)


def _spawn(args: list[str], **kw) -> subprocess.Popen:
    env = dict(os.environ, **{_PARENT_ENV: str(os.getpid())})
    # no preexec_fn: the child sets its own PDEATHSIG first thing and then checks its parent
    # (die_with_parent_here), so no fork handler runs in this gRPC-using process
    return subprocess.Popen([sys.executable, "-m", *args], env=env, start_new_session=True, **kw)


def _spawn_janitor(root: Path, server_pid: int) -> subprocess.Popen:
    """A process that removes ``root`` once this process is gone and mariadbd (``server_pid``, which
    PDEATHSIG stops) has exited. It must outlive us, so it has no PDEATHSIG; it exits as soon as it
    has cleaned up, or at once when :meth:`Stack.stop` closes its stdin after a normal stop."""
    code = ("import os,sys,time,shutil\n"
            "if sys.stdin.read(1)=='':\n"
            "    pid=int(sys.argv[2]); t=time.monotonic()\n"
            "    while os.path.exists(f'/proc/{pid}') and time.monotonic()-t<60: time.sleep(0.1)\n"
            "    shutil.rmtree(sys.argv[1],ignore_errors=True)\n")
    return subprocess.Popen([sys.executable, "-c", code, str(root), str(server_pid)],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


class _Client:
    """Blocking gRPC calls to one server's control methods."""

    def __init__(self, port: int):
        import grpc

        from .wire import SERVICE, dumps, loads

        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=[
            ("grpc.max_receive_message_length", 256 << 20)])
        grpc.channel_ready_future(self.channel).result(timeout=20)
        self._call = {m: self.channel.unary_unary(f"/{SERVICE}/{m}", request_serializer=dumps,
                                                  response_deserializer=loads)
                      for m in ("Configure", "Stats", "Calibrate", "Shutdown")}

    def __call__(self, method: str, req: dict | None = None, timeout: float = 30.0) -> dict:
        return self._call[method](req or {}, timeout=timeout)

    def close(self):
        self.channel.close()


class Stack:
    """MariaDB + server B + server C on 127.0.0.1, started and stopped together."""

    def __init__(self, config: StackConfig | None = None):
        config = StackConfig() if config is None else config
        if not isinstance(config, StackConfig):
            raise ValueError(f"config must be a StackConfig, got {type(config).__name__}")
        self.config = config
        self.db = db_lab.Instance()  # MariaDBNotFound (saying how to install) before anything starts
        self.procs: dict[str, subprocess.Popen] = {}
        self.clients: dict[str, _Client] = {}
        self.ports: dict[str, int] = {}
        self.janitor = None
        self._run_ids = iter(range(1, 1 << 30))

    def start(self) -> Stack:
        try:
            self.db.start()
            self.janitor = _spawn_janitor(self.db.datadir.parent, self.db.proc.pid)
            self.db.create_schema(accounts=1)
            for name in ("B", "C"):
                p = _spawn(["hotkeylab.stack_lab.server", "--name", name, "--rtt-ms",
                            str(self.config.rtt_ms(name)), "--db-port", str(self.db.port)],
                           stdout=subprocess.PIPE, text=True)
                self.procs[name] = p
                line = p.stdout.readline().split()
                if len(line) != 2 or line[0] != "PORT":
                    raise RuntimeError(f"server {name} did not start (said {line!r})")
                self.ports[name] = int(line[1])
                self.clients[name] = _Client(self.ports[name])
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for c in self.clients.values():
            c.close()
        self.clients.clear()
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs.values():
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
            if p.stdout:
                p.stdout.close()
        self.procs.clear()
        self.db.stop()
        if self.janitor is not None:
            self.janitor.stdin.close()  # EOF: the janitor cleans (already clean) and exits
            self.janitor.wait(timeout=10)
            self.janitor = None

    def __enter__(self) -> Stack:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def pids(self) -> dict[str, int]:
        out = {n: p.pid for n, p in self.procs.items()}
        if self.db.proc is not None:
            out["mariadbd"] = self.db.proc.pid
        return out

    def count_rows(self, run_id: int) -> list[int]:
        """The attempt ids in t_trans for ``run_id``."""
        conn = self.db.connect()
        with conn.cursor() as cur:
            cur.execute("SELECT amount FROM t_trans WHERE run_id = %s", (run_id,))
            ids = [r[0] for r in cur.fetchall()]
        conn.close()
        return ids


@dataclass
class Measured:
    """One measured run of one turn on the real stack."""

    turn: str
    repeat: int
    scenario: Scenario  # the scaled scenario the stack ran (the model runs the same one)
    windows: dict
    ledger: Ledger
    batch_ms_b: float  # median merged commit of B alone, measured before the run
    batch_ms_c: float  # … of C alone
    wall_s: float
    extra: dict = field(default_factory=dict)


def _median(xs):
    """The median: a disk flush stalled by another job on the machine makes one commit slow."""
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = len(xs) // 2
    return xs[k] if len(xs) % 2 else (xs[k - 1] + xs[k]) / 2


def _calibrate(st: Stack, rows: int) -> dict[str, float]:
    """Set the 内部计算 time so B's merged commit takes the seed's 16 ms ×scale, then measure both."""
    out = {}
    b = st.clients["B"]
    b("Configure", {"run_id": 0, "batch_max_rows": 20, "batch_max_wait_ms": 1, "compute_ms": 0.0})
    bare = _median(b("Calibrate", {"n": CALIBRATION_BATCHES, "rows": rows}, timeout=60)["times_ms"][1:])
    compute = max(0.0, st.config.target_batch_ms - bare)
    for name, c in st.clients.items():
        c("Configure", {"run_id": 0, "batch_max_rows": 20, "batch_max_wait_ms": 1, "compute_ms": compute})
        out[name] = _median(c("Calibrate", {"n": CALIBRATION_BATCHES, "rows": rows}, timeout=60)["times_ms"][1:])
    out["compute_ms"] = compute
    return out


def run_turn(st: Stack, turn: str | Scenario, *, repeat: int = 0, seed: int | None = None,
             horizon_ms: float | None = None) -> Measured:
    """Run one turn (a name in ``TURNS`` on 04's clock, or a Scenario on it) on the stack."""
    sc0 = turn_scenario(turn, horizon_ms=horizon_ms) if isinstance(turn, str) else turn
    sc = check_supported(scaled(sc0, st.config.scale))
    name = turn if isinstance(turn, str) else "custom"
    seed = st.config.retry_seed + repeat if seed is None else seed
    run_id = next(st._run_ids)
    rows = max(1, round(capacity_rows(sc)))
    cal = _calibrate(st, rows)
    for c in st.clients.values():
        c("Configure", {"run_id": run_id, "batch_max_rows": sc.batch_max_rows,
                        "batch_max_wait_ms": sc.batch_max_wait_ms, "queue_limit": sc.queue_limit,
                        "sample_ms": st.config.sample_ms * st.config.scale})
    r = sc.retry

    def win(w):
        return None if w is None else [w.start_ms, w.end_ms if w.end_ms != float("inf") else 1e18, w.factor]

    cfg = {"seed": seed, "ports": st.ports, "user_rate_per_s": sc.user_rate_per_s,
           "horizon_ms": sc.horizon_ms, "timeout_ms": sc.timeout_ms, "cap_ms": r.cap_ms,
           "min_delay_ms": r.min_delay_ms, "patience_ms": r.patience_ms,
           "max_attempts": None if r.max_attempts == float("inf") else int(r.max_attempts),
           "c_share": st.config.c_share, "peak": win(sc.peak), "second_owner": win(sc.second_owner),
           "degrade": win(sc.degrade)}
    with tempfile.TemporaryDirectory(prefix="hotkeylab-stack-") as tmp:
        cfg_path, out_path = Path(tmp) / "config.json", Path(tmp) / "out.json"
        cfg_path.write_text(json.dumps(cfg))
        wall0 = time.monotonic()
        lg = _spawn(["hotkeylab.stack_lab.loadgen", str(cfg_path), str(out_path)])
        try:
            rc = lg.wait(timeout=sc.horizon_ms / 1000.0 + 120.0)
        except subprocess.TimeoutExpired:
            lg.kill()
            lg.wait()
            raise RuntimeError("the load generator did not finish in time") from None
        if rc != 0:
            raise RuntimeError(f"the load generator failed with exit code {rc}")
        log = json.loads(out_path.read_text())
    # wait until both queues are empty and the threads idle: every accepted row is committed
    deadline = time.monotonic() + 300.0
    while True:
        snaps = {n: c("Stats") for n, c in st.clients.items()}
        if all(s["waiting"] == 0 and not s["busy"] for s in snaps.values()) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    wall = time.monotonic() - wall0
    db_ids = st.count_rows(run_id)
    users, attempts = log["users"], log["attempts"]
    snaps = {n: c("Stats", {"ids": True}, timeout=60) for n, c in st.clients.items()}
    led = ledger_from_logs(users, attempts, snaps, db_ids)
    degraded_n = log["degraded"]
    w = windows_from_logs(users, attempts, snaps, t0=log["t0"], horizon_ms=sc.horizon_ms, window_ms=sc.window_ms)
    w["degraded"] = _degraded_windows(sc, degraded_n, w)
    return Measured(turn=name, repeat=repeat, scenario=sc, windows=w, ledger=led, batch_ms_b=cal["B"],
                    batch_ms_c=cal["C"], wall_s=wall,
                    extra={"compute_ms": cal["compute_ms"], "rows_calibrated": rows, "seed": seed,
                           "rolled_back": sum(s["stats"]["rolled_back"] for s in snaps.values())})


def capacity_rows(sc: Scenario) -> float:
    """Rows in a typical batch at normal load (λT + 1, at most K): the calibration's batch size."""
    return min(sc.batch_max_rows, sc.user_rate_per_s * sc.batch_max_wait_ms / 1000.0 + 1.0)


def _degraded_windows(sc: Scenario, n: int, w: dict):
    """Spread the ``n`` user requests the switch dropped evenly over the degrade window."""
    import numpy as np

    out = np.zeros_like(w["t"])
    if sc.degrade is None or n == 0:
        return out
    width = sc.window_ms / 1000.0
    inside = (w["t"] * 1000.0 >= sc.degrade.start_ms) & (w["t"] * 1000.0 < sc.degrade.end_ms)
    if inside.any():
        out[inside] = n / inside.sum() / width
    return out
