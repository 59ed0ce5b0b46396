"""Committed measurements as CSV with a commented header (``# key: value`` lines describing the
machine), shared by the labs that measure real software (01b's db_lab, 04b's stack_lab)."""

from __future__ import annotations

import csv
from pathlib import Path

__all__ = ["write_commented_csv", "read_commented_csv"]


def write_commented_csv(path, machine: dict, names: list[str], rows: list[dict]) -> Path:
    """Write ``machine`` as ``# key: value`` lines, then ``rows`` (floats to 6 significant digits)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        for k, v in machine.items():
            fh.write(f"# {k}: {v}\n")
        wr = csv.DictWriter(fh, fieldnames=names, lineterminator="\n")
        wr.writeheader()
        for r in rows:
            wr.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    return path


def read_commented_csv(path, missing_hint: str) -> tuple[dict, list[dict]]:
    """``(machine, rows)`` of a file written by :func:`write_commented_csv`; a missing file raises
    FileNotFoundError ending with ``missing_hint`` (how to measure it)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path.name} not found: {missing_hint}")
    machine, body = {}, []
    for line in path.read_text().splitlines():
        if line.startswith("# "):
            k, _, v = line[2:].partition(": ")
            machine[k] = v
        elif line.strip():
            body.append(line)
    return machine, list(csv.DictReader(body))
