/**
 * A bounds-checked safetensors reader: single files and sharded folders
 * (model.safetensors.index.json).
 *
 * Only headers are read here (8 bytes of length + a JSON header); tensor data
 * is never loaded into the JS heap. Each tensor comes back as (file, absolute
 * byte offset, byte length, dtype, shape), validated against the file size, so
 * the native side can read it straight into its own memory.
 */
import { basename, dirname, join } from 'node:path';
import { ModelLoadError } from '../errors.js';
import { MAX_FILE_BYTES, openModelFile, parseJsonText, readModelFile } from './model-file.js';

/** Bytes per element of the dtypes safetensors defines. */
const DTYPE_BYTES: Record<string, number> = {
  F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U64: 8, U32: 4, U16: 2, U8: 1, BOOL: 1,
  F8_E4M3: 1, F8_E5M2: 1,
};

export interface TensorInfo {
  readonly name: string;
  readonly file: string;
  readonly dtype: string;
  readonly shape: readonly number[];
  /** Absolute byte offset of the data in `file`. */
  readonly offset: number;
  readonly byteLength: number;
}

/** All tensors of a model folder, by name. */
export type TensorIndex = ReadonlyMap<string, TensorInfo>;

/** The largest header we accept (the format's own readers use 100 MB). */
const MAX_HEADER_BYTES = 100 * 1024 * 1024;

/** Reads and validates one safetensors file's header. */
export async function readSafetensorsHeader(file: string): Promise<Map<string, TensorInfo>> {
  const fail = (message: string, tensor?: string): never => {
    throw new ModelLoadError(`${file}${tensor ? ` (tensor ${tensor})` : ''}: ${message}`, file, tensor);
  };
  const handle = await openModelFile(dirname(file), basename(file));
  if (handle === undefined) throw new ModelLoadError(`${file} does not exist`, file);
  let header: unknown;
  let dataStart: number;
  let dataBytes: number;
  try {
    const size = (await handle.stat()).size;
    if (size < 8) fail(`truncated: ${size} bytes, not even a header length`);
    const prefix = Buffer.alloc(8);
    await handle.read(prefix, 0, 8, 0);
    const headerBytes = prefix.readBigUInt64LE(0);
    if (headerBytes > BigInt(Math.min(MAX_HEADER_BYTES, size - 8)))
      fail(`header length ${headerBytes} exceeds the file (${size} bytes) or the ${MAX_HEADER_BYTES}-byte limit`);
    const length = Number(headerBytes);
    const text = Buffer.alloc(length);
    const { bytesRead } = await handle.read(text, 0, length, 8);
    if (bytesRead !== length) fail('truncated header');
    header = parseJsonText(text.toString('utf8'), `${file} (header)`);
    dataStart = 8 + length;
    dataBytes = size - dataStart;
  } finally {
    await handle.close();
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) return fail('header must be a JSON object');

  const tensors = new Map<string, TensorInfo>();
  const ranges: Array<[number, number, string]> = [];
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    if (typeof entry !== 'object' || entry === null) fail('entry is not an object', name);
    const { dtype, shape, data_offsets: offsets } = entry as Record<string, unknown>;
    if (typeof dtype !== 'string' || DTYPE_BYTES[dtype] === undefined) fail(`unknown dtype ${String(dtype)}`, name);
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) fail('shape must be a list of non-negative integers', name);
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0))
      fail('data_offsets must be two non-negative integers', name);
    const [begin, end] = offsets as [number, number];
    const dims = shape as number[];
    const elements = dims.reduce((a, b) => a * b, 1);
    const expected = elements * (DTYPE_BYTES[dtype as string] as number);
    if (end < begin) fail(`data_offsets [${begin}, ${end}] run backwards`, name);
    if (end - begin !== expected)
      fail(`data_offsets [${begin}, ${end}] hold ${end - begin} bytes but ${dtype} ${JSON.stringify(dims)} needs ${expected}`, name);
    if (end > dataBytes)
      fail(`data_offsets [${begin}, ${end}] lie beyond the end of the data (${dataBytes} bytes): the file is truncated or the header lies`, name);
    ranges.push([begin, end, name]);
    tensors.set(name, { name, file, dtype: dtype as string, shape: dims, offset: dataStart + begin, byteLength: end - begin });
  }
  // Tensors must not overlap (the format requires a dense, ordered layout; we only need disjointness).
  ranges.sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < ranges.length; i++) {
    const prev = ranges[i - 1] as [number, number, string];
    const cur = ranges[i] as [number, number, string];
    if (cur[0] < prev[1]) fail(`data overlaps tensor ${prev[2]}`, cur[2]);
  }
  return tensors;
}

/**
 * Indexes the tensors of a model folder: `model.safetensors`, or the shards
 * listed by `model.safetensors.index.json`.
 */
export async function openSafetensorsFolder(dir: string): Promise<TensorIndex> {
  const indexFile = join(dir, 'model.safetensors.index.json');
  const single = join(dir, 'model.safetensors');
  if (await exists(indexFile)) return openSharded(dir, indexFile);
  if (await exists(single)) return readSafetensorsHeader(single);
  throw new ModelLoadError(`${dir} has neither model.safetensors nor model.safetensors.index.json`, single);
}

async function openSharded(dir: string, indexFile: string): Promise<TensorIndex> {
  const bytes = await readModelFile(dir, basename(indexFile), MAX_FILE_BYTES.smallJson);
  const json = parseJsonText(bytes?.toString('utf8') ?? '', indexFile);
  const map = (json as { weight_map?: unknown } | null)?.weight_map;
  if (typeof map !== 'object' || map === null || Array.isArray(map))
    throw new ModelLoadError(`${indexFile}: missing "weight_map" object`, indexFile);

  const shards = new Map<string, Map<string, TensorInfo>>();
  const index = new Map<string, TensorInfo>();
  for (const [name, shard] of Object.entries(map)) {
    // A shard is a file name in this folder, nothing else (no paths out of it).
    if (typeof shard !== 'string' || shard === '' || basename(shard) !== shard || shard === '..')
      throw new ModelLoadError(`${indexFile}: tensor ${name} maps to an invalid shard name ${JSON.stringify(shard)}`, indexFile, name);
    let tensors = shards.get(shard);
    if (!tensors) {
      tensors = await readSafetensorsHeader(join(dir, shard));
      shards.set(shard, tensors);
    }
    const info = tensors.get(name);
    if (!info) throw new ModelLoadError(`${join(dir, shard)}: tensor ${name} listed in ${indexFile} is missing`, join(dir, shard), name);
    index.set(name, info);
  }
  return index;
}

/** Whether a model file exists; anything there but a regular file inside the folder is an error (model-file.ts). */
async function exists(file: string): Promise<boolean> {
  const handle = await openModelFile(dirname(file), basename(file));
  await handle?.close();
  return handle !== undefined;
}
