"""`python -m scripts.realengine.tile_sweep`: how a prompt's first-token time depends on its new tokens after a cached
prefix, on this machine's llama-server (config/real_engine.json `server`). For each prefix length and each new-token
count: a fresh prefix sent alone (one output token; its slot keeps it), then the prefix plus that many fresh tokens,
timed to the first token; the median over `--repeats`. With prefix 0 the prompt is computed whole. It shows the
attention tile the step model prices (stepmodel.StepModel.context_cost; comparison.attention_tile_rows): below 64 new
tokens each cached token costs per new token, from 64 per tile of 64. A trial: it writes build/tile-sweep.json
(machine, engine, rows) unless `--out` says otherwise, and nothing under precomputed/. Leave the machine idle."""
from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import numpy as np

from scripts.realengine import build as engine_build
from scripts.realengine import client, run
from scripts.realengine import model as model_file
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
    binary, mpath = engine_build.build(cfg), model_file.model_path(cfg["model"])
    if not mpath.exists():
        raise SystemExit(f"error: {mpath.as_posix()} is missing: run `make bench-serving-real` once to write the model")
    tokens, _ = model_file.gpt2_vocabulary()
    vocab, eot = len(tokens), tokens.index("<|endoftext|>")
    port, rng = run.free_port(), np.random.default_rng(args.seed)

    def ttft(prompt: list[int]) -> float:
        o = asyncio.run(client.send_one("127.0.0.1", port, prompt, 1))
        if not o.success:
            raise SystemExit(f"error: a sweep request failed: {o.error}")
        return o.ttft

    rows = []
    with run.serving(run.server_args(binary, mpath, port, cfg["server"]), port, Path("build/logs/tile-sweep.log")):
        run.warm_up(port, vocab, eot)
        for prefix in args.prefixes:
            for new in args.new:
                times = []
                for _ in range(args.repeats):
                    head = client.prompt_ids(prefix, rng, vocab, eot) if prefix else []
                    if head:
                        ttft(head)
                    times.append(ttft(head + client.prompt_ids(new, rng, vocab, eot)))
                rows.append({"prefix_tokens": prefix, "new_tokens": new,
                             "median_ttft_ms": float(np.median(times)) * 1e3})
                print(f"prefix {prefix:5d}  new {new:4d}  TTFT {rows[-1]['median_ttft_ms']:7.1f} ms", file=sys.stderr)
    write_json_atomic(args.out, {"machine": run.machine_record(cfg["server"]["threads"]), "server": cfg["server"],
                                 "repeats": args.repeats, "seed": args.seed, "rows": rows})
    print(f"wrote {args.out.as_posix()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
