"""Experiment E (who waits) on the lab's engine in Node, its worker code as the page builds it
(templates/lab/waits.js): the three set-ups' scheduling invariants (the token budget; whole prefill in one step;
chunked prefill one chunk a step; a P/D decode step never holds a prompt token), every request completing with the
same tokens whichever way its prompt was prefilled, and on the recorded step times whole prefill's longest decode gap
at least its prompt step and chunked prefill's under it."""
import json

import pytest

from tests.test_lab_model import lab_js, lab_page_js, node  # noqa: F401  (fixtures: the built scripts)

WAITS = r"""
const {labWorker, waitFigures} = require(%(page)s);
function worker() {
  const posted = [], scope = {postMessage: (m) => posted.push(m)};
  labWorker(L, scope, S);
  return {scope, posted};
}
const decode = worker(), prefill = worker();
const ids = (seed, n) => {
  const next = L.mulberry32(seed);
  return Array.from({length: n}, () => next() %% L.SHAPE.vocab);
};
const base = {users: 3, userPrompts: [ids(1, 8), ids(2, 8), ids(3, 8)], prompt: ids(9, %(prompt)d), longOutput: 6,
  chunk: %(chunk)d, warmSteps: 4, tailSteps: 3, maxContext: 240};
// the page's relay: on "arrive" the prefill worker prefills and its KV goes to the decode worker as "handoff"
const send = decode.scope.postMessage;
decode.scope.postMessage = (m) => {
  send(m);
  if (m.type !== "arrive") return;
  prefill.scope.onmessage({data: {cmd: "prefill", prompt: base.prompt}});
  decode.scope.onmessage({data: {...prefill.posted.pop(), cmd: "handoff"}});
};
const wait = (type) => new Promise((resolve) => {
  const poll = () => {
    const m = decode.posted.find((x) => x.type === type || x.type === "error");
    if (m) resolve(m); else setTimeout(poll, 2);
  };
  poll();
});
(async () => {
  const out = {};
  for (const mode of ["whole", "chunked", "pd"]) {
    decode.posted.length = 0;
    decode.scope.onmessage({data: {...base, cmd: "waits", mode}});
    const run = await wait("waits");
    out[mode] = {run, figures: run.type === "waits" ? waitFigures(L, run) : null};
  }
  const model = new L.TinyModel({slots: 1, maxContext: 240, maxTokens: 240});
  out.greedy = L.greedy(model, base.prompt, 6, {cache: true, slot: 0});
  console.log(JSON.stringify(out));
  process.exit(0);  // the workers' message channels would keep Node running
})();
"""


@pytest.fixture(scope="module")
def runs(lab_js, lab_page_js):  # noqa: F811
    return node(lab_js, WAITS % {"page": json.dumps(str(lab_page_js)), "prompt": 96, "chunk": 16})


def test_each_set_up_keeps_the_token_budget_and_its_prefill_rule(runs):
    budget = {"whole": 96 + 3, "chunked": 16 + 3, "pd": 3 + 1}
    for mode, r in ((m, runs[m]["run"]) for m in ("whole", "chunked", "pd")):
        assert r["type"] == "waits", r
        assert all(s["decoders"] + s["prompt"] <= budget[mode] for s in r["steps"]), mode
    modes = ("whole", "chunked", "pd")
    prompt_steps = {m: [s["prompt"] for s in runs[m]["run"]["steps"] if s["prompt"]] for m in modes}
    assert prompt_steps["whole"] == [96]  # the users joined outside the engine: only the long prompt is prefilled
    assert prompt_steps["chunked"] == [16] * 6
    assert prompt_steps["pd"] == []  # no decode step holds a prompt token
    moved = runs["pd"]["run"]["moved"]
    assert moved["bytes"] == 2 * 4 * 96 * 256 * 4 and moved["sent"] <= moved["received"] <= moved["copied"]


