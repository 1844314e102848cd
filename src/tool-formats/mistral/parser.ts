/**
 * mistral, every syntax that follows the `[TOOL_CALLS]` marker in real output:
 *  - before tokenizer v11: a JSON array `[{"name": ..., "arguments": {...}}, ...]` (a lone object is
 *    accepted too);
 *  - v11 and later: `NAME[ARGS]{...}`, optionally `NAME[CALL_ID]ID[ARGS]{...}`, each call behind its
 *    own `[TOOL_CALLS]`;
 *  - v11 as vLLM detokenizes it (special tokens skipped, so `[ARGS]` is gone): `NAME{...}`.
 * There is no closing tag: after the array or the arguments object, text is content again.
 * `</s>` (the end-of-sequence token's text, present when special tokens are decoded) is dropped
 * wherever it appears outside a JSON string, and it ends a call waiting for its arguments.
 *
 * What is kept where (docs/parsers.md explains the choices):
 *  - a v11 call whose arguments never begin (`[TOOL_CALLS]name` then the end) is not a call: its text
 *    is content, with a warning;
 *  - `[ARGS]` followed by nothing (or `</s>`) is a call with `{}`;
 *  - broken v11 arguments keep the call, closed where they broke; the warning quotes the arguments as
 *    written and the text from the break on is content;
 *  - a pre-v11 array that breaks before any call began is content, verbatim.
 */
import { CallBuilder } from '../../parsers/call-builder.js';
import { ArrayOfCallsSink } from '../../parsers/json/array-of-calls-sink.js';
import { JsonCallRegion } from '../../parsers/json/call-region.js';
import { preview } from '../../parsers/preview.js';
import { JsonScanner } from '../../parsers/json/scanner.js';
import { scanToMarker, skipWhitespace, startsWithWord } from '../../parsers/markers.js';
import { StateMachineToolStream, type StateStep } from '../../parsers/tool-stream-base.js';
import { ARGS, CALL_ID, EOS, NAME, TOOL_CALLS } from './markers.js';

/** Arguments begin without [ARGS] in vLLM's decoding of v11 output. */
const ARGS_OPEN = '{';
const NOT_NAME_CHAR = /[^A-Za-z0-9_.\- \t]/; // a newline or punctuation ends a would-be name
/** How much of broken arguments a warning quotes. */
const QUOTE_LIMIT = 2000;

type State = 'content' | 'afterMarker' | 'name' | 'callId' | 'expectArgs' | 'args' | 'array' | 'object';

export class MistralToolStream extends StateMachineToolStream<State> {
  protected state: State = 'content';
  /** The text of the call being read since its [TOOL_CALLS], for giving it back as content. */
  private raw = '';
  private name = '';
  private call: CallBuilder | null = null;
  private scanner: JsonScanner | null = null;
  /** v11 arguments as written (capped), quoted when they turn out broken. */
  private argsText = '';
  private arraySink: ArrayOfCallsSink | null = null;
  private region: JsonCallRegion | null = null;

  protected readonly steps: Readonly<Record<State, StateStep>> = {
    content: (s, i, final) => this.inContent(s, i, final),
    afterMarker: (s, i, final) => this.afterMarker(s, i, final),
    name: (s, i, final) => this.inName(s, i, final),
    callId: (s, i, final) => this.inCallId(s, i, final),
    expectArgs: (s, i, final) => this.beforeArgs(s, i, final),
    args: (s, i, final) => this.inArgs(s, i, final),
    array: (s, i, final) => this.inArray(s, i, final),
    object: (s, i, final) => this.inObject(s, i, final),
  };

  /** Text, up to `[TOOL_CALLS]`; `</s>` is dropped. */
  private inContent(s: string, i: number, final: boolean): number {
    const scan = scanToMarker(s, i, [TOOL_CALLS, EOS], final);
    this.content(scan.text);
    if (scan.marker === null) return this.wait(scan.next);
    if (scan.marker === TOOL_CALLS) {
      this.raw = TOOL_CALLS;
      this.state = 'afterMarker';
    }
    return scan.next;
  }

  /** After `[TOOL_CALLS]`: the first character after whitespace says which syntax follows. */
  private afterMarker(s: string, i: number, final: boolean): number {
    const j = skipWhitespace(s, i);
    this.raw += s.slice(i, j);
    if (j >= s.length) {
      if (final) this.warn(`${TOOL_CALLS} was not followed by a call`);
      return this.wait(j);
    }
    if (s[j] === '[') {
      this.arraySink = new ArrayOfCallsSink(this);
      this.scanner = new JsonScanner(this.arraySink);
      this.state = 'array';
    } else if (s[j] === '{') {
      this.region = new JsonCallRegion(this, this.raw);
      this.state = 'object';
    } else {
      this.name = '';
      this.state = 'name';
    }
    return j;
  }

  /**
   * A v11 name, up to `[ARGS]`, `[CALL_ID]` or the arguments' `{`. Decided at the first character
   * that cannot be part of a name, wherever the chunks end, or once the name is complete.
   */
  private inName(s: string, i: number, final: boolean): number {
    const scan = scanToMarker(s, i, [ARGS, CALL_ID, ARGS_OPEN], final);
    const bad = NOT_NAME_CHAR.exec(scan.text);
    const end = bad !== null ? bad.index : scan.text.length;
    this.name += scan.text.slice(0, end);
    this.raw += scan.text.slice(0, end);
    const complete = scan.marker !== null || final;
    if (bad !== null || (complete && !NAME.test(this.name.trim()))) {
      this.giveBack('it is not NAME[ARGS]{...}');
      return i + end; // the content state goes on from the offending character (or the marker)
    }
    if (scan.marker === null) {
      if (final) this.giveBack(`its arguments never began`);
      return this.wait(scan.next);
    }
    this.raw += scan.marker;
    if (scan.marker === CALL_ID) {
      this.state = 'callId';
      return scan.next;
    }
    this.startV11Call();
    if (scan.marker === ARGS) {
      this.state = 'expectArgs';
      return scan.next;
    }
    this.beginArgs();
    return scan.next - ARGS_OPEN.length; // the brace is the arguments' own
  }

