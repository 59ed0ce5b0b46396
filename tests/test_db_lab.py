"""The real-database lab (hotkeylab.db_lab).

Tests marked ``db`` start a private MariaDB instance; they are skipped, with the reason, when
``mariadbd`` is not installed (``make test-db`` sets HOTKEYLAB_REQUIRE_DB=1 and fails instead).
The others check the parameter errors, the files and the committed measurements, with no database.
"""

from __future__ import annotations

import math
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hotkeylab import capacity, db_lab
from hotkeylab.db_lab import Experiment, TxnTrace

OK, WHY = db_lab.available()
if not OK and os.environ.get("HOTKEYLAB_REQUIRE_DB"):
    raise RuntimeError(f"HOTKEYLAB_REQUIRE_DB is set but the live lab cannot run: {WHY}")
needs_db = pytest.mark.skipif(not OK, reason=f"live MariaDB lab skipped: {WHY}")

PLATEAU_TOL = 0.15  # the tolerance: plateau within 15% of 1000 / hold measured with one thread


# --------------------------------------------------------------------------- without a database
@pytest.mark.parametrize(
    "field, value",
    [("threads", 0), ("threads", 257), ("threads", 2.5), ("rtt_ms", -0.1), ("rtt_ms", math.nan),
     ("inserts", -1), ("rows_per_insert", 0), ("duration_s", 0.0), ("warmup_s", -1.0),
     ("shared_row", "yes"), ("order", "lock_sometimes"), ("rtt_outside_lock", 1)],
)
def test_bad_experiment_raises_naming_the_parameter(field, value):
    with pytest.raises(ValueError, match=field):
        Experiment(**{field: value})


def test_missing_mariadb_says_how_to_install(monkeypatch):
    monkeypatch.setattr(db_lab.instance.shutil, "which", lambda name: None)
    monkeypatch.setattr(db_lab.instance, "_SBIN", ())
    with pytest.raises(db_lab.MariaDBNotFound, match="apt-get install mariadb-server"):
        db_lab.find_mariadb()
    with pytest.raises(db_lab.MariaDBNotFound):
        db_lab.Instance()
    ok, why = db_lab.available()
    assert not ok and "mariadb-server" in why


def test_round_trips_under_lock_and_rows():
    exp = Experiment(inserts=3, rows_per_insert=20)
    assert exp.round_trips_under_lock == 5 and exp.rows_per_txn == 60
    assert exp.statements_under_lock == 4
    assert Experiment(inserts=3, order="lock_last").round_trips_under_lock == 2
    assert Experiment(inserts=3, order="update_only").round_trips_under_lock == 1
    assert Experiment(inserts=3, order="update_only").statements_under_lock == 0


def test_parts_hold_closed_form_and_errors():
    parts = db_lab.Parts(overshoot_ms=0.1, statement_ms=0.2, commit_ms=0.4)
    assert parts.hold_ms(1.5, 4) == pytest.approx(6 * 1.6 + 5 * 0.2 + 0.4)
    assert parts.hold_ms(1.5, 4, "lock_last") == pytest.approx(2 * 1.6 + 0.2 + 0.4)
    assert parts.hold_ms(1.5, 4, "update_only") == pytest.approx(1.6 + 0.4)
    with pytest.raises(ValueError, match="rtt_ms"):
        parts.hold_ms(-1, 4)
    with pytest.raises(ValueError, match="order"):
        parts.hold_ms(1.5, 4, "sometimes")
    # outside the lock: BEGIN and the locking statement, plus the INSERTs sent before the lock
    assert parts.outside_ms(1.5, 4) == pytest.approx(2 * 1.6)
    assert parts.outside_ms(1.5, 4, "lock_last") == pytest.approx(6 * 1.6 + 4 * 0.2)
    assert db_lab.Parts(0.1, 0.2, 0.4, base_outside_ms=0.3).outside_ms(1.5, 4) == pytest.approx(2 * 1.6 + 0.3)
    hold, out = parts.hold_ms(1.5, 4, "update_only"), parts.outside_ms(1.5, 4, "update_only")
    assert parts.knee_threads(1.5, 4, "update_only") == pytest.approx((hold + out) / hold)
    assert parts.tps(1.5, 4, "update_only", threads=1) == pytest.approx(1000 / (hold + out))
    assert parts.tps(1.5, 4, "update_only", threads=64) == pytest.approx(1000 / hold)


