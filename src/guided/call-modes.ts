/**
 * What a request with tools runs, built from its format's ToolGrammar
 * (tool-grammar.ts), so every format with a grammar gets every mode:
 *
 * - forced ("required", a named tool): the reply is a call (after optional
 *   reasoning); with parallel calls, more may follow, separated by the
 *   format's separator, until an end token;
 * - tool-guided "auto": free text (and reasoning) with no constraint until
 *   the format's trigger is written, then that call's syntax with the
 *   arguments valid against the chosen tool's schema, then free text again
 *   (another call only with parallel calls);
 * - "none" (noCallStart): free text in which no call marker is written.
 *
 * Reasoning is read as the reasoning parser reads it (parsers/reasoning/think.ts):
 * `<think>` at the start (after whitespace) or opened by the prompt, up to
 * `</think>`. A parser "exit" (a tag such as `<tool_call>`, perhaps followed by more)
 * ends reasoning into a call: inside reasoning an exit is a guided call where
 * the format's trigger always leads to what the exit needs, and is refused
 * otherwise, so no call ever reaches the tool parser unguided.
 */
import { InvalidOptionError } from '../errors.js';
import type { ReasoningExit } from '../parsers/reasoning/think.js';
import type { ToolDefinition } from '../text/types.js';
import { END_STACK, Frame, Push, Stack, advance, utf8, type Step } from './automaton.js';
import { Choice, Optional, Sequence, literalPart, newId, type Part } from './text-frames.js';
import type { CallGrammar, CallTrigger, ToolGrammar } from './tool-grammar.js';
import { TriggerText, type Marker } from './trigger-text.js';

export interface ToolGuidance {
  /** The tool parser's name (for messages). */
  readonly parser: string;
  /** Its format's grammar. */
  readonly grammar: ToolGrammar;
  readonly tools: readonly ToolDefinition[];
  /** 'auto': the calls the model chooses to make are guided; 'required' / `{ name }`: it makes at least one (to that tool). */
  readonly choice: 'auto' | 'required' | { readonly name: string };
  /** More than one call per reply (OpenAI's parallel_tool_calls). */
  readonly parallel: boolean;
  /** 'none': no reasoning parser; 'optional': the reply may start with <think>; 'open': the prompt opened it. */
  readonly reasoning: 'none' | 'optional' | 'open';
  /** The reasoning parser's exits; undefined when it is not a built-in one (then no trigger is allowed inside reasoning). */
  readonly reasoningExits: readonly ReasoningExit[] | undefined;
  /** The texts of the vocabulary's special tokens (a format may write another syntax when one of its markers is a token). Default: none. */
  readonly specialTexts?: ReadonlySet<string>;
}

interface Trigger {
  readonly text: string;
  readonly at: 'anywhere' | 'start';
  readonly then: Part;
}

const THINK_OPEN = '<think>';
const THINK_CLOSE = '</think>';

/** The frame a request with these tools starts from. Throws InvalidOptionError for what cannot be guided. */
export function toolCallsStart(guidance: ToolGuidance): Frame {
  const { parser, grammar, tools, choice } = guidance;
  const only = typeof choice === 'object' ? choice.name : undefined;
  const indices = tools.map((_, i) => i).filter((i) => only === undefined || tools[i]!.function.name === only);
  if (indices.length === 0) throw new InvalidOptionError('toolChoice', only === undefined ? 'no tools to call' : `no tool is named "${only}"`);
  const call = grammar.call(tools, indices, { parallel: guidance.parallel, specialTexts: guidance.specialTexts ?? new Set() });
  const triggers = triggersOf(grammar, call);
  try {
    return choice === 'auto' ? autoStart(guidance, call, triggers) : forcedStart(guidance, call, triggers);
  } catch (error) {
    if (error instanceof InvalidOptionError) throw error;
    throw new InvalidOptionError('tools', `the ${parser} grammar cannot be built: ${(error as Error).message}`);
  }
}

