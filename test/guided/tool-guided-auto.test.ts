/**
 * Tool-guided "auto" (guidedTools) and parallel calls through the public API, on the demo model
 * (qwen3coder, qwen3 reasoning) and on random-weight models with its tokenizer, at temperature 1:
 * every call the parser reports names a declared tool and has ajv-valid arguments; a reply that
 * never writes a trigger is exactly the unguided reply (same seed); guided requests give the same
 * output streamed, batched with unguided ones and preempted under a small cache as alone.
 */
import { copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pipeline, type ChatResult } from '../../src/index.js';
import { createToolParser, registerToolParser } from '../../src/tool-formats/index.js';
import type { ToolDefinition } from '../../src/text/types.js';
import { writeRandomModel } from '../native/random-model.js';

const demoDir = join(import.meta.dirname, '..', '..', 'models', 'weft-demo');
const tools = JSON.parse(readFileSync(join(demoDir, 'tools.json'), 'utf8')) as ToolDefinition[];
const ajv = new Ajv({ strict: false });
const validators = new Map(tools.map((tool) => [tool.function.name, ajv.compile(tool.function.parameters!)]));
const seeds = (n: number, from = 1): number[] => Array.from({ length: n }, (_, i) => from + i);
const QUESTIONS = ['What is 37 times 12.5?', 'What is the weather in Oslo?', 'Convert 3 miles to kilometers.', 'Hi!', 'Tell me a joke.'];
const question = (i: number) => [{ role: 'user' as const, content: QUESTIONS[i % QUESTIONS.length]! }];

/** Every call names a declared tool and validates; a reply cut off by maxTokens may end inside its last call. */
function expectValidCalls(r: ChatResult): void {
  const calls = r.finishReason === 'length' ? r.toolCalls.slice(0, -1) : r.toolCalls;
  for (const call of calls) {
    const validate = validators.get(call.name);
    if (validate === undefined) throw new Error(`undeclared tool "${call.name}" in ${JSON.stringify(r.text)}`);
    if (!validate(call.arguments)) throw new Error(`${call.name}(${JSON.stringify(call.arguments)}) in ${JSON.stringify(r.text)}: ${ajv.errorsText(validate.errors)}`);
  }
}

