/**
 * Test helpers for driving a Backend directly: building StepBatches for N
 * sequences from their tokens and block tables, greedy decoding, fixtures.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Backend, StepBatch } from '../../src/backends/backend.js';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** ../shared/models beside the repository; WEFT_SHARED_MODELS names another folder (a git worktree one level deeper). */
export const SHARED_MODELS = process.env.WEFT_SHARED_MODELS ?? resolve(REPO_ROOT, '..', 'shared', 'models');

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
  /** Which of this step's tokens get logits (default 'last'). */
  readonly logits?: 'last' | 'all' | 'none';
  /** A hybrid model's linear-state block for this sequence (extraBlockTables['linear-state']). */
  readonly stateSlot?: number;
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
      if (s.logits === 'all' || (i === s.tokens.length - 1 && (s.logits ?? 'last') === 'last')) logitsIndices.push(inputIds.length);
      inputIds.push(t);
      positions.push(s.pastLen + i);
    });
    subsequenceBegins.push(inputIds.length);
    blockIndices.push(...s.blocks);
    blockIndicesBegins.push(blockIndices.length);
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
    ...(seqs.some((s) => s.stateSlot !== undefined) && {
      extraBlockTables: {
        'linear-state': {
          indices: Int32Array.from(seqs.map((s) => s.stateSlot ?? 0)),
          begins: Int32Array.from({ length: seqs.length + 1 }, (_, i) => i),
        },
      },
    }),
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

/** A random permutation of [from, to) (deterministic for a seed). */
export function shuffledBlocks(from: number, to: number, seed: number): number[] {
  const blocks = Array.from({ length: to - from }, (_, i) => from + i);
  let state = seed >>> 0 || 1;
  for (let i = blocks.length - 1; i > 0; i--) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    const j = state % (i + 1);
    [blocks[i], blocks[j]] = [blocks[j] as number, blocks[i] as number];
  }
  return blocks;
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
  stateSlot?: number,
): Promise<{ ids: number[]; firstLogits: Float32Array }> {
  const vocab = backend.shape.vocabSize;
  let past = 0;
  let logits: Float32Array | undefined;
  while (past < prompt.length) {
    const tokens = prompt.slice(past, past + Math.min(chunk, prompt.length - past));
    const isLast = past + tokens.length === prompt.length;
    const out = await backend.execute(buildBatch([{ tokens, pastLen: past, blocks, logits: isLast ? 'last' : 'none', stateSlot }]));
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
    const out = await backend.execute(buildBatch([{ tokens: [next], pastLen: past, blocks, stateSlot }]));
    past += 1;
    next = argmax(out.logits);
  }
  return { ids, firstLogits };
}

/** The in-repository Qwen3 fixture (random weights, made with transformers). */
export const QWEN3_TINY = join(REPO_ROOT, 'test', 'fixtures', 'qwen3-tiny');

/** Models with a reference.json the tests check against; absent shared models are left out (with a warning). */
export function referenceModels(): Array<{ name: string; dir: string }> {
  const models: Array<{ name: string; dir: string }> = [];
  for (const name of ['stories260K', 'aidreams260K']) {
    const dir = sharedModel(name);
    if (dir) models.push({ name, dir });
  }
  if (existsSync(join(QWEN3_TINY, 'model.safetensors'))) models.push({ name: 'qwen3-tiny', dir: QWEN3_TINY });
  return models;
}
