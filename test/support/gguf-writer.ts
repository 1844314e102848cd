/**
 * Writes GGUF files for tests and the benchmark, including deliberately
 * broken ones (explicit offsets, counts and types go through unchecked).
 */
import { open } from 'node:fs/promises';
import { GgufValueType as T } from '../../src/model-files/gguf/reader.js';
import { ggmlRowBytes, ggmlTypeById } from '../../src/model-files/gguf/ggml-types.js';

export type MetaValue =
  | { type: Exclude<T, T.ARRAY>; value: number | bigint | boolean | string }
  | { type: T.ARRAY; elementType: T; values: Array<number | bigint | boolean | string | MetaValue> };

export const meta = {
  u8: (value: number): MetaValue => ({ type: T.UINT8, value }),
  u32: (value: number): MetaValue => ({ type: T.UINT32, value }),
  i32: (value: number): MetaValue => ({ type: T.INT32, value }),
  u64: (value: number | bigint): MetaValue => ({ type: T.UINT64, value }),
  f32: (value: number): MetaValue => ({ type: T.FLOAT32, value }),
  f64: (value: number): MetaValue => ({ type: T.FLOAT64, value }),
  bool: (value: boolean): MetaValue => ({ type: T.BOOL, value }),
  str: (value: string): MetaValue => ({ type: T.STRING, value }),
  strings: (values: string[]): MetaValue => ({ type: T.ARRAY, elementType: T.STRING, values }),
  f32s: (values: number[]): MetaValue => ({ type: T.ARRAY, elementType: T.FLOAT32, values }),
  i32s: (values: number[]): MetaValue => ({ type: T.ARRAY, elementType: T.INT32, values }),
};

export interface TensorSpec {
  name: string;
  /** ggml type id (0 F32, 1 F16, 8 Q8_0, 12 Q4_K, ...). */
  type: number;
  /** GGUF order: ne0 (innermost) first. */
  dims: number[];
  /** The bytes (tests); the benchmark streams them instead and gives none. */
  data?: Uint8Array;
  /** Override the offset written in the header (relative to the data section). */
  offset?: number;
}

export interface GgufSpec {
  version?: number;
  alignment?: number;
  metadata: Array<[string, MetaValue]>;
  tensors: TensorSpec[];
}

/** Bytes a tensor occupies, from its type and dims. */
export function tensorBytes(t: Pick<TensorSpec, 'type' | 'dims'>): number {
  const type = ggmlTypeById(t.type);
  if (!type) throw new Error(`unknown ggml type ${t.type}`);
  const row = ggmlRowBytes(type, t.dims[0]!);
  if (row === undefined) throw new Error(`ne0 ${t.dims[0]} is not a multiple of ${type.blockElements}`);
  return row * t.dims.slice(1).reduce((a, b) => a * b, 1);
}

class Bytes {
  parts: Buffer[] = [];
  length = 0;
  push(b: Buffer): void {
    this.parts.push(b);
    this.length += b.length;
  }
  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v >>> 0);
    this.push(b);
  }
  u64(v: number | bigint): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.push(b);
  }
}

function writeScalar(out: Bytes, type: T, value: number | bigint | boolean | string): void {
  const b8 = Buffer.alloc(8);
  switch (type) {
    case T.UINT8: b8.writeUInt8(Number(value)); return out.push(b8.subarray(0, 1));
    case T.INT8: b8.writeInt8(Number(value)); return out.push(b8.subarray(0, 1));
    case T.BOOL: b8.writeUInt8(value ? 1 : 0); return out.push(b8.subarray(0, 1));
    case T.UINT16: b8.writeUInt16LE(Number(value)); return out.push(b8.subarray(0, 2));
    case T.INT16: b8.writeInt16LE(Number(value)); return out.push(b8.subarray(0, 2));
    case T.UINT32: return out.u32(Number(value));
    case T.INT32: b8.writeInt32LE(Number(value)); return out.push(b8.subarray(0, 4));
    case T.FLOAT32: b8.writeFloatLE(Number(value)); return out.push(b8.subarray(0, 4));
    case T.UINT64: return out.u64(value as number | bigint);
    case T.INT64: b8.writeBigInt64LE(BigInt(value as number | bigint)); return out.push(b8);
    case T.FLOAT64: b8.writeDoubleLE(Number(value)); return out.push(b8);
    case T.STRING: return out.str(String(value));
    default: throw new Error(`cannot write scalar type ${type}`);
  }
}

