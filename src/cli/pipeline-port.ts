import type { EmbedOptions, EmbedResult } from '../embeddings/embed.js';
import type { RerankOptions, RerankResult } from '../embeddings/rerank.js';
import type { LoadProgress, ParserOptions } from '../pipeline/options.js';
import type { StreamPart } from '../pipeline/stream-parts.js';
import type { ChatMessage, ToolDefinition } from '../text/types.js';

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
  /** Reasoning and tool-call parser names (chat only). */
  parsers?: ParserOptions;
  /** Tools offered to the model through the chat template (chat only). */
  tools?: ToolDefinition[];
  /** Tool-guided calls (chat only, --guided-tools). */
  guidedTools?: boolean;
}

/** What the CLI needs of a Pipeline: a structural subset, so tests can pass a stand-in. */
export interface CliPipeline {
  stream(input: string | ChatMessage[], options?: CliRequestOptions): AsyncIterable<StreamPart>;
  close(): Promise<void>;
  /** `weft embed`; a stand-in may leave it out. */
  embed?(input: string[], options: EmbedOptions): Promise<EmbedResult>;
  /** `weft rerank`; a stand-in may leave it out. */
  rerank?(query: string, documents: string[], options: RerankOptions): Promise<RerankResult>;
  /** Looked at to pick default parsers and to spot a chat model; a stand-in may leave them out. */
  readonly tokenizer?: { tokenToId(token: string): number | undefined };
  readonly chatTemplate?:
    | { render(messages: readonly ChatMessage[], options?: { addGenerationPrompt?: boolean; tools?: readonly ToolDefinition[] }): string }
    | undefined;
}

export interface CliPipelineOptions {
  model: string;
  parsers?: ParserOptions;
  threads?: number;
  kvCache?: { size: string };
  onProgress?: (progress: LoadProgress) => void;
}

export type OpenPipeline = (options: CliPipelineOptions) => Promise<CliPipeline>;
