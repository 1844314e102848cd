/**
 * OpenAI stream chunks -> weft stream parts, for one request.
 *
 * Reasoning and tool calls come through either way a server works:
 * - parsed by the server: `delta.reasoning_content` (vLLM, OVMS, weft serve;
 *   `delta.reasoning` too) and `delta.tool_calls`;
 * - raw text: then weft's own parsers (`local`) run on `delta.content` here.
 * A server's parse is given the whitespace rule of weft's own (reply-trim.ts),
 * so a chat reply reads the same from a server as in process.
 * The text a server sends as content comes first as a `raw` part (what a
 * chat result's `text` and a completion's text are folded from, as in process).
 * Remote streams have no `token` parts: servers send token text, not ids.
 */

import type { ParserEvent, ParserStream } from '../parsers/types.js';
import type { RequestPart } from '../pipeline/run-request.js';
import type { FinishReason, StreamPart, Usage } from '../pipeline/stream-parts.js';
import { ReplyTrim } from './reply-trim.js';
import { remoteError } from './remote-errors.js';

interface ServerCall {
  readonly index: number;
  id: string;
  name: string;
  arguments: string;
  started: boolean;
  ended: boolean;
}

type Finish = Extract<StreamPart, { type: 'finish' }>;

export class ChunkReader {
  private readonly serverCalls = new Map<number, ServerCall>();
  /** Local parser calls by the parser's index: our index, and what tool-call needs from their start. */
  private readonly localCalls = new Map<number, { index: number; id: string; name: string }>();
  private nextIndex = 0;
  private finishReason: string | null = null;
  private usage: Usage = { promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0 };
  private readonly warnings: string[] = [];
  /** Trims what the server parsed; none for a completion, or when weft's parsers (which trim) read the text here. */
  private readonly trim: ReplyTrim | undefined;

  /**
   * `chat`: a chat reply (else a completion); `local`: weft's parsers, for a server that sends raw text;
   * `choice`: the choice index this reader follows (n > 1: one reader per choice, see ChoiceReaders).
   */
  constructor(
    chat: boolean,
    private readonly local: ParserStream<ParserEvent> | undefined,
    private readonly choice = 0,
  ) {
    this.trim = chat && local === undefined ? new ReplyTrim() : undefined;
  }

  /** The parts one chunk (a parsed `data:` payload) carries. Throws the server's error if it sent one. */
  push(chunk: unknown): RequestPart[] {
    if (chunk === null || typeof chunk !== 'object') return [];
    const c = chunk as Chunk;
    if (c.error !== undefined) throw remoteError(undefined, c);
    // The request's usage (the prompt once, every choice's completion): choice 0 reports it (docs/parallel-sampling.md).
    if (c.usage && this.choice === 0) {
      this.usage = {
        promptTokens: c.usage.prompt_tokens ?? 0,
        completionTokens: c.usage.completion_tokens ?? 0,
        cachedPromptTokens: c.usage.prompt_tokens_details?.cached_tokens ?? 0,
      };
    }
    const choice = c.choices?.find((entry) => (entry.index ?? 0) === this.choice);
    if (!choice) return [];
    const parts: RequestPart[] = [];
    const delta = choice.delta ?? {};
    const sent = delta.reasoning_content ?? delta.reasoning;
    const reasoning = typeof sent === 'string' && this.trim ? this.trim.reasoning(sent) : sent;
    if (typeof reasoning === 'string' && reasoning !== '') parts.push({ type: 'reasoning-delta', text: reasoning });
    const text = typeof delta.content === 'string' ? delta.content : typeof choice.text === 'string' ? choice.text : '';
    if (text !== '') {
      parts.push({ type: 'raw', text, tokenIds: [] });
      parts.push(...this.content(text));
    }
    for (const call of delta.tool_calls ?? []) parts.push(...this.serverCallDelta(call));
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    return parts;
  }

  /** After the last chunk: complete tool calls, then the finish part. */
  end(): StreamPart[] {
    const parts: StreamPart[] = [];
    if (this.local) {
      parts.push(...this.fromEvents(this.local.end()));
      this.warnings.push(...this.local.warnings);
    }
    for (const call of this.serverCalls.values()) parts.push(...this.complete(call));
    const called = parts.some((p) => p.type === 'tool-call') || this.localCalls.size > 0;
    const finish: Finish = {
      type: 'finish',
      finishReason: finishReason(this.finishReason, called),
      usage: this.usage,
      ...(this.warnings.length > 0 && { warnings: [...this.warnings] }),
    };
    parts.push(finish);
    return parts;
  }

  private content(text: string): StreamPart[] {
    if (!this.local) {
      const kept = this.trim ? this.trim.content(text) : text;
      return kept === '' ? [] : [{ type: 'text-delta', text: kept }];
    }
    return this.fromEvents(this.local.push(text));
  }

