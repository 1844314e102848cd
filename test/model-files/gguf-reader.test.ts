/** The GGUF reader on hand-built files: every value type, layout rules, and malformed files. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ModelLoadError } from '../../src/index.js';
import { GgufValueType, MAX_ARRAY_ELEMENTS, readGgufFile } from '../../src/model-files/gguf/reader.js';
import { encodeGguf, meta, type GgufSpec } from '../support/gguf-writer.js';

const dir = mkdtempSync(join(tmpdir(), 'weft-gguf-test-'));
let counter = 0;
function write(bytes: Buffer): string {
  const file = join(dir, `t${counter++}.gguf`);
  writeFileSync(file, bytes);
  return file;
}
const read = (spec: GgufSpec) => readGgufFile(write(encodeGguf(spec)));
const f32Data = (n: number) => new Uint8Array(new Float32Array(n).fill(1).buffer);

function small(): GgufSpec {
  return {
    metadata: [
      ['general.architecture', meta.str('llama')],
      ['general.alignment', meta.u32(32)],
    ],
    tensors: [
      { name: 'a', type: 0, dims: [4, 2], data: f32Data(8) },
      { name: 'b', type: 8, dims: [32, 3], data: new Uint8Array(34 * 3) }, // Q8_0: 34 bytes per 32 values
    ],
  };
}

function expectLoadError(file: string, pattern: RegExp): void {
  let error: unknown;
  try {
    readGgufFile(file);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ModelLoadError);
  expect((error as Error).message).toMatch(pattern);
}

describe('GGUF reader', () => {
  it('reads every metadata value type, v2 and v3', () => {
    for (const version of [2, 3]) {
      const g = read({
        version,
        metadata: [
          ['u8', { type: GgufValueType.UINT8, value: 200 }],
          ['i8', { type: GgufValueType.INT8, value: -5 }],
          ['u16', { type: GgufValueType.UINT16, value: 60000 }],
          ['i16', { type: GgufValueType.INT16, value: -30000 }],
          ['u32', meta.u32(4_000_000_000)],
          ['i32', meta.i32(-2_000_000_000)],
          ['f32', meta.f32(0.5)],
          ['f64', meta.f64(1e-300)],
          ['bool', meta.bool(true)],
          ['str', meta.str('héllo')],
          ['u64', meta.u64(2n ** 40n)],
          ['u64big', meta.u64(2n ** 63n)],
          ['i64', { type: GgufValueType.INT64, value: -7n }],
          ['strs', meta.strings(['a', '', 'ü'])],
          ['nums', meta.f32s([1, 2.5])],
          ['nested', { type: GgufValueType.ARRAY, elementType: GgufValueType.ARRAY, values: [meta.i32s([1, 2]), meta.i32s([3])] }],
        ],
        tensors: [],
      });
      expect(g.version).toBe(version);
      const m = Object.fromEntries(g.metadata);
      expect(m).toMatchObject({ u8: 200, i8: -5, u16: 60000, i16: -30000, u32: 4_000_000_000, i32: -2_000_000_000, f32: 0.5, f64: 1e-300 });
      expect(m.bool).toBe(true);
      expect(m.str).toBe('héllo');
      expect(m.u64).toBe(2 ** 40);
      expect(m.u64big).toBe(2n ** 63n);
      expect(m.i64).toBe(-7);
      expect(m.strs).toEqual({ elementType: GgufValueType.STRING, values: ['a', '', 'ü'] });
      expect(m.nums).toEqual({ elementType: GgufValueType.FLOAT32, values: [1, 2.5] });
      expect(m.nested).toEqual({
        elementType: GgufValueType.ARRAY,
        values: [{ elementType: GgufValueType.INT32, values: [1, 2] }, { elementType: GgufValueType.INT32, values: [3] }],
      });
    }
  });

  it('places tensors at the aligned data section with their block sizes', () => {
    for (const alignment of [32, 64, 256]) {
      const spec = small();
      spec.alignment = alignment;
      spec.metadata[1] = ['general.alignment', meta.u32(alignment)];
      const g = read(spec);
      expect(g.alignment).toBe(alignment);
      expect(g.dataOffset % alignment).toBe(0);
      const a = g.tensors.get('a')!;
      const b = g.tensors.get('b')!;
      expect(a).toMatchObject({ type: { name: 'F32' }, dims: [4, 2], offset: g.dataOffset, byteLength: 32 });
      expect(b).toMatchObject({ type: { name: 'Q8_0' }, dims: [32, 3], byteLength: 102 });
      expect(b.offset).toBe(g.dataOffset + Math.max(alignment, 32));
    }
  });

  it('reads a 151,936-token array (larger than its 1 MiB read window) exactly', () => {
    const tokens = Array.from({ length: 151_936 }, (_, i) => `tok${i}`);
    const g = read({ metadata: [['tokenizer.ggml.tokens', meta.strings(tokens)]], tensors: [] });
    expect((g.metadata.get('tokenizer.ggml.tokens') as { values: readonly string[] }).values).toEqual(tokens);
  });

  describe('malformed files are ModelLoadErrors', () => {
    it('bad magic, versions 1 and 4, big-endian', () => {
      const good = encodeGguf(small());
      const bad = Buffer.from(good);
      bad.write('GGML', 0, 'latin1');
      expectLoadError(write(bad), /bad magic/);
      for (const [version, pattern] of [[1, /version 1/], [4, /version 4/], [0x03000000, /big-endian/]] as const) {
        const b = Buffer.from(good);
        b.writeUInt32LE(version, 4);
        expectLoadError(write(b), pattern);
      }
    });

    it('every truncation of a valid file', () => {
      const good = encodeGguf(small());
      for (let length = 0; length < good.length; length++) {
        expect(() => readGgufFile(write(good.subarray(0, length))), `length ${length}`).toThrow(ModelLoadError);
      }
    });

    it('counts larger than the file could hold, without allocating them', () => {
      const good = encodeGguf(small());
      const tensors = Buffer.from(good);
      tensors.writeBigUInt64LE(2n ** 50n, 8);
      expectLoadError(write(tensors), /tensor count .* cannot fit/);
      const kvs = Buffer.from(good);
      kvs.writeBigUInt64LE(2n ** 62n, 16);
      expectLoadError(write(kvs), /metadata count .* out of range|cannot fit/);
      const array = encodeGguf({ metadata: [['x', meta.strings(['a'])]], tensors: [] });
      // key "x": 8 + 1 bytes, type 4 bytes, element type 4 bytes, then the count.
      array.writeBigUInt64LE(2n ** 40n, 24 + 9 + 4 + 4);
      expectLoadError(write(array), /elements cannot fit/);
      const string = encodeGguf({ metadata: [['x', meta.str('abc')]], tensors: [] });
      string.writeBigUInt64LE(2n ** 33n, 24 + 9 + 4);
      expectLoadError(write(string), /claims|truncated/);
    });

    it('arrays longer than the element cap, even when the file is big enough to hold them', () => {
      const header = encodeGguf({ metadata: [['x', { type: GgufValueType.ARRAY, elementType: GgufValueType.UINT8, values: [] }]], tensors: [] });
      header.writeBigUInt64LE(BigInt(MAX_ARRAY_ELEMENTS + 1), 24 + 9 + 4 + 4);
      expectLoadError(write(Buffer.concat([header, Buffer.alloc(MAX_ARRAY_ELEMENTS + 64)])), /over the limit/);
    });

    it('lying offsets: beyond the end, unaligned, overlapping', () => {
      const beyond = small();
      beyond.tensors[1]!.offset = 1 << 20;
      const file = write(encodeGguf(beyond).subarray(0, 2000));
      expectLoadError(file, /beyond the end|truncated/);
      const unaligned = small();
      unaligned.tensors[1]!.offset = 40;
      expectLoadError(write(encodeGguf(unaligned)), /not a multiple of the alignment/);
      const overlap = small();
      overlap.tensors[1]!.offset = 0;
      expectLoadError(write(encodeGguf(overlap)), /overlaps tensor/);
    });

    it('unknown tensor types, partial blocks, bad ranks and dims', () => {
      const cases: Array<[Partial<GgufSpec['tensors'][0]>, RegExp]> = [
        [{ type: 99 }, /unknown ggml tensor type 99/],
        [{ type: 8, dims: [16, 3] }, /multiple of 32/],
        [{ dims: [] }, /rank 0/],
        [{ dims: [1, 1, 1, 1, 1] }, /rank 5/],
        [{ dims: [32, 0] }, /dimension 1 is 0/],
      ];
      for (const [edit, pattern] of cases) {
        const spec = small();
        Object.assign(spec.tensors[1]!, edit);
        expectLoadError(write(encodeGguf(spec)), pattern);
      }
    });

    it('unknown value types, duplicate keys and names, bad alignment, bad bools', () => {
      const unknown = encodeGguf({ metadata: [['x', meta.u32(1)]], tensors: [] });
      unknown.writeUInt32LE(77, 24 + 9);
      expectLoadError(write(unknown), /unknown metadata value type 77/);
      expectLoadError(write(encodeGguf({ metadata: [['x', meta.u32(1)], ['x', meta.u32(2)]], tensors: [] })), /appears twice/);
      const names = small();
      names.tensors[1]!.name = 'a';
      expectLoadError(write(encodeGguf(names)), /appears twice/);
      expectLoadError(write(encodeGguf({ metadata: [['general.alignment', meta.u32(48)]], tensors: [] })), /power of two/);
      const bool = encodeGguf({ metadata: [['x', meta.bool(true)]], tensors: [] });
      bool.writeUInt8(7, 24 + 9 + 4);
      expectLoadError(write(bool), /bool byte 7/);
    });

    it('random corruption never escapes as anything but a ModelLoadError', () => {
      const good = encodeGguf(small());
      let seed = 12345;
      const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
      for (let i = 0; i < 400; i++) {
        const bad = Buffer.from(good);
        const flips = 1 + Math.floor(random() * 4);
        for (let f = 0; f < flips; f++) bad[Math.floor(random() * 300) % bad.length] = Math.floor(random() * 256);
        try {
          readGgufFile(write(bad));
        } catch (error) {
          expect(error).toBeInstanceOf(ModelLoadError);
        }
      }
    });
  });
});
