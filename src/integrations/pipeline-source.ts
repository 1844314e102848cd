/**
 * Where an integration's model (weft/ai-sdk, weft/langchain) gets its Pipeline, and who closes it.
 *
 * The rule: whoever opens a pipeline closes it. A Pipeline the app passes in
 * is borrowed and never closed here. Options (or a model folder) make an owned
 * source, which opens the pipeline on first use, once, even when many calls
 * arrive together, and closes it in close().
 */

import { Pipeline } from '../create.js';
import { InvalidOptionError, PipelineClosedError } from '../errors.js';
import type { PipelineApi } from '../pipeline/face.js';
import type { PipelineOptions } from '../pipeline/options.js';

export interface PipelineSource {
  get(): Promise<PipelineApi>;
  /** Closes the pipeline if this source opened it; a no-op for a borrowed one. Idempotent. */
  close(): Promise<void>;
}

/** A pipeline (in process, isolated or remote), an options object for Pipeline.create, or a model folder path. */
export type PipelineInput = PipelineApi | PipelineOptions | string;

/**
 * Duck-typed rather than instanceof: the CommonJS bundles of `weft` and
 * `weft/ai-sdk` each carry their own copy of the Pipeline class.
 */
export function isPipeline(value: unknown): value is PipelineApi {
  const candidate = value as Partial<PipelineApi> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.stream === 'function' &&
    typeof candidate.chat === 'function' &&
    typeof candidate.close === 'function'
  );
}

/**
 * The public factories that take a PipelineInput. Each checks the shape of what
 * it was given here, so a wrong one gets an InvalidOptionError saying how that
 * factory is called, not a TypeError from deep inside.
 */
export type SourceFactory = 'createWeft' | 'weft' | 'ChatWeft' | 'WeftEmbeddings' | 'WeftReranker';

const FOLDER = "'models/weft-demo'";
const PIPELINE_INPUT = `a Pipeline you opened, Pipeline.create options ({ model: ${FOLDER}, ... }) or a model folder path`;
const CALLS: Record<SourceFactory, string> = {
  createWeft: `createWeft({ pipeline, modelId?, defaults? }), pipeline being ${PIPELINE_INPUT}`,
  weft: `weft(pipeline), weft(${FOLDER}) or weft({ model: ${FOLDER}, ... }), then optionally { modelId, defaults }`,
  ChatWeft: `new ChatWeft({ pipeline, ...request defaults }), pipeline being ${PIPELINE_INPUT}`,
  WeftEmbeddings: `new WeftEmbeddings({ pipeline, queryPromptName?, documentPromptName?, dimensions? }), pipeline being ${PIPELINE_INPUT}`,
  WeftReranker: `new WeftReranker({ pipeline, topN?, instruction?, truncate? }), pipeline being ${PIPELINE_INPUT}`,
};
/** The keys a settings object may have beside `pipeline` (ChatWeft's fields are LangChain's and weft's request options: not listed). */
const SETTINGS_KEYS: Partial<Record<SourceFactory, readonly string[]>> = {
  createWeft: ['pipeline', 'modelId', 'defaults'],
  weft: ['modelId', 'defaults'],
  WeftEmbeddings: ['pipeline', 'queryPromptName', 'documentPromptName', 'dimensions', 'normalize', 'truncate'],
  WeftReranker: ['pipeline', 'topN', 'instruction', 'truncate'],
};

/**
 * A source for a Pipeline, Pipeline.create options or a folder path.
 *
 * With a factory the shapes are checked first, for that factory's message:
 * `pipelineSource(settings, 'createWeft' | 'ChatWeft')` takes the settings object
 * (`{ pipeline, ... }`), `pipelineSource(model, 'weft', settings)` weft's two arguments.
 * Pipeline.create checks the options themselves when the pipeline is opened.
 */
export function pipelineSource(input: PipelineInput): PipelineSource;
export function pipelineSource(settings: { readonly pipeline: PipelineInput }, factory: 'createWeft' | 'ChatWeft' | 'WeftEmbeddings' | 'WeftReranker'): PipelineSource;
export function pipelineSource(input: PipelineInput, factory: 'weft', settings: unknown): PipelineSource;
export function pipelineSource(value: unknown, factory?: SourceFactory, settings?: unknown): PipelineSource {
  let input = value as PipelineInput;
  if (factory === 'weft') {
    checkPipelineInput('model', value, factory);
    checkSettings(factory, settings);
  } else if (factory !== undefined) {
    checkSettings(factory, value);
    input = (value as { pipeline: PipelineInput }).pipeline;
    checkPipelineInput('pipeline', input, factory);
  }
  if (isPipeline(input)) return borrowed(input);
  return owned(typeof input === 'string' ? { model: input } : input);
}

