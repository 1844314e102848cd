/**
 * llama3_json: `{"name": ..., "parameters"|"arguments": {...}}` objects, optionally behind
 * `<|python_tag|>`, several separated by `;` and/or whitespace, anywhere in the text. Every `{` starts
 * a candidate object; it is a call only when the whole object is valid JSON with a "name" (and,
 * without the tag, "parameters" or "arguments", so that an answer like `{"name": "Alice", "age": 3}`
 * stays content). Anything else is content, verbatim: text around the calls, JSON answers, and
 * objects that break (invalid or cut-off JSON).
 *
 * Because a call is only known once its object is complete, a call is sent whole (start, all of its
 * arguments in one delta, end) when its closing brace arrives. A candidate that breaks is given back
 * as content up to the break, and scanning goes on from the break, so no character is examined twice.
 */
import { JsonCallRegion } from '../../parsers/json/call-region.js';
import { scanToMarker } from '../../parsers/markers.js';
import { ToolStreamBase } from '../../parsers/tool-stream-base.js';
import { OBJECT_OPEN, PYTHON_TAG } from './markers.js';


type State = 'content' | 'object' | 'afterCall';

const isSeparator = (c: string): boolean => c === ';' || c === ' ' || c === '\n' || c === '\t' || c === '\r';

export class Llama3JsonToolStream extends ToolStreamBase {
  private state: State = 'content';
  private region: JsonCallRegion | null = null;
  /** After <|python_tag|> an object is certainly meant as a call: it needs no arguments, and failures are reported. */
  private tagged = false;
  /** `;` and whitespace after a call: dropped when another call follows, content otherwise. */
  private separator = '';

  protected process(s: string, final: boolean): number {
    let i = 0;
    for (;;) {
      switch (this.state) {
        case 'content': {
          const scan = scanToMarker(s, i, [PYTHON_TAG, OBJECT_OPEN], final);
          this.content(scan.text);
          i = scan.next;
          if (scan.marker === null) return i;
          if (scan.marker === PYTHON_TAG) {
            this.tagged = true;
          } else {
            i -= OBJECT_OPEN.length; // the brace belongs to the object
            this.openObject();
          }
          break;
        }
        case 'object': {
          const region = this.region!;
          i = region.feed(s, i);
          if (region.scanner.done) {
            if (region.startWhole()) {
              this.separator = '';
              this.region = null;
              this.state = 'afterCall';
            } else {
              this.giveBack(null);
            }
          } else if (region.scanner.error !== null) {
            this.giveBack(region.scanner.error);
          } else if (i >= s.length) {
            if (final) this.giveBack('the JSON object is incomplete');
            return i;
          }
          break;
        }
        case 'afterCall': {
          const from = i;
          while (i < s.length && isSeparator(s[i]!)) i++;
          this.separator += s.slice(from, i);
          if (i >= s.length) {
            if (final) this.separator = ''; // a trailing separator is formatting, not content
            return i;
          }
          if (s[i] === OBJECT_OPEN) {
            this.openObject();
          } else {
            this.content(this.separator);
            this.separator = '';
            this.state = 'content';
          }
          break;
        }
      }
    }
  }

  private openObject(): void {
    this.region = new JsonCallRegion(this, '', { requireArguments: !this.tagged, deferStart: true });
    this.state = 'object';
  }

  /** The candidate is not a call: its text (and the separator before it) is content; warn only when it looked like one. */
  private giveBack(why: string | null): void {
    const region = this.region!;
    const quiet = !this.tagged && !region.looksLikeCall;
    const raw = region.finish(why, quiet) ?? '';
    this.content(this.separator + raw);
    this.separator = '';
    this.region = null;
    this.state = 'content';
  }
}
