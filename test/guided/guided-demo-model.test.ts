/**
 * Guided generation through the public API on the demo model (models/weft-demo, in the repo) and on
 * random-weight models with its tokenizer: at temperature 1 over many seeds, constrained outputs
 * always parse and validate; "required" always calls; "none" never does; and a guided request
 * gives the same output batched with others and under preemption as alone.
 */
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pipeline } from '../../src/index.js';
import { createToolParser, registerToolParser } from '../../src/tool-formats/index.js';
import type { ToolDefinition } from '../../src/text/types.js';
import { writeRandomModel } from '../native/random-model.js';

const demoDir = join(import.meta.dirname, '..', '..', 'models', 'weft-demo');
const tools = JSON.parse(readFileSync(join(demoDir, 'tools.json'), 'utf8')) as ToolDefinition[];
const ajv = new Ajv({ strict: false });
const validators = new Map(tools.map((tool) => [tool.function.name, ajv.compile(tool.function.parameters!)]));
const seeds = (n: number, from = 1): number[] => Array.from({ length: n }, (_, i) => from + i);
const question = (i: number) => [{ role: 'user' as const, content: ['What is 37 times 12.5?', 'What is the weather in Oslo?', 'Convert 3 miles to kilometers.', 'Hi!'][i % 4]! }];

/** The schema with maxLength 24 on every string that has no enum. */
function boundStrings(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...schema };
  if (out.type === 'string' && out.enum === undefined) out.maxLength = 24;
  if (out.properties) out.properties = Object.fromEntries(Object.entries(out.properties as Record<string, Record<string, unknown>>).map(([k, v]) => [k, boundStrings(v)]));
  if (out.items) out.items = boundStrings(out.items as Record<string, unknown>);
  return out;
}

function expectValidCalls(calls: readonly { name: string; arguments: Record<string, unknown> }[]): void {
  for (const call of calls) {
    const validate = validators.get(call.name);
    expect(validate, call.name).toBeDefined();
    if (!validate!(call.arguments)) throw new Error(`${call.name}(${JSON.stringify(call.arguments)}): ${ajv.errorsText(validate!.errors)}`);
  }
}

