/**
 * pipe.embed(): texts in, one vector each out, through the pipeline's engine.
 * Each text becomes an embedding request (src/engine/embedding.ts): the
 * engine runs its prompt in the same steps as everything else and finishes it
 * with the pooled state; here the vector is cut to `dimensions` and
 * normalised as the folder (or the call) says.
 */
import type { Engine, FinishInfo } from '../engine/engine.js';
import { AbortError, BackendError, InvalidOptionError, PipelineClosedError, PromptTooLongError, UnsupportedModelError, WeftError } from '../errors.js';
import { GREEDY } from '../sampling/params.js';
import type { EmbeddingConfig } from './embedding-config.js';

export interface EmbedOptions {
  readonly signal?: AbortSignal;
  /** Keep the first N dimensions (Matryoshka embeddings); normalised after the cut when the model normalises. */
  readonly dimensions?: number;
  /** One of the model's named prompts (config_sentence_transformers.json), put before every text, e.g. "query". */
  readonly promptName?: string;
  /** Text put before every text instead of a named prompt. */
  readonly prompt?: string;
  /** Whether to L2-normalise; default: as the model folder says (DEFAULT_EMBEDDING_CONFIG when it says nothing). */
  readonly normalize?: boolean;
  /** Cut a text longer than the model's context to fit, keeping its special tokens; default false (PromptTooLongError). */
  readonly truncate?: boolean;
  /** Scheduling priority, as for generation requests. */
  readonly priority?: number;
}

export interface EmbedResult {
  /** One vector per input text, in input order. */
  readonly embeddings: Float32Array[];
  readonly usage: { readonly promptTokens: number };
}

/** How texts become token ids: the pipeline's PromptText (its text sandbox for a model folder's tokenizer). */
export interface PromptEncoder {
  encode(text: string, addSpecialTokens: boolean): Promise<number[]>;
}

/** What embedding needs of its pipeline. */
export interface EmbedContext {
  readonly engine: Engine;
  readonly promptText: PromptEncoder;
  /** The model's embedding settings, or why they could not be read (thrown by embed()). */
  readonly config: EmbeddingConfig | Error;
  /**
   * Most tokens one text may have (special tokens included): a decoder's
   * context less the slot a generated token would take; an encoder's
   * positions, and no more than one step holds (it reads a text in one step).
   */
  readonly maxTextTokens: number;
  /** Token ids given as input must be below this. */
  readonly vocabSize: number;
  /** The backend's hidden width; undefined: the backend cannot embed. */
  readonly hiddenSize: number | undefined;
  isClosed(): boolean;
}

const EMBED_OPTIONS = new Set(['signal', 'dimensions', 'promptName', 'prompt', 'normalize', 'truncate', 'priority']);

export async function embedTexts(ctx: EmbedContext, input: EmbedInput, options: EmbedOptions = {}): Promise<EmbedResult> {
  const { config } = ctx;
  if (config instanceof Error) throw config;
  const items = checkInput(input, ctx.vocabSize);
  const settings = checkOptions(ctx.hiddenSize, config, options);
  if (settings.prefix !== '' && items.some((item) => typeof item !== 'string'))
    throw new InvalidOptionError(options.prompt !== undefined ? 'prompt' : 'promptName', 'applies to texts, not to token ids (put the prompt\'s ids before them)');
  if (ctx.isClosed()) throw new PipelineClosedError();
  if (options.signal?.aborted) throw new AbortError('the request was aborted before it started', { cause: options.signal.reason });
  const limit = Math.min(ctx.maxTextTokens, config.maxSeqLength ?? Infinity);
  const holds = limit < ctx.maxTextTokens ? `the model reads at most ${limit} (its max_seq_length)` : `the model's context holds ${limit}`;
  const truncate = options.truncate === true;
  const prompts = await Promise.all(
    items.map((item, i) => (typeof item === 'string' ? encode(ctx.promptText, settings.prefix + item, i, limit, holds, truncate) : idsWithin([...item], i, limit, holds, truncate))),
  );
  const vectors = await runAll(ctx.engine, config, prompts, options);
  return {
    embeddings: vectors.map((v) => finish(v, settings.dimensions, settings.normalize)),
    usage: { promptTokens: prompts.reduce((sum, ids) => sum + ids.length, 0) },
  };
}

