/**
 * A model folder whose tokenizer.json gives an added token an id at or past
 * the model's vocabulary (config.json's vocab_size) is refused at load with a
 * ModelLoadError naming the token, its id, the vocabulary size and the fix,
 * where it used to end in a TypeError from inside the tokenizer's constructor.
 * The process and a pipeline already serving are unaffected. An added token
 * whose id leaves a gap but stays inside the vocabulary loads as before.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ModelLoadError, Pipeline, demoModelPath } from '../../src/index.js';

const root = mkdtempSync(join(tmpdir(), 'weft-tokenizer-beyond-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const VOCAB = (JSON.parse(readFileSync(join(demoModelPath(), 'config.json'), 'utf8')) as { vocab_size: number }).vocab_size;

/** The demo model with more added tokens in its tokenizer.json. */
function demoWithAddedTokens(name: string, added: { id: number; content: string }[]): string {
  const dir = join(root, name);
  cpSync(demoModelPath(), dir, { recursive: true });
  const file = join(dir, 'tokenizer.json');
  const json = JSON.parse(readFileSync(file, 'utf8')) as { added_tokens: object[] };
  for (const token of added) json.added_tokens.push({ ...token, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  writeFileSync(file, JSON.stringify(json));
  return dir;
}

describe('an added token beyond the model vocabulary', () => {
  it('is a ModelLoadError at load naming the token, its id, the vocabulary size and the fix; other requests go on', async () => {
    const good = await Pipeline.create({ model: demoModelPath(), threads: 1 });
    try {
      const serving = good.generate('Hello', { maxTokens: 8, temperature: 0, ignoreEos: true });
      const bad = demoWithAddedTokens('far', [{ id: VOCAB + 3000, content: '<|far|>' }]);
      const error = await Pipeline.create({ model: bad, threads: 1 }).then(
        async (pipe) => {
          await pipe.close();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ModelLoadError);
      const { message, file } = error as ModelLoadError;
      expect(file).toBe(join(bad, 'tokenizer.json'));
      expect(message).toContain(`"<|far|>" (id ${VOCAB + 3000})`);
      expect(message).toContain(`the model's vocabulary of ${VOCAB} tokens`);
      expect(message).toContain(`below ${VOCAB} or remove it from added_tokens`);
      expect((await serving).tokenIds).toHaveLength(8);
    } finally {
      await good.close();
    }
  });

  it('names every such token, the one at exactly the vocabulary size included', async () => {
    const bad = demoWithAddedTokens('edge', [{ id: VOCAB, content: '<|edge|>' }, { id: VOCAB + 1, content: '<|next|>' }]);
    const error = await Pipeline.create({ model: bad, threads: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelLoadError);
    expect((error as Error).message).toContain(`the tokens "<|edge|>" (id ${VOCAB}), "<|next|>" (id ${VOCAB + 1}) lie beyond`);
  });

  it('loads and serves when the added token leaves a gap but stays inside the vocabulary', async () => {
    const dir = demoWithAddedTokens('gap', [{ id: VOCAB - 1, content: '<|last|>' }]);
    const pipe = await Pipeline.create({ model: dir, threads: 1 });
    try {
      expect((await pipe.generate('Hello', { maxTokens: 4, temperature: 0, ignoreEos: true })).tokenIds).toHaveLength(4);
    } finally {
      await pipe.close();
    }
  });
});
