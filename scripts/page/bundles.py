"""The pages' script files: the data scripts (lesson-data.js, serving-data.js, prefix-data.js, lab-data.js: one
`window.C13_*=` assignment per line, JSON that cannot close its <script> early, which the audit reads back) and the
JS bundles joined from templates/ (serving-sim.js from serving_sim/, lesson.js from lesson/, lab.js from lab/; a
wrapper names its parts with `// @include`, and a part missing or left unnamed is refused)."""

import base64
import hashlib
import json
import re
from pathlib import Path

from markupsafe import Markup

from scripts.record.inputs import InputError


def csp_hash(script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode() + "'"


def json_for_script(obj: object) -> Markup:
    """JSON that cannot close its <script> element early."""
    text = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return Markup(text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026"))


RUNTIME, SCRIPT, DATA_SCRIPT, SERVING_SCRIPT = "vega.min.js", "lesson.js", "lesson-data.js", "serving-data.js"


SIM_SCRIPT, SIM_SOURCE = "serving-sim.js", "serving_sim"  # the browser's twin of scripts/serving/engine/ (a folder)


LAB_PARTS = "lab"  # templates/lab/: lab.js's parts (the page's experiments), the model in lab/model/


LESSON_PARTS = "lesson"  # templates/lesson/: lesson.js's sections, joined into it (lesson_script)


INCLUDE = re.compile(r"^  // @include ((?:[a-z_]+\.js ?)+)$", re.M)  # a wrapper names its parts, in order


DATA_PREFIX, SPECS_PREFIX, PAGE_PROV_PREFIX = "window.C13_DATA=", "window.C13_SPECS=", "window.C13_PAGE_PROV="


SERVING_PREFIX, SERVING_PROV_PREFIX = "window.C13_SERVING=", "window.C13_SERVING_PROV="


PREFIX_SCRIPT, PREFIX_DATA_PREFIX = "prefix-data.js", "window.C13_PREFIX="  # the lab's prefix-cache experiment


LAB_SCRIPT, LAB_PROV_PREFIX = "lab-data.js", "window.C13_LAB_PROV="  # measured records only the lab page shows


LAB_MODEL_SCRIPT, LAB_PAGE_SCRIPT = "lab-model.js", "lab.js"  # the lab's in-browser model and its experiments


def data_script(data: dict, specs: dict, page_prov: dict | None = None) -> str:
    """lesson-data.js: the page's data and chart specs, one assignment per line (the audit reads them back), and
    the records counted from the pages themselves (their reading time: scripts/page/reading.py)."""
    out = f"{DATA_PREFIX}{json_for_script(data)};\n{SPECS_PREFIX}{json_for_script(specs)};\n"
    return out + (f"{PAGE_PROV_PREFIX}{json_for_script(page_prov)};\n" if page_prov is not None else "")


def read_page_records(text: str) -> dict:
    """The page-counted records of a lesson-data.js ({} when it has none)."""
    found, _ = read_data_script(text, (PAGE_PROV_PREFIX, SPECS_PREFIX))
    return json.loads(found) if found else {}


def serving_script(experiment: dict, records: dict) -> str:
    """serving-data.js: the under-load experiment's requests (loaded when its section comes near the screen) and
    the records of the serving numbers the page shows."""
    return f"{SERVING_PREFIX}{json_for_script(experiment)};\n{SERVING_PROV_PREFIX}{json_for_script(records)};\n"


def prefix_script(prefix: dict) -> str:
    """prefix-data.js: the lab's cache-off/on experiment (prefix.json `page`: the workloads' draws and the engine's
    inputs; the lab loads it with serving-sim.js when the section comes near the screen)."""
    return f"{PREFIX_DATA_PREFIX}{json_for_script(prefix['page'])};\n"


REAL_ENGINE_FAMILIES = ("load", "prefix", "heldout")  # measured_records.json's views, the templates' `realengine`


def measured_records(bench: dict | None, real: dict | None) -> dict | None:
    """The measured data the pages read: the KV-cache benchmark's medians (bench_medians.json, the templates'
    `bench`) with the real engine's records (measured_records.json, rule measured_records) beside them under
    `realengine` (its families' views, REAL_ENGINE_FAMILIES) and `claims`; one provenance, the benchmark's first."""
    if bench is None and real is None:
        return None
    b, r = bench or {}, real or {}
    return {**b, "realengine": {k: r.get(k) for k in REAL_ENGINE_FAMILIES}, "claims": r.get("claims", []),
            "provenance": {**b.get("provenance", {}), **r.get("provenance", {})}}


def lab_only_ids(bench: dict | None, lesson_html: str) -> frozenset[str]:
    """The measured records (bench_medians.json and measured_records.json: the KV-cache benchmark and the real engine)
    that the lesson page does not show: they travel in lab-data.js, which only the lab page loads, so the lesson
    page does not carry the lab's tables (page weight: scripts/bench/page_latency.py)."""
    from scripts.page.scan import page_numbers

    shown = {rid for rid, _, _ in page_numbers(lesson_html)}
    return frozenset(rid for rid in (bench or {}).get("provenance", {}) if rid not in shown)


def lab_script(bench: dict | None, lab_only: frozenset[str]) -> str:
    """lab-data.js: the records of lab_only_ids, for the lab page's pop-overs."""
    records = {rid: rec for rid, rec in (bench or {}).get("provenance", {}).items() if rid in lab_only}
    return f"{LAB_PROV_PREFIX}{json_for_script(records)};\n"


def read_data_script(text: str, prefixes: tuple[str, str] = (DATA_PREFIX, SPECS_PREFIX)) -> tuple[str, str]:
    """The two JSON lines of a data script (lesson-data.js by default), empty strings when one is missing."""
    found = {p: "" for p in prefixes}
    for line in text.splitlines():
        for prefix in found:
            if line.startswith(prefix) and line.endswith(";"):
                found[prefix] = line[len(prefix):-1]
    return found[prefixes[0]], found[prefixes[1]]


def serving_records_on_page(html: str | list[str], serving: dict) -> dict:
    """The serving.json records the pages show (its other thousand stay in serving.json and provenance.html)."""
    from scripts.page.scan import page_numbers

    shown = {rid for page in ([html] if isinstance(html, str) else html) for rid, _, _ in page_numbers(page)}
    return {rid: rec for rid, rec in serving["provenance"].items() if rid in shown}


def sim_script(folder: Path) -> str:
    """site/serving-sim.js: the twin's wrapper (twin.js) with its parts joined in (joined_script), so that the page
    (and its worker, from the function's source) gets one function."""
    return joined_script(folder / "twin.js", folder)


def lesson_script(templates: Path) -> str:
    """site/lesson.js: templates/lesson.js (the page's function and its loader) with its sections joined in from
    templates/lesson/ (roofline, techniques, timeline, ..., charts: joined_script)."""
    return joined_script(templates / SCRIPT, templates / LESSON_PARTS)


def lab_page_script(templates: Path) -> str:
    """site/lab.js: the lab's wrapper (templates/lab/lab.js) with its experiments' parts joined in (joined_script)."""
    return joined_script(templates / LAB_PARTS / LAB_PAGE_SCRIPT, templates / LAB_PARTS)


def joined_script(wrapper_path: Path, folder: Path) -> str:
    """`wrapper_path` with its one `// @include a.js b.js ...` line replaced by those files of `folder`, in that
    order. A part named but missing, or a file of the folder that is not named, is an error naming both."""
    wrapper = wrapper_path.read_text(encoding="utf-8")
    found = INCLUDE.findall(wrapper)
    if len(found) != 1:
        raise InputError(f"{wrapper_path.as_posix()}: needs exactly one '  // @include a.js b.js ...' line")
    parts = found[0].split()
    present = sorted(p.name for p in folder.glob("*.js") if p != wrapper_path)
    if sorted(parts) != present:
        raise InputError(f"{wrapper_path.as_posix()}: its @include names {', '.join(parts)} but "
                         f"{folder.as_posix()} holds {', '.join(present)}")
    body = "\n".join((folder / p).read_text(encoding="utf-8").rstrip("\n") for p in parts)
    return INCLUDE.sub(lambda _: body, wrapper)
