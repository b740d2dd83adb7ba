"""The one pattern the three families of measured runs share (scripts/measured_vs_simulated_load.py main drives
each): a family is a module with

  compare(calibration_paths, result_paths, anchor, settings, **extra) -> dict
      pre: the committed calibrations and runs of the family, the anchor (memory bookkeeping only) and
      settings.comparison_settings; post: the family's document (precomputed/measured_vs_simulated_<name>.json):
      every cell's measured and predicted metrics and errors, per engine + machine, with `summary` beside them;
  summary(cells, goals, ...) -> dict
      pre: cells as compare makes them; post: the error figures against config/real_engine.json's goals.

FAMILIES names each by the rule that runs it; tests/test_realengine_predict.py holds every module to the pattern."""
from __future__ import annotations

from typing import Protocol


class Family(Protocol):
    def compare(self, calibration_paths, result_paths, anchor, settings: dict) -> dict: ...

    def summary(self, cells: list[dict], goals: dict) -> dict: ...


FAMILIES = {"load": "scripts.realengine.analyses.comparison", "prefix": "scripts.realengine.analyses.prefix_comparison",
            "heldout": "scripts.realengine.analyses.heldout_comparison"}  # measured_vs_simulated_<name>
