"""The charts at build time: the pages' Vega-Lite specs (charts.py) chosen for the data at hand, compiled to Vega by
vl-convert (memoized by the spec's sha256: scripts/record/memo.py), and each chart's box sized to the height the
compiled spec draws at its default data, so nothing moves when the runtime paints it."""

import json
import math
import re

import vl_convert

from scripts.common import names
from scripts.page import charts
from scripts.record import memo

# vl-convert's answers kept by the sha256 of the spec and its version (scripts/record/memo.py): compiling the nine
# charts and drawing them to size their boxes took about 1.5 s of each render, the same specs every time
CONVERTED = "charts"


def _converted(kind: str, spec: dict, convert):
    name = memo.key(kind, vl_convert.__version__, json.dumps(spec, sort_keys=True, ensure_ascii=False))
    found = memo.read(CONVERTED, name)
    if found is not None and set(found) == {"value"}:
        return found["value"]
    value = convert(spec)
    memo.write(CONVERTED, name, {"value": value})
    return value


def compile_specs(specs: dict[str, dict]) -> dict[str, dict]:
    """Vega-Lite -> Vega at build time; the $schema URL is dropped (the page names no remote address)."""
    out = {}
    for chart_id, spec in specs.items():
        vega = _converted("vegalite_to_vega", spec, vl_convert.vegalite_to_vega)
        vega.pop("$schema", None)
        out[chart_id] = vega
    return out


def chart_specs(data: dict, tokens: dict | None, bench: dict | None, serving: dict | None) -> dict:
    """Every chart's Vega-Lite spec at the page's opening state (charts.py)."""
    sc = data["scenario"]
    specs = {"frontier": charts.frontier(sc["batch"]["value"], sc["context_tokens"]["value"],
                                         sc["tpot_slo_ms"]["value"]),
             "timeline": charts.timeline(sc["prompt_tokens"]["value"], sc["chunk_tokens"]["value"])}
    if tokens:
        specs["tokens"] = charts.tokens(tokens)
    if bench:
        specs.update(charts.bench(bench))
    if serving:
        o = serving["page_opening"]
        specs.update({"load_attain": charts.load_attainment(o["attainment_target"], o["request_rate"]),
                      "load_ttft": charts.load_distribution("ttft", "ttft_slo_ms", o["ttft_slo_ms"]),
                      "load_tpot": charts.load_distribution("tpot", "load_tpot_slo_ms", o["load_tpot_slo_ms"]),
                      "load_scatter": charts.load_scatter(o["ttft_slo_ms"], o["load_tpot_slo_ms"])})
    return specs


def chart_boxes(compiled: dict[str, dict], samples: dict[str, dict[str, list]]) -> dict[str, int]:
    """Each chart's height in px, reserved before it renders so that nothing below it moves (no layout shift):
    the chart drawn once here by vl-convert with its default data, as the page will first draw it."""
    boxes = {}
    for chart_id, spec in compiled.items():
        data = [{**d, "values": samples[chart_id][d["name"]]} if d["name"] in samples.get(chart_id, {}) else d
                for d in spec.get("data", [])]
        boxes[chart_id] = _converted("drawn_height", {**spec, "data": data, "autosize": {"type": "pad"}, "width": 400},
                                     _drawn_height)
    return boxes


def _drawn_height(spec: dict) -> int:
    svg = vl_convert.vega_to_svg(spec)
    return math.ceil(float(re.search(r'<svg[^>]*\bheight="([0-9.]+)"', svg).group(1)))


def default_chart_data(data: dict) -> dict[str, dict[str, list]]:
    """The rows the page's script first draws the computed charts with (frontier at the default context and SLO;
    the default timeline), here only to size their boxes."""
    sc, ctx = data["scenario"], data["scenario"]["context_tokens"]["value"]
    rows = [r for r in data["frontier"]["rows"] if r["context"] == ctx and r["fits"]]
    cap = max((r["batch"] for r in rows), default=0)
    met, missed = names.CHART_VALUES["slo_met"], names.CHART_VALUES["slo_missed"]
    frontier = [{**r, "slo_status": met if r["step_ms"] <= sc["tpot_slo_ms"]["value"] else missed,
                 "is_cap": r["batch"] == cap} for r in rows]
    bars = [{**b, "lane_label": b["lane"], "kind_label": b["kind"]} for b in data["timeline_default"]["bars"]]
    return {"frontier": {"frontier": frontier}, "timeline": {"timeline": bars}}


def default_load_data(readouts: dict, rates: list[float]) -> dict[str, dict[str, list]]:
    """Rows shaped like the under-load charts' first draw (every schedule, every statistic, both sides of the
    SLO box), from the opening readouts, here only to size the charts' boxes."""
    labels = list(names.SCHEDULE_LABELS.items())
    attain = [{"schedule": label, "rate": r, "attainment": 1.0 if r < 5 else 0.0} for _, label in labels for r in rates]
    goodput = [{"schedule": label, "goodput_rate": readouts[f"goodput_rate.{s}"], "target": 0.9} for s, label in labels]
    out = {"load_attain": {"load_attain": attain, "load_goodput": goodput}}
    for metric in ("ttft", "tpot"):
        curve, stats = [], []
        for s, label in labels:
            lo, hi = readouts[f"p50_{metric}_ms.{s}"] / 2, readouts[f"p99_{metric}_ms.{s}"]
            curve += [{"schedule": label, "ms": lo, "share": 0.0}, {"schedule": label, "ms": hi, "share": 1.0}]
            stats += [{"schedule": label, "stat": st, "ms": hi, "share": 0.5}
                      for st in (names.CHART_VALUES["mean"], "p50", "p90", "p99")]
        out[f"load_{metric}"] = {f"load_{metric}_curve": curve, f"load_{metric}_stats": stats}
    points = [{"ttft_ms": readouts[f"{q}_ttft_ms.whole"], "tpot_ms": readouts[f"{q}_tpot_ms.whole"], "inside": inside}
              for q, inside in (("p50", names.CHART_VALUES["both_met"]), ("p99", names.CHART_VALUES["not_both"]))]
    out["load_scatter"] = {"load_points": points, "load_box": [{"x1": 10, "y1": 10}]}
    return out