/** Checks a settings object: `createWeft(settings)`, `new ChatWeft(fields)`, or weft's second argument. */
function checkSettings(factory: SourceFactory, settings: unknown): void {
  const call = CALLS[factory];
  const name = factory === 'ChatWeft' ? 'fields' : 'settings';
  const maker = factory === 'ChatWeft' ? 'new ChatWeft' : factory;
  if (factory === 'weft' && settings === undefined) return;
  if (typeof settings === 'string') {
    const text = JSON.stringify(settings);
    const hint =
      factory === 'weft'
        ? `weft(model, { modelId: ${text} }) sets the model id`
        : `a model folder goes in pipeline: ${maker}({ pipeline: ${text} })` + (factory === 'createWeft' ? `, or weft(${text}) for one model` : '');
    throw new InvalidOptionError(name, `expected an object, got the string ${text}: ${hint}`);
  }
  if (isPipeline(settings)) {
    const hint = factory === 'createWeft' ? 'createWeft({ pipeline: pipe }), or weft(pipe) for one model' : factory === 'ChatWeft' ? 'new ChatWeft({ pipeline: pipe })' : 'weft(pipe), first';
    throw new InvalidOptionError(name, `expected an object of settings, got a Pipeline: pass it as ${hint}`);
  }
  if (settings === null || typeof settings !== 'object' || Array.isArray(settings)) {
    throw new InvalidOptionError(name, `expected an object, got ${describe(settings)}. Call ${call}`);
  }
  const record = settings as Record<string, unknown>;
  if (factory !== 'weft' && record.pipeline === undefined) {
    if ('model' in record || 'backend' in record || 'remote' in record) {
      const folder = typeof record.model === 'string' ? JSON.stringify(record.model) : FOLDER;
      throw new InvalidOptionError(
        'pipeline',
        `missing: ${maker} takes Pipeline.create options under pipeline, not beside it: ${maker}({ pipeline: { model: ${folder}, ... } }) or ${maker}({ pipeline: ${folder} })`,
      );
    }
    throw new InvalidOptionError('pipeline', `missing. Call ${call}`);
  }
  const allowed = SETTINGS_KEYS[factory];
  const unknown = allowed === undefined ? [] : Object.keys(record).filter((key) => !allowed.includes(key));
  if (allowed !== undefined && unknown.length > 0) {
    const where = factory === 'createWeft' ? 'createWeft({ pipeline: { model, ... } })' : 'weft({ model, ... })';
    throw new InvalidOptionError(unknown[0]!, `not a ${factory} setting (it takes ${allowed.join(', ')}); Pipeline.create options go in ${where}, per-call settings in defaults`);
  }
  if (record.modelId !== undefined && typeof record.modelId !== 'string') throw new InvalidOptionError('modelId', `expected a string, got ${describe(record.modelId)}`);
  if (factory !== 'ChatWeft' && record.defaults !== undefined && (record.defaults === null || typeof record.defaults !== 'object' || Array.isArray(record.defaults))) {
    throw new InvalidOptionError('defaults', `expected an object of providerOptions.weft settings ({ parsers, templateKwargs, ... }), got ${describe(record.defaults)}`);
  }
}

function checkPipelineInput(name: string, input: unknown, factory: SourceFactory): void {
  // For createWeft and ChatWeft the option is `pipeline`, which says enough; weft's first argument gets the calls.
  const call = factory === 'weft' ? `. Call ${CALLS.weft}` : '';
  if (typeof input === 'string') {
    if (input.trim() === '') throw new InvalidOptionError(name, `expected a model folder path, got an empty string${call}`);
    return;
  }
  if (isPipeline(input)) return;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidOptionError(name, `expected ${PIPELINE_INPUT}; got ${describe(input)}${call}`);
  }
  const record = input as Record<string, unknown>;
  if (factory === 'weft' && 'pipeline' in record) {
    throw new InvalidOptionError(name, 'weft takes the pipeline itself, not { pipeline }: weft(pipe), weft(folder) or weft({ model: folder, ... }); { pipeline } is the shape of createWeft');
  }
  if (!('model' in record) && !('backend' in record) && !('remote' in record)) {
    const keys = Object.keys(record);
    throw new InvalidOptionError(name, `expected ${PIPELINE_INPUT}; got an object with ${keys.length === 0 ? 'no keys' : `keys ${keys.join(', ')}`} (Pipeline.create options need a model folder: { model })`);
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  if (typeof value === 'object' || typeof value === 'function') return `a ${typeof value}`;
  return typeof value === 'undefined' ? 'undefined' : `the ${typeof value} ${String(value)}`;
}

export function borrowed(pipeline: PipelineApi): PipelineSource {
  return { get: () => Promise.resolve(pipeline), close: () => Promise.resolve() };
}

function owned(options: PipelineOptions): PipelineSource {
  let opening: Promise<PipelineApi> | undefined;
  let closing: Promise<void> | undefined;
  return {
    get() {
      if (closing !== undefined) return Promise.reject(new PipelineClosedError('this weft model was closed'));
      opening ??= Pipeline.create(options).catch((error: unknown) => {
        opening = undefined; // a failed open (e.g. a missing folder) may be retried
        throw error;
      });
      return opening;
    },
    close() {
      closing ??= (async () => {
        const pipeline = await opening?.catch(() => undefined);
        await pipeline?.close();
      })();
      return closing;
    },
  };
}

