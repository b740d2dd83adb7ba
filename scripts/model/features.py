"""Which model features an anchor has, by name: what a `when` in config/techniques.json and a feature of
config/model_words.json refer to. Pure."""
from __future__ import annotations

from scripts.model import sizes

FEATURES = {
    "linear_attention": lambda a: sizes.linear_attention_layers(a) > 0,  # Gated DeltaNet layers (a hybrid model)
    "experts": lambda a: sizes.moe_layers(a) > 0,  # routed experts (a mixture of experts)
    "sliding_window": lambda a: sizes.window_attention_layers(a) > 0,  # sliding-window attention layers (gpt-oss)
}


def features(a) -> set[str]:
    """The names of the features anchor `a` has."""
    return {name for name, has in FEATURES.items() if has(a)}
