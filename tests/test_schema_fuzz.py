"""Schema-driven fuzzing (issue 44): inputs generated from the kit's own JSON Schemas by hypothesis-jsonschema, and
the committed inputs mutated, each checked as a build checks it (scripts/audit/inputs.check_all, on a copy of the
inputs with the one file replaced; the records and the real-engine config by their own loaders).

  valid     an instance of the file's schema: the small schemas are generated whole; the anchor and the workloads
            (whose schemas are too large to generate whole in reasonable time) field by field: the committed file
            with one of its leaf values replaced by an instance of that field's schema. Each is accepted, or refused
            by a semantic check in one line that names the file (the property: never a traceback, never two lines);
  mutated   a committed file with a leaf given another type, a number pushed past its schema's bound, a key repeated
            in the text, an invalid UTF-8 byte or the text cut in half: always refused, in one line naming the file.
Nothing committed changes (sha256 of config/, precomputed/ and anchor-model.json before and after). `make test`
runs QUICK examples per schema and mutation kind, `make test-all` MANY; hypothesis prints the minimal failing file.
"""
import hashlib
import json
import shutil
from collections import Counter
from functools import cache
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, find, given, note, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from scripts.audit.inputs import check_all
from scripts.bench.records import read_record
from scripts.realengine.analyses.settings import comparison_settings
from scripts.record import schema
from scripts.record.inputs import InputError, bad_character
from scripts.serving.measures.results import load_result
from tests.conftest import ROOT
from tests.test_record_hostile_cases import BENCH, INPUTS

QUICK, MANY = 6, 150  # make test draws 6 per schema and test (12 took 35 s in all); make test-all 150
QUICK_PREFIX = 4  # the prefix schema's instances in make test (see the generated-instance test)
COUNTS = [QUICK, pytest.param(MANY, marks=pytest.mark.exhaustive)]
CHECKED = {schema.ANCHOR: "anchor-model.json", schema.WORKLOADS: "config/workloads.json",
           schema.GPUS: "config/gpus.json", schema.CITED: "config/cited.json",
           schema.TOKENIZERS: "config/tokenizers.json", schema.PASSAGES: "config/passages.json",
           schema.VENDOR: "config/vendor.json", schema.CLUSTER: "config/cluster.yaml",
           schema.COURSE: "config/course.json", schema.BENCH_RECORD: "precomputed/bench/" + BENCH[0].name,
           schema.VLLM_RESULT: "precomputed/serve/result.json", schema.REAL_ENGINE: "config/real_engine.json",
           schema.TECHNIQUES: "config/techniques.json", schema.PREFIX: "config/prefix.json"}
FIELD_BY_FIELD = (schema.ANCHOR, schema.WORKLOADS)
WHOLE = [s for s in CHECKED if s not in FIELD_BY_FIELD]
FUZZ = settings(deadline=None, database=None, derandomize=True, print_blob=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])


