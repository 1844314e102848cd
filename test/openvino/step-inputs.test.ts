import { describe, expect, it } from 'vitest';
import type { StepBatch } from '../../src/backends/backend.js';
import { cacheBlockSize, compileProperties } from '../../src/backends/openvino/openvino-backend.js';
import { parseOpenVinoDevice, resolveOpenVinoDevice } from '../../src/backends/openvino/device.js';
import { LOGITS_INDICES, planStepInputs, type PortInfo } from '../../src/backends/openvino/step-inputs.js';
import { InvalidOptionError, UnsupportedModelError } from '../../src/errors.js';

const port = (name: string, type: string, shape: number[]): PortInfo => ({ name, type, shape });
/** The inputs SDPAToPagedAttention + weft's logits rows give a 1-layer model (as the CPU plugin reports them). */
const PA_INPUTS: PortInfo[] = [
  port('input_ids', 'i64', [-1]),
  port('position_ids', 'i64', [-1]),
  port('max_context_len', 'i32', []),
  port('past_lens', 'i32', [-1]),
  port('subsequence_begins', 'i32', [-1]),
  port('block_indices_begins', 'i32', [-1]),
  port('block_indices', 'i32', [-1]),
  port('key_cache.0', 'f32', [-1, 2, 32, 32]),
  port('value_cache.0', 'f32', [-1, 2, 32, 32]),
  port(LOGITS_INDICES, 'i64', [-1]),
];

/** Two sequences: one decoding (5 cached, 1 new), one prefilling 3 tokens from scratch. */
const BATCH: StepBatch = {
  inputIds: Int32Array.of(11, 21, 22, 23),
  positions: Int32Array.of(5, 0, 1, 2),
  pastLens: Int32Array.of(5, 0),
  subsequenceBegins: Int32Array.of(0, 1, 4),
  blockIndices: Int32Array.of(3, 7),
  blockIndicesBegins: Int32Array.of(0, 1, 2),
  maxContextLen: 6,
  logitsIndices: Int32Array.of(0, 3),
};

describe('StepBatch -> OpenVINO PagedAttention inputs', () => {
  it('maps each contract array to its input, in the order the model declares them, cache inputs left to the runner', () => {
    const inputs = planStepInputs(PA_INPUTS)(BATCH);
    expect(inputs.map((i) => i.name)).toEqual([
      'input_ids',
      'position_ids',
      'max_context_len',
      'past_lens',
      'subsequence_begins',
      'block_indices_begins',
      'block_indices',
      LOGITS_INDICES,
    ]);
    const byName = Object.fromEntries(inputs.map((i) => [i.name, i]));
    expect([...byName.input_ids!.data]).toEqual([11, 21, 22, 23]);
    expect(byName.input_ids!.shape).toEqual([4]);
    expect([...byName.position_ids!.data]).toEqual([5, 0, 1, 2]);
    expect([...byName.past_lens!.data]).toEqual([5, 0]);
    expect([...byName.subsequence_begins!.data]).toEqual([0, 1, 4]);
    expect([...byName.block_indices!.data]).toEqual([3, 7]);
    expect([...byName.block_indices_begins!.data]).toEqual([0, 1, 2]);
    expect(byName.max_context_len!.shape).toEqual([]);
    expect([...byName.max_context_len!.data]).toEqual([6]);
    expect([...byName[LOGITS_INDICES]!.data]).toEqual([0, 3]);
  });

  it('fills the optional inputs newer PagedAttention models declare with their documented "unused" values', () => {
    const extra = [
      port('score_aggregation_window', 'i32', [-1]),
      port('rotated_block_indices', 'i32', [-1]),
      port('rotation_deltas', 'i32', [-1, -1]),
      port('rotation_trig_lut', 'f32', [-1, -1]),
      port('xattention_threshold', 'f32', [-1]),
      port('xattention_block_size', 'i32', []),
      port('xattention_stride', 'i32', []),
      port('adaptive_rkv_start_size', 'i32', []),
      port('adaptive_rkv_evictable_sizes', 'i32', [-1]),
      port('adaptive_rkv_diversity_block_set_indices', 'i32', [-1]),
      port('adaptive_rkv_diversity_block_set_indices_begins', 'i32', [-1]),
      port('token_type_ids', 'i64', [-1]),
    ];
    const byName = Object.fromEntries(planStepInputs([...PA_INPUTS, ...extra])(BATCH).map((i) => [i.name, i]));
    expect([...byName.score_aggregation_window!.data]).toEqual([1, 1]);
    expect(byName.rotated_block_indices!.shape).toEqual([0]);
    expect(byName.rotation_deltas!.shape).toEqual([0, 0]);
    expect(byName.rotation_trig_lut!.data).toBeInstanceOf(Float32Array);
    expect(byName.rotation_trig_lut!.shape).toEqual([0, 0]);
    expect(byName.xattention_threshold!.shape).toEqual([0]);
    expect(byName.xattention_block_size!.shape).toEqual([]);
    expect([...byName.adaptive_rkv_evictable_sizes!.data]).toEqual([0, 0]);
    expect([...byName.adaptive_rkv_diversity_block_set_indices_begins!.data]).toEqual([0, 0, 0]);
    expect([...byName.token_type_ids!.data]).toEqual([0, 0, 0, 0]);
  });

  it('refuses at planning time a model missing a PagedAttention input, or declaring one weft cannot fill', () => {
    expect(() => planStepInputs(PA_INPUTS.filter((p) => p.name !== 'past_lens'))).toThrow(UnsupportedModelError);
    expect(() => planStepInputs(PA_INPUTS.filter((p) => p.name !== LOGITS_INDICES))).toThrow(/weft_logits_indices/);
    expect(() => planStepInputs([...PA_INPUTS, port('inputs_embeds', 'f32', [-1, 64])])).toThrow(/inputs_embeds/);
  });

  it('reads the block size from value_cache.0 dimension 2 whatever the key cache layout', () => {
    expect(cacheBlockSize(PA_INPUTS)).toBe(32);
    const gpuLike = [port('key_cache.0', 'i8', [-1, 8, 132, 16]), port('value_cache.0', 'i8', [-1, 8, 16, 132])];
    expect(cacheBlockSize(gpuLike)).toBe(16);
  });
});

