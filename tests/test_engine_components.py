"""The serving engine as components (scripts/serving/engine/): the registries hold one class per engine rule, KV
policy and step-cost model; a rule added as a class (llama.cpp) runs through the same loop; no function of the
engine is over 80 lines; the browser's twin (templates/serving_sim/) has a file of the same name per module and the
same registered names; the twin's build joins its parts and refuses a part named but missing or left unnamed."""
import ast
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from scripts.common.names import PRESETS
from scripts.page.bundles import sim_script
from scripts.record.inputs import InputError
from scripts.serving import engine
from scripts.serving.engine import kv, registry, schedulers
from scripts.serving.workloads.workload import generate
from tests.conftest import ROOT

PACKAGE = ROOT / "scripts" / "serving" / "engine"
TWIN = ROOT / "templates" / "serving_sim"


@pytest.fixture(scope="module")
def inputs():
    from scripts.serving.workloads import config
    a, workloads, _ = config.sweep_inputs(ROOT / "anchor-model.json", ROOT / "config" / "workloads.json")
    return a, workloads


def test_every_preset_is_a_registered_class_with_its_source_in_its_docstring():
    table = engine.REGISTRIES["scheduler"]
    for preset in PRESETS:
        cls = table["disagg.decode" if preset == "disagg" else preset]
        assert cls.name == preset or preset == "disagg"
        assert cls.__doc__ and len(cls.__doc__) > 80, preset  # says which engine's rule, from which source
    assert set(engine.REGISTRIES["kv"]) == {"reserved", "paged", "paged+apc", "reserved+slots"}
    assert set(engine.REGISTRIES["step_cost"]) == {"roofline", "derated", "measured"}
    with pytest.raises(ValueError, match="registered twice"):
        registry.register("scheduler", "orca")(type("Again", (), {}))
    with pytest.raises(ValueError, match="scheduler must be one of orca, sarathi"):
        registry.lookup("scheduler", "tgi")


def test_the_llama_cpp_rule_is_vllm_v1s_budget_with_every_context_reserved(inputs):
    """The seam: llama.cpp's scheduler is a class of its own, and on the same requests it gives what vLLM V1's rule
    gives with reserved (not paged) memory and the same -b / -np; vLLM V1 with its paged blocks and a small pool
    preempts where llama.cpp's reserved slots queue instead."""
    a, workloads = inputs
    reqs = generate(workloads["chat"], 300, 6.0, 3)
    for tokens, slots in ((512, 8), (2048, 64)):
        ours = engine.simulate(a, reqs, "llama.cpp", max_num_batched_tokens=tokens, max_batch=slots)
        v1 = engine.simulate(a, reqs, "vllm-v1", max_num_batched_tokens=tokens, max_batch=slots, paged=False)
        assert np.array_equal(ours.finish_s, v1.finish_s) and np.array_equal(ours.first_token_s, v1.first_token_s)
        assert ours.preemptions.sum() == 0
    small = 0.08 * kv.Memory().pool_bytes(a)
    paged = engine.simulate(a, reqs, "vllm-v1", max_num_batched_tokens=2048, max_batch=64, capacity_bytes=small)
    assert paged.preemptions.sum() > 0
    with pytest.raises(ValueError, match="llama.cpp: give the server's -np"):
        engine.simulate(a, reqs, "llama.cpp", max_batch=8)
    with pytest.raises(ValueError, match=r"llama.cpp: max_num_seqs \(64\) must not exceed"):
        engine.simulate(a, reqs, "llama.cpp", max_num_batched_tokens=32, max_batch=64)


def test_a_scheduler_decides_the_prompt_chunks_of_an_iteration():
    prefilling, pf_len, done = [0, 1, 2], [300, 200, 900], [100, 0, 0]
    assert schedulers.Orca().prefill_chunks(prefilling, pf_len, done, 5) == [(0, 100, 200), (1, 0, 200), (2, 0, 900)]
    assert schedulers.Sarathi(chunk_tokens=256).prefill_chunks(prefilling, pf_len, done, 5) == [(0, 100, 200),
                                                                                              (1, 0, 56)]
    assert schedulers.VllmV1(64, 300).prefill_chunks(prefilling, pf_len, done, 60) == [(0, 100, 200), (1, 0, 40)]
    assert schedulers.VllmV0(256, 450).prefill_chunks(prefilling, pf_len, done, 60) == [(0, 100, 200), (1, 0, 200)]
    assert schedulers.VllmV0(256, 100).prefill_chunks(prefilling, pf_len, done, 0) == [(0, 100, 200)]  # first goes
    assert not schedulers.VllmV0.decodes_with_prefill and schedulers.VllmV1.decodes_with_prefill
    assert schedulers.Scheduler.victim([4, 7, 2], [0, 0, 9, 0, 3, 0, 0, 5]) == 2  # the latest admitted


