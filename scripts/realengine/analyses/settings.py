"""The real-engine comparison's modelling choices, read from config/real_engine.json `comparison` (each a value with
its assumption) and checked by its schema. Pure apart from the validation; used by the comparison (comparison.py),
the prediction command (predict.py) and the audit."""
from __future__ import annotations

from pathlib import Path

from scripts.record import schema
from scripts.record.inputs import InputError, read_json

CALIBRATION_FIELDS = ("machine", "engine", "model", "server", "calibration", "slo_ms")


def read_calibration(path: Path) -> dict:
    """An engine + machine calibration record (precomputed/serve/calibration/<engine>-<machine>.json), with the fields
    the comparison and the prediction command read."""
    cal = read_json(Path(path))
    for key in CALIBRATION_FIELDS:
        if not isinstance(cal, dict) or key not in cal:
            raise InputError(f"{Path(path).as_posix()}: field {key} is missing")
    return cal


def comparison_settings(config: dict, where: str = "config/real_engine.json") -> dict:
    """The comparison's modelling choices from the real-engine config (each a value with its assumption), checked by
    its schema (scripts/record/schemas/real-engine.schema.json): a bad one stops with the file and field named."""
    block = schema.validate(config, schema.REAL_ENGINE, where)["comparison"]
    layout = None
    if block.get("ubatch_layout", {}).get("value"):  # calibrate.fit prices the server's ubatches
        server = config.get("server") or {}
        for key in ("slots", "ubatch_tokens"):
            if not isinstance(server.get(key), int) or server[key] < 1:
                raise InputError(f"{where}: field server.{key} must be a positive integer (comparison.ubatch_layout "
                                 f"prices the slots' ubatches with it)")
        layout = (server["slots"], server["ubatch_tokens"])
    return {"goals": dict(block["goals"]["value"]), "saturated_below": float(block["saturated_below"]["value"]),
            "iteration_gap_s": block["iteration_gap_ms"]["value"] / 1000,
            "min_iterations_per_knot": block["min_iterations_per_knot"]["value"],
            "speed_check_bound": block["speed_check_bound"]["value"] if "speed_check_bound" in block else None,
            "ks_flag_above": block["ks_flag_above"]["value"] if "ks_flag_above" in block else None,
            "noise_seeds": block["step_noise_seeds"]["value"] if "step_noise_seeds" in block else 0,
            "held_out_noise_seeds": block["held_out_noise_seeds"]["value"] if "held_out_noise_seeds" in block else 0,
            "attention_tile_rows": block["attention_tile_rows"]["value"] if "attention_tile_rows" in block else 0,
            "ubatch_layout": layout}