describe('OpenVINO device names and compile properties', () => {
  it('parses weft device names and resolves AUTO to a GPU when OpenVINO reports one', () => {
    expect(parseOpenVinoDevice('openvino:cpu')).toBe('CPU');
    expect(parseOpenVinoDevice('openvino:GPU.1')).toBe('GPU.1');
    expect(resolveOpenVinoDevice('openvino:AUTO', ['CPU'])).toBe('CPU');
    expect(resolveOpenVinoDevice('openvino:AUTO', ['CPU', 'GPU.0', 'GPU.1'])).toBe('GPU.0');
    expect(() => parseOpenVinoDevice('openvino:NPU')).toThrow(InvalidOptionError);
    expect(() => parseOpenVinoDevice('openvino')).toThrow(InvalidOptionError);
    expect(() => resolveOpenVinoDevice('openvino:GPU', ['CPU'])).toThrow(/no GPU device/);
  });

  it('passes the KV precision, inference precision and CPU threads as OpenVINO hints', () => {
    expect(compileProperties('CPU', { kvPrecision: 'u8', inferencePrecision: 'f32', threads: 2 })).toEqual({
      KV_CACHE_PRECISION: 'u8',
      INFERENCE_PRECISION_HINT: 'f32',
      INFERENCE_NUM_THREADS: '2',
    });
    expect(compileProperties('GPU', { threads: 2 })).toEqual({ KV_CACHE_PRECISION: 'f32' });
    // An f32 cache on CPU brings f32 compute unless told otherwise; u8 leaves the plugin's default.
    expect(compileProperties('CPU', {})).toEqual({ KV_CACHE_PRECISION: 'f32', INFERENCE_PRECISION_HINT: 'f32' });
    expect(compileProperties('CPU', { kvPrecision: 'u8' })).toEqual({ KV_CACHE_PRECISION: 'u8' });
    expect(compileProperties('CPU', { kvPrecision: 'u8', properties: { KV_CACHE_PRECISION: 'f16', PERFORMANCE_HINT: 'LATENCY' } })).toEqual({
      KV_CACHE_PRECISION: 'f16',
      PERFORMANCE_HINT: 'LATENCY',
    });
  });
});
