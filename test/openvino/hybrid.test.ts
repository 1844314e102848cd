/**
 * A hybrid model (Qwen3.5) on the OpenVINO backend: the optimum-intel IR of
 * test/fixtures/qwen35-tiny (test/fixtures/qwen35-tiny-openvino), made paged at
 * load by OpenVINO's own transformation (PagedCausalConv1D / PagedGatedDeltaNet
 * with conv_state_table.N / gated_delta_state_table.N and the la.* inputs), driven
 * from the engine's linear-state and checkpoints pools. Greedy ids equal the CPU
 * backend's and transformers' reference alone, 8 at once, under cache pressure
 * with preemptions and aborts (prefix caching on and off), and over chat turns
 * that resume from checkpoints; every pool is empty once idle.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/index.js';
import { OpenVinoBackend } from '../../src/backends/openvino/openvino-backend.js';
import { CHECKPOINT_POOL, LINEAR_STATE_POOL } from '../../src/backends/openvino/step-inputs.js';
import { Pipeline } from '../../src/create.js';
import { AbortError, ModelLoadError } from '../../src/errors.js';
import { IdTokenizer } from '../support/id-tokenizer.js';
import { describeOpenVino, EXACT, REPO_ROOT } from './helpers.js';

const HF = join(REPO_ROOT, 'test', 'fixtures', 'qwen35-tiny');
const IR = join(REPO_ROOT, 'test', 'fixtures', 'qwen35-tiny-openvino');

interface Case {
  prompt_ids: number[];
  greedy_ids: number[];
  first_logits: number[];
}
const cases = (JSON.parse(readFileSync(join(HF, 'reference.json'), 'utf8')) as { cases: Case[] }).cases;
const tokenizer = () => new IdTokenizer(384, [2]);
const GREEDY = { maxTokens: 32, temperature: 0, ignoreEos: true };

describeOpenVino('qwen35-tiny on OpenVINO: load, greedy ids alone and 8 at once', () => {
  let ovBackend: OpenVinoBackend;
  let ov: Pipeline;
  let cpu: Pipeline;
  beforeAll(async () => {
    ovBackend = await OpenVinoBackend.load(IR, { ...EXACT, threads: 2 });
    ov = await Pipeline.create({ backend: ovBackend, tokenizer: tokenizer(), kvCache: { size: '4MB', precision: 'f32' } });
    cpu = await Pipeline.create({ backend: await CpuBackend.load(HF, { threads: 2 }), tokenizer: tokenizer(), kvCache: { size: '4MB', precision: 'f32' } });
  });
  afterAll(async () => {
    await ov?.close();
    await cpu?.close();
    await ovBackend?.dispose();
  });

  it('is made paged at load, with one conv and one delta state table per Gated DeltaNet layer, and declares the engine pools', () => {
    expect(ovBackend.converted).toBe(true);
    expect(ovBackend.cacheInputs.map((p) => p.name)).toEqual(['key_cache.0', 'value_cache.0', 'key_cache.1', 'value_cache.1']);
    const states = ovBackend.stateInputs;
    expect(states.filter((p) => p.name.startsWith('conv_state_table.')).map((p) => p.shape)).toEqual(Array(6).fill([-1, 96, 4]));
    expect(states.filter((p) => p.name.startsWith('gated_delta_state_table.')).map((p) => p.shape)).toEqual(Array(6).fill([-1, 4, 8, 16]));
    for (const port of states) expect(port.type).toBe('f32');
    const bytes = 6 * (96 * 4 + 4 * 8 * 16) * 4;
    expect(ovBackend.shape.numLayers).toBe(2);
    expect(ovBackend.shape.extraPools).toEqual([
      { name: LINEAR_STATE_POOL, blockSize: Infinity, bytesPerBlock: bytes },
      { name: CHECKPOINT_POOL, blockSize: 256, bytesPerBlock: bytes, checkpoints: true },
    ]);
  });

  it('greedy ids equal the reference and the CPU backend, alone and 8 at once', async () => {
    for (const c of cases) {
      const [a, b] = await Promise.all([ov.generate(c.prompt_ids, GREEDY), cpu.generate(c.prompt_ids, GREEDY)]);
      expect(a.tokenIds, `prompt of ${c.prompt_ids.length}`).toEqual(c.greedy_ids);
      expect(a.tokenIds).toEqual(b.tokenIds);
    }
    const prompts = Array.from({ length: 8 }, (_, i) => cases[i % cases.length]!.prompt_ids.map((id) => 3 + ((id + i) % 377)));
    const [many, manyCpu] = await Promise.all([
      Promise.all(prompts.map((p) => ov.generate(p, GREEDY))),
      Promise.all(prompts.map((p) => cpu.generate(p, GREEDY))),
    ]);
    expect(many.map((r) => r.tokenIds)).toEqual(manyCpu.map((r) => r.tokenIds));
    expect(new Set(many.map((r) => r.tokenIds.join())).size).toBeGreaterThan(1);
  });

  it("refuses a hybrid IR whose position_ids feeds nothing (optimum-intel's raw Qwen3.5 export), naming it", async () => {
    // Undo the recipe's fix in a copy: the rotary embedding's positions come from input_ids
    // instead of position_ids, which then has no consumer, as in the raw export.
    const work = mkdtempSync(join(tmpdir(), 'weft-hybrid-ir-'));
    try {
      cpSync(IR, work, { recursive: true });
      const xmlPath = join(work, 'openvino_model.xml');
      const xml = readFileSync(xmlPath, 'utf8');
      const id = (name: string) => xml.match(new RegExp(`<layer id="(\\d+)" name="${name}" type="Parameter"`))![1]!;
      const edge = `<edge from-layer="${id('position_ids')}" from-port="0"`;
      const at = xml.lastIndexOf(edge); // the top-level edge (the others are inside the delta-rule loops)
      expect(at).toBeGreaterThan(0);
      writeFileSync(xmlPath, xml.slice(0, at) + `<edge from-layer="${id('input_ids')}" from-port="0"` + xml.slice(at + edge.length));
      const load = OpenVinoBackend.load(work, { ...EXACT, threads: 1 });
      await expect(load).rejects.toThrow(ModelLoadError);
      await expect(OpenVinoBackend.load(work, { ...EXACT, threads: 1 })).rejects.toThrow(/position_ids input feeds nothing/);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});

describeOpenVino('qwen35-tiny on OpenVINO through the engine under cache pressure', () => {
  // 16 requests: every reference prompt, most of them twice or more (repeats hit the prefix cache).
  const requests = Array.from({ length: 16 }, (_, i) => cases[(i * 5) % cases.length]!);
  const runs = [16, 64, 2048].flatMap((maxNumBatchedTokens) => [true, false].map((prefixCaching) => ({ maxNumBatchedTokens, prefixCaching })));
  it.each(runs)('16 generations, room for about two, maxNumBatchedTokens $maxNumBatchedTokens, prefix caching $prefixCaching, with aborts: outputs equal the reference', async ({ maxNumBatchedTokens, prefixCaching }) => {
    const backend = await OpenVinoBackend.load(IR, { ...EXACT, threads: 2 });
    const state = backend.shape.extraPools!.find((p) => p.name === LINEAR_STATE_POOL)!.bytesPerBlock;
    const kvBlock = backend.shape.kvBlockBytes!;
    const blockSize = backend.shape.kvBlockSize!;
    const maxNumSeqs = 16;
    // One state slot per possible running request, 20 KV blocks (the longest request takes 11)
    // and, with prefix caching, their share of checkpoints (one state per 64 tokens).
    const checkpointShare = prefixCaching ? (blockSize / 64) * state : 0;
    const size = maxNumSeqs * state + 20 * (kvBlock + checkpointShare);
    const pipe = await Pipeline.create({
      backend,
      tokenizer: tokenizer(),
      kvCache: { size, precision: 'f32', ...(prefixCaching && { checkpointInterval: 64 }) },
      scheduler: { maxNumSeqs, maxNumBatchedTokens, prefixCaching },
    });
    try {
      const aborted = new Set([3, 8, 13]);
      let cachedPromptTokens = 0;
      const outcomes = await Promise.allSettled(
        requests.map(async (c, i) => {
          const controller = new AbortController();
          const ids: number[] = [];
          for await (const part of pipe.stream(c.prompt_ids, { ...GREEDY, logprobs: 1, signal: controller.signal })) {
            if (part.type === 'finish') cachedPromptTokens += part.usage.cachedPromptTokens;
            if (part.type !== 'token') continue;
            ids.push(...part.tokenIds);
            if (aborted.has(i) && ids.length >= 5 + i) controller.abort();
          }
          return ids;
        }),
      );
      outcomes.forEach((outcome, i) => {
        if (aborted.has(i)) {
          expect(outcome.status).toBe('rejected');
          if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(AbortError);
        } else {
          expect(outcome.status, `request ${i}`).toBe('fulfilled');
          if (outcome.status === 'fulfilled') expect(outcome.value, `request ${i}`).toEqual(requests[i]!.greedy_ids);
        }
      });
      const stats = pipe.stats();
      expect(stats.kv.pools.map((p) => p.name)).toEqual(prefixCaching ? ['attention', LINEAR_STATE_POOL, CHECKPOINT_POOL] : ['attention', LINEAR_STATE_POOL]);
      if (prefixCaching) expect(cachedPromptTokens).toBeGreaterThan(0);
      else expect(cachedPromptTokens).toBe(0);
      expect(stats.preemptions).toBeGreaterThan(0);
      expect(stats.running + stats.waiting).toBe(0);
      for (const pool of stats.kv.pools) expect(pool.usedBlocks, pool.name).toBe(0);
    } finally {
      await pipe.close();
      await backend.dispose();
    }
  });

  // The configuration on which openvino.genai 2026.4.1's ContinuousBatchingPipeline dies on this IR with
  // OVMS's assertion (`m_block_table.count(seq_id) > 0`, tools/openvino/genai_hybrid.py --kv-blocks 20
  // --batched 32 --prefix-caching --new-tokens 240; docs/openvino.md): 20 KV blocks, 32 tokens a step,
  // prefix caching with a checkpoint every 256 tokens (genai's adaptive interval here), 240 new tokens.
  it('the scenario that crashes openvino.genai on this IR: no crash, outputs equal an unpressured run, pools empty', async () => {
    const run = async (kvBlocks: number, cancel: ReadonlySet<number>) => {
      const backend = await OpenVinoBackend.load(IR, { ...EXACT, threads: 2 });
      const state = backend.shape.extraPools!.find((p) => p.name === LINEAR_STATE_POOL)!.bytesPerBlock;
      const size = 16 * state + kvBlocks * (backend.shape.kvBlockBytes! + (backend.shape.kvBlockSize! / 256) * state);
      const pipe = await Pipeline.create({
        backend, tokenizer: tokenizer(),
        kvCache: { size, precision: 'f32', checkpointInterval: 256 }, scheduler: { maxNumSeqs: 16, maxNumBatchedTokens: 32, prefixCaching: true },
      });
      try {
        const outcomes = await Promise.allSettled(requests.map(async (c, i) => {
          const controller = new AbortController();
          const ids: number[] = [];
          for await (const part of pipe.stream(c.prompt_ids, { ...GREEDY, maxTokens: 240, logprobs: 1, signal: controller.signal })) {
            if (part.type !== 'token') continue;
            ids.push(...part.tokenIds);
            if (cancel.has(i) && ids.length >= 5 + i) controller.abort();
          }
          return ids;
        }));
        const stats = pipe.stats();
        return { outcomes, stats };
      } finally {
        await pipe.close();
        await backend.dispose();
      }
    };
    const cancel = new Set([3, 8, 13]);
    const unpressured = await run(512, new Set());
    const pressured = await run(20, cancel);
    pressured.outcomes.forEach((outcome, i) => {
      if (cancel.has(i)) return expect(outcome.status).toBe('rejected');
      const base = unpressured.outcomes[i]!;
      expect(outcome.status, `request ${i}`).toBe('fulfilled');
      if (outcome.status === 'fulfilled' && base.status === 'fulfilled') {
        expect(outcome.value.length).toBe(240);
        expect(outcome.value, `request ${i}`).toEqual(base.value);
      }
    });
    expect(pressured.stats.preemptions).toBeGreaterThan(0);
    expect(pressured.stats.running + pressured.stats.waiting).toBe(0);
    for (const pool of pressured.stats.kv.pools) expect(pool.usedBlocks, pool.name).toBe(0);
  }, 120_000);

  it("a chat's later turns resume from checkpoints, with the same output as without prefix caching", async () => {
    const turns = async (prefixCaching: boolean) => {
      const backend = await OpenVinoBackend.load(IR, { ...EXACT, threads: 2 });
      const pipe = await Pipeline.create({
        backend, tokenizer: tokenizer(),
        kvCache: { size: '4MB', precision: 'f32', checkpointInterval: 64 }, scheduler: { prefixCaching },
      });
      try {
        let prompt = cases[3]!.prompt_ids; // 64 tokens
        const results: Array<{ ids: number[]; cached: number; promptTokens: number }> = [];
        for (let turn = 0; turn < 4; turn++) {
          const r = await pipe.generate(prompt, { maxTokens: 24, ignoreEos: true, temperature: 0 });
          results.push({ ids: r.tokenIds, cached: r.usage.cachedPromptTokens, promptTokens: r.usage.promptTokens });
          prompt = [...prompt, ...r.tokenIds, ...cases[5]!.prompt_ids.slice(turn * 20, turn * 20 + 20)];
        }
        return results;
      } finally {
        await pipe.close();
        await backend.dispose();
      }
    };
    const cached = await turns(true);
    const uncached = await turns(false);
    expect(cached.map((t) => t.ids)).toEqual(uncached.map((t) => t.ids));
    expect(cached[0]!.ids).toEqual(cases[3]!.greedy_ids.slice(0, 24));
    expect(uncached.every((t) => t.cached === 0)).toBe(true);
    cached.slice(1).forEach((t, i) => {
      const previousContext = cached[i]!.promptTokens + 24;
      expect(t.cached, `turn ${i + 1}`).toBe(Math.floor(previousContext / 64) * 64);
      expect(t.cached).toBeGreaterThan(0);
    });
  });
});
