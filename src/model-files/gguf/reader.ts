/**
 * A bounds-checked GGUF reader (versions 2 and 3, little-endian).
 *
 * Layout: magic "GGUF", uint32 version, uint64 tensor count, uint64 metadata
 * count, the metadata key/values, the tensor infos (name, dims innermost
 * first, ggml type, offset relative to the data section), padding to
 * `general.alignment` (default 32), then the tensor data.
 *
 * Only the header is read. Each tensor comes back as an absolute byte range
 * checked against the file: whole blocks per row, aligned, inside the file,
 * not overlapping another tensor. Anything else is a ModelLoadError naming
 * the file (and tensor); a type ggml defines but weft cannot load passes
 * here and is refused by the weight plan.
 */
import { closeSync, fstatSync, openSync } from 'node:fs';
import { ModelLoadError } from '../../errors.js';
import { ByteCursor } from './byte-cursor.js';
import { ggmlRowBytes, ggmlTypeById, type GgmlType } from './ggml-types.js';

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian uint32

/** GGUF metadata value types (gguf.h `enum gguf_type`). */
export enum GgufValueType {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
}

/** 64-bit integers come back as numbers when safe, else as bigint. */
export type GgufScalar = number | bigint | boolean | string;
export interface GgufArray {
  readonly elementType: GgufValueType;
  readonly values: readonly GgufValue[];
}
export type GgufValue = GgufScalar | GgufArray;

export interface GgufTensor {
  readonly name: string;
  readonly type: GgmlType;
  /** Dimensions as GGUF stores them: ne0 (innermost, contiguous) first. */
  readonly dims: readonly number[];
  /** Absolute byte offset of the data in the file. */
  readonly offset: number;
  readonly byteLength: number;
}

export interface GgufFile {
  readonly file: string;
  readonly version: number;
  readonly metadata: ReadonlyMap<string, GgufValue>;
  readonly tensors: ReadonlyMap<string, GgufTensor>;
  readonly alignment: number;
  /** Absolute offset of the data section. */
  readonly dataOffset: number;
  readonly fileSize: number;
}

/** Sizes that bound counts read from the file (a count is checked against bytes left first). */
const SCALAR_BYTES: Partial<Record<GgufValueType, number>> = {
  [GgufValueType.UINT8]: 1, [GgufValueType.INT8]: 1, [GgufValueType.BOOL]: 1,
  [GgufValueType.UINT16]: 2, [GgufValueType.INT16]: 2,
  [GgufValueType.UINT32]: 4, [GgufValueType.INT32]: 4, [GgufValueType.FLOAT32]: 4,
  [GgufValueType.UINT64]: 8, [GgufValueType.INT64]: 8, [GgufValueType.FLOAT64]: 8,
  [GgufValueType.STRING]: 8, // its length prefix
  [GgufValueType.ARRAY]: 12, // element type + count
};
/**
 * Caps that keep a count read from the file from costing more than a
 * reasonable model could need (the largest vocabularies have ~256k tokens;
 * the largest models ~2k tensors), whatever the file's size.
 */
export const MAX_ARRAY_ELEMENTS = 1 << 24;
export const MAX_TENSORS = 1 << 20;
export const MAX_METADATA = 1 << 20;
/** Arrays nest (an array of arrays) at most this deep. */
const MAX_ARRAY_DEPTH = 3;
/** ggml's GGML_MAX_DIMS. */
const MAX_DIMS = 4;
/** The smallest tensor info: name length, one dim, type, offset. */
const MIN_TENSOR_INFO_BYTES = 8 + 4 + 8 + 4 + 8;
/** The smallest key/value: key length, value type, one byte of value. */
const MIN_KV_BYTES = 8 + 4 + 1;

export function readGgufFile(file: string): GgufFile {
  const fail = (message: string, tensor?: string): never => {
    throw new ModelLoadError(`${file}${tensor ? ` (tensor ${tensor})` : ''}: ${message}`, file, tensor);
  };
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (cause) {
    throw new ModelLoadError(`cannot open ${file}: ${(cause as Error).message}`, file, undefined, { cause });
  }
  try {
    return parse(new ByteCursor(fd, fstatSync(fd).size, fail), file, fail);
  } finally {
    closeSync(fd);
  }
}

