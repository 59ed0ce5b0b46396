"""04b · The seed's retry storm on a real stack: a private MariaDB, gRPC hot-key servers, a load generator.

Where to start reading: :mod:`.scenario` (the four turns and the one time scale), then
:mod:`.server` (batcher, bounded queue, committing thread), :mod:`.loadgen` (users, deadline,
retries, degrade), :mod:`.orchestrate` (starting and stopping the processes, one measured run),
:mod:`.ledger` (timelines and the nothing-lost ledger), :mod:`.compare` (the model beside each
measured run, the committed CSVs) and :mod:`.figures`.

``python -m hotkeylab.stack_lab`` (``make stack-lab``) measures the four turns and rewrites
``hotkeylab/data/stack_lab_*.csv``; notebook 04b reads those files and runs without a database.
"""

from . import scenario
from .ledger import Ledger, windows_from_logs
from .scenario import *  # noqa: F403  (the names in scenario.__all__)

__all__ = [*scenario.__all__, "Ledger", "windows_from_logs"]
