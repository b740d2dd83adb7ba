  // ---- loop.py: the event loop of one GPU; it only advances time -----------------------------------------------
  // A FIFO with push, shift and unshift in O(1) amortised (Python's deque, as loop.py uses it).
  function Deque() {
    let items = [], head = 0;
    return {
      get length() { return items.length - head; },
      at(k) { return items[head + k]; },
      push(x) { items.push(x); },
      shift() {
        const x = items[head++];
        if (head > 1024 && head * 2 > items.length) { items = items.slice(head); head = 0; }
        return x;
      },
      unshift(x) { if (head > 0) items[--head] = x; else items.unshift(x); },
      removeAt(k) { return items.splice(head + k, 1)[0]; },  // Python's `del deque[k]`
    };
  }
  const NO_CAP = 2 ** 62;
  // The decode batch. Every decode-carrying iteration adds a token to every running request, so contexts and tokens
  // left are kept relative to n_iters (the count of those iterations): context = ctx_base + n_iters, left = end_at -
  // n_iters. Contexts are whole numbers, so their sum is exact in any order. Each decode-carrying iteration's
  // duration without its prompt work is kept as a running sum (what breakdown's cumsum gives): the iteration ends
  // themselves are not kept (the page needs no inter-token gaps).
  class GpuLoop {
    constructor(step, scheduler, kv, maxConcurrency, releaseDelay = null) {
      this.step = step; this.scheduler = scheduler; this.kv = kv;
      this.cap = maxConcurrency || NO_CAP;
      this.release = releaseDelay === null ? null : Float64Array.from(releaseDelay);  // the client's turnaround (loop.py)
      this.peak = 0;
    }
    run(arrival, prompt, output, out, handoff) {
      this._start(arrival, prompt, output, out, handoff);
      const kv = this.kv, n = this.n;
      while (this.finished < n) {
        if (this.nxt < n && arrival[this.nxt] <= this.t) this._send();
        let used = 0, preempted = false;
        if (kv.preempts) [used, preempted] = this._makeRoom();
        if (this.queue.length && !preempted) used = this._admit(used);
        if (this.transfers.length && this.transfers.at(0)[0] <= this.t) this._landTransfers();
        this._joinBatch();
        this.peak = Math.max(this.peak, kv.inUse(this.n_iters));
        if (!this.prefilling.length && !this.dec_ids.length) {
          if (!preempted) this._idle();
          continue;
        }
        if (!this.prefilling.length) this._decodeRun(used);
        else this._prefillIteration();
        if (this.dec_ids.length && this._leftMin() === 0) this._retire();
      }
      return {cum: this.alone_cum.subarray(0, this.n_alone + 1), peak: this.peak};
    }
    _start(arrival, prompt, output, out, handoff) {
      const n = arrival.length;
      this.kv.start(prompt, output);
      this.n = n; this.out = out; this.handoff = handoff; this.pd_decode = !!handoff;
      this.arrival = arrival; this.prompt = prompt; this.output = output;
      this.queue = Deque(); this.prefilling = []; this.transfers = Deque(); this.link_free = 0;
      this.done_prefill = new Float64Array(n); this.pf_len = Float64Array.from(prompt);
      this.admit_seq = new Float64Array(n); this.resume = new Uint8Array(n); this.first_pending = new Uint8Array(n);
      this.preempted_at = new Float64Array(n).fill(NaN);
      this.dec_ids = []; this.ctx_base = []; this.end_at = []; this.joining = [[], [], []];
      this.base_sum = 0; this.min_end = Infinity; this.min_dirty = false; this.pending_first = 0;
      this.admitted = 0; this.t = 0; this.nxt = 0; this.finished = 0; this.seq = 0; this.slot_free_at = 0;
      this.alone_cum = new Float64Array(1024); this.n_alone = 0;
      this.cums = new Float64Array(1024); this.durs = new Float64Array(1024);
      this.n_iters = 0;
    }
    _send() {
      const arrival = this.arrival, out = this.out, n = this.n;
      while (this.nxt < n && arrival[this.nxt] <= this.t && this.nxt - this.finished < this.cap) {
        out.send_s[this.nxt] = Math.max(arrival[this.nxt], this.slot_free_at);  // vllm bench serve's semaphore
        this.queue.push(this.nxt);
        this.nxt += 1;
      }
    }
    _makeRoom() {  // room for every running request's next token, or preempt the scheduler's victim until there is
      const kv = this.kv;
      let used = kv.after(this.n_iters), preempted = false;
      while (used > kv.capacity) {
        const running = this.dec_ids.concat(this.prefilling);
        if (!running.length) throw new Error("the KV blocks of requests waiting for their transfer exceed the pool");
        this._preempt(this.scheduler.constructor.victim(running, this.admit_seq));
        preempted = true;
        used = kv.after(this.n_iters);
      }
      return [used, preempted];
    }
    _shortBehind(used) {  // admission by class: the first short request behind long ones, if it fits (loop.py)
      const threshold = this.scheduler.class_budget[0], queue = this.queue;
      for (let k = 0; k < queue.length; k++) {
        const i = queue.at(k);
        if (this.pf_len[i] >= threshold) continue;
        if (!this.kv.fits(i, this.pf_len[i], used)) return -1;
        queue.removeAt(k);
        return i;
      }
      return -1;
    }
    _admit(used) {  // FCFS while the head fits
      const kv = this.kv, out = this.out, queue = this.queue, t = this.t, maxBatch = this.scheduler.max_batch;
      const classes = this.scheduler.class_budget !== null;
      while (queue.length && this.admitted < maxBatch) {
        let i;
        if (kv.fits(queue.at(0), this.pf_len[queue.at(0)], used)) i = queue.shift();
        else if (classes && (i = this._shortBehind(used)) >= 0) { /* a short one past a long head */ }
        else break;
        kv.admit(i, this.pf_len[i]);
        this.admitted += 1;
        this.seq += 1;
        this.admit_seq[i] = this.seq;
        if (Number.isNaN(out.admitted_s[i])) out.admitted_s[i] = t;
        if (!Number.isNaN(this.preempted_at[i])) {
          if (this.resume[i]) out.preempt_dec_s[i] += t - this.preempted_at[i];
          else out.preempt_pre_s[i] += t - this.preempted_at[i];
          this.preempted_at[i] = NaN;
          this.done_prefill[i] = kv.prefixHit(i, this.pf_len[i]);  // a prefix cache may still hold what it lost
          this.prefilling.push(i);
        } else if (this.pd_decode) {  // P/D decode GPU: pull the KV cache, then decode
          this.link_free = Math.max(this.link_free, t) + this.handoff.transfer_s[i];
          out.transfer_end_s[i] = this.link_free;
          this.transfers.push([this.link_free, i]);
        } else {
          this.done_prefill[i] = out.cached_tokens[i] = kv.prefixHit(i, this.pf_len[i]);
          this.prefilling.push(i);
        }
        if (kv.preempts) used = kv.after(this.n_iters);
      }
      return used;
    }
    _landTransfers() {
      const transfers = this.transfers, output = this.output;
      while (transfers.length && transfers.at(0)[0] <= this.t) {
        const i = transfers.shift()[1], tokens = this.handoff.decode_tokens[i];
        this.first_pending[i] = tokens === output[i] ? 1 : 0;  // decode convention: its first token comes from here
        this.pending_first += this.first_pending[i];
        this._startDecoding(i, this.prompt[i] + output[i] - tokens, tokens);
      }
    }
    _idle() {  // nothing runs: jump to the next transfer's end or arrival
      const upcoming = this.transfers.length ? [this.transfers.at(0)[0]] : [];
      if (this.nxt < this.n) upcoming.push(this.arrival[this.nxt]);
      if (upcoming.length) this.t = Math.max(this.t, Math.min(...upcoming));
    }
    _startDecoding(i, context, tokens) {
      this.out.dec_first[i] = this.out.seg_start[i] = this.n_iters;  // its next token: the next decode iteration
      if (Number.isNaN(this.out.join_s[i])) this.out.join_s[i] = this.t;
      this.joining[0].push(i);
      this.joining[1].push(context);
      this.joining[2].push(tokens);
    }
    _joinBatch() {
      const joining = this.joining;
      for (let k = 0; k < joining[0].length; k++) {
        const base = joining[1][k] - this.n_iters, end = joining[2][k] + this.n_iters;
        this.dec_ids.push(joining[0][k]);
        this.ctx_base.push(base);
        this.end_at.push(end);
        this.base_sum += base;
        if (end < this.min_end) this.min_end = end;
        this.kv.join(joining[0][k], base);
      }
      for (const part of joining) part.length = 0;
    }
    _leftMin() {  // the fewest tokens any running request has left
      if (this.min_dirty) {
        this.min_end = Infinity;
        for (const e of this.end_at) if (e < this.min_end) this.min_end = e;
        this.min_dirty = false;
      }
      return this.min_end - this.n_iters;
    }
    _releaseAfter(freed, when) {  // the requests the freed slots let go reach the server release[i] after `when`
      const arrival = this.arrival, n = this.n;
      const start = this.nxt + Math.max(0, this.cap - (this.nxt - this.finished));
      for (let i = start; i < Math.min(n, start + freed); i++) if (arrival[i] <= when) arrival[i] = when + this.release[i];
      for (let i = Math.max(1, this.nxt); i < n; i++) {  // a later request is never sent before an earlier one
        if (arrival[i] >= arrival[i - 1]) {
          if (i >= start + freed) break;
          continue;
        }
        arrival[i] = arrival[i - 1];
      }
    }
    _removeAt(k) {
      this.base_sum -= this.ctx_base[k];
      this.kv.leave(this.dec_ids[k], this.ctx_base[k]);
      this.dec_ids.splice(k, 1);
      this.ctx_base.splice(k, 1);
      this.end_at.splice(k, 1);
      this.min_dirty = true;
    }
    _finish(ids, when, lastIter) {
      if (this.release !== null) this._releaseAfter(ids.length, when);
      if (this.nxt - this.finished >= this.cap) this.slot_free_at = when;
      for (const i of ids) {
        this.out.finish_s[i] = when;
        this.out.dec_last[i] = lastIter;
        this.kv.release(i);
        this.kv.dropped(i, this.prompt[i] + this.output[i] - 1, when);  // its last token was never fed back: no KV
      }
      this.admitted -= ids.length;
      this.finished += ids.length;
    }
    _retire() {  // those whose last token this was leave the batch, in batch order
      const done = [], keepIds = [], keepBase = [], keepEnd = [];
      for (let j = 0; j < this.dec_ids.length; j++) {
        if (this.end_at[j] === this.n_iters) {
          done.push(this.dec_ids[j]);
          this.base_sum -= this.ctx_base[j];
          this.kv.leave(this.dec_ids[j], this.ctx_base[j]);
        } else {
          keepIds.push(this.dec_ids[j]); keepBase.push(this.ctx_base[j]); keepEnd.push(this.end_at[j]);
        }
      }
      this._finish(done, this.t, this.n_iters - 1);
      this.dec_ids = keepIds; this.ctx_base = keepBase; this.end_at = keepEnd;
      this.min_dirty = true;
    }
    _emitFirst(when) {  // P/D decode convention: requests in their first iteration here emit their first token
      if (!this.pending_first) return;
      for (const i of this.dec_ids) {
        if (this.first_pending[i]) {
          this.out.first_token_s[i] = when;
          this.out.dec_first[i] += 1;
          this.first_pending[i] = 0;
          this.pending_first -= 1;
        }
      }
    }
    _preempt(i) {  // recompute: free its blocks, first in the queue; all its tokens so far prefilled again
      const out = this.out;
      out.preemptions[i] += 1;
      this.preempted_at[i] = this.t;
      const p = this.prefilling.indexOf(i);
      if (p >= 0) {
        this.prefilling.splice(p, 1);
        this.kv.release(i);
        this.kv.dropped(i, this.done_prefill[i], this.t);
        this.done_prefill[i] = 0;
      } else {
        const k = this.dec_ids.indexOf(i), generated = this.output[i] - (this.end_at[k] - this.n_iters);
        this._removeAt(k);
        this.kv.release(i);
        this.kv.dropped(i, this.prompt[i] + generated - 1, this.t);
        if (this.first_pending[i]) {  // P/D: no token yet; the decode GPU prefills the prompt itself
          this.first_pending[i] = 0;
          this.pending_first -= 1;
          this.pf_len[i] = this.prompt[i];
        } else {
          if (this.n_iters - 1 >= out.seg_start[i]) (out.pieces[i] = out.pieces[i] || []).push(["seg", out.dec_first[i], out.seg_start[i], this.n_iters - 1]);
          this.resume[i] = 1;
          this.pf_len[i] = this.prompt[i] + generated;
        }
        this.done_prefill[i] = 0;
      }
      this.admitted -= 1;
      this.queue.unshift(i);
    }
    _pushAlone(d) {
      if (this.n_alone + 1 >= this.alone_cum.length) {
        const grown = new Float64Array(2 * this.alone_cum.length);
        grown.set(this.alone_cum);
        this.alone_cum = grown;
      }
      this.alone_cum[this.n_alone + 1] = this.alone_cum[this.n_alone] + d;
      this.n_alone += 1;
    }
    _decodeRun(used) {  // pure-decode iterations up to the next event (loop.py _decode_run)
      const t = this.t, nxt = this.nxt, k = this._leftMin(), cost = this.step.cost, overhead = this.step.overhead_s;
      let steps = k, event = Infinity;
      if (!this.queue.length && nxt < this.n && this.admitted < this.scheduler.max_batch && this.kv.fits(nxt, this.pf_len[nxt], used)
          && nxt - this.finished < this.cap) event = this.arrival[nxt];  // an arrival that will be admitted
      else if (this.scheduler.class_budget !== null && nxt < this.n) event = this.arrival[nxt];  // it may pass a long head
      if (this.transfers.length) event = Math.min(event, this.transfers.at(0)[0]);  // a request that joins
      if (this.kv.preempts) steps = this.kv.stepsThatFit(this.n_iters, k);
      const nd = this.dec_ids.length, csum = this.base_sum + nd * this.n_iters;
      if (event < Infinity) {  // iterations only lengthen as contexts grow: the event falls within this many
        const first = cost.decode(nd, csum) + overhead;
        steps = Math.min(steps, Math.trunc((event - t) / first) + 2);
      }
      if (this.cums.length < steps) {
        this.cums = new Float64Array(Math.max(steps, 2 * this.cums.length));
        this.durs = new Float64Array(this.cums.length);
      }
      const cums = this.cums, durs = this.durs;
      steps = pricedRun(cost, nd, csum, steps, overhead, t, event, durs, cums);  // t + cums[s]: iteration s's end
      for (let s = 0; s < steps; s++) this._pushAlone(durs[s]);
      this.n_iters += steps;
      if (this.pd_decode) this._emitFirst(t + cums[0]);
      this.t = t + cums[steps - 1];
    }
    _prefillIteration() {  // one iteration with prompt work: the scheduler's chunks, decodes riding when it lets them
      const scheduler = this.scheduler, cost = this.step.cost, overhead = this.step.overhead_s;
      const chunks = scheduler.prefillChunks(this.prefilling, this.pf_len, this.done_prefill, this.dec_ids.length);
      const decoders = scheduler.constructor.decodes_with_prefill ? this.dec_ids.length : 0;
      const ctxSum = decoders ? this.base_sum + decoders * this.n_iters : 0;
      const [d, alone] = pricedIteration(cost, overhead, decoders, ctxSum, chunks);
      this.t += d;
      if (decoders) {
        this._pushAlone(alone);
        this.n_iters += 1;
        if (this.pd_decode) this._emitFirst(this.t);
      }
      for (const [i, s, ln] of chunks) this._prefilled(i, s + ln, d);
      this._joinBatch();
    }
    _prefilled(i, done, d) {  // a chunk of request i ran; a finished prompt emits its first (or next) token
      const out = this.out;
      if (this.resume[i] || this.pd_decode) out.preempt_dec_s[i] += d;  // recomputing what preemption threw away
      else out.own_prefill_s[i] += d;
      this.done_prefill[i] = done;
      this.kv.computed(i, done);
      if (done === this.pf_len[i]) {
        this.prefilling.splice(this.prefilling.indexOf(i), 1);
        const left = this.output[i] - (this.pf_len[i] - this.prompt[i]) - 1;
        if (this.resume[i]) {
          (out.pieces[i] = out.pieces[i] || []).push(["t", this.t]);
          this.resume[i] = 0;
        } else {
          out.first_token_s[i] = this.t;
        }
        if (left <= 0) {
          this._finish([i], this.t, -1);
          out.dec_first[i] = -1;
        } else {
          this._startDecoding(i, this.pf_len[i] + 1, left);
        }
      }
    }
  }
