"""Every notebook is committed executed, in order, with outputs, checked numbers, no local paths."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
MAX_BYTES = 3_000_000


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks found"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_hygiene(path):
    text = path.read_text(encoding="utf-8")
    nb = json.loads(text)
    code = [c for c in nb["cells"] if c["cell_type"] == "code" and "".join(c["source"]).strip()]
    counts = [c.get("execution_count") for c in code]
    assert None not in counts, f"{path.name}: unexecuted code cells; run `make notebooks`"
    assert counts == list(range(1, len(counts) + 1)), f"{path.name}: not run top to bottom in one kernel: {counts}"
    assert any(c["outputs"] for c in code), f"{path.name}: outputs not stored"
    assert any("NBVAL_CHECK_OUTPUT" in "".join(c["source"]) for c in code), f"{path.name}: no NBVAL_CHECK_OUTPUT cell"
    for c in code:
        if "NBVAL_CHECK_OUTPUT" in "".join(c["source"]):
            assert c["outputs"], f"{path.name}: an NBVAL_CHECK_OUTPUT cell has no stored output"
        for out in c["outputs"]:
            assert out.get("output_type") != "error", f"{path.name}: stored error output"
    assert not re.search(r"/(root|work|home|tmp)/[\w.-]+", text), f"{path.name}: machine-specific absolute path"
    assert path.stat().st_size < MAX_BYTES, f"{path.name}: {path.stat().st_size / 1e6:.1f} MB"
    first = nb["cells"][0]
    assert first["cell_type"] == "markdown"
    head = "".join(first["source"])
    assert re.match(r"# \d\d[a-z]? · ", head), f"{path.name}: first cell must start with '# NN · Title' (or '# NNb · ')"
    if not path.name.startswith("00_"):
        for part in ("You will learn", "Prerequisites", "Time"):
            assert part in head, f"{path.name}: opening cell lacks {part!r}"
        assert any("In this notebook we" in "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    for c in nb["cells"]:
        tags = c.get("metadata", {}).get("tags", [])
        if "hide-input" in tags:
            assert c["metadata"].get("jupyter", {}).get("source_hidden") is True


def test_readme_course_map_lists_every_notebook():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for path in NOTEBOOKS:
        assert path.name in readme, f"README course map lacks {path.name}"


SLICED = re.compile(r"getsource\([^()]*(\([^()]*\))?[^()]*\)\s*[.\[]|__file__|\.py\"?\)\.read")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_code_is_shown_whole_not_sliced_from_module_text(path):
    """Notebooks show an actor with inspect.getsource(actor), never a slice of a module's text."""
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] == "code":
            src = "".join(cell["source"])
            assert not SLICED.search(src), f"{path.name}: {src[:120]!r}"
