/**
 * deepseek_v3: `<｜tool▁calls▁begin｜>` then, per call,
 * `<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>`, then
 * `<｜tool▁calls▁end｜>`. The V3.1 spelling `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>`
 * (no type, no code fence) is read as well, and a call outside the calls block is accepted.
 */
import { CallBuilder } from '../../parsers/call-builder.js';
import { preview } from '../../parsers/preview.js';
import { JsonScanner } from '../../parsers/json/scanner.js';
import { scanToMarker, skipWhitespace, startsWithWord } from '../../parsers/markers.js';
import { StrayText } from '../../parsers/stray-text.js';
import { ToolStreamBase } from '../../parsers/tool-stream-base.js';
import { CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END, FENCE, SEP } from './markers.js';


type State = 'content' | 'calls' | 'header' | 'name' | 'fenceOpen' | 'fenceLanguage' | 'argsStart' | 'args' | 'afterArgs';

export class DeepseekV3ToolStream extends ToolStreamBase {
  private state: State = 'content';
  /** Whether we are inside `<｜tool▁calls▁begin｜>` ... `<｜tool▁calls▁end｜>`. */
  private inBlock = false;
  private header = '';
  private name = '';
  private call: CallBuilder | null = null;
  private scanner: JsonScanner | null = null;
  private readonly stray = new StrayText();

  protected process(s: string, final: boolean): number {
    let i = 0;
    for (;;) {
      switch (this.state) {
        case 'content':
        case 'calls': {
          const markers = this.inBlock ? [CALL_BEGIN, CALLS_END] : [CALLS_BEGIN, CALL_BEGIN];
          const scan = scanToMarker(s, i, markers, final);
          this.content(scan.text);
          i = scan.next;
          if (scan.marker === null) {
            if (final && this.inBlock) this.warn(`missing ${CALLS_END}`);
            return i;
          }
          if (scan.marker === CALLS_BEGIN) this.inBlock = true;
          else if (scan.marker === CALLS_END) this.inBlock = false;
          else {
            this.header = '';
            this.state = 'header';
          }
          break;
        }
        case 'header': {
          const scan = scanToMarker(s, i, [SEP, CALL_END], final);
          this.header += scan.text;
          i = scan.next;
          if (scan.marker === SEP) {
            const header = this.header.trim();
            if (header === 'function' || header === '') {
              this.name = '';
              this.state = 'name';
            } else {
              this.begin(header);
            }
          } else if (scan.marker === CALL_END || final) {
            this.warn(`kept a malformed tool call as text: ${preview(this.header)}`);
            this.content(CALL_BEGIN + this.header + (scan.marker ?? ''));
            this.state = 'content';
          } else {
            return i;
          }
          break;
        }
        case 'name': {
          // The name runs to the end of the line (or to the arguments when the newline is missing).
          let j = i;
          while (j < s.length && s[j] !== '\n' && s[j] !== '`' && s[j] !== '{' && s[j] !== '<') j++;
          this.name += s.slice(i, j);
          i = j;
          if (i >= s.length && !final) return i;
          this.begin(this.name.trim());
          break;
        }
        case 'fenceOpen': {
          // Optional "```json" before the arguments.
          i = skipWhitespace(s, i);
          if (i >= s.length && !final) return i;
          const fence = startsWithWord(s, i, FENCE);
          if (fence === 'maybe' && !final) return i;
          if (fence === 'yes') i += FENCE.length;
          this.state = fence === 'yes' ? 'fenceLanguage' : 'argsStart';
          break;
        }
        case 'fenceLanguage': {
          while (i < s.length && /[A-Za-z0-9_-]/.test(s[i]!)) i++;
          if (i >= s.length && !final) return i;
          this.state = 'argsStart';
          break;
        }
        case 'argsStart': {
          i = skipWhitespace(s, i);
          if (i >= s.length && !final) return i;
          if (s[i] === '{') {
            this.scanner = new JsonScanner(this.call!.writer);
            this.state = 'args';
          } else {
            this.warn(`tool call "${this.call!.name}": the arguments are not a JSON object`);
            this.finishCall();
          }
          break;
        }
        case 'args': {
          const scanner = this.scanner!;
          i = scanner.feed(s, i);
          if (final && i >= s.length) scanner.finish();
          this.call!.flush();
          if (scanner.error !== null) this.warn(`tool call "${this.call!.name}": ${scanner.error}`);
          if (scanner.done || scanner.error !== null) this.finishCall();
          else if (i >= s.length) {
            if (final) this.finishCall();
            return i;
          }
          break;
        }
        case 'afterArgs': {
          // Closing fence, whitespace and the call's end tag; anything else here is junk.
          const scan = scanToMarker(s, i, [CALL_END, CALLS_END], final);
          this.stray.add(scan.text.replace(/`/g, ''));
          i = scan.next;
          if (scan.marker !== null || final) {
            const stray = this.stray.take();
            if (stray !== null) this.warn(`unexpected text after tool call arguments: ${preview(stray)}`);
          }
          if (scan.marker === null) {
            if (final) this.warn(`missing ${CALL_END}`);
            return i;
          }
          if (scan.marker === CALLS_END) this.inBlock = false;
          this.state = this.inBlock ? 'calls' : 'content';
          break;
        }
      }
    }
  }

  private begin(name: string): void {
    if (name === '') {
      this.warn('a tool call has no name; skipped');
      this.state = 'afterArgs';
      return;
    }
    this.call = new CallBuilder(this);
    this.call.start(name);
    this.state = 'fenceOpen';
  }

  /** Closes the current call (recovering cut-off arguments) and skips to its end tag. */
  private finishCall(): void {
    this.call!.end();
    this.call = null;
    this.scanner = null;
    this.state = 'afterArgs';
  }
}