  private fromEvents(events: readonly ParserEvent[]): StreamPart[] {
    const parts: StreamPart[] = [];
    for (const event of events) {
      switch (event.type) {
        case 'content':
          if (event.text !== '') parts.push({ type: 'text-delta', text: event.text });
          break;
        case 'reasoning':
          if (event.text !== '') parts.push({ type: 'reasoning-delta', text: event.text });
          break;
        case 'tool-call-start': {
          // Numbered in one sequence with the server's calls (a request rarely has both).
          const index = this.nextIndex++;
          this.localCalls.set(event.index, { index, id: event.id, name: event.name });
          parts.push({ type: 'tool-call-start', index, id: event.id, name: event.name });
          break;
        }
        case 'tool-call-delta': {
          const call = this.localCalls.get(event.index);
          if (call) parts.push({ type: 'tool-call-delta', index: call.index, argumentsDelta: event.argumentsDelta });
          break;
        }
        case 'tool-call-end': {
          const call = this.localCalls.get(event.index);
          if (call) parts.push({ type: 'tool-call', index: call.index, id: call.id, name: call.name, arguments: event.arguments });
          break;
        }
      }
    }
    return parts;
  }

  private serverCallDelta(delta: ToolCallDelta): StreamPart[] {
    const serverIndex = typeof delta.index === 'number' ? delta.index : this.serverCalls.size;
    let call = this.serverCalls.get(serverIndex);
    const parts: StreamPart[] = [];
    if (!call) {
      // A new call: the ones before it are complete (OpenAI streams calls one after another).
      for (const earlier of this.serverCalls.values()) parts.push(...this.complete(earlier));
      call = { index: this.nextIndex++, id: '', name: '', arguments: '', started: false, ended: false };
      this.serverCalls.set(serverIndex, call);
    }
    if (typeof delta.id === 'string' && delta.id !== '') call.id = delta.id;
    if (typeof delta.function?.name === 'string') call.name += delta.function.name;
    if (!call.started && call.name !== '') parts.push(...this.start(call));
    const args = delta.function?.arguments;
    if (typeof args === 'string' && args !== '') {
      call.arguments += args;
      if (call.started) parts.push({ type: 'tool-call-delta', index: call.index, argumentsDelta: args });
    }
    return parts;
  }

  /** The tool-call part of a server call, once. */
  private complete(call: ServerCall): StreamPart[] {
    if (call.ended) return [];
    call.ended = true;
    return [...(call.started ? [] : this.start(call)), { type: 'tool-call', index: call.index, id: call.id, name: call.name, arguments: this.parseArguments(call) }];
  }

  /** The start of a server call; arguments that came before its name follow as one delta. */
  private start(call: ServerCall): StreamPart[] {
    call.started = true;
    if (call.id === '') call.id = `call_${call.index}`;
    const parts: StreamPart[] = [{ type: 'tool-call-start', index: call.index, id: call.id, name: call.name }];
    if (call.arguments !== '') parts.push({ type: 'tool-call-delta', index: call.index, argumentsDelta: call.arguments });
    return parts;
  }

  private parseArguments(call: ServerCall): Record<string, unknown> {
    if (call.arguments.trim() === '') return {};
    try {
      const parsed = JSON.parse(call.arguments) as unknown;
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // Reported below.
    }
    this.warnings.push(`the server sent arguments for ${call.name} that are not a JSON object: ${call.arguments.slice(0, 200)}`);
    return {};
  }
}

function finishReason(reason: string | null, called: boolean): FinishReason {
  if (reason === 'length') return 'length';
  if (reason === 'tool_calls' || reason === 'function_call') return 'tool_calls';
  return called ? 'tool_calls' : 'stop';
}

interface ToolCallDelta {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface Chunk {
  error?: unknown;
  usage?: { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number } | null } | null;
  choices?: {
    index?: number;
    text?: string;
    delta?: { content?: string | null; reasoning_content?: string | null; reasoning?: string | null; tool_calls?: ToolCallDelta[] };
    finish_reason?: string | null;
  }[];
}

/**
 * The readers of a request's n choices (n > 1): each chunk goes to every
 * reader, each takes its own choice's entry; their parts come tagged with
 * the choice, as an in-process pipeline tags them.
 */
export class ChoiceReaders {
  private readonly readers: ChunkReader[];

  constructor(n: number, newReader: (choice: number) => ChunkReader) {
    this.readers = Array.from({ length: n }, (_, choice) => newReader(choice));
  }

  push(chunk: unknown): RequestPart[] {
    return this.readers.flatMap((reader, choice) => reader.push(chunk).map((part) => ({ ...part, choice })));
  }

  end(): StreamPart[] {
    return this.readers.flatMap((reader, choice) => reader.end().map((part) => ({ ...part, choice })));
  }
}
