/**
 * Round trips: random argument objects are written in each format's syntax (as a model would),
 * then parsed in random chunks; the calls must come back exactly.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collectEvents } from '../../src/parsers/index.js';
import { createToolParser } from '../../src/tool-formats/index.js';
import type { JsonSchema, ToolDefinition } from '../../src/text/types.js';
import { checkEventContract, runStream, splitAt } from './helpers.js';

const RUNS = Number(process.env.WEFT_FUZZ_RUNS ?? 150);

const identifier = fc.stringMatching(/^[a-z_][a-z0-9_]{0,11}$/);
const argsArb = fc.dictionary(identifier, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 });
const cuts = fc.array(fc.nat({ max: 2000 }), { maxLength: 16 });

/** JSON round trip: what the arguments are once written as JSON text (-0 becomes 0, and so on). */
const normalised = (value: unknown) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>;

/** A Python literal for a JSON value (what a pythonic model writes). */
function py(value: unknown): string {
  if (value === null) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return JSON.stringify(value);
  if (typeof value === 'string') {
    let out = "'";
    for (const ch of value) {
      const code = ch.codePointAt(0)!;
      if (ch === '\\' || ch === "'") out += '\\' + ch;
      else if (code < 0x20 || code === 0x7f) out += '\\x' + code.toString(16).padStart(2, '0');
      else if (code >= 0xd800 && code <= 0xdfff) out += '\\u' + code.toString(16);
      else out += ch;
    }
    return out + "'";
  }
  if (Array.isArray(value)) return '[' + value.map(py).join(', ') + ']';
  return '{' + Object.entries(value as object).map(([k, v]) => `${py(k)}: ${py(v)}`).join(', ') + '}';
}

function expectRoundTrip(parserName: string, text: string, name: string, args: Record<string, unknown>, pieces: number[], tools?: ToolDefinition[]) {
  const parser = createToolParser(parserName, tools ? { tools } : {});
  const parsed = parser.parse(text);
  expect(parsed.toolCalls).toStrictEqual([{ id: 'call_0', name, arguments: args }]);
  expect(parsed.warnings).toStrictEqual([]);
  const events = runStream(parser.stream(), splitAt(text, pieces));
  expect(checkEventContract(events)).toStrictEqual(parsed.toolCalls);
  expect(collectEvents(events).content).toBe(parsed.content);
}

const jsonFormats: [string, (name: string, args: Record<string, unknown>) => string][] = [
  ['hermes', (name, args) => `Sure.\n<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`],
  ['hermes', (name, args) => `<tool_call>${JSON.stringify({ arguments: args, name }, null, 2)}</tool_call>`],
  ['llama3_json', (name, args) => `<|python_tag|>${JSON.stringify({ name, parameters: args })}`],
  ['mistral', (name, args) => `[TOOL_CALLS]${name}[ARGS]${JSON.stringify(args)}`],
  ['mistral', (name, args) => `[TOOL_CALLS] [${JSON.stringify({ name, arguments: args }, null, 1)}]`],
  [
    'deepseek_v3',
    (name, args) =>
      `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>${name}\n\`\`\`json\n${JSON.stringify(args)}\n\`\`\`<｜tool▁call▁end｜><｜tool▁calls▁end｜>`,
  ],
  ['pythonic', (name, args) => `[${name}(${Object.entries(args).map(([k, v]) => `${k}=${py(v)}`).join(', ')})]`],
];

describe('round trips of random arguments', () => {
  jsonFormats.forEach(([parserName, write], k) => {
    it(`${parserName} #${k}`, () => {
      fc.assert(
        fc.property(identifier, argsArb, cuts, (name, args, pieces) => {
          expectRoundTrip(parserName, write(name, args), name, normalised(args), pieces);
        }),
        { numRuns: RUNS },
      );
    });
  });

  it('qwen3coder, values typed by a schema made for them', () => {
    const TAGS = /<\/?parameter|<\/?function|<\/?tool_call/;
    const value = fc.oneof(
      fc.string({ unit: 'grapheme' }).filter((s) => !TAGS.test(s)).map((v) => ({ type: 'string', v })),
      fc.integer().map((v) => ({ type: 'integer', v })),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((v) => ({ type: 'number', v: v === 0 ? 0 : v })),
      fc.boolean().map((v) => ({ type: 'boolean', v })),
      fc.dictionary(identifier, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }).map((v) => ({ type: 'object', v })),
      fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }).map((v) => ({ type: 'array', v })),
    );
    fc.assert(
      fc.property(identifier, fc.dictionary(identifier, value, { maxKeys: 5 }), cuts, (name, typed, pieces) => {
        const properties: Record<string, JsonSchema> = {};
        const args: Record<string, unknown> = {};
        let text = '<tool_call>\n<function=' + name + '>\n';
        for (const [key, { type, v }] of Object.entries(typed)) {
          properties[key] = { type };
          args[key] = v;
          text += `<parameter=${key}>\n${typeof v === 'string' ? v : JSON.stringify(v)}\n</parameter>\n`;
        }
        text += '</function>\n</tool_call>';
        const tools: ToolDefinition[] = [{ type: 'function', function: { name, parameters: { type: 'object', properties } } }];
        expectRoundTrip('qwen3coder', text, name, normalised(args), pieces, tools);
      }),
      { numRuns: RUNS },
    );
  });
});
