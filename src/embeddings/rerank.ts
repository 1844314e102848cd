/**
 * pipe.rerank(): a query and documents in, one relevance score per document
 * out, through the pipeline's engine. Each (query, document) pair becomes a
 * prompt-only request pooled at its last token (src/engine/embedding.ts), so
 * pairs share steps with generation, take their share of the step budget, are
 * cancelled by the call's AbortSignal and hold no KV blocks once scored. The
 * pairs of one call share their prompt's start (judging prompt, instruction,
 * query), so with prefix caching on, later pairs read it from the cache.
 *
 * The folder says how pairs are written and scored (rerank-config.ts):
 * yes/no rerankers (Qwen3-Reranker) pool the pair's judging prompt at its last
 * token and compare the yes/no logits (rerank-yes-no.ts); cross-encoders
 * (bge-reranker, BertForSequenceClassification) run [CLS] q [SEP] d [SEP]
 * with token types through the encoder and score its [CLS] state with the
 * folder's head (rerank-pair.ts, rerank-cross-encoder.ts). Pairs of a
 * cross-encoder share no prefix: each is one whole step (E3).
 */
import type { Engine } from '../engine/engine.js';
import { AbortError, InvalidOptionError, PipelineClosedError, PromptTooLongError, UnsupportedModelError } from '../errors.js';
import { runAll, type PromptEncoder } from './embed.js';
import type { Reranker } from './rerank-config.js';
import { crossEncoderScore } from './rerank-cross-encoder.js';
import { encodePairs } from './rerank-pair.js';
import { YES_NO_PREFIX, YES_NO_SUFFIX, yesNoBody, yesNoScore, type YesNoReranker } from './rerank-yes-no.js';

export interface RerankOptions {
  /** Keep only the N best documents in `ranking` (`scores` still has them all). */
  readonly topN?: number;
  /** The task instruction of a yes/no reranker (Qwen3-Reranker's `<Instruct>`); default the pipeline's, else the model card's. */
  readonly instruction?: string;
  /** Cut a pair longer than the model's context (the end of the document goes); default false (PromptTooLongError). */
  readonly truncate?: boolean;
  readonly signal?: AbortSignal;
  /** Scheduling priority, as for generation requests. */
  readonly priority?: number;
}

export interface RerankResult {
  /** One score per document, in input order: higher is more relevant (a yes/no reranker's P(yes), in [0, 1]). */
  readonly scores: number[];
  /** Documents by descending score (ties: input order), the first `topN` of them. */
  readonly ranking: { readonly index: number; readonly score: number }[];
  readonly usage: { readonly promptTokens: number };
}

/** What reranking needs of its pipeline. */
export interface RerankContext {
  readonly engine: Engine;
  readonly promptText: PromptEncoder;
  /** Most tokens one pair may have (EmbedContext.maxTextTokens: an encoder's step budget, a decoder's context less one). */
  readonly maxPairTokens: number;
  /** The backend's hidden width; undefined: the backend returns no hidden states. */
  readonly hiddenSize: number | undefined;
  /** The folder's reranker, read once on first use; rejects with why the model cannot rerank. */
  reranker(): Promise<Reranker>;
  isClosed(): boolean;
}

const RERANK_OPTIONS = new Set(['topN', 'instruction', 'truncate', 'signal', 'priority']);

export async function rerankDocuments(ctx: RerankContext, query: string, documents: readonly string[], options: RerankOptions = {}): Promise<RerankResult> {
  checkInput(query, documents);
  checkOptions(options);
  if (ctx.hiddenSize === undefined) throw new UnsupportedModelError("this pipeline's backend cannot rerank: it returns no hidden states (ModelShape.hiddenSize)");
  const reranker = await ctx.reranker();
  if (ctx.isClosed()) throw new PipelineClosedError();
  if (options.signal?.aborted) throw new AbortError('the request was aborted before it started', { cause: options.signal.reason });
  if (reranker.kind === 'cross-encoder') {
    const pairs = await encodePairs(ctx.promptText, reranker.pairTemplate, query, documents, ctx.maxPairTokens, options.truncate === true);
    const cls = await runAll(ctx.engine, { pooling: 'cls' }, pairs.map((p) => p.ids), options, 'documents', pairs.map((p) => p.typeIds));
    const scores = cls.map((state) => crossEncoderScore(reranker.head, state));
    return { scores, ranking: rank(scores, options.topN), usage: { promptTokens: pairs.reduce((sum, p) => sum + p.ids.length, 0) } };
  }
  const prompts = await yesNoPrompts(ctx, reranker, query, documents, options);
  const hidden = await runAll(ctx.engine, { pooling: 'last' }, prompts, options, 'documents');
  const scores = hidden.map((state) => yesNoScore(reranker, state));
  return { scores, ranking: rank(scores, options.topN), usage: { promptTokens: prompts.reduce((sum, ids) => sum + ids.length, 0) } };
}

