/**
 * Sequential little-endian reads from a file through a window buffer, with
 * every read checked against the file size first.
 *
 * Invariant: nothing is allocated from a length read out of the file before
 * `need()` has confirmed that many bytes remain, so a lying count can cost at
 * most the file's own size, never more.
 */
import { readSync } from 'node:fs';

const WINDOW = 1 << 20;
/** The longest string a header may hold (chat templates are a few KB; this only stops a lying length). */
export const MAX_STRING_BYTES = 16 << 20;

export class ByteCursor {
  /** Absolute file position of the next read. */
  position = 0;
  readonly #fd: number;
  readonly size: number;
  readonly #fail: (message: string) => never;
  #window = Buffer.alloc(0);
  /** File position of #window[0]. */
  #windowStart = 0;

  constructor(fd: number, size: number, fail: (message: string) => never) {
    this.#fd = fd;
    this.size = size;
    this.#fail = fail;
  }

  get remaining(): number {
    return this.size - this.position;
  }

  /** Fails (truncated file) unless `bytes` more bytes exist; brings them into the window. */
  need(bytes: number, what: string): void {
    if (bytes > this.remaining)
      this.#fail(`truncated: ${what} needs ${bytes} bytes at offset ${this.position}, the file has ${this.remaining} left`);
    const end = this.position + bytes;
    if (this.position >= this.#windowStart && end <= this.#windowStart + this.#window.length) return;
    const length = Math.min(Math.max(bytes, WINDOW), this.remaining);
    const window = Buffer.allocUnsafe(length);
    let read = 0;
    while (read < length) {
      const n = readSync(this.#fd, window, read, length - read, this.position + read);
      if (n === 0) this.#fail(`truncated: the file ended while reading ${what}`);
      read += n;
    }
    this.#window = window;
    this.#windowStart = this.position;
  }

  #at(bytes: number, what: string): number {
    this.need(bytes, what);
    const at = this.position - this.#windowStart;
    this.position += bytes;
    return at;
  }

  u8(what: string): number {
    const at = this.#at(1, what); // first: it may replace the window
    return this.#window.readUInt8(at);
  }
  i8(what: string): number {
    const at = this.#at(1, what); // first: it may replace the window
    return this.#window.readInt8(at);
  }
  u16(what: string): number {
    const at = this.#at(2, what); // first: it may replace the window
    return this.#window.readUInt16LE(at);
  }
  i16(what: string): number {
    const at = this.#at(2, what); // first: it may replace the window
    return this.#window.readInt16LE(at);
  }
  u32(what: string): number {
    const at = this.#at(4, what); // first: it may replace the window
    return this.#window.readUInt32LE(at);
  }
  i32(what: string): number {
    const at = this.#at(4, what); // first: it may replace the window
    return this.#window.readInt32LE(at);
  }
  f32(what: string): number {
    const at = this.#at(4, what); // first: it may replace the window
    return this.#window.readFloatLE(at);
  }
  f64(what: string): number {
    const at = this.#at(8, what); // first: it may replace the window
    return this.#window.readDoubleLE(at);
  }
  u64(what: string): bigint {
    const at = this.#at(8, what); // first: it may replace the window
    return this.#window.readBigUInt64LE(at);
  }
  i64(what: string): bigint {
    const at = this.#at(8, what); // first: it may replace the window
    return this.#window.readBigInt64LE(at);
  }

  /** A uint64 that must fit a JS safe integer (counts, lengths, offsets). */
  safeU64(what: string): number {
    const v = this.u64(what);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) this.#fail(`${what} ${v} is out of range`);
    return Number(v);
  }

  /** GGUF string: uint64 byte length, then UTF-8 bytes (no terminator). */
  string(what: string): string {
    const length = this.safeU64(`${what} length`);
    if (length > MAX_STRING_BYTES) this.#fail(`${what} claims ${length} bytes (limit ${MAX_STRING_BYTES})`);
    const at = this.#at(length, what);
    return this.#window.toString('utf8', at, at + length);
  }
}
