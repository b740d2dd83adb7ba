// ---- experiment D: the same run under five tools' definitions (the numbers: L.toolMetrics, model/tools.js) ---------
const TOOL_SCALE = {ttft: [1000, 1], tpot: [1000, 2], itl: [1000, 2], ntpot: [1000, 2], e2el: [1000, 1],
  output_throughput: [1, 0], request_throughput: [1, 2], goodput: [1, 2], attainment: [100, 1]};  // [scale, digits]
const BOUND_NOTES = {chunks_unknown: "≤", response_end: "≈", window_assumed: "≈"};  // a value these notes only bound
const toolScale = (key) => TOOL_SCALE[key] || TOOL_SCALE[key.replace(/_(mean|p50|p90|p99)$/, "")];

// the lab's own run in the vLLM layout: every request succeeded, times from the run's start
function labRunDoc(last) {
  const r = last.requests;
  return {duration: last.duration, send_times: r.map((q) => q.send), ttfts: r.map((q) => q.times[0] - q.send),
    latencies: r.map((q) => q.times[q.times.length - 1] - q.send), itls: r.map((q) => q.times.slice(1).map((t, k) => t - q.times[k])),
    input_lens: r.map((q) => q.input), output_lens: r.map((q) => q.output), success: r.map(() => true)};
}
function showToolCell(P, box, cell, value, note, diff) {
  const mark = note ? P.$(`.tool-notes li[data-note="${note}"]`, box) : null;
  if (mark && mark.dataset.mark) mark.hidden = false;
  const [scale, digits] = toolScale(cell.parentElement.dataset.metric);
  const text = value === null ? "—" : (BOUND_NOTES[note] || "") + P.fmt(value * scale, digits);
  const far = diff !== undefined && Math.abs(diff) > P.settings.tools.differs_pct / 100;
  cell.textContent = text + (far ? `(${diff > 0 ? "+" : ""}${P.fmt(100 * diff, 0)}%)` : "");
  if (mark && mark.dataset.mark) cell.insertAdjacentHTML("beforeend", `<sup>${mark.dataset.mark}</sup>`);
  cell.classList.toggle("differs", far);
}
function toolReading(P, box, diffs) {
  const name = (t) => P.$(`thead th.${t}`, box).dataset.name, label = (key) => P.$(`tr[data-metric="${key}"]`, box).dataset.label;
  const why = (d) => {
    const group = d.key.replace(/_(mean|p50|p90|p99)$/, "");
    return (P.$(`.tool-why li[data-why="${group}.${d.tool}"]`, box) || P.$('.tool-why li[data-why="other"]', box)).textContent;
  };
  const large = P.settings.tools.reading_pct / 100;
  if (!diffs.length || Math.abs(diffs[0].diff) < large) return P.$('.tool-why li[data-why="none"]', box).textContent;
  const seen = new Set(), top = [];
  for (const d of diffs) {
    const id = `${d.key.replace(/_(mean|p50|p90|p99)$/, "")}.${d.tool}`;
    if (Math.abs(d.diff) < large || seen.has(id)) continue;
    seen.add(id);
    top.push(`${name(d.tool)}的「${label(d.key)}」比 ${name(d.base)} ${d.diff > 0 ? "高" : "低"} ${P.fmt(100 * Math.abs(d.diff), 0)}%:${why(d)}`);
    if (top.length === 3) break;
  }
  return `这次运行里差得最多的 ${top.length} 处——${top.join(";")}。`;
}
function showTools(P, box, doc, source, tpotSloMs) {
  const table = P.L.toolMetrics(doc, tpotSloMs), diffs = P.L.toolDifferences(table);
  for (const li of box.querySelectorAll(".tool-notes li")) li.hidden = true;
  const diffOf = new Map(diffs.map((d) => [`${d.key}.${d.tool}`, d.diff]));
  for (const key of P.L.TOOL_KEYS) {
    for (const tool of P.L.TOOLS) {
      showToolCell(P, box, P.$(`tr[data-metric="${key}"] .${tool}`, box), table.cells[tool][key], table.notes[tool][key], diffOf.get(`${key}.${tool}`));
    }
  }
  P.$(".source", box).textContent = source;
  P.$(".reading", box).textContent = toolReading(P, box, diffs);
  box.dataset.done = String(Number(box.dataset.done || 0) + 1);
}
function toolsExperiment(P, box, loadBox) {
  const status = P.$(".status", box), pick = P.$(".bench-pick", box), select = P.$("select", pick);
  let file = null;
  box.querySelector("button").addEventListener("click", () => {
    const last = loadBox.lastRun;
    if (!last) { status.textContent = "还没有实验 B 的运行:先在上面跑一次。"; return; }
    showTools(P, box, labRunDoc(last), `实验 B 的上一次运行(${last.requests.length} 个请求,在你的设备上测得)`, loadOptions(loadBox).slo.tpot);
    status.textContent = "完成。括号里是和本行第一个数(通常是 vLLM)差多少;上标见表下的注。";
  });
  const read = () => {
    const k = pick.hidden ? 0 : Number(select.value);  // a GuideLLM report of several benchmarks: the first, then a pick
    try {
      const {client, doc} = P.L.readRunFile(file.name, file.text, k);
      if (doc.benchmarks > 1 && pick.hidden) {
        select.innerHTML = Array.from({length: doc.benchmarks}, (_, i) => `<option value="${i}">${i}</option>`).join("");
        pick.hidden = false;
      }
      const ok = doc.success.filter(Boolean).length;
      showTools(P, box, doc, `文件 ${file.name}(${P.$(`.clients li[data-client="${client}"]`, box).textContent};${doc.ttfts.length} 个请求,${ok} 个成功)`, loadOptions(loadBox).slo.tpot);
      status.textContent = "完成。括号里是和本行第一个数差多少;上标见表下的注。";
    } catch (err) {
      status.textContent = `读不了 ${file.name}:${err.message}`;
    }
  };
  select.addEventListener("change", () => { if (file) read(); });
  box.querySelector('input[type="file"]').addEventListener("change", (e) => {
    const f = e.target.files[0];
    if (!f) return;
    f.text().then((text) => { file = {name: f.name, text}; pick.hidden = true; read(); });
  });
}
