"""The audit catches what it exists to catch: a planted unregistered number, a wrong derived value,
a tampered measured file, a cited record with no locator, and stale data."""
import json
import re
import shutil

import pytest

from scripts.audit.recompute import check_calibrated
from scripts.audit.report import audit, load_records, main
from scripts.audit.simulated import check_simulated
from tests.conftest import ROOT


@pytest.fixture
def copy(tmp_path):
    """A scratch copy of what the audit reads: the built site, precomputed/ and the inputs it hashes."""
    if not (ROOT / "site" / "index.html").exists():
        pytest.fail("site/index.html is missing: run `make site` first")
    manifest = json.loads((ROOT / "precomputed" / "MANIFEST.json").read_text(encoding="utf-8"))
    for group in ("inputs", "scripts", "outputs"):
        for name in manifest[group]:
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "site", tmp_path / "site")
    shutil.copytree(ROOT / "precomputed", tmp_path / "precomputed", dirs_exist_ok=True)
    for name in ("config/model_words.json", "config/tokenizers.json"):  # the words check's data (audit/words.py)
        shutil.copy2(ROOT / name, tmp_path / name)
    return tmp_path


def run(root, resimulate=False):
    """Simulated numbers are re-run only where a test is about them (the whole sweep takes ~25 s)."""
    return audit(root / "site", root / "precomputed", root, resimulate)


def failures(results):
    return {k: v for k, v in results.items() if not k.startswith("_") and v}


def test_the_committed_build_passes(copy):
    assert failures(run(copy)) == {}


def test_planted_unregistered_number_fails_with_its_location(copy):
    index = copy / "site" / "index.html"
    html = index.read_text(encoding="utf-8")
    # planted in a table header: a table is not prose, so the page's counted reading time stays what it was
    assert html.count("<th>问题</th>") == 1
    index.write_text(html.replace("<th>问题</th>", "<th>问题(快了 42 倍)</th>", 1), encoding="utf-8")
    problems = failures(run(copy))
    assert list(problems) == ["numbers"]
    assert any("'42'" in p and "line" in p for p in problems["numbers"])


def test_the_lab_page_is_audited_as_the_lesson_is(copy):
    """Issue 39: both pages' numbers are checked, and a page whose prose grew after the build no longer matches its
    counted reading time (the header's minutes are a derived record recomputed from the page)."""
    lab = copy / "site" / "lab.html"
    html = lab.read_text(encoding="utf-8")
    lab.write_text(html.replace("<h1>", "<h1>再快 17 倍、多读几行字:", 1), encoding="utf-8")
    problems = failures(run(copy))
    assert any(p.startswith("lab.html") and "'17'" in p for p in problems["numbers"])
    assert any(p.startswith("page.lab.prose_chars: recomputes to") for p in problems["derived"])
    assert not any(p.startswith("page.lesson") for p in problems["derived"])


def test_number_that_disagrees_with_its_record_fails(copy):
    index = copy / "site" / "index.html"
    html = index.read_text(encoding="utf-8")
    marker = 'data-prov="frontier.c4096.b58.throughput_tok_s"'
    start = html.index(marker)
    html = html[:start] + html[start:].replace(">2,304<", ">2,305<", 1)
    index.write_text(html, encoding="utf-8")
    assert any("2,305" in p for p in failures(run(copy))["numbers"])


def test_planted_wrong_derived_value_fails(copy):
    path = copy / "precomputed" / "precomputed.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["provenance"]["slo.20ms.max_batch"]["display"] = "28"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    problems = failures(run(copy))
    assert any(p.startswith("slo.20ms.max_batch: recomputes to 27 but shows 28") for p in problems["derived"])
    assert any("precomputed/precomputed.json: stale" in p for p in problems["manifest"])


@pytest.mark.parametrize("edited", ["anchor-model.json", "config/gpus.json"])
def test_changed_anchor_input_is_caught(copy, edited):
    """The anchor moved to another GPU, or its GPU's bandwidth edited where it lives (config/gpus.json): the
    page's numbers recompute to others and the manifest names the edited file."""
    path = copy / edited
    doc = json.loads(path.read_text(encoding="utf-8"))
    if edited == "anchor-model.json":
        doc["hardware"]["gpu"]["value"] = "h200_sxm"  # 4.8 TB/s
    else:
        doc["gpus"]["h100_sxm"]["hbm_bandwidth_bytes_per_s"]["value"] = 4.8e12
    path.write_text(json.dumps(doc), encoding="utf-8")
    problems = failures(run(copy))
    assert any("frontier.c4096.b58.step_ms: recomputes to" in p for p in problems["derived"])
    assert any(p.startswith(f"{edited}: stale") for p in problems["manifest"])


