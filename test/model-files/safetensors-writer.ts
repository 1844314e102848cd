/** Writes safetensors files for tests, including deliberately broken ones. */
import { readFileSync, writeFileSync } from 'node:fs';
import { readSafetensorsHeader } from '../../src/model-files/safetensors.js';
import { halfToFloat } from '../../src/model-files/gguf/half.js';

export interface RawTensor {
  name: string;
  dtype: string;
  shape: number[];
  data: Uint8Array;
}

/** Encodes tensors densely in the given order; `editHeader` may tamper with the header. */
export function encodeSafetensors(tensors: RawTensor[], editHeader?: (header: Record<string, any>) => void): Buffer {
  const header: Record<string, any> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const t of tensors) {
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.data.length] };
    offset += t.data.length;
  }
  editHeader?.(header);
  let json = Buffer.from(JSON.stringify(header), 'utf8');
  const pad = (8 - (json.length % 8)) % 8; // the format pads the header with spaces
  json = Buffer.concat([json, Buffer.alloc(pad, 0x20)]);
  const prefix = Buffer.alloc(8);
  prefix.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([prefix, json, ...tensors.map((t) => Buffer.from(t.data.buffer, t.data.byteOffset, t.data.length))]);
}

/** All tensors of a safetensors file, in file order, with their bytes. */
export async function readAllTensors(file: string): Promise<RawTensor[]> {
  const infos = [...(await readSafetensorsHeader(file)).values()].sort((a, b) => a.offset - b.offset);
  const bytes = readFileSync(file);
  return infos.map((i) => ({ name: i.name, dtype: i.dtype, shape: [...i.shape], data: new Uint8Array(bytes.subarray(i.offset, i.offset + i.byteLength)) }));
}

export function writeSafetensors(file: string, tensors: RawTensor[], editHeader?: (header: Record<string, any>) => void): void {
  writeFileSync(file, encodeSafetensors(tensors, editHeader));
}

export function f32Bytes(values: ArrayLike<number>): Uint8Array {
  return new Uint8Array(Float32Array.from(values).buffer);
}

export { halfToFloat };

/** Some half with roughly the value of f (truncating); exact value via halfToFloat. */
export function floatToHalfTruncated(f: number): number {
  const bits = new Uint32Array(Float32Array.of(f).buffer)[0] as number;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = ((bits >>> 23) & 0xff) - 127 + 15;
  if (exponent <= 0) return sign; // tiny: zero
  if (exponent >= 31) return sign | 0x7bff; // huge: largest finite
  return sign | (exponent << 10) | ((bits >>> 13) & 0x3ff);
}
