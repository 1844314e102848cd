/**
 * qwen35 GGUF metadata -> the hybrid ModelConfig (the same one config.json gives),
 * and broken or unsupported hybrid files refused with a typed error naming the key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ModelLoadError, UnsupportedModelError } from '../../src/index.js';
import { loadModelConfig } from '../../src/model-files/config.js';
import { ggufModelConfig } from '../../src/model-files/gguf/config.js';
import { readGgufFile } from '../../src/model-files/gguf/reader.js';
import { tiledHeadOrder } from '../../src/model-files/gguf/hybrid-transform.js';
import { meta, type MetaValue } from '../support/gguf-writer.js';
import { convertQwen35ToGguf } from '../support/qwen35-to-gguf.js';

const fixtures = join(__dirname, '..', 'fixtures');
const work = mkdtempSync(join(tmpdir(), 'weft-qwen35-meta-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;
async function configOf(fixture: string, edits: Array<[string, MetaValue | null]> = []) {
  const file = join(work, `m${n++}.gguf`);
  await convertQwen35ToGguf(join(fixtures, fixture), file, 'F32', edits);
  return ggufModelConfig(readGgufFile(file));
}

describe('qwen35 GGUF config', () => {
  it.each(['qwen35-tiny', 'qwen35-tiny-vl'])('%s: the config config.json gives (bar the informative dtype, the safetensors prefix, eps as a float32)', async (fixture) => {
    const fromJson = await loadModelConfig(join(fixtures, fixture));
    const fromGguf = await configOf(fixture);
    const { dtype: _a, weightPrefix: _b, ...expected } = fromJson;
    const { dtype: _c, ...actual } = fromGguf;
    // GGUF holds the epsilon as a float32; both layouts are the architecture qwen35.
    expect(actual.architecture).toBe('Qwen3_5ForCausalLM');
    expect({ ...actual, architecture: expected.architecture }).toEqual({ ...expected, rmsNormEps: Math.fround(expected.rmsNormEps) });
    expect(fromGguf.linearAttention).toEqual({ layers: [true, true, true, false, true, true, true, false], numKeyHeads: 2, numValueHeads: 4, keyHeadDim: 16, valueHeadDim: 8, convKernel: 4 });
    expect(fromGguf.rotaryDim).toBe(4);
  });

  it('full_attention_interval absent: every 4th layer is full attention, as llama.cpp reads it', async () => {
    const config = await configOf('qwen35-tiny', [['qwen35.full_attention_interval', null]]);
    expect(config.linearAttention?.layers).toEqual([true, true, true, false, true, true, true, false]);
  });

  it('MTP blocks counted in block_count (nextn_predict_layers) are not run', async () => {
    const config = await configOf('qwen35-tiny', [['qwen35.block_count', meta.u32(9)], ['qwen35.nextn_predict_layers', meta.u32(1)]]);
    expect(config.numLayers).toBe(8);
  });

  const broken: Array<[string, Array<[string, MetaValue | null]>, RegExp]> = [
    ['ssm.conv_kernel missing', [['qwen35.ssm.conv_kernel', null]], /missing qwen35\.ssm\.conv_kernel/],
    ['ssm.state_size missing', [['qwen35.ssm.state_size', null]], /missing qwen35\.ssm\.state_size/],
    ['ssm.group_count missing', [['qwen35.ssm.group_count', null]], /missing qwen35\.ssm\.group_count/],
    ['ssm.time_step_rank missing', [['qwen35.ssm.time_step_rank', null]], /missing qwen35\.ssm\.time_step_rank/],
    ['ssm.inner_size missing', [['qwen35.ssm.inner_size', null]], /missing qwen35\.ssm\.inner_size/],
    ['rope.dimension_count missing', [['qwen35.rope.dimension_count', null]], /missing qwen35\.rope\.dimension_count/],
    ['ssm.conv_kernel a string', [['qwen35.ssm.conv_kernel', meta.str('4')]], /qwen35\.ssm\.conv_kernel must be a finite number/],
    ['value heads not a multiple of key heads', [['qwen35.ssm.time_step_rank', meta.u32(3)]], /qwen35\.ssm\.time_step_rank \(3 value heads\) must be a multiple of qwen35\.ssm\.group_count/],
    ['inner_size not whole value heads', [['qwen35.ssm.inner_size', meta.u32(30)]], /qwen35\.ssm\.inner_size 30 must be a multiple of qwen35\.ssm\.time_step_rank 4/],
    ['full_attention_interval 0', [['qwen35.full_attention_interval', meta.u32(0)]], /qwen35\.full_attention_interval must be a positive integer, got 0/],
    ['conv kernel of 17 taps', [['qwen35.ssm.conv_kernel', meta.u32(17)]], /qwen35\.ssm\.conv_kernel 17 is larger than the 16 taps/],
    ['odd rotary dims', [['qwen35.rope.dimension_count', meta.u32(3)]], /qwen35\.rope\.dimension_count 3 must be even/],
  ];
  it.each(broken)('%s: ModelLoadError naming the key', async (_, edits, message) => {
    const error = await configOf('qwen35-tiny', edits).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelLoadError);
    expect((error as Error).message).toMatch(message);
  });

  it.each([
    ['qwen35moe', /GGUF architecture "qwen35moe" is not supported yet: the mixture-of-experts variant/],
  ])('%s is refused by name (UnsupportedModelError)', async (arch, message) => {
    const error = await configOf('qwen35-tiny', [['general.architecture', meta.str(arch)]]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnsupportedModelError);
    expect((error as Error).message).toMatch(message);
  });
});

describe('tiledHeadOrder', () => {
  it('HF value head g*r + j is stored as head j*Hk + g (llama.cpp converter, grouped -> tiled)', () => {
    // 2 key heads, 3 value heads each: HF [G0v0 G0v1 G0v2 G1v0 G1v1 G1v2], stored [G0v0 G1v0 G0v1 G1v1 G0v2 G1v2].
    expect([...tiledHeadOrder(2, 6)]).toEqual([0, 2, 4, 1, 3, 5]);
    expect([...tiledHeadOrder(4, 4)]).toEqual([0, 1, 2, 3]);
  });
});
