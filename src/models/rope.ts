/**
 * RoPE inverse frequencies for one head, with the config's scaling applied.
 * Follows Hugging Face's definitions (modeling_rope_utils): default
 * theta^(-2j/d), linear divides by the factor, llama3 divides low frequencies
 * by the factor and blends the band in between.
 *
 * Precision: computed in float64, while transformers computes inv_freq in
 * float32 (the exponent 2j/d, the power, the reciprocal and the llama3 blend
 * each rounded to float32). The CPU backend rounds each value to float32 once,
 * so about a third of the frequencies are 1 float32 ulp (~1.2e-7 relative) away
 * from transformers' value; the RoPE angle of position p then differs by up to
 * ~1.2e-7 * p radians (about 4e-3 at p = 32768). Reference logits still match
 * to 1e-4 on the test models. Kept in float64 on purpose: it is the exact
 * definition, and test/models/config.test.ts pins these values.
 */
import type { ModelConfig } from './config.js';

export function ropeInverseFrequencies(config: ModelConfig): Float64Array {
  const half = config.headDim / 2;
  const inv = new Float64Array(half);
  for (let j = 0; j < half; j++) inv[j] = 1 / Math.pow(config.ropeTheta, (2 * j) / config.headDim);
  const scaling = config.ropeScaling;
  if (scaling === null) return inv;
  if (scaling.type === 'linear') return inv.map((f) => f / scaling.factor);

  const { factor, lowFreqFactor, highFreqFactor, originalMaxPositionEmbeddings: original } = scaling;
  const lowFreqWavelen = original / lowFreqFactor;
  const highFreqWavelen = original / highFreqFactor;
  return inv.map((f) => {
    const wavelen = (2 * Math.PI) / f;
    if (wavelen < highFreqWavelen) return f; // high frequencies: unchanged
    if (wavelen > lowFreqWavelen) return f / factor; // low frequencies: scaled
    const smooth = (original / wavelen - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
    return (1 - smooth) * (f / factor) + smooth * f;
  });
}
