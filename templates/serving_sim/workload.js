  // ---- workload.py: the two workloads whose prompts share prefixes, built from their draws at a rate ------------
  // The draws (workload.system_prompt_draws / conversation_draws: lengths, standard gamma draws, think times) do not
  // depend on the rate; the page ships them once (prefix-data.js) and builds a run's requests here, step for step
  // as workload.system_prompt_requests / conversation_requests do, so they are the same requests as the Python's.
  const SYSTEM_ID = 2 ** 40, USER_ID = 2 * 2 ** 40, TURN_ID = 3 * 2 ** 40;  // workload.py SYSTEM, USER, TURN
  function systemPromptRequests(d, rate) {
    const n = d.which.length, prompt = new Array(n), segments = new Array(n);
    for (let i = 0; i < n; i++) {
      const p = d.prefixes[d.which[i]], u = d.user_tokens[i];
      prompt[i] = p + u;
      segments[i] = [[SYSTEM_ID + d.which[i], p], [USER_ID + i, u]];
    }
    return {arrival_s: arrivalTimes(d.gamma, rate), prompt_tokens: prompt, output_tokens: d.output_tokens.slice(),
      segments, answer_ids: null, conv: null, turn: null};
  }
  function conversationRequests(d, rate) {
    const starts = arrivalTimes(d.start_gamma, rate / d.mean_turns);
    const sends = [], segs = [], outs = [], answerIds = [], conv = [], turn = [];
    let g = 0;
    for (let c = 0; c < d.counts.length; c++) {
      let history = d.system_tokens ? [[SYSTEM_ID, d.system_tokens]] : [];
      let t = starts[c];
      for (let j = 0; j < d.counts[c]; j++) {
        if (j) t += d.think_gaps_s[g];
        history = history.concat([[TURN_ID + 2 * g, d.questions[g]]]);
        sends.push(t);
        segs.push(history);
        outs.push(d.answers[g]);
        answerIds.push(TURN_ID + 2 * g + 1);
        conv.push(c);
        turn.push(j);
        history = history.concat([[TURN_ID + 2 * g + 1, d.answers[g]]]);
        g += 1;
      }
    }
    // numpy's argsort(kind="stable"): by send time, ties by position; the first n turns are the run
    const order = sends.map((_, i) => i).sort((a, b) => (sends[a] - sends[b]) || (a - b)).slice(0, d.n);
    const prompt = order.map((i) => segs[i].reduce((s, seg) => s + seg[1], 0));
    return {arrival_s: order.map((i) => sends[i]), prompt_tokens: prompt, output_tokens: order.map((i) => outs[i]),
      segments: order.map((i) => segs[i]), answer_ids: order.map((i) => answerIds[i]),
      conv: order.map((i) => conv[i]), turn: order.map((i) => turn[i])};
  }
