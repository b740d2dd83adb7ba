// ---- experiment E, who waits: the worker's side (its source goes into the worker beside labWorker's) --------------
// Users decode steadily on the lab's engine; a long prompt arrives. Whole: the engine takes the prompt in one step
// (a token budget of prompt + users). Chunked: the budget is the chunk + users, so every step carries one chunk.
// P/D: a second worker (another core, when the device has one) prefills the prompt on its own copy of the model and
// hands the KV to this one, which joins the request as a decoder; no step here holds a prompt token. The users are
// set up the same way in all three (prefilled outside the engine, then joined): only the long prompt differs.
function labWaits(L, w) {
  const clock = () => performance.timeOrigin + performance.now();
  const models = new Map();
  let waiting = null;  // a P/D run waiting for its KV: {wake}
  // One model per shape, kept (weights take a moment to build), and warmed: a fresh page runs the WASM kernel's
  // baseline tier for its first seconds (the calibration found steps up to a fifth slow), so a new model runs the
  // prompt's shapes a few times, unmeasured, before any set-up is timed.
  function modelFor(slots, maxContext, maxTokens, prompt) {
    const key = `${slots}/${maxContext}/${maxTokens}`;
    if (!models.has(key)) {
      const model = new L.TinyModel({slots, maxContext, maxTokens});
      for (let k = 0; k < 3; k++) {
        for (const n of [prompt.length, Math.min(64, prompt.length), 1]) {
          const ids = prompt.slice(0, n);
          model.forward(ids, ids.map(() => 0), ids.map((_, i) => i), [n - 1]);
        }
      }
      models.set(key, model);
    }
    return models.get(key);
  }
  function join(engine, model, req) {  // prefill `req` into a slot outside the engine, then join it as a decoder
    const slot = engine.takeSlot(), ids = req.prompt;
    const logits = model.forward(ids, ids.map(() => slot), ids.map((_, i) => i), [ids.length - 1]);
    engine.inject(req, slot, model.argmax(logits, 0));
  }
  function budget(m) {
    if (m.mode === "whole") return m.prompt.length + m.users;
    return m.mode === "chunked" ? m.chunk + m.users : m.users + 1;
  }
  // One step: its start and end on the shared clock, its decoders and its prompt tokens; each token's arrival.
  function step(engine, steps, arrivals) {
    const t0 = clock(), s = engine.step(), t1 = clock();
    steps.push({start: t0, end: t1, decoders: s.shape.decoders, prompt: s.shape.chunks.reduce((a, [, n]) => a + n, 0)});
    for (const [id, token] of s.events) (arrivals[id] = arrivals[id] || []).push([t1, token]);
  }
  async function waits(m) {  // m: {mode, users, userPrompts, prompt, longOutput, chunk, warmSteps, tailSteps, maxContext}
    // every slot keeps room for the users to decode through a slow prefill; one shape for all three set-ups
    const maxContext = Math.max(m.prompt.length + m.longOutput + 8, m.maxContext);
    const model = modelFor(m.users + 1, maxContext, m.prompt.length + m.users, m.prompt);
    const engine = new L.Engine(model, {maxNumSeqs: m.users + 1, maxBatchedTokens: budget(m), sim: w.sim});
    m.userPrompts.forEach((prompt, u) => join(engine, model, {id: `u${u}`, prompt, outputLen: maxContext - prompt.length}));
    const steps = [], arrivals = {};
    for (let k = 0; k < m.warmSteps; k++) { step(engine, steps, arrivals); await w.yieldTask(); }
    const arrive = clock(), long = {id: "long", prompt: m.prompt, outputLen: m.longOutput};
    let moved = null;
    if (m.mode === "pd") {
      const got = new Promise((wake) => { waiting = {wake}; });
      w.post({type: "arrive", at: arrive});
      let message = null;
      got.then((msg) => { message = msg; });
      while (!message) { step(engine, steps, arrivals); await w.yieldTask(); }
      const received = clock(), block = new Float32Array(message.kv), slot = engine.takeSlot();
      model.importKV(slot, m.prompt.length, block);
      engine.inject(long, slot, message.first);
      moved = {sent: message.sent, received, copied: clock(), prefillStart: message.start, prefillEnd: message.end,
        bytes: block.byteLength, first: message.first};
      arrivals.long = [[moved.copied, message.first]];
    } else engine.add(long);
    let tail = m.tailSteps;
    while (tail > 0) {
      step(engine, steps, arrivals);
      if (!engine.running.some((r) => r.id === "long")) tail -= 1;
      await w.yieldTask();
    }
    w.post({type: "waits", mode: m.mode, arrive, steps, arrivals, moved});
  }
  function prefill(m) {  // the prefill device: the whole prompt in one step, the first token, the KV handed over
    const model = modelFor(1, m.prompt.length, m.prompt.length, m.prompt), ids = m.prompt, start = clock();
    const logits = model.forward(ids, ids.map(() => 0), ids.map((_, i) => i), [ids.length - 1]);
    const first = model.argmax(logits, 0), end = clock(), kv = model.exportKV(0, ids.length).buffer;
    const sent = clock();
    w.transfer({type: "prefilled", first, kv, start, end, sent}, [kv]);
  }
  // The prompt's cost at this experiment's lengths, for the prediction (experiment C's calibration holds prompts of at
  // most a few hundred tokens, where a prompt's quadratic term cannot be told apart), timed on the prefill device:
  // the prompt alone in one step (the P/D prefill), then beside the users' decode tokens as the decode device's steps
  // hold it, whole and chunk by chunk (a step's decode tokens share its pass over the weights, so the prompt's price
  // beside them is not its price alone). Logits are wanted where the engine wants them: each decoder, and the prompt's
  // last token when the step ends it. One untimed chunk first warms this model.
  function probe(m) {
    const maxContext = Math.max(m.prompt.length + m.longOutput + 8, m.maxContext), P = m.prompt.length, rows = [];
    const model = modelFor(m.users + 1, maxContext, P + m.users, m.prompt.slice(0, m.chunk)), ctx = m.userPrompts.map((u) => u.length);
    m.userPrompts.forEach((u, k) => model.forward(u, u.map(() => k + 1), u.map((_, i) => i), [u.length - 1]));
    const timed = (start, n, withUsers, record = true) => {
      const ids = m.prompt.slice(start, start + n), slots = ids.map(() => 0), pos = ids.map((_, i) => start + i);
      const wanted = start + n === P ? [n - 1] : [];
      let contextSum = 0;
      if (withUsers) {
        m.userPrompts.forEach((u, k) => {
          wanted.push(ids.length); ids.push(u[0]); slots.push(k + 1); pos.push(ctx[k]); contextSum += ctx[k] + 1; ctx[k] += 1;
        });
      }
      const t0 = clock();
      model.forward(ids, slots, pos, wanted);
      if (record) rows.push({decoders: withUsers ? m.users : 0, contextSum, chunks: [[start, n]], seconds: (clock() - t0) / 1000});
    };
    timed(0, Math.min(m.chunk, P), true, false);
    timed(0, P, false);
    timed(0, P, true);
    for (let start = 0; start < P; start += m.chunk) timed(start, Math.min(m.chunk, P - start), true);
    w.post({type: "probed", rows});
  }
  function handoff(m) {  // the decode device receives the prefill's KV (moved between workers, not copied)
    if (!waiting) throw new Error("a KV block arrived with no P/D run waiting for it");
    const h = waiting;
    waiting = null;
    h.wake(m);
  }
  return {waits, prefill, probe, handoff};
}

