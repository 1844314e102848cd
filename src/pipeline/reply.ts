/**
 * Turns one request's parser events into stream parts and keeps the totals
 * chat() returns. With no parsers, text passes through as text-delta parts.
 */

import type { ParserEvent, ParserStream } from '../parsers/types.js';
import type { StreamPart } from './stream-parts.js';
import type { ToolCall } from '../text/types.js';

export interface ParsedOutput {
  readonly content: string | null;
  readonly reasoning: string | null;
  readonly toolCalls: ToolCall[];
  readonly warnings: string[];
}

export class OutputParser {
  private readonly stream: ParserStream<ParserEvent> | undefined;
  private content = '';
  private reasoning = '';
  private readonly calls = new Map<number, { id: string; name: string; arguments?: Record<string, unknown> }>();

  /** Whether a tool parser reads this reply. */
  readonly parsesToolCalls: boolean;

  /** `stream`: the request's chained reasoning + tool parser stream, if it has parsers. */
  constructor(stream?: ParserStream<ParserEvent>, parsesToolCalls = false) {
    this.stream = stream;
    this.parsesToolCalls = parsesToolCalls;
  }

  push(text: string, tokenIds: readonly number[]): StreamPart[] {
    if (text.length === 0) return [];
    return this.toParts(this.stream === undefined ? [{ type: 'content', text }] : this.stream.push(text, tokenIds));
  }

  end(): StreamPart[] {
    return this.stream === undefined ? [] : this.toParts(this.stream.end());
  }

  result(): ParsedOutput {
    const toolCalls: ToolCall[] = [];
    for (const call of this.calls.values()) {
      if (call.arguments !== undefined) toolCalls.push({ id: call.id, name: call.name, arguments: call.arguments });
    }
    return {
      content: this.content.length > 0 ? this.content : null,
      reasoning: this.reasoning.length > 0 ? this.reasoning : null,
      toolCalls,
      warnings: [...(this.stream?.warnings ?? [])],
    };
  }

  private toParts(events: ParserEvent[]): StreamPart[] {
    const parts: StreamPart[] = [];
    for (const event of events) {
      switch (event.type) {
        case 'content':
          if (event.text.length === 0) break;
          this.content += event.text;
          parts.push({ type: 'text-delta', text: event.text });
          break;
        case 'reasoning':
          if (event.text.length === 0) break;
          this.reasoning += event.text;
          parts.push({ type: 'reasoning-delta', text: event.text });
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
