// ---- batch scaling: one decode step at B = 1 ... 16 on the CPU, and at gpu.batch_sizes on the GPU ----------------
function batchRows(P, table, rows) {  // each measured row's step, token/s and gain over the first row
  const base = rows[0].batch / rows[0].ms;
  for (const r of rows) {
    const tr = table.querySelector(`tr[data-batch="${r.batch}"]`), tput = r.batch / r.ms * 1000;
    P.$(".ms", tr).textContent = P.fmt(r.ms, 2);
    P.$(".tput", tr).textContent = P.fmt(tput, 0);
    P.$(".gain", tr).textContent = `${P.fmt(tput / 1000 / base, 1)}×`;
  }
}
function batchExperiment(P, box) {
  const b = P.settings.batch, g = P.settings.gpu;
  box.querySelector(".cpu-run").addEventListener("click", () => P.exclusive(box, async () => {
    P.$(".status", box).textContent = "正在计时…";
    const prompt = P.seededIds(1, b.position);
    const m = await P.ask({cmd: "batches", sizes: b.sizes, prompt, samples: b.samples, stepsPerSample: b.steps_per_sample}, "batches",
      (p) => { P.$(".status", box).textContent = `正在计时:${p.done} / ${p.of}`; });
    batchRows(P, P.$(".cpu-table", box), m.rows);
    const base = m.rows[0].batch / m.rows[0].ms, last = m.rows[m.rows.length - 1], gain = (last.batch / last.ms) / base;
    P.$(".status", box).textContent = gain >= 1.5
      ? `完成。在你的设备上,batch ${last.batch} 每秒吐出的 token 是 batch 1 的 ${P.fmt(gain, 1)} 倍:一步读一遍权重,服务的请求越多,摊到每个 token 上越少。`
      : `完成。在你的设备上 batch ${last.batch} 只有 batch 1 的 ${P.fmt(gain, 1)} 倍:这台设备算得慢、读内存相对快,一步的时间主要花在算上,加请求就是加计算,摊不薄。`;
    box.dataset.done = String(Number(box.dataset.done || 0) + 1);
  }));
  box.querySelector(".gpu-run").addEventListener("click", () => P.exclusive(box, async () => {
    P.$(".status", box).textContent = "正在 GPU 上建模型(权重按种子生成后传给 GPU)…";
    const gpu = await P.startGpu();
    if (!gpu.available) throw new Error(gpuNote({adapter: null, reason: gpu.reason}));
    const m = await P.ask({cmd: "batches", device: "gpu", sizes: g.batch_sizes, prompt: P.seededIds(1, b.position),
      samples: b.samples, stepsPerSample: b.steps_per_sample, budgetMs: g.budget_s * 1000}, "batches",
      (p) => { P.$(".status", box).textContent = `正在 GPU 上计时:${p.done} / ${p.of}`; });
    const table = P.$(".gpu-table", box);
    batchRows(P, table, m.rows);
    for (const B of m.skipped) P.$(`tr[data-batch="${B}"] .ms`, table).textContent = "超时,跳过";
    P.$(".status", box).textContent = gpuBatchWords(P, m.rows, m.skipped, gpu.info.fallback);
    box.lastGpu = {rows: m.rows, skipped: m.skipped, info: gpu.info};  // for a harness
    box.dataset.done = String(Number(box.dataset.done || 0) + 1);
  }));
}
