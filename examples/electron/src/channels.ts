/**
 * The IPC contract between the renderer (through preload.ts) and the main
 * process (generation-service.ts). Everything here crosses the boundary by
 * structured clone, so it is plain data.
 *
 * Per request the renderer invokes `weft:generate` with an id it chose, then
 * receives `weft:part` messages for that id and exactly one `weft:end`.
 */
import type { ChatMessage, FinishReason, StreamPart, Usage } from 'weft';

export const Channels = {
  /** invoke(GenerateRequest) -> void; the outcome arrives as weft:part / weft:end messages. */
  generate: 'weft:generate',
  /** invoke(requestId) -> boolean: whether a running request of this window was cancelled. */
  cancel: 'weft:cancel',
  /** main -> renderer: PartMessage. */
  part: 'weft:part',
  /** main -> renderer: EndMessage, once per request. */
  end: 'weft:end',
} as const;

export interface GenerateRequest {
  /** Chosen by the renderer (unique within its window), so it can listen before invoking. */
  readonly requestId: string;
  readonly messages: ChatMessage[];
  readonly maxTokens?: number;
  readonly temperature?: number;
}

/** A model stream part, or a tool result the main process produced between rounds. */
export type AgentPart = StreamPart | { readonly type: 'tool-result'; readonly id: string; readonly name: string; readonly result: unknown };

export interface PartMessage {
  readonly requestId: string;
  readonly part: AgentPart;
}

/** `usage` is the last model call's; `rounds` counts model calls (tool results go back between them). */
export type EndMessage =
  | { readonly requestId: string; readonly status: 'done'; readonly finishReason: FinishReason; readonly usage: Usage; readonly rounds: number }
  | { readonly requestId: string; readonly status: 'cancelled' }
  | { readonly requestId: string; readonly status: 'error'; readonly code: string; readonly message: string };
