/**
 * StepBatch -> the compiled PagedAttention model's inputs. Pure: no OpenVINO here.
 *
 * The engine's batch already is OpenVINO's PagedAttention contract, so most
 * inputs are the batch's arrays under OpenVINO's names. The native side converts
 * each Int32Array / Float32Array to the element type the compiled model declares
 * (i64 for input_ids / position_ids). Every further input a model may declare
 * gets the value documented in INPUT_RULES below; a model declaring an input not
 * listed there is refused at load (UnsupportedModelError naming it), never fed
 * a guess.
 */
import { UnsupportedModelError } from '../../errors.js';
import type { StepBatch } from '../backend.js';

/** An input or output as the compiled model declares it (-1: dynamic dimension). */
export interface PortInfo {
  readonly name: string;
  /** OpenVINO element type name: "i64", "i32", "f32", "u8", ... */
  readonly type: string;
  readonly shape: readonly number[];
}

/** One tensor the native runner binds for a step. */
export interface StepInput {
  readonly name: string;
  readonly data: Int32Array | Float32Array;
  readonly shape: readonly number[];
}

/** The input weft adds before the LM head (native/openvino/src/model_prep.h). */
export const LOGITS_INDICES = 'weft_logits_indices';

type Rule = (batch: StepBatch, port: PortInfo) => StepInput;

const vector = (name: string, data: Int32Array): StepInput => ({ name, data, shape: [data.length] });
/** A tensor with no elements, of the declared rank: "feature not used this step". */
const empty = (name: string, port: PortInfo): StepInput => ({ name, data: new Int32Array(0), shape: port.shape.map(() => 0) });
const perSequence = (name: string, batch: StepBatch, value: number): StepInput =>
  vector(name, new Int32Array(batch.pastLens.length).fill(value));
const scalar = (name: string, value: number): StepInput => ({ name, data: Int32Array.of(value), shape: [] });

/**
 * Every input weft knows how to fill, and with what.
 * - The PagedAttention contract: input_ids, position_ids, past_lens, subsequence_begins,
 *   block_indices, block_indices_begins, max_context_len: the batch's arrays.
 * - weft_logits_indices: the batch's logitsIndices (the LM head runs for these rows only).
 * - score_aggregation_window [B]: 1 per sequence. Only attention-score outputs read it
 *   (cache eviction); weft reads no scores.
 * - rotated_block_indices, rotation_deltas, rotation_trig_lut: empty (no cache rotation).
 * - xattention_threshold: empty (no sparse attention); xattention_block_size, xattention_stride:
 *   scalars 0 (only read when a threshold is given).
 * - adaptive_rkv_start_size 0, adaptive_rkv_evictable_sizes 0 per sequence,
 *   adaptive_rkv_diversity_block_set_indices empty, ..._begins zeros [B + 1] (no eviction).
 * - token_type_ids [T]: zeros (text tokens).
 */
const INPUT_RULES: Readonly<Record<string, Rule>> = {
  input_ids: (b) => vector('input_ids', b.inputIds),
  position_ids: (b) => vector('position_ids', b.positions),
  past_lens: (b) => vector('past_lens', b.pastLens),
  subsequence_begins: (b) => vector('subsequence_begins', b.subsequenceBegins),
  block_indices: (b) => vector('block_indices', b.blockIndices),
  block_indices_begins: (b) => vector('block_indices_begins', b.blockIndicesBegins),
  max_context_len: (b) => scalar('max_context_len', b.maxContextLen),
  [LOGITS_INDICES]: (b) => vector(LOGITS_INDICES, b.logitsIndices),
  score_aggregation_window: (b) => perSequence('score_aggregation_window', b, 1),
  rotated_block_indices: (_b, p) => empty('rotated_block_indices', p),
  rotation_deltas: (_b, p) => empty('rotation_deltas', p),
  rotation_trig_lut: (_b, p) => ({ ...empty('rotation_trig_lut', p), data: new Float32Array(0) }),
  xattention_threshold: (_b, p) => ({ ...empty('xattention_threshold', p), data: new Float32Array(0) }),
  xattention_block_size: () => scalar('xattention_block_size', 0),
  xattention_stride: () => scalar('xattention_stride', 0),
  adaptive_rkv_start_size: () => scalar('adaptive_rkv_start_size', 0),
  adaptive_rkv_evictable_sizes: (b) => perSequence('adaptive_rkv_evictable_sizes', b, 0),
  adaptive_rkv_diversity_block_set_indices: (_b, p) => empty('adaptive_rkv_diversity_block_set_indices', p),
  adaptive_rkv_diversity_block_set_indices_begins: (b) =>
    vector('adaptive_rkv_diversity_block_set_indices_begins', new Int32Array(b.pastLens.length + 1)),
  token_type_ids: (b) => vector('token_type_ids', new Int32Array(b.inputIds.length)),
};

/** The PagedAttention inputs a model must declare for weft to drive it. */
export const REQUIRED_INPUTS = [
  'input_ids',
  'position_ids',
  'past_lens',
  'subsequence_begins',
  'block_indices',
  'block_indices_begins',
  'max_context_len',
  LOGITS_INDICES,
] as const;

export function isCacheInput(name: string): boolean {
  return /^(key|value)_cache\.\d+$/.test(name);
}

/**
 * Checks a compiled model's inputs once, at load, and returns the mapping for
 * its steps. Throws UnsupportedModelError for a missing required input or an
 * input weft does not know how to fill.
 */
export function planStepInputs(declared: readonly PortInfo[]): (batch: StepBatch) => StepInput[] {
  const names = new Set(declared.map((p) => p.name));
  const missing = REQUIRED_INPUTS.filter((name) => !names.has(name));
  if (missing.length > 0) throw new UnsupportedModelError(`the compiled model lacks the PagedAttention input(s) ${missing.join(', ')}`);
  const ports = declared.filter((p) => !isCacheInput(p.name));
  const unknown = ports.filter((p) => INPUT_RULES[p.name] === undefined).map((p) => p.name);
  if (unknown.length > 0) {
    throw new UnsupportedModelError(`the model declares input(s) weft does not know how to fill: ${unknown.join(', ')}`);
  }
  return (batch) => ports.map((port) => INPUT_RULES[port.name]!(batch, port));
}