describe('guided generation on the demo model (qwen3coder)', () => {
  let pipe: Pipeline;
  beforeAll(async () => {
    pipe = await Pipeline.create({ model: demoDir, parsers: { tool: 'qwen3coder', reasoning: 'qwen3' } });
  });
  afterAll(() => pipe.close());

  it('toolChoice "required": 120 seeds at temperature 1 all call a tool with schema-valid arguments', async () => {
    const results = await Promise.all(seeds(120).map((seed) => pipe.chat(question(seed), { tools, toolChoice: 'required', temperature: 1, seed, maxTokens: 400 })));
    for (const r of results) {
      expect(r.finishReason, r.text).toBe('tool_calls');
      expect(r.toolCalls.length).toBeGreaterThan(0);
      expectValidCalls(r.toolCalls);
    }
  });

  it('a named tool: 60 seeds all call exactly that tool, even when the question is about another', async () => {
    const results = await Promise.all(
      seeds(60).map((seed) => pipe.chat(question(seed), { tools, toolChoice: { name: 'convert_units' }, temperature: 1, seed, maxTokens: 400 })),
    );
    for (const r of results) {
      expect(r.finishReason, r.text).toBe('tool_calls');
      expect(r.toolCalls.map((c) => c.name)).toEqual(['convert_units']);
      expectValidCalls(r.toolCalls);
    }
  });

  it('toolChoice "none": 120 seeds at temperature 1 never call, where "auto" mostly does', async () => {
    const none = await Promise.all(seeds(120).map((seed) => pipe.chat(question(seed), { tools, toolChoice: 'none', temperature: 1, seed, maxTokens: 300 })));
    for (const r of none) {
      expect(r.toolCalls).toEqual([]);
      expect(r.text).not.toContain('<tool_call>');
      expect(r.text).not.toContain('<function=');
    }
    const auto = await Promise.all(seeds(40).map((seed) => pipe.chat(question(seed * 4), { tools, temperature: 1, seed, maxTokens: 300 })));
    expect(auto.filter((r) => r.toolCalls.length > 0).length).toBeGreaterThan(20);
  });

  it('responseFormat json_schema: 40 seeds per tool schema (strings bounded) all parse and validate', async () => {
    for (const tool of tools) {
      // The demo model never learnt to answer in JSON: inside an unbounded string it may ramble
      // until maxTokens (nothing forces a string to end), so strings get a maxLength here.
      const schema = boundStrings(tool.function.parameters!);
      const validate = ajv.compile(schema);
      const results = await Promise.all(
        seeds(40).map((seed) => pipe.chat(question(seed), { responseFormat: { type: 'json_schema', schema }, temperature: 1, seed, maxTokens: 400 })),
      );
      for (const r of results) {
        expect(r.finishReason, r.text).toBe('stop');
        if (!validate(JSON.parse(r.text))) throw new Error(`${r.text}: ${ajv.errorsText(validate.errors)}`);
      }
    }
  });

  it("the issue's schema (bounded integer, minLength, a date, a nullable bounded number): 30 seeds at temperature 1 all validate", async () => {
    const schema = {
      type: 'object',
      properties: {
        city: { type: 'string', minLength: 1, maxLength: 20 },
        days: { type: 'integer', minimum: 1, maximum: 7 },
        start: { type: 'string', format: 'date' },
        budget: { anyOf: [{ type: 'number', exclusiveMinimum: 0, maximum: 5000 }, { type: 'null' }] },
      },
      required: ['city', 'days', 'start', 'budget'],
      additionalProperties: false,
    };
    const validate = ajv.compile(schema);
    const results = await Promise.all(
      seeds(30).map((seed) => pipe.chat([{ role: 'user', content: 'Plan a trip: JSON with city, days, start date and budget.' }], { responseFormat: { type: 'json_schema', schema }, temperature: 1, seed, maxTokens: 300 })),
    );
    for (const r of results) {
      expect(r.finishReason, r.text).toBe('stop');
      const value = JSON.parse(r.text) as { days: number; start: string };
      if (!validate(value)) throw new Error(`${r.text}: ${ajv.errorsText(validate.errors)}`);
      expect(new Date(`${value.start}T00:00:00Z`).toISOString().slice(0, 10), r.text).toBe(value.start);
    }
  });

  it('responseFormat json_object: the model rambles in its first key until maxTokens, and every request still ends cleanly', async () => {
    // The demo model never learnt to write JSON: inside a free string it puts under 1% of its
    // probability on tokens with a quote, so nothing closes the key (docs/guided.md, json_object).
    const greedy = await pipe.chat(question(3), { responseFormat: { type: 'json_object' }, temperature: 0, maxTokens: 48 });
    expect(greedy.finishReason, greedy.text).toBe('length');
    expect(greedy.usage.completionTokens).toBe(48);
    expect(greedy.text.startsWith('{"'), greedy.text).toBe(true);
    const results = await Promise.all(seeds(20).map((seed) => pipe.chat(question(seed), { responseFormat: { type: 'json_object' }, temperature: 1, seed, maxTokens: 48 })));
    for (const r of results) {
      expect(r.text.startsWith('{'), r.text).toBe(true);
      if (r.finishReason === 'stop') expect(typeof JSON.parse(r.text), r.text).toBe('object');
      else expect([r.finishReason, r.usage.completionTokens], r.text).toEqual(['length', 48]);
    }
    // What to do instead: declare the keys and bound the strings; then the value ends.
    const schema = { type: 'object', properties: { city: { type: 'string', maxLength: 20 }, temperature: { type: 'number' } }, required: ['city', 'temperature'], additionalProperties: false };
    const bounded = await pipe.chat(question(1), { responseFormat: { type: 'json_schema', schema }, temperature: 0, maxTokens: 200 });
    expect(bounded.finishReason, bounded.text).toBe('stop');
    expect(ajv.validate(schema, JSON.parse(bounded.text)), bounded.text).toBe(true);
  });

  it('gives the same guided outputs alone, batched with unguided requests, and under preemption', async () => {
    const guided = seeds(6).map((seed) => ({ seed, options: { tools, toolChoice: 'required' as const, temperature: 1, seed, maxTokens: 300 } }));
    const alone = [];
    for (const { seed, options } of guided) alone.push(await pipe.chat(question(seed), options));
    const batched = await Promise.all([
      ...guided.map(({ seed, options }) => pipe.chat(question(seed), options)),
      ...seeds(6, 100).map((seed) => pipe.chat(question(seed), { tools, temperature: 1, seed, maxTokens: 200 })),
    ]);
    expect(batched.slice(0, 6).map((r) => r.text)).toEqual(alone.map((r) => r.text));
    // A cache that holds about two of these prompts at once (~800 tokens at the default f16's
    // 1920 bytes a token): requests are preempted and recomputed.
    const small = await Pipeline.create({ model: demoDir, parsers: { tool: 'qwen3coder', reasoning: 'qwen3' }, kvCache: { size: '1536KiB' } });
    try {
      const squeezed = await Promise.all(guided.map(({ seed, options }) => small.chat(question(seed), options)));
      expect(small.stats().preemptions).toBeGreaterThan(0);
      expect(squeezed.map((r) => r.text)).toEqual(alone.map((r) => r.text));
    } finally {
      await small.close();
    }
  });

  it('refuses what it cannot guide before the request runs', async () => {
    const started = pipe.stats().requests.started;
    await expect(pipe.chat(question(0), { tools, toolChoice: { name: 'nope' } })).rejects.toThrow(/toolChoice.name: no tool is named "nope"/);
    await expect(pipe.chat(question(0), { toolChoice: 'required' })).rejects.toThrow(/"required" needs tools/);
    // A parser of the user's own has no grammar.
    registerToolParser('users_own', (options) => createToolParser('hermes', options));
    await expect(pipe.chat(question(0), { tools, toolChoice: 'required', parsers: { tool: 'users_own' } })).rejects.toThrow(/users_own tool parser has no guided grammar/);
    await expect(pipe.generate('x', { responseFormat: { type: 'json_schema', schema: { type: 'string', pattern: '(?=a)' } } })).rejects.toThrow(/lookahead/);
    await expect(pipe.generate('x', { responseFormat: { type: 'json_schema', schema: { type: 'string', not: { const: 'a' } } } })).rejects.toThrow(/"not"/);
    await expect(pipe.generate('x', { responseFormat: { type: 'xml' } as never })).rejects.toThrow(/responseFormat.type/);
    await expect(pipe.generate('x', { responseFormat: { type: 'json_object', schema: {} } as never })).rejects.toThrow(/responseFormat/);
    await expect(pipe.generate('x', { toolChoice: 'none' } as never)).rejects.toThrow(/only a chat takes it/);
    expect(pipe.stats().requests.started).toBe(started);
  });
});