def test_early_release_fraction():
    # worker 1 gets the lock at 5.0, before worker 0's COMMIT returned at 5.5: an early release;
    # worker 0 gets it back at 12.0, after worker 1's COMMIT returned at 11.0: not early.
    tr = [TxnTrace(0, 0.0, 0.1, 4.8, 5.5), TxnTrace(1, 0.2, 5.0, 10.0, 11.0), TxnTrace(0, 6.0, 12.0, 15.0, 15.5)]
    assert db_lab.early_release_fraction(tr) == 0.5
    assert math.isnan(db_lab.early_release_fraction(tr[:1]))


def test_files_round_trip(tmp_path):
    machine, runs = db_lab.load_runs()
    _, trace = db_lab.load_trace()
    p = db_lab.write_runs(runs, tmp_path / "runs.csv", machine)
    q = db_lab.write_trace(trace, tmp_path / "trace.csv", machine)
    m2, runs2 = db_lab.load_runs(p)
    _, trace2 = db_lab.load_trace(q)
    assert m2["cpu"] == machine["cpu"] and len(runs2) == len(runs) and len(trace2) == len(trace)
    for a, b in zip(runs, runs2, strict=True):
        assert a.threads == b.threads and a.shared_row == b.shared_row and a.committed == b.committed
        assert a.hold_ms == pytest.approx(b.hold_ms, rel=1e-5)
    with pytest.raises(FileNotFoundError, match="make db-lab"):
        db_lab.load_runs(tmp_path / "absent.csv")


# --------------------------------------------------------------------------- the committed measurements
MACHINE, RUNS = db_lab.load_runs()


def _hot(rtt, inserts=1):
    return db_lab.hot_runs(RUNS, rtt, inserts)


