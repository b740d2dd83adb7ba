"""Registries of the engine's components by name: schedulers (schedulers.py), KV managers (kv.py) and step-cost
models (stepcost.py). A new engine rule, KV manager or cost model is a class with `register(KIND, name)` on it; the
simulator and the config read it by that name. Pure."""
from __future__ import annotations

REGISTRIES: dict[str, dict[str, type]] = {"scheduler": {}, "kv": {}, "step_cost": {}}


def register(kind: str, name: str):
    """Class decorator: file the class under `name` in the `kind` registry (its `name` attribute is set to it)."""
    def add(cls):
        table = REGISTRIES[kind]
        if name in table:
            raise ValueError(f"{kind} {name!r} is registered twice ({table[name].__qualname__}, {cls.__qualname__})")
        cls.name = name
        table[name] = cls
        return cls
    return add


def lookup(kind: str, name: str) -> type:
    table = REGISTRIES[kind]
    if name not in table:
        raise ValueError(f"{kind} must be one of {', '.join(table)}, not {name!r}")
    return table[name]
