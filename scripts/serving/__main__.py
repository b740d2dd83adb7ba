"""Simulate the anchor serving a trace, or recompute a `vllm bench serve` result, with vLLM's metrics.

  python -m scripts.serving --schedule chunked --trace my_trace.csv --out result.json [--chunk-tokens 512]
        [--max-num-seqs N] [--max-num-batched-tokens N] [--prefill-gpus 1 --decode-gpus 1]
        [--first-token decode|prefill] [--efficiency bound|realistic|flops=0.6,bandwidth=0.8,overhead_ms=1]
        [--memory paged|reserved] [--block-size 16] [--gpu-memory-utilization 0.9] [--max-concurrency N]
        [--slo ttft:2000,tpot:50] [--percentiles 50,90,99] [--anchor anchor-model.json] [--save-detailed]

--schedule is one of the lesson's schedules (whole, chunked, disagg) or an engine preset (orca, sarathi, vllm-v1,
vllm-v0, disagg, llama.cpp; scripts/serving/engine/schedulers.py says which engine's rule each follows; --preset is
the same flag). For vllm-v1 and vllm-v0, --max-num-batched-tokens and --max-num-seqs default as that vLLM sets them
for the anchor's GPU; llama.cpp needs both (its -b and -np).
--first-token says where a P/D request's first token counts (decode: as vLLM's P/D proxy streams it, the default;
prefill: DistServe's). --efficiency sets the step times: bound (the roofline, the default), realistic (the anchor's
achieved_* fields and iteration_overhead_s) or given shares of peak FLOP/s and bandwidth and a per-iteration overhead.
--memory: paged (vLLM's KV blocks of --block-size tokens in --gpu-memory-utilization x HBM less the weights and the
anchor's reserve, with preemption by recompute; the default of vllm-v1 and vllm-v0) or reserved (each request's full
context held from admission; the default of the lesson's schedules). --max-concurrency N (colocated schedules) sends
a request only while fewer than N are in flight, as `vllm bench serve --max-concurrency` does; latencies count from
the send.
  python -m scripts.serving --schedule chunked --workload chat --rate 4 --seeds 10 --out result.json [--requests N]
        [--workloads config/workloads.json] [any flag above]
  python -m scripts.serving --schedule chunked --workload chat --ramp-up-strategy linear --ramp-up-start-rps 1
        --ramp-up-end-rps 12 --out ramp.json
  python -m scripts.serving --vllm-result vllm_result.json --out metrics.json [--slo ...] [--percentiles ...]

The trace is a CSV with arrival_s,prompt_tokens,output_tokens or the Azure trace columns
TIMESTAMP,ContextTokens,GeneratedTokens, or (a .jsonl file) the Mooncake layout: one JSON object per line with
timestamp (ms), input_length, output_length and hash_ids (one id per 512-token block;
scripts/serving/workloads/trace.py).
--prefix-caching (colocated schedules; a Mooncake trace, whose hash ids say which prompts share prefixes) serves
cached prefixes as the engine does (engine/kv.py: vLLM's automatic prefix caching on paged memory, llama.cpp's slots
for --schedule llama.cpp) and adds `prefix_cache` (token and request hit rates, prefill time saved) and each
request's cached_tokens and prefill_saved_s. The result JSON holds `metrics` under vLLM's own keys (mean_ttft_ms,
p99_tpot_ms, request_goodput, ...; definitions in scripts/serving/measures/metrics.py) and `requests`, one object per
request with where its time went (queueing_s, prefill_s, interference_s, transfer_s, decode_s, preemption_s: they
sum to its E2EL) and how often it was preempted; with --save-detailed, also each request's inter-token gaps `itl_s`.
--workload generates the requests instead of reading a trace: that workload of config/workloads.json (fitted to the
anchor's context) at --rate requests per second in all (Poisson, as the sweep), --requests of them (default: the
sweep's); --seeds N runs N replications with the sweep's seeds (the first is the sweep's own) and adds
`replications`: per metric every replication's value and the two-sided 95% t interval of their mean
(scripts/serving/measures/uncertainty.py). A trace file is one sample: --seeds needs --workload.
Any bad input ends in one line naming the file and what is wrong, and nothing is written.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from scripts.model import roofline as rl
from scripts.record.anchor_file import load
from scripts.record.atomic import write_json_atomic
from scripts.record.inputs import InputError
from scripts.serving import engine, sweep
from scripts.serving.measures import metrics, results
from scripts.serving.measures.uncertainty import CONFIDENCE
from scripts.serving.progress import PROBE, QUIET_BELOW, Progress
from scripts.serving.workloads.config import sweep_settings, workloads_for
from scripts.serving.workloads.trace import read_mooncake, read_trace
from scripts.serving.workloads.workload import RAMPS, Requests, generate


def parse_slo(text: str | None) -> dict | None:
    if not text:
        return None
    slo = {}
    for part in text.split(","):
        key, _, value = part.partition(":")
        try:
            ms = float(value)
        except ValueError:
            ms = -1.0
        if key.strip() not in ("ttft", "tpot", "e2el") or not 0 < ms < 1e9:
            raise InputError(f"--slo: {part!r} is not ttft|tpot|e2el:<milliseconds>")
        if key.strip() in slo:  # last-wins would drop a target the user typed
            raise InputError(f"--slo: {key.strip()} is given twice ({text!r}); give each target once")
        slo[key.strip()] = ms
    return slo


def parse_efficiency(text: str, anchor) -> rl.Efficiency:
    """bound | realistic | flops=F,bandwidth=B,overhead_ms=O (any subset; the rest as the bound)."""
    if text == "bound":
        return rl.BOUND
    if text == "realistic":
        return rl.achieved(anchor)
    values = {"flops": 1.0, "bandwidth": 1.0, "overhead_ms": 0.0}
    for part in text.split(","):
        key, _, value = part.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if key.strip() not in values or not np.isfinite(number):
            raise InputError(f"--efficiency: {part!r} is not flops=<share>, bandwidth=<share> or overhead_ms=<ms> "
                             "(or give bound / realistic)")
        values[key.strip()] = number
    try:
        return rl.Efficiency(values["flops"], values["bandwidth"], values["overhead_ms"] / 1000)
    except ValueError as exc:
        raise InputError(f"--efficiency: {exc}") from None


def parse_percentiles(text: str) -> list[float]:
    try:
        values = [float(p) for p in text.split(",")]
    except ValueError:
        values = [-1.0]
    if not all(0 <= p <= 100 for p in values):
        raise InputError(f"--percentiles: {text!r} is not a comma-separated list of numbers in [0, 100]")
    if len(set(values)) < len(values):
        twice = next(p for p in values if values.count(p) > 1)
        raise InputError(f"--percentiles: {twice:g} is given twice ({text!r}); give each percentile once")
    return values


def run(args: argparse.Namespace) -> dict:
    slo, percentiles = parse_slo(args.slo), parse_percentiles(args.percentiles)
    if args.vllm_result:
        doc = results.load_result(args.vllm_result)
        return {"source": Path(args.vllm_result).as_posix(), "metrics": results.metrics_of(doc, slo, percentiles)}
    if not args.schedule or bool(args.trace) == bool(args.workload):
        raise InputError("give --schedule and either --trace or --workload (or --vllm-result)")
    if args.seeds > 1 and not args.workload:
        raise InputError("--seeds: a trace file is one sample; give --workload to simulate several seeds")
    a, doc = load(args.anchor)
    efficiency = parse_efficiency(args.efficiency, a)
    source = Path(args.trace or args.workloads).as_posix()
    began_reading = time.monotonic()
    if args.trace:
        if Path(args.trace).suffix == ".jsonl":  # the Mooncake layout: prompts as hash-id blocks (prefix caching)
            samples = [(None, read_mooncake(args.trace, a.max_position_embeddings)[0])]
        else:
            samples = [(None, read_trace(args.trace, a.max_position_embeddings))]
    else:
        samples = generated(args, a)

    total = sum(len(reqs) for _, reqs in samples)
    progress = Progress(total, args.max_seconds, began=began_reading)
    progress.say(f"read {total:,} requests from {source}")

    def simulate(reqs, report=progress):
        try:
            return engine.simulate(a, reqs, args.schedule, chunk_tokens=args.chunk_tokens, max_batch=args.max_batch,
                                   prefill_gpus=args.prefill_gpus, decode_gpus=args.decode_gpus,
                                   max_num_batched_tokens=args.max_num_batched_tokens,
                                   gpu_name=doc["hardware"]["name"]["value"], first_token=args.first_token,
                                   efficiency=efficiency,
                                   paged=None if args.memory is None else args.memory == "paged",
                                   memory=engine.Memory(args.block_size, args.gpu_memory_utilization),
                                   max_concurrency=args.max_concurrency, prefix_caching=args.prefix_caching,
                                   progress=report)
        except ValueError as exc:
            raise InputError(f"{source}: {exc}") from None

    if progress.loud:  # a big input: time the engine on its first requests, then say what the whole will take
        first = samples[0][1]
        probe = Requests(first.arrival_s[:PROBE], first.prompt_tokens[:PROBE], first.output_tokens[:PROBE],
                         first.segments[:PROBE] if first.segments else None,
                         first.answer_ids[:PROBE] if first.answer_ids else None)
        began = time.monotonic()
        probe_trace = simulate(probe, report=None)
        simulated = time.monotonic()
        metrics.from_trace(probe_trace, slo, percentiles)
        sweep.requests_table(probe_trace, args.save_detailed)
        progress.expect(simulated - began, len(probe), time.monotonic() - simulated)
    trace = simulate(samples[0][1])
    progress.finish_in_bound()
    progress.say("simulated; computing the metrics and each request's record, then writing --out")
    result = metrics.from_trace(trace, slo, percentiles)
    extra = {}
    if args.workload:
        runs = [sweep.interval_values(result, percentiles)]
        runs += [sweep.replication_metrics(simulate(reqs), slo, percentiles) for _, reqs in samples[1:]]
        extra = {"workload": args.workload, "rate": args.rate, "requests_per_seed": len(samples[0][1]),
                 "ramp_up": None if not args.ramp_up_strategy else {
                     "strategy": args.ramp_up_strategy, "start_rps": args.ramp_up_start_rps,
                     "end_rps": args.ramp_up_end_rps},
                 "replications": sweep.replication_block(runs, [seed for seed, _ in samples], CONFIDENCE)}
    return {"anchor": {"name": doc["model"]["name"]["value"], "hardware": doc["hardware"]["name"]["value"]},
            "schedule": args.schedule, "trace": Path(args.trace).as_posix() if args.trace else None,
            "chunk_tokens": args.chunk_tokens,
            "max_batch": args.max_batch, "max_num_batched_tokens": args.max_num_batched_tokens,
            "prefill_gpus": args.prefill_gpus, "decode_gpus": args.decode_gpus, "first_token": args.first_token,
            "max_concurrency": args.max_concurrency,
            "efficiency": {"flops_fraction": efficiency.flops_fraction,
                           "bandwidth_fraction": efficiency.bandwidth_fraction, "overhead_s": efficiency.overhead_s},
            "memory": {"paged": args.memory == "paged" if args.memory else args.schedule in engine.PAGED_PRESETS,
                       "block_size": args.block_size, "gpu_memory_utilization": args.gpu_memory_utilization,
                       "pool_bytes": trace.capacity_bytes, "preemptions": int(trace.preemptions.sum())},
            "slo_ms": slo, "metrics": result, **extra, "prefix_cache": prefix_summary(trace),
            "requests": sweep.requests_table(trace, args.save_detailed)}


def prefix_summary(trace) -> dict | None:
    """--prefix-caching: the share of prompt tokens served from the cache, of requests with a hit, and the prefill
    time the hits saved (total and mean per request)."""
    if trace.cached_tokens is None:
        return None
    prompt = trace.requests.prompt_tokens
    return {"token_hit_rate": float(trace.cached_tokens.sum() / prompt.sum()),
            "request_hit_rate": float((trace.cached_tokens > 0).mean()),
            "cached_tokens": int(trace.cached_tokens.sum()), "prefill_saved_s": float(trace.prefill_saved_s.sum()),
            "prefill_saved_s_mean": float(trace.prefill_saved_s.mean())}


def generated(args: argparse.Namespace, a) -> list[tuple[int, object]]:
    """--workload: (seed, requests) of each of --seeds replications, with the sweep's seeds."""
    doc = workloads_for(args.workloads, a)
    settings, workloads = sweep_settings(doc), doc["workloads"]
    if args.workload not in workloads:
        raise InputError(f"--workload {args.workload!r}: {Path(args.workloads).as_posix()} names "
                         f"{', '.join(workloads)}")
    ramp = None
    if args.ramp_up_strategy:  # vllm bench serve: a ramp replaces --request-rate, from start to end rps
        if args.rate is not None:
            raise InputError("--ramp-up-strategy: give --ramp-up-start-rps and --ramp-up-end-rps instead of --rate "
                             "(as vllm bench serve requires)")
        lo, hi = args.ramp_up_start_rps, args.ramp_up_end_rps
        if lo is None or hi is None or not (0 < lo < 1e6 and 0 < hi < 1e6):
            raise InputError("--ramp-up-strategy: --ramp-up-start-rps and --ramp-up-end-rps must both be given, > 0")
        ramp = (args.ramp_up_strategy, lo, hi)
    elif args.rate is None or not 0 < args.rate < 1e6:
        raise InputError("--rate: give the request rate in requests per second (> 0) with --workload")
    n = args.requests or settings["requests"]
    rate = args.rate if ramp is None else max(ramp[1], ramp[2])  # only checked positive under a ramp
    seeds = sweep.replication_seeds(settings, workloads, args.workload, args.seeds)
    return [(seed, generate(workloads[args.workload], n, rate, seed, settings["burstiness"], ramp))
            for seed in seeds]


