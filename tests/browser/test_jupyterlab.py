"""A real-browser test: JupyterLab on localhost, driven by Playwright in Debian's chromium.

It opens the what-if notebook, runs every cell, moves a slider of the widget and checks that the
figure changed and no error appeared; then it opens every notebook and screenshots its first
figure. It runs on a temporary copy of notebooks/ (JupyterLab saves what it runs), with temporary
Jupyter settings and runtime folders, no token, on 127.0.0.1 only.

Skipped, with the reason, when chromium or playwright is missing: `make test-browser` installs both.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("HOTKEYLAB_CHROMIUM", "/usr/bin/chromium")
WIDGET_NOTEBOOK = os.environ.get("HOTKEYLAB_WIDGET_NOTEBOOK", "04_metastable_retry_storm.ipynb")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SHOTS = Path(os.environ.get("HOTKEYLAB_SHOTS", ROOT / "_build" / "screenshots"))

pytestmark = pytest.mark.browser

if not Path(CHROMIUM).exists():
    pytest.skip(f"no chromium at {CHROMIUM} (run `make test-browser` to install it)", allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (`make test-browser`)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    work = tmp_path_factory.mktemp("lab")
    shutil.copytree(ROOT / "notebooks", work / "notebooks")
    env = dict(os.environ)
    for var, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython")):
        env[var] = str(work / sub)
    env["JUPYTERLAB_SETTINGS_DIR"] = str(work / "settings")
    env["JUPYTERLAB_WORKSPACES_DIR"] = str(work / "workspaces")
    news = work / "settings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    tracker = work / "settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)  # render every cell: off-screen cells then behave like a reader's
    (tracker / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    port = _free_port()
    cmd = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
        "--ServerApp.token=", "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True",
        f"--ServerApp.root_dir={work / 'notebooks'}", "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    log = open(work / "lab.log", "w")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            urllib.request.urlopen(url + "/api/status", timeout=2)
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError("JupyterLab did not start:\n" + (work / "lab.log").read_text()[-3000:]) from None
            time.sleep(0.5)
    yield url, work / "notebooks"
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield b
        b.close()


def _open(browser, url: str, name: str):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{url}/lab/tree/{name}?reset", wait_until="domcontentloaded")  # no restored tabs
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
    return page


def _menu(page, menu: str, command: str) -> None:
    page.click(f".lm-MenuBar-item:has-text('{menu}')")
    page.click(f".lm-Menu-item[data-command='{command}']")


def _run_all(page) -> None:
    """Clear the stored outputs, run every cell, wait until each code cell has its number."""
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)
    _menu(page, "Edit", "editmenu:clear-all")
    page.wait_for_function(
        "() => document.querySelectorAll('.jp-CodeCell .jp-OutputArea-output').length === 0",
        timeout=30_000,
    )
    _menu(page, "Run", "runmenu:run-all")
    page.wait_for_function(
        r"""() => { const ps = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
                   return ps.length > 0 && ps.every(p => /\[\d+\]/.test(p.textContent)); }""",
        timeout=400_000,
        polling=1_000,
    )
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=120_000)


def _errors(page) -> list[str]:
    return page.eval_on_selector_all(
        ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']",
        "els => els.map(e => e.textContent).filter(t => t.includes('Traceback') || t.includes('Error'))",
    )


def test_widget_slider_redraws_the_figure(lab, browser):
    url, folder = lab
    if not (folder / WIDGET_NOTEBOOK).exists():
        pytest.skip(f"{WIDGET_NOTEBOOK} is not written yet")
    page = _open(browser, url, WIDGET_NOTEBOOK)
    _run_all(page)
    assert _errors(page) == []
    widget = page.locator(".jp-OutputArea-output:has(.widget-slider)").last
    widget.wait_for(timeout=120_000)
    widget.scroll_into_view_if_needed()
    img = widget.locator("img").first
    img.wait_for(timeout=120_000)
    before = img.get_attribute("src")
    readout = widget.locator(".widget-slider .widget-readout").first
    value_before = readout.text_content()
    handle = widget.locator(".widget-slider .noUi-handle").first
    box = handle.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2 + 60, box["y"] + box["height"] / 2, steps=6)
    page.mouse.up()
    page.wait_for_function("([el, old]) => el.textContent !== old", arg=[readout.element_handle(), value_before],
                           timeout=30_000)
    assert readout.text_content() != value_before, "the slider did not move"
    page.wait_for_function(
        "([w, old]) => { const i = w.querySelector('img'); return i && i.src && i.src !== old; }",
        arg=[widget.element_handle(), before],
        timeout=120_000,
        polling=500,
    )
    after = widget.locator("img").first.get_attribute("src")
    assert after and after != before, "moving the slider did not change the figure"
    assert _errors(page) == []
    SHOTS.mkdir(parents=True, exist_ok=True)
    widget.screenshot(path=str(SHOTS / "widget_after_slider.png"))
    page.close()


@pytest.mark.parametrize("nb", sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb")))
def test_first_figure_renders(lab, browser, nb):
    url, _ = lab
    page = _open(browser, url, nb)
    page.wait_for_selector(".jp-RenderedImage img", state="attached", timeout=60_000)
    # the first figure a reader sees: skip images inside stored widget views (hidden without a kernel)
    found = page.evaluate(
        """() => { const img = [...document.querySelectorAll('.jp-RenderedImage img')]
                     .find(i => !i.closest('.jupyter-widgets') && i.getClientRects().length > 0);
                   if (!img) return false;
                   img.setAttribute('data-first-figure', '1'); img.scrollIntoView(); return true; }"""
    )
    assert found, f"{nb}: no figure is displayed"
    img = page.locator("img[data-first-figure='1']")
    img.wait_for(state="visible", timeout=30_000)
    page.wait_for_function("i => i.complete && i.naturalWidth > 0", arg=img.element_handle(), timeout=30_000)
    width, height = img.evaluate("i => [i.naturalWidth, i.naturalHeight]")
    assert width > 100 and height > 50, f"{nb}: first figure is {width}x{height} px"
    SHOTS.mkdir(parents=True, exist_ok=True)
    img.evaluate("i => i.scrollIntoView({block: 'center'})")
    page.screenshot(path=str(SHOTS / f"{Path(nb).stem}_first_figure.png"))  # the view with the figure
    page.close()
