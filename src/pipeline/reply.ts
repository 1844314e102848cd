/**
 * One reply's parsing: the request's reasoning and tool parsers chained over
 * its text deltas, their events turned into stream parts. With no parsers,
 * text passes through as text-delta parts. What chat() returns is folded from
 * these parts (results.ts), never collected a second way.
 */

import { randomBytes } from 'node:crypto';
import { createParserChain } from '../parsers/chain.js';
import { detectStartsInReasoning } from '../parsers/reasoning/think.js';
import { createReasoningParser } from '../parsers/registry.js';
import { createToolParser } from '../tool-formats/registry.js';
import type { ParserEvent, ParserStream } from '../parsers/types.js';
import type { ToolDefinition } from '../text/types.js';
import type { ParserOptions } from './options.js';
import type { StreamPart } from './stream-parts.js';

export class Reply {
  private readonly stream: ParserStream<ParserEvent> | undefined;
  /** Id and name of each started call, for its finished tool-call part. */
  private readonly started = new Map<number, { id: string; name: string }>();
  private calls = 0;

  /**
   * The parsers `names` asks for, set up for this prompt: when the template
   * already opened a think block, the output starts inside reasoning. Unknown
   * names throw InvalidOptionError (from the registry).
   */
  constructor(names: ParserOptions, tools: readonly ToolDefinition[], promptText: string) {
    if (names.tool === undefined && names.reasoning === undefined) return;
    // Call ids unique across requests (the parser's default, call_<i>, is only unique within one).
    const prefix = `call_${randomBytes(6).toString('hex')}_`;
    const reasoning =
      names.reasoning === undefined ? null : createReasoningParser(names.reasoning, { startsInReasoning: detectStartsInReasoning(promptText) });
    const tool = names.tool === undefined ? null : createToolParser(names.tool, { tools, generateId: (index) => `${prefix}${index}` });
    this.stream = createParserChain({ reasoning, tool }).stream();
  }

  /** Whether the parser found any finished tool call so far. */
  get hasToolCalls(): boolean {
    return this.calls > 0;
  }

  /** What the parsers found malformed so far. */
  get warnings(): readonly string[] {
    return this.stream?.warnings ?? [];
  }

  push(text: string, tokenIds: readonly number[]): StreamPart[] {
    if (text.length === 0) return [];
    return this.toParts(this.stream === undefined ? [{ type: 'content', text }] : this.stream.push(text, tokenIds));
  }

  end(): StreamPart[] {
    return this.stream === undefined ? [] : this.toParts(this.stream.end());
  }

  private toParts(events: ParserEvent[]): StreamPart[] {
    const parts: StreamPart[] = [];
    for (const event of events) {
      switch (event.type) {
        case 'content':
          if (event.text.length > 0) parts.push({ type: 'text-delta', text: event.text });
          break;
        case 'reasoning':
          if (event.text.length > 0) parts.push({ type: 'reasoning-delta', text: event.text });
          break;
        case 'tool-call-start':
          this.started.set(event.index, { id: event.id, name: event.name });
          parts.push({ type: 'tool-call-start', index: event.index, id: event.id, name: event.name });
          break;
        case 'tool-call-delta':
          parts.push({ type: 'tool-call-delta', index: event.index, argumentsDelta: event.argumentsDelta });
          break;
        case 'tool-call-end': {
          const call = this.started.get(event.index);
          if (call === undefined) break;
          this.calls++;
          parts.push({ type: 'tool-call', index: event.index, id: call.id, name: call.name, arguments: event.arguments });
          break;
        }
      }
    }
    return parts;
  }
}
