"""Every exercise has a checker, every checker is used by a notebook's solution, and the stored
solution output says it passes."""

import json
import re
from pathlib import Path

import pytest

from hotkeylab import exercises

ROOT = Path(__file__).resolve().parents[1]
CALL = re.compile(r"""check\(\s*["']([0-9]{2}[a-z]?\.[\w.-]+)["']""")


def _solution_cells():
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
            src = "".join(cell["source"])
            live = "\n".join(line for line in src.splitlines() if not line.lstrip().startswith("#"))
            tags = cell.get("metadata", {}).get("tags", [])
            if cell["cell_type"] == "code" and "hide-input" in tags and CALL.search(live):  # a solution
                yield nb.name, cell, live


def _text(outputs) -> str:
    parts = []
    for o in outputs:
        parts.append("".join(o.get("text", "")))
        for v in o.get("data", {}).values():
            parts.append("".join(v) if isinstance(v, list) else str(v))
    return "\n".join(parts)


def test_every_exercise_is_used_by_a_notebook():
    used = {m for _, _, src in _solution_cells() for m in CALL.findall(src)}
    missing = sorted(set(exercises.ids()) - used)
    assert not missing, f"exercises with a checker but no solution cell calling it: {missing}"


def test_every_checked_id_has_a_checker():
    known = set(exercises.ids())
    for name, _, src in _solution_cells():
        for ex_id in CALL.findall(src):
            assert ex_id in known, f"{name} checks {ex_id!r}, which has no checker"


@pytest.mark.parametrize("name, cell, src", list(_solution_cells()), ids=lambda v: v if isinstance(v, str) and v.endswith("ipynb") else "")
def test_stored_solutions_pass_their_check(name, cell, src):
    out = _text(cell["outputs"])
    assert "not yet" not in out, f"{name}: a stored solution fails its check: {out[:300]}"
    assert "correct" in out, f"{name}: solution cell has no stored verdict: {src[:200]}"
    assert cell["metadata"].get("jupyter", {}).get("source_hidden") is True, f"{name}: solution not collapsed"


def test_unknown_id_is_a_clear_error():
    with pytest.raises(ValueError, match="exercise_id"):
        exercises.check("99.nothing", 1)


def test_as_number_parses_every_checker_the_same_way():
    assert exercises.as_number("12") == exercises.as_number(12) == exercises.as_number(12.0) == 12.0
    for bad in (None, "twelve", float("nan"), [12]):
        assert exercises.as_number(bad) is None


def test_whole_number_checkers_do_not_truncate():
    from hotkeylab.exercise_sets import nb03_split_routing as ex3

    k = ex3.owners_three_dcs()
    assert exercises.check("03.owners_three_dcs", k).ok
    assert not exercises.check("03.owners_three_dcs", k + 0.7).ok  # int() used to accept this as k
    assert not exercises.check("02.round_trips_to_remove", float("nan")).ok
    assert not exercises.check("08.healthy_in_flight", float("nan")).ok


def test_one_notebooks_check_loads_only_its_own_exercise_set():
    """A broken exercise set must not break every notebook's checks: check("01.…") imports nb01 only."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from hotkeylab.exercises import check\n"
        "check('01.latency_32_threads', 1)\n"
        "print(sorted(m for m in sys.modules if m.startswith('hotkeylab.exercise_sets.nb')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['hotkeylab.exercise_sets.nb01_hot_row']"


def test_the_workshop_guide_names_only_exercises_that_exist():
    """docs/workshop.md tells facilitators which exercises to set: every id it names is registered."""
    import re
    from pathlib import Path

    from hotkeylab.exercises import ids

    text = (Path(__file__).resolve().parents[1] / "docs" / "workshop.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(\d\d[ab]?\.[a-z0-9_]+)`", text))
    assert named, "the workshop guide names no exercise"
    assert sorted(named - set(ids())) == []


def test_numeric_states_only_what_differs():
    """numeric() registers close_to against the computed value, known mistakes first (unless one
    coincides with the expected answer), and hands the expected-value function back unchanged."""
    def expected():
        return 40.0

    registered = exercises.numeric(
        "99.numeric_probe", rel=0.02, unit="ms", hint="add T.",
        mistakes=lambda: [exercises.Mistake(30.0, "that is the queue alone."),
                          exercises.Mistake(40.2, "never said: it coincides with the answer.", rel=0.01),
                          exercises.Mistake(50.0, lambda a: f"{a:g} counts N twice.", rel=0.05)])
    try:
        assert registered(expected) is expected
        assert exercises.check("99.numeric_probe", "40.3").ok
        assert exercises.check("99.numeric_probe", 30).message == "that is the queue alone."
        assert exercises.check("99.numeric_probe", 51).message == "51 counts N twice."
        assert exercises.check("99.numeric_probe", 45).message == "45 ms is too high. add T."
        assert exercises.check("99.numeric_probe", "x").message == "expected a number in ms, got 'x'"
    finally:
        exercises._REGISTRY.pop("99.numeric_probe", None)


def test_as_whole_refuses_fractions_with_the_exercise_words():
    assert exercises.as_whole("3", "round trips") == (3, "")
    assert exercises.as_whole(2.7, "servers") == (None, "expected a whole number of servers, got 2.7")
    assert exercises.as_whole(2.7, "round trips", "round up.") == (None, "round trips come whole: got 2.7; round up.")
    assert exercises.as_whole(None, "round trips", "round up.")[1] == "expected a whole number of round trips, got None"
