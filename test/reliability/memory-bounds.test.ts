// Small configs and files that would make weft allocate more than the machine has: a step's
// working memory is capped by its token budget, and weights are checked before they are read.
import { rmSync } from 'node:fs';
import { totalmem } from 'node:os';
import { expect, it } from 'vitest';
import { CpuBackend } from '../../src/backends/cpu/cpu-backend.js';
import { InvalidOptionError, ModelLoadError, Pipeline, type StepInfo } from '../../src/index.js';
import { ByteTokenizer } from '../support/byte-tokenizer.js';
import { TestBackend } from '../support/test-backend.js';
import { writeRandomModel } from '../native/random-model.js';

/** The test backend, claiming that each scheduled token costs a hundredth of a quarter of the machine. */
function hungryBackend(): TestBackend {
  const backend = new TestBackend({ delayMs: 0 });
  Object.defineProperty(backend, 'shape', { value: { ...backend.shape, stepBytesPerToken: Math.ceil(totalmem() / 4 / 100) } });
  return backend;
}

it("a default step budget is lowered to what a step's working memory allows", async () => {
  const steps: StepInfo[] = [];
  await using pipe = await Pipeline.create({ backend: hungryBackend(), tokenizer: new ByteTokenizer(), kvCache: { size: 1 << 20, blockSize: 4 }, scheduler: { maxNumSeqs: 8 } });
  pipe.on('step', (info) => steps.push(info));
  const out = await pipe.generate('x'.repeat(350), { maxTokens: 2 });
  expect(out.tokenIds).toHaveLength(2);
  expect(Math.max(...steps.map((s) => s.scheduledTokens))).toBeLessThanOrEqual(99);
  expect(steps.length).toBeGreaterThanOrEqual(4); // the 351-token prompt ran in chunks
});

it('a step budget the user set that cannot fit is an InvalidOptionError naming it', async () => {
  const error = await Pipeline.create({
    backend: hungryBackend(),
    tokenizer: new ByteTokenizer(),
    kvCache: { size: 1 << 20, blockSize: 4 },
    scheduler: { maxNumBatchedTokens: 2048 },
  }).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(InvalidOptionError);
  expect((error as InvalidOptionError).option).toBe('scheduler.maxNumBatchedTokens');
});

it('the CPU backend reports its per-token working memory from the config, so a huge intermediate size caps the step', async () => {
  const small = writeRandomModel({
    architectures: ['LlamaForCausalLM'], hidden_size: 8, intermediate_size: 16, num_hidden_layers: 1,
    num_attention_heads: 2, num_key_value_heads: 1, vocab_size: 32, max_position_embeddings: 64,
  }, 5);
  try {
    const backend = await CpuBackend.load(small.dir, { threads: 1 });
    // 2 x hidden + 2 x q + 2 x kv + 2 x intermediate + headDim float32 values.
    expect(backend.shape.stepBytesPerToken).toBe(4 * (2 * 8 + 2 * 8 + 2 * 4 + 2 * 16 + 4));
    await backend.dispose();
  } finally {
    rmSync(small.dir, { recursive: true });
  }
});

it('weights larger than physical memory are refused before a byte is read (a sparse file declaring them)', async () => {
  const { mkdtempSync, writeFileSync, openSync, ftruncateSync, closeSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'weft-sparse-'));
  try {
    // FFN matrices of 4096 x 2^20 float32 values: 17 GB each, 51 GB in all, in a file that holds no data.
    const H = 4096, I = 2 ** 20, V = 32;
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ architectures: ['LlamaForCausalLM'], hidden_size: H, intermediate_size: I,
      num_hidden_layers: 1, num_attention_heads: 32, num_key_value_heads: 32, vocab_size: V, max_position_embeddings: 64, tie_word_embeddings: true }));
    const shapes: Array<[string, number[]]> = [['model.embed_tokens.weight', [V, H]], ['model.norm.weight', [H]],
      ['model.layers.0.input_layernorm.weight', [H]], ['model.layers.0.post_attention_layernorm.weight', [H]],
      ['model.layers.0.self_attn.q_proj.weight', [H, H]], ['model.layers.0.self_attn.k_proj.weight', [H, H]],
      ['model.layers.0.self_attn.v_proj.weight', [H, H]], ['model.layers.0.self_attn.o_proj.weight', [H, H]],
      ['model.layers.0.mlp.gate_proj.weight', [I, H]], ['model.layers.0.mlp.up_proj.weight', [I, H]], ['model.layers.0.mlp.down_proj.weight', [H, I]]];
    const header: Record<string, unknown> = {};
    let offset = 0;
    for (const [name, shape] of shapes) {
      const bytes = shape.reduce((a, b) => a * b, 4);
      header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + bytes] };
      offset += bytes;
    }
    const json = Buffer.from(JSON.stringify(header));
    const prefix = Buffer.alloc(8);
    prefix.writeBigUInt64LE(BigInt(json.length));
    const file = join(dir, 'model.safetensors');
    writeFileSync(file, Buffer.concat([prefix, json]));
    const fd = openSync(file, 'r+');
    ftruncateSync(fd, 8 + json.length + offset);
    closeSync(fd);
    const started = performance.now();
    const error = await CpuBackend.load(dir, { threads: 1 }).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(ModelLoadError);
    expect((error as Error).message).toMatch(/more than this machine's memory/);
    expect(performance.now() - started).toBeLessThan(5000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
