/**
 * Float32 -> ggml block formats, for tests and the benchmark's model files.
 * Formats as ggml defines them (ggml-common.h, ggml-quants.c reference
 * quantizers): one row of n values at a time, rows along ne0.
 *   F16   IEEE half, round to nearest even
 *   Q8_0  blocks of 32: f16 scale d = max|x| / 127, then 32 int8 round(x / d)
 */
import { halfToFloat } from '../../src/model-files/gguf/half.js';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE half bits of `value`, rounded to nearest even (as F16C's vcvtps2ph does). */
export function floatToHalf(value: number): number {
  f32[0] = value;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exponent = (x >>> 23) & 0xff;
  let mantissa = x & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0); // inf / nan
  let e = exponent - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow: inf
  if (e <= 0) {
    if (e < -10) return sign; // underflows to zero
    mantissa |= 0x800000;
    const shift = 14 - e;
    let half = mantissa >>> shift;
    const rest = mantissa & ((1 << shift) - 1);
    const midpoint = 1 << (shift - 1);
    if (rest > midpoint || (rest === midpoint && (half & 1))) half++;
    return sign | half;
  }
  let half = (e << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (half & 1))) half++; // may carry into the exponent: still right
  return sign | half;
}

export { halfToFloat };

export function toF16(values: Float32Array): Uint8Array {
  const out = new Uint8Array(values.length * 2);
  const view = new DataView(out.buffer);
  for (let i = 0; i < values.length; i++) view.setUint16(i * 2, floatToHalf(values[i]!), true);
  return out;
}

/** C's roundf: halves away from zero (ggml's and gguf-py's Q8_0; Math.round takes -103.5 to -103). */
function roundAway(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/** Q8_0 of a whole matrix whose rows are a multiple of 32 long (rows are contiguous, so blocks are too). */
export function toQ8_0(values: Float32Array): Uint8Array {
  if (values.length % 32 !== 0) throw new Error('Q8_0 needs a multiple of 32 values');
  const blocks = values.length / 32;
  const out = new Uint8Array(blocks * 34);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    let amax = 0;
    for (let i = 0; i < 32; i++) amax = Math.max(amax, Math.abs(values[b * 32 + i]!));
    // In float32, as ggml's reference quantizer (and gguf-py's) computes it.
    const d = Math.fround(amax / 127);
    const inv = d === 0 ? 0 : Math.fround(1 / d);
    view.setUint16(b * 34, floatToHalf(d), true);
    for (let i = 0; i < 32; i++) view.setInt8(b * 34 + 2 + i, roundAway(Math.fround(values[b * 32 + i]! * inv)));
  }
  return out;
}

/** Q8_0 back to float32 (the values a correct kernel multiplies by). */
export function fromQ8_0(bytes: Uint8Array): Float32Array {
  const blocks = bytes.length / 34;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const out = new Float32Array(blocks * 32);
  for (let b = 0; b < blocks; b++) {
    const d = halfToFloat(view.getUint16(b * 34, true));
    for (let i = 0; i < 32; i++) out[b * 32 + i] = d * view.getInt8(b * 34 + 2 + i);
  }
  return out;
}

/*
 * K-quants (ggml-common.h), super-blocks of 256 values:
 *   Q4_K  { f16 d; f16 dmin; u8 scales[12]; u8 qs[128] }  144 bytes
 *         8 sub-blocks of 32, each x ~ d*sc*q - dmin*m, q in 0..15, sc/m 6-bit packed in scales[]
 *   Q6_K  { u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d }  210 bytes
 *         16 sub-blocks of 16, x ~ d*sc*q, q in -32..31 (low 4 bits in ql, high 2 in qh)
 * The quantizers are simple (min/max per sub-block, no search); the layouts are exact.
 */

/** ggml's get_scale_min_k4: the 6-bit scale and min of sub-block j from the packed scales. */
function scaleMinK4(j: number, s: Uint8Array, at: number): [number, number] {
  if (j < 4) return [s[at + j]! & 63, s[at + j + 4]! & 63];
  return [(s[at + j + 4]! & 0xf) | ((s[at + j - 4]! >> 6) << 4), (s[at + j + 4]! >> 4) | ((s[at + j]! >> 6) << 4)];
}

export function toQ4_K(values: Float32Array): Uint8Array {
  if (values.length % 256 !== 0) throw new Error('Q4_K needs a multiple of 256 values');
  const blocks = values.length / 256;
  const out = new Uint8Array(blocks * 144);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    const x = values.subarray(b * 256, (b + 1) * 256);
    const scales = new Float64Array(8);
    const mins = new Float64Array(8);
    for (let j = 0; j < 8; j++) {
      let lo = 0;
      let hi = 0;
      for (let i = 0; i < 32; i++) {
        lo = Math.min(lo, x[j * 32 + i]!);
        hi = Math.max(hi, x[j * 32 + i]!);
      }
      scales[j] = (hi - lo) / 15;
      mins[j] = -lo;
    }
    const d = Math.max(...scales) / 63;
    const dmin = Math.max(...mins) / 63;
    const dHalf = floatToHalf(d);
    const dminHalf = floatToHalf(dmin);
    const dq = halfToFloat(dHalf);
    const dminq = halfToFloat(dminHalf);
    const sc = new Uint8Array(8);
    const m = new Uint8Array(8);
    for (let j = 0; j < 8; j++) {
      sc[j] = dq > 0 ? Math.min(63, Math.round(scales[j]! / dq)) : 0;
      m[j] = dminq > 0 ? Math.min(63, Math.round(mins[j]! / dminq)) : 0;
    }
    const at = b * 144;
    view.setUint16(at, dHalf, true);
    view.setUint16(at + 2, dminHalf, true);
    const packed = out.subarray(at + 4, at + 16);
    for (let j = 0; j < 4; j++) {
      packed[j] = (sc[j]! & 63) | ((sc[j + 4]! >> 4) << 6);
      packed[j + 4] = (m[j]! & 63) | ((m[j + 4]! >> 4) << 6);
      packed[j + 8] = (sc[j + 4]! & 0xf) | ((m[j + 4]! & 0xf) << 4);
    }
    const q = new Uint8Array(256);
    for (let j = 0; j < 8; j++) {
      const step = dq * sc[j]!;
      const offset = dminq * m[j]!;
      for (let i = 0; i < 32; i++) q[j * 32 + i] = step > 0 ? Math.max(0, Math.min(15, Math.round((x[j * 32 + i]! + offset) / step))) : 0;
    }
    for (let k = 0; k < 4; k++) for (let l = 0; l < 32; l++) out[at + 16 + k * 32 + l] = q[k * 64 + l]! | (q[k * 64 + 32 + l]! << 4);
  }
  return out;
}

