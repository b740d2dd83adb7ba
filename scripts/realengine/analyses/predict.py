"""The simulator's prediction of each measured load run (how far it is from the run: accuracy.py). Pure apart from
reading the records (and the command below).

For a measured cell the simulator gets the same requests (each one's send time, prompt and requested output
tokens from the result file), llama.cpp's scheduling (scripts/serving/engine/schedulers.py `llama.cpp`: generating
slots first, then prompt tokens up to `-b`, at most `-np` slots; its docstring names the source it follows) and a
step model fitted on runs it does not predict (scripts/realengine/analyses/comparison.py: the other half of the rates).
Each slot's context holds any request of these workloads, so memory never limits (capacity unbounded).
Metrics on both sides are scripts/serving/measures/metrics.py (vLLM's definitions).

As a command, one result file (vLLM's --save-result --save-detailed layout; without `send_times`, as vLLM's own
files are, the sends are assumed as `assumed_send_times` says and the report says so) against the step model
fitted from a calibration record (by default on the calibration load runs beside it, or `--fit-on` runs):
    python -m scripts.realengine.analyses.predict RESULT.json --calibration FILE [--fit-on RUN.json ...]
        [--max-concurrency N] [--out OUT.json] [--rescale | --force]
prints measured, predicted and the error per metric (JSON with --out). Before it trusts the calibration it checks
the run's own speed against it (speed.py, `checked_prediction`): past comparison.speed_check_bound it exits 3 with
both numbers, unless told `--rescale` (the step model's decode times scaled to the run) or `--force`; a Poisson
run whose distributions are past comparison.ks_flag_above is flagged. The measured_vs_simulated_load rule predicts
every run through the same `compare_cell`."""
from __future__ import annotations

import dataclasses

import numpy as np

from scripts.realengine.analyses import accuracy, speed
from scripts.realengine.analyses.stepmodel import Noisy, StepModel, StepNoise
from scripts.serving import engine
from scripts.serving.measures import metrics, results
from scripts.serving.workloads.workload import Requests

PRESET_RULE = "llama.cpp"  # llama.cpp's iteration rule in the serving model (scripts/serving/engine/schedulers.py)
def _positive(doc: dict, key: str, default) -> float:
    """doc[key] as a positive number or inf (a number, or the string "inf" as vLLM's argparse takes it)."""
    raw = doc.get(key, default)
    try:
        value = float(raw) if isinstance(raw, int | float | str) and not isinstance(raw, bool) else float("nan")
    except ValueError:
        value = float("nan")
    if not value > 0:
        raise ValueError(f"field {key} must be a positive number or inf, not {raw!r:.40}")
    return value


def check_send_times(doc: dict) -> None:
    """A file's own send_times: one per request, finite seconds >= 0, in the order the requests were sent."""
    if problem := results.send_times_problem(doc):  # one per request, finite seconds >= 0: results' rule
        raise ValueError(problem)
    sends = doc["send_times"]
    for i, t in enumerate(sends):
        if i and t < sends[i - 1]:
            raise ValueError(f"field send_times[{i}] ({t:g} s) is before send_times[{i - 1}] ({sends[i - 1]:g} s): "
                             "requests are listed in the order they were sent")


def assumed_send_times(doc: dict, seed: int = 0) -> tuple[list[float], str]:
    """Send times for a result file that lacks them (vLLM's own files save none), as vllm/benchmarks/serve.py
    get_request (commit def9ce85) makes them, and what that assumes. request_rate inf (or absent, vLLM's default):
    every request at 0, exactly as vLLM sends them. A finite rate: gaps drawn from the gamma distribution vLLM uses
    (shape = burstiness, scale = 1 / (rate x burstiness); burstiness inf: 1 / rate each), accumulated and rescaled
    so the last send is at n / rate, as vLLM does without a ramp-up. vLLM drew its gaps from numpy's global
    generator after sampling its dataset, so the draws themselves cannot be recovered: these are a fresh draw of
    the same process (seeded), not the run's own times."""
    n = len(doc["ttfts"])
    rate = _positive(doc, "request_rate", "inf")
    if rate == float("inf"):
        return [0.0] * n, "request_rate inf: every request sent at 0 s, as vLLM does"
    burstiness = _positive(doc, "burstiness", 1.0)
    if burstiness == float("inf"):
        gaps = np.full(n, 1.0 / rate)
    else:
        gaps = np.random.default_rng(seed).gamma(shape=burstiness, scale=1.0 / (rate * burstiness), size=n)
    delays = np.cumsum(gaps)
    delays = delays * ((n / rate) / delays[-1])
    return delays.tolist(), (f"no send_times: a fresh draw (seed {seed}) of vLLM's arrival process at {rate:g} req/s, "
                             f"burstiness {burstiness:g}, rescaled so the last send is at n / rate = "
                             f"{n / rate:g} s; the run's own sends are not recorded in the file")