def committed_state() -> str:
    h = hashlib.sha256()
    for p in sorted([ROOT / "anchor-model.json", *(ROOT / "config").rglob("*"), *(ROOT / "precomputed").rglob("*")]):
        if p.is_file():
            h.update(p.relative_to(ROOT).as_posix().encode() + p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """The inputs check_all reads, copied once; each example rewrites one file and the test puts it back."""
    before = committed_state()
    base = tmp_path_factory.mktemp("fuzz")
    from scripts.audit.inputs import TEMPLATES
    for rel in [*INPUTS.values(), *TEMPLATES, "config/real_engine.json"]:
        (base / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, base / rel)
    (base / "precomputed" / "bench").mkdir(parents=True, exist_ok=True)
    shutil.copy2(BENCH[0], base / "precomputed" / "bench" / BENCH[0].name)
    (base / "precomputed" / "serve").mkdir(parents=True, exist_ok=True)
    yield base
    assert committed_state() == before, "a fuzzed input changed a committed file"
    out = ROOT / "test-artifacts"
    out.mkdir(exist_ok=True)
    table: dict = {}
    for (name, outcome), n in sorted(TALLY.items()):
        table.setdefault(name, {})[outcome] = n
    (out / f"fuzz-tally-{sum(TALLY.values())}.json").write_text(json.dumps(table, indent=1), encoding="utf-8")


@cache
def schema_doc(name: str) -> dict:
    return json.loads((schema.SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))


def check(root: Path, name: str, text: bytes) -> None:
    """Write `text` as the file of schema `name` and check it as a build does; put the original back after."""
    rel = CHECKED[name]
    path = root / rel
    original = path.read_bytes() if path.exists() else None
    path.write_bytes(text)
    try:
        if name == schema.BENCH_RECORD:
            read_record(path, rel)
        elif name == schema.VLLM_RESULT:
            load_result(path)
        elif name == schema.REAL_ENGINE:
            from scripts.record.inputs import read_json
            comparison_settings(read_json(path), rel)
        else:
            check_all(root)
    finally:
        if original is None:
            path.unlink()
        else:
            path.write_bytes(original)


def refused_in_one_line(exc: InputError, root: Path, name: str) -> str:
    message = str(exc)
    rel = CHECKED[name]
    assert "\n" not in message and len(message) < 600, message
    assert message.startswith((rel, (root / rel).as_posix(), "templates")) or rel in message, message
    return message


def encode(name: str, doc: object) -> bytes:
    if name == schema.CLUSTER:
        return yaml.safe_dump(doc, allow_unicode=True).encode("utf-8")
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


TALLY: Counter = Counter()  # (schema, outcome) -> examples; written to test-artifacts/fuzz-tally-<n>.json


def accepted_or_one_line(root: Path, name: str, doc: object) -> None:
    try:
        check(root, name, encode(name, doc))
    except InputError as exc:
        refused_in_one_line(exc, root, name)
        whole = schema.validator(name).is_valid(doc)  # a field's own schema does not say all the file's does
        TALLY[(name, "valid: refused by a semantic check" if whole else "field valid, file not: refused")] += 1
    else:
        TALLY[(name, "valid: accepted")] += 1


def printable(value):
    """The instance with every character the kit refuses in text (scripts/record/inputs.bad_character: controls,
    bidi overrides, invisibles, lone surrogates) replaced by "x", keys too: the generator draws any code point, and
    that one refusal (tested on its own in tests/test_record_hostile_cases.py) would otherwise answer nearly every
    example before the checks behind it are reached. Lengths stay as drawn."""
    if isinstance(value, str):
        return "".join("x" if bad_character(ch) else ch for ch in value)
    if isinstance(value, list):
        return [printable(v) for v in value]
    if isinstance(value, dict):
        return {printable(k): printable(v) for k, v in value.items()}
    return value


# --- field by field: the schema at a path of a committed file ---------------------------------------------------

def applicable(node: dict, defs: dict) -> list[dict]:
    """The schemas that apply to a value at `node`: itself, less any $ref, and what the $ref names."""
    out = [{k: v for k, v in node.items() if k != "$ref"}]
    if "$ref" in node:
        out += applicable(defs[node["$ref"].split("/")[-1]], defs)
    for part in node.get("allOf", []):
        out += applicable(part, defs)
    return out


def child(nodes: list[dict], key, defs: dict) -> list[dict]:
    found = []
    for s in nodes:
        if isinstance(key, int):
            if isinstance(s.get("items"), dict):
                found += applicable(s["items"], defs)
        elif key in s.get("properties", {}):
            found += applicable(s["properties"][key], defs)
        elif isinstance(s.get("additionalProperties"), dict):
            found += applicable(s["additionalProperties"], defs)
    return found


def leaves(name: str) -> list[tuple[tuple, dict]]:
    """(path, the schema of the value there) for every leaf value of the committed file that has one."""
    doc = json.loads((ROOT / CHECKED[name]).read_text(encoding="utf-8"))
    root_schema = schema_doc(name)
    defs = root_schema.get("$defs", {})
    out = []

    def walk(value, path, nodes):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, path + (k,), child(nodes, k, defs))
        elif isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
            for i, v in enumerate(value):
                walk(v, path + (i,), child(nodes, i, defs))
        elif nodes:
            sub = {"allOf": [{k: v for k, v in n.items() if k not in ("description", "title")} for n in nodes]}
            out.append((path, sub))

    walk(doc, (), applicable(root_schema, defs))
    return out


LEAVES = {name: leaves(name) for name in FIELD_BY_FIELD}


def replaced(name: str, path: tuple, value) -> dict:
    doc = json.loads((ROOT / CHECKED[name]).read_text(encoding="utf-8"))
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return doc


