/**
 * One step's plan flattened into the PagedAttention batch every backend
 * consumes (see StepBatch in src/backends/backend.ts): the scheduled tokens in
 * plan order, their positions, and each sequence's block table in every pool.
 */

import { SAMPLING_PARAMS, type SamplingRows, type StepBatch } from '../backends/backend.js';
import type { Sampler } from '../sampling/sampler.js';
import { pooledOffsets } from './embedding.js';
import type { KvCacheManager } from './kv/kv-cache-manager.js';
import type { Request } from './request.js';
import type { StepPlan } from './scheduler.js';

/** What the backend needs to sample a request's row itself: its sampler, and a guided request's mask. */
export interface BackendSampling {
  readonly sampler: Sampler;
  /** Filled while the step runs; the engine then sets StepBatch.sampling.masksReady. */
  readonly mask?: Uint32Array;
}

/**
 * Flattens a plan into the PagedAttention batch every backend consumes.
 * `takesArgmax` says which sampling requests take their row's argmax (greedy,
 * unmasked): the batch asks the backend for those rows' argmax (argmaxRows).
 * `backendSampler` gives the sampler of each other request whose chain the backend
 * may run on its row (StepBatch.sampling), undefined for those sampled here only.
 */
export function buildBatch(
  plan: StepPlan,
  kv: KvCacheManager,
  takesArgmax: (request: Request) => boolean = () => false,
  backendSampler: (request: Request) => BackendSampling | undefined = () => undefined,
): StepBatch {
  const entries = plan.scheduled;
  const numSeqs = entries.length;
  const inputIds = new Int32Array(plan.numTokens);
  const positions = new Int32Array(plan.numTokens);
  const pastLens = new Int32Array(numSeqs);
  const subsequenceBegins = new Int32Array(numSeqs + 1);
  const blockIndicesBegins = new Int32Array(numSeqs + 1);
  // One logits row per sampling sequence, plus one per draft token it verifies.
  let numRows = numSeqs;
  for (let i = 0; i < numSeqs; i++) numRows += entries[i]!.numDraft ?? 0;
  const logitsIndices = new Int32Array(numRows);
  const argmaxRows = new Uint8Array(numRows);
  let numLogits = 0;
  let numArgmax = 0;
  let sampled: [row: number, sampling: BackendSampling][] | undefined;
  let hiddenIndices: number[] | undefined;
  let tokenTypeIds: Int32Array | undefined;  // only when a request gives token types (encoders)
  const tables: (readonly number[])[] = new Array(numSeqs);
  let token = 0;
  let maxContextLen = 0;
  for (let i = 0; i < numSeqs; i++) {
    const { request, numTokens, samples } = entries[i]!;
    const numDraft = entries[i]!.numDraft ?? 0;
    const argmaxed = samples && takesArgmax(request);
    const start = request.numComputed;
    const known = numTokens - numDraft;
    for (let j = 0; j < known; j++) {
      inputIds[token] = request.tokens[start + j]!;
      positions[token] = start + j;
      token++;
    }
    // Speculative decoding: the draft follows the pending token in the same chunk, each
    // position with its row: the backend's argmax for a greedy request (S1), the raw
    // logits for a sampled one, whose rows the engine samples in order itself (S6).
    for (let j = 0; j < numDraft; j++) {
      inputIds[token] = request.draft[j]!;
      positions[token] = start + known + j;
      if (argmaxed) {
        argmaxRows[numLogits] = 1;
        numArgmax++;
      }
      logitsIndices[numLogits++] = token - 1;
      token++;
    }
    pastLens[i] = start;
    subsequenceBegins[i + 1] = token;
    const embedding = request.spec.embedding;
    if (embedding !== undefined) {
      const first = token - numTokens;
      for (const offset of pooledOffsets(embedding.pooling, start, numTokens, request.tokens.length)) (hiddenIndices ??= []).push(first + offset);
      const types = embedding.tokenTypeIds;
      if (types !== undefined) {
        tokenTypeIds ??= new Int32Array(plan.numTokens);
        for (let j = 0; j < numTokens; j++) tokenTypeIds[first + j] = types[start + j]!;
      }
    }
    if (samples) {
      if (argmaxed) {
        argmaxRows[numLogits] = 1;
        numArgmax++;
      } else {
        const sampler = backendSampler(request);
        if (sampler !== undefined) (sampled ??= []).push([numLogits, sampler]);
      }
      logitsIndices[numLogits++] = token - 1;
    }
    if (start + numTokens > maxContextLen) maxContextLen = start + numTokens;
    const table = kv.blockTable(request.id);
    tables[i] = table;
    blockIndicesBegins[i + 1] = blockIndicesBegins[i]! + table.length;
  }
  const blockIndices = new Int32Array(blockIndicesBegins[numSeqs]!);
  let at = 0;
  for (let i = 0; i < numSeqs; i++) {
    const table = tables[i]!;
    for (let j = 0; j < table.length; j++) blockIndices[at++] = table[j]!;
  }
  const batch: StepBatch = {
    inputIds,
    positions,
    pastLens,
    subsequenceBegins,
    blockIndices,
    blockIndicesBegins,
    maxContextLen,
    logitsIndices: numLogits === numRows ? logitsIndices : logitsIndices.slice(0, numLogits),
    ...(numArgmax > 0 && { argmaxRows: numLogits === numRows ? argmaxRows : argmaxRows.slice(0, numLogits) }),
    ...(sampled !== undefined && { sampling: samplingRows(numLogits, sampled) }),
    ...(hiddenIndices !== undefined && { hiddenIndices: Int32Array.from(hiddenIndices) }),
    ...(tokenTypeIds !== undefined && { tokenTypeIds }),
  };
  if (kv.specs.length === 1) return batch;
  // Hybrid models: the sequences whose state slot is loaded from a checkpoint before this step.
  const stateFromCheckpoint = Uint8Array.from(entries, ({ request }) => (kv.resumesFromCheckpoint(request.id, request.numComputed) ? 1 : 0));
  const resuming = stateFromCheckpoint.includes(1);
  const extraBlockTables: Record<string, { indices: Int32Array; begins: Int32Array }> = {};
  for (let pool = 1; pool < kv.specs.length; pool++) {
    const poolTables = entries.map(({ request }) => kv.blockTable(request.id, pool));
    const begins = new Int32Array(numSeqs + 1);
    poolTables.forEach((table, i) => (begins[i + 1] = begins[i]! + table.length));
    const indices = new Int32Array(begins[numSeqs]!);
    poolTables.forEach((table, i) => indices.set(table, begins[i]!));
    extraBlockTables[kv.specs[pool]!.name] = { indices, begins };
  }
  return { ...batch, extraBlockTables, ...(resuming ? { stateFromCheckpoint } : {}) };
}

