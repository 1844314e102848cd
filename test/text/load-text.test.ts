import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatTemplateError, ModelLoadError, TokenizerError } from '../../src/errors.js';
import { requireChatTemplate } from '../../src/text/chat-template.js';
import { loadText } from '../../src/text/load-text.js';
import { haveSharedModels, modelDir } from './shared-models.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A copy of stories260K's text files in a temp folder, to break one at a time. */
function copyOfStories(): string {
  const dir = mkdtempSync(join(tmpdir(), 'weft-text-'));
  dirs.push(dir);
  for (const file of ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json']) {
    copyFileSync(join(modelDir('stories260K'), file), join(dir, file));
  }
  return dir;
}

async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe.skipIf(!haveSharedModels)('loadText', () => {
  it('loads stories260K: tokenizer, generation defaults, no chat template', async () => {
    const text = await loadText(modelDir('stories260K'));
    expect(text.tokenizer.encode('Once upon a time')).toEqual([1, 403, 407, 261, 378]);
    expect(text.generationDefaults).toEqual({ eosTokenIds: [2], doSample: false, maxLength: 512 });
    expect(text.chatTemplate).toBeUndefined();
    expect(() => requireChatTemplate(text.chatTemplate, 'stories260K')).toThrow(ChatTemplateError);
    expect(() => requireChatTemplate(text.chatTemplate, 'stories260K')).toThrow(/no chat template/);
  });

  it('adds generation_config eos ids to the tokenizer', async () => {
    const dir = copyOfStories();
    writeFileSync(join(dir, 'generation_config.json'), JSON.stringify({ eos_token_id: [2, 1] }));
    expect((await loadText(dir)).tokenizer.eosTokenIds).toEqual([2, 1]);
  });

  it('works without tokenizer_config.json or generation_config.json (post-processor adds BOS)', async () => {
    const dir = copyOfStories();
    rmSync(join(dir, 'tokenizer_config.json'));
    rmSync(join(dir, 'generation_config.json'));
    const text = await loadText(dir);
    expect(text.tokenizer.encode('Once upon a time')).toEqual([1, 403, 407, 261, 378]);
    expect(text.generationDefaults).toEqual({});
  });

  it('takes the chat template from tokenizer_config.json, and chat_template.jinja over it', async () => {
    const dir = copyOfStories();
    const configFile = join(dir, 'tokenizer_config.json');
    const config = JSON.parse(readFileSync(configFile, 'utf8'));
    config.chat_template = '{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}';
    writeFileSync(configFile, JSON.stringify(config));
    const fromConfig = await loadText(dir);
    expect(fromConfig.chatTemplate?.render([{ role: 'user', content: 'hi' }])).toBe('<s>[user]hi');

    writeFileSync(join(dir, 'chat_template.jinja'), '{% for m in messages %}{{ m.content }}{{ eos_token }}{% endfor %}');
    const fromFile = await loadText(dir);
    expect(fromFile.chatTemplate?.render([{ role: 'user', content: 'hi' }])).toBe('hi</s>');
  });

  it('a missing tokenizer.json is a TokenizerError naming the file', async () => {
    const dir = copyOfStories();
    rmSync(join(dir, 'tokenizer.json'));
    const error = await errorOf(loadText(dir));
    expect(error).toBeInstanceOf(TokenizerError);
    expect((error as Error).message).toContain(join(dir, 'tokenizer.json'));
  });

  it('a truncated tokenizer.json is a TokenizerError naming the file', async () => {
    const dir = copyOfStories();
    const file = join(dir, 'tokenizer.json');
    writeFileSync(file, readFileSync(file, 'utf8').slice(0, 5000));
    const error = await errorOf(loadText(dir));
    expect(error).toBeInstanceOf(TokenizerError);
    expect((error as Error).message).toContain(file);
  });

  it('a tokenizer.json the library cannot build is a TokenizerError naming the file', async () => {
    const dir = copyOfStories();
    const file = join(dir, 'tokenizer.json');
    const json = JSON.parse(readFileSync(file, 'utf8'));
    json.model.type = 'NoSuchModel';
    writeFileSync(file, JSON.stringify(json));
    const error = await errorOf(loadText(dir));
    expect(error).toBeInstanceOf(TokenizerError);
    expect((error as Error).message).toContain(file);
  });

  it('an invalid tokenizer_config.json is a TokenizerError; an invalid generation_config.json a ModelLoadError', async () => {
    const dir = copyOfStories();
    writeFileSync(join(dir, 'tokenizer_config.json'), '{"add_bos_token": tru');
    const configError = await errorOf(loadText(dir));
    expect(configError).toBeInstanceOf(TokenizerError);
    expect((configError as Error).message).toContain('tokenizer_config.json');

    const dir2 = copyOfStories();
    writeFileSync(join(dir2, 'generation_config.json'), 'not json');
    const genError = await errorOf(loadText(dir2));
    expect(genError).toBeInstanceOf(ModelLoadError);
    expect((genError as ModelLoadError).file).toBe(join(dir2, 'generation_config.json'));
  });

  it('a malformed chat_template list is a ChatTemplateError', async () => {
    const dir = copyOfStories();
    const configFile = join(dir, 'tokenizer_config.json');
    const config = JSON.parse(readFileSync(configFile, 'utf8'));
    config.chat_template = [{ name: 'default' }];
    writeFileSync(configFile, JSON.stringify(config));
    expect(await errorOf(loadText(dir))).toBeInstanceOf(ChatTemplateError);
  });
});
