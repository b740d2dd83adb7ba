// ---- experiment D's readers: any client's file as a run in the vLLM layout -----------------------------------------
// Twins of scripts/serving/measures/clients.py read_any (vLLM result: results.load_result with per_token False; aiperf 0.13.0
// profile_export.jsonl: clients.from_aiperf; GuideLLM 0.8.1 benchmarks.json: clients.from_guidellm); the layouts
// and what each conversion keeps are written there. A valid file is read whatever its chunks bundled; a malformed
// one is refused in one line naming the record and the field. Appended to lab-model.js after tools.js.
function c13LabReaders() {
  const fail = (message) => { throw new Error(message); };
  const isNum = (x) => typeof x === "number" && Number.isFinite(x);
  const inRange = (x, lo, hi) => isNum(x) && x >= lo && x <= hi;
  const whole = (x) => Number.isInteger(x) && x >= 0;
  const sum = (a) => { let s = 0; for (const x of a) s += x; return s; };
  function parse(text) {
    try { return JSON.parse(text); } catch (err) { return fail(`不是 JSON:${err.message}`); }
  }
  function checkList(doc, key, n, item, what) {
    if (!(key in doc)) return;
    const v = doc[key];
    if (!Array.isArray(v)) fail(`字段 ${key} 应是列表`);
    if (n !== null && v.length !== n) fail(`字段 ${key} 有 ${v.length} 项,ttfts 有 ${n} 项:应每个请求一项`);
    v.forEach((x, i) => { if (!item(x)) fail(`字段 ${key}[${i}] 应是${what}`); });
  }
  // results.load_result(path, per_token=False): the schema's types and bounds, then one run's consistency
  function readVllmResult(text) {
    const doc = parse(text);
    if (!doc || typeof doc !== "object" || Array.isArray(doc)) fail("顶层应是一个对象(vllm bench serve 的结果)");
    for (const key of ["duration", "ttfts", "itls", "input_lens", "output_lens"]) {
      if (!(key in doc)) fail(`缺少字段 ${key}(需要 --save-detailed 保存的逐请求列表)`);
    }
    if (!inRange(doc.duration, 0.001, 1e7)) fail("字段 duration 应是 0.001 到 1e7 之间的秒数");
    if (!Array.isArray(doc.ttfts) || !doc.ttfts.length) fail("字段 ttfts 应是非空列表:文件里没有请求");
    const n = doc.ttfts.length, secs = (x) => inRange(x, 0, 1e6);
    checkList(doc, "ttfts", n, secs, " 0 到 1e6 之间的秒数");
    checkList(doc, "latencies", n, secs, " 0 到 1e6 之间的秒数");
    checkList(doc, "input_lens", n, (x) => whole(x) && x <= 1e9, "不小于 0 的整数");
    checkList(doc, "output_lens", n, (x) => whole(x) && x <= 1e9, "不小于 0 的整数");
    checkList(doc, "itls", n, (x) => Array.isArray(x) && x.every(secs), "秒数的列表");
    checkList(doc, "errors", n, (x) => typeof x === "string", "字符串");
    checkList(doc, "success", n, (x) => typeof x === "boolean", " true 或 false");
    checkList(doc, "send_times", n, (x) => isNum(x) && x >= 0, "不小于 0 的有限秒数");
    const ok = "success" in doc ? doc.success : doc.ttfts.map((_, i) => !(doc.errors && doc.errors[i]) && doc.output_lens[i] > 0);
    let longest = 0;
    for (let i = 0; i < n; i++) {
      const e2el = doc.latencies ? doc.latencies[i] : doc.ttfts[i] + sum(doc.itls[i]);
      if (e2el < doc.ttfts[i]) fail(`字段 latencies[${i}] 比 ttfts[${i}] 还短:请求应在首 token 之后结束`);
      if (ok[i] && doc.output_lens[i] >= 1 && doc.itls[i].length > doc.output_lens[i] - 1) {
        fail(`字段 itls[${i}] 有 ${doc.itls[i].length} 个间隔,output_lens[${i}] = ${doc.output_lens[i]}:间隔不能比 token 还多`);
      }
      longest = Math.max(longest, e2el);
    }
    if (doc.duration < longest) fail(`字段 duration(${doc.duration} 秒)比最长的请求(${longest} 秒)还短`);
    return doc;
  }
  const NOT_CONNECTED = ["ClientConnectorError", "Cannot connect to host", "ConnectionRefusedError",
    "Can not write request body", "ServerDisconnectedError"];  // results.NOT_CONNECTED
  function aiperfMetric(rec, tag, where, required) {
    const metrics = rec.metrics;
    if (!metrics || typeof metrics !== "object" || Array.isArray(metrics)) fail(`${where}:字段 metrics 应是 {value, unit} 的对象`);
    const m = metrics[tag];
    if (m === undefined || m === null) { if (required) fail(`${where}:缺少字段 metrics.${tag}`); return null; }
    if (typeof m !== "object" || !("value" in m)) fail(`${where}:字段 metrics.${tag} 不是 {value, unit}`);
    if (["time_to_first_token", "request_latency", "inter_chunk_latency"].includes(tag) && m.unit !== "ms") fail(`${where}:字段 metrics.${tag}.unit 是 ${JSON.stringify(m.unit)};aiperf 0.13.0 导出的是 ms`);
    const count = tag === "input_sequence_length" || tag === "output_sequence_length";
    const items = tag === "inter_chunk_latency" && Array.isArray(m.value) ? m.value : [m.value];
    for (const x of items) {
      if (!(isNum(x) && x >= 0) || (count && !Number.isInteger(x))) fail(`${where}:字段 metrics.${tag}.value 应是${count ? "整数个 token" : "不小于 0 的毫秒数"}`);
    }
    return m.value;
  }
  function aiperfRow(rec, where) {
    if (!rec || typeof rec !== "object" || Array.isArray(rec) || !rec.metadata || typeof rec.metadata !== "object" || !("metrics" in rec)) fail(`${where}:不是 aiperf 的记录(需要 metadata 和 metrics;aiperf 0.13.0 的格式)`);
    const meta = rec.metadata;
    if (meta.benchmark_phase === "warmup") return null;
    // wall-clock nanoseconds pass 2^53: the reader kept their digits (exactNs), read here as BigInt
    const ns = {};
    for (const key of ["request_start_ns", "request_end_ns"]) {
      const v = meta[key];
      if (typeof v === "string" && /^#\d+$/.test(v)) ns[key] = BigInt(v.slice(1));
      else fail(`${where}:字段 metadata.${key} 应是整数纳秒`);
    }
    if (ns.request_end_ns < ns.request_start_ns) fail(`${where}:字段 metadata.request_end_ns 早于 request_start_ns`);
    const error = rec.error === undefined ? null : rec.error;
    let message = "";
    if (error !== null) {
      if (typeof error === "string") message = error || "error";
      else if (typeof error === "object" && !Array.isArray(error)) message = String(error.message || error.type || "error");
      else fail(`${where}:字段 error 应是 null、一条消息,或带 message 的对象`);
    }
    let isl = aiperfMetric(rec, "input_sequence_length", where, false);
    if (isl === null) {
      if (error === null || !NOT_CONNECTED.some((m) => message.includes(m))) fail(`${where}:缺少字段 metrics.input_sequence_length(prompt 的 token 数)`);
      isl = 0;
    }
    const row = {start: ns.request_start_ns, end: ns.request_end_ns, isl, error: message, ttft: 0, e2el: 0, osl: 0, itl: []};
    if (error === null) {
      row.ttft = aiperfMetric(rec, "time_to_first_token", where, true) / 1000;
      row.e2el = aiperfMetric(rec, "request_latency", where, true) / 1000;
      row.osl = aiperfMetric(rec, "output_sequence_length", where, true);
      row.itl = (aiperfMetric(rec, "inter_chunk_latency", where, false) || []).map((g) => g / 1000);
      if (row.osl >= 1 && row.itl.length + 1 > row.osl) fail(`${where}:${row.itl.length + 1} 个内容块,却只有 ${row.osl} 个输出 token:块比 token 还多`);
    }
    return row;
  }
  // a bare whole number under request_start_ns / request_end_ns becomes the string "#digits" before JSON.parse
  const exactNs = (line) => line.replace(/"(request_start_ns|request_end_ns)"(\s*):(\s*)(\d+)(?=\s*[,}])/g, '"$1"$2:$3"#$4"');
  function readAiperfExport(text) {  // clients.from_aiperf(path, per_token=False)
    const rows = [];
    text.split("\n").forEach((line, k) => {
      if (!line.trim()) return;
      let rec;
      if (/"request_(start|end)_ns"\s*:\s*"/.test(line)) fail(`第 ${k + 1} 行:字段 metadata.request_start_ns / request_end_ns 应是整数纳秒,不是字符串`);
      try { rec = JSON.parse(exactNs(line)); } catch (err) { fail(`第 ${k + 1} 行:不是 JSON 对象`); }
      const row = aiperfRow(rec, `第 ${k + 1} 行`);
      if (row) rows.push(row);
    });
    if (!rows.length) fail("没有 profiling 阶段的记录");
    rows.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    const first = rows[0].start, last = rows.reduce((m, r) => (r.end > m ? r.end : m), rows[0].end);
    return {duration: Number(last - first) * 1e-9, send_times: rows.map((r) => Number(r.start - first) * 1e-9), ttfts: rows.map((r) => r.ttft),
      latencies: rows.map((r) => r.e2el), itls: rows.map((r) => r.itl), input_lens: rows.map((r) => r.isl),
      output_lens: rows.map((r) => r.osl), errors: rows.map((r) => r.error), success: rows.map((r) => !r.error)};
  }
  const GROUPS = ["successful", "errored", "incomplete"], MAX_SECONDS = 1e11;
  function seconds(obj, key, where) {
    const v = obj ? obj[key] : undefined;
    if (!(isNum(v) && v >= 0 && v <= MAX_SECONDS)) fail(`${where}:字段 ${key} 应是 0 到 ${MAX_SECONDS} 之间的秒数`);
    return v;
  }
  function guidellmRow(g, rec, where) {
    const info = rec && typeof rec === "object" ? rec.info : undefined;
    if (info !== undefined && info !== null && (typeof info !== "object" || Array.isArray(info))) fail(`${where}:字段 info 应是对象(guidellm 0.8.1 的格式)`);
    const timings = info ? info.timings : undefined;
    if (!timings || typeof timings !== "object" || Array.isArray(timings)) fail(`${where}:缺少字段 info.timings(guidellm 0.8.1 的格式)`);
    const start = seconds(timings, "request_start", `${where}.info.timings`), isl = rec.prompt_tokens;
    if (!whole(isl)) fail(`${where}:字段 prompt_tokens 应是不小于 0 的整数`);
    if (g === "successful") {
      const first = seconds(timings, "first_token_iteration", `${where}.info.timings`), last = seconds(timings, "last_token_iteration", `${where}.info.timings`), osl = rec.output_tokens;
      if (!whole(osl)) fail(`${where}:字段 output_tokens 应是不小于 0 的整数`);
      if (!(start <= first && first <= last) || osl < 1) fail(`${where}:需要 request_start <= first_token_iteration <= last_token_iteration,且至少一个输出 token`);
      return {start, isl, ttft: first - start, e2el: last - start, osl, end: last, error: "",
        itl: osl > 1 ? new Array(osl - 1).fill((last - first) / (osl - 1)) : []};
    }
    const message = (info && info.error) || (g === "incomplete" ? "cancelled when the benchmark ended" : "error");
    const e = isNum(timings.request_end) && timings.request_end >= 0 ? Math.min(timings.request_end, MAX_SECONDS) : start;
    return {start, isl, ttft: 0, e2el: 0, osl: 0, end: Math.max(e, start), error: `${g}: ${message}`, itl: []};
  }
  function readGuidellmReport(text, k) {  // clients.from_guidellm(path, benchmark)
    const report = parse(text), benches = report && typeof report === "object" ? report.benchmarks : undefined;
    if (!Array.isArray(benches) || !benches.length) fail("缺少字段 benchmarks,或它是空的(guidellm 0.8.1 的报告)");
    if ((k === null || k === undefined) && benches.length > 1) fail(`报告里有 ${benches.length} 个 benchmark:选一个(0 到 ${benches.length - 1})`);
    const b = k === null || k === undefined ? 0 : k;
    if (!(Number.isInteger(b) && b >= 0 && b < benches.length)) fail(`没有第 ${b} 个 benchmark(0 到 ${benches.length - 1})`);
    const bench = benches[b], where = `benchmarks[${b}]`, groups = bench && typeof bench === "object" ? bench.requests : undefined;
    if (!groups || typeof groups !== "object" || !GROUPS.every((g) => Array.isArray(groups[g] || []))) fail(`${where}:字段 requests 应含列表 ${GROUPS.join("、")}`);
    const totals = (bench.metrics && bench.metrics.request_totals) || {};
    for (const g of GROUPS) {
      const kept = (groups[g] || []).length, counted = totals[g];
      if (Number.isInteger(counted) && kept < counted) fail(`${where}:字段 requests.${g} 只留了计数的 ${counted} 个请求中的 ${kept} 个(运行时抽样了:sample_size);请保留全部请求重跑`);
    }
    const rows = GROUPS.flatMap((g) => (groups[g] || []).map((rec, i) => guidellmRow(g, rec, `${where}.requests.${g}[${i}]`)));
    if (!rows.length) fail(`${where}:没有请求`);
    rows.sort((a, c) => a.start - c.start);
    const first = rows[0].start, last = Math.max(...rows.map((r) => r.end));
    return {itls_evenly_spaced: true, benchmarks: benches.length, duration: last - first, send_times: rows.map((r) => r.start - first),
      ttfts: rows.map((r) => r.ttft), latencies: rows.map((r) => r.e2el), itls: rows.map((r) => r.itl),
      input_lens: rows.map((r) => r.isl), output_lens: rows.map((r) => r.osl), errors: rows.map((r) => r.error),
      success: rows.map((r) => !r.error)};
  }
  // clients.read_any: a .jsonl name is aiperf's export, a JSON object with `benchmarks` GuideLLM's report, else vLLM's
  function readRunFile(name, text, benchmark) {
    if (/\.jsonl$/i.test(name)) return {client: "aiperf", doc: readAiperfExport(text)};
    const doc = parse(text);
    if (doc && typeof doc === "object" && !Array.isArray(doc) && "benchmarks" in doc) return {client: "guidellm", doc: readGuidellmReport(text, benchmark)};
    return {client: "vllm", doc: readVllmResult(text)};
  }
  return {readVllmResult, readAiperfExport, readGuidellmReport, readRunFile};
}
if (typeof self !== "undefined" && self.C13Lab) Object.assign(self.C13Lab, c13LabReaders());
if (typeof module !== "undefined") Object.assign(module.exports, c13LabReaders());
