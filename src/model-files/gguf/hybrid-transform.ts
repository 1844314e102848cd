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
 * (Q8_0 is dequantized exactly first; other quantized types whose columns do
 * not split into whole blocks are refused).
 */
import { open } from 'node:fs/promises';
import { ModelLoadError, UnsupportedModelError } from '../../errors.js';
import type { TensorInfo } from '../safetensors.js';
import { ggmlTypeByName } from './ggml-types.js';
import { temporaryTensor, type ReorderedTensor } from './row-order.js';
import type { GgufHybridTransform } from './weights.js';

/** Entry h of the result: the stored (tiled) head that holds Hugging Face value head h. */
export function tiledHeadOrder(keyHeads: number, valueHeads: number): Int32Array {
  const r = valueHeads / keyHeads;
  const order = new Int32Array(valueHeads);
  for (let g = 0; g < keyHeads; g++) for (let j = 0; j < r; j++) order[g * r + j] = j * keyHeads + g;
  return order;
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const mantissa = h & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (mantissa / 1024);
  if (exponent === 31) return mantissa ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + mantissa / 1024);
}

/** The values of a float or Q8_0 tensor as float32 (exact for all four). */
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
        const d = Math.fround(halfToFloat(view.getUint16(b * 34, true)));
        for (let i = 0; i < 32; i++) out[b * 32 + i] = Math.fround(d * view.getInt8(b * 34 + 2 + i));
      }
      return out;
    }
    default:
      throw new UnsupportedModelError(`${info.file} (tensor ${info.name}): a ${dtype} tensor cannot be transformed (F32, F16, BF16, Q8_0)`);
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

export async function transformHybridTensor(info: TensorInfo, transform: GgufHybridTransform): Promise<ReorderedTensor> {
  const fail = (message: string): never => {
    throw new ModelLoadError(`${info.file} (tensor ${info.name}): ${message}`, info.file, info.name);
  };
  let bytes = await readTensor(info);
  let dtype = info.dtype;
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
