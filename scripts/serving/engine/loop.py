"""The event loop of one GPU: it only advances time. At each iteration boundary it lets the client send what has
arrived, asks the KV manager for room (and the scheduler for a victim when there is none), admits waiting requests
FCFS while the scheduler's cap and the KV manager allow, lands finished KV transfers (P/D), and then runs either a
stretch of pure-decode iterations up to the next event or one iteration with prompt work (the scheduler picks its
chunks), timed by the step-cost model. Pure.

Per request the loop reads Python numbers (lists, not numpy scalars: a numpy scalar operation costs ten times a
float's, and the arithmetic is the same IEEE double either way). The decode batch is kept relative to `n_iters`,
the count of decode-carrying iterations (templates/serving_sim/loop.js keeps it so too): a running request's context
is `ctx_base + n_iters` and its tokens left `end_at - n_iters`, so an iteration changes no per-request state.
Contexts are whole numbers: their sum is exact in any order.

A run of pure-decode iterations between events (an admission, a finish, a transfer's end, the first step whose new
blocks do not fit) is priced in one pass (iteration_time.py).

Preemption (paged memory): when the running requests' next blocks do not fit, the scheduler's victim is preempted
by recompute: its blocks freed, first in the waiting queue; on readmission all its tokens so far are prefilled
again, and a request that had already streamed tokens gets its next one when that recompute ends. None is admitted
in an iteration that preempted (vLLM V1)."""
from __future__ import annotations

from collections import deque

import numpy as np

from scripts.model import roofline as rl
from scripts.serving.engine import iteration_time

NO_CAP = 1 << 62  # the client's in-flight cap when it has none


