import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ModelLoadError } from '../../src/errors.js';
import { parseGenerationConfig, readGenerationConfig } from '../../src/text/generation-config.js';

describe('generation_config.json', () => {
  it('maps every field we use', () => {
    expect(
      parseGenerationConfig({
        bos_token_id: 151643,
        eos_token_id: [151645, 151643],
        temperature: 0.6,
        top_k: 20,
        top_p: 0.95,
        min_p: 0,
        repetition_penalty: 1.05,
        do_sample: true,
        max_length: 40960,
        transformers_version: '4.51.0',
      }),
    ).toEqual({
      eosTokenIds: [151645, 151643],
      temperature: 0.6,
      topK: 20,
      topP: 0.95,
      minP: 0,
      repetitionPenalty: 1.05,
      doSample: true,
      maxLength: 40960,
    });
  });

  it('reads max_new_tokens (the default maxTokens) and rejects a bad one', () => {
    expect(parseGenerationConfig({ max_new_tokens: 512, max_length: 2048 })).toEqual({ maxNewTokens: 512, maxLength: 2048 });
    expect(() => parseGenerationConfig({ max_new_tokens: 0 })).toThrow(/max_new_tokens must be an integer > 0/);
  });

  it('accepts a single eos id, null fields and an empty object', () => {
    expect(parseGenerationConfig({ eos_token_id: 2, temperature: null })).toEqual({ eosTokenIds: [2] });
    expect(parseGenerationConfig({})).toEqual({});
  });

  it.each([
    [{ eos_token_id: 'two' }, 'eos_token_id'],
    [{ eos_token_id: [1, -2] }, 'eos_token_id'],
    [{ temperature: -1 }, 'temperature'],
    [{ top_p: 1.5 }, 'top_p'],
    [{ top_k: 2.5 }, 'top_k'],
    [{ do_sample: 'yes' }, 'do_sample'],
    [[1, 2], 'expected a JSON object'],
  ])('rejects %j naming %s', (json, what) => {
    expect(() => parseGenerationConfig(json, 'gc.json')).toThrow(ModelLoadError);
    expect(() => parseGenerationConfig(json, 'gc.json')).toThrow(what);
  });

  it('reads a missing file as no defaults, and invalid JSON as ModelLoadError naming the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-gc-'));
    expect(await readGenerationConfig(join(dir, 'generation_config.json'))).toEqual({});
    const file = join(dir, 'generation_config.json');
    writeFileSync(file, '{"eos_token_id": 2,');
    const error = await readGenerationConfig(file).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelLoadError);
    expect((error as ModelLoadError).file).toBe(file);
    expect((error as Error).message).toContain(file);
  });
});
