/**
 * A parser for the Python literal subset that models write in pythonic tool calls: strings (all
 * quote styles, prefixes, escapes, implicit concatenation), ints (with _ and 0x/0o/0b), floats,
 * True/False/None (and true/false/null), lists, tuples, dicts and sets. No eval: anything else is
 * an error value, never an exception.
 */

export type PythonLiteralResult = { ok: true; value: unknown } | { ok: false; error: string };

class PythonSyntaxError extends Error {}

const NAMES = new Map<string, unknown>([
  ['True', true],
  ['False', false],
  ['None', null],
  ['true', true],
  ['false', false],
  ['null', null],
]);

const SIMPLE_ESCAPES = new Map([
  ['n', '\n'],
  ['t', '\t'],
  ['r', '\r'],
  ['\\', '\\'],
  ["'", "'"],
  ['"', '"'],
  ['0', '\0'],
  ['a', '\x07'],
  ['b', '\b'],
  ['f', '\f'],
  ['v', '\v'],
  ['\n', ''],
]);

/** Parses `text` as exactly one Python literal (surrounding whitespace allowed). */
export function parsePythonLiteral(text: string): PythonLiteralResult {
  const parser = new LiteralParser(text);
  try {
    const value = parser.value();
    parser.skipSpace();
    if (!parser.atEnd()) throw new PythonSyntaxError(`unexpected ${JSON.stringify(text.slice(parser.pos, parser.pos + 10))}`);
    return { ok: true, value };
  } catch (error) {
    if (error instanceof PythonSyntaxError) return { ok: false, error: error.message };
    if (error instanceof RangeError) return { ok: false, error: 'nesting is too deep' };
    throw error;
  }
}

class LiteralParser {
  pos = 0;
  constructor(private readonly s: string) {}

  atEnd(): boolean {
    return this.pos >= this.s.length;
  }

  skipSpace(): void {
    while (this.pos < this.s.length && /\s/.test(this.s[this.pos]!)) this.pos++;
  }

  private fail(what: string): never {
    throw new PythonSyntaxError(this.atEnd() ? `unexpected end (${what})` : `${what} at ${JSON.stringify(this.s.slice(this.pos, this.pos + 10))}`);
  }

