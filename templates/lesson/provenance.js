
  // ---- provenance pop-over -----------------------------------------------------------------
  // Every number opens its record from the keyboard too (set here rather than in 600 attributes of the HTML).
  document.querySelectorAll("[data-prov]").forEach((el) => { if (el.tabIndex < 0) el.tabIndex = 0; });
  const pop = document.getElementById("prov-pop");
  const RECORD_KINDS = labelsOf("record_kinds"), PRESET_LABELS = labelsOf("presets");  // scripts/common/names.json
  const UNIT_WORDS = DATA.names.units || {};
  const ASSUMPTIONS_ZH = DATA.names.assumptions || {};
  const unitWord = (u) => (u ? (UNIT_WORDS[u] || u) : "");
  // What a student reads first (what the number is, which kind, where it comes from, in one or two lines); the
  // record's machinery (id, formula, arguments, script) goes behind a "技术细节" toggle.
  function describe(rec, shown) {
    const value = `${rec.display} ${unitWord(rec.unit)}`.trim();
    const main = [[rec.label || rec.id, ""], ["类别", RECORD_KINDS[rec.kind] || rec.kind]];
    if (shown != null && shown !== rec.display) {
      const now = `${shown} ${unitWord(rec.unit)}`.trim();
      main.push(["当前", `${now}(按你现在的设置在浏览器里算出)`], ["默认设置下", value]);
    } else {
      main.push(["数值", value]);
    }
    const detail = [["编号", rec.id]];
    if (rec.kind === "derived") {
      main.push(["怎么来的", `由脚本 ${rec.script} 按公式算出`]);
      detail.push(["公式", rec.formula + (rec.key ? ` → ${rec.key}` : "")], ["参数", JSON.stringify(rec.args)],
        ["输入", "每个输入字段和它的值,见下方「在出处表中查看」"]);  // the page carries no input lists
    } else if (rec.kind === "cited") {
      main.push(["出处", rec.work], ["提出方自报", rec.self_reported ? "是" : "否"]);
      detail.push(["版本", rec.version || ""], ["位置", rec.locator]);
    } else if (rec.kind === "measured") {
      main.push(["机器", rec.machine], ["日期", rec.date], ["重复次数", String(rec.runs)], ["离散", rec.spread]);
      detail.push(["文件", rec.file]);
    } else if (rec.kind === "simulated") {
      const workloads = (window.C13_SERVING || {}).workloads || {};
      main.push(["负载", workloads[rec.workload] || rec.workload], ["调度", SCHEDULE_LABELS[rec.schedule] || PRESET_LABELS[rec.schedule] || rec.schedule]);
      if (rec.rate_per_gpu != null) main.push(["每卡请求率", `${rec.rate_per_gpu} req/s`]);
      const iv = rec.interval;
      if (iv && iv.low != null) {  // the same number over the sweep's seeds (scripts/serving/measures/uncertainty.py)
        const f = (v) => formatNumber(v, rec.format), off = shown != null && shown !== rec.display;
        main.push([`${iv.replications} 个种子重跑`, `均值 ${f(iv.mean)},${Math.round(iv.confidence * 100)}% 区间 ` +
          `${f(iv.low)}–${f(iv.high)} ${unitWord(rec.unit)}${off ? "(默认设置下)" : ""}`.trim()]);
        detail.push(["各种子的值", iv.values.map(f).join(", ")], ["各种子", iv.seeds.join(", ")]);
      }
      detail.push(["请求数", String(rec.requests)], ["种子", String(rec.seed)], ["脚本", rec.script]);
      if (rec.formula) detail.push(["公式", rec.formula], ["参数", JSON.stringify(rec.args)]);
    } else if (rec.kind === "assumed") {  // the config's sentence in Chinese (scripts/common/names.json assumptions)
      const zh = ASSUMPTIONS_ZH[rec.assumption];
      main.push(["依据", zh || rec.assumption]);
      if (zh) detail.push(["配置文件原文", rec.assumption]);
    } else if (rec.kind === "calibrated") {  // a prediction from a model fitted to a separate measurement
      main.push(["怎么来的", rec.fit], ["用到的数据", "校准记录和各次运行的结果文件(文件名见技术细节)"]);
      detail.push(["数据文件", (rec.data || []).join(", ")], ["脚本", rec.script], ["参数", JSON.stringify(rec.args)]);
    }
    return {main, detail};
  }
  // A readout of the under-load experiment away from the build's settings: the inputs and engine settings the
  // browser simulated it with (serving-sim.js, the twin of scripts/serving/engine/).
  function simulatedHere(schedule) {
    const e = engineOf(state), T = twin(), S = window.C13_SERVING;
    const settings = [`${GPUS[e.gpu].label}`, e.step_time === "bound" ? "屋顶线上界" : "现实步时"];
    if (schedule === "chunked") settings.push(`分块预算 ${formatNumber(e.chunk, "int")} token`);
    if (schedule === "disagg") settings.push(`prefill : decode = ${e.split}`);

    return [["怎么来的", "你的浏览器刚刚模拟的(serving-sim.js,与构建用的 Python 模拟器逐请求一致)"],
      ["模拟设置", `${settings.join("、")};「${S.workloads[state.workload]}」负载,每卡 ` +
        `${formatNumber(state.request_rate, "f1")} req/s,${formatNumber(T.settings.requests, "int")} 个请求(种子 ` +
        `${T.traces[state.workload].seed})`]];
  }
  function rowOf(k, v) {
    const row = document.createElement("div");
    const key = document.createElement("b");
    key.textContent = k;
    row.append(key, document.createTextNode(v ? ` ${v}` : ""));
    return row;
  }
  function showProv(el) {
    const id = el.dataset.prov;
    const rec = PROV[id];
    if (!pop || !rec) return;
    pop.replaceChildren();
    const {main, detail} = describe(rec, el.textContent.trim() || null);
    if (el.dataset.readout && el.closest("#exp-load") && twin() && !onBuildSettings(state)) {
      main.splice(3, 0, ...simulatedHere(el.dataset.readout.split(".").pop()));  // what this browser simulated
    }
    for (const [k, v] of main) pop.append(rowOf(k, v));
    const more = document.createElement("details");
    const summary = document.createElement("summary");
    summary.textContent = "技术细节";
    more.append(summary, ...detail.map(([k, v]) => rowOf(k, v)));
    pop.append(more);
    const link = document.createElement("a");
    link.href = `provenance.html#${encodeURIComponent(id)}`;
    link.textContent = "在出处表中查看 →";
    pop.append(link);
    const box = el.getBoundingClientRect(), width = Math.min(340, document.documentElement.clientWidth - 16);
    pop.style.maxWidth = `${width}px`;
    pop.style.top = `${window.scrollY + box.bottom + 6}px`;
    pop.style.left = `${Math.max(window.scrollX + 8, Math.min(window.scrollX + box.left,
      window.scrollX + document.documentElement.clientWidth - width - 8))}px`;
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