def requests_of(doc: dict) -> Requests:
    """The requests the server saw, by send time; a prefix-reuse run's (prefix_load.py) with their prompts'
    segments and answers' content ids."""
    idx = results.seen_order(doc)
    out = np.asarray(doc.get("requested_output_lens", doc["output_lens"]))
    segments = tuple(doc["segments"][j] for j in idx) if "segments" in doc else None
    answers = tuple(doc["answer_ids"][j] for j in idx) if "answer_ids" in doc else None
    return Requests(np.asarray(doc["send_times"], float)[idx], np.asarray(doc["input_lens"])[idx], out[idx],
                    segments, answers)


def recorded_slot_order(doc: dict, slots: int) -> list[int] | None:
    """The server's slots least recently used first at the run's start, as far as the run shows it: the slots in
    the order the requests (by send time) first took them (each idle slot is taken least recently used first), then
    the slots it never took, by id. None when the file does not name each request's slot (prefix_load.py's do)."""
    named = results.named_slots(doc)
    if named is None:
        return None
    first = list(dict.fromkeys(named[j] for j in np.argsort(doc["send_times"], kind="stable")))
    return first + [s for s in range(slots) if s not in first]


def slot_order_for(doc: dict, step, slots: int, seed: int | None) -> list[int] | None:
    """The slots' order at the start for a prediction that prices their ubatches (stepmodel.with_ubatches): the
    one the harness set before the run (`slot_order_at_start`: run.speed_checked), else what the run's own slots
    show (`recorded_slot_order`), else with a seed a random one drawn from it (the server's history before the run
    is not in the file), else none used yet."""
    if not getattr(step, "prices_layout", False):
        return None
    order = doc.get("slot_order_at_start") or recorded_slot_order(doc, slots)
    if order is None and seed is not None:
        order = [int(x) for x in np.random.default_rng(seed).permutation(slots)]
    return order


def simulate_cell(a, doc: dict, step: StepModel, server: dict, max_concurrency: int | None = None,
                  slot_order=None):
    """The engine sees each request `step.request_overhead_s` after the client sent it (the round trip inside a
    lone TTFT); TTFT and E2EL are then measured from the send, as the client does. With `max_concurrency` the
    simulated client holds a request back while that many are in flight (vllm bench serve --max-concurrency), and
    its own send times are the ones measured from. A run whose requests carry segments (prefix_load.py) is
    simulated with llama.cpp's slots reusing prompts (engine kv `reserved+slots`, one slot per -np). A file with
    `release_delays` (per request, the file's order: closed_loop.client_turnaround) has the client send a
    request held by the cap that long after the finish that freed its slot (the engine sees it the round trip
    later). `slot_order`: the slots' least-recently-used order at the start (`slot_order_for`)."""
    sent = requests_of(doc)
    seen = sent.with_times(sent.arrival_s + step.request_overhead_s)
    slots_needed = sent.segments is None and getattr(step, "prices_layout", False)
    if slots_needed:  # every prompt its own text: the slots are then chosen least recently used, as the server does
        seen = dataclasses.replace(seen, segments=tuple([(i + 1, int(n))] for i, n in enumerate(seen.prompt_tokens)))
    delays = doc.get("release_delays")
    trace = engine.simulate(a, seen, PRESET_RULE, max_num_batched_tokens=server["batch_tokens"],
                            max_batch=server["slots"], capacity_bytes=float("inf"), step_cost=step,
                            max_concurrency=max_concurrency, prefix_caching=sent.segments is not None or slots_needed,
                            release_delay_s=None if delays is None else
                            np.asarray(delays, float)[results.seen_order(doc)] + step.request_overhead_s,
                            slot_order=slot_order)
    if max_concurrency is not None:
        sent = sent.with_times(trace.requests.arrival_s - step.request_overhead_s)
    return dataclasses.replace(trace, requests=sent)


