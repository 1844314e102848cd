import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ModelLoadError, UnsupportedModelError } from '../../src/errors.js';
import { loadModelConfig, parseModelConfig } from '../../src/model-files/config.js';
import { ropeInverseFrequencies } from '../../src/model-files/rope.js';

const llamaV4 = {
  architectures: ['LlamaForCausalLM'],
  model_type: 'llama',
  hidden_size: 64,
  intermediate_size: 172,
  num_hidden_layers: 5,
  num_attention_heads: 8,
  num_key_value_heads: 4,
  vocab_size: 512,
  rms_norm_eps: 1e-5,
  rope_theta: 10000,
  rope_scaling: null,
  max_position_embeddings: 512,
  tie_word_embeddings: true,
  torch_dtype: 'float32',
};

describe('parseModelConfig', () => {
  it('reads a transformers 4 Llama config', () => {
    const c = parseModelConfig(llamaV4);
    expect(c).toMatchObject({
      architecture: 'LlamaForCausalLM', hiddenSize: 64, numLayers: 5, numHeads: 8, numKvHeads: 4, headDim: 8,
      intermediateSize: 172, vocabSize: 512, rmsNormEps: 1e-5, ropeTheta: 10000, ropeScaling: null,
      tieWordEmbeddings: true, maxPositionEmbeddings: 512, attentionBias: false, qkvBias: false, oBias: false,
      qkNorm: false, slidingWindow: null, dtype: 'float32',
    });
  });

  it('reads a transformers 5 config (rope_parameters, dtype)', () => {
    const { rope_theta: _, rope_scaling: __, torch_dtype: ___, ...rest } = llamaV4;
    const c = parseModelConfig({ ...rest, dtype: 'bfloat16', rope_parameters: { rope_type: 'default', rope_theta: 500000 } });
    expect(c.ropeTheta).toBe(500000);
    expect(c.ropeScaling).toBeNull();
    expect(c.dtype).toBe('bfloat16');
  });

  it('reads llama3 rope scaling in both spellings', () => {
    const scaling = { factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 };
    const v4 = parseModelConfig({ ...llamaV4, rope_theta: 500000, rope_scaling: { rope_type: 'llama3', ...scaling } });
    const v5 = parseModelConfig({ ...llamaV4, rope_theta: undefined, rope_parameters: { rope_type: 'llama3', rope_theta: 500000, ...scaling } });
    const legacy = parseModelConfig({ ...llamaV4, rope_theta: 500000, rope_scaling: { type: 'llama3', ...scaling } });
    const expected = { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 };
    expect(v4.ropeScaling).toEqual(expected);
    expect(v5.ropeScaling).toEqual(expected);
    expect(legacy.ropeScaling).toEqual(expected);
    expect(v5.ropeTheta).toBe(500000);
  });

  it('derives Qwen2 biases and Qwen3 q/k norm with an explicit head_dim', () => {
    const qwen2 = parseModelConfig({ ...llamaV4, architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', sliding_window: 4096, use_sliding_window: false });
    expect(qwen2).toMatchObject({ qkvBias: true, oBias: false, qkNorm: false, slidingWindow: null });
    const qwen3 = parseModelConfig({ ...llamaV4, architectures: ['Qwen3ForCausalLM'], head_dim: 32 });
    expect(qwen3).toMatchObject({ qkvBias: false, oBias: false, qkNorm: true, headDim: 32 });
    const biased = parseModelConfig({ ...llamaV4, attention_bias: true });
    expect(biased).toMatchObject({ qkvBias: true, oBias: true });
  });

  it('reads Mistral with a sliding window, and defaults kv heads to heads', () => {
    const { num_key_value_heads: _, ...noKv } = llamaV4;
    const c = parseModelConfig({ ...noKv, architectures: ['MistralForCausalLM'], sliding_window: 4096 });
    expect(c).toMatchObject({ architecture: 'MistralForCausalLM', slidingWindow: 4096, numKvHeads: 8 });
  });

  it('rejects unsupported architectures and features with UnsupportedModelError', () => {
    expect(() => parseModelConfig({ ...llamaV4, architectures: ['GPT2LMHeadModel'] })).toThrow(UnsupportedModelError);
    expect(() => parseModelConfig({ ...llamaV4, architectures: ['GPT2LMHeadModel'] })).toThrow(/GPT2LMHeadModel/);
    expect(() => parseModelConfig({ ...llamaV4, rope_scaling: { rope_type: 'yarn', factor: 4 } })).toThrow(UnsupportedModelError);
    expect(() => parseModelConfig({ ...llamaV4, hidden_act: 'gelu' })).toThrow(UnsupportedModelError);
    expect(() => parseModelConfig({ ...llamaV4, architectures: ['Qwen2ForCausalLM'], use_sliding_window: true })).toThrow(UnsupportedModelError);
  });

  it('rejects missing or mistyped fields with ModelLoadError naming the file', () => {
    const { hidden_size: _, ...noHidden } = llamaV4;
    const error = (() => {
      try {
        parseModelConfig(noHidden, '/m/config.json');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ModelLoadError);
    expect((error as ModelLoadError).file).toBe('/m/config.json');
    expect((error as Error).message).toMatch(/hidden_size/);
    expect(() => parseModelConfig({ ...llamaV4, vocab_size: '512' })).toThrow(ModelLoadError);
    expect(() => parseModelConfig({ ...llamaV4, num_key_value_heads: 3 })).toThrow(/multiple/);
    expect(() => parseModelConfig([])).toThrow(ModelLoadError);
    expect(() => parseModelConfig({ ...llamaV4, architectures: undefined, model_type: undefined })).toThrow(/architectures/);
  });
});

describe('loadModelConfig', () => {
  it('invalid JSON is a ModelLoadError naming the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-config-'));
    writeFileSync(join(dir, 'config.json'), '{ "hidden_size": 64, ');
    const result = loadModelConfig(dir);
    await expect(result).rejects.toBeInstanceOf(ModelLoadError);
    await expect(result).rejects.toThrow(join(dir, 'config.json'));
  });

  it('a missing config.json is a ModelLoadError', async () => {
    await expect(loadModelConfig(mkdtempSync(join(tmpdir(), 'weft-config-')))).rejects.toBeInstanceOf(ModelLoadError);
  });
});

describe('ropeInverseFrequencies', () => {
  it('default: theta^(-2j/d)', () => {
    const c = parseModelConfig({ ...llamaV4, head_dim: 8 });
    expect([...ropeInverseFrequencies(c)]).toEqual([1, 10000 ** -0.25, 10000 ** -0.5, 10000 ** -0.75].map(Math.fround));
  });

  it('matches transformers float32 inv_freq bit for bit (over 98%) or within a few ulps (the rest)', () => {
    const fixture = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'rope-inv-freq.json'), 'utf8')) as {
      cases: { dim: number; theta: number; scaling: Record<string, number | string> | null; inv_freq: number[] }[];
    };
    let total = 0;
    let exact = 0;
    for (const c of fixture.cases) {
      const config = parseModelConfig({
        ...llamaV4, hidden_size: c.dim * 4, num_attention_heads: 4, num_key_value_heads: 4, head_dim: c.dim, rope_theta: c.theta,
        ...(c.scaling && { rope_scaling: c.scaling }),
      });
      const ours = ropeInverseFrequencies(config);
      c.inv_freq.forEach((expected, j) => {
        total++;
        if (ours[j] === expected) exact++;
        else expect(Math.abs(ours[j]! - expected) / expected, `dim ${c.dim} theta ${c.theta} ${c.scaling ? "llama3" : ""} j ${j}`).toBeLessThan(5e-7); // a few float32 ulps
      });
    }
    expect(exact / total).toBeGreaterThan(0.98);
  });

  it('llama3: keeps high frequencies, divides low ones by the factor, blends in between', () => {
    const c = parseModelConfig({
      ...llamaV4, hidden_size: 4096, num_attention_heads: 32, num_key_value_heads: 8, rope_theta: 500000,
      rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 },
    });
    const base = ropeInverseFrequencies({ ...c, ropeScaling: null });
    const scaled = ropeInverseFrequencies(c);
    const wavelen = (f: number) => (2 * Math.PI) / f;
    let sawHigh = false, sawLow = false, sawMid = false;
    for (let j = 0; j < base.length; j++) {
      const f = base[j] as number, s = scaled[j] as number;
      if (wavelen(f) < 8192 / 4) { expect(s).toBe(f); sawHigh = true; }
      else if (wavelen(f) > 8192) { expect(s).toBe(Math.fround(f / 8)); sawLow = true; }
      else { expect(s).toBeLessThan(f); expect(s).toBeGreaterThan(f / 8); sawMid = true; }
    }
    expect(sawHigh && sawLow && sawMid).toBe(true);
  });

  it('linear: divides every frequency by the factor', () => {
    const c = parseModelConfig({ ...llamaV4, rope_scaling: { rope_type: 'linear', factor: 2 } });
    const base = ropeInverseFrequencies({ ...c, ropeScaling: null });
    expect([...ropeInverseFrequencies(c)]).toEqual([...base].map((f) => Math.fround(f / 2)));
  });
});
