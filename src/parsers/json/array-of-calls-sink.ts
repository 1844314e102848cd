/**
 * Routes a JSON array of call objects (`[{"name": ..., "arguments": ...}, ...]`, mistral before
 * v11) to one CallBuilder per element. Elements without a name are dropped with a warning: inside
 * a `[TOOL_CALLS]` array there is no content to give them back to.
 */
import { CallBuilder } from '../call-builder.js';
import type { CallHost } from '../tool-stream-base.js';
import { CallObjectSink } from './call-object-sink.js';
import type { JsonSink } from './sink.js';

export class ArrayOfCallsSink implements JsonSink {
  private depth = 0;
  private current: { call: CallBuilder; sink: CallObjectSink } | null = null;
  notArray = false;
  private finishedACall = false;

  constructor(private readonly host: CallHost) {}

  /** The call being read, if any (to flush its deltas or close it when the input ends). */
  get currentCall(): CallBuilder | null {
    return this.current?.call ?? null;
  }

  /** Some element has started a call (so its events were sent and the array cannot become content). */
  get anyCallStarted(): boolean {
    return this.finishedACall || (this.current?.call.started ?? false);
  }

  open(kind: '{' | '['): void {
    if (this.depth === 0) this.notArray = kind !== '[';
    else if (this.depth === 1 && kind === '{') {
      const call = new CallBuilder(this.host);
      this.current = { call, sink: new CallObjectSink(call, (m) => this.host.warn(m)) };
    } else if (this.depth === 1) {
      this.host.warn('a [TOOL_CALLS] array element is not an object; dropped');
    }
    if (this.depth >= 1) this.current?.sink.open(kind);
    this.depth++;
  }

  close(): void {
    this.depth--;
    if (this.depth >= 1) this.current?.sink.close();
    if (this.depth === 1 && this.current) this.finishElement();
  }

  key(jsonString: string): void {
    if (this.depth >= 2) this.current?.sink.key(jsonString);
  }
  stringStart(): void {
    if (this.depth >= 2) this.current?.sink.stringStart();
    else this.notElement();
  }
  stringChunk(escaped: string): void {
    if (this.depth >= 2) this.current?.sink.stringChunk(escaped);
  }
  stringEnd(): void {
    if (this.depth >= 2) this.current?.sink.stringEnd();
  }
  value(json: string): void {
    if (this.depth >= 2) this.current?.sink.value(json);
    else this.notElement();
  }

  private notElement(): void {
    if (this.depth === 0) this.notArray = true;
    else this.host.warn('a [TOOL_CALLS] array element is not an object; dropped');
  }

  /** Ends the element being read (also used when the input stops inside it). */
  finishElement(): void {
    const current = this.current;
    this.current = null;
    if (!current) return;
    if (current.call.started) {
      current.call.end();
      this.finishedACall = true;
    }
    else this.host.warn('dropped a [TOOL_CALLS] array element without a "name"');
  }
}
