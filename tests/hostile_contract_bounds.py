"""Bounded memory and time at the ends of every declared range (issue #20, GUIDE §3 and §8).

For every model in :mod:`hotkeylab.registry` and every field its scenario declares with
``hotkeylab.validate.param``, the model is run at the ends of the declared range (the low and high
ends, just inside an open end, infinity where allowed, the largest finite number where there is no
upper bound, every choice, both booleans), plus a few combinations that stress memory and time
(the largest horizon with the smallest window, the largest load over the largest horizon). Every
field of the preset is also given ``None`` and an empty value.

A case passes if it returns a run whose ledger checks, or raises ValueError naming a parameter of
the scenario (a combination the scenario refuses). ``None`` and empty values must raise ValueError
naming the field (``None`` may run where the field declares ``optional``). Any other exception, a
hang or the memory limit is a failure.

Each entry's cases run in ONE subprocess (``python -c``), started before the tests, two at a time:

- memory: ``RLIMIT_AS`` of :data:`AS_LIMIT_MB` (the child imports numpy and simpy under it with
  single-threaded BLAS, about 300 MB of address space); a case that exceeds it raises MemoryError
  (a failure). The peak resident set after each case must stay <= :data:`RSS_LIMIT_MB`.
- time: :data:`CASE_SECONDS` of CPU time per case (user + system: on a shared 2-core machine the
  wall time of the same run varied 16–28 s with the load; its CPU time is the run's own cost). The
  child raises in the running case from a SIGPROF (``ITIMER_PROF``); a case stuck in C code, where
  the signal cannot interrupt, or waiting without CPU, is killed by the parent after
  :data:`WALL_FACTOR` × the limit of wall time, recorded as a hang, and a new child runs the
  remaining cases.

Hypothesis is not used here: every case is a whole run, so the cases are the ends themselves.

This is the hostile run of issue #20, not part of ``make test``: the file name keeps pytest from
collecting it, and ``make test-hostile`` runs it. Its first run found 58 open failures; on
2026-12-02 it ran 1,315 cases in 3.6 min on a quiet machine: 1,311 passed and 4 strict xfails (the
metastable model at its 6 M event cap: memory and time). On 2026-12-03, with metastable's memory in
typed arrays and blocks and its cap at 2.4 M events, its 73 cases ran in 2.5 min on a quiet machine:
70 passed, and 3 strict xfails were over the 20 s only (no case over the memory bound). Later that
day, with the event loop's calendar and the chunked path's early hand-back, and the limit counted in
CPU time, they ran in 2.5 min under load 2–3: 71 passed, 2 non-strict xfails (1e6 users/s). A
case's 20 s depends on the machine's load, which is why ``make test`` runs the same ends at a lowered
cap instead (tests/test_contract.py).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import queue
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from hotkeylab.registry import entries
from hotkeylab.validate import declared_ranges

AS_LIMIT_MB = 768  # address space of the child (numpy/simpy start under it: ~300 MB)
RSS_LIMIT_MB = 500  # the bound the contract states for one run
CASE_SECONDS = 20.0  # CPU time (user + system) of one case on this 2-core machine
WALL_FACTOR = 3.0  # the parent kills a child whose case has run this many × CASE_SECONDS of wall time
PARALLEL = 2

ENTRIES = entries()
BY_NAME = {e.name: e for e in ENTRIES}

# Cases that still break the contract in models this file does not own (issue #20), marked strict:
# a fix makes the case pass, the strict xfail then fails, and the case must leave this dict.
# Keys are "<registry entry name>:<case id>"; values say what goes wrong.
KNOWN: dict[str, str] = {
    '04.metastable:user_rate_per_s=1000000.0': 'owned here, at the limit (time only): at the 2.4e6-event cap a refusal storm of 1e6 users/s holds ~300,000 retries waiting; with the event calendar (b9070c2) the loop takes ~7 µs an event, 16–28 s of wall time on this 2-core machine with the load, over the 20 s of CPU in the hostile run of 2026-12-03 14:16 (load 2–3); memory ~410 MB, under the bound',
    '04.metastable:horizon_ms=36000000.0,user_rate_per_s=1000000.0': 'owned here, at the limit (time only): the same run as user_rate_per_s=1e6 (the cap is reached at 0.33 s of simulated time)',
}
#: Cases in KNOWN within a few seconds of the limit (a quiet machine may pass them): not strict.
AT_THE_LIMIT = {'04.metastable:user_rate_per_s=1000000.0',
                '04.metastable:horizon_ms=36000000.0,user_rate_per_s=1000000.0'}


# ------------------------------------------------------------------------------ the cases
def _ends(name: str, spec, preset_value) -> list:
    """The values at the ends of one declared range (the kernel's :meth:`Spec.ends`)."""
    return spec.ends(preset_value)


def _empty(value):
    """An empty value of the preset value's kind."""
    if isinstance(value, (list, tuple)):
        return type(value)()
    if isinstance(value, dict):
        return {}
    return ""


def _cases(entry) -> list[tuple[str, str, dict]]:
    """``(case id, kind, changes)``: kind "end" (runs or ValueError) or "bad" (ValueError naming
    the field; "none-optional" may also run)."""
    preset = entry.preset
    ranges = declared_ranges(preset)
    cases = []
    for name, spec in ranges.items():
        for v in _ends(name, spec, getattr(preset, name)):
            cases.append((f"{name}={v!r}", "end", {name: v}))
    # combinations: the finest windows over the longest horizon (memory), the largest load over
    # the longest horizon (time)
    hz, win = ranges.get("horizon_ms"), ranges.get("window_ms")
    if hz is not None and hz.high is not None:
        h = _ends("horizon_ms", hz, None)[-1]
        if win is not None:
            for w in (_ends("window_ms", win, None)[0], 1.0):
                cases.append((f"horizon_ms={h!r},window_ms={w!r}", "end", {"horizon_ms": h, "window_ms": w}))
        if entry.load in ranges and ranges[entry.load].high is not None:
            lv = _ends(entry.load, ranges[entry.load], None)[-1]
            cases.append((f"horizon_ms={h!r},{entry.load}={lv!r}", "end", {"horizon_ms": h, entry.load: lv}))
    for f in dataclasses.fields(preset):
        value = getattr(preset, f.name)
        spec = ranges.get(f.name)
        declared = f.type if isinstance(f.type, str) else str(f.type)
        optional = value is None or "None" in declared or (spec is not None and spec.optional)
        if not optional:
            cases.append((f"{f.name}=None", "bad", {f.name: None}))
        empty = _empty(value)
        cases.append((f"{f.name}={empty!r}", "bad", {f.name: empty}))
    return cases


CASES = {e.name: _cases(e) for e in ENTRIES}


# ------------------------------------------------------------------------------ the child
_CHILD = r"""
import json, math, resource, signal, sys, time
resource.setrlimit(resource.RLIMIT_AS, ({as_bytes}, {as_bytes}))

class CaseTimeout(BaseException):
    pass

def _alarm(signum, frame):
    raise CaseTimeout()

signal.signal(signal.SIGPROF, _alarm)

def _decode(v):
    if isinstance(v, dict) and "__float__" in v:
        return float(v["__float__"])
    if isinstance(v, dict) and "__tuple__" in v:
        return tuple(v["__tuple__"])
    return v

from dataclasses import fields
from hotkeylab.registry import entries
entry = [e for e in entries() if e.name == {name!r}][0]
names = [f.name for f in fields(entry.preset)]
for line in sys.stdin:
    i, kind, changes = json.loads(line)
    changes = {{k: _decode(v) for k, v in changes.items()}}
    print(json.dumps(["start", i]), flush=True)
    t0 = time.process_time()
    signal.setitimer(signal.ITIMER_PROF, {seconds})  # the case's CPU time (user + system)
    try:
        run = entry.run(seed=0, **changes)
        run.ledger.check()
        res = ["ran", ""]
    except ValueError as err:
        res = ["ValueError", str(err)[:300]]
    except CaseTimeout:
        res = ["timeout", ""]
    except MemoryError:
        res = ["MemoryError", ""]
    except BaseException as err:
        res = [type(err).__name__, str(err)[:300]]
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(["done", i, res[0], res[1], time.process_time() - t0, rss]), flush=True)
    if rss > {rss_limit}:  # ru_maxrss is the child's peak: a fresh child measures the next case
        sys.exit(0)
"""


def _encode(v):
    if isinstance(v, float) and not math.isfinite(v):
        return {"__float__": repr(v)}
    if isinstance(v, tuple):
        return {"__tuple__": list(v)}
    return v


def _run_entry(name: str) -> dict[int, tuple]:
    """Run every case of entry ``name`` in a child; ``{case index: (outcome, message, s, rss)}``."""
    cases = CASES[name]
    code = _CHILD.format(as_bytes=AS_LIMIT_MB << 20, name=name, seconds=CASE_SECONDS, rss_limit=RSS_LIMIT_MB)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    results: dict[int, tuple] = {}
    todo = list(range(len(cases)))
    while todo:
        proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda p=proc, q=lines: [q.put(x) for x in p.stdout] + [q.put(None)],
                         daemon=True).start()
        for i in todo:
            _, kind, changes = cases[i]
            proc.stdin.write(json.dumps([i, kind, {k: _encode(v) for k, v in changes.items()}]) + "\n")
        proc.stdin.close()
        current, startup, progressed = None, 60.0, False
        while True:
            try:
                line = lines.get(timeout=startup if current is None else WALL_FACTOR * CASE_SECONDS + 10.0)
            except queue.Empty:
                line = "hang"
            if line is None or line == "hang":
                proc.kill()
                proc.wait()
                if current is None and progressed and line is None:  # it left after a case: go on
                    todo = [i for i in todo if i not in results]
                elif current is None:  # the child died before starting a case
                    err = proc.stderr.read()[-500:]
                    for i in todo:
                        results[i] = ("child failed", err, 0.0, 0.0)
                    todo = []
                else:
                    what = "hang (killed)" if line == "hang" else "child died"
                    results[current] = (what, proc.stderr.read()[-300:], CASE_SECONDS, 0.0)
                    todo = [i for i in todo if i not in results]
                break
            msg = json.loads(line)
            if msg[0] == "start":
                current, startup = msg[1], 60.0
            else:
                results[msg[1]] = tuple(msg[2:])
                current, progressed = None, True
                startup = WALL_FACTOR * CASE_SECONDS + 10.0
                if len([i for i in todo if i not in results]) == 0:
                    proc.wait()
                    todo = []
                    break
    return results