/** Q4_K back to float32, following ggml's dequantize_row_q4_K. */
export function fromQ4_K(bytes: Uint8Array): Float32Array {
  const blocks = bytes.length / 144;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const out = new Float32Array(blocks * 256);
  for (let b = 0; b < blocks; b++) {
    const at = b * 144;
    const d = halfToFloat(view.getUint16(at, true));
    const dmin = halfToFloat(view.getUint16(at + 2, true));
    for (let k = 0; k < 4; k++) {
      const [sc1, m1] = scaleMinK4(2 * k, bytes, at + 4);
      const [sc2, m2] = scaleMinK4(2 * k + 1, bytes, at + 4);
      for (let l = 0; l < 32; l++) {
        const byte = bytes[at + 16 + k * 32 + l]!;
        out[b * 256 + k * 64 + l] = d * sc1 * (byte & 0xf) - dmin * m1;
        out[b * 256 + k * 64 + 32 + l] = d * sc2 * (byte >> 4) - dmin * m2;
      }
    }
  }
  return out;
}

export function toQ6_K(values: Float32Array): Uint8Array {
  if (values.length % 256 !== 0) throw new Error('Q6_K needs a multiple of 256 values');
  const blocks = values.length / 256;
  const out = new Uint8Array(blocks * 210);
  const view = new DataView(out.buffer);
  for (let b = 0; b < blocks; b++) {
    const x = values.subarray(b * 256, (b + 1) * 256);
    const scales = new Float64Array(16);
    for (let j = 0; j < 16; j++) {
      let amax = 0;
      for (let i = 0; i < 16; i++) amax = Math.max(amax, Math.abs(x[j * 16 + i]!));
      scales[j] = amax / 31;
    }
    const maxScale = Math.max(...scales);
    const dHalf = floatToHalf(maxScale / 127);
    const d = halfToFloat(dHalf);
    const at = b * 210;
    const q = new Int8Array(256);
    for (let j = 0; j < 16; j++) {
      const sc = d > 0 ? Math.max(-128, Math.min(127, Math.round(scales[j]! / d))) : 0;
      view.setInt8(at + 192 + j, sc);
      const step = d * sc;
      for (let i = 0; i < 16; i++) q[j * 16 + i] = step > 0 ? Math.max(-32, Math.min(31, Math.round(x[j * 16 + i]! / step))) : 0;
    }
    view.setUint16(at + 208, dHalf, true);
    for (let n = 0; n < 2; n++) {
      const ql = at + n * 64;
      const qh = at + 128 + n * 32;
      for (let l = 0; l < 32; l++) {
        const [q1, q2, q3, q4] = [0, 32, 64, 96].map((o) => q[n * 128 + o + l]! + 32) as [number, number, number, number];
        out[ql + l] = (q1 & 0xf) | ((q3 & 0xf) << 4);
        out[ql + 32 + l] = (q2 & 0xf) | ((q4 & 0xf) << 4);
        out[qh + l] = (q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6);
      }
    }
  }
  return out;
}

/** Q6_K back to float32, following ggml's dequantize_row_q6_K. */
export function fromQ6_K(bytes: Uint8Array): Float32Array {
  const blocks = bytes.length / 210;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const out = new Float32Array(blocks * 256);
  for (let b = 0; b < blocks; b++) {
    const at = b * 210;
    const d = halfToFloat(view.getUint16(at + 208, true));
    for (let n = 0; n < 2; n++) {
      const ql = at + n * 64;
      const qh = at + 128 + n * 32;
      const sc = at + 192 + n * 8;
      for (let l = 0; l < 32; l++) {
        const is = l >> 4;
        const h = bytes[qh + l]!;
        const q1 = ((bytes[ql + l]! & 0xf) | (((h >> 0) & 3) << 4)) - 32;
        const q2 = ((bytes[ql + l + 32]! & 0xf) | (((h >> 2) & 3) << 4)) - 32;
        const q3 = ((bytes[ql + l]! >> 4) | (((h >> 4) & 3) << 4)) - 32;
        const q4 = ((bytes[ql + l + 32]! >> 4) | (((h >> 6) & 3) << 4)) - 32;
        const y = b * 256 + n * 128;
        out[y + l] = d * view.getInt8(sc + is) * q1;
        out[y + l + 32] = d * view.getInt8(sc + is + 2) * q2;
        out[y + l + 64] = d * view.getInt8(sc + is + 4) * q3;
        out[y + l + 96] = d * view.getInt8(sc + is + 6) * q4;
      }
    }
  }
  return out;
}