function parse(cursor: ByteCursor, file: string, fail: (message: string, tensor?: string) => never): GgufFile {
  if (cursor.size < 24) fail(`truncated: ${cursor.size} bytes is shorter than a GGUF header`);
  const magic = cursor.u32('magic');
  if (magic !== GGUF_MAGIC) fail('not a GGUF file (bad magic)');
  const version = cursor.u32('version');
  if (version === 1) fail('GGUF version 1 is not supported (versions 2 and 3 are)');
  if (version !== 2 && version !== 3) {
    // A big-endian file shows its version byte-swapped.
    const swapped = ((version & 0xff) << 24) | ((version >> 8 & 0xff) << 16) | ((version >> 16 & 0xff) << 8) | (version >>> 24);
    if (swapped === 2 || swapped === 3) fail('big-endian GGUF files are not supported');
    fail(`GGUF version ${version} is not supported (versions 2 and 3 are)`);
  }
  const tensorCount = cursor.safeU64('tensor count');
  const kvCount = cursor.safeU64('metadata count');
  if (kvCount > cursor.remaining / MIN_KV_BYTES) fail(`metadata count ${kvCount} cannot fit in the file`);
  if (tensorCount > cursor.remaining / MIN_TENSOR_INFO_BYTES) fail(`tensor count ${tensorCount} cannot fit in the file`);
  if (kvCount > MAX_METADATA) fail(`metadata count ${kvCount} is over the limit of ${MAX_METADATA}`);
  if (tensorCount > MAX_TENSORS) fail(`tensor count ${tensorCount} is over the limit of ${MAX_TENSORS}`);

  const metadata = new Map<string, GgufValue>();
  for (let i = 0; i < kvCount; i++) {
    const key = cursor.string(`metadata key ${i}`);
    if (metadata.has(key)) fail(`metadata key ${key} appears twice`);
    const type = cursor.u32(`type of ${key}`);
    metadata.set(key, readValue(cursor, type, key, 0, fail));
  }

  let alignment = 32;
  const declared = metadata.get('general.alignment');
  if (declared !== undefined) {
    if (typeof declared !== 'number' || !Number.isInteger(declared) || declared <= 0 || (declared & (declared - 1)) !== 0)
      fail(`general.alignment must be a power of two, got ${String(declared)}`);
    alignment = declared as number;
  }

  const infos: Array<{ name: string; type: GgmlType; dims: number[]; relative: number; byteLength: number }> = [];
  const names = new Set<string>();
  for (let i = 0; i < tensorCount; i++) {
    const name = cursor.string(`tensor ${i} name`);
    if (names.has(name)) fail('tensor name appears twice', name);
    names.add(name);
    const rank = cursor.u32('tensor rank');
    if (rank < 1 || rank > MAX_DIMS) fail(`rank ${rank} is outside 1..${MAX_DIMS}`, name);
    const dims: number[] = [];
    let elements = 1;
    for (let d = 0; d < rank; d++) {
      const n = cursor.safeU64('dimension');
      if (n < 1) fail(`dimension ${d} is ${n}`, name);
      elements *= n;
      if (!Number.isSafeInteger(elements)) fail('element count is out of range', name);
      dims.push(n);
    }
    const typeId = cursor.u32('tensor type');
    const type = ggmlTypeById(typeId);
    if (!type) fail(`unknown ggml tensor type ${typeId}`, name);
    const rowBytes = ggmlRowBytes(type!, dims[0]!);
    if (rowBytes === undefined) fail(`${type!.name} rows need a multiple of ${type!.blockElements} values, ne0 is ${dims[0]}`, name);
    const byteLength = rowBytes! * (elements / dims[0]!);
    if (!Number.isSafeInteger(byteLength)) fail('byte size is out of range', name);
    const relative = cursor.safeU64('tensor offset');
    if (relative % alignment !== 0) fail(`offset ${relative} is not a multiple of the alignment ${alignment}`, name);
    infos.push({ name, type: type!, dims, relative, byteLength });
  }

  const dataOffset = Math.ceil(cursor.position / alignment) * alignment;
  if (dataOffset > cursor.size && infos.length > 0) fail(`truncated: the data section would start at ${dataOffset}, past the end (${cursor.size} bytes)`);
  const dataBytes = cursor.size - dataOffset;

  const tensors = new Map<string, GgufTensor>();
  for (const t of infos) {
    if (t.relative + t.byteLength > dataBytes)
      fail(`data [${t.relative}, ${t.relative + t.byteLength}) lies beyond the end of the data (${dataBytes} bytes): the file is truncated or the header lies`, t.name);
    tensors.set(t.name, { name: t.name, type: t.type, dims: t.dims, offset: dataOffset + t.relative, byteLength: t.byteLength });
  }
  const ordered = [...tensors.values()].sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < ordered.length; i++) {
    const prev = ordered[i - 1]!;
    const cur = ordered[i]!;
    if (cur.offset < prev.offset + prev.byteLength) fail(`data overlaps tensor ${prev.name}`, cur.name);
  }
  return { file, version, metadata, tensors, alignment, dataOffset, fileSize: cursor.size };
}

function readValue(cursor: ByteCursor, type: number, key: string, depth: number, fail: (message: string) => never): GgufValue {
  switch (type) {
    case GgufValueType.UINT8: return cursor.u8(key);
    case GgufValueType.INT8: return cursor.i8(key);
    case GgufValueType.UINT16: return cursor.u16(key);
    case GgufValueType.INT16: return cursor.i16(key);
    case GgufValueType.UINT32: return cursor.u32(key);
    case GgufValueType.INT32: return cursor.i32(key);
    case GgufValueType.FLOAT32: return cursor.f32(key);
    case GgufValueType.FLOAT64: return cursor.f64(key);
    case GgufValueType.UINT64: return narrow(cursor.u64(key));
    case GgufValueType.INT64: return narrow(cursor.i64(key));
    case GgufValueType.STRING: return cursor.string(key);
    case GgufValueType.BOOL: {
      const b = cursor.u8(key);
      if (b > 1) fail(`${key}: bool byte ${b} is neither 0 nor 1`);
      return b === 1;
    }
    case GgufValueType.ARRAY: {
      if (depth >= MAX_ARRAY_DEPTH) fail(`${key}: arrays nest deeper than ${MAX_ARRAY_DEPTH}`);
      const elementType = cursor.u32(`${key} element type`);
      const minBytes = SCALAR_BYTES[elementType as GgufValueType];
      if (minBytes === undefined) fail(`${key}: unknown array element type ${elementType}`);
      const count = cursor.safeU64(`${key} count`);
      if (count > cursor.remaining / minBytes!) fail(`${key}: ${count} elements cannot fit in the rest of the file`);
      if (count > MAX_ARRAY_ELEMENTS) fail(`${key}: ${count} elements is over the limit of ${MAX_ARRAY_ELEMENTS}`);
      const values: GgufValue[] = new Array(count);
      for (let i = 0; i < count; i++) values[i] = readValue(cursor, elementType, key, depth + 1, fail);
      return { elementType, values };
    }
    default:
      return fail(`${key}: unknown metadata value type ${type}`);
  }
}

const narrow = (v: bigint): number | bigint =>
  v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v;
