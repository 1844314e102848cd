/**
 * Prompt-lookup speculative decoding on real models through the native CPU
 * backend: greedy output token for token the same as without it, alone,
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
  it('chat() with tools gives the same replies and tool calls as without it, and accepts drafts', async () => {
    const tools = JSON.parse(readFileSync(join(DEMO, 'tools.json'), 'utf8')) as ToolDefinition[];
    const turns = readFileSync(HELDOUT, 'utf8')
      .trim()
      .split('\n')
      .slice(0, 24)
      .map((line) => {
        const { messages } = JSON.parse(line) as { messages: { role: string; content: string }[] };
        return [{ role: 'user', content: messages[0]!.content }] as ChatMessage[];
      });
    const plain = await create(DEMO);
    const spec = await create(DEMO, { speculative: SPECULATIVE });
    const chatAll = (pipe: Pipeline) =>
      Promise.all(
        turns.map(async (messages) => {
          const r = await pipe.chat(messages, { tools, temperature: 0, maxTokens: 160 });
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
