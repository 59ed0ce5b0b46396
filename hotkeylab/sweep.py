"""Parameter sweeps over any ``concurrent.futures.Executor``, with progress.

>>> from hotkeylab.sweep import grid
>>> g = grid(f, xs, ys)                    # doctest: +SKIP  (f(x, y) -> value, a process pool)

The function must be picklable (defined at module level) for a process pool; pass
``executor=ThreadPoolExecutor()`` or a Dask ``Client.get_executor()`` to run elsewhere, or
``executor="serial"`` to run in this process.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed

import numpy as np

__all__ = ["run", "grid", "Progress"]


class Progress:
    """A one-line progress report (``done/total`` and elapsed seconds) on stderr or a widget."""

    def __init__(self, total: int, label: str = "sweep", enabled: bool = True):
        self.total, self.label, self.enabled = total, label, enabled
        self.done = 0
        self.t0 = time.perf_counter()
        self._bar = None
        if enabled:
            try:  # a live notebook shows a bar; elsewhere a text line
                from IPython import get_ipython

                if get_ipython() is not None and "IPKernelApp" in get_ipython().config:
                    import ipywidgets as w
                    from IPython.display import display

                    self._bar = w.IntProgress(min=0, max=total, description=label)
                    display(self._bar)
            except Exception:  # pragma: no cover - progress is cosmetic
                self._bar = None

    def step(self, k: int = 1) -> None:
        self.done += k
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.value = self.done
            if self.done >= self.total:
                self._bar.description = f"{self.label} ✓"
        else:
            el = time.perf_counter() - self.t0
            end = "\n" if self.done >= self.total else ""
            print(f"\r{self.label}: {self.done}/{self.total} ({el:.1f} s)", end=end, file=sys.stderr)


def _call(fn, kwargs):
    return fn(**kwargs)


def process_pool(max_workers: int | None = None) -> ProcessPoolExecutor:
    """A process pool that does not ``fork`` the caller. A Jupyter kernel has threads of its own, and
    a child forked from a threaded process can inherit a lock held by another thread and hang (a
    browser test caught notebook 04's phase diagram doing so). "forkserver" starts workers from a
    clean single-threaded server; where it does not exist (Windows) the platform's default is used."""
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else None)
    return ProcessPoolExecutor(max_workers=max_workers or os.cpu_count() or 1, mp_context=ctx)


def run(
    fn: Callable,
    params: Iterable[dict],
    *,
    executor: Executor | str | None = None,
    progress: bool = True,
    label: str = "sweep",
) -> list:
    """Call ``fn(**p)`` for every ``p`` in ``params``; results in the order of ``params``.

    ``executor=None`` makes a process pool with one worker per core for the call; ``"serial"``
    runs in-process. Any ``concurrent.futures.Executor`` (threads, processes, Dask) works.
    """
    plist = list(params)
    prog = Progress(len(plist), label, progress)
    if executor == "serial" or len(plist) <= 1:
        out = []
        for p in plist:
            out.append(fn(**p))
            prog.step()
        return out
    own = executor is None
    ex = process_pool() if own else executor
    try:
        futs = {ex.submit(_call, fn, p): i for i, p in enumerate(plist)}
        out = [None] * len(plist)
        for f in as_completed(futs):
            out[futs[f]] = f.result()
            prog.step()
        return out
    finally:
        if own:
            ex.shutdown()


def grid(
    fn: Callable,
    xs: Sequence,
    ys: Sequence,
    *,
    x: str = "x",
    y: str = "y",
    fixed: dict | None = None,
    executor: Executor | str | None = None,
    progress: bool = True,
    label: str = "sweep",
) -> np.ndarray:
    """Evaluate ``fn(**{x: xv, y: yv}, **fixed)`` on the grid; returns ``out[i, j]`` for
    ``ys[i]``, ``xs[j]`` (rows are y, as :func:`hotkeylab.plotting.phase_diagram` expects)."""
    fixed = fixed or {}
    params = [{x: xv, y: yv, **fixed} for yv in ys for xv in xs]
    vals = run(fn, params, executor=executor, progress=progress, label=label)
    return np.asarray(vals).reshape(len(ys), len(xs), *np.shape(vals[0]))