def test_every_request_completes_with_the_same_tokens_however_its_prompt_was_prefilled(runs):
    tokens = {m: [t for _, t in runs[m]["run"]["arrivals"]["long"]] for m in ("whole", "chunked", "pd")}
    assert tokens["whole"] == tokens["chunked"] == tokens["pd"] == runs["greedy"]
    for m in ("whole", "chunked", "pd"):
        users = {k: v for k, v in runs[m]["run"]["arrivals"].items() if k != "long"}
        assert sorted(users) == ["u0", "u1", "u2"] and all(len(v) >= 4 for v in users.values()), m


def test_whole_prefill_stalls_the_users_for_its_prompt_step_and_chunks_stall_them_less(runs):
    whole = runs["whole"]["run"]
    prompt_step = next(s for s in whole["steps"] if s["prompt"])
    f = {m: runs[m]["figures"] for m in ("whole", "chunked", "pd")}
    assert f["whole"]["longestGap"] >= prompt_step["end"] - prompt_step["start"]
    assert f["chunked"]["longestGap"] < prompt_step["end"] - prompt_step["start"]
    assert f["chunked"]["ttft"] > 0 and f["pd"]["handoff"] >= 0 and f["pd"]["prefill"] > 0


PROBE = r"""
const posted = [], scope = {postMessage: (m) => posted.push(m)};
labWorker(L, scope, S);
const next = L.mulberry32(4), prompt = Array.from({length: 100}, () => next() %% L.SHAPE.vocab);
const users = [0, 1, 2].map((u) => Array.from({length: 8}, () => next() %% L.SHAPE.vocab));
scope.onmessage({data: {cmd: "probe", prompt, chunk: 32, users: 3, userPrompts: users, longOutput: 4, maxContext: 64}});
const poll = () => {
  const m = posted.find((x) => x.type === "probed" || x.type === "error");
  if (!m) { setTimeout(poll, 2); return; }
  const fit = waitsStepModel(S, %(model)s, m.rows);
  console.log(JSON.stringify({m, fit}));
  process.exit(0);
};
poll();
"""


def test_the_probe_times_the_prompt_alone_and_beside_the_users_and_refits_the_prompt_terms_only(lab_js, lab_page_js):  # noqa: F811
    """The prefill worker's probe of the long prompt (experiment E's prediction): the prompt alone in one step, then
    beside the 3 users' decode tokens whole and chunk by chunk, their contexts (8 tokens, one more after the untimed
    warm-up step) growing a token a step; the step models keep experiment C's decode side and take prompt terms
    fitted on those rows."""
    calibrated = {"decode_batch": [1, 2], "decode_seconds": [0.001, 0.002], "prompt_chunk_s": 9.0,
                  "prompt_token_s": 9.0, "prompt_pair_s": 9.0, "attention_s_per_token": 1e-6,
                  "request_overhead_s": 0.0003}
    head = f"const {{labWorker, waitsStepModel}} = require({json.dumps(str(lab_page_js))});\n"  # S: node()
    out = node(lab_js, head + PROBE % {"model": json.dumps(calibrated)})
    rows = out["m"]["rows"]
    assert [(r["decoders"], r["chunks"]) for r in rows] == [
        (0, [[0, 100]]), (3, [[0, 100]]), (3, [[0, 32]]), (3, [[32, 32]]), (3, [[64, 32]]), (3, [[96, 4]])]
    assert [r["contextSum"] for r in rows] == [0, 30, 33, 36, 39, 42] and all(r["seconds"] > 0 for r in rows)
    kept = {k: v for k, v in calibrated.items() if not k.startswith("prompt_")}
    for name in ("beside", "alone"):
        fit = out["fit"][name]
        assert {k: fit[k] for k in kept} == kept
        assert all(0 <= fit[k] < 1 for k in ("prompt_chunk_s", "prompt_token_s", "prompt_pair_s"))
    alone = out["fit"]["alone"]
    assert rows[0]["seconds"] == pytest.approx(alone["prompt_chunk_s"] + 100 * alone["prompt_token_s"]
                                               + 5000 * alone["prompt_pair_s"], rel=1e-9)
