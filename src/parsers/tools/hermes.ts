/**
 * hermes: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, repeatable, content around.
 * Arguments stream as the JSON arrives. A broken object keeps its call when it has a name (the
 * arguments are closed where they broke) and otherwise goes back into the content as raw text.
 */
import { JsonCallRegion } from '../json/call-region.js';
import { scanToMarker } from '../markers.js';
import { ToolStreamBase } from '../tool-stream-base.js';

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';

type State = 'content' | 'object' | 'afterObject';

export class HermesToolStream extends ToolStreamBase {
  private state: State = 'content';
  private region: JsonCallRegion | null = null;
  private problem: string | null = null;

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
          this.close(`missing ${CLOSE}`);
          return i;
        }
      } else {
        const scan = scanToMarker(s, i, [CLOSE], final);
        const region = this.region!;
        region.keepRaw(scan.text);
        if (scan.text.trim().length > 0 && region.call.started && this.problem === null) {
          this.problem = `unexpected text after the JSON object`;
        }
        i = scan.next;
        if (scan.marker === null) {
          if (!final) return i;
          this.close(this.problem ?? `missing ${CLOSE}`);
          return i;
        }
        region.keepRaw(CLOSE);
        this.close(this.problem);
      }
    }
  }

  private close(why: string | null): void {
    const raw = this.region!.finish(why);
    if (raw !== null) this.content(raw);
    this.region = null;
    this.state = 'content';
  }
}
