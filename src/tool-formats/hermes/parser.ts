/**
 * hermes: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, repeatable, content around.
 * Arguments stream as the JSON arrives. A broken object keeps its call when it has a name (the
 * arguments are closed where they broke, and the warning quotes the text that could not be read)
 * and otherwise goes back into the content as raw text. The last block may lack `</tool_call>`
 * (models often stop right after the JSON): that is not a problem.
 */
import { JsonCallRegion } from '../../parsers/json/call-region.js';
import { preview } from '../../parsers/preview.js';
import { scanToMarker } from '../../parsers/markers.js';
import { StrayText } from '../../parsers/stray-text.js';
import { ToolStreamBase } from '../../parsers/tool-stream-base.js';
import { CLOSE, OPEN } from './markers.js';


type State = 'content' | 'object' | 'afterObject';

export class HermesToolStream extends ToolStreamBase {
  private state: State = 'content';
  private region: JsonCallRegion | null = null;
  private problem: string | null = null;
  /** Text between the end (or the break) of the JSON and `</tool_call>`. */
  private readonly unread = new StrayText();

  protected process(s: string, final: boolean): number {
    let i = 0;
    for (;;) {
      if (this.state === 'content') {
        const scan = scanToMarker(s, i, [OPEN], final);
        this.content(scan.text);
        i = scan.next;
        if (scan.marker === null) return i;
        this.region = new JsonCallRegion(this, OPEN);
        this.problem = null;
        this.state = 'object';
      } else if (this.state === 'object') {
        const region = this.region!;
        i = region.feed(s, i);
        if (region.scanner.done || region.scanner.error) {
          this.problem = region.scanner.error;
          this.state = 'afterObject';
        } else if (i >= s.length) {
          if (!final) return i;
          this.close('the JSON object was cut off');
          return i;
        }
      } else {
        const scan = scanToMarker(s, i, [CLOSE], final);
        const region = this.region!;
        region.keepRaw(scan.text);
        if (region.call.started) this.unread.add(scan.text);
        i = scan.next;
        if (scan.marker === null) {
          if (!final) return i;
          this.close(this.problem);
          return i;
        }
        region.keepRaw(CLOSE);
        this.close(this.problem);
      }
    }
  }

  private close(problem: string | null): void {
    const unread = this.unread.take();
    let why = problem;
    if (unread !== null) why = `${problem ?? 'unexpected text after the JSON object'}; ignored ${preview(unread)}`;
    const raw = this.region!.finish(why);
    if (raw !== null) this.content(raw);
    this.region = null;
    this.state = 'content';
  }
}
