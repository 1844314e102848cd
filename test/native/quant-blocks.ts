/** Random GGUF blocks for tests: random bytes with sane f16 scales. */
import { floatToHalfTruncated } from '../model-files/safetensors-writer.js';

export const FORMATS = { Q8_0: { weights: 32, bytes: 34 }, Q4_0: { weights: 32, bytes: 18 }, Q4_K: { weights: 256, bytes: 144 }, Q6_K: { weights: 256, bytes: 210 } } as const;
export type Format = keyof typeof FORMATS;

/** A deterministic generator (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** N random rows of K weights: random bytes, with sane f16 scales (|d| in [maxScale / 20, maxScale * 1.05]). */
export function randomRows(format: Format, N: number, K: number, seed: number, maxScale = 2e-2): Uint8Array {
  const { weights, bytes } = FORMATS[format];
  const out = new Uint8Array((N * K) / weights * bytes);
  const r = rng(seed);
  for (let i = 0; i < out.length; i++) out[i] = Math.floor(r() * 256);
  const half = (at: number, block: number) => {
    const h = floatToHalfTruncated((r() < 0.5 ? -1 : 1) * (maxScale / 20 + r() * maxScale));
    out[block + at] = h & 0xff;
    out[block + at + 1] = h >> 8;
  };
  for (let block = 0; block < out.length; block += bytes) {
    if (format === 'Q6_K') half(208, block);
    else half(0, block);
    if (format === 'Q4_K') half(2, block);
  }
  return out;
}
