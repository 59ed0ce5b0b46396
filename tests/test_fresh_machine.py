"""A fresh machine (no MariaDB server, no chromium) passes `make test`: the live-database and browser
tests skip with their reason; none errors (issue 15: one errored at fixture setup).

The check runs the whole db-lab test module and the browser tests in a child pytest with the server hidden from hotkeylab.db_lab.instance
(a plugin makes its lookup find nothing) and chromium pointed at a path that does not exist, and
reads the child's JUnit report."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HIDE_SERVER = '''
import hotkeylab.db_lab.instance as instance
instance._SBIN = ()
instance._which = lambda name: None
'''


def _child(tmp_path, *args):
    (tmp_path / "hide_mariadb.py").write_text(HIDE_SERVER)
    env = {k: v for k, v in os.environ.items() if k != "HOTKEYLAB_REQUIRE_DB"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    env["HOTKEYLAB_CHROMIUM"] = str(tmp_path / "no-chromium-here")
    report = tmp_path / "report.xml"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "hide_mariadb", "-p", "no:cacheprovider", "-q",
         f"--junitxml={report}", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    cases = ET.parse(report).getroot().iter("testcase")
    outcomes = {}
    for case in cases:
        kids = {c.tag: c for c in case}
        kind = next((k for k in ("error", "failure", "skipped") if k in kids), "passed")
        outcomes[f"{case.get('classname')}::{case.get('name')}"] = (kind, kids[kind].get("message", "")
                                                                     if kind in kids else "")
    return proc, outcomes


def test_live_database_and_browser_tests_skip_without_their_servers(tmp_path):
    proc, outcomes = _child(tmp_path, "tests/test_db_lab.py", "tests/browser")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    db = {k: v for k, v in outcomes.items() if "test_db_lab" in k}
    bad = {k: v for k, v in outcomes.items() if v[0] in ("error", "failure")}
    assert not bad, bad  # the whole module, so a live test that forgets its skip mark shows here
    skipped = {k: why for k, (kind, why) in db.items() if kind == "skipped"}
    assert len(skipped) >= 5, outcomes  # every live-database test was collected and skipped
    for name, why in skipped.items():
        assert "mariadb-server" in why, (name, why)  # the reason carries the install hint
    # the browser module skips as a whole (one skip for the module, with the reason)
    assert "no chromium" in proc.stdout + "".join(w for _, w in outcomes.values())
