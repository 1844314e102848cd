/**
 * Test helpers for driving a Backend directly: building StepBatches for N
 * sequences from their tokens and block tables, greedy decoding, fixtures.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Backend, StepBatch } from '../../src/backends/backend.js';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SHARED_MODELS = resolve(REPO_ROOT, '..', 'shared', 'models');

export interface ReferenceCase {
  prompt: string;
  prompt_ids: number[];
  greedy_ids: number[];
  first_logits: number[];
  first_logits_argmax: number;
}

export interface Reference {
  vocab_size: number;
  cases: ReferenceCase[];
}

/** The shared model folder, or undefined (with a visible warning) when absent. */
export function sharedModel(name: string): string | undefined {
  const dir = join(SHARED_MODELS, name);
  if (!existsSync(join(dir, 'model.safetensors'))) {
    console.warn(`[weft tests] ${dir} is absent: skipping tests that need the ${name} model`);
    return undefined;
  }
  return dir;
}

export function readReference(dir: string): Reference {
  return JSON.parse(readFileSync(join(dir, 'reference.json'), 'utf8')) as Reference;
}

/** One sequence's part of a step. */
export interface SeqStep {
  /** Tokens to run this step. */
  readonly tokens: readonly number[];
  /** Tokens already in this sequence's cache. */
  readonly pastLen: number;
  /** The sequence's whole block table (covering pastLen + tokens.length). */
  readonly blocks: readonly number[];
  /** Return logits for this sequence's last token (default true). */
  readonly wantLogits?: boolean;
}

/** Builds a StepBatch from per-sequence tokens and block tables (positions = pastLen + i). */
export function buildBatch(seqs: readonly SeqStep[], blockCopies?: number[]): StepBatch {
  const inputIds: number[] = [];
  const positions: number[] = [];
  const subsequenceBegins = [0];
  const blockIndices: number[] = [];
  const blockIndicesBegins = [0];
  const logitsIndices: number[] = [];
  let maxContextLen = 0;
  for (const s of seqs) {
    s.tokens.forEach((t, i) => {
      inputIds.push(t);
      positions.push(s.pastLen + i);
    });
    subsequenceBegins.push(inputIds.length);
    blockIndices.push(...s.blocks);
    blockIndicesBegins.push(blockIndices.length);
    if (s.wantLogits !== false && s.tokens.length > 0) logitsIndices.push(inputIds.length - 1);
    maxContextLen = Math.max(maxContextLen, s.pastLen + s.tokens.length);
  }
  return {
    inputIds: Int32Array.from(inputIds),
    positions: Int32Array.from(positions),
    pastLens: Int32Array.from(seqs.map((s) => s.pastLen)),
    subsequenceBegins: Int32Array.from(subsequenceBegins),
    blockIndices: Int32Array.from(blockIndices),
    blockIndicesBegins: Int32Array.from(blockIndicesBegins),
    maxContextLen,
    logitsIndices: Int32Array.from(logitsIndices),
    ...(blockCopies ? { blockCopies: Int32Array.from(blockCopies) } : {}),
  };
}

export function argmax(row: Float32Array): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if ((row[i] as number) > (row[best] as number)) best = i;
  return best;
}

export function row(logits: Float32Array, r: number, vocab: number): Float32Array {
  return logits.subarray(r * vocab, (r + 1) * vocab);
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs((a[i] as number) - (b[i] as number)));
  return m;
}

/** Contiguous blocks first..first+n-1. */
export function contiguousBlocks(first: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => first + i);
}

/**
 * Greedy generation of one sequence alone: prefill (in chunks of `chunk`
 * tokens), then one token per step. Returns the generated ids and the logits
 * after the prompt.
 */
export async function greedySolo(
  backend: Backend,
  prompt: readonly number[],
  steps: number,
  blocks: readonly number[],
  chunk = Infinity,
): Promise<{ ids: number[]; firstLogits: Float32Array }> {
  const vocab = backend.shape.vocabSize;
  let past = 0;
  let logits: Float32Array | undefined;
  while (past < prompt.length) {
    const tokens = prompt.slice(past, past + Math.min(chunk, prompt.length - past));
    const isLast = past + tokens.length === prompt.length;
    const out = await backend.execute(buildBatch([{ tokens, pastLen: past, blocks, wantLogits: isLast }]));
    if (isLast) logits = out.logits.slice(0, vocab);
    else if (out.logits.length !== 0) throw new Error('logits returned for a step that asked for none');
    past += tokens.length;
  }
  const firstLogits = logits as Float32Array;
  const ids: number[] = [];
  let next = argmax(firstLogits);
  for (let i = 0; i < steps; i++) {
    ids.push(next);
    if (i + 1 === steps) break;
    const out = await backend.execute(buildBatch([{ tokens: [next], pastLen: past, blocks }]));
    past += 1;
    next = argmax(out.logits);
  }
  return { ids, firstLogits };
}
