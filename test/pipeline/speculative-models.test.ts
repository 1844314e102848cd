/**
 * Prompt-lookup speculative decoding on real models through the native CPU
 * backend: greedy output, and a sampled request's output for its seed (drawn
 * natively without speculation, on the JS sampler with it), token for token
 * the same as without it, alone,
 * batched, with a cache small enough to preempt, with stop strings and
 * maxTokens inside accepted runs, and on weft-demo's agent turns (docs/speculative.md).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Pipeline, type ChatMessage, type PipelineOptions, type ToolDefinition } from '../../src/index.js';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { InvalidOptionError } from '../../src/errors.js';
import { QWEN3_TINY, REPO_ROOT, sharedModel } from '../native/helpers.js';
import { IdTokenizer } from '../support/id-tokenizer.js';

const open: Pipeline[] = [];
afterAll(async () => {
  await Promise.all(open.map((pipe) => pipe.close()));
});

/** A model folder's pipeline; the qwen3-tiny fixture has no tokenizer: its prompts are token ids (IdTokenizer). */
async function create(model: string, options: Partial<Omit<PipelineOptions, 'isolation'>> = {}): Promise<Pipeline> {
  let pipe: Pipeline;
  if (model === QWEN3_TINY) {
    const backend = await CpuBackend.load(model, { threads: 2 });
    pipe = await Pipeline.create({ backend, tokenizer: new IdTokenizer(backend.shape.vocabSize), ...options });
  } else pipe = await Pipeline.create({ model, threads: 2, ...options });
  open.push(pipe);
  return pipe;
}

const SPECULATIVE = { method: 'prompt-lookup' as const, tokens: 6, ngram: 2 };
const DEMO = join(REPO_ROOT, 'models', 'weft-demo');

/** Bytes of f32 K and V for one token, from config.json. */
function kvBytesPerToken(dir: string): number {
  const c = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, number>;
  const headDim = c.head_dim ?? c.hidden_size! / c.num_attention_heads!;
  return c.num_hidden_layers! * c.num_key_value_heads! * headDim * 2 * 4;
}

const models = [
  { name: 'qwen3-tiny', dir: existsSync(join(QWEN3_TINY, 'model.safetensors')) ? QWEN3_TINY : undefined },
  { name: 'stories260K', dir: sharedModel('stories260K') },
  { name: 'aidreams260K', dir: sharedModel('aidreams260K') },
  { name: 'weft-demo', dir: existsSync(join(DEMO, 'model.safetensors')) ? DEMO : undefined },
];

const PROMPTS = [
  'Once upon a time',
  'Lily and Tom went to the park. Lily and Tom went to the park. Lily and',
  'The dog ran. The dog ran. The dog ran. The dog',
  'One day, a big bird saw a little fish. The big bird said hello to the little fish. One day, a big bird',
  'def add(a, b):\n    return a + b\n\ndef add(a, b):\n',
  'Tom had a red ball',
];

for (const { name, dir } of models) {
  describe.skipIf(dir === undefined)(`prompt lookup on ${name}`, () => {
    const variants = [
      { label: 'alone, one request at a time', options: {}, concurrent: false },
      { label: 'batched', options: { kvCache: { size: '16MB' } }, concurrent: true },
      {
        label: 'batched, with a cache small enough to preempt',
        options: { kvCache: { size: kvBytesPerToken(dir ?? QWEN3_TINY) * 160, blockSize: 4, precision: 'f32' as const }, scheduler: { maxNumBatchedTokens: 40 } },
        concurrent: true,
      },
    ];
    for (const variant of variants) {
      it(`gives the greedy output without speculation, ${variant.label}`, async () => {
        const plain = await create(dir!, variant.options);
        const spec = await create(dir!, { ...variant.options, speculative: SPECULATIVE });
        const run = async (pipe: Pipeline, text: string, stop?: string) => {
          const prompt = dir === QWEN3_TINY ? [...text].map((c) => c.charCodeAt(0)) : text;
          const result = await pipe.generate(prompt, { maxTokens: 40, temperature: 0, ...(stop !== undefined && { stop }) });
          return { text: result.text, tokenIds: result.tokenIds, finishReason: result.finishReason };
        };
        const runAll = async (pipe: Pipeline, stops: (string | undefined)[] = []) =>
          variant.concurrent ? Promise.all(PROMPTS.map((p, i) => run(pipe, p, stops[i]))) : serial(PROMPTS.map((p, i) => () => run(pipe, p, stops[i])));
        const expected = await runAll(plain);
        expect(await runAll(spec)).toEqual(expected);
        // Stop strings taken from inside each output, so they land inside accepted runs too.
        const stops = expected.map((r) => (r.text.length > 12 ? r.text.slice(8, 11) : undefined));
        expect(await runAll(spec, stops)).toEqual(await runAll(plain, stops));
        const stats = spec.stats();
        expect(stats.speculative!.drafted).toBeGreaterThan(0);
        expect(stats.kv.pools[0]!.usedBlocks).toBe(0);
        if (variant.label.includes('preempt')) expect(stats.preemptions + plain.stats().preemptions).toBeGreaterThan(0);
      }, 120_000);

      it(`gives a sampled request's output for its seed without speculation (drawn natively there), ${variant.label}`, async () => {
        const plain = await create(dir!, variant.options);
        const spec = await create(dir!, { ...variant.options, speculative: SPECULATIVE });
        const run = async (pipe: Pipeline, text: string, seed: number) => {
          const prompt = dir === QWEN3_TINY ? [...text].map((c) => c.charCodeAt(0)) : text;
          // Cool enough that the tiny models still repeat their prompts, so drafts are made (and some kept).
          const result = await pipe.generate(prompt, { maxTokens: 40, temperature: 0.5, topP: 0.95, frequencyPenalty: 0.1, logprobs: 1, seed });
          return { text: result.text, tokenIds: result.tokenIds, finishReason: result.finishReason, logprobs: result.logprobs };
        };
        const runAll = async (pipe: Pipeline) =>
          variant.concurrent ? Promise.all(PROMPTS.map((p, i) => run(pipe, p, 40 + i))) : serial(PROMPTS.map((p, i) => () => run(pipe, p, 40 + i)));
        expect(await runAll(spec)).toEqual(await runAll(plain));
        const stats = spec.stats();
        console.log(`${name}, sampled, ${variant.label}: ${stats.speculative!.accepted} of ${stats.speculative!.drafted} draft tokens accepted`);
        expect(stats.speculative!.drafted).toBeGreaterThan(0);
        expect(stats.kv.pools[0]!.usedBlocks).toBe(0);
      }, 120_000);
    }
  });
}

