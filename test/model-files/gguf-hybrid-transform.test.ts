/**
 * qwen35's ssm_out: its columns (value heads) come in ggml's tiled order, and the
 * reader moves them back. Whole-block heads move packed; heads inside a block
 * (128-wide heads in 256-wide K-quant blocks) are decoded to F32 first.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { transformHybridTensor } from '../../src/model-files/gguf/hybrid-transform.js';
import { fromQ4_K, fromQ6_K, fromQ8_0, toF16, toQ4_K, toQ6_K, toQ8_0 } from '../support/ggml-quantize.js';

const work = mkdtempSync(join(tmpdir(), 'weft-hybrid-transform-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const HK = 2, HV = 4, DV = 128, ROWS = 3, COLS = HV * DV;
const original = Float32Array.from({ length: ROWS * COLS }, (_, i) => Math.sin(i * 0.37) * (1 + (i % 7)));
/** Grouped -> tiled value heads along the columns (what llama.cpp's converter does). */
function tiled(values: Float32Array): Float32Array {
  const r = HV / HK, out = values.slice();
  for (let row = 0; row < ROWS; row++)
    for (let g = 0; g < HK; g++)
      for (let j = 0; j < r; j++) out.set(values.subarray(row * COLS + (g * r + j) * DV, row * COLS + (g * r + j + 1) * DV), row * COLS + (j * HK + g) * DV);
  return out;
}

async function untile(dtype: string, bytes: Uint8Array) {
  const file = join(work, `${dtype}.bin`);
  writeFileSync(file, bytes);
  const info = { name: 'blk.0.ssm_out.weight', file, dtype, shape: [ROWS, COLS], offset: 0, byteLength: bytes.length };
  const out = await transformHybridTensor(info, { valueHeads: { axis: 'cols', rows: ROWS, first: 0, block: DV, keyHeads: HK, valueHeads: HV } });
  const result = { dtype: out.info.dtype, bytes: readFileSync(out.info.file) };
  await out.release();
  return result;
}

describe('ssm_out columns back in HF order', () => {
  it.each([
    ['F32', (v: Float32Array) => new Uint8Array(v.buffer.slice(0))],
    ['F16', toF16],
    ['Q8_0', toQ8_0],
  ] as const)('%s: moved as stored (heads are whole blocks), bytes equal the HF-order encoding', async (dtype, encode) => {
    const { dtype: outType, bytes } = await untile(dtype, encode(tiled(original)));
    expect(outType).toBe(dtype);
    expect(Buffer.compare(bytes, Buffer.from(encode(original)))).toBe(0);
  });

  it.each([
    ['Q4_K', toQ4_K, fromQ4_K],
    ['Q6_K', toQ6_K, fromQ6_K],
  ] as const)('%s: 128-wide heads inside 256-wide blocks are decoded to F32, then moved', async (dtype, encode, decode) => {
    const stored = encode(tiled(original));
    const { dtype: outType, bytes } = await untile(dtype, stored);
    expect(outType).toBe('F32');
    const values = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
    // The decoded stored values, put back: tiling is a permutation, so untile(decode(x)) = decode(x) read in HF order.
    const decoded = decode(stored);
    const r = HV / HK;
    let worst = 0;
    for (let row = 0; row < ROWS; row++)
      for (let g = 0; g < HK; g++)
        for (let j = 0; j < r; j++)
          for (let c = 0; c < DV; c++) {
            const want = decoded[row * COLS + (j * HK + g) * DV + c]!;
            worst = Math.max(worst, Math.abs(values[row * COLS + (g * r + j) * DV + c]! - want));
          }
    expect(worst).toBeLessThan(1e-5); // float32 vs the test decoder's float64 arithmetic
    // and it is the matrix, to the format's precision
    let err = 0;
    for (let i = 0; i < original.length; i++) err = Math.max(err, Math.abs(values[i]! - original[i]!));
    expect(err).toBeLessThan(dtype === 'Q4_K' ? 1.5 : 0.3);
    expect(err).toBeGreaterThan(0);
  });

  it('Q8_0 with heads narrower than a block: decoded exactly to F32', async () => {
    // 8-wide heads (the qwen35-tiny fixture's): not whole 32-value blocks.
    const cols = 4 * 8, rows = 2;
    const values = Float32Array.from({ length: rows * cols }, (_, i) => Math.cos(i));
    const r = 2, out = values.slice();
    for (let row = 0; row < rows; row++) for (let g = 0; g < 2; g++) for (let j = 0; j < r; j++) out.set(values.subarray(row * cols + (g * r + j) * 8, row * cols + (g * r + j + 1) * 8), row * cols + (j * 2 + g) * 8);
    const stored = toQ8_0(out);
    const file = join(work, 'narrow.bin');
    writeFileSync(file, stored);
    const t = await transformHybridTensor({ name: 'x', file, dtype: 'Q8_0', shape: [rows, cols], offset: 0, byteLength: stored.length }, { valueHeads: { axis: 'cols', rows, first: 0, block: 8, keyHeads: 2, valueHeads: 4 } });
    const b = readFileSync(t.info.file);
    const got = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
    await t.release();
    const decoded = fromQ8_0(stored);
    for (let row = 0; row < rows; row++)
      for (let g = 0; g < 2; g++) for (let j = 0; j < r; j++) for (let c = 0; c < 8; c++) expect(got[row * cols + (g * r + j) * 8 + c]).toBe(Math.fround(decoded[row * cols + (j * 2 + g) * 8 + c]!));
  });
});
