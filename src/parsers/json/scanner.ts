/**
 * An incremental JSON scanner: a pushdown automaton fed arbitrary slices of text. It validates the
 * grammar as it goes and reports structure to a JsonSink, emitting string contents as they arrive
 * (complete escapes only) and numbers and literals once they are terminated. State is the container
 * stack plus the token in progress, so each character is examined once, whatever the chunking.
 *
 * Leniencies (model output is messy): raw control characters inside strings are escaped, trailing
 * commas are accepted, and Python's True/False/None are read as true/false/null.
 */
import type { JsonSink } from './sink.js';

type Expect = 'value' | 'valueOrClose' | 'keyOrClose' | 'colon' | 'commaOrClose';
type Token = 'none' | 'string' | 'key' | 'number' | 'literal';

interface Frame {
  kind: '{' | '[';
  expect: Expect;
}

const NUMBER_RE = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const LITERALS = new Map([
  ['true', 'true'],
  ['false', 'false'],
  ['null', 'null'],
  ['True', 'true'],
  ['False', 'false'],
  ['None', 'null'],
]);
const SIMPLE_ESCAPES = '"\\/bfnrt';

export class JsonScanner {
  private readonly stack: Frame[] = [];
  private topExpect: 'value' | 'done' = 'value';
  private token: Token = 'none';
  private tokenText = '';
  /** Inside a string: 0 normal, 1 after a backslash, 2..5 reading \u hex digits. */
  private escape = 0;
  private escapeText = '';
  private errorMessage: string | null = null;

  constructor(private readonly sink: JsonSink) {}

  /** The top-level value is complete. */
  get done(): boolean {
    return this.topExpect === 'done';
  }
  /** Set when the text is not JSON; the scanner then consumes nothing more. */
  get error(): string | null {
    return this.errorMessage;
  }
  /** Nothing of the value has been seen yet. */
  get started(): boolean {
    return this.stack.length > 0 || this.token !== 'none' || this.topExpect === 'done';
  }

  /**
   * Consumes s[from..] until the top-level value is complete or an error is found; returns the
   * index of the first character not consumed.
   */
  feed(s: string, from: number): number {
    let i = from;
    while (i < s.length && !this.done && this.errorMessage === null) {
      if (this.token === 'string' || this.token === 'key') i = this.stringPart(s, i);
      else if (this.token === 'number' || this.token === 'literal') i = this.wordPart(s, i);
      else i = this.structural(s, i);
    }
    return i;
  }

  /** End of input: a pending number or literal at the top level is complete. Returns `done`. */
  finish(): boolean {
    if ((this.token === 'number' || this.token === 'literal') && this.errorMessage === null) this.endWord();
    return this.done;
  }

  private fail(message: string): void {
    this.errorMessage = message;
  }

  private structural(s: string, i: number): number {
    const c = s[i]!;
    if (c === ' ' || c === '\n' || c === '\t' || c === '\r') return i + 1;
    const frame = this.stack[this.stack.length - 1];
    const expect: Expect = frame ? frame.expect : 'value';
    switch (expect) {
      case 'value':
      case 'valueOrClose':
        if (c === ']' && expect === 'valueOrClose') return this.closeFrame(c, i);
        if (c === ']' && frame?.kind === '[') return this.closeFrame(c, i); // trailing comma
        return this.startValue(c, i);
      case 'keyOrClose':
        if (c === '"') {
          this.token = 'key';
          this.tokenText = '"';
          return i + 1;
        }
        if (c === '}') return this.closeFrame(c, i);
        this.fail(`expected a key or "}" but found ${JSON.stringify(c)}`);
        return i;
      case 'colon':
        if (c === ':') {
          frame!.expect = 'value';
          return i + 1;
        }
        this.fail(`expected ":" but found ${JSON.stringify(c)}`);
        return i;
      case 'commaOrClose':
        if (c === ',') {
          frame!.expect = frame!.kind === '{' ? 'keyOrClose' : 'value';
          return i + 1;
        }
        if ((c === '}' && frame!.kind === '{') || (c === ']' && frame!.kind === '[')) return this.closeFrame(c, i);
        this.fail(`expected "," or a closing bracket but found ${JSON.stringify(c)}`);
        return i;
    }
  }

