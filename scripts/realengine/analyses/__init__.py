"""The analyses: from the committed runs to the simulator's predictions and their errors. The calibration into a step
model (calibrate, stepfit into stepmodel, speed), one run's prediction (predict) and its errors (accuracy), the
comparison's settings (settings), and the
three families (family.py: each a module with the same `compare` and `summary`): the load cells (comparison), the
prefix-reuse runs (prefix_comparison) and the held-out cells (heldout_comparison). Pure apart from reading runs."""
