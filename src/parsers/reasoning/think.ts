/**
 * `<think>...</think>` reasoning (qwen3, deepseek_r1). The output may start inside the block when
 * the chat template already opened it (`startsInReasoning`); a `<think>` at the very start is then
 * simply skipped. Without `</think>` everything after the opening is reasoning.
 *
 * A tool call that a model starts inside the block without closing it first also ends the reasoning
 * (the tag is passed on as content for the tool parser), so the call is not lost: with qwen3 that is
 * `<tool_call>` followed (after whitespace) by `<function` (Qwen3.5's format, as vLLM checks it); a
 * `<tool_call>` followed by anything else is reasoning text, as both vLLM and OVMS treat it. With
 * deepseek_r1, `<｜tool▁calls▁begin｜>` (a special token) ends it outright. The `</think>` that may
 * still come after such an implicit end closes nothing and is dropped.
 *
 * Whitespace: reasoning is trimmed at both ends and content is trimmed at its start (templates put
 * newlines around the tags); trailing whitespace inside the block is held until we know whether
 * `</think>` follows.
 */
import { scanToMarker, startsWithWord } from '../markers.js';
import type { ReasoningStream, ReasoningStreamEvent } from '../types.js';

const OPEN = '<think>';
const CLOSE = '</think>';
const TOOL_CALL = '<tool_call>';

/** A tag that ends reasoning and is passed on as content. */
export interface ReasoningExit {
  tag: string;
  /** Only when this text follows the tag (after whitespace); otherwise the tag is reasoning text. */
  followedBy?: string;
}

export interface ThinkFormat {
  exits: readonly ReasoningExit[];
}

export const QWEN3_THINK: ThinkFormat = { exits: [{ tag: TOOL_CALL, followedBy: '<function' }] };
// DeepSeek's tool-call block is a special token that never occurs in ordinary reasoning text.
export const DEEPSEEK_R1_THINK: ThinkFormat = { exits: [{ tag: '<｜tool▁calls▁begin｜>' }] };

type State = 'start' | 'reasoning' | 'confirmingExit' | 'contentAfterExit' | 'content';

export class ThinkStream implements ReasoningStream {
  private state: State = 'start';
  private held = '';
  private events: ReasoningStreamEvent[] = [];
  private readonly warningList: string[] = [];
  /** Reasoning text emitted so far (for trimming its start). */
  private reasoningBegun = false;
  private trailingSpace = '';
  private contentBegun = false;
  private ended = false;
  private readonly markers: readonly string[];
  /** The exit tag (and whitespace after it) whose follower is not known yet. */
  private pendingExit = '';
  private exit: ReasoningExit | null = null;

  constructor(
    private readonly format: ThinkFormat,
    private readonly startsInReasoning: boolean,
  ) {
    this.markers = [CLOSE, ...format.exits.map((e) => e.tag)];
  }

  get warnings(): readonly string[] {
    return this.warningList;
  }

  /** Characters held back for the next delta (a partial tag); bounded, which keeps pushes linear. */
  get heldLength(): number {
    return this.held.length;
  }

  push(deltaText: string, _deltaIds?: readonly number[]): ReasoningStreamEvent[] {
    if (this.ended) {
      this.warningList.push('push() after end() was ignored');
      return [];
    }
    if (deltaText.length > 0) {
      const s = this.held + deltaText;
      this.held = s.slice(this.process(s, false));
    }
    return this.take();
  }

  end(): ReasoningStreamEvent[] {
    if (this.ended) return [];
    this.ended = true;
    this.process(this.held, true);
    this.held = '';
    if (this.state === 'reasoning' && this.reasoningBegun) this.warningList.push(`the reasoning was not closed with ${CLOSE}`);
    return this.take();
  }

  private take(): ReasoningStreamEvent[] {
    const out = this.events;
    this.events = [];
    return out;
  }

  private process(s: string, final: boolean): number {
    let i = 0;
    for (;;) {
      if (this.state === 'start') {
        // Leading whitespace is trimmed from reasoning and content alike, so it can go now.
        while (i < s.length && /\s/.test(s[i]!)) i++;
        if (i >= s.length && !final) return i;
        const open = startsWithWord(s, i, OPEN);
        if (open === 'maybe' && !final) return i;
        if (open === 'yes') {
          i += OPEN.length;
          this.state = 'reasoning';
        } else {
          this.state = this.startsInReasoning ? 'reasoning' : 'content';
        }
      } else if (this.state === 'reasoning') {
        const scan = scanToMarker(s, i, this.markers, final);
        this.reasoning(scan.text);
        i = scan.next;
        if (scan.marker === null) return i;
        if (scan.marker === CLOSE) {
          this.trailingSpace = '';
          this.state = 'content';
          continue;
        }
        this.exit = this.format.exits.find((e) => e.tag === scan.marker)!;
        this.pendingExit = scan.marker;
        this.state = 'confirmingExit';
      } else if (this.state === 'confirmingExit') {
        const follower = this.exit!.followedBy;
        const from = i;
        while (follower !== undefined && i < s.length && /\s/.test(s[i]!)) i++;
        this.pendingExit += s.slice(from, i);
        if (i >= s.length && !final && follower !== undefined) return i;
        const next = follower === undefined ? 'yes' : startsWithWord(s, i, follower);
        if (next === 'maybe' && !final) return i;
        if (next === 'yes') {
          this.trailingSpace = '';
          this.state = 'contentAfterExit';
          this.content(this.pendingExit);
        } else {
          // Not a tool call after all: the tag is reasoning text, and reading goes on from here.
          this.reasoning(this.pendingExit);
          this.state = 'reasoning';
        }
        this.pendingExit = '';
        this.exit = null;
      } else if (this.state === 'contentAfterExit') {
        const scan = scanToMarker(s, i, [CLOSE], final);
        this.content(scan.text);
        i = scan.next;
        if (scan.marker === null) return i;
        this.state = 'content'; // that </think> closed a block the tool call had already ended
      } else {
        this.content(s.slice(i));
        return s.length;
      }
    }
  }

  private reasoning(text: string): void {
    if (!this.reasoningBegun) {
      text = text.replace(/^\s+/, '');
      if (text.length === 0) return;
      this.reasoningBegun = true;
    }
    let end = text.length;
    while (end > 0 && /\s/.test(text[end - 1]!)) end--;
    const body = text.slice(0, end);
    if (body.length === 0) {
      this.trailingSpace += text;
      return;
    }
    this.emit('reasoning', this.trailingSpace + body);
    this.trailingSpace = text.slice(body.length);
  }

  private content(text: string): void {
    if (!this.contentBegun) {
      text = text.replace(/^\s+/, '');
      if (text.length === 0) return;
      this.contentBegun = true;
    }
    this.emit('content', text);
  }

  private emit(type: 'reasoning' | 'content', text: string): void {
    if (text.length === 0) return;
    const last = this.events[this.events.length - 1];
    if (last?.type === type) last.text += text;
    else this.events.push({ type, text });
  }
}

/**
 * Whether a rendered prompt leaves the model inside an open think block (the template ended the
 * prompt with `<think>`), i.e. the value to pass as `startsInReasoning`.
 */
export function detectStartsInReasoning(renderedPrompt: string): boolean {
  return renderedPrompt.trimEnd().endsWith(OPEN);
}
