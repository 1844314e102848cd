/**
 * One step's plan flattened into the PagedAttention batch every backend
 * consumes (see StepBatch in src/backends/backend.ts): the scheduled tokens in
 * plan order, their positions, and each sequence's block table in every pool.
 */

import type { StepBatch } from '../backends/backend.js';
import type { KvCacheManager } from './kv/kv-cache-manager.js';
import type { Request } from './request.js';
import type { StepPlan } from './scheduler.js';

/**
 * Flattens a plan into the PagedAttention batch every backend consumes.
 * `takesArgmax` says which sampling requests take their row's argmax (greedy,
 * unmasked): the batch asks the backend for those rows' argmax (argmaxRows).
 */
export function buildBatch(plan: StepPlan, kv: KvCacheManager, takesArgmax: (request: Request) => boolean = () => false): StepBatch {
  const entries = plan.scheduled;
  const numSeqs = entries.length;
  const inputIds = new Int32Array(plan.numTokens);
  const positions = new Int32Array(plan.numTokens);
  const pastLens = new Int32Array(numSeqs);
  const subsequenceBegins = new Int32Array(numSeqs + 1);
  const blockIndicesBegins = new Int32Array(numSeqs + 1);
  const logitsIndices = new Int32Array(numSeqs);
  const argmaxRows = new Uint8Array(numSeqs);
  let numLogits = 0;
  let numArgmax = 0;
  const tables: (readonly number[])[] = new Array(numSeqs);
  let token = 0;
  let maxContextLen = 0;
  for (let i = 0; i < numSeqs; i++) {
    const { request, numTokens, samples } = entries[i]!;
    const start = request.numComputed;
    for (let j = 0; j < numTokens; j++) {
      inputIds[token] = request.tokens[start + j]!;
      positions[token] = start + j;
      token++;
    }
    pastLens[i] = start;
    subsequenceBegins[i + 1] = token;
    if (samples) {
      if (takesArgmax(request)) {
        argmaxRows[numLogits] = 1;
        numArgmax++;
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
    logitsIndices: numLogits === numSeqs ? logitsIndices : logitsIndices.slice(0, numLogits),
    ...(numArgmax > 0 && { argmaxRows: numLogits === numSeqs ? argmaxRows : argmaxRows.slice(0, numLogits) }),
  };
  if (kv.specs.length === 1) return batch;
  const stateFromCheckpoint = new Uint8Array(numSeqs);
  let resuming = false;
  entries.forEach(({ request }, i) => {
    if (kv.resumesFromCheckpoint(request.id, request.numComputed)) stateFromCheckpoint[i] = 1, (resuming = true);
  });
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
