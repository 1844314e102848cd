/**
 * A deterministic backend for the engine's own tests. Its "KV cache" stores the
 * token id written at each slot, so the next token is a pure function of the
 * whole context as read back through the block table: a wrong block table, a
 * block shared that should not be, or a freed block reused too early changes
 * the output. Recompute after preemption must therefore reproduce it exactly.
 */

import type { Backend, CacheConfig, ModelShape, StepBatch, StepResult } from '../../src/backends/backend.js';
import { EOS } from './byte-tokenizer.js';

export interface TestBackendOptions {
  /** Generated tokens come from this alphabet (bytes). */
  alphabet?: string;
  /** Percent chance (0-100) that a context ends with EOS once it has minEosContext tokens. */
  eosPercent?: number;
  minEosContext?: number;
  maxContextLength?: number;
  /** Simulated compute time per step. */
  delayMs?: number;
  /** Extra pools of a hybrid model. */
  extraPools?: ModelShape['extraPools'];
  /** Overrides the next-token rule (e.g. to replay a scripted answer). */
  rule?: (context: readonly number[]) => number;
  /**
   * Overrides the whole logits row of a context (vocabSize values): a known
   * distribution per context, for statistical tests of sampling.
   */
  logits?: (context: readonly number[]) => ArrayLike<number>;
  /** Fail steps whose batch contains this token id (to test backend errors). */
  failOnToken?: number;
}

export class TestBackend implements Backend {
  readonly shape: ModelShape;
  readonly steps: StepBatch[] = [];
  recordBatches = false;
  private slots = new Int32Array(0);
  private blockSize = 16;
  private numBlocks = 0;
  /** UTF-8 encodings of the characters the backend writes, a byte per token. */
  private readonly alphabet: Uint8Array[];
  private readonly options: TestBackendOptions;
  disposed = false;

  constructor(options: TestBackendOptions = {}) {
    this.options = options;
    const encoder = new TextEncoder();
    this.alphabet = [...(options.alphabet ?? 'abcdefghij klmnop')].map((char) => encoder.encode(char));
    this.shape = {
      vocabSize: 260,
      numLayers: 2,
      numKvHeads: 2,
      headDim: 8,
      maxContextLength: options.maxContextLength ?? 4096,
      ...(options.extraPools && { extraPools: options.extraPools }),
    };
  }

  allocateCache(config: CacheConfig): void {
    this.blockSize = config.blockSize;
    this.numBlocks = config.numBlocks;
    this.slots = new Int32Array(config.numBlocks * config.blockSize).fill(-1);
  }

  async execute(batch: StepBatch): Promise<StepResult> {
    if (this.recordBatches) this.steps.push(batch);
    if (this.options.delayMs) await new Promise((resolve) => setTimeout(resolve, this.options.delayMs));
    else await Promise.resolve();
    if (this.options.failOnToken !== undefined && batch.inputIds.includes(this.options.failOnToken)) {
      throw new Error('test backend: poisoned token');
    }
    for (const [src, dst] of pairs(batch.blockCopies)) {
      this.slots.copyWithin(dst * this.blockSize, src * this.blockSize, (src + 1) * this.blockSize);
    }
    const numSeqs = batch.pastLens.length;
    const vocab = this.shape.vocabSize;
    const logits = new Float32Array(batch.logitsIndices.length * vocab);
    let row = 0;
    for (let seq = 0; seq < numSeqs; seq++) {
      const begin = batch.subsequenceBegins[seq]!;
      const end = batch.subsequenceBegins[seq + 1]!;
      const table = batch.blockIndices.subarray(batch.blockIndicesBegins[seq]!, batch.blockIndicesBegins[seq + 1]!);
      for (let t = begin; t < end; t++) {
        const position = batch.positions[t]!;
        if (position !== batch.pastLens[seq]! + (t - begin)) throw new Error('test backend: positions disagree with pastLens');
        this.slots[this.slot(table, position)] = batch.inputIds[t]!;
      }
      // Rows of this sequence: its last token's, and (speculative decoding) any earlier position's.
      while (row < batch.logitsIndices.length && batch.logitsIndices[row]! < end) {
        const at = batch.logitsIndices[row]!;
        if (at < begin) throw new Error('test backend: logitsIndices are not ascending within the batch');
        const context = this.readContext(table, batch.positions[at]! + 1);
        if (this.options.logits !== undefined) logits.set(this.options.logits(context), row * vocab);
        else {
          const next = this.nextToken(context);
          // A peaked but smooth distribution: greedy picks `next`, sampling can pick others.
          for (let v = 0; v < vocab; v++) logits[row * vocab + v] = -((v * 7 + context.length) % 13) / 4;
          logits[row * vocab + next] = 6;
        }
        row++;
      }
    }
    if (row !== batch.logitsIndices.length) throw new Error('test backend: logitsIndices outside the batch');
    return { logits };
  }

  dispose(): void {
    this.disposed = true;
  }

  /** The token the backend will produce after `context` (for tests computing expectations). */
  nextToken(context: readonly number[]): number {
    if (this.options.rule) return this.options.rule(context);
    let hash = 2166136261;
    for (const token of context) hash = Math.imul(hash ^ token, 16777619);
    hash >>>= 0;
    const { eosPercent = 0, minEosContext = 8 } = this.options;
    if (context.length >= minEosContext && hash % 100 < eosPercent) return EOS;
    // Finish a multi-byte character in progress, else start one: output is always valid UTF-8.
    const partial = trailingPartialCharacter(context);
    const candidates = this.alphabet.filter((bytes) => bytes.length > partial.length && partial.every((b, i) => bytes[i] === b));
    const pick = candidates.length > 0 && partial.length > 0 ? candidates : this.alphabet;
    const bytes = pick[(hash >>> 7) % pick.length]!;
    return bytes[pick === candidates ? partial.length : 0]!;
  }

  private slot(table: Int32Array, position: number): number {
    const block = table[Math.floor(position / this.blockSize)];
    if (block === undefined) throw new Error(`test backend: no block for position ${position}`);
    if (block <= 0 || block >= this.numBlocks) throw new Error(`test backend: bad block ${block}`);
    return block * this.blockSize + (position % this.blockSize);
  }

  private readContext(table: Int32Array, length: number): number[] {
    const context: number[] = [];
    for (let p = 0; p < length; p++) {
      const token = this.slots[this.slot(table, p)]!;
      if (token < 0) throw new Error(`test backend: position ${p} was never written`);
      context.push(token);
    }
    return context;
  }
}

function* pairs(copies: Int32Array | undefined): Generator<[number, number]> {
  if (copies === undefined) return;
  for (let i = 0; i + 1 < copies.length; i += 2) yield [copies[i]!, copies[i + 1]!];
}

/** The bytes of an incomplete UTF-8 character at the end of `context` (empty if none). */
function trailingPartialCharacter(context: readonly number[]): number[] {
  for (let back = 1; back <= 3 && back <= context.length; back++) {
    const byte = context[context.length - back]!;
    if (byte >= 256 || byte < 0x80) return [];
    if (byte >= 0xc0) {
      const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
      return back < length ? context.slice(context.length - back) as number[] : [];
    }
  }
  return [];
}
