"""The words and record constructors every real-engine family shares: labels.json beside this file (every label,
unit word, workload and metric name and fit sentence the records say), the metrics tables, and the records of one
engine + machine (Records, HeldOutRecords) with its machine line and calibration file bound."""
from __future__ import annotations

import functools
import json
from pathlib import Path

from scripts.record import provenance as pv
from scripts.record.manifest import sha256

WORDS = json.loads((Path(__file__).parent / "labels.json").read_text(encoding="utf-8"))  # every label and sentence
UNITS, FITS, SOURCES, SPREADS = WORDS["units"], WORDS["fits"], WORDS["sources"], WORDS["spreads"]


def goal_source(name: str, goals: dict) -> str:
    """The sentence that says where a family's goals come from, each goal filled in from `goals` (fractions, as
    config/real_engine.json comparison.goals holds them) in percent."""
    return SOURCES[name].format(**{k: f"{v * 100:.6g}" for k, v in goals.items()})


def shown(table: str) -> dict:
    """A table's metrics: metric -> (label, unit, format, scale from the metrics' own unit), in the table's order."""
    return {key: tuple(WORDS["metrics"][key]) for key in WORDS["shown"][table]}


# The page's table (the load runs), the lab's prefix-reuse table and its held-out table
SHOWN, PREFIX_SHOWN, HELD_SHOWN = shown("load"), shown("prefix"), shown("held")
WORKLOAD_LABELS = WORDS["load_workloads"]
PREDICTION, SEPARATE, LAYOUT = FITS["load"], FITS["separate"], FITS["layout"]


def prices_layout(e: dict) -> bool:
    """Whether the comparison's step models priced the slots' ubatches (their dicts carry U)."""
    models = [e.get("step_model"), (e.get("separate_calibration") or {}).get("step_model")]
    halves = e.get("halves") or {}
    models += [h.get("step_model") for h in (halves.values() if isinstance(halves, dict) else halves)]
    return any(m and "ubatch_seconds" in m for m in models)


@functools.cache
def _digest(path: str) -> str:  # every cell's run file backs seven records: hashed once
    return sha256(Path(path))


class Records:
    """The record constructors of one engine + machine, with its machine line and calibration file bound; every
    record id starts with `ids`, <FAMILY>.<machine>."""
    FAMILY = "realengine.load"

    def __init__(self, e: dict, prov: dict, folder: str = "precomputed/serve"):
        m = e["machine"]
        self.m, self.mid, self.prov, self.cal_file = m, m["id"], prov, e["calibration"]
        self.ids = f"{self.FAMILY}.{self.mid}"
        eid = e["engine"]["id"]
        self.data = [self.cal_file, f"{folder}/{eid}-{self.mid}-*.json",
                     f"{folder}/calibration/{eid}-{self.mid}-calibration-*.json"]
        self.machine = f"{m['cpu']} · {m['cores']} cores · llama-server -t {m['engine_threads']} · {m['os']}"
        first = e["cells"][0]
        self.first_run = first["runs"][0]["file"] if "runs" in first else first["file"]  # a whole-measurement file
        self.layout = LAYOUT if prices_layout(e) else ""

    def measured(self, rid, label, value, unit, fmt, file, runs, spread):
        self.prov[rid] = pv.measured(rid, label, value, unit, fmt, machine=self.machine, date=self.m["date"],
                                     runs=runs, spread=spread, file=file, file_sha256=_digest(file),
                                     script="scripts/realengine/harness/run.py", machine_id=self.mid,
                                     git_commit=self.m["git_commit"])

    def predicted(self, rid, label, value, unit, fmt, args, fit=PREDICTION):
        self.prov[rid] = pv.calibrated(rid, label, value, unit, fmt, fit=fit + self.layout, data=self.data,
                                       script="scripts/realengine/analyses/comparison.py", args=args)

    def setting(self, key, label, value, unit, fmt, assumption):
        rid = f"{self.ids}.{key}"
        self.prov[rid] = pv.assumed(rid, label, value, unit, fmt, assumption=assumption)


HELD_LABELS = WORDS["held_workloads"]
HELD_PREDICTION = FITS["held"]
HELD_AT_ONCE, HELD_PATTERN = HELD_PREDICTION + FITS["held_at_once"], HELD_PREDICTION + FITS["held_pattern"]
HELD_LAYOUT, HELD_NOISY = HELD_PREDICTION + FITS["held_layout"], HELD_PREDICTION + FITS["held_noisy"]
HW = WORDS["held"]


class HeldOutRecords(Records):
    """The held-out cells' records: data under precomputed/serve-heldout/, predictions by heldout_comparison.py."""
    FAMILY = "realengine.heldout"

    def __init__(self, e: dict, prov: dict):
        super().__init__(e, prov, e.get("folder", "precomputed/serve-heldout"))  # the session's folder

    def predicted(self, rid, label, value, unit, fmt, args, fit=HELD_PREDICTION, data=None):
        self.prov[rid] = pv.calibrated(rid, label, value, unit, fmt, fit=fit + self.layout, data=data or self.data,
                                       script="scripts/realengine/analyses/heldout_comparison.py", args=args)


def cell_name(c: dict) -> str:
    """A held-out cell's part of its record ids: c<concurrency> for a closed loop, r<rate> for a Poisson cell."""
    return f"c{c['concurrency']}" if c["concurrency"] else f"r{c['rate']:g}"


def held_where(c: dict) -> str:
    """Where a held-out cell's label says it is (its workload and its rate or in-flight cap)."""
    name = HELD_LABELS.get(c["workload"], c["workload"])
    if c["concurrency"]:
        return HW["where_loop"].format(name=name, concurrency=c["concurrency"])
    return HW["where_rate"].format(name=name, rate=f"{c['rate']:g}")


def layout_records(r: HeldOutRecords, layouts: dict, base: str, where: str, args: dict) -> None:
    """A closed loop's prediction from the two slot layouts (closed_loop.slot_layouts): mean TPOT and
    attainment, realengine.heldout.<...>.layout_{adjacent,apart}.<metric>."""
    for name, zh in HW["layout_names"].items():
        for key in ("mean_tpot_ms", "slo_attainment"):
            label, unit, fmt, scale = HELD_SHOWN[key]
            r.predicted(f"{base}.layout_{name}.{key}", HW["layout"].format(where=where, label=label, zh=zh),
                        layouts[name][key] * scale, unit, fmt, {**args, "metric": key, "slot_layout": name},
                        HELD_LAYOUT)
