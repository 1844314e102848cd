/**
 * mistral, pythonic and deepseek_v3 guided through the public API on random-weight models whose
 * tokenizer (the demo one plus the formats' markers as added tokens) has the formats' special
 * tokens: at temperature 1 over many seeds, "required" always yields one call to a declared tool
 * with ajv-valid arguments, a named tool is always that one, and "none" never calls.
 *
 * Two tokenizers: "v11" has mistral's `[TOOL_CALLS]`, `[ARGS]`, `[CALL_ID]` and Llama 4's python
 * tags as special tokens and DeepSeek's markers as plain added tokens (text with `▁` in a
 * byte-level vocabulary); "v3" has only `[TOOL_CALLS]` (mistral before v11) and DeepSeek's
 * markers as special tokens.
 */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Vocabulary } from '../../src/guided/vocabulary.js';
import { Pipeline } from '../../src/index.js';
import { loadText } from '../../src/text/load-text.js';
import type { ToolDefinition } from '../../src/text/types.js';
import { writeRandomModel } from '../native/random-model.js';

const demoDir = join(import.meta.dirname, '..', '..', 'models', 'weft-demo');
const DEEPSEEK = ['<｜tool▁calls▁begin｜>', '<｜tool▁calls▁end｜>', '<｜tool▁call▁begin｜>', '<｜tool▁call▁end｜>', '<｜tool▁sep｜>'];
const TOKENIZERS: Record<string, { content: string; special: boolean }[]> = {
  v11: [
    ...['[TOOL_CALLS]', '[ARGS]', '[CALL_ID]', '<|python_start|>', '<|python_end|>'].map((content) => ({ content, special: true })),
    ...DEEPSEEK.map((content) => ({ content, special: false })),
  ],
  v3: [{ content: '[TOOL_CALLS]', special: true }, ...DEEPSEEK.map((content) => ({ content, special: true }))],
};

const tools: ToolDefinition[] = [
  {
    type: 'function',
    function: {
      name: 'calculator',
      parameters: { type: 'object', properties: { operation: { type: 'string', enum: ['add', 'multiply'] }, a: { type: 'number' }, b: { type: 'number' } }, required: ['operation', 'a', 'b'] },
    },
  },
  {
    type: 'function',
    function: {
      name: 'note',
      parameters: {
        type: 'object',
        properties: { text: { type: 'string', maxLength: 6 }, done: { type: 'boolean' }, tags: { type: 'array', maxItems: 2, items: { enum: ['a', null] } }, at: { type: ['integer', 'null'] } },
        required: ['text'],
      },
    },
  },
];
const ajv = new Ajv({ strict: false });
const validators = new Map(tools.map((t) => [t.function.name, ajv.compile(t.function.parameters!)]));
const seeds = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);
const question = (i: number) => [{ role: 'user' as const, content: ['Add 2 and 3.', 'Take a note.', 'Hi!'][i % 3]! }];
/** What starts a call in each format's raw text (none may write none of it). */
const STARTS: Record<string, RegExp> = { mistral: /\[TOOL_CALLS\]/, pythonic: /^\s*\[|<\|python_start\|>/, deepseek_v3: /<｜tool▁calls?▁begin｜>/ };

describe('mistral, pythonic and deepseek_v3 guided on random-weight models with their special tokens', () => {
  const dirs = new Map<string, string>();
  beforeAll(() => {
    const config = JSON.parse(readFileSync(join(demoDir, 'config.json'), 'utf8')) as Record<string, unknown>;
    const tokenizer = JSON.parse(readFileSync(join(demoDir, 'tokenizer.json'), 'utf8')) as { added_tokens: { id: number; content: string; special: boolean }[] };
    let seed = 21;
    for (const [name, added] of Object.entries(TOKENIZERS)) {
      const { dir } = writeRandomModel({ ...config, hidden_size: 64, intermediate_size: 128, num_hidden_layers: 2, head_dim: 16 }, seed++);
      const first = Math.max(...tokenizer.added_tokens.map((t) => t.id)) + 1;
      const extended = {
        ...tokenizer,
        added_tokens: [...tokenizer.added_tokens, ...added.map((t, i) => ({ id: first + i, content: t.content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: t.special }))],
      };
      writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(extended));
      for (const file of ['tokenizer_config.json', 'generation_config.json']) copyFileSync(join(demoDir, file), join(dir, file));
      dirs.set(name, dir);
    }
  });

  it('their vocabularies: byte-level despite the `▁` in DeepSeek markers, special tokens without bytes', async () => {
    const encoder = new TextEncoder();
    for (const [name, added] of Object.entries(TOKENIZERS)) {
      const { tokenizer } = await loadText(dirs.get(name)!);
      const vocab = Vocabulary.fromTokenizer(tokenizer, 1536);
      const space = tokenizer.encode(' a', { addSpecialTokens: false })[0]!;
      expect(vocab.tokenBytes[space]![0], name).toBe(0x20);
      for (const { content, special } of added) {
        const id = tokenizer.tokenToId(content)!;
        expect(vocab.tokenBytes[id], content).toEqual(special ? null : encoder.encode(content));
      }
    }
  });

  for (const format of ['mistral', 'pythonic', 'deepseek_v3']) {
    for (const tokenizer of Object.keys(TOKENIZERS)) {
      describe(`${format}, ${tokenizer} tokenizer`, () => {
        let pipe: Pipeline;
        beforeAll(async () => {
          // No reasoning parser: a random model that opens <think> rarely closes it (the grammar tests cover reasoning).
          pipe = await Pipeline.create({ model: dirs.get(tokenizer)!, parsers: { tool: format } });
        });
        afterAll(() => pipe?.close());

        // Without parallel calls: a model that never learnt the format does not end a reply after a call (parallel calls are tested on grammars).
        it('required: 30 seeds all make one call to a declared tool with valid arguments; named: 15 seeds call that one', async () => {
          const [required, named] = await Promise.all([
            Promise.all(seeds(30).map((seed) => pipe.chat(question(seed), { tools, toolChoice: 'required', parallelToolCalls: false, temperature: 1, seed, maxTokens: 200 }))),
            Promise.all(seeds(15).map((seed) => pipe.chat(question(seed), { tools, toolChoice: { name: 'note' }, parallelToolCalls: false, temperature: 1, seed, maxTokens: 200 }))),
          ]);
          for (const r of [...required, ...named]) {
            expect(r.finishReason, r.text).toBe('tool_calls');
            expect(r.toolCalls.length, r.text).toBe(1);
            for (const call of r.toolCalls) {
              const validate = validators.get(call.name);
              expect(validate, call.name).toBeDefined();
              if (!validate!(call.arguments)) throw new Error(`${r.text}: ${ajv.errorsText(validate!.errors)}`);
            }
            expect(r.warnings, r.text).toEqual([]);
          }
          for (const r of named) for (const call of r.toolCalls) expect(call.name).toBe('note');
          // v11: the name is followed by the [ARGS] special token (kept in the decoded text).
          if (format === 'mistral') for (const r of required) expect(r.text.includes('[ARGS]'), r.text).toBe(tokenizer === 'v11');
        });

        it('tool-guided auto: 20 seeds, every call the model makes is to a declared tool with valid arguments', async () => {
          const replies = await Promise.all(seeds(20).map((seed) => pipe.chat(question(seed), { tools, guidedTools: true, temperature: 1, seed, maxTokens: 120 })));
          for (const r of replies) {
            // A reply cut off by maxTokens may end inside a call: the complete ones are checked.
            const complete = r.finishReason === 'length' ? r.toolCalls.slice(0, -1) : r.toolCalls;
            for (const call of complete) {
              const validate = validators.get(call.name);
              expect(validate, `${call.name} in ${r.text}`).toBeDefined();
              if (!validate!(call.arguments)) throw new Error(`${r.text}: ${ajv.errorsText(validate!.errors)}`);
            }
          }
        });

        it('none: 30 seeds never call', async () => {
          const none = await Promise.all(seeds(30).map((seed) => pipe.chat(question(seed), { tools, toolChoice: 'none', temperature: 1, seed, maxTokens: 48 })));
          for (const r of none) {
            expect(r.toolCalls, r.text).toEqual([]);
            expect(STARTS[format]!.test(r.text), r.text).toBe(false);
          }
        });
      });
    }
  }
});

