// ---- the GPU beside the CPU: what the browser offers, and the words a GPU run's readings choose -------------------
// The page asks the browser for a WebGPU adapter once, at load (gpu.js in lab/model/ finds it), and says in one
// sentence what it found: no WebGPU, no adapter, a software adapter (named as such, never as the student's GPU) or
// the student's GPU by its vendor and architecture. Each experiment box with a GPU run (`.gpu-run`, `.gpu-table`)
// shows them only where an adapter is there; every CPU experiment works the same either way.
const GPU_WORDS = {
  "no-webgpu": "你的浏览器没有 WebGPU,这一页只在 CPU 上量。Chrome、Edge(113 起)、Android 上的 Chrome、Safari 26 和 Windows 上的 Firefox 有它;换一个浏览器就能在 GPU 上再量一遍。",
  "no-adapter": "你的浏览器有 WebGPU,却没有给出能用的 GPU(可能被关掉了,或显卡驱动不在它的支持名单上;Chrome 的 chrome://gpu 页写着原因),这一页只在 CPU 上量。",
  fallback: "你的浏览器给的是软件模拟的 GPU(在 CPU 上执行),不是你的显卡:下面的 GPU 按钮能跑,但读数说的是 CPU 上的模拟。",
};
function gpuNote(found) {  // the one sentence for what gpuAdapter found
  if (!found.adapter) return GPU_WORDS[found.reason];
  if (found.info.fallback) return GPU_WORDS.fallback;
  const name = [found.info.vendor, found.info.architecture].filter(Boolean).join(" ") || "名字未公开";
  return `你的浏览器有 WebGPU,GPU 是 ${name}:下面两个实验各有一个 GPU 按钮,同一个模型在 GPU 上再量一遍。`;
}
function gpuDetect(P, doc) {
  const found = P.L.gpuAdapter ? P.L.gpuAdapter() : Promise.resolve({adapter: null, reason: "no-webgpu"});
  return found.then((f) => {
    for (const note of doc.querySelectorAll(".gpu-note")) note.textContent = gpuNote(f);
    for (const el of doc.querySelectorAll(".gpu-run, .gpu-table")) el.hidden = !f.adapter;
    doc.body.dataset.gpu = !f.adapter ? f.reason : (f.info.fallback ? "fallback" : "gpu");  // for a harness
    return f;
  });
}
// Where a GPU's decode step starts to grow: the first batch whose step is flat_ratio times batch 1's or more
// (null: it never does in the measured sizes). Rows [{batch, ms}] in batch order.
function gpuGrowth(rows, flatRatio) {
  const first = rows[0], grown = rows.find((r) => r.ms >= flatRatio * first.ms) || null;
  const last = rows[rows.length - 1];
  return {first, last, grown, gain: (last.batch / last.ms) / (first.batch / first.ms)};
}
function gpuBatchWords(P, rows, skipped, fallback) {
  const g = P.settings.gpu, f = P.fmt, soft = fallback ? "(软件模拟的 GPU,读数说的是 CPU)" : "";
  const cut = skipped.length ? `时间上限内没量到 batch ${skipped.join("、")}。` : "";
  if (rows.length < 2) return `完成${soft}。${cut}这块 GPU 一步要 ${f(rows[0].ms, 1)} ms,放不下更大的 batch。`;
  const r = gpuGrowth(rows, g.flat_ratio);
  if (!r.grown) {
    return `完成${soft}。${cut}在这块 GPU 上,batch 从 ${r.first.batch} 到 ${r.last.batch},一步只从 ${f(r.first.ms, 2)} 涨到 ${f(r.last.ms, 2)} ms`
      + `(不到 ${f(g.flat_ratio, 1)} 倍),每秒的 token 是 batch ${r.first.batch} 的 ${f(r.gain, 0)} 倍:一步的时间几乎全是固定开销(派发几十个 GPU 任务、等 logits 回到 CPU),`
      + "不是读权重,也不是算。屋顶线在这个规模不成立,课程在 M5 Max 上看到的正是这种情形。";
  }
  return `完成${soft}。${cut}在这块 GPU 上,batch ${r.grown.batch} 的一步是 batch ${r.first.batch} 的 ${f(r.grown.ms / r.first.ms, 1)} 倍:`
    + `从这一档起,一步开始跟着读写和计算的量变长;更小的 batch 一步主要是固定开销。batch ${r.last.batch} 每秒的 token 是 batch ${r.first.batch} 的 ${f(r.gain, 1)} 倍。`;
}
function gpuKvWords(P, ratio, fallback) {  // experiment A on the GPU: the longest length's median ratio
  const g = P.settings.gpu, soft = fallback ? "(软件模拟的 GPU,读数说的是 CPU)" : "";
  if (!Number.isFinite(ratio)) return `完成${soft}。时间上限内放不下任何一档,GPU 这一行空着。`;
  return ratio < g.little_ratio
    ? `完成${soft}。在这块 GPU 上有 cache 只快 ${P.fmt(ratio, 2)} 倍,和课程在 M5 Max 上的结果同一边:每一步的时间主要是固定开销,省掉的计算几乎不改变总时间。`
    : `完成${soft}。在这块 GPU 上有 cache 快 ${P.fmt(ratio, 1)} 倍,比课程在 M5 Max 上的大:这块 GPU 每步的计算还占着不少时间,省掉它就看得出来。`;
}
