/**
 * llama3_json: the message is tool calls when it starts with `{` (after whitespace) or when a
 * `<|python_tag|>` appears; then `{"name": ..., "parameters"|"arguments": {...}}` objects follow,
 * separated by `;`. An object without a name (say, a JSON answer) is content, and so is any text
 * after the last object. Without the tag, an object is a call only when it has both "name" and
 * "parameters"/"arguments", so that an answer like `{"name": "Alice", "age": 3}` stays content.
 */
import { JsonCallRegion } from '../json/call-region.js';
import { scanToMarker, skipWhitespace, startsWithWord } from '../markers.js';
import { ToolStreamBase } from '../tool-stream-base.js';

const PYTHON_TAG = '<|python_tag|>';

type State = 'start' | 'content' | 'expectObject' | 'object' | 'afterObject';

export class Llama3JsonToolStream extends ToolStreamBase {
  private state: State = 'start';
  private region: JsonCallRegion | null = null;
  /** Calls behind <|python_tag|> are certain; a bare JSON object must also have arguments to be one. */
  private tagged = false;

  protected process(s: string, final: boolean): number {
    let i = 0;
    for (;;) {
      switch (this.state) {
        case 'start': {
          const j = skipWhitespace(s, i);
          this.content(s.slice(i, j));
          i = j;
          if (i >= s.length) return i;
          const tag = startsWithWord(s, i, PYTHON_TAG);
          if (tag === 'maybe' && !final) return i;
          if (tag === 'yes') {
            i += PYTHON_TAG.length;
            this.tagged = true;
            this.state = 'expectObject';
          } else {
            this.state = s[i] === '{' ? 'expectObject' : 'content';
          }
          break;
        }
        case 'content': {
          const scan = scanToMarker(s, i, [PYTHON_TAG], final);
          this.content(scan.text);
          i = scan.next;
          if (scan.marker === null) return i;
          this.tagged = true;
          this.state = 'expectObject';
          break;
        }
        case 'expectObject': {
          i = skipWhitespace(s, i);
          if (i >= s.length) return i;
          if (s[i] === '{') {
            this.region = new JsonCallRegion(this, '', { requireArguments: !this.tagged });
            this.state = 'object';
          } else {
            this.state = 'content';
          }
          break;
        }
        case 'object': {
          const region = this.region!;
          i = region.feed(s, i);
          if (region.scanner.done) {
            this.close(null);
            this.state = 'afterObject';
          } else if (region.scanner.error !== null) {
            this.close(region.scanner.error);
            this.state = 'content';
          } else if (i >= s.length) {
            if (final) this.close('the JSON object is incomplete');
            return i;
          }
          break;
        }
        case 'afterObject': {
          const j = skipWhitespace(s, i);
          this.content(s.slice(i, j));
          i = j;
          if (i >= s.length) return i;
          if (s[i] === ';') {
            i++;
            this.state = 'expectObject';
          } else {
            this.state = 'content';
          }
          break;
        }
      }
    }
  }

  private close(why: string | null): void {
    const raw = this.region!.finish(why);
    if (raw !== null) this.content(raw);
    this.region = null;
  }
}