def test_tampered_measured_file_fails(copy):
    bench = sorted((copy / "precomputed" / "bench").glob("*.json"))
    if not bench:
        pytest.skip("no benchmark record committed")
    text = bench[0].read_text(encoding="utf-8")
    tampered = re.sub(r'"runs": (\d+)', lambda m: f'"runs": {int(m.group(1)) - 1}', text, count=1)
    assert tampered != text
    bench[0].write_text(tampered, encoding="utf-8")
    problems = failures(run(copy))
    assert any("does not match the hash" in p for p in problems["measured"])


def test_cited_record_without_locator_fails(copy):
    path = copy / "precomputed" / "precomputed.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["provenance"]["cited.distserve.more_requests_x"]["locator"] = ""
    data["provenance"]["cited.sarathi.yi34b_x"].pop("self_reported")
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    problems = failures(run(copy))["cited"]
    assert "cited.distserve.more_requests_x: cited record names no locator" in problems
    assert any(p.startswith("cited.sarathi.yi34b_x: cited record does not say") for p in problems)


def test_unknown_provenance_id_on_the_page_fails(copy):
    index = copy / "site" / "index.html"
    html = index.read_text(encoding="utf-8")
    index.write_text(html.replace('data-prov="mem.cap.c4096"', 'data-prov="mem.cap.nowhere"', 1), encoding="utf-8")
    assert any("'mem.cap.nowhere' has no provenance record" in p for p in failures(run(copy))["numbers"])


def test_command_exits_non_zero_and_prints_a_table(copy, capsys):
    (copy / "config" / "cited.json").write_text("{}", encoding="utf-8")
    code = main(["--site", str(copy / "site"), "--data", str(copy / "precomputed"), "--root", str(copy),
                 "--no-resimulate"])  # `make test` runs the full audit, re-simulation included, once
    out = capsys.readouterr().out
    assert code == 1
    assert "manifest   FAIL" in out and "config/cited.json: stale" in out


def keep_simulated(root, keep: int, keep_prefix: int = 2) -> dict:
    """Trim the copy's serving.json to its first `keep` simulated records, and prefix.json to its first
    `keep_prefix` (so re-simulating them is quick: one prefix run, not the sixteen behind every record)."""
    path = root / "precomputed" / "serving.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    sims = [rid for rid, r in doc["provenance"].items()
            if r["kind"] == "simulated" and r["metric"] != "distserve_goodput"]
    doc["provenance"] = {rid: r for rid, r in doc["provenance"].items() if rid in sims[:keep]}
    path.write_text(json.dumps(doc), encoding="utf-8")
    prefix_path = root / "precomputed" / "prefix.json"
    prefix = json.loads(prefix_path.read_text(encoding="utf-8"))
    runs = [rid for rid, r in prefix["provenance"].items() if r["kind"] == "simulated"
            and str(r.get("workload", "")).startswith("prefix:")]
    prefix["provenance"] = {rid: prefix["provenance"][rid] for rid in runs[:keep_prefix]}
    prefix_path.write_text(json.dumps(prefix), encoding="utf-8")
    return doc


def resimulated(root) -> list[str]:
    """The audit's simulated check, re-running each kept record's simulation (the check `make audit` runs; the full
    audit's other checks, and its re-run of the real-engine predictions, are the other tests' and
    test_the_full_audit_re_simulates_every_record's)."""
    return check_simulated(load_records(root / "precomputed", root / "site"), root, resimulate=True)


def test_simulated_numbers_are_re_run_and_hold(copy):
    keep_simulated(copy, 10)
    assert resimulated(copy) == []


@pytest.mark.exhaustive
def test_the_full_audit_re_simulates_every_record(copy):
    """Every simulated record, the page's readouts and the goodput searches included (about 35 s: make test-all;
    make test's audit skips the re-simulation, and the tests above re-run a sample of cell records)."""
    assert failures(run(copy, resimulate=True)) == {}


def test_edited_simulated_number_fails(copy):
    doc = keep_simulated(copy, 10)
    rid = next(iter(doc["provenance"]))
    doc["provenance"][rid]["display"] = "99,999"
    (copy / "precomputed" / "serving.json").write_text(json.dumps(doc), encoding="utf-8")
    problems = resimulated(copy)
    assert any(rid in p and "re-simulates to" in p for p in problems)


