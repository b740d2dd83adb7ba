// The course's tiny GPT on the student's GPU (WebGPU): the same forward as the WebAssembly kernel (kernel.wat) and
// TinyGPT (scripts/bench/tinygpt.py), in float32. gpu.js prepends the shape's constants (D, DH, HALF, NLAYER, FF,
// MAXCTX) and runs these entry points in order for a step of T tokens (vLLM's flat layout: each token has its slot
// and position): embed; per layer layernorm, linear (qkv), rope_kv, attention, linear (proj, added), layernorm,
// linear (fc, GELU), linear (out, added); then layernorm over the wanted rows and linear (the tied head).
//
// Contracts (gpu.js keeps them): every weight lives in W at the offsets in `prm`, matrices transposed to
// (in x out) so neighbouring threads read neighbouring floats; nIn is a multiple of 64; `tok` holds the step's ids,
// slots, positions and wanted rows, each `step.max_tokens` long; the caches kc and vc hold slot-major
// [slot][layer][position][D], as the WebAssembly model's; every position a token attends was written by this step's
// rope_kv or an earlier step's.

struct Step { tokens: u32, wanted: u32, max_tokens: u32, unused: u32 }
struct Params { n_in: u32, n_out: u32, w_off: u32, b_off: u32, flags: u32, layer: u32, unused0: u32, unused1: u32 }

@group(0) @binding(0) var<uniform> step: Step;
@group(0) @binding(1) var<uniform> prm: Params;
@group(0) @binding(2) var<storage, read> W: array<f32>;
@group(0) @binding(3) var<storage, read> src: array<f32>;
@group(0) @binding(4) var<storage, read_write> dst: array<f32>;
@group(0) @binding(5) var<storage, read> tok: array<u32>;
@group(0) @binding(6) var<storage, read_write> kc: array<f32>;
@group(0) @binding(7) var<storage, read_write> vc: array<f32>;
@group(0) @binding(8) var<storage, read> rope: array<f32>;  // cos then sin, each MAXCTX x HALF

const ROWS_WANTED: u32 = 1u;  // the step's wanted rows, not its tokens (the last layernorm and the head)
const ADD: u32 = 2u;          // add the result to what dst holds (the residual stream)
const GELU: u32 = 4u;         // torch's exact GELU on the result
const GATHER: u32 = 8u;       // row r reads the source row tok[wanted + r]
const LANES: u32 = 64u;
const ROWS: u32 = 4u;         // rows of a linear's thread

var<workgroup> red: array<f32, 64>;
var<workgroup> scores: array<f32, MAXCTX>;

fn rows() -> u32 {
  if ((prm.flags & ROWS_WANTED) != 0u) { return step.wanted; }
  return step.tokens;
}

// x[t] = emb[ids[t]]: one thread per float of the step
@compute @workgroup_size(64)
fn embed(@builtin(global_invocation_id) g: vec3u) {
  let t = g.x / D;
  if (t >= step.tokens) { return; }
  dst[g.x] = W[prm.w_off + tok[t] * D + g.x % D];
}

fn reduce_sum(lane: u32, value: f32) -> f32 {  // every lane's value summed; every lane gets the sum
  red[lane] = value;
  workgroupBarrier();
  for (var half = LANES / 2u; half > 0u; half = half / 2u) {
    if (lane < half) { red[lane] = red[lane] + red[lane + half]; }
    workgroupBarrier();
  }
  let total = red[0];
  workgroupBarrier();
  return total;
}

fn reduce_max(lane: u32, value: f32) -> f32 {
  red[lane] = value;
  workgroupBarrier();
  for (var half = LANES / 2u; half > 0u; half = half / 2u) {
    if (lane < half) { red[lane] = max(red[lane], red[lane + half]); }
    workgroupBarrier();
  }
  let top = red[0];
  workgroupBarrier();
  return top;
}

// nn.LayerNorm (biased variance, eps 1e-5) of one row per workgroup; gain and bias at W[w_off], W[w_off + D]
@compute @workgroup_size(64)
fn layernorm(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let r = wid.x;
  if (r >= rows()) { return; }
  var row = r;
  if ((prm.flags & GATHER) != 0u) { row = tok[3u * step.max_tokens + r]; }
  let o = row * D;
  var s = 0.0;
  for (var i = lid.x; i < D; i = i + LANES) { s = s + src[o + i]; }
  let mean = reduce_sum(lid.x, s) / f32(D);
  var v = 0.0;
  for (var i = lid.x; i < D; i = i + LANES) { let c = src[o + i] - mean; v = v + c * c; }
  let inv = 1.0 / sqrt(reduce_sum(lid.x, v) / f32(D) + 1e-5);
  for (var i = lid.x; i < D; i = i + LANES) {
    dst[r * D + i] = (src[o + i] - mean) * inv * W[prm.w_off + i] + W[prm.w_off + D + i];
  }
}

