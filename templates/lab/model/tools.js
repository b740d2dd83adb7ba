// ---- experiment D: one run under five tools' definitions, and the readers of each client's file -------------------
// Twin of scripts/serving/experiments/tool_metrics.py (the files and releases each tool follows are listed there) and of the
// readers in scripts/serving/measures/results.py and clients.py (read_any); tests/test_tool_metrics.py holds them equal. The
// build appends this file to lab-model.js; it adds its functions to the model's exports. Pure: no DOM.
function c13LabTools(L) {
  const TOOLS = ["vllm", "guidellm", "aiperf", "llmperf", "inference_perf"];
  const GROUPS = ["ttft", "tpot", "itl", "ntpot", "e2el"];
  const STATS = [["mean", null], ["p50", 50], ["p90", 90], ["p99", 99]];
  const SINGLES = ["output_throughput", "request_throughput", "goodput", "attainment"];
  const KEYS = GROUPS.flatMap((g) => STATS.map(([s]) => `${g}_${s}`)).concat(SINGLES);
  const MERGE_S = 1e-4;
  const sum = (a) => { let s = 0; for (const x of a) s += x; return s; };
  const groupKeys = (...groups) => groups.flatMap((g) => STATS.map(([s]) => `${g}_${s}`));

  function requestsOf(doc) {
    const n = doc.ttfts.length, sends = doc.send_times, errors = doc.errors || new Array(n).fill("");
    const ok = "success" in doc ? doc.success : doc.ttfts.map((_, i) => !errors[i] && doc.output_lens[i] > 0);
    return doc.ttfts.map((ttft, i) => ({ok: ok[i] === true, send: sends ? sends[i] : null, ttft,
      e2el: doc.latencies ? doc.latencies[i] : ttft + sum(doc.itls[i]), gaps: doc.itls[i], output: doc.output_lens[i],
      incomplete: String(errors[i] || "").startsWith("incomplete:")}));
  }
  function linear(values) {
    const v = Float64Array.from(values).sort(), out = {mean: sum(v) / v.length};
    for (const [s, p] of STATS) if (p) out[s] = L.npPercentile(v, p);
    return out;
  }
  function weighted(pairs) {  // GuideLLM's weighted inverted CDF (tool_metrics._weighted)
    const totals = new Map();
    for (const [v, w] of pairs) totals.set(v, (totals.get(v) || 0) + w);
    const kept = [...totals].sort((a, b) => a[0] - b[0]).filter(([, w]) => w > 0);
    if (!kept.length) return null;
    let weights = kept.map(([, w]) => w);
    if (sum(weights) <= 1e-6) weights = weights.map(() => 1);
    const total = sum(weights), probs = weights.map((w) => w / total), cdf = [];
    let run = 0;
    for (const p of probs) cdf.push(run += p);
    const out = {mean: sum(kept.map(([v], k) => v * probs[k]))};
    for (const [s, p] of STATS) {
      if (!p) continue;
      let k = 0;
      while (cdf[k] < p / 100) k += 1;
      out[s] = kept[k][0];
    }
    return out;
  }
  function put(cells, group, summary) { for (const [s] of STATS) cells[`${group}_${s}`] = summary ? summary[s] : null; }
  function summaries(cells, notes, lists, summarise) {
    for (const [group, values] of Object.entries(lists)) {
      put(cells, group, values.length ? summarise(values) : null);
      if (!values.length) for (const [s] of STATS) notes[`${group}_${s}`] = "no_values";
    }
  }
  function blank(notes, keys, code, cells) { for (const k of keys) { cells[k] = null; notes[k] = code; } }
  const note = (notes, keys, code) => { for (const k of keys) notes[k] = code; };

  function vllm(reqs, duration, slo, evenly) {
    const ok = reqs.filter((r) => r.ok), cells = {}, notes = {};
    const tpot = ok.map((r) => (r.output > 1 ? (r.e2el - r.ttft) / (r.output - 1) : 0));
    const orZero = (a) => (a.length ? a : [0]);
    put(cells, "ttft", linear(orZero(ok.map((r) => r.ttft))));
    put(cells, "tpot", linear(orZero(tpot.filter((_, k) => ok[k].output > 1))));
    put(cells, "itl", linear(orZero(ok.flatMap((r) => r.gaps))));
    put(cells, "e2el", linear(orZero(ok.map((r) => r.e2el))));
    if (evenly) blank(notes, groupKeys("itl"), "evenly_spaced", cells);
    blank(notes, groupKeys("ntpot").concat(["attainment"]), "not_reported", cells);
    Object.assign(cells, {output_throughput: sum(ok.map((r) => r.output)) / duration,
      request_throughput: ok.length / duration, goodput: tpot.filter((t) => t <= slo).length / duration});
    return [cells, notes];
  }
  function mergedEnd(times, start, end) {
    const ordered = [...new Set([start, end, ...times.filter((t) => start <= t && t <= end)])].sort((a, b) => a - b);
    let i = 0, last = start;
    while (i < ordered.length) {
      last = ordered[i];
      let j = i + 1;
      while (j < ordered.length && ordered[j] <= last + MERGE_S) j += 1;
      i = j;
    }
    return last;
  }
  function rate(events, start, end) {
    const inside = events.filter(([t]) => start <= t && t <= end), last = mergedEnd(inside.map(([t]) => t), start, end);
    return last > start ? sum(inside.map(([, w]) => w)) / (last - start) : 0;
  }
  function tokenEvents(r) {  // numpy's linspace: i * step + start, the last exactly the stop
    const first = r.send + r.ttft, last = r.send + r.e2el, chunks = r.gaps.length + 1;
    if (!r.ok || chunks <= 1 || r.output <= 1) return [[last, r.ok ? r.output : 0]];
    const each = (r.output - 1) / (chunks - 1), step = (last - first) / (chunks - 1), out = [[first, 1]];
    for (let i = 1; i < chunks; i++) out.push([i === chunks - 1 ? last : i * step + first, each]);
    return out;
  }
  function guidellm(reqs, duration, slo) {
    const ok = reqs.filter((r) => r.ok), cells = {}, notes = {};
    summaries(cells, notes, {ttft: ok.map((r) => [r.ttft, 1]),
      tpot: ok.filter((r) => r.output > 0).map((r) => [r.e2el / r.output, r.output]),
      itl: ok.filter((r) => r.output > 1).map((r) => [(r.e2el - r.ttft) / (r.output - 1), r.output - 1]),
      e2el: ok.map((r) => [r.e2el, 1])}, weighted);
    note(notes, groupKeys("e2el"), "response_end");
    blank(notes, groupKeys("ntpot"), "not_reported", cells);
    const known = reqs.every((r) => r.send !== null);
    if (!known) reqs = reqs.map((r) => ({...r, send: 0}));
    const ends = reqs.map((r) => r.send + (r.ok ? r.e2el : 0));
    const start = known ? Math.min(...reqs.map((r) => r.send)) : 0, end = known ? Math.max(...ends) : duration;
    const met = ends.filter((_, k) => { const r = reqs[k]; return r.ok && r.output > 1 && 1000 * (r.e2el - r.ttft) / (r.output - 1) <= 1000 * slo; });
    const determined = reqs.filter((r) => r.ok && r.output > 1).length + reqs.filter((r) => !r.ok && !r.incomplete).length;
    Object.assign(cells, {request_throughput: rate(ends.map((e) => [e, 1]), start, end),
      output_throughput: rate(reqs.flatMap(tokenEvents), start, end),
      goodput: determined ? rate(met.map((e) => [e, 1]), start, end) : null,
      attainment: determined ? met.length / determined : null});
    if (!known) note(notes, ["request_throughput", "output_throughput", "goodput"], "window_assumed");
    if (!determined) note(notes, ["goodput", "attainment"], "no_values");
    return [cells, notes];
  }
  function aiperf(reqs, slo) {
    const ok = reqs.filter((r) => r.ok), cells = {}, notes = {};
    const itl = ok.filter((r) => r.output >= 2).map((r) => (r.e2el - r.ttft) / (r.output - 1));
    summaries(cells, notes, {ttft: ok.map((r) => r.ttft), itl, e2el: ok.map((r) => r.e2el)}, linear);
    blank(notes, groupKeys("tpot", "ntpot"), "not_reported", cells);
    const good = itl.filter((t) => t <= slo).length;
    cells.attainment = good / reqs.length;
    if (ok.length && ok.every((r) => r.send !== null)) {
      const span = Math.max(...ok.map((r) => r.send + r.e2el)) - Math.min(...ok.map((r) => r.send));
      Object.assign(cells, {output_throughput: sum(ok.map((r) => r.output)) / span, request_throughput: ok.length / span,
        goodput: good / span});
    } else blank(notes, ["output_throughput", "request_throughput", "goodput"], "no_send_times", cells);
    return [cells, notes];
  }
  function llmperf(reqs, duration) {
    const ok = reqs.filter((r) => r.ok), cells = {}, notes = {};
    summaries(cells, notes, {ttft: ok.map((r) => r.ttft), itl: ok.map((r) => r.e2el / (r.gaps.length + 1)),
      e2el: ok.map((r) => r.e2el)}, linear);
    note(notes, groupKeys("itl"), "chunks_unknown");
    note(notes, groupKeys("e2el"), "response_end");
    blank(notes, groupKeys("tpot", "ntpot").concat(["goodput", "attainment"]), "not_reported", cells);
    Object.assign(cells, {output_throughput: sum(ok.map((r) => r.output)) / duration, request_throughput: ok.length / duration});
    return [cells, notes];
  }
  function inferencePerf(reqs, slo, perToken) {
    const ok = reqs.filter((r) => r.ok), cells = {}, notes = {}, streamed = ok.filter((r) => r.output > 1);
    const tpot = streamed.map((r) => (r.e2el - r.ttft) / (r.output - 1));
    summaries(cells, notes, {ttft: streamed.map((r) => r.ttft), tpot, itl: streamed.flatMap((r) => r.gaps),
      ntpot: ok.map((r) => (r.output > 0 ? r.e2el / r.output : 0)), e2el: ok.map((r) => r.e2el)}, linear);
    note(notes, groupKeys("e2el", "ntpot"), "response_end");
    if (!perToken) blank(notes, groupKeys("itl"), "bundled", cells);
    const good = tpot.filter((t) => t <= slo).length;
    cells.attainment = ok.length ? good / ok.length : null;
    if (reqs.every((r) => r.send !== null) && ok.length) {
      const total = Math.max(...reqs.map((r) => r.send + (r.ok ? r.e2el : 0))) - Math.min(...reqs.map((r) => r.send));
      const spanOk = Math.max(...ok.map((r) => r.send + r.e2el)) - Math.min(...ok.map((r) => r.send));
      Object.assign(cells, {output_throughput: sum(ok.map((r) => r.output)) / total, request_throughput: ok.length / total,
        goodput: spanOk > 0 ? good / spanOk : 0});
    } else blank(notes, ["output_throughput", "request_throughput", "goodput"], "no_send_times", cells);
    if (!ok.length) notes.attainment = "no_values";
    return [cells, notes];
  }
  // {cells: {tool: {key: value}}, notes: {tool: {key: note}}} for a run in the vLLM layout (tool_metrics.tool_metrics)
  function toolMetrics(doc, tpotSloMs) {
    const reqs = requestsOf(doc), slo = tpotSloMs / 1000, duration = doc.duration, evenly = Boolean(doc.itls_evenly_spaced);
    const perToken = reqs.every((r) => !(r.ok && r.output >= 1) || r.gaps.length === r.output - 1);
    const made = {vllm: vllm(reqs, duration, slo, evenly), guidellm: guidellm(reqs, duration, slo), aiperf: aiperf(reqs, slo),
      llmperf: llmperf(reqs, duration), inference_perf: inferencePerf(reqs, slo, perToken && !evenly)};
    if (evenly) note(made.inference_perf[1], groupKeys("itl"), "evenly_spaced");
    const cells = {}, notes = {};
    for (const t of TOOLS) {
      cells[t] = Object.fromEntries(KEYS.map((k) => [k, made[t][0][k] === undefined ? null : made[t][0][k]]));
      notes[t] = made[t][1];
    }
    return {cells, notes};
  }
  // Each row's base is vLLM's cell, or the first tool's that has the row; every other tool's relative difference
  // from it, largest first: [{key, tool, base, diff}], the base non-zero. A cell that is only an upper bound
  // (llmperf's ITL: chunks_unknown) has no difference to state.
  function toolDifferences(table) {
    const out = [];
    for (const key of KEYS) {
      const baseTool = TOOLS.find((t) => table.cells[t][key] !== null);
      if (!baseTool) continue;
      const base = table.cells[baseTool][key];
      for (const t of TOOLS) {
        const v = table.cells[t][key];
        if (t !== baseTool && v !== null && base !== 0 && table.notes[t][key] !== "chunks_unknown") out.push({key, tool: t, base: baseTool, diff: (v - base) / Math.abs(base)});
      }
    }
    return out.sort((a, b) => Math.abs(b.diff) - Math.abs(a.diff));
  }
  return {toolMetrics, toolDifferences, TOOL_KEYS: KEYS, TOOLS, TOOL_STATS: STATS.map(([s]) => s), TOOL_GROUPS: GROUPS, requestsOf};
}
if (typeof self !== "undefined" && self.C13Lab) Object.assign(self.C13Lab, c13LabTools(self.C13Lab));
if (typeof module !== "undefined") Object.assign(module.exports, c13LabTools(module.exports));