/** Texts, or token ids used as they are (an array of ids is one input; an array of such arrays, several). */
export type EmbedInput = string | readonly string[] | readonly number[] | readonly (string | readonly number[])[];

const isIds = (v: unknown): v is readonly number[] => Array.isArray(v) && v.length > 0 && v.every((id) => typeof id === 'number');

function checkInput(input: unknown, vocabSize: number): readonly (string | readonly number[])[] {
  const items = typeof input === 'string' || isIds(input) ? [input] : input;
  if (!Array.isArray(items)) throw new InvalidOptionError('input', `expected a string, an array of strings or token ids, got ${input === null ? 'null' : typeof input}`);
  items.forEach((item, i) => {
    if (typeof item === 'string') {
      if (item.length === 0) throw new InvalidOptionError(`input[${i}]`, 'is empty; an embedding needs some text');
    } else if (Array.isArray(item)) {
      if (item.length === 0) throw new InvalidOptionError(`input[${i}]`, 'is empty; an embedding needs some tokens');
      const bad = item.findIndex((id) => !Number.isInteger(id) || id < 0 || id >= vocabSize);
      if (bad >= 0) throw new InvalidOptionError(`input[${i}][${bad}]`, `${JSON.stringify(item[bad])} is not a token id in [0, ${vocabSize})`);
    } else throw new InvalidOptionError(`input[${i}]`, `expected a string or token ids, got ${item === null ? 'null' : typeof item}`);
  });
  return items as readonly (string | readonly number[])[];
}

/** Token ids given as they are: cut to `limit` when `truncate`, else PromptTooLongError. */
function idsWithin(ids: number[], index: number, limit: number, holds: string, truncate: boolean): number[] {
  if (ids.length <= limit) return ids;
  if (!truncate) throw new PromptTooLongError(`input[${index}] has ${ids.length} tokens; ${holds} (set truncate: true to cut it)`);
  return ids.slice(0, limit);
}

function checkOptions(hiddenSize: number | undefined, config: EmbeddingConfig, options: EmbedOptions): { prefix: string; dimensions: number | undefined; normalize: boolean } {
  if (options === null || typeof options !== 'object') throw new InvalidOptionError('options', 'expected an object');
  for (const key of Object.keys(options)) if (!EMBED_OPTIONS.has(key)) throw new InvalidOptionError(key, `is not an embed option (${[...EMBED_OPTIONS].join(', ')})`);
  if (hiddenSize === undefined) throw new UnsupportedModelError("this pipeline's backend cannot embed: it returns no hidden states (ModelShape.hiddenSize)");
  const { dimensions, promptName, prompt, normalize, truncate } = options;
  if (dimensions !== undefined && (!Number.isSafeInteger(dimensions) || dimensions < 1 || dimensions > hiddenSize))
    throw new InvalidOptionError('dimensions', `must be an integer in [1, ${hiddenSize}] (the model's embedding size), got ${String(dimensions)}`);
  if (normalize !== undefined && typeof normalize !== 'boolean') throw new InvalidOptionError('normalize', 'must be a boolean');
  if (truncate !== undefined && typeof truncate !== 'boolean') throw new InvalidOptionError('truncate', 'must be a boolean');
  if (prompt !== undefined && typeof prompt !== 'string') throw new InvalidOptionError('prompt', 'must be a string');
  if (prompt !== undefined && promptName !== undefined) throw new InvalidOptionError('prompt', 'give prompt or promptName, not both');
  const names = Object.keys(config.prompts);
  if (promptName !== undefined && (typeof promptName !== 'string' || config.prompts[promptName] === undefined))
    throw new InvalidOptionError('promptName', `${JSON.stringify(promptName)} is not one of the model's prompts (${names.length > 0 ? names.join(', ') : 'it names none'})`);
  const named = promptName ?? config.defaultPromptName;
  return { prefix: prompt ?? (named === undefined ? '' : config.prompts[named]!), dimensions, normalize: normalize ?? config.normalize };
}

