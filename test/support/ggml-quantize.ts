/**
 * Float32 -> ggml block formats, for tests and the benchmark's model files.
 * Formats as ggml defines them (ggml-common.h, ggml-quants.c reference
 * quantizers): one row of n values at a time, rows along ne0.
 *   F16   IEEE half, round to nearest even
 *   Q8_0  blocks of 32: f16 scale d = max|x| / 127, then 32 int8 round(x / d)
 */

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

export function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const mantissa = h & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (mantissa / 1024);
  if (exponent === 31) return mantissa ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + mantissa / 1024);
}

export function toF16(values: Float32Array): Uint8Array {
  const out = new Uint8Array(values.length * 2);
  const view = new DataView(out.buffer);
  for (let i = 0; i < values.length; i++) view.setUint16(i * 2, floatToHalf(values[i]!), true);
  return out;
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
    const d = amax / 127;
    const inv = d === 0 ? 0 : 1 / d;
    view.setUint16(b * 34, floatToHalf(d), true);
    for (let i = 0; i < 32; i++) view.setInt8(b * 34 + 2 + i, Math.round(values[b * 32 + i]! * inv));
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