  /** `[CALL_ID]ID`, up to `[ARGS]`. */
  private inCallId(s: string, i: number, final: boolean): number {
    const scan = scanToMarker(s, i, [ARGS], final);
    this.raw += scan.text;
    if (scan.marker === null) {
      if (final) this.giveBack(`its arguments never began`);
      return this.wait(scan.next);
    }
    this.startV11Call();
    this.state = 'expectArgs';
    return scan.next;
  }

  /** After `[ARGS]`: whitespace, then the arguments' `{` (nothing, or `</s>`, is a call with `{}`). */
  private beforeArgs(s: string, i: number, final: boolean): number {
    const j = skipWhitespace(s, i);
    if (j >= s.length) {
      if (final) this.finishV11Call(null); // `[ARGS]` and nothing more: no arguments, {}
      return this.wait(j);
    }
    const eos = startsWithWord(s, j, EOS);
    if (eos === 'maybe' && !final) return this.wait(j);
    if (eos === 'yes') {
      this.finishV11Call(null);
      this.state = 'content';
      return j + EOS.length;
    }
    if (s[j] === '{') {
      this.beginArgs();
    } else {
      this.finishV11Call('the arguments are not a JSON object');
      this.state = 'content';
    }
    return j;
  }

  /** v11 arguments: a JSON object, streamed as it arrives. */
  private inArgs(s: string, i: number, final: boolean): number {
    const scanner = this.scanner!;
    const next = scanner.feed(s, i);
    // A prefix of the arguments as written, capped at QUOTE_LIMIT + 1 characters whatever the chunking.
    if (this.argsText.length <= QUOTE_LIMIT) this.argsText += s.slice(i, Math.min(next, i + QUOTE_LIMIT + 1 - this.argsText.length));
    if (final && next >= s.length) scanner.finish();
    this.call!.flush();
    if (scanner.done) {
      this.finishV11Call(null);
      this.state = 'content';
    } else if (scanner.error !== null) {
      this.finishV11Call(`its arguments are not valid JSON (${scanner.error}) and were closed there; as written: ${quote(this.argsText)}`);
      this.state = 'content';
    } else if (next >= s.length) {
      if (final) this.finishV11Call(null);
      return this.wait(next);
    }
    return next;
  }

  /** Before v11: a JSON array of call objects. */
  private inArray(s: string, i: number, final: boolean): number {
    const sink = this.arraySink!;
    const scanner = this.scanner!;
    const next = scanner.feed(s, i);
    if (!sink.anyCallStarted) this.raw += s.slice(i, next);
    if (final && next >= s.length) scanner.finish();
    sink.currentCall?.flush();
    const broken = scanner.error ?? (sink.notArray ? 'not a JSON array' : null);
    if (!scanner.done && broken === null && !(final && next >= s.length)) return this.wait(next);
    if (broken !== null && !sink.anyCallStarted) {
      // Nothing was sent as a call: the text is content again, verbatim.
      this.warn(`kept a malformed ${TOOL_CALLS} array as text (${broken}): ${preview(this.raw)}`);
      this.content(this.raw);
    } else if (broken !== null) {
      this.warn(`${TOOL_CALLS} array: ${broken}`);
    } else if (!scanner.done) {
      this.warn(`${TOOL_CALLS} array: it was cut off`);
    }
    sink.finishElement();
    this.arraySink = null;
    this.scanner = null;
    this.raw = '';
    this.state = 'content';
    return next;
  }

  /** A lone call object `{"name": ..., "arguments": ...}`. */
  private inObject(s: string, i: number, final: boolean): number {
    const region = this.region!;
    const next = region.feed(s, i);
    const broken = region.scanner.error;
    if (!region.scanner.done && broken === null && !(final && next >= s.length)) return this.wait(next);
    const raw = region.finish(broken ?? (region.scanner.done ? null : 'the JSON object is incomplete'));
    if (raw !== null) this.content(raw);
    this.region = null;
    this.raw = '';
    this.state = 'content';
    return next;
  }

  /** The text since [TOOL_CALLS] is not a call after all: it goes back into the content. */
  private giveBack(why: string): void {
    this.warn(`kept a malformed ${TOOL_CALLS} call as text (${why}): ${preview(this.raw)}`);
    this.content(this.raw);
    this.raw = '';
    this.state = 'content';
  }

  private startV11Call(): void {
    this.call = new CallBuilder(this);
    this.call.start(this.name.trim());
    this.raw = '';
  }

  private beginArgs(): void {
    this.scanner = new JsonScanner(this.call!.writer);
    this.argsText = '';
    this.state = 'args';
  }

  /** Ends the v11 call in progress. */
  private finishV11Call(why: string | null): void {
    const call = this.call!;
    if (why) this.warn(`tool call "${call.name}": ${why}`);
    call.end();
    this.call = null;
    this.scanner = null;
    this.argsText = '';
  }
}

function quote(text: string): string {
  return JSON.stringify(text.length > QUOTE_LIMIT ? text.slice(0, QUOTE_LIMIT) + '…' : text);
}
