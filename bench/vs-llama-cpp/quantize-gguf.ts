/**
 * Writes a Q8_0 copy of an F32 GGUF file (every matrix whose rows are whole
 * 32-blocks; vectors stay F32), metadata and tokenizer kept, for the
 * fidelity check on the shared stories260K model (greedy.ts --reference):
 *
 *   tsx bench/vs-llama-cpp/quantize-gguf.ts in.gguf out.gguf
 *
 * The reader drops scalar metadata types, so they are put back by key:
 * llama.cpp reads integers as u32 and the few float keys as f32.
 */
import { openSync, readSync, closeSync, writeFileSync } from 'node:fs';
import { readGgufFile, GgufValueType as T, type GgufValue } from '../../src/model-files/gguf/index.js';
import { toQ8_0 } from '../../test/support/ggml-quantize.js';
import { encodeGguf, type MetaValue, type TensorSpec } from '../../test/support/gguf-writer.js';

const [input, output] = process.argv.slice(2);
if (!input || !output) throw new Error('usage: quantize-gguf.ts in.gguf out.gguf');
const gguf = readGgufFile(input);
const FLOAT_KEY = /epsilon|freq_base|scale|factor/;

function metaValue(key: string, value: GgufValue): MetaValue {
  if (typeof value === 'object' && value !== null && 'elementType' in value)
    return { type: T.ARRAY, elementType: value.elementType, values: value.values as Array<number | bigint | boolean | string> };
  if (typeof value === 'string') return { type: T.STRING, value };
  if (typeof value === 'boolean') return { type: T.BOOL, value };
  if (typeof value === 'bigint') return { type: T.UINT64, value };
  return { type: FLOAT_KEY.test(key) || !Number.isInteger(value) ? T.FLOAT32 : T.UINT32, value };
}

const fd = openSync(input, 'r');
const tensors: TensorSpec[] = [];
for (const t of gguf.tensors.values()) {
  if (t.type.name !== 'F32') throw new Error(`${t.name}: quantize-gguf.ts takes F32 tensors, got ${t.type.name}`);
  const bytes = new Uint8Array(t.byteLength);
  readSync(fd, bytes, 0, t.byteLength, t.offset);
  const values = new Float32Array(bytes.buffer);
  const matrix = t.dims.length === 2 && t.dims[0]! % 32 === 0;
  tensors.push({ name: t.name, type: matrix ? 8 : 0, dims: [...t.dims], data: matrix ? toQ8_0(values) : bytes });
}
closeSync(fd);
const metadata = [...gguf.metadata].filter(([key]) => key !== 'general.alignment').map(([key, value]): [string, MetaValue] => [key, metaValue(key, value)]);
writeFileSync(output, encodeGguf({ metadata, tensors }));
process.stderr.write(`wrote ${output}: ${tensors.filter((t) => t.type === 8).length} of ${tensors.length} tensors Q8_0\n`);
