/**
 * Random-weight F16 model folders for the benchmarks (bench/quantized.bench.ts,
 * bench/hybrid-decode.bench.ts): config.json and one model.safetensors written
 * tensor by tensor (a 0.6B model never sits in memory whole), once per folder.
 */
import { closeSync, existsSync, mkdirSync, openSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** [tensor name, shape]; a 1-D shape is a vector (norms, A_log, dt_bias). */
export type TensorSpec = [string, number[]];

/** Writes `dir` unless its model.safetensors exists; returns `dir`. */
export function writeRandomF16Model(dir: string, config: Record<string, unknown>, specs: readonly TensorSpec[]): string {
  if (existsSync(join(dir, 'model.safetensors'))) return dir;
  mkdirSync(dir, { recursive: true });
  const header: Record<string, unknown> = {};
  let offset = 0;
  for (const [name, dims] of specs) {
    const bytes = dims.reduce((a, b) => a * b, 1) * 2;
    header[name] = { dtype: 'F16', shape: dims, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const file = join(dir, 'model.safetensors.partial');
  const fd = openSync(file, 'w');
  const size = Buffer.alloc(8);
  size.writeBigUInt64LE(BigInt(json.length));
  writeSync(fd, size);
  writeSync(fd, json);
  let state = 12345;
  for (const [, dims] of specs) {
    const n = dims.reduce((a, b) => a * b, 1);
    const halves = new Uint16Array(n);
    const vector = dims.length === 1;
    for (let i = 0; i < n; i++) {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      // Vectors ~1 (f16 0x3c00 +- a little), matrices small: |w| < 2^-5, random sign and mantissa.
      halves[i] = vector ? 0x3b00 + (state >>> 24) : ((state >>> 16) & 0x8000) | (0x2000 + ((state >>> 4) & 0x0fff));
    }
    writeSync(fd, new Uint8Array(halves.buffer));
  }
  closeSync(fd);
  renameSync(file, join(dir, 'model.safetensors'));
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  return dir;
}