async function serial<T>(runs: (() => Promise<T>)[]): Promise<T[]> {
  const out: T[] = [];
  for (const run of runs) out.push(await run());
  return out;
}

const HELDOUT = join(REPO_ROOT, 'tools', 'demo-model', 'heldout.jsonl');

describe.skipIf(!existsSync(join(DEMO, 'model.safetensors')) || !existsSync(HELDOUT))('prompt lookup on weft-demo agent turns', () => {
  const tools = (): ToolDefinition[] => JSON.parse(readFileSync(join(DEMO, 'tools.json'), 'utf8')) as ToolDefinition[];
  const turns = (): ChatMessage[][] =>
    readFileSync(HELDOUT, 'utf8')
      .trim()
      .split('\n')
      .slice(0, 24)
      .map((line) => {
        const { messages } = JSON.parse(line) as { messages: { role: string; content: string }[] };
        return [{ role: 'user', content: messages[0]!.content }] as ChatMessage[];
      });

  it('chat() with tools, sampled, gives for each seed the replies and tool calls without it, and accepts drafts', async () => {
    const plain = await create(DEMO);
    const spec = await create(DEMO, { speculative: SPECULATIVE });
    // The demo model is so sure of its tool-call format that below temperature 1 its samples are its greedy replies.
    const chatAll = (pipe: Pipeline, temperature: number) =>
      Promise.all(
        turns().map(async (messages, seed) => {
          const r = await pipe.chat(messages, { tools: tools(), temperature, seed, maxTokens: 160 });
          return { text: r.text, toolCalls: r.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })), finishReason: r.finishReason };
        }),
      );
    const sampled = await chatAll(plain, 2);
    expect(await chatAll(spec, 2)).toEqual(sampled);
    const greedy = await chatAll(plain, 0);
    expect(sampled.filter((reply, i) => reply.text !== greedy[i]!.text).length).toBeGreaterThan(0);
    const { drafted, accepted } = spec.stats().speculative!;
    expect(accepted).toBeGreaterThan(0);
    console.log(`weft-demo, 24 agent turns sampled at temperature 2: ${accepted} of ${drafted} draft tokens accepted`);
  }, 120_000);

  it('chat() with tools gives the same replies and tool calls as without it, and accepts drafts', async () => {
    const plain = await create(DEMO);
    const spec = await create(DEMO, { speculative: SPECULATIVE });
    const chatAll = (pipe: Pipeline) =>
      Promise.all(
        turns().map(async (messages) => {
          const r = await pipe.chat(messages, { tools: tools(), temperature: 0, maxTokens: 160 });
          return { text: r.text, toolCalls: r.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })), finishReason: r.finishReason };
        }),
      );
    expect(await chatAll(spec)).toEqual(await chatAll(plain));
    const { drafted, accepted } = spec.stats().speculative!;
    expect(accepted).toBeGreaterThan(0);
    console.log(`weft-demo, 24 agent turns: ${accepted} of ${drafted} draft tokens accepted`);
  }, 120_000);
});

const HYBRID = join(REPO_ROOT, 'test', 'fixtures', 'qwen35-tiny');

describe.skipIf(!existsSync(join(HYBRID, 'model.safetensors')))('prompt lookup on a hybrid model (qwen35-tiny)', () => {
  it('is refused with a typed error naming the recurrent state, by default and per request', async () => {
    const backend = await CpuBackend.load(HYBRID, { threads: 1 });
    const tokenizer = new IdTokenizer(backend.shape.vocabSize, [2]);
    await expect(Pipeline.create({ backend, tokenizer, speculative: SPECULATIVE })).rejects.toThrow(/speculative: this model keeps recurrent state \(its linear-state/);
    const pipe = await Pipeline.create({ backend, tokenizer });
    open.push(pipe);
    await expect(pipe.generate([1, 2, 3], { temperature: 0, speculative: SPECULATIVE })).rejects.toBeInstanceOf(InvalidOptionError);
    expect((await pipe.generate([1, 2, 3], { temperature: 0, maxTokens: 4 })).tokenIds.length).toBeGreaterThan(0);
  });
});