// erf by Abramowitz & Stegun 7.1.28 (|error| <= 3e-7), as the WebAssembly kernel's gelu
fn gelu(v: f32) -> f32 {
  let z = v * 0.70710678118654752;
  let q = abs(z);
  var e = 0.0000430638;
  e = 0.0002765672 + e * q;
  e = 0.0001520143 + e * q;
  e = 0.0092705272 + e * q;
  e = 0.0422820123 + e * q;
  e = 0.0705230784 + e * q;
  e = 1.0 + e * q;
  e = e * e;
  e = e * e;
  e = e * e;
  e = e * e;
  let erf_q = 1.0 - 1.0 / e;
  return 0.5 * v * (1.0 + select(-erf_q, erf_q, z >= 0.0));
}

// y = x W + b: a thread per output and four rows (workgroups (outputs / 64, rows / 4)); each weight is read once per
// four rows, the rows' floats are the same for every thread of a workgroup (a broadcast); no workgroup memory and no
// barrier (SwiftShader, the software adapter the tests run on, makes barriers slow)
@compute @workgroup_size(64)
fn linear(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let n = rows();
  let o = wid.x * LANES + lid.x;
  if (o >= prm.n_out) { return; }
  let r0 = wid.y * ROWS;
  let last = n - 1u;
  let a0 = min(r0, last) * prm.n_in;
  let a1 = min(r0 + 1u, last) * prm.n_in;
  let a2 = min(r0 + 2u, last) * prm.n_in;
  let a3 = min(r0 + 3u, last) * prm.n_in;
  var acc = vec4f(0.0);
  var wi = prm.w_off + o;
  for (var k = 0u; k < prm.n_in; k = k + 1u) {
    acc = acc + vec4f(src[a0 + k], src[a1 + k], src[a2 + k], src[a3 + k]) * W[wi];
    wi = wi + prm.n_out;
  }
  for (var r = 0u; r < ROWS; r = r + 1u) {
    let row = r0 + r;
    if (row >= n) { break; }
    var y = acc[r] + W[prm.b_off + o];
    if ((prm.flags & GELU) != 0u) { y = gelu(y); }
    let at = row * prm.n_out + o;
    if ((prm.flags & ADD) != 0u) { y = dst[at] + y; }
    dst[at] = y;
  }
}

// RoPE on q and k (pairs 2j, 2j+1 of each head) in place in the qkv rows, then k and v into the token's slot at its
// position: one thread per pair of the step
@compute @workgroup_size(64)
fn rope_kv(@builtin(global_invocation_id) g: vec3u) {
  let t = g.x / (D / 2u);
  if (t >= step.tokens) { return; }
  let i = g.x % (D / 2u);
  let p = tok[2u * step.max_tokens + t];
  let slot = tok[step.max_tokens + t];
  let j = i % HALF;
  let c = rope[p * HALF + j];
  let s = rope[MAXCTX * HALF + p * HALF + j];
  let qa = t * 3u * D + 2u * i;
  let q1 = dst[qa];
  let q2 = dst[qa + 1u];
  dst[qa] = q1 * c - q2 * s;
  dst[qa + 1u] = q1 * s + q2 * c;
  let k1 = dst[qa + D];
  let k2 = dst[qa + D + 1u];
  let at = ((slot * NLAYER + prm.layer) * MAXCTX + p) * D + 2u * i;
  kc[at] = k1 * c - k2 * s;
  kc[at + 1u] = k1 * s + k2 * c;
  vc[at] = dst[qa + 2u * D];
  vc[at + 1u] = dst[qa + 2u * D + 1u];
}

// One head of one token per workgroup (workgroups (T, heads)): scores against the slot's positions 0 ... p (causal
// inside a chunk too), softmax, the weighted sum of v into the token's row of dst
@compute @workgroup_size(64)
fn attention(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let t = wid.x;
  if (t >= step.tokens) { return; }
  let head = wid.y;
  let n = tok[2u * step.max_tokens + t] + 1u;
  let base = (tok[step.max_tokens + t] * NLAYER + prm.layer) * MAXCTX * D + head * DH;
  let q = t * 3u * D + head * DH;
  let scale = 1.0 / sqrt(f32(DH));
  var top = -3.0e38;
  for (var s = lid.x; s < n; s = s + LANES) {
    var dot = 0.0;
    for (var e = 0u; e < DH; e = e + 1u) { dot = dot + src[q + e] * kc[base + s * D + e]; }
    scores[s] = dot * scale;
    top = max(top, dot * scale);
  }
  let m = reduce_max(lid.x, top);
  var sum = 0.0;
  for (var s = lid.x; s < n; s = s + LANES) {
    let w = exp(scores[s] - m);
    scores[s] = w;
    sum = sum + w;
  }
  let total = reduce_sum(lid.x, sum);
  for (var e = lid.x; e < DH; e = e + LANES) {
    var acc = 0.0;
    for (var s = 0u; s < n; s = s + 1u) { acc = acc + scores[s] * vc[base + s * D + e]; }
    dst[t * D + head * DH + e] = acc / total;
  }
}
