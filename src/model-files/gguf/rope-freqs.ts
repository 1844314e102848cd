/**
 * RoPE inverse frequencies of a GGUF model. Llama 3.x files carry the
 * llama3 frequency scaling as a tensor, rope_freqs.weight ([headDim / 2]
 * F32 factors), instead of metadata; llama.cpp divides each frequency by
 * its factor, and so do we.
 */
import { readSync, openSync, closeSync } from 'node:fs';
import { ModelLoadError } from '../../errors.js';
import type { ModelConfig } from '../config.js';
import { ropeInverseFrequencies } from '../rope.js';
import type { GgufFile } from './reader.js';

export function ggufInverseFrequencies(config: ModelConfig, gguf: GgufFile): Float64Array {
  const inv = ropeInverseFrequencies(config);
  const t = gguf.tensors.get('rope_freqs.weight');
  if (!t) return inv;
  const fail = (message: string): never => {
    throw new ModelLoadError(`${gguf.file} (tensor rope_freqs.weight): ${message}`, gguf.file, 'rope_freqs.weight');
  };
  if (t.type.name !== 'F32' || t.dims.length !== 1 || t.dims[0] !== inv.length) fail(`expected F32 [${inv.length}]`);
  const bytes = Buffer.alloc(t.byteLength);
  const fd = openSync(gguf.file, 'r');
  try {
    if (readSync(fd, bytes, 0, t.byteLength, t.offset) !== t.byteLength) fail('truncated');
  } finally {
    closeSync(fd);
  }
  return inv.map((f, j) => {
    const factor = bytes.readFloatLE(j * 4);
    if (!(factor > 0) || !Number.isFinite(factor)) fail(`factor ${j} is ${factor}`);
    return Math.fround(f / factor);
  });
}
