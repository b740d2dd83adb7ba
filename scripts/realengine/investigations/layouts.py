"""`python -m scripts.realengine.investigations.layouts`: what pricing the server's slots (stepmodel.with_ubatches,
config comparison.ubatch_layout) does on the committed runs. Reads only committed files; nothing is written.

1. Iterations: the prefix runs name each request's slot (prefix_load.py). Their iterations with every token seen
   (stepfit.counted: no prompt work the client could not see) are timed by the step model from the prefix
   calibration, once by D (decoders only) and once by the ubatches their real slots make; per run, the median
   |modelled / measured - 1| of each, and per decode batch size with 20 or more decode-only iterations the
   correlation of measured with the slot-priced time (D gives one time per batch size, so none).
2. Predictions: the three comparisons (comparison.py, prefix_comparison.py, heldout_comparison.py) run with the
   switch off and on, and their summary errors side by side. Takes about a minute."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from scripts.realengine.analyses import calibrate, comparison, heldout_comparison, prefix_comparison, stepfit, stepmodel
from scripts.realengine.analyses.settings import comparison_settings, read_calibration
from scripts.record.anchor_file import load as load_anchor
from scripts.record.inputs import read_json

CONFIG = Path("config/real_engine.json")
PREFIX = Path("precomputed/serve-prefix")


def iteration_check(settings: dict, slots: int, ubatch: int) -> list[dict]:
    """Per prefix run: the iterations' median |error| by D and by the slots' ubatches, and per batch size the
    correlation (section 1 of the module docstring)."""
    cal = read_calibration(next(PREFIX.glob("calibration/*-1t.json")))
    fits = [read_json(p) for p in sorted(PREFIX.glob("calibration/*calibration-*.json"))]
    plain, _ = calibrate.fit(cal["calibration"], fits, settings)
    laid = stepmodel.with_ubatches(plain, slots, ubatch)
    out = []
    for path in sorted(PREFIX.glob("*.json")):
        doc = read_json(path)
        slot, cached = doc["slots"], doc["cached_tokens"]
        rows = []
        for s, _, _ in stepfit.counted(stepmodel.iterations(doc, settings["iteration_gap_s"]), plain):
            chunks = [(cached[i], doc["input_lens"][i] - cached[i]) for i in s["prompt_requests"]]
            by_d = plain.seconds(s["decoders"], s["context_sum"], chunks)
            by_slots = laid.seconds(s["decoders"], s["context_sum"], chunks, [slot[i] for i in s["decoder_requests"]],
                                    [slot[i] for i in s["prompt_requests"]])
            rows.append((s["decoders"], bool(s["prompts"]), s["seconds"], by_d, by_slots))
        a = np.array([r[2:] for r in rows], float)
        batches = {}
        for b in sorted({r[0] for r in rows if r[0] > 1}):
            sel = np.array([r[0] == b and not r[1] for r in rows])
            if sel.sum() >= 20 and np.std(a[sel, 2]) > 0:
                batches[b] = {"iterations": int(sel.sum()),
                              "correlation": float(np.corrcoef(a[sel, 0], a[sel, 2])[0, 1])}
        out.append({"run": path.name, "iterations": len(rows),
                    "d_error": float(np.median(np.abs(a[:, 1] / a[:, 0] - 1))),
                    "slots_error": float(np.median(np.abs(a[:, 2] / a[:, 0] - 1))), "by_batch": batches})
    return out


def comparisons(settings: dict, layout) -> dict:
    """The three comparisons' summary errors with `layout` (None: off)."""
    anchor = load_anchor(Path("anchor-model.json"))[0]
    s = {**settings, "ubatch_layout": layout}
    load = comparison.compare(sorted(Path("precomputed/serve/calibration").glob("*.json")),
                              sorted(Path("precomputed/serve").glob("*.json")), anchor, s)["engines"][0]
    prefix = prefix_comparison.compare(sorted(PREFIX.glob("calibration/*.json")), sorted(PREFIX.glob("*.json")),
                                       anchor, s)["engines"][0]["summary"]
    held = heldout_comparison.compare(sorted(Path("precomputed/serve-heldout").glob("session-*/calibration/*.json")),
                                      sorted(Path("precomputed/serve-heldout").glob("session-*/*.json")), anchor, s,
                                      other_calibrations=[])
    out = {"load halves": load["summary"], "load separate": load["separate_calibration"]["summary"],
           "prefix": prefix}
    for e in held["engines"]:
        out[f"held-out {e['session']} noisy"] = e["summaries"]["held_out_noisy"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-predictions", action="store_true", help="section 1 only (seconds)")
    args = ap.parse_args(argv)
    config = read_json(CONFIG)
    settings = comparison_settings(config, CONFIG.as_posix())
    slots, ubatch = int(config["server"]["slots"]), int(config["server"]["ubatch_tokens"])
    print("1. the prefix runs' iterations, by D and by their real slots' ubatches (median |error|)")
    for r in iteration_check(settings, slots, ubatch):
        corr = ", ".join(f"batch {b} ({v['iterations']}): r = {v['correlation']:.2f}" for b, v in r["by_batch"].items())
        print(f"  {r['run']}: {r['iterations']} iterations, D {r['d_error']:.1%}, slots {r['slots_error']:.1%}"
              f"{'; ' + corr if corr else ''}")
    if args.no_predictions:
        return 0
    print("2. predictions, switch off -> on (central / p99s median |error|, attainment's largest error)")
    off, on = comparisons(settings, None), comparisons(settings, (slots, ubatch))
    for name in off:
        a, b = off[name], on[name]
        att = reuse = ""
        if "attainment_max_abs_error" in a:
            att = (f", attainment {a['attainment_max_abs_error'] * 100:.1f} -> "
                   f"{b['attainment_max_abs_error'] * 100:.1f} pts")
        if "reuse_equal_share" in a:
            reuse = f", reuse {a['reuse_equal_share']:.1%} -> {b['reuse_equal_share']:.1%}"
        print(f"  {name}: central {a['central_median_abs_error']:.1%} -> {b['central_median_abs_error']:.1%}, "
              f"p99s {a['tail_median_abs_error']:.1%} -> {b['tail_median_abs_error']:.1%}{att}{reuse}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
