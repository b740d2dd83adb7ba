"""Experiment C's parts, in Node: the lab's engine takes the simulator's vLLM V1 decisions event by event (a fixed
step cost on both sides), the simulator's measured step model (templates/serving_sim/stepcost.js StepModel) prices
a step as scripts/realengine/analyses/stepmodel.py StepModel does, and the page's fit (templates/lab/calibration.js
fitStepModel) gives on recorded calibration rows what an independent numpy fit gives."""
import itertools
import json
import subprocess
from collections import defaultdict

import numpy as np
import pytest

from scripts.page.bundles import lab_page_script, sim_script
from scripts.page.lab import lab_model_script, lab_settings
from scripts.realengine.analyses.stepmodel import StepModel
from tests.conftest import ROOT

RECORDED = json.loads((ROOT / "tests" / "data" / "lab_calibration.json").read_text(encoding="utf-8"))
CALIBRATION = lab_settings(ROOT / "config" / "lab.json")["calibration"]
FIXED = {"decode_batch": [1, 4, 16], "decode_seconds": [0.001, 0.002, 0.006], "prompt_chunk_s": 0.0005,
         "prompt_token_s": 0.0001, "prompt_pair_s": 1e-7, "attention_s_per_token": 2e-6, "request_overhead_s": 0.0}


