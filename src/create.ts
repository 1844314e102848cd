/**
 * The public Pipeline, whose create() is the one door to weft's three
 * pipelines: the model in this process (pipeline/pipeline.ts), in a child
 * process (`isolation: 'process'`, isolation/host.ts), or on an
 * OpenAI-compatible server (`{ remote }`, remote/remote-pipeline.ts).
 *
 * Why here: create() has to know all three, and the isolated and remote ones
 * are built on the pipeline's parts (pipeline/face.ts, options, the result
 * folds). With create() above the three classes, imports run one way: the
 * in-process class knows nothing of isolation/ or remote/, and neither of
 * those knows the in-process class.
 *
 * `Pipeline` is the in-process class itself plus this create() (which uses
 * neither `this` nor `super`, so it may be passed around unbound): what it opens
 * in process is a `Pipeline` (instanceof, events, stats, tokenizer). The
 * isolated and remote pipelines are their own classes; all three implement
 * PipelineApi (pipeline/face.ts), and IsolatedPipeline is a ModelPipeline
 * like Pipeline (events, stats and tokenizer too).
 */

import { InvalidOptionError } from './errors.js';
import type { IsolatedPipeline } from './isolation/host.js';
import { resolvePipelineOptions, type PipelineOptions } from './pipeline/options.js';
import { InProcessPipeline } from './pipeline/pipeline.js';
import type { RemoteOptions, RemotePipeline } from './remote/remote-pipeline.js';

export class Pipeline extends InProcessPipeline {
  /** With `{ remote }`: the same API over an OpenAI-compatible server (docs/scaling.md). */
  static override create(options: { remote: RemoteOptions }): Promise<RemotePipeline>;
  /** With `isolation: 'process'`: the same API, the model in a child process (docs/pipeline.md). */
  static override create(options: PipelineOptions & { isolation: 'process' }): Promise<IsolatedPipeline>;
  /** Loads a model folder (or wraps a custom backend) and starts an idle engine, in this process. */
  static override create(options: PipelineOptions & { isolation?: 'none' | undefined }): Promise<Pipeline>;
  static override create(options: PipelineOptions): Promise<Pipeline | IsolatedPipeline>;
  static override async create(options: PipelineOptions | { remote: RemoteOptions }): Promise<Pipeline | IsolatedPipeline | RemotePipeline> {
    if (options !== null && typeof options === 'object' && 'remote' in options && options.remote !== undefined) {
      const others = Object.keys(options).filter((key) => key !== 'remote');
      if (others.length > 0) throw new InvalidOptionError('remote', `a remote pipeline takes no local options (got ${others.join(', ')})`);
      // Loaded on demand, as is the isolated host: an in-process pipeline needs neither.
      const { RemotePipeline } = await import('./remote/remote-pipeline.js');
      return RemotePipeline.create({ remote: options.remote });
    }
    const local = options as PipelineOptions;
    if (local?.isolation === 'process') {
      resolvePipelineOptions(local); // the same checks, and errors, as in process
      const { IsolatedPipeline } = await import('./isolation/host.js');
      return IsolatedPipeline.start(local);
    }
    return new Pipeline(await Pipeline.open(local));
  }
}
