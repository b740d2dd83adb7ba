"""The names the code, the data and the page share, read once from names.json (beside this file): the schedule
ids (`whole`, `chunked`, `disagg`) with their labels and colours, the engine presets and step-time sets, the
timeline's lanes and step kinds. Python uses
the constants below; the page gets the same document as window.C13_DATA.names (scripts/page/render.py), so
lesson.js never retypes a name or a label."""
from __future__ import annotations

import json
from pathlib import Path

NAMES: dict = json.loads((Path(__file__).parent / "names.json").read_text(encoding="utf-8"))

SCHEDULES: tuple[str, ...] = tuple(NAMES["schedules"])  # the one word for a schedule, everywhere: "schedule"
SCHEDULE_LABELS: dict[str, str] = {s: v["label"] for s, v in NAMES["schedules"].items()}
SCHEDULE_COLORS: dict[str, str] = {s: v["color"] for s, v in NAMES["schedules"].items()}
# the serving model's engine presets (scripts/serving/engine/schedulers.py)
PRESETS: tuple[str, ...] = tuple(NAMES["presets"])
PRESET_LABELS: dict[str, str] = {s: v["label"] for s, v in NAMES["presets"].items()}
STEP_TIMES: tuple[str, ...] = tuple(NAMES["step_times"])  # the roofline bound, the anchor's realistic step times
STEP_TIME_LABELS: dict[str, str] = {s: v["label"] for s, v in NAMES["step_times"].items()}
TAIL_PARTS: tuple[str, ...] = tuple(NAMES["tail_parts"])  # engine.PARTS the page shows, without their "_s"
TAIL_PART_LABELS: dict[str, str] = {s: v["label"] for s, v in NAMES["tail_parts"].items()}
FIELD_LABELS: dict[str, str] = {k: v["label"] for k, v in NAMES["fields"].items()}  # anchor fields, readouts
METRIC_LABELS: dict[str, str] = {k: v["label"] for k, v in NAMES["metrics"].items()}  # the page's metric words
TRY_LABELS: dict[str, str] = {k: v["label"] for k, v in NAMES["try_steps"].items()}  # the experiment's try steps
LANE_LABELS: dict[str, str] = {lane: v["label"] for lane, v in NAMES["lanes"].items()}
STEP_KIND_LABELS: dict[str, str] = {k: v["label"] for k, v in NAMES["step_kinds"].items()}
STEP_KIND_COLORS: dict[str, str] = {k: v["color"] for k, v in NAMES["step_kinds"].items()}
CHART_VALUES: dict[str, str] = {k: v for k, v in NAMES["chart_values"].items() if k != "description"}
CHART_WORDS: dict[str, dict] = {k: v for k, v in NAMES["charts"].items() if k != "description"}  # charts.py only


def metric_label(metric: str) -> str:
    """A metric key (vLLM's, or a page readout's) in the page's words: tail_<part>_ms through its part's label."""
    if metric in METRIC_LABELS:
        return METRIC_LABELS[metric]
    part = metric.removeprefix("tail_").removesuffix("_ms")
    if metric.startswith("tail_") and part in TAIL_PART_LABELS:
        return METRIC_LABELS["tail_part_ms"].format(part=TAIL_PART_LABELS[part])
    return metric


def page_names() -> dict:
    """What lesson.js reads (window.C13_DATA.names): the document without its description."""
    return {k: v for k, v in NAMES.items() if k not in ("schema_version", "description", "charts")}
