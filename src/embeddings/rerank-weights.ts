/**
 * A few rows of a safetensors tensor as float32, read from the file: what a
 * reranker head needs of the weights (two LM-head rows, a pooler and a
 * classifier), without loading the model's tensors into the JS heap.
 */
import { open } from 'node:fs/promises';
import { ModelLoadError } from '../errors.js';
import { halfToFloat } from '../model-files/gguf/half.js';
import type { TensorIndex, TensorInfo } from '../model-files/safetensors.js';

const BYTES: Readonly<Record<string, number>> = { F32: 4, F16: 2, BF16: 2 };

/** A 2-D tensor as [rows][cols] float32 (or a 1-D one as one row). */
export interface Matrix {
  readonly rows: number;
  readonly cols: number;
  /** Row-major. */
  readonly data: Float32Array;
}

/** The named tensor, or a ModelLoadError naming it and the folder. */
export function tensorNamed(tensors: TensorIndex, name: string, folder: string): TensorInfo {
  const info = tensors.get(name);
  if (info === undefined) throw new ModelLoadError(`${folder}: the reranker needs tensor ${name}, which the folder's safetensors do not hold`, folder, name);
  return info;
}

/** Rows `rows` of a 2-D tensor (all of a 1-D one when `rows` is undefined), converted to float32. */
export async function readRows(info: TensorInfo, rows?: readonly number[]): Promise<Matrix> {
  const width = BYTES[info.dtype];
  if (width === undefined) throw new ModelLoadError(`${info.file}: tensor ${info.name} is ${info.dtype}; a reranker head is read from F32, F16 or BF16`, info.file, info.name);
  const [height, cols] = info.shape.length === 1 ? [1, info.shape[0]!] : info.shape.length === 2 ? [info.shape[0]!, info.shape[1]!] : [0, 0];
  if (cols === 0) throw new ModelLoadError(`${info.file}: tensor ${info.name} has shape [${info.shape.join(', ')}]; expected a vector or a matrix`, info.file, info.name);
  const wanted = rows ?? Array.from({ length: height }, (_, i) => i);
  const data = new Float32Array(wanted.length * cols);
  const bytes = Buffer.alloc(cols * width);
  const handle = await open(info.file, 'r');
  try {
    for (const [at, row] of wanted.entries()) {
      if (!Number.isInteger(row) || row < 0 || row >= height) throw new ModelLoadError(`${info.file}: tensor ${info.name} has no row ${row} (it has ${height})`, info.file, info.name);
      const { bytesRead } = await handle.read(bytes, 0, bytes.length, info.offset + row * cols * width);
      if (bytesRead !== bytes.length) throw new ModelLoadError(`${info.file}: tensor ${info.name} is truncated`, info.file, info.name);
      for (let i = 0; i < cols; i++) data[at * cols + i] = toFloat(bytes, i, info.dtype);
    }
  } finally {
    await handle.close();
  }
  return { rows: wanted.length, cols, data };
}

/** One word reinterpreted: BF16 is the top half of an f32. */
const word = new Uint32Array(1);
const wordAsFloat = new Float32Array(word.buffer);

function toFloat(bytes: Buffer, i: number, dtype: string): number {
  if (dtype === 'F32') return bytes.readFloatLE(i * 4);
  const bits = bytes.readUInt16LE(i * 2);
  if (dtype === 'F16') return halfToFloat(bits);
  word[0] = bits << 16;
  return wordAsFloat[0]!;
}
