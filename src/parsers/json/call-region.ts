/**
 * A `{"name", "arguments"}` object being read after a tool-call marker. It keeps the raw text while
 * no call has started, so that output which turns out not to be a call can be given back as content.
 */
import { CallBuilder } from '../call-builder.js';
import { preview } from '../preview.js';
import type { CallHost } from '../tool-stream-base.js';
import { CallObjectSink } from './call-object-sink.js';
import { JsonScanner } from './scanner.js';

export class JsonCallRegion {
  readonly call: CallBuilder;
  readonly scanner: JsonScanner;
  private readonly sink: CallObjectSink;
  private raw: string;

  constructor(
    private readonly host: CallHost,
    opening: string,
    options: { requireArguments?: boolean; deferStart?: boolean } = {},
  ) {
    this.call = new CallBuilder(host);
    this.sink = new CallObjectSink(this.call, (m) => host.warn(m), options.requireArguments ?? false, options.deferStart ?? false);
    this.scanner = new JsonScanner(this.sink);
    this.raw = opening;
  }

  /** Feeds s[from..]; returns the first index not consumed (the value ended or the text broke). */
  feed(s: string, from: number): number {
    const end = this.scanner.feed(s, from);
    this.keepRaw(s.slice(from, end));
    this.call.flush();
    if (this.scanner.done && this.call.started) this.call.end();
    return end;
  }

  /** With `deferStart`: the value is complete and is a call; sends it whole (start, all arguments, end). */
  startWhole(): boolean {
    if (!this.scanner.done || !this.sink.isCall) return false;
    this.call.start(this.sink.callName!);
    this.call.end();
    return true;
  }

  /** Whether the object got far enough to look like a call (it has a "name"). */
  get looksLikeCall(): boolean {
    return this.sink.callName !== null;
  }

  /** Text that belongs to the region without being JSON (a closing tag, junk before it). */
  keepRaw(text: string): void {
    if (!this.call.started) this.raw += text;
  }

  /**
   * Ends the region. A named call is closed (recovering cut-off arguments); otherwise the raw text is
   * returned for the caller to emit as content. `why` describes a problem for the warning.
   */
  finish(why: string | null, quiet = false): string | null {
    if (this.scanner.finish() && this.call.started) this.call.end();
    if (this.call.started) {
      if (why) this.host.warn(`tool call "${this.call.name}": ${why}`);
      this.call.end();
      return null;
    }
    const reason = this.sink.notObject ? 'it is not a JSON object' : this.scanner.done ? this.sink.missing : why ?? 'it is incomplete';
    if (!quiet) this.host.warn(`kept a malformed tool call as text (${reason}): ${preview(this.raw)}`);
    return this.raw;
  }
}
