"""01b · The committed measurements: ``hotkeylab/data/db_lab_runs.csv`` (one row per run) and
``db_lab_trace.csv`` (one run's lock grants and COMMIT returns), each headed by the machine they
were measured on (:func:`machine_description`). Notebooks read them with :func:`load_runs` and
:func:`load_trace` and need no database.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
from dataclasses import asdict, fields
from pathlib import Path

from ..csvdata import read_commented_csv, write_commented_csv
from .instance import INSTALL_HINT, Instance
from .results import RunResult, TxnTrace
from .scenario import TRACE_RUN, Experiment

__all__ = [
    "DATA_DIR",
    "RUNS_CSV",
    "TRACE_CSV",
    "machine_description",
    "write_runs",
    "write_trace",
    "load_runs",
    "load_trace",
]

DATA_DIR = Path(__file__).resolve().parents[1] / "data"
RUNS_CSV = DATA_DIR / "db_lab_runs.csv"
TRACE_CSV = DATA_DIR / "db_lab_trace.csv"


def machine_description(db: Instance | None = None) -> dict:
    """Where the numbers were measured: CPU, cores, OS, Python, PyMySQL and MariaDB versions."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        from importlib.metadata import version

        pymysql_version = version("pymysql")
    except ImportError:  # pragma: no cover
        pymysql_version = "absent"
    return {
        "measured": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "pymysql": pymysql_version,
        "mariadb": db.version if db is not None else "",
        "client": "PyMySQL over TCP on 127.0.0.1; RTT emulated by a client-side time.sleep",
        "innodb_flush_log_at_trx_commit": "1",
        "isolation": db.isolation if db is not None else "",
        "load_1min_at_start": _loadavg(),
    }


def _loadavg() -> str:
    """The 1-minute load average (runnable processes), so readers see how busy the machine was."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except (OSError, AttributeError):  # pragma: no cover - not on every OS
        return "unknown"


_RUN_FIELDS = [f.name for f in fields(RunResult)]
_TRACE_FIELDS = [f.name for f in fields(TxnTrace)]


def _write(path: Path, machine: dict, names: list[str], rows: list[dict]) -> Path:
    return write_commented_csv(path, machine, names, rows)


def write_runs(results: list[RunResult], path=RUNS_CSV, machine: dict | None = None) -> Path:
    return _write(path, machine or machine_description(), _RUN_FIELDS, [asdict(r) for r in results])


def write_trace(trace: list[TxnTrace], path=TRACE_CSV, machine: dict | None = None,
                exp: Experiment = TRACE_RUN) -> Path:
    m = dict(machine or machine_description())
    m["trace_run"] = f"threads={exp.threads} rtt_ms={exp.rtt_ms} inserts={exp.inserts}"
    return _write(path, m, _TRACE_FIELDS, [asdict(t) for t in trace])


def _read(path: Path) -> tuple[dict, list[dict]]:
    return read_commented_csv(path, f"run `make db-lab` to measure it ({INSTALL_HINT})")


def _convert(cls, row: dict):
    out = {}
    for f in fields(cls):
        v = row[f.name]
        if f.type in ("int", int):
            out[f.name] = int(v)
        elif f.type in ("bool", bool):
            out[f.name] = v == "True"
        elif f.type in ("str", str):
            out[f.name] = v
        else:
            out[f.name] = float(v)
    return cls(**out)


def load_runs(path=RUNS_CSV) -> tuple[dict, list[RunResult]]:
    """``(machine, results)`` from the committed CSV (no database needed)."""
    machine, rows = _read(path)
    return machine, [_convert(RunResult, r) for r in rows]


def load_trace(path=TRACE_CSV) -> tuple[dict, list[TxnTrace]]:
    machine, rows = _read(path)
    return machine, [_convert(TxnTrace, r) for r in rows]
