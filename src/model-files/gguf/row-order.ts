/**
 * q/k weights of llama-architecture GGUF files, put back in Hugging Face row
 * order for weft's half-split RoPE (see hfRowOrder).
 *
 * The native loader reads a tensor from (file, offset), so the reordered
 * rows go to a temporary file that is removed as soon as the tensor is
 * loaded: one tensor at a time, never the whole model. A row is a whole
 * number of ggml blocks, so this works the same for float and quantized types.
 */
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ModelLoadError } from '../../errors.js';
import type { TensorInfo } from '../safetensors.js';
import { hfRowOrder } from './weights.js';

export interface ReorderedTensor {
  readonly info: TensorInfo;
  release(): Promise<void>;
}

export async function reorderHeadRows(info: TensorInfo, heads: number, headDim: number): Promise<ReorderedTensor> {
  const rows = info.shape[0]!;
  if (rows !== heads * headDim || info.byteLength % rows !== 0)
    throw new ModelLoadError(`${info.file} (tensor ${info.name}): ${rows} rows do not split into ${heads} heads of ${headDim}`, info.file, info.name);
  const rowBytes = info.byteLength / rows;
  const source = Buffer.allocUnsafe(info.byteLength);
  const handle = await open(info.file, 'r');
  try {
    const { bytesRead } = await handle.read(source, 0, info.byteLength, info.offset);
    if (bytesRead !== info.byteLength) throw new ModelLoadError(`${info.file} (tensor ${info.name}): truncated`, info.file, info.name);
  } finally {
    await handle.close();
  }
  const order = hfRowOrder(heads, headDim);
  const target = Buffer.allocUnsafe(info.byteLength);
  for (let r = 0; r < rows; r++) source.copy(target, r * rowBytes, order[r]! * rowBytes, (order[r]! + 1) * rowBytes);

  return temporaryTensor(info, target);
}

/** `bytes` as tensor `info` in a temporary file of its own, removed by release(). */
export async function temporaryTensor(info: TensorInfo, bytes: Buffer): Promise<ReorderedTensor> {
  const dir = await mkdtemp(join(tmpdir(), 'weft-gguf-'));
  const file = join(dir, 'tensor.bin');
  try {
    await writeFile(file, bytes);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    info: { ...info, file, offset: 0 },
    release: () => rm(dir, { recursive: true, force: true }),
  };
}
