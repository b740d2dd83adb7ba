"""The tiny model's shape, without torch (the page's render reads it; scripts/bench/tinygpt.py builds the model)."""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Shape:
    n_layer: int = 4
    d_model: int = 256
    n_head: int = 4
    vocab: int = 2048
    d_ff: int = 1024
    rope_base: float = 10000.0

    def as_dict(self) -> dict:
        return asdict(self)


DEFAULT = Shape()  # the course's model (4 layers, d 256, 4 heads, vocab 2,048, FFN 1,024)
