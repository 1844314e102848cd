/** Opening a model folder: a wrong path is reported as a wrong path, naming it. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ModelLoadError, Pipeline } from '../../src/index.js';

async function loadError(model: string): Promise<ModelLoadError> {
  const error = await Pipeline.create({ model }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ModelLoadError);
  expect((error as ModelLoadError).code).toBe('MODEL_LOAD_ERROR');
  return error as ModelLoadError;
}

describe('opening a model folder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'weft-open-model-'));

  it('a path that does not exist', async () => {
    const missing = join(dir, 'no-such-model');
    const error = await loadError(missing);
    expect(error.message).toBe(`the model folder ${missing} does not exist`);
    expect(error.file).toBe(missing);
  });

  it('a path that is a file, not a folder', async () => {
    const file = join(dir, 'model.safetensors');
    writeFileSync(file, 'x');
    expect((await loadError(file)).message).toMatch(new RegExp(`^${file.replace(/[.\\]/g, '\\$&')} is not a folder`));
  });

  it('a folder without config.json', async () => {
    writeFileSync(join(dir, 'tokenizer.json'), '{}');
    const error = await loadError(dir);
    expect(error.message).toMatch(new RegExp(`^${dir.replace(/[.\\]/g, '\\$&')} is not a model folder: it has no config.json`));
    expect(error.file).toBe(join(dir, 'config.json'));
  });
});
