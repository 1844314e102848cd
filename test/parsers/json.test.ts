import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonScanner } from '../../src/parsers/json/scanner.js';
import { JsonWriter } from '../../src/parsers/json/writer.js';
import { splitAt } from './helpers.js';

/** Scans text (in the given pieces) into a writer; returns the writer and scanner. */
function rewrite(pieces: readonly string[]): { writer: JsonWriter; scanner: JsonScanner; rest: string } {
  const writer = new JsonWriter();
  const scanner = new JsonScanner(writer);
  let rest = '';
  for (const piece of pieces) {
    const end = scanner.feed(piece, 0);
    if (end < piece.length || scanner.done || scanner.error) rest += piece.slice(end);
  }
  scanner.finish();
  return { writer, scanner, rest };
}

describe('incremental JSON scanner and writer', () => {
  it('rewrites any JSON value compactly, in any chunking', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.array(fc.nat({ max: 500 }), { maxLength: 20 }), fc.boolean(), (value, cuts, pretty) => {
        const text = JSON.stringify(value, null, pretty ? 2 : undefined);
        const { writer, scanner } = rewrite(splitAt(text, cuts));
        expect(scanner.error).toBeNull();
        expect(scanner.done).toBe(true);
        expect(writer.text).toBe(JSON.stringify(value));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps every prefix completable: written text + completion() is always valid JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.nat(), (value, at) => {
        const text = JSON.stringify(value);
        const cut = text.slice(0, at % (text.length + 1));
        const writer = new JsonWriter();
        const scanner = new JsonScanner(writer);
        scanner.feed(cut, 0);
        if (writer.empty) return; // nothing committed yet (callers write {} then)
        expect(() => JSON.parse(writer.text + writer.completion())).not.toThrow();
      }),
      { numRuns: 500 },
    );
  });

  it('stops right after the value and reports where the rest starts', () => {
    const writer = new JsonWriter();
    const scanner = new JsonScanner(writer);
    const text = '{"a": [1, "}"]} trailing';
    const end = scanner.feed(text, 0);
    expect(scanner.done).toBe(true);
    expect(text.slice(end)).toBe(' trailing');
    expect(writer.text).toBe('{"a":[1,"}"]}');
  });

  it('reports errors without throwing, at the offending character', () => {
    for (const [text, message] of [
      ['{"a" 1}', /expected ":"/],
      ['{"a": tru}', /unexpected word "tru"/],
      ['[1, 2 3]', /expected ","/],
      ['{"a": "\\q"}', /invalid escape/],
      ['{"a": 01}', /invalid number/],
      ['{"a": -}', /invalid number/],
    ] as const) {
      const writer = new JsonWriter();
      const scanner = new JsonScanner(writer);
      scanner.feed(text, 0);
      expect(scanner.error).toMatch(message);
      expect(() => JSON.parse(writer.text + writer.completion())).not.toThrow();
    }
  });

  it('is lenient where models often are: raw newlines, trailing commas, Python literals', () => {
    const { writer, scanner } = rewrite(['{"a": "line1\nline2", "b": [1, 2,], "c": True, "d": None,}']);
    expect(scanner.error).toBeNull();
    expect(JSON.parse(writer.text)).toStrictEqual({ a: 'line1\nline2', b: [1, 2], c: true, d: null });
  });

  it('keeps escapes whole across chunks', () => {
    const text = '"\\u00e9\\n\\"x"';
    for (let k = 0; k <= text.length; k++) {
      const { writer } = rewrite([text.slice(0, k), text.slice(k)]);
      expect(JSON.parse(writer.text)).toBe('é\n"x');
    }
  });
});
