"""`python -m scripts.realengine.investigations.tile_sweep`: how a prompt's first-token time depends on its new tokens
after a cached prefix, on this machine's llama-server (config/real_engine.json `server`). For each prefix length and
each new-token count: a fresh prefix sent alone (one output token; its slot keeps it), then the prefix plus that many
fresh tokens, timed to the first token (calibrate.measure_cached, which also checks the server reused the whole
prefix); the median over `--repeats`. With prefix 0 the prompt is computed whole (calibrate.measure_prefill). It
shows the attention tile the step model prices (stepmodel.StepModel.context_cost; comparison.attention_tile_rows):
below 64 new tokens each cached token costs per new token, from 64 per tile of 64. A trial: it writes
build/tile-sweep.json (machine, engine, rows) unless `--out` says otherwise, and nothing under precomputed/. Leave
the machine idle."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from scripts.realengine.analyses import calibrate
from scripts.realengine.harness import build as engine_build
from scripts.realengine.harness import run
from scripts.record.atomic import write_json_atomic


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--prefixes", type=_ints, default=[0, 256, 512, 1024], help="cached tokens (comma-separated)")
    ap.add_argument("--new", type=_ints, default=[16, 32, 48, 63, 64, 65, 96, 128, 129, 192, 256],
                    help="new tokens after the prefix (comma-separated)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--out", type=Path, default=Path("build/tile-sweep.json"))
    args = ap.parse_args(argv)
    cfg = engine_build.load_config(engine_build.CONFIG)
    binary, mpath, vocab, eot = run.trial_engine(cfg)
    port, rng = run.free_port(), np.random.default_rng(args.seed)

    cached = [p for p in args.prefixes if p > 0]
    with run.serving(run.server_args(binary, mpath, port, cfg["server"]), port, Path("build/logs/tile-sweep.log")):
        run.warm_up(port, vocab, eot)  # the calibration's own measurements: lone prompts, then cached points
        rows = [{"prefix_tokens": 0, "new_tokens": p.pop("prompt_tokens"), **p} for p in (calibrate.measure_prefill(
            port, args.new, args.repeats, rng, vocab, eot) if 0 in args.prefixes else [])]
        if cached:
            rows += calibrate.measure_cached(port, {"prefix_tokens": cached, "new_tokens": args.new,
                                                    "repeats": args.repeats}, rng, vocab, eot)
    for r in rows:
        print(f"prefix {r['prefix_tokens']:5d}  new {r['new_tokens']:4d}  TTFT {r['median_s'] * 1e3:7.1f} ms",
              file=sys.stderr)
    write_json_atomic(args.out, {"machine": run.machine_record(cfg["server"]["threads"]), "server": cfg["server"],
                                 "repeats": args.repeats, "seed": args.seed, "rows": rows})
    print(f"wrote {args.out.as_posix()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