/** StepBatch.sampling for `rows` logits rows, of which `sampled` lists the backend's, in row order. */
function samplingRows(rows: number, sampled: readonly [number, BackendSampling][]): SamplingRows {
  const flags = new Uint8Array(rows);
  const params = new Float64Array(rows * SAMPLING_PARAMS);
  let numSeen = 0;
  let numCounted = 0;
  let masks: (Uint32Array | null)[] | undefined;
  for (const [row, { sampler, mask }] of sampled) {
    if (mask !== undefined) (masks ??= new Array<Uint32Array | null>(rows).fill(null))[row] = mask;
    numSeen += sampler.seenTokens.length;
    numCounted += sampler.outputTokenCounts.size;
  }
  const seen = new Int32Array(numSeen);
  const counted = new Int32Array(numCounted);
  const counts = new Int32Array(numCounted);
  const seenBegins = new Int32Array(rows + 1);
  const countedBegins = new Int32Array(rows + 1);
  let s = 0;
  let c = 0;
  let next = 0;
  for (let row = 0; row < rows; row++) {
    seenBegins[row] = s;
    countedBegins[row] = c;
    const entry = sampled[next];
    if (entry === undefined || entry[0] !== row) continue;
    next++;
    const { sampler } = entry[1];
    flags[row] = 1;
    sampler.writeParams(params, row * SAMPLING_PARAMS);
    for (const token of sampler.seenTokens) seen[s++] = token;
    for (const [token, count] of sampler.outputTokenCounts) {
      counted[c] = token;
      counts[c++] = count;
    }
  }
  seenBegins[rows] = s;
  countedBegins[rows] = c;
  const base = { rows: flags, params, seen, seenBegins, counted, counts, countedBegins };
  return masks === undefined ? base : { ...base, masks, masksReady: new Int32Array(new SharedArrayBuffer(4)) };
}
