import type { LoadProgress } from '../options.js';
import type { StreamPart } from '../stream-parts.js';
import type { ChatMessage } from '../text/types.js';

export type { LoadProgress, StreamPart };

export interface CliRequestOptions {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  seed?: number;
  signal?: AbortSignal;
  /** Extra chat template variables (chat only). */
  templateKwargs?: Record<string, unknown>;
}

/** What the CLI needs of a Pipeline: a structural subset, so tests can pass a stand-in. */
export interface CliPipeline {
  stream(input: string | ChatMessage[], options?: CliRequestOptions): AsyncIterable<StreamPart>;
  close(): Promise<void>;
}

export interface CliPipelineOptions {
  model: string;
  threads?: number;
  kvCache?: { size: string };
  onProgress?: (progress: LoadProgress) => void;
}

export type OpenPipeline = (options: CliPipelineOptions) => Promise<CliPipeline>;
