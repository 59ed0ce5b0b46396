"""01b · The private MariaDB instance: find the server, start it on a temporary datadir and a free
loopback port, stop it by its pid file, and never leave it behind.

Start reading at :class:`Instance` (``with Instance() as db: …``). :func:`find_mariadb` looks for
``mariadbd`` and ``mariadb-install-db`` on PATH and in :data:`_SBIN`; a missing server or PyMySQL
client raises :class:`MariaDBNotFound`, whose message says how to install it (:data:`INSTALL_HINT`).
A server is stopped on ``with`` exit, at interpreter exit (:data:`_LIVE`), and by the kernel when
the process that started it dies (:func:`_die_with_parent`).
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..validate import check_int, check_number
from .scenario import HOT_ACCOUNT

__all__ = ["MariaDBNotFound", "Instance", "find_mariadb", "available", "INSTALL_HINT"]


INSTALL_HINT = (
    "install MariaDB's server to run the live lab: `sudo apt-get install mariadb-server` "
    "(Debian/Ubuntu), `sudo dnf install mariadb-server` (Fedora) or `brew install mariadb` (macOS); "
    "no service needs to run, the lab starts its own private instance. The notebooks work without "
    "it, from the committed results in hotkeylab/data/."
)

_SBIN = ("/usr/sbin", "/usr/local/sbin", "/usr/libexec", "/opt/homebrew/bin", "/usr/local/bin")


class MariaDBNotFound(RuntimeError):
    """``mariadbd`` / ``mariadb-install-db`` (or the PyMySQL client) is not installed."""


def _which(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for d in _SBIN:
        p = Path(d) / name
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    return None


def find_mariadb() -> tuple[str, str]:
    """Paths of ``(mariadbd, mariadb-install-db)``; :class:`MariaDBNotFound` saying how to install."""
    server = _which("mariadbd") or _which("mysqld")
    install = _which("mariadb-install-db") or _which("mysql_install_db")
    if server is None or install is None:
        missing = "mariadbd" if server is None else "mariadb-install-db"
        raise MariaDBNotFound(f"{missing} not found on PATH or in {', '.join(_SBIN[:2])}: {INSTALL_HINT}")
    return server, install


def _pymysql():
    try:
        import pymysql
    except ImportError as exc:  # pragma: no cover - the dev extra installs it
        raise MariaDBNotFound(
            "the PyMySQL client is not installed: `pip install pymysql` (it is in hotkeylab's [dev] extra)"
        ) from exc
    return pymysql


def available() -> tuple[bool, str]:
    """``(True, "")`` when a live experiment can run here, else ``(False, reason)``."""
    try:
        find_mariadb()
        _pymysql()
    except MariaDBNotFound as exc:
        return False, str(exc)
    return True, ""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


_LIVE: set = set()  # instances started and not yet stopped, stopped at interpreter exit


@atexit.register
def _stop_leftovers() -> None:  # pragma: no cover - only on an abnormal exit
    for inst in list(_LIVE):
        inst.stop()


class Instance:
    """A private MariaDB server: temporary datadir, 127.0.0.1 only, a free port, no system service.

    Use it as a context manager (``with Instance() as db: …``): it is stopped by its pid file and its
    datadir removed on exit, even after an error. ``database`` holds the lab's schema.
    """

    database = "hotkeylab"

    def __init__(self, startup_timeout_s: float = 60.0, buffer_pool_mb: int = 128):
        self.startup_timeout_s = check_number("startup_timeout_s", startup_timeout_s, low=1.0, high=600.0)
        self.buffer_pool_mb = check_int("buffer_pool_mb", buffer_pool_mb, low=16, high=65536)
        self.server, self.install_db = find_mariadb()
        self.pymysql = _pymysql()
        self.datadir: Path | None = None
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self.version = ""
        self.isolation = ""

    # ------------------------------------------------------------------ lifecycle
    @property
    def pid_file(self) -> Path:
        return self.datadir.parent / "mariadbd.pid"

    @property
    def error_log(self) -> Path:
        return self.datadir.parent / "error.log"

    def start(self) -> Instance:
        if self.proc is not None:
            return self
        root = Path(tempfile.mkdtemp(prefix="hotkeylab-mariadb-"))
        self.datadir = root / "data"
        as_root = hasattr(os, "geteuid") and os.geteuid() == 0
        user = ["--user=root"] if as_root else []
        init = subprocess.run(
            [self.install_db, "--no-defaults", f"--datadir={self.datadir}", *user,
             "--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve"],
            capture_output=True, text=True, timeout=300,
        )
        if init.returncode != 0:
            shutil.rmtree(root, ignore_errors=True)
            raise RuntimeError(f"mariadb-install-db failed ({init.returncode}): {init.stderr[-2000:]}")
        self.port = _free_port()
        cmd = [
            self.server, "--no-defaults", f"--datadir={self.datadir}", f"--socket={root / 'mysql.sock'}",
            f"--port={self.port}", "--bind-address=127.0.0.1", *user, "--skip-grant-tables",
            f"--pid-file={self.pid_file}", f"--log-error={self.error_log}", "--skip-name-resolve",
            f"--innodb-buffer-pool-size={self.buffer_pool_mb}M", "--innodb-flush-log-at-trx-commit=1",
            "--max-connections=600", "--innodb-lock-wait-timeout=50",
        ]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     start_new_session=True, preexec_fn=_die_with_parent)
        _LIVE.add(self)
        deadline = time.monotonic() + self.startup_timeout_s
        while True:
            try:
                conn = self._connect(database=None)
                break
            except self.pymysql.err.OperationalError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    log = self.error_log.read_text(errors="replace")[-2000:] if self.error_log.exists() else ""
                    self.stop()
                    raise RuntimeError(f"mariadbd did not start: {log}") from None
                time.sleep(0.05)
        with conn.cursor() as cur:
            cur.execute("SELECT VERSION(), @@tx_isolation")
            self.version, self.isolation = cur.fetchone()
            cur.execute(f"CREATE DATABASE IF NOT EXISTS {self.database}")
        conn.close()
        return self

    def stop(self) -> None:
        """Stop the server by the pid in its pid file (SIGTERM, then SIGKILL) and remove its files."""
        if self.proc is None:
            return
        pid = self.proc.pid
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            pass
        for sig, wait_s in ((signal.SIGTERM, 30.0), (signal.SIGKILL, 10.0)):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(timeout=wait_s) if pid == self.proc.pid else _wait_gone(pid, wait_s)
                break
            except subprocess.TimeoutExpired:
                continue
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        _LIVE.discard(self)
        self.proc = None
        shutil.rmtree(self.datadir.parent, ignore_errors=True)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def __enter__(self) -> Instance:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # ------------------------------------------------------------------ connections
    def _connect(self, database: str | None = "hotkeylab"):
        return self.pymysql.connect(host="127.0.0.1", port=self.port, user="root", password="",
                                    database=database, autocommit=False, connect_timeout=5)

    def connect(self):
        """A new PyMySQL connection to the lab's database (autocommit off)."""
        if not self.running:
            raise RuntimeError("the instance is not running: use `with Instance() as db:` or db.start()")
        return self._connect(self.database)

    def create_schema(self, accounts: int = 64) -> None:
        """The seed's tables: ``t_account`` (the hot key's row and its counter) and ``t_trans`` (流水)."""
        accounts = check_int("accounts", accounts, low=1, high=100_000)
        conn = self.connect()
        with conn.cursor() as cur:
            cur.execute(
                "CREATE TABLE IF NOT EXISTS t_account (account_id BIGINT PRIMARY KEY, "
                "count BIGINT NOT NULL DEFAULT 0) ENGINE=InnoDB"
            )
            cur.execute(
                "CREATE TABLE IF NOT EXISTS t_trans (id BIGINT AUTO_INCREMENT PRIMARY KEY, "
                "run_id INT NOT NULL, account_id BIGINT NOT NULL, worker INT NOT NULL, "
                "amount INT NOT NULL, KEY (run_id, account_id)) ENGINE=InnoDB"
            )
            cur.executemany("INSERT IGNORE INTO t_account (account_id, count) VALUES (%s, 0)",
                            [(HOT_ACCOUNT + i,) for i in range(accounts)])
        conn.commit()
        conn.close()


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, between fork and exec
    """On Linux, ask the kernel to SIGTERM the server when the process that started it dies, so a
    killed test run or notebook kernel leaves no server behind (atexit does not run on a kill)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except OSError:
            pass


def _wait_gone(pid: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    raise subprocess.TimeoutExpired(str(pid), timeout_s)
