// C13-L5 lesson page: slider math in the browser, every constant read from precomputed.json.
// Each function mirrors one in scripts/model/roofline.py, scripts/model/timeline.py or scripts/model/readouts.py;
// the browser tests hold them to the Python within 1e-6 relative.
(function () {
  "use strict";
  const DATA = JSON.parse(document.getElementById("lesson-data").textContent);
  const K = DATA.constants;
  const PROV = DATA.provenance;

  // ---- roofline.py -------------------------------------------------------------------------
  const stepSeconds = (bytes, flops) => Math.max(bytes / K.hbm_bandwidth_bytes_per_s, flops / K.peak_bf16_flops);
  const decodeStepBytes = (b, c) => K.weight_bytes_read_per_step + b * (c * K.kv_bytes_per_token + 2 * K.state_bytes_per_request);
  const decodeStepFlops = (b, c) => 2 * K.params_read_per_step * b + b * c * K.attention_flops_per_token_position;
  const decodeStepSeconds = (b, c) => stepSeconds(decodeStepBytes(b, c), decodeStepFlops(b, c));
  const bytesPerRequest = (c) => c * K.kv_bytes_per_token + K.state_bytes_per_request;
  const maxBatchByMemory = (c) => Math.max(0, Math.floor(K.free_bytes_for_requests / bytesPerRequest(c)));
  function maxBatchUnderSlo(c, sloS) {
    const cap = maxBatchByMemory(c);
    const byBytes = (sloS * K.hbm_bandwidth_bytes_per_s - K.weight_bytes_read_per_step) /
      (c * K.kv_bytes_per_token + 2 * K.state_bytes_per_request);
    const byFlops = sloS * K.peak_bf16_flops / (2 * K.params_read_per_step + c * K.attention_flops_per_token_position);
    return Math.max(0, Math.min(cap, Math.floor(Math.min(byBytes, byFlops))));
  }
  const prefillFlops = (p) => 2 * K.params_read_per_step * p + p * p / 2 * K.attention_flops_per_token_position;
  const prefillBytes = (p) => K.weight_bytes_read_per_step + p * K.kv_bytes_per_token + K.state_bytes_per_request;
  const prefillSeconds = (p) => stepSeconds(prefillBytes(p), prefillFlops(p));
  function mixedStepSeconds(n, c, chunk, start) {
    const bytes = decodeStepBytes(n, c) + (start + chunk) * K.kv_bytes_per_token + 2 * K.state_bytes_per_request;
    const pairs = chunk * start + chunk * chunk / 2;
    const flops = decodeStepFlops(n, c) + 2 * K.params_read_per_step * chunk + pairs * K.attention_flops_per_token_position;
    return stepSeconds(bytes, flops);
  }
  const transferSeconds = (p) => bytesPerRequest(p) / K.pd_link_bytes_per_s;

  // ---- timeline.py -------------------------------------------------------------------------
  const runningDecoders = (c) => Math.max(0, maxBatchByMemory(c) - 1);
  function chunkedSteps(n, c, p, chunk) {
    const size = Math.max(1, Math.min(chunk, p));
    const steps = [];
    for (let start = 0; start < p; start += size) steps.push(mixedStepSeconds(n, c, Math.min(chunk, p - start), start));
    return steps;
  }
  const wholeSteps = (n, c, p) => [mixedStepSeconds(n, c, p, 0)];
  const sum = (xs) => xs.reduce((s, x) => s + x, 0);
  const disaggTtft = (p) => prefillSeconds(p) + transferSeconds(p);
  function withNewcomerSeconds(n, c, p) {
    const bytes = decodeStepBytes(n, c) + decodeStepBytes(1, p) - K.weight_bytes_read_per_step;
    return stepSeconds(bytes, decodeStepFlops(n, c) + decodeStepFlops(1, p));
  }
  const LANE_LABELS = {whole: "整段 prefill", chunked: "分块 prefill", disagg: "P/D 分离:decode 卡",
    disagg_prefill: "P/D 分离:prefill 卡"};
  const KIND_LABELS = {decode: "decode 一步", prefill: "整段 prefill", chunk: "prefill 块 + decode",
    transfer: "传 KV 与状态"};
  function lanes(c, p, chunk, tail = 6) {
    const n = runningDecoders(c), plain = decodeStepSeconds(n, c), after = withNewcomerSeconds(n, c, p);
    const bars = [];
    const push = (lane, kind, s, e) => bars.push({lane, lane_label: LANE_LABELS[lane], kind,
      kind_label: KIND_LABELS[kind], start_s: s, end_s: e, duration_ms: (e - s) * 1e3});
    const run = (lane, steps, kind) => {
      let t = 0;
      for (const d of steps) { push(lane, kind, t, t + d); t += d; }
      for (let i = 0; i < tail; i++) { push(lane, "decode", t, t + after); t += after; }
    };
    run("whole", wholeSteps(n, c, p), "prefill");
    run("chunked", chunkedSteps(n, c, p, chunk), "chunk");
    const ttft = disaggTtft(p);
    let t = 0;
    const count = plain > 0 ? Math.ceil(ttft / plain) : 0;
    for (let i = 0; i < count; i++) { push("disagg", "decode", t, t + plain); t += plain; }
    for (let i = 0; i < tail; i++) { push("disagg", "decode", t, t + after); t += after; }
    const pre = prefillSeconds(p);
    push("disagg_prefill", "prefill", 0, pre);
    push("disagg_prefill", "transfer", pre, ttft);
    return bars;
  }

  // ---- readouts.py -------------------------------------------------------------------------
  function readouts(s) {
    const c = s.context_tokens, p = s.prompt_tokens, k = s.chunk_tokens;
    const cap = maxBatchByMemory(c);
    const b = Math.max(0, Math.min(Math.trunc(s.batch), cap));
    const nb = maxBatchUnderSlo(c, s.tpot_slo_ms / 1e3);
    const n = runningDecoders(c);
    const chunked = chunkedSteps(n, c, p, k);
    return {
      max_batch_mem: cap,
      max_batch_slo: nb,
      throughput_at_slo_tok_s: nb ? nb / decodeStepSeconds(nb, c) : 0,
      per_user_tok_s_at_slo: nb ? 1 / decodeStepSeconds(nb, c) : 0,
      effective_batch: b,
      step_ms_at_batch: b ? decodeStepSeconds(b, c) * 1e3 : 0,
      throughput_at_batch_tok_s: b ? b / decodeStepSeconds(b, c) : 0,
      per_user_tok_s_at_batch: b ? 1 / decodeStepSeconds(b, c) : 0,
      running_users: n,
      whole_prefill_stall_s: Math.max(...wholeSteps(n, c, p)),
      whole_ttft_s: sum(wholeSteps(n, c, p)),
      chunked_max_step_ms: Math.max(...chunked) * 1e3,
      chunked_ttft_s: sum(chunked),
      disagg_max_step_ms: decodeStepSeconds(n, c) * 1e3,
      disagg_ttft_s: disaggTtft(p),
      transfer_ms: transferSeconds(p) * 1e3,
      prefill_tflop: prefillFlops(p) / 1e12,
      prefill_gb: prefillBytes(p) / 1e9,
      prefill_s: prefillSeconds(p),
      decode_gb_at_batch: decodeStepBytes(b, c) / 1e9,
      decode_gflop_at_batch: decodeStepFlops(b, c) / 1e9,
      kv_mb_per_request: bytesPerRequest(c) / 1e6,
      kv_gb_at_batch: b * bytesPerRequest(c) / 1e9,
    };
  }

  // ---- count_tokens.py: token/s -> characters/s at the Chinese paragraph's chars per token ---
  function tokenReadouts(s) {
    const T = DATA.tokens, out = {};
    if (!T || s.tok_s === undefined) return out;
    for (const row of T.rows) {  // row.chars counts code points, as Python's len() does
      if (row.passage_id === T.chars_passage) out[`chars_per_s.${row.tokenizer_id}`] = s.tok_s * row.chars / row.tokens;
    }
    return out;
  }

  function frontierRows(c, sloMs) {
    const cap = maxBatchByMemory(c), rows = [];
    for (let b = 1; b <= cap; b++) {
      const step = decodeStepSeconds(b, c);
      rows.push({batch: b, step_ms: step * 1e3, throughput_tok_s: b / step,
        slo_status: step * 1e3 <= sloMs ? "达标" : "超标", is_cap: b === cap});
    }
    return rows;
  }

  // ---- display.py --------------------------------------------------------------------------
  const DECIMALS = {int: 0, f1: 1, f2: 2, f3: 3};
  function formatNumber(v, fmt) {
    const d = DECIMALS[fmt];
    const scale = Math.pow(10, d);
    const r = Math.floor(v * scale + 0.5) / scale;
    return r.toLocaleString("en-US", {minimumFractionDigits: d, maximumFractionDigits: d});
  }

  window.lessonMath = {readouts, tokenReadouts, frontierRows, lanes, formatNumber, maxBatchByMemory, decodeStepSeconds};
  window.lessonViews = {};

  // ---- sliders -----------------------------------------------------------------------------
  const state = {};
  const sliders = document.querySelectorAll("input[data-param]");
  const fromSlider = (el) => (el.dataset.scale === "log2" ? Math.pow(2, Number(el.value)) : Number(el.value));
  const toSlider = (el, v) => (el.dataset.scale === "log2" ? Math.log2(v) : v);
  sliders.forEach((el) => { state[el.dataset.param] = fromSlider(el); });

  function setText(el, text) { if (el.textContent !== text) el.textContent = text; }

  let pending = null;
  const drawn = {};  // the inputs each view was last drawn with
  function update() {
    const batchEl = document.querySelector('input[data-param="batch"]');
    const cap = maxBatchByMemory(state.context_tokens);
    if (batchEl) {
      batchEl.max = String(Math.max(1, cap));
      if (state.batch > Math.max(1, cap)) { state.batch = Math.max(1, cap); batchEl.value = String(state.batch); }
    }
    for (const el of sliders) {  // a value can be shown in several places (beside its slider and in the prose)
      for (const out of document.querySelectorAll(`[data-slider-value="${el.dataset.param}"]`)) {
        setText(out, formatNumber(state[el.dataset.param], "int"));
      }
      el.setAttribute("aria-valuetext", String(state[el.dataset.param]));
    }
    const r = {...readouts(state), ...tokenReadouts(state)};
    for (const el of document.querySelectorAll("[data-readout]")) {
      const v = r[el.dataset.readout];
      el.dataset.value = String(v);
      setText(el, formatNumber(v, el.dataset.format || "int"));
    }
    document.querySelectorAll("[data-when-nothing-fits]").forEach((el) => { el.hidden = cap > 0; });
    document.querySelectorAll("[data-when-slo-unmet]").forEach((el) => { el.hidden = r.max_batch_slo > 0 || cap === 0; });
    document.dispatchEvent(new CustomEvent("lesson:update", {detail: {state: {...state}, readouts: r}}));
    const views = window.lessonViews;
    const jobs = [];
    // Re-run a view only when one of its inputs moved: each Vega run costs a few ms.
    const key = (names) => names.map((n) => state[n]).join("|");
    const frontierKey = key(["context_tokens", "tpot_slo_ms"]) + "|" + r.effective_batch;
    if (views.frontier && frontierKey !== drawn.frontier) {
      drawn.frontier = frontierKey;
      const v = views.frontier;
      v.signal("batch", r.effective_batch).signal("context_tokens", state.context_tokens)
        .signal("tpot_slo_ms", state.tpot_slo_ms).data("frontier", frontierRows(state.context_tokens, state.tpot_slo_ms));
      jobs.push(v.runAsync());
    }
    const timelineKey = key(["context_tokens", "prompt_tokens", "chunk_tokens"]);
    if (views.timeline && timelineKey !== drawn.timeline) {
      drawn.timeline = timelineKey;
      const v = views.timeline;
      v.signal("prompt_tokens", state.prompt_tokens).signal("chunk_tokens", state.chunk_tokens)
        .data("timeline", lanes(state.context_tokens, state.prompt_tokens, state.chunk_tokens));
      jobs.push(v.runAsync());
    }
    pending = Promise.all(jobs).then(() => undefined);
    return pending;
  }

  window.lessonSet = function (values) {
    for (const [name, v] of Object.entries(values)) {
      state[name] = v;
      const el = document.querySelector(`input[data-param="${name}"]`);
      if (el) el.value = String(toSlider(el, v));
    }
    return update();
  };
  window.lessonState = () => ({...state});
  window.lessonPending = () => pending || Promise.resolve();
  sliders.forEach((el) => el.addEventListener("input", () => { state[el.dataset.param] = fromSlider(el); update(); }));

  // ---- provenance pop-over -----------------------------------------------------------------
  const pop = document.getElementById("prov-pop");
  function describe(rec) {
    const lines = [[rec.label || rec.id, ""], ["编号", rec.id], ["类别", rec.kind], ["数值", `${rec.display} ${rec.unit || ""}`]];
    if (rec.kind === "derived") {
      lines.push(["公式", rec.formula + (rec.key ? ` → ${rec.key}` : "")], ["参数", JSON.stringify(rec.args)],
        ["输入字段", (rec.inputs || []).join(", ")], ["脚本", rec.script]);
    } else if (rec.kind === "cited") {
      lines.push(["出处", rec.work], ["版本", rec.version || ""], ["位置", rec.locator], ["自报", rec.self_reported ? "是(提出方自报)" : "否"]);
    } else if (rec.kind === "measured") {
      lines.push(["机器", rec.machine], ["日期", rec.date], ["次数", String(rec.runs)], ["离散", rec.spread], ["文件", rec.file]);
    } else if (rec.kind === "assumed") {
      lines.push(["假设", rec.assumption]);
    }
    return lines;
  }
  function showProv(el) {
    const id = el.dataset.prov;
    const rec = PROV[id];
    if (!pop || !rec) return;
    pop.replaceChildren();
    for (const [k, v] of describe(rec)) {
      const row = document.createElement("div");
      const key = document.createElement("b");
      key.textContent = k;
      row.append(key, document.createTextNode(v ? ` ${v}` : ""));
      pop.append(row);
    }
    const link = document.createElement("a");
    link.href = `provenance.html#${encodeURIComponent(id)}`;
    link.textContent = "在出处表中查看 →";
    pop.append(link);
    const box = el.getBoundingClientRect();
    pop.style.top = `${window.scrollY + box.bottom + 6}px`;
    pop.style.left = `${Math.max(8, Math.min(window.scrollX + box.left, window.scrollX + document.documentElement.clientWidth - 340))}px`;
    pop.hidden = false;
    pop.dataset.for = id;
  }
  document.addEventListener("click", (ev) => {
    const el = ev.target.closest("[data-prov]");
    if (el) { showProv(el); ev.stopPropagation(); } else if (pop && !ev.target.closest("#prov-pop")) pop.hidden = true;
  });
  document.addEventListener("keydown", (ev) => {
    const el = ev.target.closest && ev.target.closest("[data-prov]");
    if (el && (ev.key === "Enter" || ev.key === " ")) { ev.preventDefault(); showProv(el); }
    if (ev.key === "Escape" && pop) pop.hidden = true;
  });
  if (location.hash) {
    const target = document.querySelector(`[data-prov="${CSS.escape(decodeURIComponent(location.hash.slice(1)))}"]`);
    if (target) { target.classList.add("prov-target"); target.scrollIntoView({block: "center"}); }
  }

  // ---- clickable teaching widgets (request path, formula terms, three-step design) ---------
  document.querySelectorAll("[data-explain]").forEach((btn) => {
    btn.addEventListener("click", () => {
      const group = btn.dataset.group;
      document.querySelectorAll(`[data-group="${group}"]`).forEach((b) => b.setAttribute("aria-pressed", String(b === btn)));
      document.querySelectorAll(`[data-panel-group="${group}"]`).forEach((p) => { p.hidden = p.dataset.panel !== btn.dataset.explain; });
    });
  });

  // ---- charts ------------------------------------------------------------------------------
  const specs = JSON.parse(document.getElementById("lesson-specs").textContent);
  // Start each chart with its data already in place, so Vega never lays out an empty dataset.
  const initial = {
    frontier: () => ({frontier: frontierRows(state.context_tokens, state.tpot_slo_ms)}),
    timeline: () => ({timeline: lanes(state.context_tokens, state.prompt_tokens, state.chunk_tokens)}),
  };
  for (const [id, make] of Object.entries(initial)) if (specs[id]) specs[id].datasets = make();
  const embeds = Object.entries(specs).map(([id, spec]) => {
    const el = document.getElementById(`chart-${id}`);
    if (!el) return Promise.resolve();
    return window.vegaEmbed(el, spec, {actions: false, renderer: id === "timeline" || id === "frontier" ? "canvas" : "svg"})
      .then((res) => { window.lessonViews[id] = res.view; });
  });
  window.lessonReady = Promise.all(embeds).then(update).then(() => { document.body.dataset.ready = "1"; });
  update();
})();
