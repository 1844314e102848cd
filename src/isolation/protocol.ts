/**
 * Messages between an isolated pipeline's host (host.ts) and its child
 * (child-entry.ts), sent over Node's IPC channel with structured-clone
 * serialization. Every request is named by the host's id; its parts stream
 * back one message each, ending in exactly one `end` or `failed`.
 */

import type { EmbedResult } from '../embeddings/embed.js';
import type { RerankResult } from '../embeddings/rerank.js';
import type { RequestPart } from '../pipeline/run-request.js';
import type { GenerationDefaults } from '../text/types.js';

/** PipelineOptions without what cannot cross a process boundary (functions, signals, objects). */
export type ChildPipelineOptions = Record<string, unknown>;

/** A WeftError (or any error) as data: the host rebuilds the typed error from `code`. */
export interface ErrorData {
  readonly code: string | undefined;
  readonly message: string;
  readonly option?: string;
}

export type HostMessage =
  | { readonly kind: 'open'; readonly options: ChildPipelineOptions }
  | { readonly kind: 'request'; readonly id: number; readonly input: unknown; readonly options: Record<string, unknown>; readonly chat: boolean }
  /** An embed() call: answered by one `embedded` or `failed`. */
  | { readonly kind: 'embed'; readonly id: number; readonly input: unknown; readonly options: Record<string, unknown> }
  /** A rerank() call: answered by one `reranked` or `failed`. */
  | { readonly kind: 'rerank'; readonly id: number; readonly query: unknown; readonly documents: unknown; readonly options: Record<string, unknown> }
  | { readonly kind: 'abort'; readonly id: number }
  | { readonly kind: 'close' };

export type ChildMessage =
  | { readonly kind: 'opened'; readonly generationDefaults: GenerationDefaults; readonly stats: unknown }
  | { readonly kind: 'open-failed'; readonly error: ErrorData }
  | { readonly kind: 'progress'; readonly progress: unknown }
  | { readonly kind: 'part'; readonly id: number; readonly part: RequestPart }
  | { readonly kind: 'end'; readonly id: number }
  | { readonly kind: 'failed'; readonly id: number; readonly error: ErrorData }
  | { readonly kind: 'embedded'; readonly id: number; readonly result: EmbedResult }
  | { readonly kind: 'reranked'; readonly id: number; readonly result: RerankResult }
  /** A pipeline event, with the pipeline's stats just after it (the host's stats() reads the latest). */
  | { readonly kind: 'event'; readonly name: string; readonly args: unknown[]; readonly stats: unknown }
  | { readonly kind: 'closed' }
  /** Request parts and events of one event-loop turn, sent as one IPC message (one per engine step, not one per part). */
  | { readonly kind: 'batch'; readonly messages: readonly ChildMessage[] };