  private startValue(c: string, i: number): number {
    if (c === '{' || c === '[') {
      this.sink.open(c);
      this.stack.push({ kind: c, expect: c === '{' ? 'keyOrClose' : 'valueOrClose' });
      return i + 1;
    }
    if (c === '"') {
      this.token = 'string';
      this.sink.stringStart();
      return i + 1;
    }
    if (c === '-' || (c >= '0' && c <= '9')) {
      this.token = 'number';
      this.tokenText = '';
      return i;
    }
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      this.token = 'literal';
      this.tokenText = '';
      return i;
    }
    this.fail(`expected a value but found ${JSON.stringify(c)}`);
    return i;
  }

  private closeFrame(c: string, i: number): number {
    this.stack.pop();
    this.sink.close();
    this.afterValue();
    return i + 1;
  }

  private afterValue(): void {
    const frame = this.stack[this.stack.length - 1];
    if (frame) frame.expect = 'commaOrClose';
    else this.topExpect = 'done';
  }

  /** Emits (or, for keys, collects) string text; handles escapes, control characters and the closing quote. */
  private stringPart(s: string, i: number): number {
    const isKey = this.token === 'key';
    if (this.escape > 0) return this.escapePart(s, i, isKey);
    let j = i;
    while (j < s.length) {
      const code = s.charCodeAt(j);
      if (code === 0x22 || code === 0x5c || code < 0x20) break;
      j++;
    }
    if (j > i) this.stringText(s.slice(i, j), isKey);
    if (j === s.length) return j;
    const code = s.charCodeAt(j);
    if (code === 0x22) {
      this.token = 'none';
      if (isKey) {
        this.sink.key(this.tokenText + '"');
        this.tokenText = '';
        this.stack[this.stack.length - 1]!.expect = 'colon';
      } else {
        this.sink.stringEnd();
        this.afterValue();
      }
      return j + 1;
    }
    if (code === 0x5c) {
      this.escape = 1;
      this.escapeText = '\\';
      return j + 1;
    }
    this.stringText(JSON.stringify(s[j]).slice(1, -1), isKey);
    return j + 1;
  }

  private escapePart(s: string, i: number, isKey: boolean): number {
    const c = s[i]!;
    if (this.escape === 1) {
      if (SIMPLE_ESCAPES.includes(c)) {
        this.escape = 0;
        this.stringText('\\' + c, isKey);
      } else if (c === 'u') {
        this.escape = 2;
        this.escapeText = '\\u';
      } else {
        this.fail(`invalid escape "\\${c}" in a string`);
        return i;
      }
      return i + 1;
    }
    if (!/[0-9a-fA-F]/.test(c)) {
      this.fail(`invalid \\u escape in a string`);
      return i;
    }
    this.escapeText += c;
    if (++this.escape === 6) {
      this.escape = 0;
      this.stringText(this.escapeText, isKey);
    }
    return i + 1;
  }

  private stringText(escaped: string, isKey: boolean): void {
    if (isKey) this.tokenText += escaped;
    else this.sink.stringChunk(escaped);
  }

  private wordPart(s: string, i: number): number {
    const isNumber = this.token === 'number';
    let j = i;
    while (j < s.length && (isNumber ? /[0-9+\-.eE]/.test(s[j]!) : /[A-Za-z]/.test(s[j]!))) j++;
    this.tokenText += s.slice(i, j);
    if (j < s.length) this.endWord();
    return j;
  }

  private endWord(): void {
    const text = this.tokenText;
    const isNumber = this.token === 'number';
    this.token = 'none';
    this.tokenText = '';
    if (isNumber) {
      if (!NUMBER_RE.test(text)) return this.fail(`invalid number ${JSON.stringify(text)}`);
      this.sink.value(text);
    } else {
      const literal = LITERALS.get(text);
      if (literal === undefined) return this.fail(`unexpected word ${JSON.stringify(text)}`);
      this.sink.value(literal);
    }
    this.afterValue();
  }
}