_POOL = ThreadPoolExecutor(PARALLEL)
_FUTURES: dict = {}


@pytest.fixture(scope="module")
def results(request):
    """Start the child of every selected entry (two at a time); each test waits for its entry's
    results."""
    selected = {item.callspec.params["name"] for item in request.session.items
                if hasattr(item, "callspec") and "name" in item.callspec.params}
    for e in ENTRIES:
        if e.name in selected and e.name not in _FUTURES:
            _FUTURES[e.name] = _POOL.submit(_run_entry, e.name)
    return _FUTURES


def _verdict(entry, kind: str, changes: dict, outcome: str, message: str, rss: float) -> str | None:
    """None if the case keeps the contract, else what went wrong."""
    if rss > RSS_LIMIT_MB:
        return f"peak RSS {rss:.0f} MB > {RSS_LIMIT_MB} MB"
    field_names = [f.name for f in dataclasses.fields(entry.preset)]
    if outcome == "ran":
        if kind == "bad":
            return f"accepted {changes!r}"
        return None
    if outcome == "ValueError":
        names = list(changes) if kind == "bad" else field_names
        if any(n in message for n in names):
            return None
        return f"ValueError not naming {'/'.join(names[:3])}: {message}"
    return f"{outcome}: {message}"


PARAMS = []
for _e in ENTRIES:
    for _i, (_cid, _kind, _changes) in enumerate(CASES[_e.name]):
        key = f"{_e.name}:{_cid}"
        marks = [pytest.mark.xfail(strict=key not in AT_THE_LIMIT, reason=KNOWN[key])] if key in KNOWN else []
        PARAMS.append(pytest.param(_e.name, _i, id=key, marks=marks))


@pytest.mark.parametrize(("name", "index"), PARAMS)
def test_ends_of_declared_ranges_keep_the_contract(results, name, index):
    entry = BY_NAME[name]
    _cid, kind, changes = CASES[name][index]
    outcome, message, seconds, rss = results[name].result()[index]
    problem = _verdict(entry, kind, changes, outcome, message, rss)
    assert problem is None, f"{name} with {changes!r}: {problem} ({seconds:.1f} s)"


def test_every_entry_has_cases():
    """Every model has at least its None/empty cases (the ends appear as ranges are declared)."""
    assert all(CASES[e.name] for e in ENTRIES)
