// ---- experiment A: the KV cache on this device -------------------------------------------------------------------
// The percentile-bootstrap interval of the median; `next` is a mulberry32 generator (L.mulberry32).
function bootstrapMedian(L, values, next, pct, resamples = 2000) {
  const meds = new Float64Array(resamples);
  for (let k = 0; k < resamples; k++) meds[k] = L.median(values.map(() => values[Math.floor(next() / 4294967296 * values.length)]));
  meds.sort();
  const tail = (100 - pct) / 200;
  return [meds[Math.floor(tail * resamples)], meds[Math.ceil((1 - tail) * resamples) - 1]];
}
// The median of each length's paired ratios with its interval into `table`'s rows; the longest length's median.
function kvRows(P, table, m) {
  const k = P.settings.kv, med = P.L.median;
  let longest = NaN;
  for (const r of m.rows) {
    const tr = table.querySelector(`tr[data-new-tokens="${r.newTokens}"]`), ratios = r.kv.map((x, i) => r.nokv[i] / x);
    const [lo, hi] = bootstrapMedian(P.L, ratios, P.L.mulberry32(r.newTokens), k.interval_pct);
    P.$(".kv", tr).textContent = P.fmt(med(r.kv), 0);
    P.$(".nokv", tr).textContent = P.fmt(med(r.nokv), 0);
    const digits = med(ratios) < 3 ? 2 : 1;  // a GPU's 1.2× needs its hundredths; a CPU's 13× does not
    P.$(".ratio", tr).textContent = `${P.fmt(med(ratios), digits)}×`;
    P.$(".interval", tr).textContent = `${P.fmt(lo, digits)}–${P.fmt(hi, digits)}×(${r.kv.length} 对)`;
    longest = med(ratios);
  }
  for (const n of m.skipped) P.$(`tr[data-new-tokens="${n}"] .kv`, table).textContent = "设备太慢,跳过";
  return longest;
}
function kvExperiment(P, box) {
  const k = P.settings.kv;
  const runOn = (device, budgetS) => P.ask({cmd: "kv", device, prompt: P.seededIds(2, k.prompt_tokens), lengths: k.new_tokens,
    pairs: k.pairs, minPairs: k.min_pairs, budgetMs: budgetS * 1000}, "kv", (p) => { P.$("progress", box).value = Math.min(1, p.done / p.of); });
  box.querySelector(".cpu-run").addEventListener("click", () => P.exclusive(box, async () => {
    P.$("progress", box).hidden = false;
    P.$(".status", box).textContent = "正在交替计时:有 cache 一次、无 cache 一次…";
    const m = await runOn("cpu", k.budget_s);
    P.$("progress", box).hidden = true;
    kvRows(P, P.$(".cpu-table", box), m);
    P.$(".status", box).textContent = `完成,用了 ${P.fmt(m.seconds, 1)} 秒。` +
      (m.skipped.length ? `时间上限内放不下 ${m.skipped.join("、")} 个新 token 的至少 3 对,这一档跳过了。` : "");
    box.dataset.done = String(Number(box.dataset.done || 0) + 1);
  }));
  box.querySelector(".gpu-run").addEventListener("click", () => P.exclusive(box, async () => {
    P.$(".status", box).textContent = "正在 GPU 上建模型…";
    const gpu = await P.startGpu();
    if (!gpu.available) throw new Error(gpuNote({adapter: null, reason: gpu.reason}));
    P.$("progress", box).hidden = false;
    P.$(".status", box).textContent = "正在 GPU 上交替计时:有 cache 一次、无 cache 一次…";
    const m = await runOn("gpu", P.settings.gpu.kv_budget_s);
    P.$("progress", box).hidden = true;
    const ratio = kvRows(P, P.$(".gpu-table", box), m);
    P.$(".status", box).textContent = gpuKvWords(P, ratio, gpu.info.fallback);
    box.lastGpu = {ratio, rows: m.rows, skipped: m.skipped, info: gpu.info};  // for a harness
    box.dataset.done = String(Number(box.dataset.done || 0) + 1);
  }));
}