class GpuLoop:
    """One GPU serving a request stream: `scheduler` (schedulers.py), `kv` (kv.py), `step` (stepcost.py: its `cost`,
    `overhead_s` and, per run, its `pricing(kv)`). `max_concurrency`: the client sends a request only while fewer
    are in flight (vllm bench serve's semaphore). `release_delay` (with `max_concurrency`; per request, seconds): the
    client's turnaround, a request whose slot a finish freed reaches the server that long after the finish, never
    before an earlier one (a closed-loop client: the next send waits on its own bookkeeping; none: at the finish
    itself). `progress`: called with the count of requests each time some finish (a long run's reporter,
    scripts/serving/progress.py; it may raise to stop the run)."""
    # attribute reads are much of the loop's overhead: slots make them cheaper
    __slots__ = ("admit_seq", "admitted", "arrival", "base_sum", "cap", "ctx_base", "dec_alone", "dec_ids",
                 "decode_tokens", "done_prefill", "end_at", "ends", "finished", "first_pending", "joining", "kv",
                 "link_free", "min_end", "n", "n_iters", "no_decode", "nxt", "out", "output", "pd_decode", "peak",
                 "pending_first", "pf_len", "preempted_at", "prefilling", "pricing", "progress", "prompt", "queue",
                 "release", "resume", "scalar_run",
                 "scheduler", "seq", "slot_free_at", "step", "t", "transfer_s", "transfers")

    def __init__(self, step, scheduler, kv, max_concurrency: int | None = None, progress=None, release_delay=None):
        self.step, self.scheduler, self.kv, self.progress = step, scheduler, kv, progress
        self.cap = max_concurrency or NO_CAP
        self.release = None if release_delay is None else np.asarray(release_delay, dtype=float).tolist()
        self.peak = 0.0

    def run(self, arrival, prompt, output, out, handoff=None):
        """Serve requests (arrays sorted by arrival); write admitted/first-token/finish/dec indices, each request's
        own prefill and preemption time into `out`. `handoff` (P/D decode GPU): per request its KV transfer seconds
        and how many tokens this GPU computes (`decode_tokens`); the transfer starts at admission. Returns every
        iteration's end, the ends of those that gave the running decodes a token, and each of those one's duration
        without prompt work."""
        self._start(arrival, prompt, output, out, handoff)
        kv, n, arrival, queue, transfers = self.kv, self.n, self.arrival, self.queue, self.transfers
        while self.finished < n:  # (each step's guard is its first test, here to spare a call per boundary)
            if self.nxt < n and arrival[self.nxt] <= self.t:
                self._send()
            used, preempted = self._make_room() if kv.preempts else (0.0, False)
            if queue and not preempted:  # vLLM V1 admits none after a preemption
                used = self._admit(used)
            if transfers and transfers[0][0] <= self.t:
                self._land_transfers()
            if self.joining:
                self._join_batch()
            used_now = kv.in_use(self.n_iters)
            if used_now > self.peak:
                self.peak = used_now
            if not self.prefilling and not self.dec_ids:
                if not preempted:  # (after a preemption: admit at this same boundary)
                    self._idle()
                continue
            if not self.prefilling:
                self._decode_run(used)
            else:
                self._prefill_iteration()
            if self.dec_ids and self._left_min() == 0:
                self._retire()
        all_ends = np.array(self.ends, dtype=float)
        return all_ends, np.delete(all_ends, self.no_decode), np.array(self.dec_alone, dtype=float)

    # ---- state -------------------------------------------------------------------------------------------------
    def _start(self, arrival, prompt, output, out, handoff):
        n = len(arrival)
        self.kv.start(prompt, output)
        self.n, self.out, self.pd_decode = n, out, handoff is not None
        self.arrival = np.asarray(arrival, dtype=float).tolist()
        self.prompt, self.output = prompt.tolist(), output.tolist()
        if handoff is not None:
            self.transfer_s, self.decode_tokens = handoff["transfer_s"].tolist(), handoff["decode_tokens"].tolist()
        self.queue, self.prefilling = deque(), []
        self.transfers: deque = deque()  # (transfer end, request), FIFO on this GPU's inbound link
        self.link_free = 0.0
        self.done_prefill = [0] * n
        self.pf_len = list(self.prompt)  # tokens to prefill: the prompt, or after preemption all so far
        self.admit_seq = [0] * n  # admission order: the scheduler's victim
        self.resume = [False] * n  # preempted after its first token: its recompute emits its next token
        self.first_pending = [False] * n  # P/D decode convention: first token at its first iteration here
        self.preempted_at = [None] * n
        self.dec_ids: list[int] = []  # the running decodes, in the order they joined
        self.ctx_base: list[int] = []  # context - n_iters
        self.end_at: list[int] = []  # n_iters at which the last token is out
        self.joining = []  # (request, context, tokens) that start decoding at this boundary, joined at once
        self.base_sum, self.min_end, self.pending_first = 0, None, 0
        self.admitted, self.t, self.nxt, self.finished, self.seq = 0, 0.0, 0, 0, 0
        self.slot_free_at = 0.0  # when the client last got a free slot (max_concurrency)
        self.ends, self.dec_alone = [], []  # every iteration's end; each decode-carrying one's time without prompts
        self.no_decode = []  # the iterations that gave no running decode a token (none ran, or prefill-only ones)
        self.n_iters = 0
        self.scalar_run = isinstance(self.step.cost, rl.IterationCost)  # its terms inline, else the pricing's
        self.pricing = self.step.pricing(self.kv)  # what a run of iterations costs (stepcost.py: noise, slots)

    # ---- one boundary: send, make room, admit, land transfers ---------------------------------------------------
    def _send(self):
        arrival, out, n = self.arrival, self.out, self.n
        while self.nxt < n and arrival[self.nxt] <= self.t and self.nxt - self.finished < self.cap:
            out["send_s"][self.nxt] = max(arrival[self.nxt], self.slot_free_at)  # vllm bench serve's semaphore
            self.queue.append(self.nxt)
            self.nxt += 1

    def _make_room(self):
        """Room for every running request's next token (a KV manager that preempts), or preempt the scheduler's
        victim until there is."""
        kv = self.kv
        used, preempted = kv.after(self.n_iters), False
        while used > kv.capacity:
            running = self.dec_ids + self.prefilling
            if not running:
                raise ValueError("the KV blocks of requests waiting for their transfer exceed the pool")
            self._preempt(self.scheduler.victim(running, self.admit_seq))
            preempted = True
            used = kv.after(self.n_iters)
        return used, preempted

    def _admit(self, used):
        """FCFS while the head fits; a preempted request goes back to prefilling, a P/D request starts its KV
        transfer."""
        kv, out, queue, t, max_batch = self.kv, self.out, self.queue, self.t, self.scheduler.max_batch
        classes = self.scheduler.class_budget is not None
        while queue and self.admitted < max_batch:
            if kv.fits(queue[0], self.pf_len[queue[0]], used):
                i = queue.popleft()
            elif classes and (i := self._short_behind(used)) is not None:
                pass  # a short request past a long head that does not fit
            else:
                break
            kv.admit(i, self.pf_len[i])
            self.admitted += 1
            self.seq += 1
            self.admit_seq[i] = self.seq
            if np.isnan(out["admitted_s"][i]):
                out["admitted_s"][i] = t
            if self.preempted_at[i] is not None:
                out["preempt_dec_s" if self.resume[i] else "preempt_pre_s"][i] += t - self.preempted_at[i]
                self.preempted_at[i] = None
                self.done_prefill[i] = kv.prefix_hit(i, self.pf_len[i])  # a prefix cache may still hold what it lost
                self.prefilling.append(i)
            elif self.pd_decode:  # P/D decode GPU: pull the KV cache, then decode
                self.link_free = max(self.link_free, t) + self.transfer_s[i]
                out["transfer_end_s"][i] = self.link_free
                self.transfers.append((self.link_free, i))
            else:
                self.done_prefill[i] = out["cached_tokens"][i] = kv.prefix_hit(i, self.pf_len[i])
                self.prefilling.append(i)
            if kv.preempts:
                used = kv.after(self.n_iters)
        return used

    def _short_behind(self, used):
        """Admission by request class (schedulers.py class_budget): when the head does not fit, the first short
        request behind the long ones at the head, if it fits (FCFS among the short ones: a short one that does not
        fit stops the scan); None otherwise."""
        threshold, queue = self.scheduler.class_budget[0], self.queue
        for k, i in enumerate(queue):
            if self.pf_len[i] >= threshold:
                continue
            if not self.kv.fits(i, self.pf_len[i], used):
                return None
            del queue[k]
            return i
        return None

    def _land_transfers(self):
        transfers, output = self.transfers, self.output
        while transfers and transfers[0][0] <= self.t:
            i = transfers.popleft()[1]
            tokens = self.decode_tokens[i]
            self.first_pending[i] = tokens == output[i]  # decode convention: its first token comes from here
            self.pending_first += self.first_pending[i]
            self._start_decoding(i, self.prompt[i] + output[i] - tokens, tokens)

    def _idle(self):
        """Nothing runs: jump to the next transfer's end or arrival."""
        upcoming = [self.transfers[0][0]] if self.transfers else []
        if self.nxt < self.n:
            upcoming.append(self.arrival[self.nxt])
        if upcoming:
            self.t = max(self.t, min(upcoming))

    # ---- the decode batch ----------------------------------------------------------------------------------------
    def _start_decoding(self, i, context, tokens):
        out = self.out
        out["dec_first"][i] = out["seg_start"][i] = self.n_iters  # its next token: the next decode iteration
        if np.isnan(out["join_s"][i]):
            out["join_s"][i] = self.t
        self.joining.append((i, context, tokens))

    def _join_batch(self):
        n_iters, kv = self.n_iters, self.kv
        for i, context, tokens in self.joining:
            self.dec_ids.append(i)
            self.ctx_base.append(context - n_iters)
            self.end_at.append(tokens + n_iters)
            self.base_sum += context - n_iters
            if self.min_end is not None and tokens + n_iters < self.min_end:
                self.min_end = tokens + n_iters
            kv.join(i, context - n_iters)
        self.joining.clear()

    def _left_min(self):
        """The fewest tokens any running request has left."""
        if self.min_end is None:
            self.min_end = min(self.end_at)
        return self.min_end - self.n_iters

    def _remove_at(self, k):
        self.base_sum -= self.ctx_base[k]
        self.kv.leave(self.dec_ids[k], self.ctx_base[k])
        del self.dec_ids[k], self.ctx_base[k], self.end_at[k]
        self.min_end = None

    def _finish(self, ids, when, last_iter):
        out = self.out
        if self.release is not None:
            self._release_after(len(ids), when)
        if self.nxt - self.finished >= self.cap:
            self.slot_free_at = when
        kv, prompt, output = self.kv, self.prompt, self.output
        for i in ids:
            out["finish_s"][i] = when
            out["dec_last"][i] = last_iter
            kv.release(i)
            kv.dropped(i, prompt[i] + output[i] - 1, when)  # its last token was never fed back: no KV
        self.admitted -= len(ids)
        self.finished += len(ids)
        if self.progress is not None:
            self.progress(len(ids))

    def _release_after(self, freed, when):
        """The client's turnaround: the requests that get the `freed` slots (those behind the ones that already had a
        slot) and were due by `when` reach the server `release[i]` after it; the arrivals stay in send order."""
        arrival, n = self.arrival, self.n
        start = self.nxt + max(0, self.cap - (self.nxt - self.finished))
        for i in range(start, min(n, start + freed)):
            if arrival[i] <= when:
                arrival[i] = when + self.release[i]
        for i in range(max(1, self.nxt), n):  # a later request is never sent before an earlier one
            if arrival[i] >= arrival[i - 1]:
                if i >= start + freed:
                    break
                continue
            arrival[i] = arrival[i - 1]

    def _retire(self):
        """Those whose last token this was leave the batch, in batch order."""
        done, k, n_iters, end_at = [], self.end_at.index(self.n_iters), self.n_iters, self.end_at
        while k >= 0:
            done.append(self.dec_ids[k])
            self._remove_at(k)
            k = end_at.index(n_iters, k) if n_iters in end_at[k:] else -1
        self._finish(done, self.t, n_iters - 1)

    def _emit_first(self, when):
        """P/D decode convention: requests in their first iteration here emit their first token at its end."""
        if self.pending_first:
            out, first_pending = self.out, self.first_pending
            for i in self.dec_ids:
                if first_pending[i]:
                    out["first_token_s"][i] = when
                    out["dec_first"][i] += 1
                    first_pending[i] = False
                    self.pending_first -= 1

    def _preempt(self, i):
        """Recompute: free the request's blocks and put it first in the queue; all its tokens so far are prefilled
        again on readmission."""
        out = self.out
        out["preemptions"][i] += 1
        self.preempted_at[i] = self.t
        if i in self.prefilling:
            self.prefilling.remove(i)
            self.kv.release(i)
            self.kv.dropped(i, self.done_prefill[i], self.t)
            self.done_prefill[i] = 0
        else:
            k = self.dec_ids.index(i)
            generated = self.output[i] - (self.end_at[k] - self.n_iters)
            self._remove_at(k)
            self.kv.release(i)
            self.kv.dropped(i, self.prompt[i] + generated - 1, self.t)
            if self.first_pending[i]:  # P/D: no token yet; the decode GPU prefills the prompt itself
                self.first_pending[i] = False
                self.pending_first -= 1
                self.pf_len[i] = self.prompt[i]
            else:
                if self.n_iters - 1 >= out["seg_start"][i]:  # the decode iterations it had: tokens, work
                    out["pieces"].setdefault(i, []).append(("seg", int(out["dec_first"][i]),
                                                            int(out["seg_start"][i]), self.n_iters - 1))
                self.resume[i] = True
                self.pf_len[i] = self.prompt[i] + generated
            self.done_prefill[i] = 0
        self.admitted -= 1
        self.queue.appendleft(i)

    # ---- iterations ------------------------------------------------------------------------------------------
    def _decode_run(self, used):
        """Pure-decode iterations up to the next event: a finish, an arrival that will be admitted, a transfer's
        end, or the first step whose new blocks do not fit. Iteration s ends at t + (d_0 + ... + d_s) (numpy's
        cumsum, sequential) and the run stops at the first iteration starting at or after the event
        (numpy.searchsorted(starts, event, "left"))."""
        k = self._left_min()
        m, event, t, nxt = k, np.inf, self.t, self.nxt
        if not self.queue and nxt < self.n and self.admitted < self.scheduler.max_batch \
                and self.kv.fits(nxt, self.pf_len[nxt], used) \
                and nxt - self.finished < self.cap:
            event = self.arrival[nxt]  # an arrival that will be admitted
        elif self.scheduler.class_budget is not None and nxt < self.n:
            event = self.arrival[nxt]  # an arrival that may pass a long head (admission by class)
        if self.transfers:
            event = min(event, self.transfers[0][0])  # a request that joins the batch
        if self.kv.preempts:
            m = self.kv.steps_that_fit(self.n_iters, k)
        nd, overhead = len(self.dec_ids), self.step.overhead_s
        csum = self.base_sum + nd * self.n_iters
        if event < np.inf:  # iterations only lengthen as contexts grow: the event falls within this many
            first = self.pricing.shortest(nd, csum, self.dec_ids) + overhead
            m = min(m, int((event - t) / first) + 2)
        ends, alone = iteration_time.priced_run(self.step, self.pricing, self.scalar_run, nd, csum, m, t, event,
                                            self.dec_ids)
        self.ends.extend(ends)
        self.dec_alone.extend(alone)
        m, first_end, start = len(ends), ends[0], ends[-1]
        self.n_iters += m
        if self.pd_decode:
            self._emit_first(first_end)
        self.t = start

    def _prefill_iteration(self):
        """One iteration with prompt work: the scheduler's chunks, with the running decodes when it lets them ride."""
        scheduler = self.scheduler
        chunks = scheduler.prefill_chunks(self.prefilling, self.pf_len, self.done_prefill, len(self.dec_ids))
        decoders = len(self.dec_ids) if scheduler.decodes_with_prefill else 0
        ctx_sum = self.base_sum + decoders * self.n_iters if decoders else 0.0
        d, alone = iteration_time.priced_iteration(self.step, self.pricing, decoders, ctx_sum, chunks, self.dec_ids)
        self.t += d
        t = self.t
        self.ends.append(t)
        if decoders:  # an iteration that gives every running decode a token; its decode-only time:
            self.dec_alone.append(alone)
            self.n_iters += 1
            if self.pd_decode:
                self._emit_first(t)
        else:
            self.no_decode.append(len(self.ends) - 1)
        for i, s, ln in chunks:
            self._prefilled(i, s + ln, d)
        if self.joining:
            self._join_batch()

    def _prefilled(self, i, done, d):
        """Request i's chunk ran in an iteration of `d` seconds: its prompt is done up to `done`; a finished prompt
        emits its first (or after a recompute, its next) token and the request starts decoding or is done."""
        out = self.out
        if self.resume[i] or self.pd_decode:  # recomputing what preemption threw away
            out["preempt_dec_s"][i] += d
        else:
            out["own_prefill_s"][i] += d
        self.done_prefill[i] = done
        self.kv.computed(i, done)
        if done == self.pf_len[i]:
            self.prefilling.remove(i)
            left = self.output[i] - (self.pf_len[i] - self.prompt[i]) - 1  # tokens still to come after this one
            if self.resume[i]:  # the recompute emits the request's next token
                out["pieces"].setdefault(i, []).append(("t", self.t))
                self.resume[i] = False
            else:
                out["first_token_s"][i] = self.t
            if left <= 0:
                self._finish([i], self.t, -1)
                out["dec_first"][i] = -1
            else:
                self._start_decoding(i, self.pf_len[i] + 1, left)
