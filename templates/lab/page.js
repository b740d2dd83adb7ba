// ---- the page's side ------------------------------------------------------------------------------------------------
function labPage(L, doc) {
  const settings = JSON.parse(doc.getElementById("on-your-device").dataset.labSettings);
  // a harness may shorten a run (tests/test_lab_gpu.py: SwiftShader's steps are slow): {group: {key: value}}
  for (const [group, values] of Object.entries(globalThis.C13_LAB_OVERRIDES || {})) Object.assign(settings[group], values);
  const $ = (sel, root = doc) => root.querySelector(sel);
  const fmt = (x, digits) => (Number.isFinite(x) ? x.toLocaleString("en-US", {minimumFractionDigits: digits,
    maximumFractionDigits: digits}) : "—");
  let worker = null, ready = null, listener = null, busy = false;

  function newWorker() {  // the model and the worker's code from this page's own source (a Blob: file:// works)
    const sim = typeof c13ServingSim === "function" ? c13ServingSim.toString() : "const c13ServingSim = null;";
    const forced = `self.C13_KERNEL = ${JSON.stringify(globalThis.C13_KERNEL || null)};`;  // a forced kernel build, passed on
    // metrics.js: a run's metrics; gpu.js: the GPU model
    const model = "(() => { const L = c13LabModel(); Object.assign(L, c13LabMetrics(L)); return Object.assign(L, c13LabGpu(L)); })()";
    const src = `${forced}\n${c13LabModel.toString()}\n${c13LabMetrics.toString()}\n${c13LabGpu.toString()}\n${sim}\n${labTimings.toString()}\n${labWaits.toString()}\n(${labWorker.toString()})(${model}, self, c13ServingSim && c13ServingSim());\n`;
    return new Worker(URL.createObjectURL(new Blob([src], {type: "text/javascript"})));
  }
  let gpuReady = null;
  function startGpu() {  // the worker's GPU model, once: slots for the largest GPU batch and the engine's limits
    const g = settings.gpu, k = settings.kv, e = settings.engine;
    const maxContext = Math.max(e.max_context, settings.batch.position + 1, k.prompt_tokens + Math.max(...k.new_tokens));
    gpuReady = gpuReady || ask({cmd: "gpu", slots: Math.max(e.max_num_seqs, ...g.batch_sizes), maxContext,
      maxTokens: Math.max(maxContext, e.max_num_batched_tokens, ...g.batch_sizes)}, "gpu").catch((err) => { gpuReady = null; throw err; });
    return gpuReady;
  }
  let spare = null;  // a second worker: experiment E's prefill device (P/D)
  const spareWorker = () => { if (!spare) spare = newWorker(); return spare; };
  function startWorker() {
    if (ready) return ready;
    worker = newWorker();
    worker.onmessage = (e) => { if (listener) listener(e.data); };
    const e = settings.engine;
    ready = ask({cmd: "init", slots: e.max_num_seqs, maxContext: e.max_context, maxTokens: e.max_num_batched_tokens},
      "ready").then((m) => {
      $("#device-params").textContent = fmt(m.params, 0);
      $("#device-init").textContent = fmt(m.ms, 0);
      $("#device-kernel").textContent = m.kernel === "fma" ? "FMA(relaxed SIMD)" : "普通 SIMD(无 FMA)";
      return m;
    });
    return ready;
  }
  // Send one command; resolve with the message of type `until`; `onMessage` sees every other message.
  function ask(message, until, onMessage = null) {
    return new Promise((resolve, reject) => {
      listener = (m) => {
        if (m.type === "error") { listener = null; reject(new Error(m.message)); } else if (m.type === until) { listener = null; resolve(m); } else if (onMessage) onMessage(m);
      };
      worker.postMessage(message);
    });
  }
  function seededIds(seed, n) {  // token ids from the lab's generator (mulberry32, as the weights)
    const next = L.mulberry32(seed);
    return Array.from({length: n}, () => next() % L.SHAPE.vocab);
  }
  // Run one experiment at a time: its button disabled and its status line saying what happens.
  async function exclusive(box, work) {
    if (busy) { $(".status", box).textContent = "另一个实验正在运行,等它结束再点。"; return; }
    busy = true;
    delete box.dataset.error;
    box.querySelectorAll("button").forEach((b) => { b.disabled = true; });
    try {
      $(".status", box).textContent = "正在生成模型权重(在页面里按种子生成,不下载)…";
      await startWorker();
      await work();
    } catch (err) {
      $(".status", box).textContent = `出错了:${err.message}`;
      box.dataset.error = err.message;  // for a harness (scripts/bench/lab_predict.py): the run ended in an error
    } finally {
      busy = false;
      box.querySelectorAll("button").forEach((b) => { b.disabled = false; });
    }
  }
  // The student's guesses written before a run: each input.guess by its data-metric, a number or absent (a guess
  // is optional and never blocks a run).
  function guesses(box) {
    const out = {};
    for (const input of box.querySelectorAll("input.guess")) {
      const v = input.value.trim() === "" ? NaN : Number(input.value);
      if (Number.isFinite(v)) out[input.dataset.metric] = v;
    }
    return out;
  }
  return {settings, $, fmt, ask, seededIds, exclusive, startWorker, startGpu, guesses, worker: () => worker, spareWorker,
    listen: (f) => { listener = f; }};
}

