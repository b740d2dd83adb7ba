// ---- experiment D: the same run under four tools' definitions ------------------------------------------------------
const TOOL_ROWS = [["ttft_p50", 1000, 1], ["tpot_mean", 1000, 2], ["itl_mean", 1000, 2], ["output_throughput", 1, 0],
  ["request_throughput", 1, 2], ["tpot_attainment", 100, 0]];  // [metric, scale to what the row shows, digits]
function showTools(P, box, metrics, source) {
  for (const [metric, scale, digits] of TOOL_ROWS) {
    const base = metrics.vllm[metric];
    for (const tool of ["vllm", "guidellm", "aiperf", "llmperf"]) {
      const v = metrics[tool][metric], cell = P.$(`tr[data-metric="${metric}"] .${tool}`, box);
      if (v === null || v === undefined) { cell.textContent = "—"; cell.classList.remove("differs"); continue; }
      const off = base ? (v - base) / base : 0, far = tool !== "vllm" && Math.abs(off) > 0.01;
      cell.textContent = P.fmt(v * scale, digits) + (far ? `(${off > 0 ? "+" : ""}${P.fmt(100 * off, 0)}%)` : "");
      cell.classList.toggle("differs", far);
    }
  }
  P.$(".source", box).textContent = source;
  box.dataset.done = String(Number(box.dataset.done || 0) + 1);
}
function toolsExperiment(P, box, loadBox) {
  const slo = () => loadOptions(loadBox).slo.tpot;
  box.querySelector("button").addEventListener("click", () => {
    const last = loadBox.lastRun;
    if (!last) { P.$(".status", box).textContent = "还没有实验 B 的运行:先在上面跑一次。"; return; }
    const reqs = last.requests.map((r) => ({send: r.send, ttft: r.times[0] - r.send, e2el: r.times[r.times.length - 1] - r.send,
      gaps: r.times.slice(1).map((t, k) => t - r.times[k]), output: r.output}));
    showTools(P, box, P.L.toolMetrics(reqs, {start: 0, end: last.duration}, slo()), `实验 B 的上一次运行(${reqs.length} 个请求,在你的设备上测得)`);
    P.$(".status", box).textContent = "完成。括号里是和 vLLM 的口径差多少。";
  });
  box.querySelector('input[type="file"]').addEventListener("change", (e) => {
    const file = e.target.files[0];
    if (!file) return;
    file.text().then((text) => {
      try {
        const {reqs, run} = P.L.readVllmResult(text);
        showTools(P, box, P.L.toolMetrics(reqs, run, slo()), `文件 ${file.name}(${reqs.length} 个成功的请求)`);
        P.$(".status", box).textContent = "完成。文件里没有发送时刻,AIPerf 的时长(从第一个请求发出算起)算不出来。";
      } catch (err) {
        P.$(".status", box).textContent = `读不了 ${file.name}:${err.message}`;
      }
    });
  });
}