/** What would make the parser start a call, per format. */
const TRIGGERS: Record<string, RegExp> = { qwen3coder: /<tool_call>|<function=/, hermes: /<tool_call>/, llama3_json: /\{|<\|python_tag\|>/ };

describe('tool-guided auto on the demo model (qwen3coder, qwen3 reasoning)', () => {
  let pipe: Pipeline;
  beforeAll(async () => {
    pipe = await Pipeline.create({ model: demoDir, parsers: { tool: 'qwen3coder', reasoning: 'qwen3' } });
  });
  afterAll(() => pipe.close());

  it('40 seeds: every call is valid; replies that write no trigger are the unguided replies', async () => {
    const options = (seed: number) => ({ tools, temperature: 1, seed, maxTokens: 160 });
    const [guided, plain] = await Promise.all([
      Promise.all(seeds(40).map((seed) => pipe.chat(question(seed), { ...options(seed), guidedTools: true }))),
      Promise.all(seeds(40).map((seed) => pipe.chat(question(seed), options(seed)))),
    ]);
    let untriggered = 0;
    let calls = 0;
    for (let i = 0; i < guided.length; i++) {
      expectValidCalls(guided[i]!);
      calls += guided[i]!.toolCalls.length;
      if (!TRIGGERS.qwen3coder!.test(plain[i]!.text)) {
        untriggered++;
        expect(guided[i]!.text, `seed ${i + 1}`).toBe(plain[i]!.text);
      }
    }
    expect(untriggered).toBeGreaterThanOrEqual(6);
    expect(calls).toBeGreaterThan(12);
  });

  it('gives the same outputs streamed, batched with unguided requests, and under preemption as alone', async () => {
    const guided = seeds(6).map((seed) => ({ seed, options: { tools, guidedTools: true, temperature: 1, seed, maxTokens: 160 } }));
    const alone: ChatResult[] = [];
    for (const { seed, options } of guided) alone.push(await pipe.chat(question(seed), options));
    expect(alone.filter((r) => r.toolCalls.length > 0).length).toBeGreaterThan(0);
    const digest = (r: { reasoning?: string | null; content?: string | null; toolCalls: readonly { name: string; arguments: unknown }[] }) =>
      JSON.stringify([r.reasoning ?? '', r.content ?? '', r.toolCalls.map((c) => [c.name, c.arguments])]);
    const streamed: string[] = [];
    for (const { seed, options } of guided) {
      const parts = { reasoning: '', content: '', toolCalls: [] as { name: string; arguments: unknown }[] };
      for await (const part of pipe.stream(question(seed), options)) {
        if (part.type === 'text-delta') parts.content += part.text;
        else if (part.type === 'reasoning-delta') parts.reasoning += part.text;
        else if (part.type === 'tool-call') parts.toolCalls.push(part);
      }
      streamed.push(digest(parts));
    }
    expect(streamed).toEqual(alone.map(digest));
    const batched = await Promise.all([
      ...guided.map(({ seed, options }) => pipe.chat(question(seed), options)),
      ...seeds(6, 100).map((seed) => pipe.chat(question(seed), { tools, temperature: 1, seed, maxTokens: 120 })),
    ]);
    expect(batched.slice(0, 6).map((r) => r.text)).toEqual(alone.map((r) => r.text));
    // 1.5 MiB of the default f16 cache (1920 bytes a token): about 800 tokens, so requests are preempted.
    const small = await Pipeline.create({ model: demoDir, parsers: { tool: 'qwen3coder', reasoning: 'qwen3' }, kvCache: { size: '1536KiB' } });
    try {
      const squeezed = await Promise.all(guided.map(({ seed, options }) => small.chat(question(seed), options)));
      expect(small.stats().preemptions).toBeGreaterThan(0);
      expect(squeezed.map((r) => r.text)).toEqual(alone.map((r) => r.text));
    } finally {
      await small.close();
    }
  });

  it('is a pipeline default that a request can turn off, and is refused where it cannot guide', async () => {
    const guidedPipe = await Pipeline.create({ model: demoDir, parsers: { tool: 'qwen3coder', reasoning: 'qwen3' }, guidedTools: true });
    try {
      const options = { tools, temperature: 1, seed: 7, maxTokens: 120 };
      expect((await guidedPipe.chat(question(7), options)).text).toBe((await pipe.chat(question(7), { ...options, guidedTools: true })).text);
      expect((await guidedPipe.chat(question(7), { ...options, guidedTools: false })).text).toBe((await pipe.chat(question(7), options)).text);
    } finally {
      await guidedPipe.close();
    }
    // Every built-in tool parser has a grammar; a user's own has none.
    registerToolParser('own_hermes', (options) => createToolParser('hermes', options));
    await expect(pipe.chat(question(0), { tools, guidedTools: true, parsers: { tool: 'own_hermes' } })).rejects.toThrow(/guidedTools: the own_hermes tool parser has no guided grammar/);
    await expect(pipe.chat(question(0), { tools, guidedTools: 'yes' as never })).rejects.toThrow(/guidedTools/);
    await expect(pipe.generate('x', { guidedTools: true } as never)).rejects.toThrow(/only a chat takes it/);
    await expect(pipe.chat(question(0), { tools, guidedTools: true, responseFormat: { type: 'json_object' } })).rejects.toThrow(/guidedTools: cannot guide tool calls and a responseFormat/);
    await expect(Pipeline.create({ model: demoDir, parsers: { tool: 'own_hermes' }, guidedTools: true })).rejects.toThrow(/guidedTools/);
  });
});

describe('tool-guided auto and parallel calls on random-weight models with the demo tokenizer', () => {
  const dirs: string[] = [];
  beforeAll(() => {
    const config = JSON.parse(readFileSync(join(demoDir, 'config.json'), 'utf8')) as Record<string, unknown>;
    for (const seed of [21, 22]) {
      const { dir } = writeRandomModel({ ...config, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, head_dim: 16 }, seed);
      for (const file of ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json']) copyFileSync(join(demoDir, file), join(dir, file));
      dirs.push(dir);
    }
  });
  // Numbers and an enum: a random model closes every value it opens.
  const calculator = tools.filter((tool) => tool.function.name === 'calculator');

  for (const parser of ['qwen3coder', 'hermes', 'llama3_json']) {
    it(`${parser}: auto-guided calls all valid, untriggered replies unchanged, required makes one or more valid calls (2 models x 30 seeds)`, async () => {
      let untriggered = 0;
      let several = 0;
      for (const dir of dirs) {
        const pipe = await Pipeline.create({ model: dir, parsers: { tool: parser } });
        try {
          const options = (seed: number) => ({ tools: calculator, temperature: 1, seed, maxTokens: 80 });
          const [guided, plain, required] = await Promise.all([
            Promise.all(seeds(30).map((seed) => pipe.chat(question(seed), { ...options(seed), guidedTools: true }))),
            Promise.all(seeds(30).map((seed) => pipe.chat(question(seed), options(seed)))),
            Promise.all(seeds(30).map((seed) => pipe.chat(question(seed), { ...options(seed), toolChoice: 'required', maxTokens: 200 }))),
          ]);
          for (let i = 0; i < guided.length; i++) {
            expectValidCalls(guided[i]!);
            if (!TRIGGERS[parser]!.test(plain[i]!.text)) {
              untriggered++;
              expect(guided[i]!.text, `seed ${i + 1}`).toBe(plain[i]!.text);
            }
            const r = required[i]!;
            expect(r.toolCalls.length, r.text).toBeGreaterThan(0);
            if (r.finishReason !== 'length') expect(r.finishReason, r.text).toBe('tool_calls');
            expectValidCalls(r);
            if (r.toolCalls.length > 1) several++;
          }
        } finally {
          await pipe.close();
        }
      }
      expect(untriggered).toBeGreaterThan(parser === 'llama3_json' ? 2 : 30);
      expect(several).toBeGreaterThan(2);
    });
  }
});
