"""`python -m scripts.realengine.investigations.slot_sweep`: how a decode step's time depends on which server slots the
decoding requests hold, on this machine's llama-server (config/real_engine.json `server`). For each layout (a set of
slot ids) the requests are sent together, each pinned to its slot (`id_slot`, which the server honours:
get_available_slot in tools/server/server-context.cpp), with a 64-token prompt and 64 output tokens; a request's step
time is the median of its inter-token gaps after the first 8 (the prompts are done by then), and the layout's the
median over its requests and `--repeats`. llama.cpp cuts a batch into ubatches of consecutive slot ids
(stepmodel.split_equal), so slots 0, 2 run as two lone steps and 0, 1 as one step of two: `predicted` is the sum over
those ubatches of the contiguous layouts' own times (0..n-1), to check against the measured one. A trial: it writes
build/slot-sweep.json (machine, engine, rows) unless `--out` says otherwise, and nothing under precomputed/. Leave
the machine idle."""
from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import numpy as np

from scripts.realengine.analyses.stepmodel import split_equal
from scripts.realengine.harness import build as engine_build
from scripts.realengine.harness import client, run
from scripts.record.atomic import write_json_atomic

LAYOUTS = "0;0,1;0,2;0,1,2;0,2,4;0,1,3;0,1,2,3;0,2,4,6;0,1,4,5;0,1,2,3,4,5;0,2,3,4,6,7;0,1,2,3,4,5,6,7"
SKIP_GAPS = 8  # inter-token gaps left out at the start of each request


def _layouts(text: str) -> list[tuple[int, ...]]:
    return [tuple(int(x) for x in part.split(",")) for part in text.split(";") if part.strip()]


async def _layout_steps(port: int, slots: tuple[int, ...], rng, vocab: int, eot: int, tokens: int) -> list[float]:
    prompts = [client.prompt_ids(tokens, rng, vocab, eot) for _ in slots]
    outs = await asyncio.gather(*[client.send_one("127.0.0.1", port, p, tokens, {"id_slot": s})
                                  for p, s in zip(prompts, slots, strict=True)])
    failed = [o.error for o in outs if not o.success]
    if failed:
        raise SystemExit(f"error: layout {slots}: {failed[0]}")
    return [float(np.median(o.itl[SKIP_GAPS:])) for o in outs]


def predicted_from_contiguous(rows: list[dict], ubatch_tokens: int) -> None:
    """Adds to each row the sum over its ubatches (split_equal) of the measured contiguous layouts' step times,
    where every ubatch size was measured contiguous."""
    contiguous = {len(r["slots"]): r["step_ms"] for r in rows if list(r["slots"]) == list(range(len(r["slots"])))}
    for r in rows:
        sizes = [len(ub) for ub in split_equal(r["slots"], [], ubatch_tokens)]
        r["ubatches"] = sizes
        if all(n in contiguous for n in sizes):
            r["predicted_ms"] = round(sum(contiguous[n] for n in sizes), 2)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layouts", type=_layouts, default=_layouts(LAYOUTS),
                    help="slot sets, ';'-separated, each comma-separated")
    ap.add_argument("--tokens", type=int, default=64, help="prompt and output tokens of each request")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path("build/slot-sweep.json"))
    args = ap.parse_args(argv)
    cfg = engine_build.load_config(engine_build.CONFIG)
    slots = cfg["server"]["slots"]
    bad = [lay for lay in args.layouts if not lay or len(set(lay)) != len(lay) or min(lay) < 0 or max(lay) >= slots]
    if bad or args.tokens <= SKIP_GAPS + 1 or args.repeats < 1:
        raise SystemExit(f"error: --layouts need distinct slot ids in 0..{slots - 1} (not {bad}); --tokens above "
                         f"{SKIP_GAPS + 1}; --repeats at least 1")
    binary, mpath, vocab, eot = run.trial_engine(cfg)
    port, rng = run.free_port(), np.random.default_rng(args.seed)
    steps: dict[tuple, list[float]] = {lay: [] for lay in args.layouts}
    with run.serving(run.server_args(binary, mpath, port, cfg["server"]), port, Path("build/logs/slot-sweep.log")):
        run.warm_up(port, vocab, eot)
        for _ in range(args.repeats):  # the layouts in turn, so a slow stretch of the machine spreads over all
            for lay in args.layouts:
                steps[lay] += asyncio.run(_layout_steps(port, lay, rng, vocab, eot, args.tokens))
    rows = [{"slots": list(lay), "step_ms": round(float(np.median(v)) * 1e3, 2),
             "q1_ms": round(float(np.quantile(v, 0.25)) * 1e3, 2), "q3_ms": round(float(np.quantile(v, 0.75)) * 1e3, 2),
             "n": len(v)} for lay, v in steps.items()]
    predicted_from_contiguous(rows, cfg["server"]["ubatch_tokens"])
    for r in rows:
        guess = f"  from contiguous {r['predicted_ms']:6.1f} ms" if "predicted_ms" in r else ""
        layout = ",".join(map(str, r["slots"]))
        print(f"slots {layout:17s} ubatches {r['ubatches']}  step {r['step_ms']:6.1f} ms{guess}", file=sys.stderr)
    write_json_atomic(args.out, {"machine": run.machine_record(cfg["server"]["threads"]), "server": cfg["server"],
                                 "tokens": args.tokens, "repeats": args.repeats, "seed": args.seed, "rows": rows})
    print(f"wrote {args.out.as_posix()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