@cache
def leaf_strategy(name: str, index: int):
    return from_schema(LEAVES[name][index][1]).map(printable)


# --- the properties -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("name", WHOLE)
def test_a_generated_instance_is_accepted_or_refused_in_one_line(root, name, count):
    """make test draws QUICK_PREFIX instances of config/prefix.json's schema (hypothesis-jsonschema takes ~2 s to
    draw one: 12 of them took 23 s), QUICK of each other schema; make test-all MANY of each. The prefix file's
    mutations (test_a_mutated_file_is_refused_in_one_line[prefix-6]) stay at QUICK in make test."""
    count = QUICK_PREFIX if name == schema.PREFIX and count == QUICK else count

    @settings(FUZZ, max_examples=count)
    @given(from_schema(schema_doc(name)).map(printable))
    def run(doc):
        accepted_or_one_line(root, name, doc)
    run()


@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("name", FIELD_BY_FIELD)
def test_a_field_drawn_from_its_schema_is_accepted_or_refused_in_one_line(root, name, count):
    assert len(LEAVES[name]) >= 40, len(LEAVES[name])  # the walk reached the file's fields

    @settings(FUZZ, max_examples=count)
    @given(st.data())
    def run(data):
        index = data.draw(st.integers(0, len(LEAVES[name]) - 1), label="field")
        path = LEAVES[name][index][0]
        value = data.draw(leaf_strategy(name, index), label=".".join(map(str, path)))
        accepted_or_one_line(root, name, replaced(name, path, value))
    run()


def bounded_leaves(name: str) -> list[tuple[tuple, object]]:
    """Leaves with a numeric bound, and a value past it."""
    out = []
    for path, sub in (LEAVES[name] if name in LEAVES else leaves(name)):
        for s in sub["allOf"]:
            if s.get("type") in ("number", "integer"):
                if "maximum" in s:
                    out.append((path, s["maximum"] * 10 + 1 if s["maximum"] > 0 else s["maximum"] + 1))
                elif "minimum" in s:
                    out.append((path, s["minimum"] - 1))
                break
    return out


MUTABLE = [s for s in CHECKED if s not in (schema.VLLM_RESULT, schema.CLUSTER)]  # no committed vLLM result here;
# cluster.yaml is YAML (its repeated key and encoding cases are tests/test_record_reliability3.py's)


@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("name", MUTABLE)
def test_a_mutated_file_is_refused_in_one_line(root, name, count):
    committed = (ROOT / CHECKED[name]).read_bytes()
    kinds = ["type", "bound", "repeated key", "bad byte", "cut"]
    bounded = bounded_leaves(name)
    # (path, values of other types that the field's own schema refuses): a type it allows (a null href) is no mutation
    typed = [(path, wrong) for path, sub in (LEAVES[name] if name in LEAVES else leaves(name))
             if (wrong := [v for v in ([1, 2], {"x": 1}, None, "1", 1.5) if not jsonschema.Draft202012Validator(
                 {"$defs": schema_doc(name).get("$defs", {}), **sub}).is_valid(v)])]

    @settings(FUZZ, max_examples=count)
    @given(st.data())
    def run(data):
        kind = data.draw(st.sampled_from(kinds if bounded else [k for k in kinds if k != "bound"]), label="kind")
        if kind == "type":
            path, wrong = data.draw(st.sampled_from(typed), label="field")
            other = data.draw(st.sampled_from(wrong), label="value")
            text = encode(name, replaced(name, path, other))
            assume_refusal(root, name, text, f"{'.'.join(map(str, path))} as {other!r}")
        elif kind == "bound":
            path, past = data.draw(st.sampled_from(bounded), label="field")
            assume_refusal(root, name, encode(name, replaced(name, path, past)), f"{path} = {past}")
        elif kind == "repeated key":
            s = committed.decode("utf-8")
            at = data.draw(st.sampled_from([i for i in range(len(s)) if s.startswith('{"', i) or
                                            s.startswith('{\n', i)][:200]), label="object at")
            close = s.index(",", at) if "," in s[at:] else None
            if close is None:
                return
            first = s[at + 1:close].strip()  # '"key": value' of the object's first member
            if not first.startswith('"') or ":" not in first or "{" in first or "[" in first:
                return
            assume_refusal(root, name, (s[:close] + ", " + first + s[close:]).encode("utf-8"), f"{first} twice")
        elif kind == "bad byte":
            cut = data.draw(st.integers(1, len(committed) - 1), label="at")
            assume_refusal(root, name, committed[:cut] + b"\xff\xfe" + committed[cut:], f"bytes ff fe at {cut}")
        else:
            cut = data.draw(st.integers(1, len(committed) - 2), label="cut at")
            assume_refusal(root, name, committed[:cut], f"cut at {cut}")
    run()