/** The documents by descending score, ties in input order, the first `topN`. */
export function rank(scores: readonly number[], topN = scores.length): { index: number; score: number }[] {
  return scores
    .map((score, index) => ({ index, score }))
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, topN);
}

function checkInput(query: unknown, documents: unknown): void {
  if (typeof query !== 'string') throw new InvalidOptionError('query', `expected a string, got ${query === null ? 'null' : typeof query}`);
  if (query.trim() === '') throw new InvalidOptionError('query', 'is empty; give the text the documents are ranked against');
  if (!Array.isArray(documents)) throw new InvalidOptionError('documents', `expected an array of strings, got ${documents === null ? 'null' : typeof documents}`);
  if (documents.length === 0) throw new InvalidOptionError('documents', 'is empty; give at least one document to score');
  documents.forEach((doc: unknown, i) => {
    if (typeof doc !== 'string') throw new InvalidOptionError(`documents[${i}]`, `expected a string, got ${doc === null ? 'null' : typeof doc}`);
    if (doc === '') throw new InvalidOptionError(`documents[${i}]`, 'is empty; a document needs some text');
  });
}

function checkOptions(options: RerankOptions): void {
  if (options === null || typeof options !== 'object') throw new InvalidOptionError('options', 'expected an object');
  for (const key of Object.keys(options)) if (!RERANK_OPTIONS.has(key)) throw new InvalidOptionError(key, `is not a rerank option (${[...RERANK_OPTIONS].join(', ')})`);
  const { topN, instruction, truncate, priority } = options;
  if (topN !== undefined && (!Number.isSafeInteger(topN) || topN < 1)) throw new InvalidOptionError('topN', `must be a positive integer, got ${String(topN)}`);
  if (instruction !== undefined && (typeof instruction !== 'string' || instruction.trim() === '')) throw new InvalidOptionError('instruction', 'must be a non-empty string');
  if (truncate !== undefined && typeof truncate !== 'boolean') throw new InvalidOptionError('truncate', 'must be a boolean');
  if (priority !== undefined && !Number.isFinite(priority)) throw new InvalidOptionError('priority', 'must be a finite number');
}

/**
 * Each pair's ids as the model card builds them: the fixed prefix, the body
 * and the fixed suffix tokenized on their own and put end to end. Over the
 * context, with `truncate` the body loses tokens from its end (the model
 * card's truncation of the body); without it, PromptTooLongError naming the document.
 */
async function yesNoPrompts(ctx: RerankContext, reranker: YesNoReranker, query: string, documents: readonly string[], options: RerankOptions): Promise<number[][]> {
  const instruction = options.instruction ?? reranker.instruction;
  const [prefix, suffix] = await Promise.all([ctx.promptText.encode(YES_NO_PREFIX, false), ctx.promptText.encode(YES_NO_SUFFIX, false)]);
  const limit = ctx.maxPairTokens;
  const room = limit - prefix.length - suffix.length;
  const bodies = await Promise.all(documents.map((doc) => ctx.promptText.encode(yesNoBody(instruction, query, doc), false)));
  return bodies.map((body, i) => {
    if (body.length > room) {
      const total = prefix.length + body.length + suffix.length;
      if (options.truncate !== true) throw new PromptTooLongError(`documents[${i}]: the pair makes ${total} tokens; the model's context holds ${limit} (set truncate: true to cut the document)`);
      if (room < 1) throw new PromptTooLongError(`documents[${i}]: the model's context (${limit} tokens) cannot hold the reranker's fixed prompt (${prefix.length + suffix.length} tokens)`);
      return [...prefix, ...body.slice(0, room), ...suffix];
    }
    return [...prefix, ...body, ...suffix];
  });
}
