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
import { BackendError, UnsupportedModelError } from '../../errors.js';
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
 * The linear-attention state tables OpenVINO's paged transformation gives a
 * Gated DeltaNet layer (PagedCausalConv1D / PagedGatedDeltaNet): [blocks, ...],
 * one block a whole state. Other `*_state_table.N` names are refused.
 */
export function isStateInput(name: string): boolean {
  return /^(conv|gated_delta)_state_table\.\d+$/.test(name);
}

/** The engine's pools for a hybrid model's linear-attention state (names as the CPU backend's). */
export const LINEAR_STATE_POOL = 'linear-state';
export const CHECKPOINT_POOL = 'checkpoints';

/** The per-sequence inputs of the linear-attention layers' paging (all i32). */
export const LINEAR_INPUTS = ['la.block_indices', 'la.block_indices_begins', 'la.past_lens', 'la.cache_interval'] as const;

/**
 * How the engine's pools sit in the state tables: linear-state block b is
 * table block b; checkpoints block b is table block stateBlocks + b. Block 0
 * (the null block of the linear-state pool) is never written and stays zero:
 * it is what a sequence at pastLen 0 reads.
 */
export interface LinearLayout {
  /** Blocks of the linear-state pool (the null block included). */
  readonly stateBlocks: number;
  /** Tokens per checkpoint (the checkpoints pool's blockSize); 0 without checkpoints. */
  readonly checkpointInterval: number;
}

/**
 * The la.* inputs for a step. Per sequence OpenVINO takes a list of state
 * blocks: the first is read (the state after pastLen tokens), the others are
 * written, one per checkpoint interval the step reaches into: the k-th holds
 * the state after the step's last token inside interval floor(pastLen / C) + k
 * (C = la.cache_interval). With C = 0: [read, write], the final state only.
 *
 * weft's mapping (checked against the CPU plugin in docs/openvino.md):
 * - read: the zero block at pastLen 0; with checkpoints, at a pastLen that is a
 *   multiple of C, the checkpoint ending there (the step that reached the
 *   boundary wrote it there, or a prefix hit brought it: stateFromCheckpoint
 *   needs no copy); otherwise the sequence's linear-state slot.
 * - writes: a whole interval the step completes goes to its checkpoint block,
 *   the unfinished last one to the slot.
 */
export function linearAttentionInputs(batch: StepBatch, layout: LinearLayout): StepInput[] {
  const B = batch.pastLens.length;
  const slots = batch.extraBlockTables?.[LINEAR_STATE_POOL];
  if (slots === undefined) throw new BackendError(`a hybrid model's step needs the ${LINEAR_STATE_POOL} block tables (StepBatch.extraBlockTables)`);
  const C = layout.checkpointInterval;
  const checkpoints = batch.extraBlockTables?.[CHECKPOINT_POOL];
  if (C > 0 && checkpoints === undefined) throw new BackendError(`the ${CHECKPOINT_POOL} pool is allocated but the step has no ${CHECKPOINT_POOL} block tables`);
  if (C === 0 && checkpoints !== undefined) throw new BackendError(`the step has ${CHECKPOINT_POOL} block tables but no checkpoint blocks are allocated`);
  const indices: number[] = [];
  const begins = new Int32Array(B + 1);
  for (let i = 0; i < B; i++) {
    const past = batch.pastLens[i]!;
    const context = past + batch.subsequenceBegins[i + 1]! - batch.subsequenceBegins[i]!;
    if (slots.begins[i + 1]! - slots.begins[i]! !== 1) {
      throw new BackendError(`sequence ${i} has ${slots.begins[i + 1]! - slots.begins[i]!} ${LINEAR_STATE_POOL} blocks; it needs exactly one`);
    }
    const slot = slots.indices[slots.begins[i]!]!;
    if (slot < 1 || slot >= layout.stateBlocks) throw new BackendError(`sequence ${i}: ${LINEAR_STATE_POOL} block ${slot} is not in [1, ${layout.stateBlocks})`);
    const resume = batch.stateFromCheckpoint?.[i] ?? 0;
    if (C === 0) {
      if (resume !== 0) throw new BackendError(`sequence ${i} resumes from a checkpoint, but no checkpoints are allocated`);
      indices.push(past === 0 ? 0 : slot, slot);
    } else {
      const table = checkpoints!.indices.subarray(checkpoints!.begins[i]!, checkpoints!.begins[i + 1]!);
      if (table.length < Math.floor(context / C)) {
        throw new BackendError(`sequence ${i} reaches ${context} tokens but has ${table.length} checkpoint blocks (one per ${C} tokens)`);
      }
      if (resume !== 0 && (past === 0 || past % C !== 0)) {
        throw new BackendError(`sequence ${i} resumes from a checkpoint at pastLen ${past}, which is not a positive multiple of ${C}`);
      }
      const checkpoint = (j: number): number => {
        const block = table[j]!;
        if (block < 1) throw new BackendError(`sequence ${i}: checkpoint block ${block} is not a block`);
        return layout.stateBlocks + block;
      };
      indices.push(past === 0 ? 0 : past % C === 0 ? checkpoint(past / C - 1) : slot);
      for (let k = Math.floor(past / C); k < Math.ceil(context / C); k++) indices.push((k + 1) * C <= context ? checkpoint(k) : slot);
    }
    begins[i + 1] = indices.length;
  }
  return [
    vector('la.block_indices', Int32Array.from(indices)),
    vector('la.block_indices_begins', begins),
    vector('la.past_lens', batch.pastLens),
    perSequence('la.cache_interval', batch, C),
  ];
}

/**
 * Checks a compiled model's inputs once, at load, and returns the mapping for
 * its steps. Throws UnsupportedModelError for a missing required input or an
 * input weft does not know how to fill.
 */
export function planStepInputs(
  declared: readonly PortInfo[],
  linearLayout: () => LinearLayout | undefined = () => undefined,
): (batch: StepBatch) => StepInput[] {
  const names = new Set(declared.map((p) => p.name));
  const missing = REQUIRED_INPUTS.filter((name) => !names.has(name));
  if (missing.length > 0) throw new UnsupportedModelError(`the compiled model lacks the PagedAttention input(s) ${missing.join(', ')}`);
  const linearNames: readonly string[] = LINEAR_INPUTS;
  const ports = declared.filter((p) => !isCacheInput(p.name) && !isStateInput(p.name));
  const unknown = ports.filter((p) => INPUT_RULES[p.name] === undefined && !linearNames.includes(p.name)).map((p) => p.name);
  if (unknown.length > 0) {
    throw new UnsupportedModelError(`the model declares input(s) weft does not know how to fill: ${unknown.join(', ')}`);
  }
  const hasStates = declared.some((p) => isStateInput(p.name));
  const hasLinear = ports.some((p) => linearNames.includes(p.name));
  if (hasStates || hasLinear) {
    const lacking = LINEAR_INPUTS.filter((name) => !names.has(name));
    if (!hasStates) lacking.push('conv_state_table.N / gated_delta_state_table.N' as never);
    if (lacking.length > 0) throw new UnsupportedModelError(`the model's linear-attention paging is incomplete: it lacks ${lacking.join(', ')}`);
  }
  return (batch) => {
    let linear: Map<string, StepInput> | undefined;
    if (hasLinear) {
      const layout = linearLayout();
      if (layout === undefined) throw new BackendError('a hybrid model stepped before its state tables were allocated');
      linear = new Map(linearAttentionInputs(batch, layout).map((input) => [input.name, input]));
    }
    return ports.map((port) => linear?.get(port.name) ?? INPUT_RULES[port.name]!(batch, port));
  };
}
