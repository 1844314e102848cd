/**
 * Folding events into results. parse(text) is defined as "stream the whole text in one delta and
 * collect", so parse and stream share one implementation and cannot disagree on semantics; the
 * property tests then check that the chunking of the deltas changes nothing.
 */
import type { ToolCall } from '../text/types.js';
import type {
  ParseResult,
  ParserEvent,
  ReasoningParseResult,
  ReasoningParser,
  ReasoningStream,
  ToolParseResult,
  ToolParser,
  ToolStream,
} from './types.js';

/**
 * Folds a sequence of events into content, reasoning and finished tool calls (in call order);
 * `warnings` are the stream's, copied into the result.
 */
export function collectEvents(events: Iterable<ParserEvent>, warnings: readonly string[] = []): ParseResult {
  let content = '';
  let reasoning = '';
  const started = new Map<number, { id: string; name: string }>();
  const calls: { index: number; call: ToolCall }[] = [];
  for (const event of events) {
    switch (event.type) {
      case 'content':
        content += event.text;
        break;
      case 'reasoning':
        reasoning += event.text;
        break;
      case 'tool-call-start':
        started.set(event.index, { id: event.id, name: event.name });
        break;
      case 'tool-call-end': {
        const head = started.get(event.index);
        if (head) calls.push({ index: event.index, call: { id: head.id, name: head.name, arguments: event.arguments } });
        break;
      }
      case 'tool-call-delta':
        break;
    }
  }
  calls.sort((a, b) => a.index - b.index);
  return { content: content || null, reasoning: reasoning || null, toolCalls: calls.map((c) => c.call), warnings: [...warnings] };
}

/** Runs a whole text through a fresh stream as one delta. */
export function streamWhole<E>(stream: { push(text: string): E[]; end(): E[] }, text: string): E[] {
  return [...stream.push(text), ...stream.end()];
}

/** Builds a ToolParser whose parse() is the stream run over the whole text. */
export function toolParserFromStream(name: string, createStream: () => ToolStream): ToolParser {
  return {
    name,
    stream: createStream,
    parse(text: string): ToolParseResult {
      const stream = createStream();
      const { content, toolCalls } = collectEvents(streamWhole(stream, text));
      return { content, toolCalls, warnings: [...stream.warnings] };
    },
  };
}

/** Builds a ReasoningParser whose parse() is the stream run over the whole text. */
export function reasoningParserFromStream(name: string, createStream: () => ReasoningStream): ReasoningParser {
  return {
    name,
    stream: createStream,
    parse(text: string): ReasoningParseResult {
      const stream = createStream();
      const { content, reasoning } = collectEvents(streamWhole(stream, text));
      return { reasoning, content, warnings: [...stream.warnings] };
    },
  };
}