  value(): unknown {
    this.skipSpace();
    const c = this.s[this.pos];
    if (c === undefined) this.fail('expected a value');
    if (c === '[') return this.sequence('[', ']');
    if (c === '(') return this.sequence('(', ')');
    if (c === '{') return this.braces();
    if (c === '"' || c === "'") return this.strings();
    if (/[0-9.+-]/.test(c)) return this.number();
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.s.slice(this.pos, this.pos + 64))?.[0];
    if (word !== undefined) {
      const next = this.s[this.pos + word.length];
      if (/^[rRbBuUfF]{1,2}$/.test(word) && (next === '"' || next === "'")) return this.strings();
      if (NAMES.has(word)) {
        this.pos += word.length;
        return NAMES.get(word);
      }
    }
    return this.fail('expected a literal');
  }

  private sequence(open: string, close: string): unknown[] {
    this.pos++;
    const items: unknown[] = [];
    for (;;) {
      this.skipSpace();
      if (this.s[this.pos] === close) {
        this.pos++;
        return items;
      }
      items.push(this.value());
      this.skipSpace();
      if (this.s[this.pos] === ',') this.pos++;
      else if (this.s[this.pos] !== close) this.fail(`expected "," or "${close}" after an item of "${open}"`);
    }
  }

  /** A dict, or a set (read as a list). */
  private braces(): unknown {
    this.pos++;
    this.skipSpace();
    if (this.s[this.pos] === '}') {
      this.pos++;
      return {};
    }
    const first = this.value();
    this.skipSpace();
    if (this.s[this.pos] === ',') {
      this.pos++;
      return [first, ...this.restOfSet()];
    }
    if (this.s[this.pos] === '}') {
      this.pos++;
      return [first];
    }
    if (this.s[this.pos] !== ':') this.fail('expected ":" in a dict');
    const dict: Record<string, unknown> = {};
    let key: unknown = first;
    for (;;) {
      this.pos++; // the ':'
      // defineProperty: a "__proto__" key must stay an ordinary key.
      Object.defineProperty(dict, typeof key === 'string' ? key : JSON.stringify(key), {
        value: this.value(),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      this.skipSpace();
      if (this.s[this.pos] === ',') {
        this.pos++;
        this.skipSpace();
      }
      if (this.s[this.pos] === '}') {
        this.pos++;
        return dict;
      }
      key = this.value();
      this.skipSpace();
      if (this.s[this.pos] !== ':') this.fail('expected ":" in a dict');
    }
  }

  private restOfSet(): unknown[] {
    const items: unknown[] = [];
    for (;;) {
      this.skipSpace();
      if (this.s[this.pos] === '}') {
        this.pos++;
        return items;
      }
      items.push(this.value());
      this.skipSpace();
      if (this.s[this.pos] === ',') this.pos++;
      else if (this.s[this.pos] !== '}') this.fail('expected "," or "}" in a set');
    }
  }

  /** One or more adjacent string literals, concatenated. */
  private strings(): string {
    let text = this.string();
    for (;;) {
      const save = this.pos;
      this.skipSpace();
      const c = this.s[this.pos];
      if (c === '"' || c === "'" || (c !== undefined && /[rRbBuUfF]/.test(c) && /^[rRbBuUfF]{1,2}["']/.test(this.s.slice(this.pos, this.pos + 3)))) {
        text += this.string();
      } else {
        this.pos = save;
        return text;
      }
    }
  }

  private string(): string {
    let raw = false;
    while (/[rRbBuUfF]/.test(this.s[this.pos]!)) {
      if (/[rR]/.test(this.s[this.pos]!)) raw = true;
      this.pos++;
    }
    const quote = this.s[this.pos]!;
    const triple = this.s.startsWith(quote.repeat(3), this.pos);
    const closer = triple ? quote.repeat(3) : quote;
    this.pos += closer.length;
    let out = '';
    for (;;) {
      if (this.atEnd()) this.fail('unterminated string');
      if (this.s.startsWith(closer, this.pos)) {
        this.pos += closer.length;
        return out;
      }
      const c = this.s[this.pos]!;
      if (c === '\n' && !triple) this.fail('newline in a string');
      if (c === '\\' && !raw) {
        out += this.escape();
        continue;
      }
      if (c === '\\' && raw && this.pos + 1 < this.s.length) {
        out += c + this.s[this.pos + 1]!;
        this.pos += 2;
        continue;
      }
      out += c;
      this.pos++;
    }
  }

  private escape(): string {
    const c = this.s[this.pos + 1];
    if (c === undefined) this.fail('unterminated escape');
    const simple = SIMPLE_ESCAPES.get(c);
    if (simple !== undefined) {
      this.pos += 2;
      return simple;
    }
    const hexLength = c === 'x' ? 2 : c === 'u' ? 4 : c === 'U' ? 8 : 0;
    if (hexLength > 0) {
      const hex = this.s.slice(this.pos + 2, this.pos + 2 + hexLength);
      if (hex.length !== hexLength || !/^[0-9a-fA-F]+$/.test(hex)) this.fail('bad hex escape');
      const code = parseInt(hex, 16);
      if (code > 0x10ffff) this.fail('bad code point');
      this.pos += 2 + hexLength;
      return String.fromCodePoint(code);
    }
    // Python keeps unknown escapes as they are.
    this.pos += 2;
    return '\\' + c;
  }

  private number(): number {
    const match = /^[+-]?(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)/.exec(
      this.s.slice(this.pos, this.pos + 400),
    );
    if (!match || !/\d/.test(match[0])) return this.fail('expected a number');
    const text = match[0].replaceAll('_', '');
    this.pos += match[0].length;
    const sign = text.startsWith('-') ? -1 : 1;
    const body = text.replace(/^[+-]/, '');
    const prefixed = /^0[xXoObB]/.test(body);
    const value = prefixed ? sign * Number(body.toLowerCase()) : Number(text);
    if (!Number.isFinite(value)) return this.fail('number out of range');
    if (/^[jJ]/.test(this.s[this.pos] ?? '')) return this.fail('complex numbers are not supported');
    return value;
  }
}
