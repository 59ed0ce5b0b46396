"""Parameter sweeps over any ``concurrent.futures.Executor``, with progress.

>>> from hotkeylab.sweep import grid
>>> g = grid(f, xs, ys)                    # doctest: +SKIP  (f(x, y) -> value, a process pool)

The function must be picklable (defined at module level) for a process pool; pass
``executor=ThreadPoolExecutor()`` or a Dask ``Client.get_executor()`` to run elsewhere, or
``executor="serial"`` to run in this process. On a Dask cluster (``pip install hotkeylab[cluster]``)::

    from dask.distributed import Client, LocalCluster
    with LocalCluster(n_workers=2) as cluster, Client(cluster) as client:
        g = grid(f, xs, ys, executor=client.get_executor())

Progress is a ``tqdm.auto`` bar (a widget in Jupyter, text elsewhere); ``progress=False`` hides it.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed

import numpy as np
from tqdm.auto import tqdm

__all__ = ["run", "grid", "progress_bar", "process_pool"]


def progress_bar(total: int, label: str = "sweep", enabled: bool = True):
    """A ``tqdm.auto`` bar: a widget in Jupyter, a text bar on stderr elsewhere; ``enabled=False``
    gives a silent bar (``disable=True``), so callers never branch on it."""
    return tqdm(total=total, desc=label, disable=not enabled, leave=True)


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
    with progress_bar(len(plist), label, progress) as bar:
        if executor == "serial" or len(plist) <= 1:
            out = []
            for p in plist:
                out.append(fn(**p))
                bar.update()
            return out
        own = executor is None
        ex = process_pool() if own else executor
        try:
            futs = {ex.submit(_call, fn, p): i for i, p in enumerate(plist)}
            out = [None] * len(plist)
            for f in as_completed(futs):
                out[futs[f]] = f.result()
                bar.update()
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