/** A text's token ids with the tokenizer's special tokens; cut to `limit` (keeping those) when `truncate`. */
async function encode(promptText: PromptEncoder, text: string, index: number, limit: number, holds: string, truncate: boolean): Promise<number[]> {
  const ids = await promptText.encode(text, true);
  if (ids.length <= limit) return ids;
  if (!truncate) throw new PromptTooLongError(`input[${index}] has ${ids.length} tokens; ${holds} (set truncate: true to cut it)`);
  // The special tokens the tokenizer adds are what `ids` has around the plain encoding.
  const plain = await promptText.encode(text, false);
  const before = Math.max(0, ids.findIndex((_, at) => plain.every((id, j) => ids[at + j] === id)));
  const after = ids.length - before - plain.length;
  return [...ids.slice(0, before), ...plain.slice(0, limit - before - after), ...ids.slice(ids.length - after)];
}

/**
 * Every prompt as an engine request at once, so they share steps; the first failure (or an abort) ends them all.
 * `what` names the prompts in errors (rerank() runs its pairs here too, as `documents`);
 * `tokenTypes`, one list per prompt, gives an encoder its segments (a cross-encoder's pairs).
 */
export function runAll(
  engine: Engine,
  config: Pick<EmbeddingConfig, 'pooling'>,
  prompts: readonly number[][],
  options: Pick<EmbedOptions, 'signal' | 'priority'>,
  what = 'input',
  tokenTypes?: readonly (readonly number[])[],
): Promise<Float32Array[]> {
  const ids: number[] = [];
  const vectors: Float32Array[] = new Array(prompts.length);
  return new Promise<Float32Array[]>((resolve, reject) => {
    let pending = prompts.length;
    let settled = false;
    const fail = (error: Error): void => {
      if (settled) return;
      settled = true;
      for (const id of ids) engine.abort(id, new AbortError(`another of the same call's ${what} failed`));
      reject(error);
    };
    const onAbort = (): void => fail(new AbortError('the request was aborted', { cause: options.signal?.reason }));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    // Aborted while the prompts were encoded: the listener will never fire.
    if (options.signal?.aborted) return onAbort();
    const done = (): void => {
      options.signal?.removeEventListener('abort', onAbort);
      if (!settled) {
        settled = true;
        resolve(vectors);
      }
    };
    if (pending === 0) return done();
    prompts.forEach((promptTokenIds, i) => {
      if (settled) return;
      const added = engine.add(
        {
          promptTokenIds,
          sampling: GREEDY,
          stop: { maxTokens: 1, stopTokenIds: [], stopStrings: [], ignoreEos: true },
          priority: options.priority ?? 0,
          embedding: { pooling: config.pooling, ...(tokenTypes && { tokenTypeIds: tokenTypes[i]! }) },
        },
        {
          onDelta: () => {},
          onFinish: (info: FinishInfo) => {
            if (info.reason === 'stop' && info.embedding !== undefined) {
              vectors[i] = info.embedding;
              if (--pending === 0) done();
              return;
            }
            options.signal?.removeEventListener('abort', onAbort);
            if (info.reason === 'aborted') fail(info.error instanceof WeftError ? info.error : new AbortError());
            else fail(info.error instanceof WeftError ? info.error : new BackendError(`${what}[${i}] failed: ${info.error?.message ?? info.reason}`, { cause: info.error }));
          },
        },
      );
      if (added.ok) ids.push(added.value);
      else if (added.error.kind === 'Closed') fail(new PipelineClosedError());
      else if (added.error.kind === 'CannotEmbed') fail(new UnsupportedModelError(added.error.message));
      else fail(new PromptTooLongError(`${what}[${i}]: ${added.error.message}`));
    });
  });
}

/** The first `dimensions` values, divided by their L2 norm when asked. */
function finish(vector: Float32Array, dimensions: number | undefined, normalize: boolean): Float32Array {
  const kept = dimensions === undefined ? vector : vector.slice(0, dimensions);
  if (!normalize) return kept;
  let sum = 0;
  for (const v of kept) sum += v * v;
  const norm = Math.sqrt(sum);
  // sentence-transformers' Normalize divides by max(norm, 1e-12).
  const scale = 1 / Math.max(norm, 1e-12);
  return kept.map((v) => v * scale);
}