// ---- experiment E, the page's side: run the three set-ups, measure who waited, draw the swimlanes -----------------
const WAIT_MODES = ["whole", "chunked", "pd"];
// One set-up's measurement: the users' token gaps that end while the long prompt is in the system (from its arrival
// to one step after its first token), the longest and the p99, the long request's TTFT, the steady step before it.
function waitFigures(L, run) {
  const longFirst = run.arrivals.long[0][0], next = run.steps.find((s) => s.start >= longFirst);
  const until = next ? next.end : longFirst;
  const inWindow = [], before = [];
  for (const [id, times] of Object.entries(run.arrivals)) {
    if (id === "long") continue;
    for (let k = 1; k < times.length; k++) {
      const gap = times[k][0] - times[k - 1][0], at = times[k][0];
      if (at > run.arrive && at <= until) inWindow.push(gap); else if (at <= run.arrive) before.push(gap);
    }
  }
  const sorted = Float64Array.from(inWindow).sort();
  return {ttft: longFirst - run.arrive, longestGap: sorted.length ? sorted[sorted.length - 1] : null,
    gapP99: sorted.length ? L.npPercentile(sorted, 99) : null, steady: before.length ? L.median(before) : null,
    promptSteps: run.steps.filter((s) => s.prompt > 0 && s.start >= run.arrive).length,
    handoff: run.moved ? run.moved.copied - run.moved.sent : null, prefill: run.moved ? run.moved.prefillEnd - run.moved.prefillStart : null,
    bytes: run.moved ? run.moved.bytes : null, until};
}
// The swimlanes as the lesson draws them: the decode device's steps (a step holding prompt tokens marked), the
// prefill device's prompt and the hand-off (P/D), from the arrival to one step after the first token; measured.
function drawLanes(svg, run, f, spanMs) {
  const W = 600, lane = 22, x = (t) => Math.max(0, Math.min(W, ((t - run.arrive) / spanMs) * W));
  const rect = (t0, t1, y, cls) => `<rect class="${cls}" x="${x(t0).toFixed(1)}" y="${y}" width="${Math.max(0.8, x(t1) - x(t0)).toFixed(1)}" height="${lane - 6}"></rect>`;
  let body = run.steps.filter((s) => s.end >= run.arrive && s.start <= run.arrive + spanMs)
    .map((s) => rect(s.start, s.end, 3, s.prompt > 0 ? "lane-prompt" : "lane-decode")).join("");
  if (run.moved) body += rect(run.moved.prefillStart, run.moved.prefillEnd, lane + 3, "lane-prompt") + rect(run.moved.sent, run.moved.copied, lane + 3, "lane-move");
  const first = run.arrivals.long[0][0];
  body += `<line class="lane-first" x1="${x(first).toFixed(1)}" x2="${x(first).toFixed(1)}" y1="0" y2="${2 * lane}"></line>`;
  svg.setAttribute("viewBox", `0 0 ${W} ${2 * lane}`);
  svg.innerHTML = body;
}
async function runWaits(P, box, o) {
  const W = P.settings.waits, out = {};
  const userPrompts = Array.from({length: W.users}, (_, u) => P.seededIds(W.seed + u, W.user_prompt));
  const base = {users: W.users, userPrompts, prompt: P.seededIds(W.seed + 100, o.prompt), longOutput: W.long_output,
    chunk: o.chunk, warmSteps: W.warm_steps, tailSteps: W.tail_steps, maxContext: W.user_prompt + W.user_room};
  const spare = P.spareWorker(), askSpare = (message) => new Promise((resolve) => {
    spare.onmessage = (e) => resolve(e.data);
    spare.postMessage(message);
  });
  const warm = async () => {  // the prefill device builds its model and warms up
    const m = await askSpare({cmd: "prefill", prompt: base.prompt});
    return m.end - m.start;
  };
  let prefillMs = await warm();
  // a slow device: the three set-ups take about four prefills of the prompt (the probe for a prediction three more); a
  // shorter prompt keeps the bound
  const shorter = W.prompts.filter((n) => n < base.prompt.length), prefills = o.onProbed ? 7 : 4;
  while (prefills * prefillMs > W.budget_s * 1000 && shorter.length) {
    base.prompt = P.seededIds(W.seed + 100, shorter.pop());
    prefillMs = await warm();
  }
  if (o.onProbed) o.onProbed(base.prompt.length, (await askSpare({...base, cmd: "probe"})).rows);
  out.shrunk = base.prompt.length < o.prompt ? base.prompt.length : null;
  for (const mode of WAIT_MODES) {
    P.$(".status", box).textContent = `正在跑「${P.$(`tr[data-mode="${mode}"] td`, box).textContent}」…`;
    out[mode] = await P.ask({...base, cmd: "waits", mode}, "waits", (m) => {
      if (m.type !== "arrive") return;
      spare.onmessage = (e) => { P.worker().postMessage({...e.data, cmd: "handoff"}, [e.data.kv]); };
      spare.postMessage({cmd: "prefill", prompt: base.prompt});
    });
  }
  return out;
}
// The step models the prediction uses: experiment C's decode side (its D per batch and attention) with prompt terms
// fitted again on the probe's rows by C's own fit (calibration.js fitPromptTerms: what a step took beyond D and
// attention): `beside` on the rows with the users' decode tokens, for the decode device's steps; `alone` on the
// prompt alone, for the prefill device (P/D).
function waitsStepModel(S, stepModel, probeRows) {
  const target = promptTarget(new S.StepModel(stepModel));
  const fit = (rows) => {
    const [a, b, c] = fitPromptTerms(target, rows);
    return {...stepModel, prompt_chunk_s: a, prompt_token_s: b, prompt_pair_s: c};
  };
  return {beside: fit(probeRows.filter((r) => r.decoders > 0)), alone: fit(probeRows.filter((r) => r.decoders === 0))};
}
// The prediction before the run: the lesson's rules for the three set-ups priced by the step models above
// (S.StepModel: a decode step of the users at their context, a prompt chunk by its start and length):
// whole, one step holding the prompt stalls every user and is the TTFT; chunked, one chunk a step, the longest step
// stalls the users and the steps add up to the TTFT; P/D, the users' steps stay decode steps and the TTFT is the
// prompt's prefill alone on the other device (the move between workers is not in the simulator: measured only). Whole and
// chunked are the twin's orca and sarathi rules to the digit (tests/test_lab_steps.py). Seconds.
function predictWaits(S, models, W, o) {
  const sm = new S.StepModel(models.beside), alone = new S.StepModel(models.alone);
  const n = W.users, ctx = n * (W.user_prompt + W.warm_steps), P = o.prompt, chunks = [];
  for (let start = 0, k = 0; start < P; start += o.chunk, k++) {  // each step the users' contexts grow a token
    chunks.push(sm.seconds(n, ctx + k * n, [[start, Math.min(o.chunk, P - start)]]));
  }
  const whole = sm.seconds(n, ctx, [[0, P]]);
  return {whole: {longestGap: whole, ttft: whole}, chunked: {longestGap: Math.max(...chunks), ttft: chunks.reduce((a, b) => a + b, 0)},
    pd: {longestGap: sm.decode(n, ctx), ttft: alone.seconds(0, 0, [[0, P]])}};
}
function showPrediction(P, box, predicted) {
  for (const mode of WAIT_MODES) {
    for (const col of ["longest", "ttft"]) {
      const v = predicted ? predicted[mode][col === "longest" ? "longestGap" : "ttft"] * 1000 : null;
      P.$(`tr[data-mode="${mode}"] .${col}-pred`, box).textContent = v === null ? "" : `预测 ${P.fmt(v, col === "ttft" ? 0 : 1)}`;
    }
  }
}
// The cores in words, chosen by the measurement: whether the P/D decode steps stayed near the steady step while the
// other worker prefilled (each had a core) or were stretched (they shared one).
function coresWords(n, f) {
  const shared = f.pd.longestGap > 3 * f.whole.steady;
  const have = `你的浏览器报告 ${n || "未知数目的"} 个逻辑核心`;
  return shared
    ? `${have}。这次 P/D 里解码的最长间隔是平稳时的 ${Math.round(f.pd.longestGap / f.whole.steady)} 倍:预填 Worker、解码 Worker 和页面挤在一起轮流用核心,预填把解码拉长了;真正分开的两张卡不会这样。`
    : `${have}。这次 P/D 里解码的最长间隔只是平稳时的 ${(f.pd.longestGap / f.whole.steady).toFixed(1)} 倍:预填 Worker 和解码 Worker 各占了一个核心,像两张卡一样同时工作${n && n <= 2 ? "(只有两个核心,页面一忙起来就会抢走其中一个)" : ""}。`;
}
function showWaits(P, box, runs) {
  const figs = Object.fromEntries(WAIT_MODES.map((m) => [m, waitFigures(P.L, runs[m])]));  // runs.shrunk: not a mode
  const span = Math.max(...WAIT_MODES.map((m) => figs[m].until - runs[m].arrive)) * 1.05;
  for (const mode of WAIT_MODES) {
    const f = figs[mode], row = P.$(`tr[data-mode="${mode}"]`, box), ms = (v, d) => (v === null ? "—" : P.fmt(v, d));
    P.$(".longest .meas", row).textContent = ms(f.longestGap, 1);
    P.$(".p99", row).textContent = ms(f.gapP99, 1);
    P.$(".ttft .meas", row).textContent = ms(f.ttft, 0);
    P.$(".handoff", row).textContent = f.handoff === null ? "—" : `${P.fmt(f.handoff, 1)}(${P.fmt(f.bytes / 1e6, 1)} MB)`;
    drawLanes(P.$(`svg[data-mode="${mode}"]`, box), runs[mode], f, span);
  }
  P.$(".steady", box).textContent = P.fmt(figs.whole.steady, 1);
  P.$(".cores", box).textContent = coresWords(navigator.hardwareConcurrency || 0, figs);
  P.$(".span", box).textContent = P.fmt(span, 0);
  box.lastWaits = {runs, figs};
  box.dataset.done = String(Number(box.dataset.done || 0) + 1);
}
function waitsExperiment(P, box, predictBox) {
  const choose = (name) => Number(P.$(`select[name="${name}"]`, box).value), n = navigator.hardwareConcurrency || 0;
  P.$(".cores", box).textContent = `P/D 要第二个核心。你的浏览器报告 ${n || "未知数目的"} 个逻辑核心${n && n <= 2
    ? ":页面、预填 Worker 和解码 Worker 要共用它们,跑完看 P/D 一行的解码受了多少影响。" : ",预填和解码的 Worker 可以各占一个。"}`;
  box.querySelector("button").addEventListener("click", () => P.exclusive(box, async () => {
    const o = {prompt: choose("waits_prompt"), chunk: choose("waits_chunk")}, cal = predictBox && predictBox.lastCheck;
    showPrediction(P, box, null);
    P.$(".pred-note", box).hidden = Boolean(cal && P.S);
    if (cal && P.S) {  // the prediction, shown before the three set-ups run
      o.onProbed = (prompt, rows) => showPrediction(P, box, predictWaits(P.S, waitsStepModel(P.S, cal.stepModel, rows),
        P.settings.waits, {...o, prompt}));
    }
    const runs = await runWaits(P, box, o);
    showWaits(P, box, runs);
    P.$(".status", box).textContent = `完成。三种做法用的是同一批用户、同一个长 prompt;每个数都在你的设备上刚测出。${runs.shrunk
      ? `你的设备上这个 prompt 的 prefill 较慢,为了不超过 ${P.settings.waits.budget_s} 秒,这次改用 ${runs.shrunk} token 的 prompt。` : ""}`;
  }));
}