function triggersOf(grammar: ToolGrammar, call: CallGrammar): Trigger[] {
  const listed: readonly CallTrigger[] = call.triggers ?? grammar.callMarkers.filter((marker) => call.open.startsWith(marker)).map((text) => ({ text }));
  return listed.map((t) => {
    if (t.then === undefined && !call.open.startsWith(t.text)) throw new Error(`trigger ${t.text} does not start ${call.open} and says nothing of what follows it`);
    const left = call.open.slice(t.text.length);
    const then = t.then ?? (left === '' ? call.rest : new Sequence([literalPart(left), call.rest]));
    return { text: t.text, at: t.at ?? 'anywhere', then };
  });
}

/**
 * toolChoice "none" (and tool-guided "auto" with no tools): free text that writes none of the
 * format's call markers, nor a start-only one (such as a list's `[`) at the start of the content, which
 * starts again after `</think>` when a reasoning parser reads the reply.
 */
export function noCallStart(grammar: ToolGrammar, reasoning: ToolGuidance['reasoning']): Frame {
  const atStart = grammar.startMarkers ?? [];
  const markers: Marker[] = [
    ...grammar.callMarkers.map((text): Marker => ({ text, at: 'anywhere', then: null })),
    ...atStart.map((text): Marker => ({ text, at: 'start', then: null })),
  ];
  if (atStart.length > 0 && reasoning !== 'none') markers.push({ text: THINK_CLOSE, at: 'anywhere', then: () => text.start() });
  const text = new TriggerText(markers, true);
  return text.start();
}

/** Tool-guided "auto": free text; a trigger starts a guided call, after which the text is free again. */
function autoStart(guidance: ToolGuidance, call: CallGrammar, triggers: readonly Trigger[]): Frame {
  const texts = new Set(triggers.map((t) => t.text));
  // Call markers that are not triggers would start a call the grammar does not guide: refused.
  const refused = guidance.grammar.callMarkers.filter((marker) => !texts.has(marker));
  const anywhereRefused = [...refused, ...triggers.filter((t) => t.at === 'anywhere').map((t) => t.text)];
  const noMoreCalls = new TriggerText(anywhereRefused.map((text) => ({ text, at: 'anywhere', then: null })), true);
  let content: TriggerText | undefined;
  const afterCall = (): Frame => (guidance.parallel && call.holdsAllCalls !== true ? content!.resume() : noMoreCalls.start());
  const callMarkersOf = (): Marker[] => [
    ...triggers.map((t): Marker => ({ text: t.text, at: t.at, then: () => new Push(t.then.start(), afterCall(), false) })),
    ...refused.map((text): Marker => ({ text, at: 'anywhere', then: null })),
  ];
  content = new TriggerText(callMarkersOf(), true);
  if (guidance.reasoning === 'none') return content.start();
  const reasoning = new TriggerText(
    [
      { text: THINK_CLOSE, at: 'anywhere', then: () => content!.start() },
      ...exitMarkers(guidance, triggers, (t) => () => new Push(t.then.start(), afterCall(), false)),
    ],
    true,
  );
  if (guidance.reasoning === 'open') return reasoning.start();
  const first = new TriggerText([{ text: THINK_OPEN, at: 'start', then: () => reasoning.start() }, ...callMarkersOf()], true);
  return first.start();
}

/** "required" or a named tool: the reply is a call (more with parallel calls), after optional reasoning. */
function forcedStart(guidance: ToolGuidance, call: CallGrammar, triggers: readonly Trigger[]): Frame {
  // A call that holds all calls (a list) took the parallel ones itself.
  const more = guidance.parallel && call.holdsAllCalls !== true ? new MoreCalls(call) : undefined;
  const withMore = (part: Part): Part => (more === undefined ? part : new Sequence([part, more]));
  const calls = withMore(new Sequence([literalPart(call.open), call.rest]));
  if (guidance.reasoning === 'none') return calls.start();
  const afterThink = new Sequence([new Optional('\n', 2), calls]);
  const reasoning = new TriggerText(
    [
      { text: THINK_CLOSE, at: 'anywhere', then: () => afterThink.start() },
      ...exitMarkers(guidance, triggers, (t) => {
        const rest = withMore(t.then);
        return () => rest.start();
      }),
    ],
    false,
  );
  if (guidance.reasoning === 'open') return reasoning.start();
  const afterOpen = withMore(call.rest);
  return new Choice([
    { lead: utf8(THINK_OPEN), next: () => reasoning.start() },
    { lead: utf8(call.open), next: () => afterOpen.start() },
  ]).start();
}

