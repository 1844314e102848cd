/**
 * The hybrid (Gated DeltaNet + full attention) fixtures of issue #29 are well-formed: their config
 * says what tools/hybrid/make_fixtures.py meant, the safetensors header lists exactly the tensors a
 * Qwen3.5 / Qwen3-Next loader expects (names and shapes derived here from the config, as a loader
 * would), and reference.json is self-consistent. No backend is needed.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readSafetensorsHeader } from '../../src/model-files/safetensors.js';

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

/** Fixture JSON, checked field by field below. */
type Json = Record<string, any>;

interface Fixture {
  name: string;
  architecture: string;
  modelType: string;
  textModelType: string;
  nested: boolean;
  tied: boolean;
  moe: boolean;
}

const FIXTURE_LIST: Fixture[] = [
  { name: 'qwen35-tiny', architecture: 'Qwen3_5ForCausalLM', modelType: 'qwen3_5_text', textModelType: 'qwen3_5_text', nested: false, tied: false, moe: false },
  { name: 'qwen35-tiny-vl', architecture: 'Qwen3_5ForConditionalGeneration', modelType: 'qwen3_5', textModelType: 'qwen3_5_text', nested: true, tied: true, moe: false },
  { name: 'qwen3next-tiny', architecture: 'Qwen3NextForCausalLM', modelType: 'qwen3_next', textModelType: 'qwen3_next', nested: false, tied: false, moe: true },
];

const readJson = (path: string): Json => JSON.parse(readFileSync(path, 'utf8')) as Json;

/** Every tensor a text-only loader needs, with its shape, derived from the text config. */
function expectedTextTensors(t: Json, f: Fixture): Map<string, number[]> {
  const H: number = t.hidden_size;
  const V: number = t.vocab_size;
  const p = f.nested ? 'model.language_model.' : 'model.';
  const m = new Map<string, number[]>();
  m.set(`${p}embed_tokens.weight`, [V, H]);
  m.set(`${p}norm.weight`, [H]);
  if (!f.tied) m.set('lm_head.weight', [V, H]);
  const Hk: number = t.linear_num_key_heads;
  const Hv: number = t.linear_num_value_heads;
  const keyDim = Hk * t.linear_key_head_dim;
  const valueDim = Hv * t.linear_value_head_dim;
  const convDim = 2 * keyDim + valueDim;
  const nh: number = t.num_attention_heads;
  const nkv: number = t.num_key_value_heads;
  const hd: number = t.head_dim;
  (t.layer_types as string[]).forEach((type, i) => {
    const l = `${p}layers.${i}.`;
    m.set(`${l}input_layernorm.weight`, [H]);
    m.set(`${l}post_attention_layernorm.weight`, [H]);
    if (type === 'linear_attention') {
      const a = `${l}linear_attn.`;
      if (f.moe) {
        m.set(`${a}in_proj_qkvz.weight`, [2 * keyDim + 2 * valueDim, H]);
        m.set(`${a}in_proj_ba.weight`, [2 * Hv, H]);
      } else {
        m.set(`${a}in_proj_qkv.weight`, [convDim, H]);
        m.set(`${a}in_proj_z.weight`, [valueDim, H]);
        m.set(`${a}in_proj_b.weight`, [Hv, H]);
        m.set(`${a}in_proj_a.weight`, [Hv, H]);
      }
      m.set(`${a}conv1d.weight`, [convDim, 1, t.linear_conv_kernel_dim]);
      m.set(`${a}A_log`, [Hv]);
      m.set(`${a}dt_bias`, [Hv]);
      m.set(`${a}norm.weight`, [t.linear_value_head_dim]);
      m.set(`${a}out_proj.weight`, [H, valueDim]);
    } else {
      expect(type).toBe('full_attention');
      const a = `${l}self_attn.`;
      m.set(`${a}q_proj.weight`, [nh * hd * 2, H]); // per head: query then output gate
      m.set(`${a}k_proj.weight`, [nkv * hd, H]);
      m.set(`${a}v_proj.weight`, [nkv * hd, H]);
      m.set(`${a}o_proj.weight`, [H, nh * hd]);
      m.set(`${a}q_norm.weight`, [hd]);
      m.set(`${a}k_norm.weight`, [hd]);
    }
    const mlp = `${l}mlp.`;
    const sparse = f.moe && !(t.mlp_only_layers as number[]).includes(i) && t.num_experts > 0 && (i + 1) % t.decoder_sparse_step === 0;
    if (sparse) {
      const I: number = t.moe_intermediate_size;
      const S: number = t.shared_expert_intermediate_size;
      m.set(`${mlp}gate.weight`, [t.num_experts, H]);
      for (let e = 0; e < t.num_experts; e++) {
        m.set(`${mlp}experts.${e}.gate_proj.weight`, [I, H]);
        m.set(`${mlp}experts.${e}.up_proj.weight`, [I, H]);
        m.set(`${mlp}experts.${e}.down_proj.weight`, [H, I]);
      }
      m.set(`${mlp}shared_expert.gate_proj.weight`, [S, H]);
      m.set(`${mlp}shared_expert.up_proj.weight`, [S, H]);
      m.set(`${mlp}shared_expert.down_proj.weight`, [H, S]);
      m.set(`${mlp}shared_expert_gate.weight`, [1, H]);
    } else {
      const I: number = t.intermediate_size;
      m.set(`${mlp}gate_proj.weight`, [I, H]);
      m.set(`${mlp}up_proj.weight`, [I, H]);
      m.set(`${mlp}down_proj.weight`, [H, I]);
    }
  });
  return m;
}

