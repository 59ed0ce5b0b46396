"""01b · The notebook's widget body (loaded on first use: it imports matplotlib)."""

from __future__ import annotations

import matplotlib.pyplot as plt

from .figures import plot_hold_budget
from .files import load_runs

__all__ = ["what_if_orders"]


def what_if_orders(rtt_ms: float = 1.5, inserts: int = 4):
    """Widget body: the hold budget of the three statement orders for your RTT and INSERT count."""
    plot_hold_budget(load_runs()[1], rtt_ms, inserts)
    plt.show()