/**
 * Inside reasoning: each exit of the reasoning parser is a guided call when it is a trigger whose
 * call always leads to what the exit needs, and refused otherwise. With a reasoning parser weft does
 * not know, every trigger is refused there (it might be an exit).
 */
function exitMarkers(guidance: ToolGuidance, triggers: readonly Trigger[], callAfter: (trigger: Trigger) => () => Step): Marker[] {
  const exits = guidance.reasoningExits;
  if (exits === undefined) return triggers.filter((t) => t.at === 'anywhere').map((t) => ({ text: t.text, at: 'anywhere', then: null }));
  return exits.map((exit) => {
    const trigger = triggers.find((t) => t.text === exit.tag);
    const guided = trigger !== undefined && (exit.followedBy === undefined || alwaysLeadsTo(trigger.then, exit.followedBy));
    return { text: exit.tag, at: 'anywhere', then: guided ? callAfter(trigger) : null };
  });
}

/** Whether every text `part` accepts is whitespace and then `text` (how the think parser checks an exit's follower). */
function alwaysLeadsTo(part: Part, text: string): boolean {
  const want = utf8(text);
  const isSpace = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x09 || b === 0x0d;
  const visit = (stack: Stack, matched: number, spaces: number): boolean => {
    if (matched === want.length) return true;
    for (let b = 0; b < 256; b++) {
      const next = advance(stack, b);
      if (next === null) continue;
      if (b === want[matched]) {
        if (!visit(next, matched + 1, spaces)) return false;
      } else if (matched === 0 && isSpace(b) && spaces < 8) {
        if (!visit(next, 0, spaces + 1)) return false;
      } else return false;
    }
    return true;
  };
  return visit(new Stack(part.start(), END_STACK), 0, 0);
}

/** After a forced call, with parallel calls: the separator, then another call or the end. */
class MoreCalls implements Part {
  readonly id = newId();
  readonly open: Uint8Array;
  readonly allowed: string;
  readonly max: number;
  private readonly frames = new Map<string, MoreCallsFrame>();
  constructor(readonly call: CallGrammar) {
    this.open = utf8(call.open);
    this.allowed = call.separator?.allowed ?? '\n';
    this.max = call.separator?.max ?? 2;
    if (this.allowed.includes(call.open[0]!)) throw new Error(`the separator ${JSON.stringify(this.allowed)} holds the first character of ${call.open}`);
  }
  start(): Frame {
    return this.frame(0, 0);
  }
  frame(count: number, pos: number): MoreCallsFrame {
    const key = `${count}.${pos}`;
    let frame = this.frames.get(key);
    if (frame === undefined) {
      frame = new MoreCallsFrame(this, count, pos);
      this.frames.set(key, frame);
    }
    return frame;
  }
}

class MoreCallsFrame extends Frame {
  readonly key: string;
  constructor(
    readonly more: MoreCalls,
    readonly count: number,
    readonly pos: number,
  ) {
    super();
    this.key = `M${more.id}.${count}.${pos}`;
  }
  /** The reply may end between calls. */
  override get canPop(): boolean {
    return this.pos === 0;
  }
  step(byte: number): Step {
    const { more, count, pos } = this;
    if (pos === 0 && count < more.max && more.allowed.includes(String.fromCharCode(byte))) return more.frame(count + 1, 0);
    if (more.open[pos] !== byte) return null;
    if (pos + 1 < more.open.length) return more.frame(count, pos + 1);
    return new Push(more.call.rest.start(), more.start(), false);
  }
}
