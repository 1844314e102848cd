/** `weft embed` on the embedding fixture: texts from arguments, a file and stdin; JSON lines equal to pipe.embed(); usage errors. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { Pipeline } from '../../src/create.js';
import { REPO_ROOT } from '../native/helpers.js';
import { testIo } from './cli-harness.js';

const DIR = join(REPO_ROOT, 'test', 'fixtures', 'qwen3-embed-tiny');
const TEXTS = ['The quick brown fox.', 'hello', 'weft runs continuous batching in TypeScript.'];
const lines = (out: string) => out.trim().split('\n').map((line) => JSON.parse(line) as { index: number; embedding: number[] });

describe('weft embed', () => {
  let expected: number[][];
  let query: number[][];
  const scratch = mkdtempSync(join(tmpdir(), 'weft-embed-cli-'));
  beforeAll(async () => {
    await using pipe = await Pipeline.create({ model: DIR, threads: 1 });
    expected = (await pipe.embed(TEXTS)).embeddings.map((v) => Array.from(v));
    query = (await pipe.embed(TEXTS, { promptName: 'query', dimensions: 8 })).embeddings.map((v) => Array.from(v));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('one JSON line per argument, in order, with the vectors pipe.embed gives; the counts on stderr', async () => {
    const io = testIo();
    expect(await runCli(['embed', '-m', DIR, '--threads', '1', ...TEXTS], io)).toBe(0);
    expect(lines(io.out())).toEqual(expected.map((embedding, index) => ({ index, embedding })));
    expect(io.err()).toMatch(/weft: 3 texts, \d+ tokens, 64 dimensions in/);
  });

  it('reads a file (blank lines skipped) or stdin, one text per line, and takes --prompt-name and --dimensions', async () => {
    const file = join(scratch, 'texts.txt');
    writeFileSync(file, `${TEXTS.join('\n\n')}\n`);
    const fromFile = testIo();
    expect(await runCli(['embed', '-m', DIR, '-q', '-f', file, '--prompt-name', 'query', '--dimensions', '8'], fromFile)).toBe(0);
    expect(lines(fromFile.out()).map((l) => l.embedding)).toEqual(query);
    expect(fromFile.err()).toBe('');
    const fromStdin = testIo({ stdin: TEXTS.join('\r\n') });
    expect(await runCli(['embed', '-m', DIR, '-q'], fromStdin)).toBe(0);
    expect(lines(fromStdin.out()).map((l) => l.embedding)).toEqual(expected);
  });

  it('says what is wrong, with exit code 2 (a usage error, or an option value the model refuses)', async () => {
    const both = testIo();
    expect(await runCli(['embed', '-m', DIR, '-f', 'x.txt', 'text'], both)).toBe(2);
    expect(both.err()).toContain('give texts as arguments or --file, not both');
    const none = testIo({ stdinIsTTY: true });
    expect(await runCli(['embed', '-m', DIR], none)).toBe(2);
    expect(none.err()).toContain('no texts given');
    const missing = testIo();
    expect(await runCli(['embed', '-m', DIR, '-f', join(scratch, 'nope.txt')], missing)).toBe(2);
    expect(missing.err()).toContain('cannot read --file');
    const badPrompt = testIo();
    expect(await runCli(['embed', '-m', DIR, '-q', '--prompt-name', 'passage', 'text'], badPrompt)).toBe(2);
    expect(badPrompt.err()).toContain('is not one of the model\'s prompts');
  });
});
