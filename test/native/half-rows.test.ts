// The KV cache's float -> half conversion (native/src/cpu/kernels/half/half_rows.h): the
// F16C kernel gives the baseline's bits for every finite value and infinity,
// and the baseline rounds to the nearest half, ties to even, checked here
// against the halves' exact values (not against the native code).
import { describe, expect, it } from 'vitest';
import { loadNativeBinding } from '../../src/backends/cpu/native-binding.js';
import { halfToFloat } from '../model-files/safetensors-writer.js';

const testing = loadNativeBinding().testing;

/** Values that probe the rounding: every half, the midpoints between neighbours (ties), just off them, the edges, random bits. */
function probes(): Float32Array {
  const values: number[] = [65504 + 8, 65504 + 15.99, 0, -0, Infinity, -Infinity, 65504, 65519.99, 65520, 1e6, -1e6, 2 ** -24, 2 ** -25, 2 ** -25 * 1.0001, 1e-10, -1e-10];
  for (let h = 0; h < 0x7bff; h++) {
    const a = halfToFloat(h), b = halfToFloat(h + 1), mid = (a + b) / 2;
    for (const v of [a, mid, Math.fround(mid) === mid ? mid + (b - a) / 4096 : mid, mid - (b - a) / 4096]) values.push(v, -v);
  }
  const bits = new Uint32Array(1 << 16);
  let seed = 12345;
  for (let i = 0; i < bits.length; i++) bits[i] = seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  const random = new Float32Array(bits.buffer);
  return Float32Array.from([...values, ...random.filter((v) => !Number.isNaN(v))]);
}

/** Whether h is the nearest half to v (ties to the even one), or infinity of v's sign when |v| rounds past 65504. */
function roundsToNearestEven(v: number, h: number): boolean {
  const sign = v < 0 || Object.is(v, -0) ? 0x8000 : 0;
  if ((h & 0x8000) !== sign && v !== 0) return false;
  const mag = Math.abs(v), hm = h & 0x7fff;
  if (mag >= 65520) return hm === 0x7c00;
  if (hm >= 0x7c00) return false;
  const here = Math.abs(mag - halfToFloat(hm));
  const below = hm > 0 ? Math.abs(mag - halfToFloat(hm - 1)) : Infinity;
  const above = hm < 0x7bff ? Math.abs(mag - halfToFloat(hm + 1)) : Math.abs(mag - 65536);
  if (here > below || here > above) return false;
  return (here < below && here < above) || (hm & 1) === 0;
}

describe('float -> half rows (KV cache writes)', () => {
  const values = probes();

  it('the baseline rounds every probe to the nearest half, ties to even', () => {
    const halves = testing.toHalf('baseline', values)!;
    let wrong = 0;
    for (let i = 0; i < values.length; i++) if (!roundsToNearestEven(values[i]!, halves[i]!)) wrong++;
    expect(values.length).toBeGreaterThan(200_000);
    expect(wrong).toBe(0);
  });

  const f16c = testing.toHalf('f16c', new Float32Array(1)) !== null;
  it.skipIf(!f16c)('F16C gives the baseline bits for every probe, at every row length and offset', () => {
    expect(testing.toHalf('f16c', values)).toEqual(testing.toHalf('baseline', values));
    // Rows whose length is not a multiple of 8 take the scalar tail.
    for (const n of [1, 7, 9, 128, 131]) {
      const row = values.subarray(1000, 1000 + n);
      expect(testing.toHalf('f16c', row)).toEqual(testing.toHalf('baseline', row));
    }
  });

  it.skipIf(!f16c)('NaN stays a NaN of its sign with either kernel', () => {
    const nans = new Float32Array(new Uint32Array([0x7fc00000, 0xffc00000, 0x7f800001, 0x7fbfffff]).buffer);
    for (const kernel of ['baseline', 'f16c'] as const) {
      const h = testing.toHalf(kernel, nans)!;
      for (let i = 0; i < h.length; i++) {
        expect(h[i]! & 0x7c00).toBe(0x7c00);
        expect(h[i]! & 0x3ff).not.toBe(0);
        expect(h[i]! & 0x8000).toBe(i === 1 ? 0x8000 : 0);
      }
    }
  });

  it('refuses a kernel it does not know', () => {
    expect(() => testing.toHalf('avx9' as 'f16c', new Float32Array(8))).toThrow(/baseline/);
  });
});
