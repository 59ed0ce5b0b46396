"""One module per notebook with its exercises (registered with ``hotkeylab.exercises.exercise``)."""
