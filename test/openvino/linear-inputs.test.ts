/**
 * The la.* inputs of a paged hybrid model, from the engine's linear-state and
 * checkpoints block tables (pure: no OpenVINO). The layout is the one checked
 * against the CPU plugin in docs/openvino.md ("Hybrid models"): per sequence a
 * read block, then one write block per checkpoint interval the step reaches into.
 */
import { describe, expect, it } from 'vitest';
import type { StepBatch } from '../../src/backends/backend.js';
import {
  CHECKPOINT_POOL,
  linearAttentionInputs,
  LINEAR_STATE_POOL,
  LOGITS_INDICES,
  planStepInputs,
  type PortInfo,
} from '../../src/backends/openvino/step-inputs.js';
import { BackendError, UnsupportedModelError } from '../../src/errors.js';

const port = (name: string, type: string, shape: number[]): PortInfo => ({ name, type, shape });
const PA: PortInfo[] = [
  port('input_ids', 'i64', [-1]),
  port('position_ids', 'i64', [-1]),
  port('max_context_len', 'i32', []),
  port('past_lens', 'i32', [-1]),
  port('subsequence_begins', 'i32', [-1]),
  port('block_indices_begins', 'i32', [-1]),
  port('block_indices', 'i32', [-1]),
  port('key_cache.0', 'f32', [-1, 2, 32, 16]),
  port('value_cache.0', 'f32', [-1, 2, 32, 16]),
  port(LOGITS_INDICES, 'i64', [-1]),
];
const LA: PortInfo[] = [
  port('la.block_indices', 'i32', [-1]),
  port('la.block_indices_begins', 'i32', [-1]),
  port('la.past_lens', 'i32', [-1]),
  port('la.cache_interval', 'i32', [-1]),
  port('conv_state_table.0', 'f32', [-1, 96, 4]),
  port('gated_delta_state_table.0', 'f32', [-1, 4, 8, 16]),
];

/** A step of sequences given as [pastLen, new tokens, slot, checkpoint blocks]. */
function batch(seqs: Array<[number, number, number, number[]]>, opts: { checkpoints?: boolean; resume?: number[] } = {}): StepBatch {
  const B = seqs.length;
  const subsequenceBegins = new Int32Array(B + 1);
  seqs.forEach(([, n], i) => (subsequenceBegins[i + 1] = subsequenceBegins[i]! + n));
  const T = subsequenceBegins[B]!;
  const table = (rows: number[][]) => {
    const begins = new Int32Array(B + 1);
    rows.forEach((r, i) => (begins[i + 1] = begins[i]! + r.length));
    return { indices: Int32Array.from(rows.flat()), begins };
  };
  return {
    inputIds: new Int32Array(T).fill(5),
    positions: new Int32Array(T),
    pastLens: Int32Array.from(seqs.map(([p]) => p)),
    subsequenceBegins,
    blockIndices: Int32Array.from(seqs.map((_, i) => i + 1)),
    blockIndicesBegins: Int32Array.from({ length: B + 1 }, (_, i) => i),
    maxContextLen: Math.max(...seqs.map(([p, n]) => p + n)),
    logitsIndices: Int32Array.from(seqs.map((_, i) => subsequenceBegins[i + 1]! - 1)),
    extraBlockTables: {
      [LINEAR_STATE_POOL]: table(seqs.map(([, , slot]) => [slot])),
      ...(opts.checkpoints && { [CHECKPOINT_POOL]: table(seqs.map(([, , , ck]) => ck)) }),
    },
    ...(opts.resume && { stateFromCheckpoint: Uint8Array.from(opts.resume) }),
  };
}

const values = (b: StepBatch, layout: { stateBlocks: number; checkpointInterval: number }) =>
  Object.fromEntries(linearAttentionInputs(b, layout).map((i) => [i.name, Array.from(i.data)]));

