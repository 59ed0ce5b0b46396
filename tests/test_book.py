"""`make book`'s build: Jupyter Book v1, offline, from the stored outputs; every notebook gets a
page, and every notebook with a figure has it on its page."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    if shutil.which("jupyter-book", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("jupyter-book is not installed (it comes with the [dev] extra)")
    src = tmp_path_factory.mktemp("book_src")
    out = tmp_path_factory.mktemp("book_out")
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(ROOT / "book" / name, src / name)
    shutil.copytree(ROOT / "notebooks", src / "notebooks")
    jb = str(Path(sys.executable).parent / "jupyter-book")
    proc = subprocess.run([jb, "build", str(src), "--path-output", str(out), "-q"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out / "_build" / "html"


def test_landing_page_is_the_course_map(built):
    index = (built / "index.html").read_text(encoding="utf-8")
    assert "00_start_here" in index


@pytest.mark.parametrize("nb", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_every_notebook_has_its_page_with_figures(built, nb):
    page = built / "notebooks" / (nb.stem + ".html")
    assert page.exists(), f"no page for {nb.name}"
    html = page.read_text(encoding="utf-8")
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    n_png = sum("image/png" in o.get("data", {}) for c in cells if c["cell_type"] == "code" for o in c["outputs"])
    if n_png:
        assert html.count("<img") >= 1, f"{nb.name} has {n_png} figures but its page shows none"
    assert "Traceback" not in html