@pytest.fixture(scope="module")
def scripts(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lab-steps")
    files = {"L": lab_model_script(ROOT / "templates"), "S": sim_script(ROOT / "templates" / "serving_sim"),
             "P": lab_page_script(ROOT / "templates")}
    paths = {}
    for name, text in files.items():
        paths[name] = folder / f"{name}.js"
        paths[name].write_text(text, encoding="utf-8")
    return paths


def node(scripts: dict, body: str):
    head = "".join(f"const {k} = require({json.dumps(str(p))});\n" for k, p in scripts.items())
    out = subprocess.run(["node", "-e", head + body], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


# The lab's Engine on a stub model (no forward pass: the decisions alone), on a virtual clock that prices each step
# by its shape with the same StepModel the simulator is given; the twin's simulate(vllm-v1) on the same arrivals.
ENGINE_VS_TWIN = """
const sm = new S.StepModel(%(model)s), out = [];
function stub(n, budget) {
  return {slots: n, maxTokens: budget, maxContext: 4096, s: {vocab: 1},
    forward: (ids, sl, pos, wanted) => new Float32Array(wanted.length), argmax: () => 0};
}
for (const [rate, maxSeqs, budget, seed] of %(configs)s) {
  const next = L.mulberry32(seed), n = 60, arrivals = [], prompts = [], outputs = [];
  let t = 0;
  for (let i = 0; i < n; i++) {
    t += -Math.log((next() + 1) / 4294967297) / rate;
    arrivals.push(t); prompts.push(1 + next() %% 150); outputs.push(1 + next() %% 40);
  }
  const e = new L.Engine(stub(maxSeqs, budget), {maxNumSeqs: maxSeqs, maxBatchedTokens: budget, sim: S});
  const first = new Array(n).fill(null), finish = new Array(n).fill(null);
  let now = 0, sent = 0, done = 0, overBudget = 0, overSeqs = 0;
  while (done < n) {
    while (sent < n && arrivals[sent] <= now) {
      e.add({id: sent, prompt: new Array(prompts[sent]).fill(1), outputLen: outputs[sent]});
      sent++;
    }
    if (!e.busy()) { now = arrivals[sent]; continue; }
    const st = e.step();
    if (st.tokens > budget) overBudget++;
    if (e.running.length > maxSeqs) overSeqs++;
    now += sm.seconds(st.shape.decoders, st.shape.contextSum, st.shape.chunks);
    for (const [id, , fin] of st.events) {
      if (first[id] === null) first[id] = now;
      if (fin) { finish[id] = now; done++; }
    }
  }
  const model = {kv_bytes_per_token: 1, state_bytes_per_request: 0, weight_bytes_total: 0, runtime_reserve_bytes: 0,
    max_position_embeddings: 4096};
  const gpu = {name: "stub", hbm_bytes: 2 ** 50, hbm_bandwidth_bytes_per_s: 1, peak_bf16_flops: 1};
  const tr = S.simulate(model, gpu, {arrival_s: arrivals, prompt_tokens: prompts, output_tokens: outputs}, "vllm-v1",
    {max_batch: maxSeqs, max_num_batched_tokens: budget, paged: false, capacity_bytes: 2 ** 50, step_model: sm});
  out.push({first, finish, twinFirst: Array.from(tr.first_token_s), twinFinish: Array.from(tr.finish_s), overBudget,
    overSeqs, oneToken: outputs.filter((o) => o === 1).length});
}
console.log(JSON.stringify(out));
"""


def test_the_lab_engine_takes_the_twins_vllm_v1_decisions_event_by_event(scripts):
    """Four loads, from a light one to one that keeps 4 sequences and a 64-token budget full (prompts up to 150
    tokens are chunked, some requests ask one token): every request's first token and finish on the lab's engine
    equal the simulator's to 1e-12, the budget and the sequence cap hold at every step, every request completes."""
    configs = [[16, 16, 256, 1], [64, 16, 256, 2], [200, 4, 64, 3], [30, 8, 100, 4]]
    runs = node(scripts, ENGINE_VS_TWIN % {"model": json.dumps(FIXED), "configs": json.dumps(configs)})
    assert sum(r["oneToken"] for r in runs) > 0
    for run in runs:
        assert run["overBudget"] == 0 and run["overSeqs"] == 0
        for key, twin in (("first", "twinFirst"), ("finish", "twinFinish")):
            lab, sim = np.array(run[key], dtype=float), np.array(run[twin], dtype=float)
            assert np.all(np.isfinite(lab)), key
            np.testing.assert_allclose(lab, sim, rtol=1e-12, atol=0)


def test_the_page_step_model_prices_a_step_as_the_python_one(scripts):
    """Decode-only, prompt-only and mixed steps, batch sizes on, between and past the knots, with and without
    contexts: StepModel.seconds and decode_run agree with the Python to 1e-12."""
    rng = np.random.default_rng(5)
    shapes = []
    for _ in range(200):
        dec = int(rng.integers(0, 24))
        chunks = [[int(rng.integers(0, 100)), int(rng.integers(1, 200))] for _ in range(int(rng.integers(0, 3)))]
        if dec == 0 and not chunks:
            chunks = [[0, 16]]
        shapes.append([dec, float(dec * rng.integers(1, 200)), chunks])
    js = node(scripts, f"""const m = new S.StepModel({json.dumps(FIXED)});
const durs = new Float64Array(5), cums = new Float64Array(5);
const out = {json.dumps(shapes)}.map(([d, c, ch]) => m.seconds(d, c, ch));
m.decodeRun(7, 300, 5, 0, durs, cums);
console.log(JSON.stringify({{out, durs: Array.from(durs)}}));""")
    py = StepModel.from_dict(FIXED)
    expect = [py.seconds(d, c, [tuple(x) for x in ch]) for d, c, ch in shapes]
    np.testing.assert_allclose(js["out"], expect, rtol=1e-12)
    np.testing.assert_allclose(js["durs"], py.decode_run(7, 300 + 7 * np.arange(5)), rtol=1e-12)


def test_the_page_refuses_a_step_model_it_cannot_price(scripts):
    bad = [{**FIXED, "decode_batch": [2, 4]}, {**FIXED, "decode_seconds": [0.002, 0.001, 0.003]},
           {**FIXED, "prompt_token_s": -1}, {**FIXED, "prompt_context_s": 1e-6}]
    out = node(scripts, f"""console.log(JSON.stringify({json.dumps(bad)}.map((d) => {{
  try {{ new S.StepModel(d); return "accepted"; }} catch (e) {{ return e.message; }} }})));""")
    assert out[0].startswith("step model: D needs") and out[1].startswith("step model: D needs")
    assert "must be >= 0" in out[2] and "real engine's" in out[3]


def numpy_fit(rows: list[dict], c: dict, overhead: float) -> dict:
    """fitStepModel written again from its comment, in numpy (the reference the page's fit is held to)."""
    rows = [r for r in rows if not r.get("afterIdle")]
    groups = defaultdict(list)
    for r in rows:
        if not r["chunks"] and r["decoders"] > 0:
            groups[r["decoders"]].append((r["contextSum"], r["seconds"]))
    sxy = sxx = 0.0
    for m, g in groups.items():
        if m > c["attention_max_batch"]:
            continue
        x, y = np.array(g).T
        sxy += float(np.sum((x - x.mean()) * (y - y.mean())))
        sxx += float(np.sum((x - x.mean()) ** 2))
    attention = max(0.0, sxy / sxx) if sxx > 0 else 0.0
    knots, values = [], []
    for m in sorted(groups):
        if len(groups[m]) >= c["min_samples"]:
            knots.append(m)
            net = np.sort([s - attention * x for x, s in groups[m]])
            cut = len(net) // 4
            values.append(max(values[-1] if values else 0.0, float(np.mean(net[cut:len(net) - cut]))))
    model = StepModel(tuple(knots), tuple(values), 0, 0, 0, attention, overhead)
    prompts = [r for r in rows if r["chunks"]]
    X = np.array([[len(r["chunks"]), sum(n for _, n in r["chunks"]),
                   sum(n * s + n * n / 2 for s, n in r["chunks"])] for r in prompts])
    y = np.array([r["seconds"] - float(model.decode(r["decoders"])) - attention * r["contextSum"] for r in prompts])

    def nnls(X, y):
        best, beta = float(y @ y), np.zeros(3)
        for k in range(1, 4):
            for cols in itertools.combinations(range(3), k):
                sol = np.linalg.solve(X[:, cols].T @ X[:, cols], X[:, cols].T @ y)
                if np.all(sol >= 0):
                    b = np.zeros(3)
                    b[list(cols)] = sol
                    sse = float(np.sum((y - X @ b) ** 2))
                    if sse < best:
                        best, beta = sse, b
        return beta

    beta = nnls(X, y)
    res = y - X @ beta
    keep = np.abs(res - np.median(res)) <= c["outlier_mads"] * np.median(np.abs(res - np.median(res)))
    beta = nnls(X[keep], y[keep])
    return {"decode_batch": knots, "decode_seconds": values, "prompt_chunk_s": beta[0], "prompt_token_s": beta[1],
            "prompt_pair_s": beta[2], "attention_s_per_token": attention}


def test_the_fit_on_recorded_calibration_rows_is_numpys(scripts):
    """The rows a calibration recorded in Chromium (tests/data/lab_calibration.json, 390 px): the page's fit equals
    the numpy one to 1e-9, every batch size 1-16 but one has its knot, and a step the rows hold is priced close to
    what it took: the decode-only steps at each knot within 25 % of their median, the mixed steps' median error
    within 10 %."""
    rows = RECORDED["rows"]
    js = node(scripts, f"""const rows = {json.dumps(rows)};
console.log(JSON.stringify(P.fitStepModel(L, S, rows, {json.dumps(CALIBRATION)}, 0.0003)));""")
    ref = numpy_fit(rows, CALIBRATION, 0.0003)
    assert js["decode_batch"] == ref["decode_batch"] and len(ref["decode_batch"]) >= 15
    for key in ("decode_seconds", "prompt_chunk_s", "prompt_token_s", "prompt_pair_s", "attention_s_per_token"):
        np.testing.assert_allclose(js[key], ref[key], rtol=1e-9, atol=1e-15, err_msg=key)
    model = StepModel.from_dict({**js, "request_overhead_s": 0.0003})
    for m in js["decode_batch"]:
        took = np.median([r["seconds"] for r in rows if r["decoders"] == m and not r["chunks"]])
        assert abs(model.seconds(m, np.median([r["contextSum"] for r in rows if r["decoders"] == m
                                                and not r["chunks"]])) / took - 1) < 0.25, m
    mixed = [r for r in rows if r["chunks"]]
    errors = [model.seconds(r["decoders"], r["contextSum"], [tuple(c) for c in r["chunks"]]) / r["seconds"] - 1
              for r in mixed]
    assert len(mixed) > 30 and abs(np.median(errors)) < 0.10


def test_a_calibration_without_lone_decodes_is_refused_in_words(scripts):
    rows = [r for r in RECORDED["rows"] if r["decoders"] != 1 or r["chunks"]]
    out = node(scripts, f"""try {{ P.fitStepModel(L, S, {json.dumps(rows)}, {json.dumps(CALIBRATION)}, 0);
  console.log(JSON.stringify("accepted")); }} catch (e) {{ console.log(JSON.stringify(e.message)); }}""")
    assert out.startswith("校准里单独 decode 的步不够") and "batch 1" in out


def test_the_check_says_which_errors_lie_inside_the_measured_spread(scripts):
    """checkRows: the median of the measured runs, their range, and whether the prediction lies within it (null
    with one run); a guess kept as given, none as null."""
    def metrics(ttft50, ttft99, tpot, att):
        return {"p50_ttft_ms": ttft50, "p99_ttft_ms": ttft99, "mean_tpot_ms": tpot, "slo_attainment": att}
    out = node(scripts, f"""console.log(JSON.stringify([
  P.checkRows(L, {json.dumps(metrics(10, 50, 3, 1))}, [{json.dumps(metrics(9, 40, 2.9, 1))},
    {json.dumps(metrics(11, 45, 3.5, 0.9))}, {json.dumps(metrics(12, 48, 3.1, 0.95))}], {{ttft_p99: 55}}),
  P.checkRows(L, {json.dumps(metrics(10, 50, 3, 1))}, [{json.dumps(metrics(9, 40, 2.9, 1))}], {{}})]));""")
    many, one = out
    assert many["ttft_p50"] == {"guess": None, "predicted": 10, "measured": 11, "min": 9, "max": 12, "runs": 3,
                                "inside": True}
    assert many["ttft_p99"]["guess"] == 55 and many["ttft_p99"]["inside"] is False  # 50 over the runs' 40-48
    assert many["attainment"]["predicted"] == 100 and many["attainment"]["min"] == 90 and many["attainment"]["inside"]
    assert one["tpot_mean"]["inside"] is None and one["tpot_mean"]["measured"] == 2.9


def test_a_request_that_wakes_the_engine_pays_the_wake_factor_on_its_prompt_step(scripts):
    """wakeFactor is the median of the after-wait steps' time over their price (1 at least, 1 without any);
    predictRun delays by (factor - 1) x its prompt step's price exactly the requests that find the engine with
    nothing to do: the first and one long after it; one that comes while the first still decodes is not woken (its
    first token moves only by where the first's steps now fall)."""
    model = {k: v for k, v in FIXED.items()}
    price = StepModel.from_dict(FIXED).seconds(0, 0, [(0, 64)])
    rows = [{"decoders": 0, "contextSum": 0, "chunks": [[0, 64]], "seconds": price * f, "afterIdle": True}
            for f in (1.1, 1.3, 1.2)] + [{"decoders": 1, "contextSum": 10, "chunks": [], "seconds": 1.0}]
    plan = [{"at": 0.0, "prompt": 64, "output": 8}, {"at": 0.01, "prompt": 64, "output": 8},
            {"at": 5.0, "prompt": 64, "output": 8}]
    link = {"send_late_ms": 0, "inbound_ms": 0, "outbound_ms": 0}
    out = node(scripts, f"""const rows = {json.dumps(rows)}, plan = {json.dumps(plan)}, sm = {json.dumps(model)};
const f = P.wakeFactor(L, S, rows, sm), none = P.wakeFactor(L, S, [], sm);
const engine = {{max_num_seqs: 4, max_num_batched_tokens: 256}}, sim = {{kv_bytes_per_token: 1,
  state_bytes_per_request: 0, weight_bytes_total: 0, runtime_reserve_bytes: 0, max_position_embeddings: 4096}};
const woke = P.predictRun(S, sim, sm, {{...{json.dumps(link)}, wake_factor: f}}, plan, engine);
const plain = P.predictRun(S, sim, sm, {{...{json.dumps(link)}, wake_factor: 1}}, plan, engine);
console.log(JSON.stringify({{f, none, woke: woke.map((r) => r.times[0]), plain: plain.map((r) => r.times[0])}}));""")
    assert out["f"] == pytest.approx(1.2) and out["none"] == 1
    extra = [w - p for w, p in zip(out["woke"], out["plain"], strict=True)]
    assert extra[0] == pytest.approx(0.2 * price, rel=1e-9) and extra[2] == pytest.approx(0.2 * price, rel=1e-9)
    assert 0 <= extra[1] < 0.5 * extra[0]  # it came while the first decoded: only the first's delay reaches it


# Experiment E's prediction (templates/lab/waits.js predictWaits) against the simulator it stands for: the users
# prefilled in one step, the long prompt arriving as that step ends; whole prefill is the twin's orca rule (the prompt
# in one step beside the decodes), chunked prefill its sarathi rule (one chunk a step); P/D priced as a decode step
# of the users and the prompt alone (the twin's disagg path takes no measured step model).
WAITS_VS_TWIN = """
const W = {users: 8, user_prompt: 16, warm_steps: 1}, o = {prompt: 300, chunk: 128}, sm = %(model)s;
const gpu = {name: "this device", hbm_bytes: 2 ** 50, hbm_bandwidth_bytes_per_s: 1, peak_bf16_flops: 1};
const users = {arrival_s: Array(8).fill(0), prompt_tokens: Array(8).fill(16), output_tokens: Array(8).fill(40)};
const opts = {paged: false, capacity_bytes: 2 ** 50, step_model: sm, chunk_tokens: o.chunk}, sim = {};
for (const [mode, rule] of [["whole", "orca"], ["chunked", "sarathi"]]) {
  const arrive = Math.max(...S.simulate(%(sim_model)s, gpu, users, rule, opts).first_token_s);
  const r = S.simulate(%(sim_model)s, gpu, {arrival_s: [...users.arrival_s, arrive],
    prompt_tokens: [...users.prompt_tokens, o.prompt], output_tokens: [...users.output_tokens, 4]}, rule, opts);
  sim[mode] = r.first_token_s[8] - arrive;
}
console.log(JSON.stringify({sim, pred: P.predictWaits(S, {beside: sm, alone: sm}, W, o)}));
"""


def test_the_who_waits_prediction_is_the_simulators_rule_on_the_calibrated_step_model(scripts):
    sim_model = lab_settings(ROOT / "config" / "lab.json")["sim_model"]
    out = node(scripts, WAITS_VS_TWIN % {"model": json.dumps(FIXED), "sim_model": json.dumps(sim_model)})
    pred, py, ctx = out["pred"], StepModel.from_dict(FIXED), 8 * 17
    assert pred["whole"]["ttft"] == pytest.approx(out["sim"]["whole"], rel=1e-12)
    assert pred["chunked"]["ttft"] == pytest.approx(out["sim"]["chunked"], rel=1e-12)
    whole = py.seconds(8, ctx, [(0, 300)])
    chunks = [py.seconds(8, ctx + 8 * k, [(128 * k, min(128, 300 - 128 * k))]) for k in range(3)]
    assert pred["whole"] == pytest.approx({"longestGap": whole, "ttft": whole}, rel=1e-12)
    assert pred["chunked"] == pytest.approx({"longestGap": max(chunks), "ttft": sum(chunks)}, rel=1e-12)
    pd = {"longestGap": py.seconds(8, ctx, []), "ttft": py.seconds(0, 0, [(0, 300)])}
    assert pred["pd"] == pytest.approx(pd, rel=1e-12)
    assert pred["chunked"]["longestGap"] < pred["whole"]["longestGap"] < pred["chunked"]["ttft"]


def test_the_who_waits_step_model_recovers_the_prompt_terms_of_exact_probe_rows(scripts):
    """Probe rows priced exactly by known prompt terms, beside 8 decoders (the whole prompt, then 64-token chunks as
    the users' contexts grow) and alone: each refit gives its terms back over the calibration's D and attention, and
    keeps the calibration's decode side."""
    beside = {"prompt_chunk_s": 0.0004, "prompt_token_s": 4e-5, "prompt_pair_s": 3e-8}
    alone = {"prompt_chunk_s": 0.001, "prompt_token_s": 5e-5, "prompt_pair_s": 2e-8}
    shapes = [(0, 512)] + [(k * 64, 64) for k in range(8)]
    rows = [{"decoders": 8, "contextSum": 200 + 8 * k, "chunks": [[s, n]],
             "seconds": StepModel.from_dict({**FIXED, **beside}).seconds(8, 200 + 8 * k, [(s, n)])}
            for k, (s, n) in enumerate(shapes)]
    rows += [{"decoders": 0, "contextSum": 0, "chunks": [[s, n]],
              "seconds": StepModel.from_dict({**FIXED, **alone}).seconds(0, 0.0, [(s, n)])} for s, n in shapes]
    fit = node(scripts, f"console.log(JSON.stringify(P.waitsStepModel(S, {json.dumps(FIXED)}, {json.dumps(rows)})));")
    for name, truth in (("beside", beside), ("alone", alone)):
        assert {k: fit[name][k] for k in truth} == pytest.approx(truth, rel=1e-6), name
        decode_side = {k: v for k, v in FIXED.items() if not k.startswith("prompt_")}
        assert {k: fit[name][k] for k in decode_side} == decode_side
