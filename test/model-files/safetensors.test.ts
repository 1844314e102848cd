import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ModelLoadError } from '../../src/errors.js';
import { parseModelConfig } from '../../src/model-files/config.js';
import { openSafetensorsFolder, readSafetensorsHeader } from '../../src/model-files/safetensors.js';
import { huggingFaceTensorName, planWeights, type WeightSlot } from '../../src/model-files/weights.js';
import { encodeSafetensors, f32Bytes, type RawTensor, writeSafetensors } from './safetensors-writer.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'weft-st-'));
const tensors: RawTensor[] = [
  { name: 'a', dtype: 'F32', shape: [2, 3], data: f32Bytes([1, 2, 3, 4, 5, 6]) },
  { name: 'b', dtype: 'F16', shape: [4], data: new Uint8Array(8) },
];

/** The ModelLoadError a promise rejects with. */
async function loadError(p: Promise<unknown>): Promise<ModelLoadError> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(ModelLoadError);
  return e as ModelLoadError;
}

describe('readSafetensorsHeader', () => {
  it('reads names, dtypes, shapes and absolute offsets', async () => {
    const file = join(tmp(), 'model.safetensors');
    writeSafetensors(file, tensors);
    const header = await readSafetensorsHeader(file);
    const a = header.get('a');
    const b = header.get('b');
    expect(a).toMatchObject({ dtype: 'F32', shape: [2, 3], byteLength: 24, file });
    expect(b).toMatchObject({ dtype: 'F16', shape: [4], byteLength: 8 });
    expect((b?.offset ?? 0) - (a?.offset ?? 0)).toBe(24);
    expect(header.has('__metadata__')).toBe(false);
  });

  it('a truncated file names the file and the tensor that runs past its end', async () => {
    const file = join(tmp(), 'model.safetensors');
    const bytes = encodeSafetensors(tensors);
    writeFileSync(file, bytes.subarray(0, bytes.length - 3));
    const e = await loadError(readSafetensorsHeader(file));
    expect(e.file).toBe(file);
    expect(e.tensor).toBe('b');
    expect(e.message).toMatch(/truncated or the header lies/);
  });

  it('offsets pointing beyond the data are refused', async () => {
    const file = join(tmp(), 'model.safetensors');
    writeSafetensors(file, tensors, (h) => {
      h.b.data_offsets = [1000, 1008];
    });
    expect((await loadError(readSafetensorsHeader(file))).tensor).toBe('b');
  });

  it('offsets whose size disagrees with dtype x shape are refused', async () => {
    const file = join(tmp(), 'model.safetensors');
    writeSafetensors(file, tensors, (h) => {
      h.a.shape = [3, 3];
    });
    const e = await loadError(readSafetensorsHeader(file));
    expect(e.tensor).toBe('a');
    expect(e.message).toMatch(/needs 36/);
  });

  it('overlapping tensors are refused', async () => {
    const file = join(tmp(), 'model.safetensors');
    writeSafetensors(file, [...tensors, { name: 'c', dtype: 'F32', shape: [1], data: f32Bytes([0]) }], (h) => {
      h.c.data_offsets = [4, 8];
    });
    expect((await loadError(readSafetensorsHeader(file))).message).toMatch(/overlaps/);
  });

  it('a header length beyond the file, a short file, bad JSON and bad entries are refused', async () => {
    const dir = tmp();
    const huge = Buffer.alloc(16);
    huge.writeBigUInt64LE(1n << 40n);
    writeFileSync(join(dir, 'huge'), huge);
    expect((await loadError(readSafetensorsHeader(join(dir, 'huge')))).message).toMatch(/header length/);
    writeFileSync(join(dir, 'short'), Buffer.alloc(5));
    expect((await loadError(readSafetensorsHeader(join(dir, 'short')))).message).toMatch(/truncated/);
    const bad = Buffer.concat([Buffer.from([4, 0, 0, 0, 0, 0, 0, 0]), Buffer.from('{bad')]);
    writeFileSync(join(dir, 'bad'), bad);
    expect((await loadError(readSafetensorsHeader(join(dir, 'bad')))).message).toMatch(/not valid JSON/);
    writeSafetensors(join(dir, 'dtype'), tensors, (h) => {
      h.a.dtype = 'F31';
    });
    expect((await loadError(readSafetensorsHeader(join(dir, 'dtype')))).message).toMatch(/unknown dtype F31/);
    writeSafetensors(join(dir, 'shape'), tensors, (h) => {
      h.a.shape = [2, -3];
    });
    expect((await loadError(readSafetensorsHeader(join(dir, 'shape')))).tensor).toBe('a');
    await loadError(readSafetensorsHeader(join(dir, 'missing')));
  });
});