describe('mistral, pythonic and deepseek_v3 guided on the demo model (qwen3 reasoning)', () => {
  /** The demo tools with maxLength 16 on every free string: the model never learnt these formats and may ramble inside one. */
  const bound = (schema: Record<string, unknown>): Record<string, unknown> => {
    const out: Record<string, unknown> = { ...schema };
    if (out.type === 'string' && out.enum === undefined) out.maxLength = 16;
    if (out.properties) out.properties = Object.fromEntries(Object.entries(out.properties as Record<string, Record<string, unknown>>).map(([k, v]) => [k, bound(v)]));
    if (out.items) out.items = bound(out.items as Record<string, unknown>);
    return out;
  };
  const demoTools = (JSON.parse(readFileSync(join(demoDir, 'tools.json'), 'utf8')) as ToolDefinition[]).map((t) => ({ ...t, function: { ...t.function, parameters: bound(t.function.parameters!) } }));
  const check = new Map(demoTools.map((t) => [t.function.name, ajv.compile(t.function.parameters)]));
  const ask = (i: number) => [{ role: 'user' as const, content: ['What is 37 times 12.5?', 'What is the weather in Oslo?', 'Convert 3 miles to kilometers.', 'Hi!'][i % 4]! }];

  for (const format of ['mistral', 'pythonic', 'deepseek_v3']) {
    // Without parallel calls: the demo model never learnt these formats and does not end a reply after a call.
    it(`${format}: required (20 seeds) and a named tool (10) always call validly, none (20) never calls`, async () => {
      const pipe = await Pipeline.create({ model: demoDir, parsers: { tool: format, reasoning: 'qwen3' } });
      try {
        const [required, named, none] = await Promise.all([
          Promise.all(seeds(20).map((seed) => pipe.chat(ask(seed), { tools: demoTools, toolChoice: 'required', parallelToolCalls: false, temperature: 1, seed, maxTokens: 400 }))),
          Promise.all(seeds(10).map((seed) => pipe.chat(ask(seed), { tools: demoTools, toolChoice: { name: 'convert_units' }, parallelToolCalls: false, temperature: 1, seed, maxTokens: 400 }))),
          Promise.all(seeds(20).map((seed) => pipe.chat(ask(seed), { tools: demoTools, toolChoice: 'none', temperature: 1, seed, maxTokens: 120 }))),
        ]);
        for (const r of [...required, ...named]) {
          expect(r.finishReason, r.text).toBe('tool_calls');
          expect(r.toolCalls.length, r.text).toBe(1);
          for (const call of r.toolCalls) {
            const validate = check.get(call.name)!;
            if (!validate(call.arguments)) throw new Error(`${r.text}: ${ajv.errorsText(validate.errors)}`);
          }
        }
        for (const r of named) for (const call of r.toolCalls) expect(call.name).toBe('convert_units');
        for (const r of none) expect(r.toolCalls, r.text).toEqual([]);
      } finally {
        await pipe.close();
      }
    });
  }
});
