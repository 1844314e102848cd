/**
 * The test/benchmark quantizers write ggml's block layouts: hand-made blocks
 * decode to the values ggml's dequantizers give, and round trips stay within
 * each format's step.
 */
import { describe, expect, it } from 'vitest';
import { floatToHalf, fromQ4_K, fromQ6_K, fromQ8_0, halfToFloat, toQ4_K, toQ6_K, toQ8_0 } from '../support/ggml-quantize.js';

function random(n: number, seed: number): Float32Array {
  let s = seed;
  return Float32Array.from({ length: n }, () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32 - 0.5) * 2);
}

describe('ggml block formats', () => {
  it('f16 rounds to nearest even', () => {
    expect(floatToHalf(1)).toBe(0x3c00);
    expect(floatToHalf(-2)).toBe(0xc000);
    expect(floatToHalf(65504)).toBe(0x7bff);
    expect(floatToHalf(1e6)).toBe(0x7c00);
    expect(floatToHalf(1 + 2 ** -11)).toBe(0x3c00); // tie -> even
    expect(floatToHalf(1 + 3 * 2 ** -11)).toBe(0x3c02); // tie -> even (up)
    expect(halfToFloat(floatToHalf(2 ** -24))).toBe(2 ** -24); // smallest subnormal
    for (const x of random(1000, 3)) expect(Math.abs(halfToFloat(floatToHalf(x)) - x)).toBeLessThanOrEqual(2 ** -12);
  });

  it('Q8_0: 34-byte blocks, error within half a step', () => {
    const x = random(32 * 8, 1);
    const q = toQ8_0(x);
    expect(q.length).toBe(8 * 34);
    const y = fromQ8_0(q);
    for (let b = 0; b < 8; b++) {
      const amax = Math.max(...x.subarray(b * 32, b * 32 + 32).map(Math.abs));
      for (let i = 0; i < 32; i++) expect(Math.abs(y[b * 32 + i]! - x[b * 32 + i]!)).toBeLessThanOrEqual((amax / 127) * 0.51 + 1e-3 * amax);
    }
  });

  it('Q4_K: a hand-made block decodes as ggml defines it', () => {
    const block = new Uint8Array(144);
    const view = new DataView(block.buffer);
    view.setUint16(0, floatToHalf(0.5), true); // d
    view.setUint16(2, floatToHalf(0.25), true); // dmin
    // Sub-block 1: scale 3, min 5 (j < 4: low 6 bits of scales[1] and scales[5]).
    block[4 + 1] = 3;
    block[4 + 5] = 5;
    // Sub-block 6: scale 0x2a (42), min 0x13 (19): low nibbles in scales[10], top 2 bits in scales[2] / scales[6].
    block[4 + 10] = (42 & 0xf) | ((19 & 0xf) << 4);
    block[4 + 2] = (42 >> 4) << 6;
    block[4 + 6] = (19 >> 4) << 6;
    // Sub-block 1 is the high nibbles of qs[0..31]; sub-block 6 the low nibbles of qs[96..127].
    block[16 + 7] = 9 << 4;
    block[16 + 96 + 4] = 11;
    const y = fromQ4_K(block);
    expect(y[32 + 7]).toBeCloseTo(0.5 * 3 * 9 - 0.25 * 5, 6);
    expect(y[32]).toBeCloseTo(-0.25 * 5, 6);
    expect(y[192 + 4]).toBeCloseTo(0.5 * 42 * 11 - 0.25 * 19, 6);
    expect(y[0]).toBe(0); // sub-block 0: scale 0, min 0
  });

  it('Q4_K round trip stays within about one step of each sub-block', () => {
    const x = random(256 * 4, 2);
    const q = toQ4_K(x);
    expect(q.length).toBe(4 * 144);
    const y = fromQ4_K(q);
    for (let s = 0; s < 32; s++) {
      const part = x.subarray(s * 32, s * 32 + 32);
      const step = (Math.max(0, ...part) - Math.min(0, ...part)) / 15;
      for (let i = 0; i < 32; i++) expect(Math.abs(y[s * 32 + i]! - part[i]!)).toBeLessThanOrEqual(step * 1.1);
    }
  });

  it('Q6_K: a hand-made block decodes as ggml defines it, and round trips stay within a step', () => {
    const block = new Uint8Array(210);
    const view = new DataView(block.buffer);
    view.setUint16(208, floatToHalf(0.125), true);
    view.setInt8(192 + 8 + 2 + 1, -3); // second half, scale for values 128 + 32 + 16..31
    // Value 128 + 32 + 20: q2 of l = 20 in the second half: low 4 bits in ql[64 + 32 + 20], high 2 in qh[128 + 32 + 20] bits 2-3.
    const q = 45; // stored q + 32 -> q = 13
    block[64 + 32 + 20] = q & 0xf;
    block[128 + 32 + 20] = (q >> 4) << 2;
    const y = fromQ6_K(block);
    expect(y[128 + 32 + 20]).toBeCloseTo(0.125 * -3 * (45 - 32), 6);
    const x = random(256 * 4, 5);
    const z = fromQ6_K(toQ6_K(x));
    for (let s = 0; s < 64; s++) {
      const part = x.subarray(s * 16, s * 16 + 16);
      const step = Math.max(...part.map(Math.abs)) / 31;
      for (let i = 0; i < 16; i++) expect(Math.abs(z[s * 16 + i]! - part[i]!)).toBeLessThanOrEqual(step * 0.6 + 0.01);
    }
  });
});