def speed_moved(doc: dict, bound: float | None) -> bool | None:
    """Whether the engine's speed moved during the run by more than `bound` (config/real_engine.json
    comparison.speed_check_bound): the lone-request probe before and after it (run.py `speed_check`: median ITL),
    |after - before| / before. None when the run has no check or no bound is set."""
    check = doc.get("speed_check")
    if not check or bound is None:
        return None
    before, after = float(check["before_itl_ms"]), float(check["after_itl_ms"])
    return before <= 0 or abs(after - before) / before > bound


def predicted_over_seeds(a, doc: dict, step: StepModel, server: dict, slo_ms: dict, max_concurrency: int | None,
                         noise: StepNoise | None, seeds: int):
    """The prediction: one run of the step model, or with its measured noise (stepmodel.Noisy) `seeds` runs, seeds
    0..seeds-1: each metric's median over them and its [min, max]. A model that prices the slots' ubatches starts
    each run from the slots' order `slot_order_for` gives (a seeded draw when the file does not say it). Returns
    (metrics, spread or None, first trace)."""
    if noise is None or seeds < 1:
        trace = simulate_cell(a, doc, step, server, max_concurrency, slot_order_for(doc, step, server["slots"], None))
        return metrics.from_trace(trace, slo_ms), None, trace
    traces = [simulate_cell(a, doc, Noisy(step, noise, seed), server, max_concurrency,
                            slot_order_for(doc, step, server["slots"], seed)) for seed in range(seeds)]
    runs = [metrics.from_trace(t, slo_ms) for t in traces]
    middle = {k: float(np.median([r[k] for r in runs])) for k in accuracy.COMPARED}
    spread = {k: [float(min(r[k] for r in runs)), float(max(r[k] for r in runs))] for k in accuracy.COMPARED}
    return {**runs[0], **middle}, spread, traces[0]


def noise_arguments(quality: dict, seeds: int) -> dict:
    """compare_cell's noise arguments from a fit's quality (calibrate.fit: its measured step-time noise) and a seed
    count (config/real_engine.json comparison.step_noise_seeds, or --noise-seeds): none when the seeds are 0 or the
    fit could not measure the noise."""
    if not seeds or not quality.get("noise"):
        return {}
    return {"noise": StepNoise.from_dict(quality["noise"]), "noise_seeds": seeds}


def compare_cell(a, doc: dict, step: StepModel, server: dict, slo_ms: dict, saturated_below: float,
                 max_concurrency: int | None = None, speed_bound: float | None = None,
                 noise: StepNoise | None = None, noise_seeds: int = 0, with_trace: bool = False):
    """A run measured and predicted; `saturated` when it completed fewer than `saturated_below` times the requests
    per second it was sent (config/real_engine.json comparison.saturated_below); `speed_moved` (only for a run with
    a speed check) when the engine's own speed moved more than `speed_bound` while it ran. With `noise` and
    `noise_seeds` the prediction is the median over that many seeded noisy runs, and `predicted_spread` their range
    (the Kolmogorov-Smirnov distances are seed 0's). `with_trace`: returns (the cell, the simulated trace: seed 0's
    with noise)."""
    measured = results.metrics_of(doc, slo_ms)
    predicted, spread, trace = predicted_over_seeds(a, doc, step, server, slo_ms, max_concurrency, noise, noise_seeds)
    span = max(doc["send_times"])
    sent_rate = len(doc["send_times"]) / span if span > 0 else None  # None: all sent at once (request_rate inf)
    saturated = sent_rate is None or measured["request_throughput"] < saturated_below * sent_rate
    compared = accuracy.COMPARED
    out = {"measured": {k: measured[k] for k in compared}, "predicted": {k: predicted[k] for k in compared},
           "sent_rate": sent_rate, "saturated": saturated, "ks": accuracy.distribution_distance(doc, trace),
           "never_reached": int(sum(results.never_reached(doc)))}
    if spread is not None:
        out["predicted_spread"], out["noise_seeds"] = spread, noise_seeds
    if "cached_tokens" in doc and "segments" in doc:
        out["reuse"] = accuracy.reuse_agreement(doc, trace, server["slots"])
    moved = speed_moved(doc, speed_bound)
    if moved is not None:
        out["speed_moved"] = moved
    return (out, trace) if with_trace else out


class SpeedMismatch(Exception):
    """The run's own engine speed is past the bound from the calibration's, and predict was not told what to do."""


