/**
 * Routes one request's generated text through its reasoning parser, then its
 * tool-call parser, and turns their events into stream parts. Either parser
 * may be absent; with neither, text passes through as text-delta parts.
 */

import type { ReasoningStream, ToolEvent, ToolStream } from './parsers/types.js';
import type { StreamPart } from './stream-parts.js';
import type { ToolCall } from './text/types.js';

export interface ParsedOutput {
  readonly content: string | null;
  readonly reasoning: string | null;
  readonly toolCalls: ToolCall[];
  readonly warnings: string[];
}

export class OutputParser {
  private readonly reasoningStream: ReasoningStream | undefined;
  private readonly toolStream: ToolStream | undefined;
  private content = '';
  private reasoning = '';
  private readonly calls = new Map<number, { id: string; name: string; arguments?: Record<string, unknown> }>();

  constructor(streams: { reasoning?: ReasoningStream; tool?: ToolStream }) {
    this.reasoningStream = streams.reasoning;
    this.toolStream = streams.tool;
  }

  push(text: string, tokenIds: readonly number[]): StreamPart[] {
    if (text.length === 0) return [];
    if (this.reasoningStream === undefined) return this.toContent(text, tokenIds, false);
    return this.fromReasoning(this.reasoningStream.push(text, tokenIds), false);
  }

  end(): StreamPart[] {
    const parts = this.reasoningStream === undefined ? [] : this.fromReasoning(this.reasoningStream.end(), true);
    if (this.toolStream !== undefined) parts.push(...this.fromTools(this.toolStream.end()));
    return parts;
  }

  result(): ParsedOutput {
    const toolCalls = [...this.calls.values()]
      .filter((call) => call.arguments !== undefined)
      .map((call) => ({ id: call.id, name: call.name, arguments: call.arguments! }));
    return {
      content: this.content.length > 0 ? this.content : null,
      reasoning: this.reasoning.length > 0 ? this.reasoning : null,
      toolCalls,
      warnings: [...(this.reasoningStream?.warnings ?? []), ...(this.toolStream?.warnings ?? [])],
    };
  }

  private fromReasoning(events: ReturnType<ReasoningStream['push']>, final: boolean): StreamPart[] {
    const parts: StreamPart[] = [];
    for (const event of events) {
      if (event.type === 'reasoning') {
        this.reasoning += event.text;
        parts.push({ type: 'reasoning-delta', text: event.text });
      } else {
        parts.push(...this.toContent(event.text, [], final));
      }
    }
    return parts;
  }

  private toContent(text: string, tokenIds: readonly number[], _final: boolean): StreamPart[] {
    if (this.toolStream === undefined) {
      this.content += text;
      return text.length > 0 ? [{ type: 'text-delta', text }] : [];
    }
    return this.fromTools(this.toolStream.push(text, tokenIds));
  }

  private fromTools(events: ToolEvent[]): StreamPart[] {
    const parts: StreamPart[] = [];
    for (const event of events) {
      switch (event.type) {
        case 'content':
          this.content += event.text;
          if (event.text.length > 0) parts.push({ type: 'text-delta', text: event.text });
          break;
        case 'tool-call-start':
          this.calls.set(event.index, { id: event.id, name: event.name });
          parts.push({ type: 'tool-call-start', index: event.index, id: event.id, name: event.name });
          break;
        case 'tool-call-delta':
          parts.push({ type: 'tool-call-delta', index: event.index, argumentsDelta: event.argumentsDelta });
          break;
        case 'tool-call-end': {
          const call = this.calls.get(event.index);
          if (call === undefined) break;
          call.arguments = event.arguments;
          parts.push({ type: 'tool-call', index: event.index, id: call.id, name: call.name, arguments: event.arguments });
          break;
        }
      }
    }
    return parts;
  }
}