BOUNDS = {"seeds": 100, "requests": 1 << 22, "chunk_tokens": 1 << 20, "max_batch": 1 << 30,
          "max_num_batched_tokens": 1 << 24, "prefill_gpus": 64, "decode_gpus": 64, "block_size": 1024,
          "max_concurrency": 1 << 30}


def check_out(args: argparse.Namespace) -> None:
    """--out names a file to (re)write, never a directory nor one of the inputs."""
    out = args.out
    if out.is_dir():
        raise InputError(f"--out {out.as_posix()}: is a directory; name a file")
    for flag in ("trace", "vllm_result", "anchor", "workloads"):
        given = getattr(args, flag)
        if given is not None and out.exists() and given.exists() and out.resolve() == given.resolve():
            raise InputError(f"--out {out.as_posix()}: is the --{flag.replace('_', '-')} input; writing it would "
                             "destroy it")
    if not out.resolve().parent.is_dir():
        raise InputError(f"--out {out.as_posix()}: its directory does not exist")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.serving", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--schedule", "--preset", dest="schedule", choices=engine.engines())
    ap.add_argument("--trace", type=Path)
    ap.add_argument("--workload", help="generate the requests: a workload id of --workloads (instead of --trace)")
    ap.add_argument("--workloads", type=Path, default=Path("config/workloads.json"))
    ap.add_argument("--rate", type=float, default=None, help="--workload: requests per second in all")
    ap.add_argument("--requests", type=int, default=None, help="--workload: requests per seed (default: the sweep's)")
    ap.add_argument("--ramp-up-strategy", choices=RAMPS, default=None,
                    help="--workload: each request's rate ramps from --ramp-up-start-rps to --ramp-up-end-rps, as "
                         "vllm bench serve --ramp-up-strategy does (instead of --rate)")
    ap.add_argument("--ramp-up-start-rps", type=float, default=None)
    ap.add_argument("--ramp-up-end-rps", type=float, default=None)
    ap.add_argument("--seeds", type=int, default=1,
                    help="--workload: replications with the sweep's seeds; adds 95%% intervals (default 1)")
    ap.add_argument("--vllm-result", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--chunk-tokens", type=int, default=512)
    ap.add_argument("--max-batch", "--max-num-seqs", dest="max_batch", type=int, default=None,
                    help="requests running at once (vLLM's max_num_seqs); default: no cap, or the vLLM preset's")
    ap.add_argument("--max-num-batched-tokens", type=int, default=None,
                    help="the vllm-v1/vllm-v0 token budget per iteration; default: that vLLM's for the anchor's GPU")
    ap.add_argument("--prefill-gpus", type=int, default=1)
    ap.add_argument("--decode-gpus", type=int, default=1)
    ap.add_argument("--first-token", choices=engine.FIRST_TOKEN, default=engine.FIRST_TOKEN[0],
                    help="P/D: where the first token counts (decode: vLLM's P/D proxy; prefill: DistServe)")
    ap.add_argument("--efficiency", default="bound",
                    help="step times: bound, realistic, or flops=<share>,bandwidth=<share>,overhead_ms=<ms>")
    ap.add_argument("--prefix-caching", action="store_true",
                    help="vLLM's automatic prefix caching (paged memory) or llama.cpp's slots (--schedule llama.cpp); "
                         "the requests must carry their prompts' content: a Mooncake JSONL --trace (hash_ids)")
    ap.add_argument("--memory", choices=("paged", "reserved"), default=None,
                    help="KV memory: paged (vLLM, with preemption) or reserved; default: the preset's")
    ap.add_argument("--block-size", type=int, default=16, help="tokens per KV block (paged memory)")
    ap.add_argument("--gpu-memory-utilization", type=float, default=0.9,
                    help="share of HBM the paged pool may use, before the weights and reserve")
    ap.add_argument("--max-seconds", type=float, default=3600.0,
                    help="stop (writing nothing) once the simulation has run this long (default 3600; a run of "
                         f"{QUIET_BELOW:,} requests or more prints its expected time and progress)")
    ap.add_argument("--max-concurrency", type=int, default=None,
                    help="requests in flight at most, as vllm bench serve --max-concurrency (colocated schedules)")
    ap.add_argument("--slo")
    ap.add_argument("--percentiles", default="50,90,99")
    ap.add_argument("--anchor", type=Path, default=Path("anchor-model.json"))
    ap.add_argument("--save-detailed", action="store_true", help="also write every request's inter-token gaps")
    args = ap.parse_args(argv)
    for flag, hi in BOUNDS.items():  # the same bounds as config/workloads.json's schema
        if getattr(args, flag) is not None and not 1 <= getattr(args, flag) <= hi:
            ap.error(f"--{flag.replace('_', '-')} must be a whole number in [1, {hi}]")
    if not 0 < args.gpu_memory_utilization <= 1:
        ap.error("--gpu-memory-utilization must be a share in (0, 1]")
    if not 0 < args.max_seconds <= 7 * 86400:
        ap.error("--max-seconds must be in (0, 604800] (a week)")
    try:
        check_out(args)
        result = run(args)
        write_json_atomic(args.out, result)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: --out {args.out.as_posix()}: cannot be written ({exc.strerror})", file=sys.stderr)
        return 2
    m = result["metrics"]
    print(f"wrote {args.out}: {m['completed']} requests, mean TTFT {m['mean_ttft_ms']:.1f} ms, "
          f"mean TPOT {m['mean_tpot_ms']:.2f} ms", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
