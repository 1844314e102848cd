// Files of an untrusted model folder: only regular files inside the folder are read, within a
// size bound, and errors never quote their contents. Each case once hung or leaked.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ModelLoadError, Pipeline, TokenizerError, WeftError } from '../../src/index.js';
import { demoModelPath } from '../../src/package-files.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function demoCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'weft-folder-'));
  made.push(dir);
  cpSync(demoModelPath(), dir, { recursive: true });
  return dir;
}

async function loadError(dir: string): Promise<WeftError> {
  const started = performance.now();
  const error = await Pipeline.create({ model: dir, kvCache: { size: '4MB' }, threads: 1 }).then(
    async (pipe) => {
      await pipe.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(performance.now() - started).toBeLessThan(10_000); // refused, not hung on a pool thread
  expect(error).toBeInstanceOf(WeftError);
  return error as WeftError;
}

const FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json', 'model.safetensors'];

it.each(FILES)('a FIFO as %s is refused at once (it used to block a libuv thread forever)', async (name) => {
  const dir = demoCopy();
  rmSync(join(dir, name));
  execFileSync('mkfifo', [join(dir, name)]);
  const error = await loadError(dir);
  expect(error).toBeInstanceOf(ModelLoadError);
  expect(error.message).toMatch(/not a regular file|not a model folder/);
});

it('a symlink out of the folder is refused and its target never quoted', async () => {
  for (const [name, target] of [['config.json', '/etc/passwd'], ['tokenizer.json', '/dev/zero'], ['tokenizer_config.json', '/etc/hostname']] as const) {
    const dir = demoCopy();
    rmSync(join(dir, name));
    symlinkSync(target, join(dir, name));
    const error = await loadError(dir);
    expect(error.message).not.toContain('root:');
    expect(error.message).toMatch(/symbolic link out of the model folder|not a model folder/);
  }
});

it('a symlink inside the folder is followed (as Hugging Face caches lay out blobs)', async () => {
  const dir = demoCopy();
  mkdirSync(join(dir, 'blobs'));
  renameSync(join(dir, 'tokenizer.json'), join(dir, 'blobs', 'abc123'));
  symlinkSync(join('blobs', 'abc123'), join(dir, 'tokenizer.json'));
  await using pipe = await Pipeline.create({ model: dir, kvCache: { size: '4MB' }, threads: 1 });
  expect((await pipe.generate('Hello', { maxTokens: 2 })).tokenIds).toHaveLength(2);
});

it('an oversized small file is refused by its size, not read (a sparse 100 MB config.json)', async () => {
  const dir = demoCopy();
  truncateSync(join(dir, 'tokenizer_config.json'), 100 * 2 ** 20);
  const error = await loadError(dir);
  expect(error).toBeInstanceOf(ModelLoadError);
  expect(error.message).toMatch(/more than the \d+ a file of its kind may have/);
});

it('invalid JSON is reported by position, without quoting the text', async () => {
  const dir = demoCopy();
  writeFileSync(join(dir, 'tokenizer.json'), 'secret-token-do-not-print {');
  const error = await loadError(dir);
  expect(error).toBeInstanceOf(TokenizerError);
  expect(error.message).toMatch(/is not valid JSON/);
  expect(error.message).not.toContain('secret');
});
