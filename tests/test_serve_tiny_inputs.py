"""scripts/bench/serve_tiny.py refuses what would run away, crash or write over something kept (issue 80's rerun of
its hostile inputs): one line naming the flag or the file's field, before any request is served; its defaults are
config/lab.json's, the lab's one home for them."""
import hashlib
import json

import pytest
import torch

from scripts.bench.seeded_weights import seeded_model
from scripts.bench.serve_tiny import main, parse
from scripts.page.lab import lab_settings
from scripts.record.inputs import InputError
from tests.conftest import ROOT

SETTINGS = lab_settings(ROOT / "config" / "lab.json")


@pytest.mark.parametrize("flags, says", [
    (["--rate", "nan"], "--rate nan"), (["--rate", "1e-9"], "--rate 1e-09"), (["--rate", "0"], "--rate 0.0"),
    (["--rate", "-1"], "--rate -1.0"), (["--rate", "inf"], "--rate inf"),
    (["--requests", "1000000"], "--requests 1000000"), (["--requests", "0"], "--requests 0"),
    (["--requests", "-5"], "--requests -5"), (["--prompt", "0"], "--prompt 0"), (["--prompt", "100000000"], "--prompt"),
    (["--output", "0"], "--output 0"), (["--output", "10000000"], "--output"),
    (["--max-num-seqs", "0"], "--max-num-seqs 0"),
    (["--max-num-seqs", "-1"], "--max-num-seqs -1"), (["--max-num-batched-tokens", "0"], "--max-num-batched-tokens 0"),
    (["--seed", "-1"], "--seed -1"), (["--heads", "0"], "--heads 0"), (["--heads", "-4"], "--heads -4"),
    (["--rate", "0.01", "--requests", "1000"], "would take 100,000 s"),
    (["--max-num-seqs", "64", "--max-num-batched-tokens", "32"], "must not exceed --max-num-batched-tokens"),
])
def test_a_value_out_of_bounds_is_refused_by_its_flag(tmp_path, flags, says):
    out = tmp_path / "run.json"
    with pytest.raises(InputError) as err:
        main(["--out", str(out), *flags])
    assert says in str(err.value) and "\n" not in str(err.value)
    assert not out.exists()


@pytest.mark.parametrize("target", ["config/lab.json", "precomputed/MANIFEST.json", "precomputed"])
def test_a_kept_file_or_a_folder_is_never_the_output(target):
    path = ROOT / target
    before = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    with pytest.raises(InputError, match="--out .*(keeps this file|is a folder)"):
        main(["--out", str(path), "--requests", "2"])
    assert before is None or hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_an_unwritable_output_is_refused_before_the_run():
    with pytest.raises(InputError, match="--out /proc/version: cannot be written there"):
        main(["--out", "/proc/version", "--requests", "2"])


def test_the_output_is_never_the_checkpoint(tmp_path):
    weights = tmp_path / "my_model.pt"
    torch.save(seeded_model().state_dict(), weights)
    before = weights.read_bytes()
    with pytest.raises(InputError, match="is the --checkpoint"):
        main(["--out", str(weights), "--checkpoint", str(weights)])
    assert weights.read_bytes() == before


@pytest.mark.parametrize("emb, says", [
    ("a string", "field emb.weight is not a (vocab x width) tensor"),
    (torch.zeros(2048), "field emb.weight is not a (vocab x width) tensor"),
    (torch.zeros(256, 2048), "field emb.weight is not a (vocab x width) tensor"),
])
def test_a_checkpoint_with_a_bad_embedding_is_refused_by_field(tmp_path, emb, says):
    state = seeded_model().state_dict()
    state["emb.weight"] = emb
    path = tmp_path / "bad.pt"
    torch.save(state, path)
    with pytest.raises(InputError, match=f"bad.pt: {says.replace('(', '.').replace(')', '.')}"):
        main(["--out", str(tmp_path / "run.json"), "--checkpoint", str(path), "--requests", "2"])


def test_random_bytes_as_a_checkpoint_are_refused_in_one_line(tmp_path):
    path = tmp_path / "noise.pt"
    path.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(InputError) as err:
        main(["--out", str(tmp_path / "run.json"), "--checkpoint", str(path), "--requests", "2"])
    said = str(err.value)
    assert said.startswith(f"{path.as_posix()}: not a readable torch state_dict") and "\n" not in said


def test_the_defaults_are_the_labs():
    a = parse(["--out", "/tmp/serve-tiny-defaults.json"])
    load, engine = SETTINGS["load"], SETTINGS["engine"]
    assert (a.rate, a.requests, a.prompt, a.output, a.seed) == (load["rate"], load["request_count"], load["prompt"],
                                                                load["output"], load["seed"])
    assert (a.max_num_seqs, a.max_num_batched_tokens, a.block_size) == (engine["max_num_seqs"],
                                                                       engine["max_num_batched_tokens"],
                                                                       load["prefix_block_size"])
    assert json.loads((ROOT / "config" / "course.json").read_text(encoding="utf-8"))  # the course file still reads
