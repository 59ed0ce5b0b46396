"""A deterministic fluid (drift) model of the hot-key queue: why it has two stable states.

Steps, each with its one assumption: :func:`timeout_share` f(q) (uniform batcher wait) →
:func:`retries_per_request` R (retries that fit in the patience) → :func:`attempt_rate`
λ(1 + f + … + f^R) (every timed-out attempt retried) → :func:`drift` dQ/dt = batches/s made from
those attempts − capacity (rejections ignored below the bound) → :func:`fixed_points` (healthy,
unstable boundary q_u, stuck) → :func:`integrate` Q(t) → :func:`plot_phase_portrait`.

>>> import math
>>> from hotkeylab.metastable import RetryPolicy, Scenario
>>> sc = Scenario(user_rate_per_s=720.0, retry=RetryPolicy(patience_ms=300.0), queue_limit=None)
>>> fp = fixed_points(720.0, sc, 62.5)
>>> fp.bistable, round(fp.unstable, 2), round(fp.stuck_excess_per_s, 1)
(True, 11.14, 9.7)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .. import capacity
from ..validate import check_number
from .scenario import Scenario

__all__ = ["FixedPoints", "timeout_share", "retries_per_request", "attempt_rate", "drift",
           "fixed_points", "integrate", "plot_phase_portrait"]


def _check_sc(sc) -> Scenario:
    if not isinstance(sc, Scenario):
        raise ValueError(f"sc must be a metastable Scenario, got {type(sc).__name__}")
    if getattr(sc, "batcher", "timer") != "timer":
        raise ValueError(f"the fluid model assumes the timer batcher, got sc.batcher={sc.batcher!r}")
    return sc


def _check_q(q) -> np.ndarray:
    a = np.asarray(q, dtype=float)
    if not np.all(np.isfinite(a)) or np.any(a < 0):
        raise ValueError(f"q (batches waiting) must be finite and >= 0, got {q!r}")
    return a


def _out(a: np.ndarray, like):  # a float for a scalar q, else the array
    return float(a) if np.ndim(like) == 0 else a


def timeout_share(q, sc: Scenario, batch_ms: float | None = None):
    """Share of new attempts that time out when ``q`` batches wait ahead (vectorised over q).

    Assumption: a new row waits uniformly in [0, T] in the batcher, then q·N, then its own commit
    N, and times out if that exceeds M: ``f = clip((q·N + N + T − M) / T, 0, 1)``, zero below
    ``(M − T − N)/N`` and one above ``(M − N)/N``. ``batch_ms`` overrides N (default sc.batch_ms).
    """
    _check_sc(sc)
    a = _check_q(q)
    n = sc.batch_ms if batch_ms is None else check_number("batch_ms", batch_ms, low=0.0, low_open=True)
    m, t = sc.timeout_ms, sc.batch_max_wait_ms
    if math.isinf(m):
        f = np.zeros_like(a)
    elif t == 0:
        f = (a * n + n > m).astype(float)
    else:
        f = np.clip((a * n + n + t - m) / t, 0.0, 1.0)
    return _out(f, q)


def retries_per_request(sc: Scenario) -> int:
    """R: retries that fit in the user's patience after timeouts.

    Assumption: retry k starts near k·M (the retry delay is short next to M), so
    ``R = min(max_attempts − 1, floor(patience / M))``. With neither a patience nor an attempt
    limit R is infinite and the stuck demand is unbounded: that raises ValueError (no cap).
    """
    _check_sc(sc)
    r = sc.retry.retries
    if sc.retry.patience_ms < math.inf:
        r = min(r, math.floor(sc.retry.patience_ms / sc.timeout_ms))
    if math.isinf(r):
        raise ValueError("sc.retry has max_attempts=inf and patience_ms=inf: retries per request are "
                         "unbounded, the fluid model needs a finite max_attempts or patience_ms")
    return int(r)


def attempt_rate(q, lam: float, sc: Scenario, batch_ms: float | None = None):
    """Attempts per second at queue q: ``λ (1 + f + f² + … + f^R)``.

    Assumption: every timed-out attempt is retried while patience allows, and the retry meets
    the same queue (quasi-static: the ~M delay before a retry is ignored).
    """
    lam = check_number("lam", lam, low=0.0)
    f = np.asarray(timeout_share(q, sc, batch_ms))
    r = retries_per_request(sc)
    a = lam * sum(f**k for k in range(r + 1))
    return _out(np.asarray(a, dtype=float), q)


def drift(q, lam: float, sc: Scenario, capacity_per_s: float):
    """dQ/dt in batches/s: ``batcher_batch_rate(attempt_rate(q)) − capacity``; ≤ 0 at the bound.

    Assumption: deterministic rates; rejections are ignored below ``sc.queue_limit`` and at it the
    queue simply cannot grow (``min(drift, 0)``). The queue drains at ``capacity_per_s``, so one
    batch ahead costs ``1000 / capacity_per_s`` ms (N with one owner, the 21.5 ms mean with two).
    """
    cap = check_number("capacity_per_s", capacity_per_s, low=0.0, low_open=True)
    a = np.atleast_1d(attempt_rate(q, lam, sc, batch_ms=1000.0 / cap))
    rates, inv = np.unique(a, return_inverse=True)  # the drift is flat outside the ramp
    b = np.array([capacity.batcher_batch_rate(min(x, 1e6), sc.batch_max_rows, sc.batch_max_wait_ms)
                  for x in rates])[inv.ravel()].reshape(a.shape)
    d = b - cap
    if sc.queue_limit is not None:
        d = np.where(np.atleast_1d(np.asarray(q, dtype=float)) >= sc.queue_limit, np.minimum(d, 0.0), d)
    return _out(d.reshape(np.shape(q)), q)


@dataclass(frozen=True)
class FixedPoints:
    """Where dQ/dt = 0 at one load. ``healthy``: 0.0 (empty queue) or None if demand alone exceeds
    capacity; ``unstable``: the boundary q_u or None; ``stuck``: ``queue_limit``, ``inf`` (unbounded:
    the queue grows at ``stuck_excess_per_s``) or None. ``stuck_excess_per_s`` is the storm's
    batches/s beyond capacity: queue growth if unbounded, batches rejected at the bound if bounded.
    ``ramp`` is ``((M−T−N)/N, (M−N)/N)`` where attempts start / finish timing out."""

    load_per_s: float
    capacity_per_s: float
    ramp: tuple[float, float]
    healthy: float | None
    unstable: float | None
    stuck: float | None
    stuck_excess_per_s: float | None
    bistable: bool


def fixed_points(lam: float, sc: Scenario, capacity_per_s: float) -> FixedPoints:
    """Healthy state, unstable boundary (brentq inside the ramp) and stuck state at load ``lam``.

    Assumption: the drift is non-decreasing in q (more queue, more timeouts, more retries), so it
    crosses zero at most once, upward."""
    from scipy.optimize import brentq

    lam = check_number("lam", lam, low=0.0)
    cap = check_number("capacity_per_s", capacity_per_s, low=0.0, low_open=True)
    n, m, t, lim = 1000.0 / cap, sc.timeout_ms, sc.batch_max_wait_ms, sc.queue_limit
    lo, hi = max(0.0, (m - t - n) / n), max(0.0, (m - n) / n)
    top = min(hi * (1 + 1e-12) + 1e-12, math.inf if lim is None else float(lim))
    free = replace(_check_sc(sc), queue_limit=None)  # the unclamped drift
    d0 = drift(0.0, lam, free, cap)
    d_top = d0 if math.isinf(top) else drift(top, lam, free, cap)  # the largest drift reachable
    unstable = None
    if d0 < 0 < d_top:
        unstable = float(brentq(lambda x: drift(x, lam, free, cap), min(lo, top), top, xtol=1e-9))
    stuck = (math.inf if lim is None else float(lim)) if d_top > 0 else None
    return FixedPoints(lam, cap, (lo, hi), 0.0 if d0 < 0 else None, unstable, stuck,
                       float(d_top) if stuck is not None else None, d0 < 0 and stuck is not None)


def integrate(q0: float, lam: float, sc: Scenario, capacity_per_s: float, t_s: float,
              dt_s: float = 0.01) -> tuple[np.ndarray, np.ndarray]:
    """``(t, Q(t))`` by forward Euler from ``q0`` over ``t_s`` seconds, clipped to [0, queue_limit].

    Assumption: deterministic; λ and the capacity stay fixed over the interval."""
    q0, t_s = check_number("q0", q0, low=0.0), check_number("t_s", t_s, low=0.0)
    dt = check_number("dt_s", dt_s, low=0.0, low_open=True, high=max(t_s, 1e-9))
    drift(q0, lam, sc, capacity_per_s)  # checks lam, sc and capacity_per_s even when t_s = 0
    upper = math.inf if sc.queue_limit is None else float(sc.queue_limit)
    steps = int(math.ceil(t_s / dt - 1e-9))
    q = np.empty(steps + 1)
    q[0] = min(q0, upper)
    for k in range(steps):
        q[k + 1] = min(max(q[k] + dt * drift(q[k], lam, sc, capacity_per_s), 0.0), upper)
    return np.arange(steps + 1) * dt, q


def _run_points(run, loads, cap):
    """(q_k, (q_{k+1} − q_k)/Δt, index of the load) for the windows of ``run`` whose user load is
    one of ``loads`` and whose capacity is ``cap`` (within 2%) from window k to the end of k + 1."""
    sc, w = run.scenario, run.windows
    qv, t, wd = np.asarray(w["queue"], float), np.asarray(w["t"], float) * 1000.0, sc.window_ms
    out = []
    for k in range(len(qv) - 1):
        conds = set()
        for tm in (t[k], t[k] + wd, t[k] + 2 * wd - 1e-6):
            lam = sc.user_rate_at(tm) * (sc.degrade.factor if sc.degrade and sc.degrade.contains(tm) else 1.0)
            n = sc.batch_ms_at(tm, 0) / 2 + sc.batch_ms_at(tm, 1) / 2
            conds.add((lam, 1000.0 / n))
        (lam, c), = conds if len(conds) == 1 else [(-1.0, -1.0)]  # a change inside: skip
        i = int(np.argmin([abs(x - lam) for x in loads]))
        if abs(c - cap) <= 0.02 * cap and abs(loads[i] - lam) <= 0.02 * max(loads[i], 1.0):
            out.append((qv[k], (qv[k + 1] - qv[k]) * 1000.0 / wd, i))
    return out


def plot_phase_portrait(sc: Scenario, loads, capacity_per_s: float, ax=None, runs=None,
                        xmax: float | None = None):
    """dQ/dt against q, one line per load; filled dots stable, open circles unstable fixed points,
    arrows on each curve for the flow. ``runs`` (simulated) are scattered as
    (q_k, (q_{k+1} − q_k)/Δt) in the colour of their load; windows at another load or capacity
    (trigger, slow database, degrade) are left out. x runs to ``xmax`` (default 3·M/N with
    N = 1000/capacity) so the threshold stays visible. Returns the axes; ``ax.fluid_lines`` holds
    the load lines."""
    import matplotlib

    from ..plotting import COLORS, decorate, new_figure

    cap = check_number("capacity_per_s", capacity_per_s, low=0.0, low_open=True)
    loads = [check_number(f"loads[{i}]", x, low=0.0) for i, x in enumerate(loads)]
    if not loads:
        raise ValueError("loads must list at least one user rate (requests/s), got []")
    xmax = 3.0 * sc.timeout_ms * cap / 1000.0 if xmax is None else xmax
    xmax = check_number("xmax", xmax if math.isfinite(xmax) else 40.0, low=0.0, low_open=True)
    if ax is None:
        _, ax = new_figure(height=4.2)
    ramp, lim = fixed_points(loads[0], sc, cap).ramp, sc.queue_limit
    extra = [v for v in (*ramp, lim) if v is not None and v <= xmax]
    qs = np.unique(np.concatenate([np.linspace(0.0, xmax, 600), extra, np.nextafter(extra, -1)]))
    xend = xmax if lim is None else min(xmax, float(lim))  # the queue never passes its bound
    qs = qs[(qs >= 0) & (qs <= xend)]
    ax.axvspan(*ramp, color=COLORS["timeouts"], alpha=0.12, lw=0, label="timeout ramp")
    if lim is not None and lim <= xmax:
        ax.axvline(lim, color=COLORS["rejected"], ls=":", lw=1.5, label=f"queue bound {lim}")
    ax.axhline(0.0, color=COLORS["capacity"], lw=1)
    # distinct hues (Okabe–Ito blue, amber, reddish purple, sky blue), not a ramp: dots of neighbouring
    # loads must be told apart; beyond four loads, a colormap
    palette = ["#0072B2", "#E69F00", "#CC79A7", "#56B4E9"]
    colors = (palette[: len(loads)] if len(loads) <= len(palette)
              else [matplotlib.colormaps["viridis"](0.85 * i / (len(loads) - 1)) for i in range(len(loads))])
    pts = [p for run in runs or () for p in _run_points(run, loads, cap) if p[0] <= xmax]
    if pts:
        x, y, i = np.array(pts).T
        ax.scatter(x, y, s=12, c=[colors[int(j)] for j in i], alpha=0.55, lw=0, zorder=2)
        ax.scatter([], [], s=10, color="grey", label="simulated runs (colour of their load)")
    lines, ys = [], []
    for lam, c, style in zip(loads, colors, ["-", "--", "-.", ":"] * len(loads), strict=False):
        fp = fixed_points(lam, sc, cap)
        y = drift(qs, lam, sc, cap)
        ys.append(y)
        tag = "" if fp.stuck is None else (": stuck at the bound" if math.isfinite(fp.stuck)
                                           else f": stuck, +{fp.stuck_excess_per_s:.1f}/s")
        (ln,) = ax.plot(qs, y, color=c, lw=2, ls=style, zorder=3, label=f"λ = {lam:g} req/s{tag}")
        lines.append(ln)
        fx = [(0.0, True)] if fp.healthy is not None else []
        fx += [(fp.unstable, False)] if fp.unstable is not None and fp.unstable <= xmax else []
        fx += [(fp.stuck, True)] if fp.stuck is not None and fp.stuck <= xmax else []
        for x0, stable in fx:
            cc = "k" if x0 == 0.0 and len(loads) > 1 else c  # the healthy state is shared
            ax.plot([x0], [0.0], "o", ms=8, mec=cc, mew=2, mfc=cc if stable else "white", zorder=5, clip_on=False)
        edges = [0.0] + [x0 for x0, _ in fx if x0 < xend] + [xend]
        for a, b in zip(edges[:-1], edges[1:], strict=True):
            xm = a + 0.6 * (b - a)
            ym = float(drift(xm, lam, sc, cap))
            if b - a > 0.08 * xmax and ym:
                dx = 0.025 * xmax * np.sign(ym)
                ax.annotate("", xy=(xm + dx, ym), xytext=(xm - dx, ym), zorder=4,
                            arrowprops={"arrowstyle": "-|>", "color": c, "lw": 1.5})
    span = np.concatenate(ys)
    pad = 0.15 * max(1.0, float(span.max() - span.min()))
    ax.plot([], [], "o", color="k", ms=6, label="stable")
    ax.plot([], [], "o", mec="k", mfc="white", mew=1.5, ms=6, label="unstable")
    decorate(ax, xlabel="queue (batches waiting)", ylabel="queue growth (batches/s)", legend=False,
             xlim=(0, xmax), ylim=(min(span.min(), 0) - pad, max(span.max(), 0) + pad))
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    ax.fluid_lines = lines
    return ax
