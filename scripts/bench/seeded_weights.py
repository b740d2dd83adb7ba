"""The tiny model's weights from a documented seeded generator, so that the lab page (templates/lab/model/model.js,
which makes the same numbers in the browser) and `TinyGPT` are one model, and nothing is downloaded.

The generator is mulberry32 (Tommy Ettinger's 32-bit generator, public domain): state a starts at `seed`; each draw
adds 0x6D2B79F5 to a (mod 2^32) and hashes it:
    t = a;  t = (t ^ t >> 15) * (t | 1);  t ^= t + (t ^ t >> 7) * (t | 61);  r = t ^ t >> 14     (all mod 2^32)
Draw n's state is seed + n * 0x6D2B79F5, so numpy computes all draws at once and JS one by one, to the same bits.
The scales are chosen (assumed, not trained) so that greedy decoding wanders: with a unit-variance embedding the
residual stream is the input token and the tied head repeats it forever; with these, 64 greedy steps from the three
test prompts visit 6, 12 and 19 distinct tokens and the closest top-two logits differ by 4.8e-4 of the largest.
Each draw becomes u = ((r >> 8) - 2^23) / 2^23, uniform on [-1, 1) and exact in float32; a value is
float32(offset + u * scale) (float64 arithmetic, then one rounding to nearest, as Math.fround does).

One stream runs over the parameters in SPEC order, each row-major in PyTorch's shape (nn.Linear: out x in):
  embedding (tied with the output)   scale 0.1
  Linear weight                      scale sqrt(3 / fan_in)     (variance 1 / fan_in); x 3 for the two that write
                                     into the residual stream (proj, out)
  Linear bias                        scale 0.02
  LayerNorm weight                   1 + 0.1 u
  LayerNorm bias                     0.1 u
"""
from __future__ import annotations

import math

import numpy as np

from scripts.bench.shape import DEFAULT, Shape

SEED = 20260513  # assumed: any 32-bit seed makes a model; this one is the lab page's
STEP = 0x6D2B79F5
MASK = 0xFFFFFFFF
EMBEDDING_SCALE = 0.1  # assumed (see above)
RESIDUAL_GAIN = 3.0    # assumed (see above)


def mulberry32(seed: int, count: int, start: int = 0) -> np.ndarray:
    """Draws start .. start+count-1 of the stream from `seed`, as uint32 (vectorised: draw n's state is known)."""
    n = np.arange(start + 1, start + count + 1, dtype=np.uint64)
    a = ((np.uint64(seed) + n * np.uint64(STEP)) & np.uint64(MASK)).astype(np.uint32)
    with np.errstate(over="ignore"):
        t = (a ^ (a >> np.uint32(15))) * (a | np.uint32(1))
        t = t ^ (t + (t ^ (t >> np.uint32(7))) * (t | np.uint32(61)))
        return t ^ (t >> np.uint32(14))


def uniform(seed: int, count: int, start: int = 0) -> np.ndarray:
    """Draws as float64 in [-1, 1): ((r >> 8) - 2^23) / 2^23."""
    r = mulberry32(seed, count, start)
    return ((r >> np.uint32(8)).astype(np.float64) - 2.0 ** 23) / 2.0 ** 23


def spec(shape: Shape = DEFAULT) -> list[tuple[str, tuple[int, ...], float, float]]:
    """(parameter name, shape, offset, scale) in stream order, names as TinyGPT.named_parameters() gives them."""
    d, f, v = shape.d_model, shape.d_ff, shape.vocab
    out = [("emb.weight", (v, d), 0.0, EMBEDDING_SCALE)]
    for i in range(shape.n_layer):
        b = f"blocks.{i}."
        out += [(b + "ln1.weight", (d,), 1.0, 0.1), (b + "ln1.bias", (d,), 0.0, 0.1),
                (b + "ln2.weight", (d,), 1.0, 0.1), (b + "ln2.bias", (d,), 0.0, 0.1)]
        for name, n_out, n_in in (("qkv", 3 * d, d), ("proj", d, d), ("fc", f, d), ("out", d, f)):
            gain = RESIDUAL_GAIN if name in ("proj", "out") else 1.0
            out += [(b + name + ".weight", (n_out, n_in), 0.0, gain * math.sqrt(3.0 / n_in)),
                    (b + name + ".bias", (n_out,), 0.0, 0.02)]
    return out + [("ln_f.weight", (d,), 1.0, 0.1), ("ln_f.bias", (d,), 0.0, 0.1)]


def param_total(shape: Shape = DEFAULT) -> int:
    """How many parameters spec() generates (TinyGPT's param_count, without building the model)."""
    return sum(math.prod(dims) for _, dims, _, _ in spec(shape))


def generated(shape: Shape = DEFAULT, seed: int = SEED) -> dict[str, np.ndarray]:
    """Every parameter by name, float32, from one stream in spec() order."""
    params, start = {}, 0
    for name, dims, offset, scale in spec(shape):
        count = int(np.prod(dims))
        params[name] = (offset + uniform(seed, count, start) * scale).astype(np.float32).reshape(dims)
        start += count
    return params


def seeded_model(shape: Shape = DEFAULT, seed: int = SEED):
    """A TinyGPT holding the generated weights (the lab page's model)."""
    import torch

    from scripts.bench.tinygpt import TinyGPT

    model = TinyGPT(shape)
    params = dict(model.named_parameters())
    made = generated(shape, seed)
    if set(made) != set(params):
        raise ValueError(f"seeded_weights.spec names {sorted(set(made) ^ set(params))} unlike TinyGPT")
    with torch.no_grad():
        for name, value in made.items():
            params[name].copy_(torch.from_numpy(value))
    return model.eval()
