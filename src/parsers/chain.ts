/**
 * Reasoning and tool parsing of one response, chained the way the pipeline needs it: each delta
 * goes through the reasoning stream, its content goes on into the tool stream, and the events come
 * out in order. Either parser may be absent.
 */
import { collectEvents, streamWhole } from './collect.js';
import type { ParserEvent, ParserStream, ReasoningParser, ReasoningStream, ToolParser, ToolStream } from './types.js';
import type { ToolCall } from '../text/types.js';

export interface OutputParsers {
  reasoning?: ReasoningParser | null;
  tool?: ToolParser | null;
}

export interface OutputParseResult {
  content: string | null;
  reasoning: string | null;
  toolCalls: ToolCall[];
  warnings: string[];
}

export interface OutputParser {
  parse(text: string): OutputParseResult;
  stream(): ParserStream<ParserEvent>;
}

export function createOutputParser(parsers: OutputParsers): OutputParser {
  const stream = (): ParserStream<ParserEvent> => new OutputStream(parsers.reasoning?.stream() ?? null, parsers.tool?.stream() ?? null);
  return {
    stream,
    parse(text: string): OutputParseResult {
      const s = stream();
      return { ...collectEvents(streamWhole(s, text)), warnings: [...s.warnings] };
    },
  };
}

class OutputStream implements ParserStream<ParserEvent> {
  constructor(
    private readonly reasoning: ReasoningStream | null,
    private readonly tool: ToolStream | null,
  ) {}

  get warnings(): readonly string[] {
    return [...(this.reasoning?.warnings ?? []), ...(this.tool?.warnings ?? [])];
  }

  push(deltaText: string, deltaIds?: readonly number[]): ParserEvent[] {
    if (!this.reasoning) return this.toTool(deltaText, deltaIds, false);
    return this.route(this.reasoning.push(deltaText, deltaIds), deltaIds, false);
  }

  end(): ParserEvent[] {
    if (!this.reasoning) return this.toTool('', undefined, true);
    return this.route(this.reasoning.end(), undefined, true);
  }

  private route(events: ParserEvent[], deltaIds: readonly number[] | undefined, final: boolean): ParserEvent[] {
    if (!this.tool) return events;
    const out: ParserEvent[] = [];
    for (const event of events) {
      if (event.type === 'content') out.push(...this.tool.push(event.text, deltaIds));
      else out.push(event);
    }
    if (final) out.push(...this.tool.end());
    return out;
  }

  private toTool(text: string, deltaIds: readonly number[] | undefined, final: boolean): ParserEvent[] {
    if (!this.tool) return text.length > 0 ? [{ type: 'content', text }] : [];
    const out: ParserEvent[] = text.length > 0 ? this.tool.push(text, deltaIds) : [];
    if (final) out.push(...this.tool.end());
    return out;
  }
}
