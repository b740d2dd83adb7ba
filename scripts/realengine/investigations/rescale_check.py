"""`python -m scripts.realengine.investigations.rescale_check`: does predict's `--rescale` (speed.py) help where a
calibration's speed does not fit a run? Measured on the committed held-out sessions
(precomputed/serve-heldout/session-N/): every session's calibration predicts every session's Poisson cells (its own:
the same hour; another's: another hour or day, the engine's speed moved or not), plain and rescaled to the run;
printed per pair of sessions and summed up as the central and tail median |error| (comparison.error_figures) of the
cells past speed_check_bound, plain against rescaled, and of the cells within it (which predict leaves as they are).
Reads only committed files; about a minute per session on 2 cores."""
from __future__ import annotations

from pathlib import Path

from scripts.realengine.analyses import accuracy, calibrate, predict, speed
from scripts.realengine.analyses.closed_loop import is_closed_loop
from scripts.realengine.analyses.comparison import error_figures, is_load_calibration
from scripts.realengine.analyses.heldout_comparison import session_key
from scripts.realengine.analyses.settings import comparison_settings, read_calibration
from scripts.serving.measures import results

HELD_OUT = Path("precomputed/serve-heldout")


def session_model(folder: Path, settings: dict):
    """A session's calibration record and the step model fitted on its calibration load runs."""
    paths = sorted((folder / "calibration").glob("*.json"))
    cal = read_calibration(next(p for p in paths if not is_load_calibration(p)))
    step, _ = calibrate.fit(cal["calibration"], [results.load_result(p) for p in paths if is_load_calibration(p)],
                            settings)
    return cal, step


def predicted_pair(anchor, doc: dict, cal: dict, step, settings: dict) -> dict:
    """One cell predicted plain and rescaled to its own speed: {"ratio", "plain", "rescaled"} (errors)."""
    args = (anchor, doc)
    plain, trace = predict.compare_cell(*args, step, cal["server"], cal["slo_ms"], settings["saturated_below"],
                                        with_trace=True)
    measured = speed.run_speed(doc, trace, settings["iteration_gap_s"], settings["min_iterations_per_knot"])
    if measured is None:
        return {"ratio": None, "plain": accuracy.cell_errors(plain), "rescaled": None}
    again = predict.compare_cell(*args, speed.scaled(step, measured["ratio"]), cal["server"], cal["slo_ms"],
                                 settings["saturated_below"])
    return {"ratio": measured["ratio"], "saturated": plain["saturated"], "plain": accuracy.cell_errors(plain),
            "rescaled": accuracy.cell_errors(again)}


def main(argv=None) -> int:
    import argparse

    from scripts.record.anchor_file import load
    from scripts.record.inputs import read_json

    ap = argparse.ArgumentParser(prog="python -m scripts.realengine.investigations.rescale_check",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, nargs="*", help="only these session numbers (default: all)")
    args = ap.parse_args(argv)
    settings = comparison_settings(read_json(Path("config/real_engine.json")))
    anchor, bound = load(Path("anchor-model.json"))[0], settings["speed_check_bound"]
    folders = sorted((p for p in HELD_OUT.glob("session-*") if p.is_dir()), key=lambda p: session_key(p.name))
    if args.sessions:
        folders = [f for f in folders if session_key(f.name)[1] in args.sessions]
    cells = {f.name: [results.load_result(p) for p in sorted(f.glob("*.json"))] for f in folders}
    rows = []
    print(f"{'calibration':<12}{'cells':<12}{'ratios':<40}")
    for cal_folder in folders:
        cal, step = session_model(cal_folder, settings)
        for name, docs in cells.items():
            pairs = [predicted_pair(anchor, d, cal, step, settings) for d in docs if not is_closed_loop(d)]
            rows += [p for p in pairs if p["ratio"] is not None and not p["saturated"]]
            print(f"{cal_folder.name:<12}{name:<12}" + " ".join("-" if p["ratio"] is None else f"{p['ratio']:.2f}"
                                                              for p in pairs), flush=True)
    for label, group in (("past the bound", [r for r in rows if abs(r["ratio"] - 1) > bound]),
                         ("within it", [r for r in rows if abs(r["ratio"] - 1) <= bound])):
        plain, scaled = error_figures([r["plain"] for r in group]), error_figures([r["rescaled"] for r in group])
        central, tail = "central_median_abs_error", "tail_median_abs_error"
        print(f"{len(group)} cells below saturation {label} ({bound:.0%}): central median |error| plain "
              f"{plain[central] or 0:.1%}, rescaled {scaled[central] or 0:.1%}; "
              f"tail plain {plain[tail] or 0:.1%}, rescaled {scaled[tail] or 0:.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