function writeValue(out: Bytes, v: MetaValue): void {
  if (v.type !== T.ARRAY) return writeScalar(out, v.type, v.value);
  out.u32(v.elementType);
  out.u64(v.values.length);
  for (const item of v.values) {
    if (typeof item === 'object' && item !== null && 'type' in item) {
      if (v.elementType === T.ARRAY && item.type === T.ARRAY) {
        out.u32(item.elementType);
        out.u64(item.values.length);
        for (const inner of item.values) writeScalar(out, item.elementType, inner as number);
      } else writeValue(out, item);
    } else writeScalar(out, v.elementType, item);
  }
}

/** The header (padded to the alignment) and each tensor's relative offset, densely packed in order. */
export function encodeGgufHeader(spec: GgufSpec): { header: Buffer; offsets: number[] } {
  const alignment = spec.alignment ?? 32;
  const out = new Bytes();
  out.push(Buffer.from('GGUF', 'latin1'));
  out.u32(spec.version ?? 3);
  out.u64(spec.tensors.length);
  out.u64(spec.metadata.length);
  for (const [key, value] of spec.metadata) {
    out.str(key);
    out.u32(value.type);
    writeValue(out, value);
  }
  const offsets: number[] = [];
  let next = 0;
  for (const t of spec.tensors) {
    const offset = t.offset ?? next;
    offsets.push(offset);
    next = Math.ceil((offset + (t.data?.length ?? tensorBytes(t))) / alignment) * alignment;
    out.str(t.name);
    out.u32(t.dims.length);
    for (const d of t.dims) out.u64(d);
    out.u32(t.type);
    out.u64(offset);
  }
  const pad = (alignment - (out.length % alignment)) % alignment;
  out.push(Buffer.alloc(pad));
  return { header: Buffer.concat(out.parts), offsets };
}

/** A whole GGUF file in memory (tensors at their offsets, zero padding between). */
export function encodeGguf(spec: GgufSpec): Buffer {
  const { header, offsets } = encodeGgufHeader(spec);
  let end = 0;
  spec.tensors.forEach((t, i) => (end = Math.max(end, offsets[i]! + (t.data?.length ?? 0))));
  const data = Buffer.alloc(end);
  spec.tensors.forEach((t, i) => t.data && Buffer.from(t.data.buffer, t.data.byteOffset, t.data.length).copy(data, offsets[i]!));
  return Buffer.concat([header, data]);
}

/**
 * Writes a GGUF file whose tensor bytes come from `produce(index)` in chunks
 * (the benchmark's 1 GB models never sit in memory whole).
 */
export async function writeGgufStreaming(path: string, spec: GgufSpec, produce: (index: number) => Iterable<Uint8Array>): Promise<void> {
  const { header, offsets } = encodeGgufHeader(spec);
  const handle = await open(path, 'w');
  try {
    await handle.write(header, 0, header.length, 0);
    for (let i = 0; i < spec.tensors.length; i++) {
      let at = header.length + offsets[i]!;
      const expected = tensorBytes(spec.tensors[i]!);
      let written = 0;
      for (const chunk of produce(i)) {
        await handle.write(chunk, 0, chunk.length, at);
        at += chunk.length;
        written += chunk.length;
      }
      if (written !== expected) throw new Error(`${spec.tensors[i]!.name}: produced ${written} bytes, expected ${expected}`);
    }
  } finally {
    await handle.close();
  }
}
