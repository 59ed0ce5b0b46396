"""Guards of the lesson-package layout (GUIDE §1).

Each lesson package has scenario / model / closed_form / figures / lesson modules; no module is
over 400 lines (fast engines tuned for speed are the one exception); importing a package's
``model`` leaves matplotlib and ipywidgets unloaded, so a learner's model reads without plotting.
``PACKAGES`` grows as lessons move into packages; ``LEGACY`` lists the modules still waiting.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "hotkeylab"
PACKAGES = [
    "lock_timer", "rtt", "capstone", "lost_timeouts", "pending_records",
    "routing", "fault_tolerance", "gateway_cascade", "hot_row", "metastable", "db_lab",
]
PARTS = ("scenario.py", "model.py", "closed_form.py", "figures.py", "lesson.py", "__init__.py")
MAX_LINES = 400
FAST_ENGINES = {"metastable/engine_chunked.py", "metastable/engine_fast.py"}
LEGACY: set[str] = set()


@pytest.mark.parametrize("name", PACKAGES)
def test_lesson_package_has_its_parts(name):
    missing = [p for p in PARTS if not (PKG / name / p).exists()]
    assert not missing, f"hotkeylab/{name}/ lacks {missing}"
    doc = (PKG / name / "__init__.py").read_text()
    assert "Where to start reading" in doc


def test_no_module_over_400_lines_outside_the_fast_engines_and_legacy():
    long = {}
    for f in PKG.rglob("*.py"):
        rel = f.relative_to(PKG).as_posix()
        n = len(f.read_text().splitlines())
        if n > MAX_LINES and rel not in FAST_ENGINES | LEGACY:
            long[rel] = n
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_legacy_list_only_names_modules_that_still_need_splitting():
    stale = [m for m in LEGACY if not (PKG / m).exists() or len((PKG / m).read_text().splitlines()) <= MAX_LINES]
    assert not stale, f"remove from LEGACY (split or short now): {stale}"


@pytest.mark.parametrize("name", PACKAGES)
def test_importing_the_model_loads_no_plotting(name):
    code = (
        f"import sys, hotkeylab.{name}.model\n"
        "bad = [m for m in ('matplotlib', 'ipywidgets', 'IPython') if m in sys.modules]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "", f"hotkeylab.{name}.model loads {out.stdout.strip()}"