def assume_refusal(root: Path, name: str, text: bytes, what: str) -> None:
    note(f"{CHECKED[name]}: {what}")
    with pytest.raises(InputError) as info:
        check(root, name, text)
    note(f"{CHECKED[name]}: {what}: {info.value}")
    refused_in_one_line(info.value, root, name)
    TALLY[(name, "mutated: refused")] += 1


BUILT_EXAMPLES = 2  # per schema: each is a whole build (about 90 s on 2 cores)


def with_the_anchors_gpus(doc: dict) -> dict:
    """A generated GPU table plus the committed entries of the GPUs the anchors run on (hardware.gpu), which a
    random id never matches (since anchors name their GPU by id, no generated table alone passed the check)."""
    from scripts.record.anchors import anchor_files

    committed = json.loads((ROOT / "config" / "gpus.json").read_text(encoding="utf-8"))["gpus"]
    used = {json.loads((ROOT / path).read_text(encoding="utf-8"))["hardware"]["gpu"]["value"]
            for path in anchor_files(ROOT).values()}
    gpus = {gid: g for gid, g in doc["gpus"].items() if gid not in used}
    keep = 16 - len(used)  # the schema's maxProperties
    return {**doc, "gpus": {**dict(list(gpus.items())[:keep]), **{gid: committed[gid] for gid in sorted(used)}}}


@pytest.mark.exhaustive
@pytest.mark.parametrize("name", [schema.WORKLOADS, schema.GPUS])
def test_accepted_instances_build_a_page_that_audits_clean(root, built_kit, tmp_path, name):
    """The first BUILT_EXAMPLES generated instances that the input check accepts (workloads field by field, GPU
    tables whole) are built end to end in a copy of the kit: each publishes a page that audits clean, or stops in
    one line naming the file."""
    import subprocess

    from tests.conftest import copy_of_built_kit, publishing_build

    if name in LEAVES:
        docs = st.integers(0, len(LEAVES[name]) - 1).flatmap(
            lambda i: leaf_strategy(name, i).map(lambda v, i=i: replaced(name, LEAVES[name][i][0], v)))
    else:
        docs = from_schema(schema_doc(name)).map(printable)
        if name == schema.GPUS:  # a generated table names no GPU an anchor runs on: those come from the committed one
            docs = docs.map(with_the_anchors_gpus)

    def passes_the_check(doc) -> bool:
        try:
            check(root, name, encode(name, doc))
        except InputError:
            return False
        return doc not in accepted

    accepted = []
    for _ in range(BUILT_EXAMPLES):  # hypothesis.find: the simplest instance the check accepts, then another
        accepted.append(find(docs, passes_the_check, settings=settings(FUZZ, max_examples=300)))
    assert len(accepted) == BUILT_EXAMPLES
    built, python = built_kit
    for k, doc in enumerate(accepted):
        work = copy_of_built_kit(built, tmp_path / f"build{k}")
        (work / CHECKED[name]).write_bytes(encode(name, doc))
        run = subprocess.run(publishing_build(python), cwd=work, capture_output=True, text=True, timeout=1800)
        errors = [ln for ln in run.stderr.splitlines() if ln.startswith("error:")]
        if run.returncode:
            assert len(errors) == 1 and CHECKED[name].split("/")[-1] in errors[0], run.stderr[-3000:]
            TALLY[(name, "accepted by the check: stopped in the build, one line")] += 1
            continue
        audit = subprocess.run([python, "-m", "scripts.audit", "--no-resimulate"], cwd=work, capture_output=True,
                               text=True, timeout=600)
        assert audit.returncode == 0, (json.dumps(doc)[:2000], audit.stdout[-3000:])
        TALLY[(name, "accepted by the check: built, audited clean")] += 1