def _functions(path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.name, node.end_lineno - node.lineno + 1


def test_no_function_of_the_engine_is_over_80_lines():
    sizes = {f"{p.name}:{name}": n for p in sorted(PACKAGE.glob("*.py")) for name, n in _functions(p)}
    assert sizes and max(sizes.values()) <= 80, {k: v for k, v in sizes.items() if v > 80}


def test_the_twin_has_a_file_per_module_with_the_same_registered_names(tmp_path):
    # result: the Trace, in simulation.js; contracts: declarations only (the twin keeps the same method names)
    python = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "result", "contracts"}
    # the wrapper; the page's cell summary; the twins of two modules outside the engine (scripts/serving/), which the
    # lab's prefix-cache experiment runs in the browser
    outside = {"workloads/workload", "experiments/prefix_runs"}
    js = {p.stem for p in TWIN.glob("*.js")} - {"twin", "summary", "numpy"} - {Path(o).name for o in outside}
    assert python == js  # numpy.js: numpy's helpers, in the twin and the lab model's bundle
    assert all((PACKAGE.parent / f"{name}.py").is_file() and (TWIN / f"{Path(name).name}.js").is_file()
               for name in outside)
    script = tmp_path / "sim.js"
    script.write_text(sim_script(TWIN), encoding="utf-8")
    out = subprocess.run(["node", "-e", f"const S = require({json.dumps(str(script))}); console.log(JSON.stringify("
                          "Object.fromEntries(Object.entries(S.REGISTRIES).map(([k, v]) => [k, Object.keys(v)]))))"],
                         capture_output=True, text=True, timeout=60, check=True)
    names = json.loads(out.stdout)
    assert names["scheduler"] == list(engine.REGISTRIES["scheduler"])
    assert names["kv"] == list(engine.REGISTRIES["kv"])
    assert names["step_cost"] == list(engine.REGISTRIES["step_cost"])  # measured: the lab's device (stepcost.js)
    assert (ROOT / "site" / "serving-sim.js").read_text(encoding="utf-8") == sim_script(TWIN)


def test_the_twins_build_refuses_a_part_missing_or_unnamed(tmp_path):
    folder = tmp_path / "serving_sim"
    folder.mkdir()
    for p in TWIN.glob("*.js"):
        (folder / p.name).write_bytes(p.read_bytes())
    (folder / "extra.js").write_text("  const EXTRA = 1;\n", encoding="utf-8")
    with pytest.raises(InputError, match="holds .*extra.js"):
        sim_script(folder)
    (folder / "extra.js").unlink()
    (folder / "kv.js").unlink()
    with pytest.raises(InputError, match="@include names .*kv.js"):
        sim_script(folder)


def test_numpys_percentile_has_one_home_in_each_language():
    """The page's percentile (numpy's 'linear') is written once, templates/serving_sim/numpy.js, which both the twin
    and the lab model's bundle carry; no other template defines one."""
    import re

    from scripts.page.lab import lab_model_script

    # a definition, not a delegation such as lesson/load.js's `(sorted, q) => window.C13Sim.percentile(sorted, q)`
    defining = re.compile(r"function\s+\w*[pP]ercentile\s*\("
                          r"|(?:const|let)\s+\w*[pP]ercentile\s*=\s*\((?!.*\.percentile\()")
    homes = [p.relative_to(ROOT).as_posix() for p in (ROOT / "templates").rglob("*.js")
             if defining.search(p.read_text(encoding="utf-8"))]
    assert homes == ["templates/serving_sim/numpy.js"]
    helpers = (TWIN / "numpy.js").read_text(encoding="utf-8").rstrip("\n")
    assert helpers in lab_model_script(ROOT / "templates") and helpers in sim_script(TWIN)
