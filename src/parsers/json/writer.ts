/**
 * Builds compact JSON text from JsonSink events and hands it out in pieces (drain). Because the
 * scanners only report complete escapes, numbers and literals, everything written so far is always
 * a prefix of valid JSON, and `completion()` is the shortest text that closes it. That is how a
 * tool call cut off mid-arguments is recovered without ever contradicting the deltas already sent.
 */
import type { JsonSink } from './sink.js';

const CHUNK = 1024;

interface Frame {
  kind: '{' | '[';
  count: number;
  /** Object only: a key was written and its value has not started. */
  awaitingValue: boolean;
}

export class JsonWriter implements JsonSink {
  private readonly stack: Frame[] = [];
  /**
   * Everything written, as flat strings of up to CHUNK pieces each plus the pieces since. Appending
   * one-character pieces to a single string would build a rope as deep as the arguments are long,
   * whose nodes the garbage collector walks again at every major collection.
   */
  private chunks: string[] = [];
  private recent: string[] = [];
  private written = 0;
  private pending = '';
  private inString = false;
  private finished = false;

  /** All text written so far. */
  get text(): string {
    if (this.recent.length > 0) this.seal();
    if (this.chunks.length > 1) this.chunks = [this.chunks.join('')];
    return this.chunks[0] ?? '';
  }
  /** A complete top-level value has been written. */
  get complete(): boolean {
    return this.finished;
  }
  get empty(): boolean {
    return this.written === 0;
  }

  /** Text written since the last drain. */
  drain(): string {
    const piece = this.pending;
    this.pending = '';
    return piece;
  }

  /** Closes whatever is open (string, key without value, containers). */
  closeAll(): void {
    this.write(this.completion());
    this.stack.length = 0;
    this.inString = false;
    this.finished = true;
  }

  completion(): string {
    let text = this.inString ? '"' : '';
    for (let k = this.stack.length - 1; k >= 0; k--) {
      const frame = this.stack[k]!;
      if (frame.awaitingValue) text += 'null';
      text += frame.kind === '{' ? '}' : ']';
    }
    return text;
  }

  open(kind: '{' | '['): void {
    this.beforeValue();
    this.write(kind);
    this.stack.push({ kind, count: 0, awaitingValue: false });
  }

  close(): void {
    const frame = this.stack.pop();
    if (!frame) return;
    if (frame.awaitingValue) this.write('null');
    this.write(frame.kind === '{' ? '}' : ']');
    this.afterValue();
  }

  key(jsonString: string): void {
    const frame = this.stack[this.stack.length - 1];
    if (!frame || frame.kind !== '{') return;
    if (frame.awaitingValue) this.write('null');
    this.write((frame.count++ > 0 ? ',' : '') + jsonString + ':');
    frame.awaitingValue = true;
  }

  stringStart(): void {
    this.beforeValue();
    this.write('"');
    this.inString = true;
  }

  stringChunk(escaped: string): void {
    if (this.inString) this.write(escaped);
  }

  stringEnd(): void {
    if (!this.inString) return;
    this.write('"');
    this.inString = false;
    this.afterValue();
  }

  value(json: string): void {
    this.beforeValue();
    this.write(json);
    this.afterValue();
  }

  private beforeValue(): void {
    const frame = this.stack[this.stack.length - 1];
    if (!frame) return;
    if (frame.kind === '[') {
      if (frame.count++ > 0) this.write(',');
    } else if (frame.awaitingValue) {
      frame.awaitingValue = false;
    } else {
      // A value without a key (malformed input): give it an empty key rather than break the JSON.
      this.write((frame.count++ > 0 ? ',' : '') + '"":');
    }
  }

  private afterValue(): void {
    if (this.stack.length === 0) this.finished = true;
  }

  private write(text: string): void {
    this.recent.push(text);
    if (this.recent.length >= CHUNK) this.seal();
    this.written += text.length;
    this.pending += text;
  }

  private seal(): void {
    this.chunks.push(this.recent.join(''));
    this.recent = [];
  }
}
