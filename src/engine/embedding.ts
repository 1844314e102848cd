/**
 * Embedding requests in the engine: prompt-only work in the same continuous
 * batch as generation. Such a request never samples; the steps that compute
 * its prompt ask the backend for the final hidden state of the tokens its
 * pooling reads (StepBatch.hiddenIndices), and once the whole prompt is
 * computed it finishes with the pooled vector (FinishInfo.embedding) and frees
 * its blocks like any finished request.
 *
 * Invariants:
 * - E1: the pooled rows are exactly those of one uninterrupted computation of
 *   the prompt from position 0 ('mean', 'cls': such requests never take prefix
 *   cache hits, and a preempted one starts over with an empty accumulator when
 *   its recomputation starts at position 0), or the last token's ('last': a
 *   prefix hit never covers the last token, so it is always computed).
 * - E2: a request's hidden rows are taken from the step that computed them, in
 *   plan order, and nowhere else (hiddenTokens() and PooledEmbedding.add()
 *   walk the same entries in the same order).
 * - E3: on a model that attends both ways (ModelShape.wholeSequences, a
 *   BERT-family encoder) a request's prompt is computed whole, in the one step
 *   that admits it, from position 0: the scheduler admits it only when the
 *   step's budget holds all its tokens and never gives it a prefix hit, and
 *   the engine refuses (PromptTooLong) a prompt longer than a step's budget
 *   or the model's positions. It finishes in that step, so it is never
 *   running between steps, never partly computed and never preempted part-way
 *   (the backend refuses a step that would split one: encoder.cc).
 */

/** How the token states become one vector (sentence-transformers' pooling modes). */
export type Pooling = 'last' | 'mean' | 'cls';

export interface EmbeddingSpec {
  readonly pooling: Pooling;
  /**
   * Optional, encoders with a token-type table (ModelShape.tokenTypes): each
   * prompt token's segment, as BERT's token_type_ids (a cross-encoder's text
   * pair: 0 on [CLS] query [SEP], 1 on the document and its [SEP]). Absent:
   * all 0, one text. Checked by Engine.add (length, range).
   */
  readonly tokenTypeIds?: readonly number[];
}

/**
 * Which of a step's tokens of an embedding request the backend must return,
 * as offsets into the request's chunk: the chunk covers prompt positions
 * [start, start + numTokens) of a prompt of `length` tokens.
 */
export function pooledOffsets(pooling: Pooling, start: number, numTokens: number, length: number): readonly number[] {
  switch (pooling) {
    case 'last':
      return start + numTokens === length ? [numTokens - 1] : [];
    case 'cls':
      return start === 0 ? [0] : [];
    case 'mean':
      return Array.from({ length: numTokens }, (_, i) => i);
  }
}

/** One request's pooling in progress: the hidden rows it was given, summed or kept. */
export class PooledEmbedding {
  readonly #pooling: Pooling;
  readonly #sum: Float64Array;
  #rows = 0;

  constructor(pooling: Pooling, hiddenSize: number) {
    this.#pooling = pooling;
    this.#sum = new Float64Array(hiddenSize);
  }

  /** A step's chunk starting at prompt position `start`; starting at 0 drops what an earlier (preempted) computation gave (E1). */
  beginChunk(start: number): void {
    if (start !== 0) return;
    this.#sum.fill(0);
    this.#rows = 0;
  }

  /** Adds row `row` of a step's hidden states ([rows][hiddenSize], row-major). */
  add(hidden: Float32Array, row: number): void {
    const width = this.#sum.length;
    const at = row * width;
    if (this.#pooling !== 'mean') this.#sum.fill(0);
    for (let i = 0; i < width; i++) this.#sum[i]! += hidden[at + i]!;
    this.#rows = this.#pooling === 'mean' ? this.#rows + 1 : 1;
  }

  /** The pooled vector (mean: the sum over the rows given, divided by their count). */
  result(): Float32Array {
    const divisor = this.#rows === 0 ? 1 : this.#rows;
    return Float32Array.from(this.#sum, (v) => v / divisor);
  }
}