describe.each(FIXTURE_LIST)('hybrid fixture $name', (f) => {
  const dir = join(FIXTURES, f.name);
  const config = readJson(join(dir, 'config.json'));
  const text: Json = f.nested ? config.text_config : config;
  const ref = readJson(join(dir, 'reference.json'));

  it('config.json names the architecture and holds the hybrid settings', () => {
    expect(config.architectures).toEqual([f.architecture]);
    expect(config.model_type).toBe(f.modelType);
    expect(text.model_type).toBe(f.textModelType);
    if (f.nested) {
      expect(config.vision_config?.model_type).toBe('qwen3_5_vision');
      expect(config.tie_word_embeddings).toBe(true);
    }
    expect(Boolean(text.tie_word_embeddings)).toBe(f.tied);
    const types = text.layer_types as string[];
    expect(types).toHaveLength(text.num_hidden_layers);
    expect(types.length).toBeGreaterThanOrEqual(6);
    // 3 linear : 1 full, as full_attention_interval 4 would give
    types.forEach((type, i) => expect(type).toBe((i + 1) % 4 === 0 ? 'full_attention' : 'linear_attention'));
    expect(text.num_attention_heads).toBeGreaterThan(text.num_key_value_heads); // GQA
    expect(text.num_attention_heads % text.num_key_value_heads).toBe(0);
    expect(text.rope_parameters.partial_rotary_factor).toBe(0.25);
    expect(text.rope_parameters.rope_type).toBe('default');
    expect(text.linear_conv_kernel_dim).toBe(4);
    expect(text.linear_num_value_heads).toBeGreaterThan(text.linear_num_key_heads); // k heads repeated
    expect(text.linear_num_value_heads % text.linear_num_key_heads).toBe(0);
    expect(text.linear_key_head_dim).not.toBe(text.linear_value_head_dim);
    expect(text.vocab_size).toBe(384);
    if (f.moe) {
      expect(text).toMatchObject({ num_experts: 4, num_experts_per_tok: 2, norm_topk_prob: true, decoder_sparse_step: 1, mlp_only_layers: [] });
      expect(text.shared_expert_intermediate_size).toBeGreaterThan(0);
    }
  });

  it('the safetensors header lists exactly the expected text tensors (float32, shapes from the config)', async () => {
    const file = join(dir, 'model.safetensors');
    expect(statSync(file).size).toBeLessThan(1024 * 1024);
    const header = await readSafetensorsHeader(file); // validates offsets against the file size
    const expected = expectedTextTensors(text, f);
    const textNames = [...header.keys()].filter((n) => !n.startsWith('model.visual.') && !n.startsWith('mtp.'));
    expect(textNames.sort()).toEqual([...expected.keys()].sort());
    for (const [name, shape] of expected) {
      expect(header.get(name)?.shape, name).toEqual(shape);
      expect(header.get(name)?.dtype, name).toBe('F32');
    }
    const visual = [...header.keys()].filter((n) => n.startsWith('model.visual.'));
    const mtp = [...header.keys()].filter((n) => n.startsWith('mtp.'));
    if (f.nested) {
      // weights a text-only loader must skip are really there
      expect(visual).toContain('model.visual.patch_embed.proj.weight');
      expect(visual).toContain('model.visual.merger.linear_fc2.weight');
      expect(header.get('model.visual.merger.linear_fc2.weight')?.shape).toEqual([text.hidden_size, config.vision_config.out_hidden_size]);
      expect(mtp).toContain('mtp.fc.weight');
      expect(header.has('lm_head.weight')).toBe(false);
    } else {
      expect(visual).toEqual([]);
      expect(mtp).toEqual([]);
    }
  });

  it('reference.json is consistent with the config', () => {
    const vocab: number = text.vocab_size;
    expect(ref.vocab_size).toBe(vocab);
    expect(ref.architecture).toBe(f.architecture);
    expect(ref.new_tokens).toBe(32);
    expect(ref.produced_with.transformers).toMatch(/^5\./);
    const cases = ref.cases as Json[];
    const lengths = cases.map((c) => (c.prompt_ids as number[]).length);
    for (const n of [1, 7, 64]) expect(lengths).toContain(n);
    expect(lengths.some((n) => n > 256)).toBe(true);
    const inVocab = (id: number) => Number.isInteger(id) && id >= 0 && id < vocab;
    for (const c of cases) {
      expect((c.prompt_ids as number[]).every(inVocab)).toBe(true);
      expect(c.greedy_ids).toHaveLength(32);
      expect((c.greedy_ids as number[]).every(inVocab)).toBe(true);
      const logits = c.first_logits as number[];
      expect(logits).toHaveLength(vocab);
      expect(logits.every(Number.isFinite)).toBe(true);
      // the first greedy pick is the argmax of the recorded first logits
      const argmax = logits.reduce((best, x, i) => (x > (logits[best] as number) ? i : best), 0);
      expect(argmax).toBe(c.greedy_ids[0]);
    }
    // the first prompt over 256 tokens also ran token by token (recurrent form): same logits
    const long = cases.find((c) => (c.prompt_ids as number[]).length > 256) as Json;
    const rec = long.recurrent_last_logits as number[];
    expect(rec).toHaveLength(vocab);
    const diff = Math.max(...rec.map((x, i) => Math.abs(x - (long.first_logits[i] as number))));
    expect(diff).toBeLessThan(1e-3);
    expect(ref.chunked_vs_recurrent.prompt_length).toBe((long.prompt_ids as number[]).length);
    expect(ref.chunked_vs_recurrent.max_abs_diff_last_position).toBeLessThan(1e-3);
    expect(ref.min_top2_gap).toBeGreaterThan(0);
    expect(Object.values(ref.checks as Record<string, unknown>).every((v) => v === true || v === 0)).toBe(true);
  });
});