def test_hot_runs_takes_the_median_of_repeats():
    ones = db_lab.repeats(RUNS, 1.5, threads=1)
    assert len(ones) == db_lab.ONE_THREAD_REPEATS
    holds = sorted(r.hold_ms for r in ones)
    assert _hot(1.5)[1].hold_ms == holds[(len(holds) - 1) // 2]


def test_early_release_needs_a_log_flush():
    """With no INSERT the UPDATE adds 0: nothing to flush, and the next SELECT no longer returns
    before the previous COMMIT (the client-side inversions left are scheduling noise)."""
    series = {r.inserts: r for r in db_lab.statements_series(RUNS)}
    assert series[0].early_release < 0.2
    assert min(series[k].early_release for k in series if k > 0) > 0.8
    assert series[0].commit_ms < series[1].commit_ms


def test_committed_data_describes_its_machine_and_loses_nothing():
    for key in ("measured", "cpu", "cores", "mariadb", "python", "pymysql"):
        assert MACHINE.get(key), key
    assert "MariaDB" in MACHINE["mariadb"]
    for r in RUNS:
        r.check()
        assert r.committed > 0


@pytest.mark.parametrize("rtt", [1.5, 3.0])
def test_committed_plateau_matches_one_thread_hold(rtt):
    runs = _hot(rtt)
    ceiling = capacity.tps_ceiling(runs[1].hold_ms)
    for n, r in runs.items():
        if n >= 2:
            assert r.tps == pytest.approx(ceiling, rel=PLATEAU_TOL), (n, r.tps, ceiling)


def test_committed_fixes_raise_the_ceiling_for_many_committers_only():
    parts = db_lab.measured_parts(RUNS)
    for k in (1, 4):
        tps = {(o, n): db_lab.hot_runs(RUNS, 1.5, k, o, rtt_outside_lock=True)[n].tps
               for o in db_lab.ORDERS for n in (1, 8)}
        assert tps[("lock_first", 8)] < tps[("lock_last", 8)] < tps[("update_only", 8)], (k, tps)
        for o in db_lab.ORDERS:  # 8 committers fill the lock: its ceiling from the measured parts
            assert tps[(o, 8)] == pytest.approx(parts.tps(1.5, k, o, 8), rel=PLATEAU_TOL), (o, k)
        # one committer pays every round trip, in the lock or not: the order gains it little
        one = [tps[(o, 1)] for o in db_lab.ORDERS]
        assert max(one) < 1.5 * min(one), one
    assert (db_lab.hot_runs(RUNS, 1.5, 4, "lock_last", rtt_outside_lock=True)[8].tps
            > 2 * db_lab.hot_runs(RUNS, 1.5, 4, "lock_first", rtt_outside_lock=True)[8].tps)


def test_committed_control_is_not_the_bottleneck():
    for rtt in (0.5, 1.5, 3.0):
        hot = max(r.tps for r in _hot(rtt).values())
        own = max(r.tps for r in RUNS if not r.shared_row and r.rtt_ms == rtt)
        assert own > 2 * hot, (rtt, own, hot)


# --------------------------------------------------------------------------- with a live database
@pytest.fixture(scope="module")
def db():
    # Skip here too, not only in the marks: a test that forgets `@needs_db` then skips with the
    # install hint instead of erroring at setup (issue 15: a fresh machine saw exactly that).
    if not OK:
        pytest.skip(f"live MariaDB lab skipped: {WHY}")
    inst = db_lab.Instance()
    inst.start()
    yield inst
    inst.stop()


def _plateau_measurement(db, base):
    # the model's input, measured three times: the median run stands (as in make db-lab)
    one = db_lab.median_run([db_lab.run_experiment(db, replace(base, threads=1, duration_s=0.6))
                              for _ in range(3)])
    two = db_lab.run_experiment(db, replace(base, threads=2))
    eight = db_lab.run_experiment(db, replace(base, threads=8))
    for r in (one, two, eight):
        r.check()  # rows the clients committed == counter increase == rows in t_trans
        assert r.rows_committed == r.total_committed * r.inserts * r.rows_per_insert
    return one, two, eight


@pytest.mark.db
@needs_db
def test_live_plateau_and_nothing_lost(db):
    base = Experiment(rtt_ms=1.5, duration_s=1.0, warmup_s=0.2)
    one, two, eight = _plateau_measurement(db, base)

    def fits(one, two, eight) -> bool:
        if not (one.hold_ms > 0 and math.isfinite(one.hold_ms)):  # no hold measured in that run
            return False
        c = capacity.tps_ceiling(one.hold_ms)
        return two.tps == pytest.approx(c, rel=PLATEAU_TOL) and eight.tps == pytest.approx(c, rel=PLATEAU_TOL)

    if not fits(one, two, eight):
        # A burst of load elsewhere on the machine slows the COMMIT's flush, which InnoDB does after
        # releasing the lock (01b, departure 1), so one run can miss (one CI run once measured no
        # hold at all: NaN). Measure once more; the assertions below hold the second measurement to
        # the same tolerance.
        one, two, eight = _plateau_measurement(db, base)
    assert one.hold_ms > 0 and math.isfinite(one.hold_ms), f"no lock hold measured: {one}"
    ceiling = capacity.tps_ceiling(one.hold_ms)
    assert two.tps == pytest.approx(ceiling, rel=PLATEAU_TOL)
    assert eight.tps == pytest.approx(ceiling, rel=PLATEAU_TOL)
    assert eight.tps <= 1.10 * two.tps, "TPS must not rise with threads on one row"
    # Little's law on the closed loop: each of the 8 threads has one transaction in flight
    in_flight = capacity.littles_law(rate_per_s=eight.tps, time_in_system_ms=eight.latency_ms)
    assert in_flight == pytest.approx(8, rel=0.10)
    assert eight.acquire_ms > 3 * two.acquire_ms, "the wait for the lock grows with threads"
    # the control: the same transaction on one row per worker is several times faster
    own = db_lab.run_experiment(db, replace(base, threads=8, shared_row=False))
    own.check()
    assert own.tps > 2 * eight.tps


@pytest.mark.db
@needs_db
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    threads=st.integers(1, 6),
    rtt=st.sampled_from([0.0, 0.3, 1.0]),
    inserts=st.integers(0, 3),
    rows=st.integers(1, 40),
    shared=st.booleans(),
    order=st.sampled_from(db_lab.ORDERS),
    outside=st.booleans(),
)
def test_live_ledger_over_random_parameters(db, threads, rtt, inserts, rows, shared, order, outside):
    r = db_lab.run_experiment(db, Experiment(threads=threads, rtt_ms=rtt, inserts=inserts,
                                             rows_per_insert=rows, duration_s=0.2, warmup_s=0.0,
                                             shared_row=shared, order=order, rtt_outside_lock=outside))
    r.check()
    assert r.begun == r.total_committed + r.rolled_back


