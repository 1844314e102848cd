import { describe, expect, it } from 'vitest';
import { parsePythonLiteral } from '../../src/parsers/python-literal.js';

describe('Python literal parser', () => {
  it.each([
    [`"a" 'b'`, 'ab'],
    [`[1, 2.5, -3, 0x1F, 0o17, 0b101, 1_000, 1e3, True, False, None]`, [1, 2.5, -3, 31, 15, 5, 1000, 1000, true, false, null]],
    [`{'a': (1, 2,), "b": {"c": [ ]}}`, { a: [1, 2], b: { c: [] } }],
    [`'''tri"ple\nline'''`, 'tri"ple\nline'],
    [`r'\\d+\\n'`, '\\d+\\n'],
    [`"\\u00e9\\x41\\n\\t\\\\"`, 'éA\n\t\\'],
    [`{1, 2}`, [1, 2]],
    [`{1: 'x', 'y': {}}`, { 1: 'x', y: {} }],
    [`'it\\'s'`, "it's"],
    [`-.5`, -0.5],
    [`()`, []],
    [`{"__proto__": 1}`, JSON.parse('{"__proto__": 1}')],
  ])('%s', (text, value) => {
    expect(parsePythonLiteral(text)).toStrictEqual({ ok: true, value });
  });

  it.each([`foo`, `'unterminated`, `1j`, `[1, 2`, `{'a' 1}`, `os.system('x')`, `1 2`, `"\\x4"`])('rejects %s without throwing', (text) => {
    const result = parsePythonLiteral(text);
    expect(result.ok).toBe(false);
  });

  it('survives very deep nesting', () => {
    expect(parsePythonLiteral('['.repeat(100_000) + ']'.repeat(100_000)).ok).toBe(false);
  });
});