describe('la.* inputs from the engine pools', () => {
  it('without checkpoints: [zero block, slot] at pastLen 0, [slot, slot] after; interval 0', () => {
    expect(values(batch([[0, 7, 3, []], [12, 1, 5, []]]), { stateBlocks: 9, checkpointInterval: 0 })).toEqual({
      'la.block_indices': [0, 3, 5, 5],
      'la.block_indices_begins': [0, 2, 4],
      'la.past_lens': [0, 12],
      'la.cache_interval': [0, 0],
    });
  });

  it('with checkpoints: whole intervals go to their checkpoint blocks (after the state blocks), the unfinished one to the slot', () => {
    // C = 64, 9 state blocks: checkpoint block b is table block 9 + b.
    const layout = { stateBlocks: 9, checkpointInterval: 64 };
    // A 130-token prompt from scratch: intervals 0 and 1 complete, interval 2 unfinished.
    expect(values(batch([[0, 130, 3, [4, 6, 2]]], { checkpoints: true }), layout)['la.block_indices']).toEqual([0, 13, 15, 3]);
    // Decoding inside an interval: read the slot, write the slot.
    expect(values(batch([[130, 1, 3, [4, 6]]], { checkpoints: true }), layout)['la.block_indices']).toEqual([3, 3]);
    // The token that completes interval 2 writes its checkpoint, not the slot...
    expect(values(batch([[191, 1, 3, [4, 6, 8]]], { checkpoints: true }), layout)['la.block_indices']).toEqual([3, 17]);
    // ...and the next step reads it from there.
    expect(values(batch([[192, 1, 3, [4, 6, 8]]], { checkpoints: true }), layout)['la.block_indices']).toEqual([17, 3]);
    // A step that starts mid-interval and crosses two boundaries.
    expect(values(batch([[100, 100, 3, [4, 6, 8]]], { checkpoints: true }), layout)['la.block_indices']).toEqual([3, 15, 17, 3]);
    expect(values(batch([[0, 1, 3, []]], { checkpoints: true }), layout)['la.cache_interval']).toEqual([64]);
  });

  it('a prefix hit resumes by reading the checkpoint at pastLen: no copy into the slot', () => {
    const layout = { stateBlocks: 9, checkpointInterval: 64 };
    const b = batch([[128, 10, 7, [4, 6, 1]], [0, 3, 2, []]], { checkpoints: true, resume: [1, 0] });
    expect(values(b, layout)['la.block_indices']).toEqual([15, 7, 0, 2]);
  });

  it('refuses what would read or write the wrong state', () => {
    const layout = { stateBlocks: 9, checkpointInterval: 64 };
    expect(() => linearAttentionInputs(batch([[100, 1, 3, [4]]], { checkpoints: true, resume: [1] }), layout)).toThrow(/not a positive multiple of 64/);
    expect(() => linearAttentionInputs(batch([[0, 130, 3, [4]]], { checkpoints: true }), layout)).toThrow(/has 1 checkpoint blocks/);
    expect(() => linearAttentionInputs(batch([[0, 3, 9, []]], { checkpoints: true }), layout)).toThrow(BackendError);
    expect(() => linearAttentionInputs(batch([[0, 3, 3, []]], { checkpoints: true }), { stateBlocks: 9, checkpointInterval: 0 })).toThrow(/no checkpoint blocks are allocated/);
    const noSlots: StepBatch = { ...batch([[0, 3, 3, []]]), extraBlockTables: {} };
    expect(() => linearAttentionInputs(noSlots, layout)).toThrow(/linear-state block tables/);
  });

  it('planStepInputs fills la.* from the layout and refuses by name what it does not know', () => {
    const plan = planStepInputs([...PA, ...LA], () => ({ stateBlocks: 9, checkpointInterval: 0 }));
    const inputs = plan(batch([[0, 2, 4, []]]));
    expect(inputs.map((i) => i.name)).toContain('la.block_indices');
    expect(inputs.map((i) => i.name)).not.toContain('conv_state_table.0');
    expect(Array.from(inputs.find((i) => i.name === 'la.block_indices')!.data)).toEqual([0, 4]);
    expect(() => planStepInputs([...PA, ...LA, port('paged_gdn.block_indices', 'i32', [-1])])).toThrow(UnsupportedModelError);
    expect(() => planStepInputs([...PA, ...LA, port('paged_gdn.block_indices', 'i32', [-1])])).toThrow(/paged_gdn\.block_indices/);
    expect(() => planStepInputs([...PA, ...LA, port('ssm_state_table.0', 'f32', [-1, 8])])).toThrow(/ssm_state_table\.0/);
    expect(() => planStepInputs([...PA, ...LA.filter((p) => p.name !== 'la.cache_interval')])).toThrow(/lacks la\.cache_interval/);
    expect(() => planStepInputs([...PA, ...LA.filter((p) => p.name.startsWith('la.'))])).toThrow(/lacks conv_state_table/);
    expect(() => planStepInputs([...PA, ...LA])(batch([[0, 2, 4, []]]))).toThrow(/before its state tables were allocated/);
  });
});