@pytest.mark.db
@needs_db
def test_instance_stops_and_leaves_nothing_behind():
    with db_lab.Instance() as inst:
        pid = int(inst.pid_file.read_text())
        root = inst.datadir.parent
        assert inst.running and root.exists()
        r, trace = db_lab.run_experiment(inst, Experiment(threads=2, rtt_ms=1.0, duration_s=0.5),
                                         keep_trace=True)
        assert trace and r.committed == len(trace)
        assert r.early_release >= 0.5  # InnoDB lets the next transaction in before COMMIT returns
    assert not inst.running
    assert not Path(f"/proc/{pid}").exists()
    assert not root.exists()
    with pytest.raises(RuntimeError, match="not running"):
        inst.connect()


@pytest.mark.db
@needs_db
def test_quick_check_starts_and_stops_its_own_instance():
    before = set(db_lab._LIVE)
    runs = db_lab.quick_check(threads=(1, 4), duration_s=0.4)
    assert [r.threads for r in runs] == [1, 4]
    assert set(db_lab._LIVE) == before


def test_hold_budget_figure_and_widget_body():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from ipywidgets import interactive

    ax = db_lab.plot_hold_budget(RUNS, rtt_ms=1.5, inserts=4)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [db_lab.ORDER_LABELS[o] for o in db_lab.ORDERS]
    texts = [t.get_text() for t in ax.texts]
    parts = db_lab.measured_parts(RUNS)
    for o, text in zip(db_lab.ORDERS, texts, strict=True):
        assert f"{capacity.tps_ceiling(parts.hold_ms(1.5, 4, o)):.0f} TPS" in text
    plt.close("all")
    w = interactive(db_lab.what_if_orders, rtt_ms=(0.1, 5.0, 0.1), inserts=(0, 10))
    w.children[0].value = 3.0
    w.children[1].value = 8
    w.update()
    assert w.result is None  # nothing echoed under the figure
    xlabel = plt.gcf().axes[0].get_xlabel()
    assert "8 batchInsert" in xlabel and "RTT 3 ms" in xlabel
    plt.close("all")


@pytest.mark.db
@needs_db
def test_server_dies_with_a_killed_parent():
    """A test run or kernel killed with SIGKILL (no atexit) must not leave its server behind."""
    code = ("import time\nfrom hotkeylab import db_lab\ndb = db_lab.Instance().start()\n"
            "print(db.proc.pid, db.datadir.parent, flush=True)\ntime.sleep(120)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    pid_text, root = parent.stdout.readline().split()
    server = int(pid_text)
    assert Path(f"/proc/{server}").exists()
    parent.send_signal(signal.SIGKILL)
    parent.wait(timeout=10)
    deadline = time.monotonic() + 40
    while Path(f"/proc/{server}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{server}").exists(), "mariadbd outlived the process that started it"
    shutil.rmtree(root, ignore_errors=True)  # the parent could not clean up: it was killed


def test_median_run_leaves_out_runs_that_measured_no_hold():
    from types import SimpleNamespace as R

    group = [R(hold_ms=float("nan")), R(hold_ms=3.0), R(hold_ms=2.0), R(hold_ms=float("nan"))]
    assert db_lab.median_run(group).hold_ms == 2.0  # lower middle of the two measured ones
    with pytest.raises(ValueError, match="group must hold at least one run that measured a lock hold"):
        db_lab.median_run([R(hold_ms=float("nan"))])
