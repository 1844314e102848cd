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
import { CallBuilder } from '../call-builder.js';
import { ArrayOfCallsSink } from '../json/array-of-calls-sink.js';
import { JsonCallRegion } from '../json/call-region.js';
import { preview } from '../preview.js';
import { JsonScanner } from '../json/scanner.js';
import { scanToMarker, startsWithWord } from '../markers.js';
import { ToolStreamBase } from '../tool-stream-base.js';

const TOOL_CALLS = '[TOOL_CALLS]';
const ARGS = '[ARGS]';
const CALL_ID = '[CALL_ID]';
const EOS = '</s>';
/** Arguments begin without [ARGS] in vLLM's decoding of v11 output. */
const ARGS_OPEN = '{';
const NOT_NAME_CHAR = /[^A-Za-z0-9_.\- \t]/; // a newline or punctuation ends a would-be name
const NAME = /^[A-Za-z0-9_.\-]+$/;
/** How much of broken arguments a warning quotes. */
const QUOTE_LIMIT = 2000;

type State = 'content' | 'afterMarker' | 'name' | 'callId' | 'expectArgs' | 'args' | 'array' | 'object';

export class MistralToolStream extends ToolStreamBase {
  private state: State = 'content';
  /** The text of the call being read since its [TOOL_CALLS], for giving it back as content. */
  private raw = '';
  private name = '';
  private call: CallBuilder | null = null;
  private scanner: JsonScanner | null = null;
  /** v11 arguments as written (capped), quoted when they turn out broken. */
  private argsText = '';
  private arraySink: ArrayOfCallsSink | null = null;
  private region: JsonCallRegion | null = null;

  protected process(s: string, final: boolean): number {
    let i = 0;
    for (;;) {
      switch (this.state) {
        case 'content': {
          const scan = scanToMarker(s, i, [TOOL_CALLS, EOS], final);
          this.content(scan.text);
          i = scan.next;
          if (scan.marker === null) return i;
          if (scan.marker === TOOL_CALLS) {
            this.raw = TOOL_CALLS;
            this.state = 'afterMarker';
          }
          break;
        }
        case 'afterMarker': {
          const from = i;
          while (i < s.length && (s[i] === ' ' || s[i] === '\n' || s[i] === '\t' || s[i] === '\r')) i++;
          this.raw += s.slice(from, i);
          if (i >= s.length) {
            if (final) this.warn(`${TOOL_CALLS} was not followed by a call`);
            return i;
          }
          const c = s[i]!;
          if (c === '[') {
            this.arraySink = new ArrayOfCallsSink(this);
            this.scanner = new JsonScanner(this.arraySink);
            this.state = 'array';
          } else if (c === '{') {
            this.region = new JsonCallRegion(this, this.raw);
            this.state = 'object';
          } else {
            this.name = '';
            this.state = 'name';
          }
          break;
        }
        case 'name': {
          const scan = scanToMarker(s, i, [ARGS, CALL_ID, ARGS_OPEN], final);
          const from = i;
          i = scan.next;
          // Decide at the first character that cannot be part of a name, wherever the chunks end,
          // or once the name is complete (marker or end of output).
          const bad = NOT_NAME_CHAR.exec(scan.text);
          const end = bad !== null ? bad.index : scan.text.length;
          this.name += scan.text.slice(0, end);
          this.raw += scan.text.slice(0, end);
          const complete = scan.marker !== null || final;
          if (bad !== null || (complete && !NAME.test(this.name.trim()))) {
            this.giveBack('it is not NAME[ARGS]{...}');
            i = from + end; // the content state goes on from the offending character (or the marker)
            break;
          }
          if (scan.marker === null) {
            if (final) this.giveBack(`its arguments never began`);
            return i;
          }
          this.raw += scan.marker;
          if (scan.marker === CALL_ID) {
            this.state = 'callId';
          } else if (scan.marker === ARGS) {
            this.startV11Call();
            this.state = 'expectArgs';
          } else {
            this.startV11Call();
            i -= ARGS_OPEN.length; // the brace is the arguments' own
            this.beginArgs();
          }
          break;
        }
        case 'callId': {
          const scan = scanToMarker(s, i, [ARGS], final);
          this.raw += scan.text;
          i = scan.next;
          if (scan.marker === null) {
            if (final) this.giveBack(`its arguments never began`);
            return i;
          }
          this.startV11Call();
          this.state = 'expectArgs';
          break;
        }
        case 'expectArgs': {
          while (i < s.length && (s[i] === ' ' || s[i] === '\n' || s[i] === '\t' || s[i] === '\r')) i++;
          if (i >= s.length) {
            if (final) this.finishV11Call(null); // `[ARGS]` and nothing more: no arguments, {}
            return i;
          }
          const eos = startsWithWord(s, i, EOS);
          if (eos === 'maybe' && !final) return i;
          if (eos === 'yes') {
            i += EOS.length;
            this.finishV11Call(null);
            this.state = 'content';
          } else if (s[i] === '{') {
            this.beginArgs();
          } else {
            this.finishV11Call('the arguments are not a JSON object');
            this.state = 'content';
          }
          break;
        }
        case 'args': {
          const from = i;
          i = this.scanner!.feed(s, i);
          // A prefix of the arguments as written, capped at QUOTE_LIMIT + 1 characters whatever the chunking.
          if (this.argsText.length <= QUOTE_LIMIT) this.argsText += s.slice(from, Math.min(i, from + QUOTE_LIMIT + 1 - this.argsText.length));
          if (final && i >= s.length) this.scanner!.finish();
          this.call!.flush();
          if (this.scanner!.done) {
            this.finishV11Call(null);
            this.state = 'content';
          } else if (this.scanner!.error !== null) {
            this.finishV11Call(`its arguments are not valid JSON (${this.scanner!.error}) and were closed there; as written: ${quote(this.argsText)}`);
            this.state = 'content';
          } else if (i >= s.length) {
            if (final) this.finishV11Call(null);
            return i;
          }
          break;
        }
        case 'array': {
          const sink = this.arraySink!;
          const scanner = this.scanner!;
          const from = i;
          i = scanner.feed(s, i);
          if (!sink.anyCallStarted) this.raw += s.slice(from, i);
          if (final && i >= s.length) scanner.finish();
          sink.currentCall?.flush();
          const broken = scanner.error ?? (sink.notArray ? 'not a JSON array' : null);
          if (scanner.done || broken !== null || (final && i >= s.length)) {
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
            break;
          }
          return i;
        }
        case 'object': {
          const region = this.region!;
          i = region.feed(s, i);
          const broken = region.scanner.error;
          if (region.scanner.done || broken !== null || (final && i >= s.length)) {
            const raw = region.finish(broken ?? (region.scanner.done ? null : 'the JSON object is incomplete'));
            if (raw !== null) this.content(raw);
            this.region = null;
            this.raw = '';
            this.state = 'content';
            break;
          }
          return i;
        }
      }
    }
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