def checked_prediction(a, doc: dict, step: StepModel, cal: dict, settings: dict, args, noise: dict):
    """The prediction, with the calibration's fitness for this run checked (speed.py): the run's decode iterations
    against the same iterations predicted. Past `speed_check_bound`: with `--rescale` the step model is scaled to
    the run and the run predicted again, with `--force` kept, else SpeedMismatch. A Poisson run whose TTFT or TPOT
    distribution is further than comparison.ks_flag_above from the prediction is flagged (a closed loop's
    noiseless prediction runs in lockstep: its distance says little, module heldout_comparison). Returns (cell, the
    step model used, {"speed_vs_calibration", "rescaled_by", "flags"})."""
    args_kw = {"max_concurrency": args.max_concurrency, **noise}
    cell, trace = compare_cell(a, doc, step, cal["server"], cal["slo_ms"], settings["saturated_below"], **args_kw,
                               with_trace=True)
    bound = settings["speed_check_bound"]
    measured = speed.run_speed(doc, trace, settings["iteration_gap_s"], settings["min_iterations_per_knot"])
    flags, rescaled_by = [], None
    if measured is None:
        flags.append(speed.unread_line(settings["min_iterations_per_knot"]))
    elif bound is not None and speed.beyond(measured, bound):
        line = speed.speed_line(measured, bound)
        if not (args.rescale or args.force):
            raise SpeedMismatch(f"{line} (--rescale scales the step model to the run, --force predicts anyway)")
        if args.rescale:
            rescaled_by = measured["ratio"]
            step = speed.scaled(step, rescaled_by)
            cell = compare_cell(a, doc, step, cal["server"], cal["slo_ms"], settings["saturated_below"], **args_kw)
            line += f"; rescaled: the step model's decode times x {rescaled_by:.3f}"
        flags.append(line)
    ks_bound = settings.get("ks_flag_above")
    if ks_bound is not None and args.max_concurrency is None and max(cell["ks"].values()) > ks_bound:
        flags.append(f"Kolmogorov-Smirnov distance TTFT {cell['ks']['ttft']:.3f}, TPOT {cell['ks']['tpot']:.3f}: "
                     f"past ks_flag_above ({ks_bound}); the predicted distributions do not match the run's")
    return cell, step, {"speed_vs_calibration": measured, "rescaled_by": rescaled_by, "flags": flags}


MAX_NOISE_SEEDS = 1000  # each seed is one more simulated run: a bound so a typo (1000000) is refused, not run for days


def _parser():
    """predict's command line (module docstring)."""
    import argparse
    from pathlib import Path

    ap = argparse.ArgumentParser(prog="python -m scripts.realengine.analyses.predict",
                                 description="Predict a measured load run with the serving simulator and a fitted "
                                             "step model; print measured vs predicted and the error per metric.")
    ap.add_argument("result", type=Path, help="a result file (vLLM --save-result --save-detailed; send_times if any)")
    ap.add_argument("--calibration", type=Path, required=True,
                    help="the engine's calibration record (precomputed/serve/calibration/<engine>-<machine>.json)")
    ap.add_argument("--fit-on", type=Path, nargs="+", metavar="RUN",
                    help="load runs to fit the step model on (default: the calibration load runs beside the record)")
    ap.add_argument("--max-concurrency", type=int, help="the client's in-flight cap (vllm bench serve's flag)")
    ap.add_argument("--config", type=Path, default=Path("config/real_engine.json"),
                    help="the comparison's settings (default: config/real_engine.json)")
    ap.add_argument("--anchor", type=Path, default=Path("anchor-model.json"))
    ap.add_argument("--noise-seeds", type=int, default=0, metavar="N",
                    help="predict with the step model's measured step-time noise, N seeded runs: the median and "
                         "the range over them (default 0: the noiseless step model)")
    ap.add_argument("--out", type=Path, help="also write the prediction as JSON here")
    told = ap.add_mutually_exclusive_group()
    told.add_argument("--rescale", action="store_true",
                      help="when the run's own speed is past speed_check_bound from the calibration's, scale the "
                           "step model's decode times to the run (scripts/realengine/analyses/speed.py) and predict "
                           "again")
    told.add_argument("--force", action="store_true",
                      help="predict with the calibration even when the run's own speed is past the bound")
    return ap


