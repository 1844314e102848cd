/**
 * One tool call under construction: its arguments are written as JSON by a JsonWriter and sent as
 * deltas once the call has a name. Until then they are buffered, so a format that names the
 * function after its arguments still yields start -> deltas -> end.
 */
import { JsonWriter } from './json/writer.js';
import type { CallHost } from './tool-stream-base.js';

export class CallBuilder {
  readonly writer = new JsonWriter();
  private index = -1;
  private ended = false;
  name: string | null = null;

  constructor(private readonly host: CallHost) {}

  get started(): boolean {
    return this.index >= 0;
  }

  start(name: string): void {
    if (this.started) return;
    this.name = name;
    this.index = this.host.startCall(name);
    this.flush();
  }

  /** Sends the argument text written since the last flush (only once the call has started). */
  flush(): void {
    if (!this.started) return;
    const piece = this.writer.drain();
    if (piece.length > 0) this.host.callDelta(this.index, piece);
  }

  /** Closes the arguments (recovering cut-off JSON) and emits tool-call-end. Idempotent. */
  end(): void {
    if (!this.started || this.ended) return;
    this.ended = true;
    if (this.writer.empty) {
      this.writer.open('{');
      this.writer.close();
    } else if (!this.writer.complete) {
      this.host.warn(`tool call "${this.name}": its arguments were cut off and have been closed`);
      this.writer.closeAll();
    }
    this.flush();
    let args: unknown;
    try {
      args = JSON.parse(this.writer.text);
    } catch {
      args = undefined;
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      // Cannot happen with the writer's invariants; kept so a bug degrades to a warning, not a throw.
      this.host.warn(`tool call "${this.name}": arguments are not a JSON object`);
      args = {};
    }
    this.host.endCall(this.index, args as Record<string, unknown>);
  }
}
