// ---- experiment A: the KV cache on this device -------------------------------------------------------------------
// The percentile-bootstrap interval of the median; `next` is a mulberry32 generator (L.mulberry32).
function bootstrapMedian(L, values, next, pct, resamples = 2000) {
  const meds = new Float64Array(resamples);
  for (let k = 0; k < resamples; k++) meds[k] = L.median(values.map(() => values[Math.floor(next() / 4294967296 * values.length)]));
  meds.sort();
  const tail = (100 - pct) / 200;
  return [meds[Math.floor(tail * resamples)], meds[Math.ceil((1 - tail) * resamples) - 1]];
}
function kvExperiment(P, box) {
  const k = P.settings.kv;
  box.querySelector("button").addEventListener("click", () => P.exclusive(box, async () => {
    const bar = P.$("progress", box);
    bar.hidden = false;
    P.$(".status", box).textContent = "正在交替计时:有 cache 一次、无 cache 一次…";
    const m = await P.ask({cmd: "kv", prompt: P.seededIds(2, k.prompt_tokens), lengths: k.new_tokens, pairs: k.pairs,
      minPairs: k.min_pairs, budgetMs: k.budget_s * 1000}, "kv", (p) => { bar.value = Math.min(1, p.done / p.of); });
    bar.hidden = true;
    const med = P.L.median;
    for (const r of m.rows) {
      const tr = box.querySelector(`tr[data-new-tokens="${r.newTokens}"]`), ratios = r.kv.map((x, i) => r.nokv[i] / x);
      const [lo, hi] = bootstrapMedian(P.L, ratios, P.L.mulberry32(r.newTokens), k.interval_pct);
      P.$(".kv", tr).textContent = P.fmt(med(r.kv), 0);
      P.$(".nokv", tr).textContent = P.fmt(med(r.nokv), 0);
      P.$(".ratio", tr).textContent = `${P.fmt(med(ratios), 1)}×`;
      P.$(".interval", tr).textContent = `${P.fmt(lo, 1)}–${P.fmt(hi, 1)}×(${r.kv.length} 对)`;
    }
    for (const n of m.skipped) P.$(`tr[data-new-tokens="${n}"] .kv`, box).textContent = "设备太慢,跳过";
    P.$(".status", box).textContent = `完成,用了 ${P.fmt(m.seconds, 1)} 秒。` +
      (m.skipped.length ? `时间上限内放不下 ${m.skipped.join("、")} 个新 token 的至少 3 对,这一档跳过了。` : "");
    box.dataset.done = "1";
  }));
}

