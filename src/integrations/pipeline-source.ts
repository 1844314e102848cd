/**
 * Where an integration's model (weft/ai-sdk, weft/langchain) gets its Pipeline, and who closes it.
 *
 * The rule: whoever opens a pipeline closes it. A Pipeline the app passes in
 * is borrowed and never closed here. Options (or a model folder) make an owned
 * source, which opens the pipeline on first use, once, even when many calls
 * arrive together, and closes it in close().
 */

import { Pipeline } from '../create.js';
import { PipelineClosedError } from '../errors.js';
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

export function pipelineSource(input: PipelineInput): PipelineSource {
  if (isPipeline(input)) return borrowed(input);
  return owned(typeof input === 'string' ? { model: input } : input);
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

