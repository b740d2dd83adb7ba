"""`python -m scripts.realengine.investigations.stretches`: do the committed calibration load runs show slow stretches,
beyond the per-iteration noise the simulator draws (stepmodel.StepNoise)? Reads only committed files; nothing is
written.

For each calibration (precomputed/serve/, serve-prefix/, serve-heldout/session-N/) the step model is fitted as the
comparison fits it; each iteration step_noise counts (no unseen prompt work) gives measured / modelled time, over its
group's median (a decode batch size, or "with prompts"). Per load run, the iterations are cut into windows of W
seconds of the run (windows with 20 or more), and the window medians' 90th over 10th percentile, less one, is the
run's stretch spread. The same iterations shuffled in time (50 shuffles, seeded) give what independent draws would:
a spread well above the shuffled one says slow and fast stretches last seconds, which per-iteration draws cannot
carry."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from scripts.realengine.analyses import calibrate, stepfit, stepmodel
from scripts.realengine.analyses.settings import comparison_settings
from scripts.record.inputs import read_json

FOLDERS = ("precomputed/serve/calibration", "precomputed/serve-prefix/calibration",
           "precomputed/serve-heldout/session-*/calibration")
MIN_PER_WINDOW = 20


def ratios(doc: dict, model, gap_s: float) -> tuple[np.ndarray, np.ndarray]:
    """(start times from the run's first counted iteration, measured / modelled over its group's median), of the
    iterations stepfit.step_noise counts."""
    rows = [(s["start"], group, ratio) for s, group, ratio in stepfit.counted(stepmodel.iterations(doc, gap_s), model)
            if s.get("start") is not None]
    medians = {g: np.median([r for _, h, r in rows if h == g]) for g in {g for _, g, _ in rows}}
    t = np.array([r[0] for r in rows], float)
    return t - t.min() if len(t) else t, np.array([r / medians[g] for _, g, r in rows], float)


def spread(times: np.ndarray, x: np.ndarray, window_s: float) -> float | None:
    bins = (times // window_s).astype(int)
    meds = [np.median(x[bins == b]) for b in np.unique(bins) if (bins == b).sum() >= MIN_PER_WINDOW]
    return float(np.percentile(meds, 90) / np.percentile(meds, 10) - 1) if len(meds) >= 4 else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--windows", default="2,5,10,20", help="window lengths in seconds (comma-separated)")
    args = ap.parse_args(argv)
    windows = [float(w) for w in args.windows.split(",")]
    settings = comparison_settings(read_json(Path("config/real_engine.json")))
    rng = np.random.default_rng(0)
    for pattern in FOLDERS:
        for folder in sorted(Path(".").glob(pattern)):
            for record, runs, docs, model in calibrate.fitted_in(folder, settings):
                print(f"{record.as_posix()}")
                for path, doc in zip(runs, docs, strict=True):
                    t, x = ratios(doc, model, settings["iteration_gap_s"])
                    cells = []
                    for w in windows:
                        real = spread(t, x, w)
                        if real is None:
                            continue
                        shuffled = np.median([spread(t, rng.permutation(x), w) for _ in range(50)])
                        cells.append(f"{w:g} s: {real:.1%} (shuffled {shuffled:.1%})")
                    print(f"  {path.name.split('-calibration-')[1]}: {len(x)} iterations over {t.max():.0f} s; "
                          + ("; ".join(cells) or "too few iterations per window"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
