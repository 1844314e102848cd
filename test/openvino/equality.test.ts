/**
 * The OpenVINO backend against the CPU backend on the f32 IR of every committed
 * fixture, OpenVINO's inference and KV precision set to f32: greedy ids through
 * generate() and chat() are equal, alone and 8 at once; first-position logits
 * within 1e-3 (of the CPU backend and of transformers' reference).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Backend, StepBatch } from '../../src/backends/backend.js';
import { CpuBackend } from '../../src/backends/cpu/cpu-backend.js';
import { OpenVinoBackend } from '../../src/backends/openvino/openvino-backend.js';
import { Pipeline } from '../../src/index.js';
import { ByteTokenizer } from '../support/byte-tokenizer.js';
import { DEMO_HF, DEMO_IR, describeOpenVino, EXACT, TINY_HF, TINY_IR } from './helpers.js';

interface Reference {
  cases: Array<{ prompt_ids: number[]; greedy_ids: number[]; first_logits: number[] }>;
}

/** One prefill of `ids` from an empty cache; the last position's logits. */
async function prefillLogits(backend: Backend, ids: number[], blockSize: number): Promise<Float32Array> {
  const blocks = Math.ceil(ids.length / blockSize);
  const batch: StepBatch = {
    inputIds: Int32Array.from(ids),
    positions: Int32Array.from(ids, (_, i) => i),
    pastLens: Int32Array.of(0),
    subsequenceBegins: Int32Array.of(0, ids.length),
    blockIndices: Int32Array.from({ length: blocks }, (_, i) => i + 1),
    blockIndicesBegins: Int32Array.of(0, blocks),
    maxContextLen: ids.length,
    logitsIndices: Int32Array.of(ids.length - 1),
  };
  return (await backend.execute(batch)).logits;
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

describeOpenVino('OpenVINO f32 IR == CPU backend: qwen3-tiny (token ids, no tokenizer)', () => {
  const reference = JSON.parse(readFileSync(join(TINY_HF, 'reference.json'), 'utf8')) as Reference;
  let ov: Pipeline;
  let cpu: Pipeline;
  let ovBackend: OpenVinoBackend;
  beforeAll(async () => {
    ovBackend = await OpenVinoBackend.load(TINY_IR('f32'), { ...EXACT, threads: 2 });
    const cpuBackend = await CpuBackend.load(TINY_HF, { threads: 2 });
    const tokenizer = new ByteTokenizer(); // decodes nothing useful here: the test reads token ids
    ov = await Pipeline.create({ backend: ovBackend, tokenizer, kvCache: { size: '4MB', precision: 'f32' } });
    cpu = await Pipeline.create({ backend: cpuBackend, tokenizer, kvCache: { size: '4MB', precision: 'f32' } });
  });
  afterAll(async () => {
    await ov?.close();
    await cpu?.close();
    await ovBackend?.dispose();
  });

  it('was converted from stateful SDPA and reports the cache layout the plugin chose', () => {
    expect(ovBackend.converted).toBe(true);
    expect(ovBackend.cacheInputs.map((p) => p.name)).toEqual(['key_cache.0', 'value_cache.0', 'key_cache.1', 'value_cache.1']);
    for (const port of ovBackend.cacheInputs) expect(port.type).toBe('f32');
    expect(ovBackend.shape.kvBlockSize).toBeGreaterThan(0);
  });

  it('first-position logits within 1e-3 of the CPU backend and of the transformers reference', async () => {
    const cpuBackend = await CpuBackend.load(TINY_HF, { threads: 1 });
    const probe = await OpenVinoBackend.load(TINY_IR('f32'), { ...EXACT, threads: 1 });
    const blockSize = probe.shape.kvBlockSize!;
    await probe.allocateCache({ numBlocks: 8, blockSize, precision: 'f32' });
    await cpuBackend.allocateCache({ numBlocks: 8, blockSize, precision: 'f32' });
    try {
      for (const c of reference.cases) {
        const fromOv = await prefillLogits(probe, c.prompt_ids, blockSize);
        const fromCpu = await prefillLogits(cpuBackend, c.prompt_ids, blockSize);
        expect(fromOv.length).toBe(384);
        expect(maxAbsDiff(fromOv, fromCpu)).toBeLessThan(1e-3);
        expect(maxAbsDiff(fromOv, c.first_logits)).toBeLessThan(1e-3);
      }
    } finally {
      await probe.dispose();
      await cpuBackend.dispose();
    }
  });

  it('greedy ids through generate() equal the CPU backend and the reference, alone and 8 at once', async () => {
    const opts = { maxTokens: 32, temperature: 0, ignoreEos: true };
    for (const c of reference.cases) {
      const [a, b] = await Promise.all([ov.generate(c.prompt_ids, opts), cpu.generate(c.prompt_ids, opts)]);
      expect(a.tokenIds).toEqual(b.tokenIds);
      expect(a.tokenIds).toEqual(c.greedy_ids);
    }
    const prompts = Array.from({ length: 8 }, (_, i) => reference.cases[i % reference.cases.length]!.prompt_ids.map((id) => (id + i) % 384));
    const [many, manyCpu] = await Promise.all([
      Promise.all(prompts.map((p) => ov.generate(p, opts))),
      Promise.all(prompts.map((p) => cpu.generate(p, opts))),
    ]);
    expect(many.map((r) => r.tokenIds)).toEqual(manyCpu.map((r) => r.tokenIds));
  });
});

describeOpenVino('OpenVINO f32 IR == CPU backend: weft-demo (text, chat template, tools)', () => {
  let ov: Pipeline;
  let cpu: Pipeline;
  const tools = JSON.parse(readFileSync(join(DEMO_HF, 'tools.json'), 'utf8')) as unknown[];
  beforeAll(async () => {
    ov = await Pipeline.create({
      model: DEMO_IR('f32'),
      device: 'openvino:CPU',
      threads: 2,
      openvino: { inferencePrecision: 'f32' },
      kvCache: { size: '16MB', precision: 'f32' },
      parsers: { tool: 'qwen3coder', reasoning: 'qwen3' },
    });
    cpu = await Pipeline.create({ model: DEMO_HF, threads: 2, kvCache: { size: '16MB', precision: 'f32' }, parsers: { tool: 'qwen3coder', reasoning: 'qwen3' } });
  });
  afterAll(async () => {
    await ov?.close();
    await cpu?.close();
  });

  it('generate(): same greedy ids, alone and 8 at once', async () => {
    const opts = { maxTokens: 48, temperature: 0 };
    const alone = await Promise.all([ov.generate('The weather in Paris', opts), cpu.generate('The weather in Paris', opts)]);
    expect(alone[0].tokenIds.length).toBeGreaterThan(0);
    expect(alone[0].tokenIds).toEqual(alone[1].tokenIds);
    const prompts = Array.from({ length: 8 }, (_, i) => `Question ${i}: what is ${i + 2} times ${i + 5}?`);
    const [a, b] = await Promise.all([Promise.all(prompts.map((p) => ov.generate(p, opts))), Promise.all(prompts.map((p) => cpu.generate(p, opts)))]);
    expect(a.map((r) => r.tokenIds)).toEqual(b.map((r) => r.tokenIds));
  });

  it('chat(): same reply, reasoning and tool calls, alone and 8 at once', async () => {
    const ask = (q: string) => [{ role: 'user' as const, content: q }];
    const opts = { tools: tools as never, temperature: 0, maxTokens: 96 };
    const questions = ['What is 12 times 7?', 'What is the weather in Oslo?', 'Convert 5 km to miles.', 'Hello!', 'What is 3 plus 4?', 'Weather in Rome?', 'What time is it in Tokyo?', 'Spell cat backwards.'];
    const one = await Promise.all([ov.chat(ask(questions[0]!), opts), cpu.chat(ask(questions[0]!), opts)]);
    expect(one[0].text).toEqual(one[1].text);
    const [a, b] = await Promise.all([Promise.all(questions.map((q) => ov.chat(ask(q), opts))), Promise.all(questions.map((q) => cpu.chat(ask(q), opts)))]);
    expect(a.map((r) => r.text)).toEqual(b.map((r) => r.text));
    const calls = (r: { toolCalls: Array<{ name: string; arguments: unknown }> }) => r.toolCalls.map((c) => [c.name, c.arguments]); // ids are random
    expect(a.map(calls)).toEqual(b.map(calls));
    expect(a.some((r) => r.toolCalls.length > 0)).toBe(true);
  });
});
