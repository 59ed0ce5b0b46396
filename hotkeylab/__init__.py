"""hotkeylab: production incidents turned into runnable, tested models.

Shared parts: :mod:`hotkeylab.capacity` (closed forms), :mod:`hotkeylab.sim` (seeded RNG, bounded
SimPy runs, windowed recorder, ledger), :mod:`hotkeylab.plotting` (house style),
:mod:`hotkeylab.sweep` (parameter grids), :mod:`hotkeylab.exercises` (notebook exercise checks).
One module per incident model; one notebook per model.
"""

__version__ = "0.1.0"
