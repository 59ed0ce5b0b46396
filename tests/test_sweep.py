"""hotkeylab.sweep: progress from tqdm, and the same grid on a process pool and a Dask cluster."""

from __future__ import annotations

import numpy as np
import pytest

from hotkeylab import sweep
from hotkeylab.metastable.lesson import phase_cell

XS = [16.0, 27.0]  # C's batch time, ms
YS = [2.0, 30.0]  # how long the second owner lasts, s
FIXED = {"user_rate_per_s": 600.0, "seed": 3}


def _neg(x):
    return -x


def test_progress_is_tqdm_and_can_be_silenced(capsys):
    from tqdm.auto import tqdm

    bar = sweep.progress_bar(3, "cells")
    assert isinstance(bar, tqdm)
    bar.close()
    assert sweep.run(_neg, [{"x": -1}, {"x": 2}], executor="serial", label="neg") == [1, -2]
    err = capsys.readouterr().err
    assert "neg" in err and "2/2" in err  # tqdm's text bar, outside Jupyter
    assert sweep.run(_neg, [{"x": -1}], executor="serial", progress=False) == [1]
    assert capsys.readouterr().err == ""
    assert not hasattr(sweep, "Progress")


def test_phase_grid_on_a_dask_cluster_equals_the_process_pool():
    distributed = pytest.importorskip(
        "dask.distributed", reason="the [cluster] extra (dask[distributed]) is not installed"
    )
    kw = {"x": "cross_batch_ms", "y": "duration_s", "fixed": FIXED, "progress": False}
    pool = sweep.grid(phase_cell, XS, YS, **kw)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, host="127.0.0.1") as cluster, \
            distributed.Client(cluster) as client:
        on_dask = sweep.grid(phase_cell, XS, YS, executor=client.get_executor(), **kw)
        # every cell ran on a worker process, not in this one
        assert sum(len(v) for v in client.run(lambda: [0]).values()) == 2
    np.testing.assert_array_equal(on_dask, pool)
    assert pool.shape == (len(YS), len(XS))
    # the grid is not constant: short triggers recover, a long second owner at 27 ms does not
    assert pool[0, 1] != pool[1, 1]
