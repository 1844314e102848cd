/**
 * qwen35 tensors put back the way the safetensors hold them (the inverse of
 * llama.cpp's converter, tools/hybrid/NOTES.md section 8): norms stored as
 * 1 + w lose the 1, A = -exp(A_log) becomes A_log again, and value heads in
 * ggml's tiled order return to Hugging Face's grouped order.
 *
 * Like the q/k reordering of llama files (row-order.ts), the result goes to a
 * temporary file, one tensor at a time, removed once loaded. Rows are whole
 * ggml blocks, so row moves work for every type; value transforms and column
 * moves inside a block need floats, so those tensors are written as F32
 * (a quantized ssm_out whose value heads are not whole blocks, e.g. 128-wide
 * heads in Q4_K's 256-wide blocks, is dequantized first, as ggml decodes it).
 */
import { open } from 'node:fs/promises';
import { ModelLoadError, UnsupportedModelError } from '../../errors.js';
import type { TensorInfo } from '../safetensors.js';
import { ggmlTypeByName } from './ggml-types.js';
import { temporaryTensor, type ReorderedTensor } from './row-order.js';
import type { GgufHybridTransform } from './weights.js';
import { halfToFloat } from './half.js';

/** Entry h of the result: the stored (tiled) head that holds Hugging Face value head h. */
export function tiledHeadOrder(keyHeads: number, valueHeads: number): Int32Array {
  const r = valueHeads / keyHeads;
  const order = new Int32Array(valueHeads);
  for (let g = 0; g < keyHeads; g++) for (let j = 0; j < r; j++) order[g * r + j] = j * keyHeads + g;
  return order;
}


const f32 = Math.fround;

/** Q4_K's 6-bit scale and min of sub-block j (ggml's get_scale_min_k4). */
function scaleMinK4(j: number, s: Buffer, at: number): [number, number] {
  if (j < 4) return [s[at + j]! & 63, s[at + j + 4]! & 63];
  return [(s[at + j + 4]! & 0xf) | ((s[at + j - 4]! >> 6) << 4), (s[at + j + 4]! >> 4) | ((s[at + j]! >> 6) << 4)];
}

/** Q4_K blocks (256 values, 144 bytes) to float32, in float32 arithmetic as ggml's dequantize_row_q4_K. */
function fromQ4K(bytes: Buffer, view: DataView): Float32Array {
  const out = new Float32Array((bytes.length / 144) * 256);
  for (let b = 0; b < bytes.length / 144; b++) {
    const at = b * 144;
    const d = f32(halfToFloat(view.getUint16(at, true)));
    const dmin = f32(halfToFloat(view.getUint16(at + 2, true)));
    for (let k = 0; k < 4; k++) {
      const [sc1, m1] = scaleMinK4(2 * k, bytes, at + 4);
      const [sc2, m2] = scaleMinK4(2 * k + 1, bytes, at + 4);
      const d1 = f32(d * sc1), min1 = f32(dmin * m1), d2 = f32(d * sc2), min2 = f32(dmin * m2);
      for (let l = 0; l < 32; l++) {
        const q = bytes[at + 16 + k * 32 + l]!;
        out[b * 256 + k * 64 + l] = f32(f32(d1 * (q & 0xf)) - min1);
        out[b * 256 + k * 64 + 32 + l] = f32(f32(d2 * (q >> 4)) - min2);
      }
    }
  }
  return out;
}

/** Q6_K blocks (256 values, 210 bytes) to float32, as ggml's dequantize_row_q6_K. */
function fromQ6K(bytes: Buffer, view: DataView): Float32Array {
  const out = new Float32Array((bytes.length / 210) * 256);
  for (let b = 0; b < bytes.length / 210; b++) {
    const at = b * 210;
    const d = f32(halfToFloat(view.getUint16(at + 208, true)));
    for (let n = 0; n < 2; n++) {
      const ql = at + n * 64, qh = at + 128 + n * 32, sc = at + 192 + n * 8;
      for (let l = 0; l < 32; l++) {
        const is = l >> 4;
        const h = bytes[qh + l]!;
        const q1 = ((bytes[ql + l]! & 0xf) | ((h & 3) << 4)) - 32;
        const q2 = ((bytes[ql + l + 32]! & 0xf) | (((h >> 2) & 3) << 4)) - 32;
        const q3 = ((bytes[ql + l]! >> 4) | (((h >> 4) & 3) << 4)) - 32;
        const q4 = ((bytes[ql + l + 32]! >> 4) | (((h >> 6) & 3) << 4)) - 32;
        const y = b * 256 + n * 128;
        out[y + l] = f32(f32(d * view.getInt8(sc + is)) * q1);
        out[y + l + 32] = f32(f32(d * view.getInt8(sc + is + 2)) * q2);
        out[y + l + 64] = f32(f32(d * view.getInt8(sc + is + 4)) * q3);
        out[y + l + 96] = f32(f32(d * view.getInt8(sc + is + 6)) * q4);
      }
    }
  }
  return out;
}