def _print(args, cell: dict, checked: dict, report: dict, sends: str, fit_on: list) -> None:
    """The prediction beside the measurement, metric by metric, then the KS distances and the flags."""
    import sys

    rate = "all at once" if cell["sent_rate"] is None else f"{cell['sent_rate']:.2f} req/s"
    print(f"{args.result.name}: sent {rate}{' (saturated)' if cell['saturated'] else ''}; "
          f"step model fitted on {len(fit_on)} run(s); send times {sends}")
    print(f"{'metric':<20}{'measured':>12}{'predicted':>12}{'error':>10}")
    for k in accuracy.COMPARED:
        err = report["error"][k]
        if err is None:  # not in the measurement (module clients.py: GuideLLM keeps no per-token times)
            print(f"{k:<20}{'—':>12}{cell['predicted'][k]:>12.4g}{'—':>10}")
            continue
        shown = f"{err:+.3f}" if k == "slo_attainment" else f"{err:+.1%}"
        band = "" if "predicted_spread" not in cell else "   seeds: {:.4g} to {:.4g}".format(
            *cell["predicted_spread"][k])
        print(f"{k:<20}{cell['measured'][k]:>12.4g}{cell['predicted'][k]:>12.4g}{shown:>10}{band}")
    print(f"Kolmogorov-Smirnov distance, measured vs predicted: TTFT {cell['ks']['ttft']:.3f}, "
          f"TPOT {cell['ks']['tpot']:.3f}")
    for line in checked["flags"]:
        print(f"warning: {line}", file=sys.stderr)
    if cell["never_reached"]:
        print(f"{cell['never_reached']} request(s) never reached the server (a connection error): measured as "
              "failed, left out of the simulated server's requests")


def main(argv=None) -> int:
    """The command (module docstring): one result file predicted, measured vs predicted with errors."""
    import sys

    from scripts.realengine.analyses import calibrate
    from scripts.realengine.analyses.settings import comparison_settings, read_calibration
    from scripts.record.anchor_file import load
    from scripts.record.atomic import write_json_atomic
    from scripts.record.inputs import InputError, read_json
    from scripts.record.outputs import check_output

    args = _parser().parse_args(argv)
    try:
        if args.max_concurrency is not None and args.max_concurrency < 1:
            raise InputError(f"--max-concurrency must be at least 1, not {args.max_concurrency}")
        if not 0 <= args.noise_seeds <= MAX_NOISE_SEEDS:
            raise InputError(f"--noise-seeds must be between 0 and {MAX_NOISE_SEEDS}, not {args.noise_seeds}")
        cal = read_calibration(args.calibration)
        fit_on = args.fit_on or sorted(args.calibration.parent.glob(
            f"{cal['engine']['id']}-{cal['machine']['id']}-calibration-*.json"))
        if not fit_on:
            raise InputError(f"{args.calibration.as_posix()}: no calibration load runs beside it; name some with "
                             "--fit-on")
        if args.result.resolve() in {p.resolve() for p in fit_on}:
            raise InputError(f"{args.result.as_posix()}: is one of the runs the step model is fitted on (a "
                             "prediction must not see the run it predicts)")
        if args.out is not None:  # never over an input, a kept file (precomputed/measured_records.json), a folder
            check_output(args.out, {"result": args.result, "--calibration": args.calibration, "--config": args.config,
                                    "--anchor": args.anchor, **{f"--fit-on {p.as_posix()}": p for p in fit_on}})
        settings = comparison_settings(read_json(args.config), args.config.as_posix())
        doc = results.load_result(args.result)
        sends = "measured: the file's send_times"
        try:
            if "send_times" in doc:
                check_send_times(doc)
            else:  # vLLM's own files: the sends as its client makes them (assumed_send_times)
                times, sends = assumed_send_times(doc)
                doc = {**doc, "send_times": times}
        except ValueError as err:
            raise InputError(f"{args.result.as_posix()}: {err}") from None
        step, quality = calibrate.fit(cal["calibration"], [results.load_result(p) for p in fit_on], settings)
        noise = noise_arguments(quality, args.noise_seeds)
        if args.noise_seeds and not noise:
            raise InputError("--noise-seeds: the calibration runs give too few iterations to measure the noise")
        cell, step, checked = checked_prediction(load(args.anchor)[0], doc, step, cal, settings,
                                                 args, noise)
    except (InputError, ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except SpeedMismatch as err:
        print(f"error: {args.result.as_posix()}: {err}", file=sys.stderr)
        return 3
    report = {"result": args.result.as_posix(), "calibration": args.calibration.as_posix(), "send_times": sends,
              "fitted_on": [p.as_posix() for p in fit_on], "max_concurrency": args.max_concurrency,
              "slo_ms": cal["slo_ms"], "step_model": step.as_dict(), "fit_quality": quality, **cell,
              **checked, "error": accuracy.cell_errors(cell)}
    _print(args, cell, checked, report, sends, fit_on)
    if args.out:
        write_json_atomic(args.out, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