describe('openSafetensorsFolder (sharded)', () => {
  it('joins the shards listed by model.safetensors.index.json', async () => {
    const dir = tmp();
    writeSafetensors(join(dir, 'model-00001-of-00002.safetensors'), [tensors[0] as RawTensor]);
    writeSafetensors(join(dir, 'model-00002-of-00002.safetensors'), [tensors[1] as RawTensor]);
    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({
      metadata: {}, weight_map: { a: 'model-00001-of-00002.safetensors', b: 'model-00002-of-00002.safetensors' },
    }));
    const index = await openSafetensorsFolder(dir);
    expect(index.get('a')?.file).toBe(join(dir, 'model-00001-of-00002.safetensors'));
    expect(index.get('b')?.file).toBe(join(dir, 'model-00002-of-00002.safetensors'));
  });

  it('a tensor missing from its shard, a shard outside the folder, or bad JSON is a ModelLoadError', async () => {
    const dir = tmp();
    writeSafetensors(join(dir, 's1.safetensors'), [tensors[0] as RawTensor]);
    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ weight_map: { a: 's1.safetensors', b: 's1.safetensors' } }));
    expect((await loadError(openSafetensorsFolder(dir))).tensor).toBe('b');
    writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ weight_map: { a: '../s1.safetensors' } }));
    expect((await loadError(openSafetensorsFolder(dir))).message).toMatch(/invalid shard name/);
    writeFileSync(join(dir, 'model.safetensors.index.json'), '{');
    expect((await loadError(openSafetensorsFolder(dir))).message).toMatch(/not valid JSON/);
    await loadError(openSafetensorsFolder(tmp()));
  });
});

describe('planWeights', () => {
  const shapes: Record<string, number[]> = {
    'model.embed_tokens.weight': [5, 4],
    'model.norm.weight': [4],
    'model.layers.0.input_layernorm.weight': [4],
    'model.layers.0.post_attention_layernorm.weight': [4],
    'model.layers.0.self_attn.q_proj.weight': [4, 4],
    'model.layers.0.self_attn.k_proj.weight': [2, 4],
    'model.layers.0.self_attn.v_proj.weight': [2, 4],
    'model.layers.0.self_attn.o_proj.weight': [4, 4],
    'model.layers.0.mlp.gate_proj.weight': [6, 4],
    'model.layers.0.mlp.up_proj.weight': [6, 4],
    'model.layers.0.mlp.down_proj.weight': [4, 6],
  };
  // The slots a backend would report for this model (the CPU backend's come from
  // its native table: test/native/weight-slots.test.ts).
  const slots: WeightSlot[] = [
    { kind: 'embed_tokens', layer: -1, shape: [5, 4] },
    { kind: 'norm', layer: -1, shape: [4] },
    ...(['input_layernorm', 'post_attention_layernorm'] as const).map((kind) => ({ kind, layer: 0, shape: [4] })),
    { kind: 'q_proj', layer: 0, shape: [4, 4] },
    { kind: 'k_proj', layer: 0, shape: [2, 4] },
    { kind: 'v_proj', layer: 0, shape: [2, 4] },
    { kind: 'o_proj', layer: 0, shape: [4, 4] },
    { kind: 'gate_proj', layer: 0, shape: [6, 4] },
    { kind: 'up_proj', layer: 0, shape: [6, 4] },
    { kind: 'down_proj', layer: 0, shape: [4, 6] },
  ];
  const index = (edit: (name: string, t: { dtype: string; shape: number[] }) => void = () => {}) =>
    new Map(Object.entries(shapes).map(([name, shape]) => {
      const t = { dtype: 'F32', shape: [...shape] };
      edit(name, t);
      return [name, { name, file: '/m/model.safetensors', offset: 0, byteLength: 0, ...t }];
    }));

  it('names each slot as Hugging Face does', () => {
    expect(huggingFaceTensorName('q_proj.bias', 2)).toBe('model.layers.2.self_attn.q_proj.bias');
    expect(huggingFaceTensorName('k_norm', 0)).toBe('model.layers.0.self_attn.k_norm.weight');
    expect(huggingFaceTensorName('down_proj', 1)).toBe('model.layers.1.mlp.down_proj.weight');
    expect(huggingFaceTensorName('input_layernorm', 1)).toBe('model.layers.1.input_layernorm.weight');
    expect(huggingFaceTensorName('lm_head', -1)).toBe('lm_head.weight');
    expect(huggingFaceTensorName('norm', -1)).toBe('model.norm.weight');
  });

  it('plans every tensor of a complete model', () => {
    const plan = planWeights(slots, index(), '/m');
    expect(plan.map((p) => p.info.name).sort()).toEqual(Object.keys(shapes).sort());
    expect(plan.map((p) => p.kind)).toEqual(slots.map((s) => s.kind));
  });

  it('a wrong dtype names the file and the tensor', () => {
    try {
      planWeights(slots, index((n, t) => { if (n.endsWith('k_proj.weight')) t.dtype = 'I64'; }), '/m');
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ModelLoadError);
      expect((e as ModelLoadError).tensor).toBe('model.layers.0.self_attn.k_proj.weight');
      expect((e as ModelLoadError).file).toBe('/m/model.safetensors');
      expect((e as Error).message).toMatch(/dtype I64/);
    }
  });

  it('a wrong shape or a missing tensor names the tensor', () => {
    expect(() => planWeights(slots, index((n, t) => { if (n.endsWith('v_proj.weight')) t.shape = [4, 4]; }), '/m')).toThrow(/v_proj.weight.*shape \[4,4\], expected \[2,4\]/);
    const missing = index();
    missing.delete('model.norm.weight');
    expect(() => planWeights(slots, missing, '/m')).toThrow(/model.norm.weight is missing/);
    expect(() => planWeights([...slots, { kind: 'lm_head', layer: -1, shape: [5, 4] }], index(), '/m')).toThrow(/lm_head.weight is missing/);
  });
});