/** The values of a float or quantized tensor as float32 (exact for the floats and Q8_0 / Q4_0; as ggml decodes the K-quants). */
function toFloat32(bytes: Buffer, dtype: string, info: TensorInfo): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (dtype) {
    case 'F32':
      return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    case 'F16':
      return Float32Array.from({ length: bytes.length / 2 }, (_, i) => halfToFloat(view.getUint16(2 * i, true)));
    case 'BF16': {
      const out = new Float32Array(bytes.length / 2);
      const bits = new Uint32Array(out.buffer);
      for (let i = 0; i < out.length; i++) bits[i] = view.getUint16(2 * i, true) << 16;
      return out;
    }
    case 'Q8_0': {
      const out = new Float32Array((bytes.length / 34) * 32);
      for (let b = 0; b < bytes.length / 34; b++) {
        const d = f32(halfToFloat(view.getUint16(b * 34, true)));
        for (let i = 0; i < 32; i++) out[b * 32 + i] = f32(d * view.getInt8(b * 34 + 2 + i));
      }
      return out;
    }
    case 'Q4_0': {
      const out = new Float32Array((bytes.length / 18) * 32);
      for (let b = 0; b < bytes.length / 18; b++) {
        const d = f32(halfToFloat(view.getUint16(b * 18, true)));
        for (let i = 0; i < 16; i++) {
          const q = bytes[b * 18 + 2 + i]!;
          out[b * 32 + i] = f32(d * ((q & 0xf) - 8));
          out[b * 32 + 16 + i] = f32(d * ((q >> 4) - 8));
        }
      }
      return out;
    }
    case 'Q4_K':
      return fromQ4K(bytes, view);
    case 'Q6_K':
      return fromQ6K(bytes, view);
    default:
      throw new UnsupportedModelError(`${info.file} (tensor ${info.name}): a ${dtype} tensor cannot be transformed (F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K)`);
  }
}

async function readTensor(info: TensorInfo): Promise<Buffer> {
  const bytes = Buffer.allocUnsafe(info.byteLength);
  const handle = await open(info.file, 'r');
  try {
    const { bytesRead } = await handle.read(bytes, 0, info.byteLength, info.offset);
    if (bytesRead !== info.byteLength) throw new ModelLoadError(`${info.file} (tensor ${info.name}): truncated`, info.file, info.name);
  } finally {
    await handle.close();
  }
  return bytes;
}

/** The rows of one part of qwen3next's fused ssm_ba (per key head: r rows of b, then r of a), whole rows for every type. */
function baPartRows(bytes: Buffer, { part, keyHeads, valueHeads }: NonNullable<GgufHybridTransform['baPart']>, fail: (message: string) => never): Buffer {
  const r = valueHeads / keyHeads;
  const rowBytes = bytes.length / (2 * valueHeads);
  if (!Number.isInteger(rowBytes)) fail(`${bytes.length} bytes do not split into ${2 * valueHeads} rows of b and a`);
  const out = Buffer.allocUnsafe(valueHeads * rowBytes);
  for (let g = 0; g < keyHeads; g++) {
    const from = (g * 2 * r + (part === 'a' ? r : 0)) * rowBytes;
    bytes.copy(out, g * r * rowBytes, from, from + r * rowBytes);
  }
  return out;
}

export async function transformHybridTensor(info: TensorInfo, transform: GgufHybridTransform): Promise<ReorderedTensor> {
  const fail = (message: string): never => {
    throw new ModelLoadError(`${info.file} (tensor ${info.name}): ${message}`, info.file, info.name);
  };
  let bytes = await readTensor(info);
  let dtype = info.dtype;
  if (transform.baPart) bytes = baPartRows(bytes, transform.baPart, fail);
  const heads = transform.valueHeads;
  const type = ggmlTypeByName(dtype);
  if (!type) return fail(`unknown type ${dtype}`);
  const float = ['F32', 'F16', 'BF16'].includes(dtype);
  // Column moves of whole blocks stay packed; anything finer needs the values.
  const colsInBlocks = heads?.axis === 'cols' && heads.block % type.blockElements === 0;
  if (transform.minusOne || transform.aLog || (heads?.axis === 'cols' && !float && !colsInBlocks)) {
    const values = toFloat32(bytes, dtype, info);
    if (transform.minusOne) for (let i = 0; i < values.length; i++) values[i] = values[i]! - 1;
    if (transform.aLog)
      for (let i = 0; i < values.length; i++) {
        const a = values[i]!;
        if (!(a < 0) || !Number.isFinite(a)) fail(`element ${i} is ${a}: A is stored as -exp(A_log), so it must be negative`);
        values[i] = Math.log(-a);
      }
    bytes = Buffer.from(values.buffer, values.byteOffset, values.byteLength);
    dtype = 'F32';
  }
  if (heads) {
    const order = tiledHeadOrder(heads.keyHeads, heads.valueHeads);
    const target = Buffer.from(bytes);
    const rowBytes = bytes.length / heads.rows;
    if (!Number.isInteger(rowBytes)) fail(`${bytes.length} bytes do not split into ${heads.rows} rows`);
    if (heads.axis === 'rows') {
      const blockBytes = heads.block * rowBytes;
      if (heads.first + heads.valueHeads * heads.block !== heads.rows) fail(`${heads.rows} rows do not end in ${heads.valueHeads} value heads of ${heads.block}`);
      for (let h = 0; h < heads.valueHeads; h++) {
        const from = heads.first * rowBytes + order[h]! * blockBytes;
        bytes.copy(target, heads.first * rowBytes + h * blockBytes, from, from + blockBytes);
      }
    } else {
      const t = ggmlTypeByName(dtype)!;
      const headBytes = (heads.block / t.blockElements) * t.blockBytes;
      if (headBytes * heads.valueHeads !== rowBytes) fail(`a row of ${rowBytes} bytes does not hold ${heads.valueHeads} value heads of ${heads.block} columns`);
      for (let row = 0; row < heads.rows; row++)
        for (let h = 0; h < heads.valueHeads; h++) {
          const from = row * rowBytes + order[h]! * headBytes;
          bytes.copy(target, row * rowBytes + h * headBytes, from, from + headBytes);
        }
    }
    bytes = target;
  }
  return temporaryTensor({ ...info, dtype, byteLength: bytes.length }, bytes);
}
