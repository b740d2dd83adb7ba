"""The benchmark's lean PyTorch decode step (scripts/bench/lean_step.py) is TinyGPT: the same logits for a batch's
prompt and the eight decode steps after it (preallocated cache, precomputed RoPE tables)."""
import torch

from scripts.bench.lean_step import LeanDecoder
from scripts.bench.seeded_weights import seeded_model


def test_the_lean_step_gives_tinygpts_logits():
    model = seeded_model()
    torch.manual_seed(3)
    prompt = torch.randint(0, model.s.vocab, (3, 64))
    lean, caches = LeanDecoder(model, batch=3, max_context=128), [{} for _ in model.blocks]
    with torch.inference_mode():
        want, got = model(prompt, caches, 0)[:, -1], lean.forward(prompt, 0)
        worst = float((want - got).abs().max() / want.abs().max())
        nxt = want.argmax(-1, keepdim=True)
        for k in range(8):
            want, got = model(nxt, caches, 64 + k)[:, -1], lean.forward(nxt, 64 + k)
            worst = max(worst, float((want - got).abs().max() / want.abs().max()))
            assert torch.equal(want.argmax(-1), got.argmax(-1))
            nxt = want.argmax(-1, keepdim=True)
    assert worst < 1e-5, worst
