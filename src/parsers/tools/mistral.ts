/**
 * mistral, both syntaxes after the `[TOOL_CALLS]` marker:
 *  - before tokenizer v11: a JSON array `[{"name": ..., "arguments": {...}}, ...]` (a lone object is
 *    accepted too);
 *  - v11 and later: `NAME[ARGS]{...}`, optionally `NAME[CALL_ID]ID[ARGS]{...}`, each call behind its
 *    own `[TOOL_CALLS]`.
 * There is no closing tag: after the array or the arguments object, text is content again; after
 * broken JSON, the rest of the text from the break is content.
 */
import { CallBuilder } from '../call-builder.js';
import { ArrayOfCallsSink } from '../json/array-of-calls-sink.js';
import { JsonCallRegion } from '../json/call-region.js';
import { preview } from '../preview.js';
import { JsonScanner } from '../json/scanner.js';
import { scanToMarker, skipWhitespace } from '../markers.js';
import { ToolStreamBase } from '../tool-stream-base.js';

const TOOL_CALLS = '[TOOL_CALLS]';
const ARGS = '[ARGS]';
const CALL_ID = '[CALL_ID]';
const NOT_NAME_CHAR = /[^A-Za-z0-9_.\- \t]/; // a newline or punctuation ends a would-be name
const NAME = /^[A-Za-z0-9_.\-]+$/;

type State = 'content' | 'afterMarker' | 'name' | 'callId' | 'expectArgs' | 'args' | 'array' | 'object';

export class MistralToolStream extends ToolStreamBase {
  private state: State = 'content';
  private name = '';
  private call: CallBuilder | null = null;
  private scanner: JsonScanner | null = null;
  private arraySink: ArrayOfCallsSink | null = null;
  private region: JsonCallRegion | null = null;

  protected process(s: string, final: boolean): number {
    let i = 0;
    for (;;) {
      switch (this.state) {
        case 'content': {
          const scan = scanToMarker(s, i, [TOOL_CALLS], final);
          this.content(scan.text);
          i = scan.next;
          if (scan.marker === null) return i;
          this.state = 'afterMarker';
          break;
        }
        case 'afterMarker': {
          i = skipWhitespace(s, i);
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
            this.region = new JsonCallRegion(this, TOOL_CALLS);
            this.state = 'object';
          } else {
            this.name = '';
            this.state = 'name';
          }
          break;
        }
        case 'name':
        case 'callId': {
          const scan = scanToMarker(s, i, this.state === 'name' ? [ARGS, CALL_ID] : [ARGS], final);
          const from = i;
          i = scan.next;
          if (this.state === 'name') {
            // Decide at the first character that cannot be part of a name, wherever the chunks end,
            // or once the name is complete (marker or end of output).
            const bad = NOT_NAME_CHAR.exec(scan.text);
            const end = bad !== null ? bad.index : scan.text.length;
            this.name += scan.text.slice(0, end);
            const complete = scan.marker !== null || final;
            if (bad !== null || (complete && !NAME.test(this.name.trim()))) {
              this.warn(`kept a malformed ${TOOL_CALLS} call as text: ${preview(this.name)}`);
              this.content(TOOL_CALLS + this.name);
              i = from + end; // the content state goes on from the offending character (or the marker)
              this.state = 'content';
              break;
            }
          }
          if (scan.marker === null) {
            if (final) {
              // The name is known: the call is kept, without arguments.
              this.call = new CallBuilder(this);
              this.call.start(this.name.trim());
              this.finishV11Call(`missing ${ARGS}`);
            }
            return i;
          }
          if (scan.marker === CALL_ID) {
            this.state = 'callId';
            break;
          }
          this.call = new CallBuilder(this);
          this.call.start(this.name.trim());
          this.state = 'expectArgs';
          break;
        }
        case 'expectArgs': {
          i = skipWhitespace(s, i);
          if (i >= s.length) {
            if (final) this.finishV11Call('no arguments followed [ARGS]');
            return i;
          }
          if (s[i] !== '{') {
            this.finishV11Call('the arguments are not a JSON object');
            this.state = 'content';
            break;
          }
          this.scanner = new JsonScanner(this.call!.writer);
          this.state = 'args';
          break;
        }
        case 'args': {
          i = this.scanner!.feed(s, i);
          if (final && i >= s.length) this.scanner!.finish();
          this.call!.flush();
          if (this.scanner!.done) {
            this.finishV11Call(null);
            this.state = 'content';
          } else if (this.scanner!.error !== null) {
            this.finishV11Call(this.scanner!.error);
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
          i = scanner.feed(s, i);
          if (final && i >= s.length) scanner.finish();
          sink.currentCall?.flush();
          const broken = scanner.error ?? (sink.notArray ? 'not a JSON array' : null);
          if (scanner.done || broken !== null || (final && i >= s.length)) {
            if (broken !== null) this.warn(`${TOOL_CALLS} array: ${broken}`);
            else if (!scanner.done) this.warn(`${TOOL_CALLS} array: it was cut off`);
            sink.finishElement();
            this.arraySink = null;
            this.scanner = null;
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
            this.state = 'content';
            break;
          }
          return i;
        }
      }
    }
  }

  /** Ends the v11 call in progress. */
  private finishV11Call(why: string | null): void {
    const call = this.call!;
    if (why) this.warn(`tool call "${call.name}": ${why}`);
    call.end();
    this.call = null;
    this.scanner = null;
  }
}
