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
 * A reply being folded: content, reasoning and finished tool calls. The parsers'
 * events (collectEvents) and a pipeline's stream parts (pipeline/results.ts) both
 * fold into it, so a parse and a chat result cannot disagree on, say, call order.
 */
export class ReplyFold {
  private content = '';
  private reasoning = '';
  private readonly calls: { index: number; call: ToolCall }[] = [];

  addContent(text: string): void {
    this.content += text;
  }

  addReasoning(text: string): void {
    this.reasoning += text;
  }

  /** A finished call; `index` is its place in the reply (calls may finish out of order). */
  addCall(index: number, call: ToolCall): void {
    this.calls.push({ index, call });
  }

  /** Empty content and reasoning are null; calls in call order. */
  result(): { content: string | null; reasoning: string | null; toolCalls: ToolCall[] } {
    const toolCalls = [...this.calls].sort((a, b) => a.index - b.index).map((c) => c.call);
    return { content: this.content || null, reasoning: this.reasoning || null, toolCalls };
  }
}

/**
 * Folds a sequence of events into content, reasoning and finished tool calls (in call order);
 * `warnings` are the stream's, copied into the result.
 */
export function collectEvents(events: Iterable<ParserEvent>, warnings: readonly string[] = []): ParseResult {
  const fold = new ReplyFold();
  const started = new Map<number, { id: string; name: string }>();
  for (const event of events) {
    switch (event.type) {
      case 'content':
        fold.addContent(event.text);
        break;
      case 'reasoning':
        fold.addReasoning(event.text);
        break;
      case 'tool-call-start':
        started.set(event.index, { id: event.id, name: event.name });
        break;
      case 'tool-call-end': {
        const head = started.get(event.index);
        if (head) fold.addCall(event.index, { id: head.id, name: head.name, arguments: event.arguments });
        break;
      }
      case 'tool-call-delta':
        break;
    }
  }
  return { ...fold.result(), warnings: [...warnings] };
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
