/**
 * Shared machinery of the tool-call streams: input buffering with hold-back, event collection,
 * call ids and lifecycle, warnings, and the whitespace rule (whitespace-only gaps before, between
 * and after tool calls are dropped; whitespace next to real content is kept).
 *
 * A format subclass implements `process(s, final)`: consume s from 0, emitting events, and return
 * the index of the first character it holds back (a partial tag). Held text is prepended to the
 * next delta, so it must stay short; anything a format keeps longer it keeps in its own state.
 * StateMachineToolStream writes process() as one small method per state.
 */
import type { JsonSchema } from '../text/types.js';
import type { ToolEvent, ToolParserOptions, ToolStream } from './types.js';

/** What a call under construction needs from its stream. */
export interface CallHost {
  startCall(name: string): number;
  callDelta(index: number, argumentsDelta: string): void;
  endCall(index: number, args: Record<string, unknown>): void;
  warn(message: string): void;
}

export abstract class ToolStreamBase implements ToolStream, CallHost {
  /** Parameter schemas by tool name; null when the request gave no tools. */
  protected readonly toolSchemas: ReadonlyMap<string, JsonSchema | undefined> | null;
  private readonly generateId: (index: number) => string;
  private events: ToolEvent[] = [];
  private readonly warningList: string[] = [];
  private callCount = 0;
  private held = '';
  private gapOpen = true;
  private gapHeld = '';
  private ended = false;

  constructor(options: ToolParserOptions) {
    this.toolSchemas = options.tools ? new Map(options.tools.map((t) => [t.function.name, t.function.parameters])) : null;
    this.generateId = options.generateId ?? ((index) => `call_${index}`);
  }

  get warnings(): readonly string[] {
    return this.warningList;
  }

  /** Characters held back for the next delta (a partial tag); bounded, which keeps pushes linear. */
  get heldLength(): number {
    return this.held.length;
  }

  push(deltaText: string, _deltaIds?: readonly number[]): ToolEvent[] {
    if (this.ended) {
      this.warn('push() after end() was ignored');
      return [];
    }
    if (deltaText.length > 0) this.run(deltaText, false);
    return this.take();
  }

  end(): ToolEvent[] {
    if (this.ended) return [];
    this.run('', true);
    this.ended = true;
    this.gapHeld = '';
    return this.take();
  }

  protected abstract process(s: string, final: boolean): number;

  private run(delta: string, final: boolean): void {
    const s = this.held + delta;
    const consumed = this.process(s, final);
    this.held = final ? '' : s.slice(consumed);
  }

  private take(): ToolEvent[] {
    const out = this.events;
    this.events = [];
    return out;
  }

  /** Ordinary text. Whitespace right after the start or a call is held until we know what follows it. */
  protected content(text: string): void {
    if (text.length === 0) return;
    if (this.gapOpen) {
      let k = 0;
      while (k < text.length && /\s/.test(text[k]!)) k++;
      if (k === text.length) {
        this.gapHeld += text;
        return;
      }
      text = this.gapHeld + text;
      this.gapHeld = '';
      this.gapOpen = false;
    }
    const last = this.events[this.events.length - 1];
    if (last?.type === 'content') last.text += text;
    else this.events.push({ type: 'content', text });
  }

  /** True when nothing but whitespace has been seen since the start or the last call. */
  protected get atGap(): boolean {
    return this.gapOpen;
  }

  /** True when no content has been emitted or held and no call was made: the output has not started. */
  protected get atStart(): boolean {
    return this.gapOpen && this.callCount === 0;
  }

  warn(message: string): void {
    this.warningList.push(message);
  }

  startCall(name: string): number {
    if (this.toolSchemas && !this.toolSchemas.has(name)) this.warn(`the model called an unknown tool "${name}"`);
    const index = this.callCount++;
    this.gapHeld = '';
    this.gapOpen = false;
    this.events.push({ type: 'tool-call-start', index, id: this.generateId(index), name });
    return index;
  }

  callDelta(index: number, argumentsDelta: string): void {
    if (argumentsDelta.length === 0) return;
    const last = this.events[this.events.length - 1];
    if (last?.type === 'tool-call-delta' && last.index === index) last.argumentsDelta += argumentsDelta;
    else this.events.push({ type: 'tool-call-delta', index, argumentsDelta });
  }

  endCall(index: number, args: Record<string, unknown>): void {
    this.events.push({ type: 'tool-call-end', index, arguments: args });
    this.gapOpen = true;
    this.gapHeld = '';
  }

  /** The JSON schema of a tool's parameters (undefined when unknown). */
  protected schemaOf(toolName: string): JsonSchema | undefined {
    return this.toolSchemas?.get(toolName);
  }
}

/** One state of a StateMachineToolStream: reads s from `i` (perhaps moving to another state) and returns where the next one goes on. */
export type StateStep = (s: string, i: number, final: boolean) => number;

/**
 * A tool stream read as a state machine: `steps[state]` runs, one after the other, until a step
 * returns `this.wait(i)` (it needs more input, and holds s[i..] back for the next delta).
 */
export abstract class StateMachineToolStream<State extends string> extends ToolStreamBase {
  protected abstract state: State;
  protected abstract readonly steps: Readonly<Record<State, StateStep>>;
  private waiting = false;

  protected process(s: string, final: boolean): number {
    let i = 0;
    while (!this.waiting) i = this.steps[this.state](s, i, final);
    this.waiting = false;
    return i;
  }

  /** Ends this pass: s[i..] is held back (nothing, when the pass is final). */
  protected wait(i: number): number {
    this.waiting = true;
    return i;
  }
}