describe('guided generation on random-weight models with the demo tokenizer', () => {
  const dirs: string[] = [];
  beforeAll(() => {
    const config = JSON.parse(readFileSync(join(demoDir, 'config.json'), 'utf8')) as Record<string, unknown>;
    for (const seed of [11, 12]) {
      const { dir } = writeRandomModel({ ...config, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, head_dim: 16 }, seed);
      for (const file of ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json']) copyFileSync(join(demoDir, file), join(dir, file));
      dirs.push(dir);
    }
  });

  // Bounded schemas: a random model has no reason to close an unbounded string.
  const calculator = tools.filter((tool) => tool.function.name === 'calculator');
  const schema = {
    type: 'object',
    properties: { ok: { type: 'boolean' }, n: { type: 'integer' }, tags: { type: 'array', maxItems: 3, items: { enum: ['a', 'b'] } }, word: { type: 'string', maxLength: 5 } },
    required: ['ok', 'n', 'word'],
  };
  const validateSchema = ajv.compile(schema);

  for (const parser of ['qwen3coder', 'hermes', 'llama3_json']) {
    it(`${parser}: required calls, none never calls, JSON validates (2 models x 40 seeds)`, async () => {
      for (const dir of dirs) {
        expect(existsSync(dir)).toBe(true);
        const pipe = await Pipeline.create({ model: dir, parsers: { tool: parser } });
        try {
          const required = await Promise.all(seeds(40).map((seed) => pipe.chat(question(seed), { tools: calculator, toolChoice: 'required', parallelToolCalls: false, temperature: 1, seed, maxTokens: 200 })));
          for (const r of required) {
            expect(r.finishReason, r.text).toBe('tool_calls');
            expect(r.toolCalls.length).toBe(1);
            expectValidCalls(r.toolCalls);
          }
          const none = await Promise.all(seeds(40).map((seed) => pipe.chat(question(seed), { tools: calculator, toolChoice: 'none', temperature: 1, seed, maxTokens: 60 })));
          for (const r of none) expect(r.toolCalls).toEqual([]);
          const json = await Promise.all(seeds(40).map((seed) => pipe.generate('x', { responseFormat: { type: 'json_schema', schema }, temperature: 1, seed, maxTokens: 200 })));
          for (const r of json) {
            expect(r.finishReason, r.text).toBe('stop');
            if (!validateSchema(JSON.parse(r.text))) throw new Error(`${r.text}: ${ajv.errorsText(validateSchema.errors)}`);
          }
        } finally {
          await pipe.close();
        }
      }
    });
  }
});
