/**
 * RoPE inverse frequencies for one head (its first rotaryDim dims), with the config's scaling applied,
 * computed the way Hugging Face transformers computes them: in float32, every
 * operation rounded (exponent 2j/d, power, reciprocal, and the llama3 blend).
 * Definitions from transformers' modeling_rope_utils: default theta^(-2j/d),
 * linear divides by the factor, llama3 divides low frequencies by the factor
 * and blends the band in between.
 *
 * Why float32: a frequency one float32 ulp away from transformers' turns
 * position p by up to ~1.2e-7 * p radians more (~4e-3 at p = 32768), so long
 * contexts drift from the reference. Emulated this way, 832 of the 840 values
 * in test/fixtures/rope-inv-freq.json are bit-identical to transformers 5.17's
 * (float64 arithmetic matched 494); the rest are 1 to 4 ulps away: torch's
 * vectorised pow is not correctly rounded, and a few llama3 blend values differ.
 */
import type { ModelConfig } from './config.js';

const f32 = Math.fround;

export function ropeInverseFrequencies(config: ModelConfig): Float64Array {
  // Partial RoPE (rotaryDim < headDim) rotates the first rotaryDim dims, its exponent over rotaryDim.
  const dims = config.rotaryDim ?? config.headDim;
  const half = dims / 2;
  const inv = new Float64Array(half);
  for (let j = 0; j < half; j++) inv[j] = f32(1 / f32(Math.pow(config.ropeTheta, f32((2 * j) / dims))));
  const scaling = config.ropeScaling;
  if (scaling === null) return inv;
  if (scaling.type === 'linear') return inv.map((f) => f32(f / f32(scaling.factor)));

  const { factor, lowFreqFactor, highFreqFactor, originalMaxPositionEmbeddings: original } = scaling;
  const lowFreqWavelen = original / lowFreqFactor;
  const highFreqWavelen = original / highFreqFactor;
  return inv.map((f) => {
    const wavelen = f32(f32(2 * Math.PI) / f);
    if (wavelen < highFreqWavelen) return f; // high frequencies: unchanged
    const scaled = f32(f / f32(factor));
    if (wavelen > lowFreqWavelen) return scaled; // low frequencies: scaled
    const smooth = f32(f32(f32(f32(original) / wavelen) - f32(lowFreqFactor)) / f32(highFreqFactor - lowFreqFactor));
    return f32(f32(f32(f32(1 - smooth) * f) / f32(factor)) + f32(smooth * f));
  });
}
