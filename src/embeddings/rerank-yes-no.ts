/**
 * Rerankers that answer "yes" or "no" (Qwen3-Reranker): a causal LM reads a
 * fixed judging prompt around the query and the document, and the score is
 * the probability of "yes" against "no" at the prompt's last position:
 * softmax([logit(no), logit(yes)])[yes] = sigmoid(logit(yes) - logit(no)).
 *
 * Only the two LM-head rows are needed: the engine returns the last token's
 * final hidden state (last-token pooling, as for embeddings) and the two
 * logits are its dot products with those rows, computed here.
 */
import type { Matrix } from './rerank-weights.js';

/** The judging prompt, as Qwen3-Reranker's model card lays it out (ChatML, an empty think block to answer at once). */
export const YES_NO_SYSTEM = 'Judge whether the Document meets the requirements based on the Query and the Instruct provided. Note that the answer can only be "yes" or "no".';
export const YES_NO_PREFIX = `<|im_start|>system\n${YES_NO_SYSTEM}<|im_end|>\n<|im_start|>user\n`;
export const YES_NO_SUFFIX = '<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n';
/** The model card's instruction when a call gives none. */
export const DEFAULT_RERANK_INSTRUCTION = 'Given a web search query, retrieve relevant passages that answer the query';

export interface YesNoReranker {
  readonly kind: 'yes-no';
  /** Rows of the LM head (or the tied embedding) for the "yes" and "no" tokens: [2][hidden]. */
  readonly rows: Matrix;
  readonly yesTokenId: number;
  readonly noTokenId: number;
  /** The instruction used when a call gives none (the pipeline's rerank.instruction, else the model card's). */
  readonly instruction: string;
}

/** The part between the fixed prefix and suffix; the model card tokenizes the three separately. */
export function yesNoBody(instruction: string, query: string, document: string): string {
  return `<Instruct>: ${instruction}\n<Query>: ${query}\n<Document>: ${document}`;
}

/** P(yes) from the last position's final hidden state. */
export function yesNoScore(reranker: YesNoReranker, hidden: Float32Array): number {
  const { cols, data } = reranker.rows;
  let yes = 0;
  let no = 0;
  for (let i = 0; i < cols; i++) {
    yes += hidden[i]! * data[i]!;
    no += hidden[i]! * data[cols + i]!;
  }
  return 1 / (1 + Math.exp(no - yes));
}