def test_an_edited_prediction_of_the_real_engine_is_recomputed_and_fails(copy):
    """check_calibrated fits the step models again and re-simulates the runs. Here on the prefix-reuse family alone
    (its folder is the smallest); every family: test_the_full_audit_re_simulates_every_record."""
    records = {rid: r for rid, r in load_records(copy / "precomputed").items()
               if r["kind"] == "calibrated" and rid.startswith("realengine.prefix.")}
    assert records and check_calibrated(records, copy) == []
    rid = next(iter(records))
    records[rid] = {**records[rid], "display": "99,999"}
    assert any(p.startswith(f"{rid}: recomputes to") for p in check_calibrated(records, copy))


def test_simulated_record_without_its_seed_fails(copy):
    doc = keep_simulated(copy, 3)
    rid = next(iter(doc["provenance"]))
    del doc["provenance"][rid]["seed"]
    (copy / "precomputed" / "serving.json").write_text(json.dumps(doc), encoding="utf-8")
    assert any(rid in p and "seed" in p for p in failures(run(copy))["simulated"])


def test_hand_edited_constant_in_the_embedded_json_fails(copy):
    index = copy / "site" / "lesson-data.js"
    html = index.read_text(encoding="utf-8")
    before = '"hbm_bandwidth_bytes_per_s":3350000000000'
    assert html.count(before) >= 1
    index.write_text(html.replace(before, '"hbm_bandwidth_bytes_per_s":1000000000000', 1), encoding="utf-8")
    problems = failures(run(copy))
    assert list(problems) == ["embedded"] and "differs from precomputed/" in problems["embedded"][0]


def test_a_claim_made_false_by_an_edited_record_fails(copy):
    path = copy / "precomputed" / "serving.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["provenance"]["load.tight_tpot.goodput_rate.disagg"].update(value=0.1, display="0.10")
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    problems = failures(run(copy))
    assert any(p.startswith("claim load.pd_wins_tight_tpot") for p in problems["claims"])


def test_a_real_engine_goal_moved_without_a_rebuild_fails_its_claim(copy):
    """The validation page words "达到/没达到 … 的目标" by claims in measured_records.json (issue 60): a goal record
    edited in place (the page still says the error meets it) is a failed claim, naming the claim and the numbers."""
    path = copy / "precomputed" / "measured_records.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    said = next(c for c in doc["claims"] if c["id"].endswith(".held.meets.central") and c["holds"])
    goal = said["all"][0][2]
    figure = doc["provenance"][said["all"][0][0]]["value"]
    doc["provenance"][goal].update(value=figure / 2, display=f"{figure / 2:.0f}")
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    problems = failures(run(copy))["claims"]
    assert any(p.startswith(f"claim {said['id']}") and "is false" in p and goal in p for p in problems)


def test_a_real_engine_claim_recorded_the_other_way_fails(copy):
    """A claim the page words as not holding (an error over its goal) fails the audit once it holds."""
    path = copy / "precomputed" / "measured_records.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    unmet = next(c for c in doc["claims"] if not c["holds"])
    doc["provenance"][unmet["all"][0][2]].update(value=1e6)  # the goal, now far above the error
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    assert any(p.startswith(f"claim {unmet['id']}") and "now holds" in p for p in failures(run(copy))["claims"])


@pytest.mark.parametrize("a, op, b, holds", [
    (7 / 120 - 1 / 120, "<=", 0.05, True),  # 0.05000000000000001: a ratio of counts that meets its bound
    (0.05 + 1e-6, "<=", 0.05, False), (5.000000000000001, "<=", 5.0, True), (5.0001, "<=", 5.0, False),
    (94.99999999999999, ">=", 95.0, True), (94.9, ">=", 95.0, False), (5.0, "<", 5.0, False),
    (5.000000000000001, ">", 5.0, True), (3.0, "!=", 3.0, False)])
def test_a_claims_at_most_and_at_least_hold_up_to_rounding_only(a, op, b, holds):
    from scripts.record.claims import compare

    assert compare(a, op, b) is holds


def test_hand_edited_simulator_fails(copy):
    path = copy / "site" / "serving-sim.js"
    path.write_text(path.read_text(encoding="utf-8").replace("const NO_CAP = 2 ** 62;", "const NO_CAP = 2 ** 61;"),
                    encoding="utf-8")
    assert any("serving-sim.js" in p for p in failures(run(copy))["embedded"])


def test_hand_edited_request_in_serving_data_fails(copy):
    path = copy / "site" / "serving-data.js"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"prompt_tokens":[', '"prompt_tokens":[1', 1), encoding="utf-8")  # a request's prompt
    assert any("serving-data.js" in p for p in failures(run(copy))["embedded"])
