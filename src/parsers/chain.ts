/**
 * A reasoning parser and a tool parser chained over one reply, the way the pipeline needs them:
 * each delta goes through the reasoning stream, its content goes on into the tool stream, and the
 * events come out in order. Either parser may be absent.
 */
import { InvalidOptionError } from '../errors.js';
import { collectEvents, streamWhole } from './collect.js';
import type { ParseResult, ParserEvent, ParserStream, ReasoningParser, ReasoningStream, ToolParser, ToolStream } from './types.js';

/** The parsers of a chain; either may be absent (null or left out). */
export interface ChainedParsers {
  reasoning?: ReasoningParser | null;
  tool?: ToolParser | null;
}

export interface ParserChain {
  parse(text: string): ParseResult;
  stream(): ParserStream<ParserEvent>;
}

export function createParserChain(parsers: ChainedParsers): ParserChain {
  const call = "createParserChain({ reasoning: createReasoningParser('qwen3'), tool: createToolParser('hermes') })";
  if (parsers === null || typeof parsers !== 'object') {
    const hint = typeof parsers === 'string' ? ` (names are opened with createReasoningParser / createToolParser)` : '';
    throw new InvalidOptionError('parsers', `expected { reasoning?, tool? } parser objects, got ${typeof parsers === 'string' ? `the string ${JSON.stringify(parsers)}` : String(parsers)}${hint}: ${call}`);
  }
  for (const name of ['reasoning', 'tool'] as const) {
    const parser = parsers[name] as unknown;
    if (parser !== undefined && parser !== null && typeof (parser as { stream?: unknown }).stream !== 'function') {
      throw new InvalidOptionError(`parsers.${name}`, `expected a ${name} parser (an object with stream()), got ${typeof parser === 'string' ? `the string ${JSON.stringify(parser)}` : typeof parser}: ${call}`);
    }
  }
  const stream = (): ParserStream<ParserEvent> => new ChainStream(parsers.reasoning?.stream() ?? null, parsers.tool?.stream() ?? null);
  return {
    stream,
    parse(text: string): ParseResult {
      const s = stream();
      return collectEvents(streamWhole(s, text), s.warnings);
    },
  };
}

class ChainStream implements ParserStream<ParserEvent> {
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
