"""The SimPy engine's old import path: the model now lives in :mod:`.model`."""

from .model import (  # noqa: F401
    batcher,
    client,
    hot_key_thread,
    leader_batcher,
    restarter,
    run_capped,
    run_simpy,
    users,
)
