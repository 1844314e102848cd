// Tools, template kwargs and tool-call arguments reach the template as plain JSON data:
// AI-SDK-style tool objects (with execute functions) work; what JSON cannot hold is a typed error.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { InvalidOptionError, Pipeline, type ToolDefinition } from '../../src/index.js';
import { demoModelPath } from '../../src/package-files.js';

let pipe: Pipeline;
beforeAll(async () => {
  pipe = await Pipeline.create({ model: demoModelPath(), kvCache: { size: '8MB' }, threads: 1 });
});
afterAll(async () => {
  await pipe.close();
});
const hi = [{ role: 'user' as const, content: 'hi' }];
const tool = (parameters: unknown, extra: object = {}): ToolDefinition[] => [{ type: 'function', function: { name: 'f', parameters: parameters as ToolDefinition['function']['parameters'] }, ...extra }];

it('a tool object carrying functions renders as the same prompt as its JSON (was DataCloneError)', async () => {
  const plain = await pipe.chat(hi, { maxTokens: 4, tools: tool({ type: 'object' }) });
  const withFns = await pipe.chat(hi, { maxTokens: 4, tools: tool({ type: 'object', refine: () => true }, { execute: async () => 42 }) });
  expect(withFns.text).toBe(plain.text);
  expect(withFns.usage.promptTokens).toBe(plain.usage.promptTokens);
});

it('circular, too deep, bigint and non-finite data are InvalidOptionError naming the place', async () => {
  const circular: Record<string, unknown> = { type: 'object' };
  circular.properties = { self: circular };
  let deep: object = { type: 'object' };
  for (let i = 0; i < 10_000; i++) deep = { type: 'object', properties: { a: deep } }; // used to overflow the stack
  const cases: Array<[object, RegExp]> = [
    [{ tools: tool(circular) }, /tools\[0\]\.function\.parameters\.properties\.self: is circular/],
    [{ tools: tool(deep) }, /nested more than 64 levels/],
    [{ templateKwargs: { n: 1n } }, /templateKwargs\.n: a bigint/],
    [{ templateKwargs: { n: Number.NaN } }, /templateKwargs\.n: NaN is not a JSON number/],
  ];
  for (const [options, message] of cases) {
    const error = await pipe.chat(hi, { maxTokens: 2, ...options }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidOptionError);
    expect((error as Error).message).toMatch(message);
  }
  // The pipeline still serves.
  expect((await pipe.chat(hi, { maxTokens: 2 })).usage.completionTokens).toBe(2);
});
