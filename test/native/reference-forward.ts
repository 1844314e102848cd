/**
 * An independent, deliberately naive float64 forward pass (full recompute, no
 * cache), written from Hugging Face's modeling code conventions. It is the
 * oracle for architecture features the shared fixtures do not cover (Qwen2
 * biases, o_proj bias, llama3 RoPE scaling, Mistral's sliding window). It is
 * itself checked against transformers' reference.json in architectures.test.ts.
 */
import type { ModelConfig } from '../../src/model-files/config.js';

export type WeightMap = ReadonlyMap<string, Float64Array>;

const get = (w: WeightMap, name: string): Float64Array => {
  const t = w.get(name);
  if (!t) throw new Error(`reference forward: missing ${name}`);
  return t;
};

/** y[rows] = W[rows, cols] x (+ b) */
function linear(W: Float64Array, x: Float64Array, rows: number, b?: Float64Array): Float64Array {
  const cols = x.length;
  const y = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let s = b ? (b[r] as number) : 0;
    for (let c = 0; c < cols; c++) s += (W[r * cols + c] as number) * (x[c] as number);
    y[r] = s;
  }
  return y;
}

function rmsnorm(x: Float64Array, w: Float64Array, eps: number): Float64Array {
  let ss = 0;
  for (const v of x) ss += v * v;
  const scale = 1 / Math.sqrt(ss / x.length + eps);
  return x.map((v, i) => v * scale * (w[i] as number));
}

/** HF's default / linear / llama3 inverse frequencies (modeling_rope_utils), written out again. */
function invFreq(c: ModelConfig): number[] {
  const d = c.headDim;
  const base = Array.from({ length: d / 2 }, (_, j) => 1 / c.ropeTheta ** ((2 * j) / d));
  const s = c.ropeScaling;
  if (!s) return base;
  if (s.type === 'linear') return base.map((f) => f / s.factor);
  const lowWavelen = s.originalMaxPositionEmbeddings / s.lowFreqFactor;
  const highWavelen = s.originalMaxPositionEmbeddings / s.highFreqFactor;
  return base.map((f) => {
    const wavelen = (2 * Math.PI) / f;
    const scaled = wavelen > lowWavelen ? f / s.factor : f;
    if (wavelen < highWavelen || wavelen > lowWavelen) return scaled;
    const smooth = (s.originalMaxPositionEmbeddings / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
    return (1 - smooth) * (scaled / s.factor) + smooth * scaled;
  });
}

/** rotate_half RoPE on one head (in place). */
function rope(v: Float64Array, offset: number, d: number, pos: number, freqs: number[]): void {
  const half = d / 2;
  for (let j = 0; j < half; j++) {
    const a = pos * (freqs[j] as number);
    const x0 = v[offset + j] as number, x1 = v[offset + j + half] as number;
    v[offset + j] = x0 * Math.cos(a) - x1 * Math.sin(a);
    v[offset + j + half] = x1 * Math.cos(a) + x0 * Math.sin(a);
  }
}

/** Logits [tokens.length][vocab] for every position. */
export function referenceForward(c: ModelConfig, w: WeightMap, tokens: readonly number[]): Float64Array[] {
  const H = c.hiddenSize, d = c.headDim, nh = c.numHeads, nkv = c.numKvHeads;
  const freqs = invFreq(c);
  const embed = get(w, 'model.embed_tokens.weight');
  let xs = tokens.map((t) => embed.slice(t * H, (t + 1) * H));
  for (let l = 0; l < c.numLayers; l++) {
    const p = `model.layers.${l}.`;
    const opt = (n: string) => w.get(p + n);
    const normed = xs.map((x) => rmsnorm(x, get(w, `${p}input_layernorm.weight`), c.rmsNormEps));
    const qs = normed.map((h) => linear(get(w, `${p}self_attn.q_proj.weight`), h, nh * d, opt('self_attn.q_proj.bias')));
    const ks = normed.map((h) => linear(get(w, `${p}self_attn.k_proj.weight`), h, nkv * d, opt('self_attn.k_proj.bias')));
    const vs = normed.map((h) => linear(get(w, `${p}self_attn.v_proj.weight`), h, nkv * d, opt('self_attn.v_proj.bias')));
    qs.forEach((q, t) => {
      for (let h = 0; h < nh; h++) {
        if (c.qkNorm) q.set(rmsnorm(q.subarray(h * d, (h + 1) * d), get(w, `${p}self_attn.q_norm.weight`), c.rmsNormEps), h * d);
        rope(q, h * d, d, t, freqs);
      }
    });
    ks.forEach((k, t) => {
      for (let h = 0; h < nkv; h++) {
        if (c.qkNorm) k.set(rmsnorm(k.subarray(h * d, (h + 1) * d), get(w, `${p}self_attn.k_norm.weight`), c.rmsNormEps), h * d);
        rope(k, h * d, d, t, freqs);
      }
    });
    const attn = qs.map((q, i) => {
      const out = new Float64Array(nh * d);
      const first = c.slidingWindow ? Math.max(0, i - c.slidingWindow + 1) : 0;
      for (let h = 0; h < nh; h++) {
        const g = Math.floor(h / (nh / nkv));
        const scores: number[] = [];
        for (let j = first; j <= i; j++) {
          let s = 0;
          for (let e = 0; e < d; e++) s += (q[h * d + e] as number) * ((ks[j] as Float64Array)[g * d + e] as number);
          scores.push(s / Math.sqrt(d));
        }
        const m = Math.max(...scores);
        const ex = scores.map((s) => Math.exp(s - m));
        const z = ex.reduce((a, b) => a + b, 0);
        for (let j = first; j <= i; j++)
          for (let e = 0; e < d; e++) out[h * d + e] = (out[h * d + e] as number) + ((ex[j - first] as number) / z) * ((vs[j] as Float64Array)[g * d + e] as number);
      }
      return out;
    });
    xs = xs.map((x, t) => {
      const o = linear(get(w, `${p}self_attn.o_proj.weight`), attn[t] as Float64Array, H, opt('self_attn.o_proj.bias'));
      const r = x.map((v, i) => v + (o[i] as number));
      const h2 = rmsnorm(r, get(w, `${p}post_attention_layernorm.weight`), c.rmsNormEps);
      const gate = linear(get(w, `${p}mlp.gate_proj.weight`), h2, c.intermediateSize);
      const up = linear(get(w, `${p}mlp.up_proj.weight`), h2, c.intermediateSize);
      const act = gate.map((g, i) => (g / (1 + Math.exp(-g))) * (up[i] as number));
      const down = linear(get(w, `${p}mlp.down_proj.weight`), act, H);
      return r.map((v, i) => v + (down[i] as number));
    });
  }
  const head = c.tieWordEmbeddings ? embed : get(w, 'lm_head.weight');
  return xs.map((x) => linear(head, rmsnorm(x, get(w, 'model.norm.weight'), c.rmsNormEps), c.vocabSize));
}
