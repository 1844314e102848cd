/** `weft rerank` on the reranker fixture: documents from arguments, a file and stdin; JSON lines equal to pipe.rerank(); usage errors. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { Pipeline } from '../../src/create.js';
import { REPO_ROOT } from '../native/helpers.js';
import { testIo } from './cli-harness.js';

const DIR = join(REPO_ROOT, 'test', 'fixtures', 'qwen3-rerank-tiny');
const QUERY = 'What holds the keys and values of attention?';
const DOCS = ['Paged KV caches hold attention keys and values in fixed-size blocks.', 'hello', 'The quick brown fox jumps over the lazy dog.'];
const lines = (out: string) => out.trim().split('\n').map((line) => JSON.parse(line) as { index: number; score: number; document: string });

describe('weft rerank', () => {
  let expected: { index: number; score: number; document: string }[];
  const scratch = mkdtempSync(join(tmpdir(), 'weft-rerank-cli-'));
  beforeAll(async () => {
    await using pipe = await Pipeline.create({ model: DIR, threads: 1 });
    expected = (await pipe.rerank(QUERY, DOCS)).ranking.map(({ index, score }) => ({ index, score, document: DOCS[index]! }));
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('one JSON line per document, best first, with the scores pipe.rerank gives; the counts on stderr', async () => {
    const io = testIo();
    expect(await runCli(['rerank', '-m', DIR, '--threads', '1', '--query', QUERY, ...DOCS], io)).toBe(0);
    expect(lines(io.out())).toEqual(expected);
    expect(io.err()).toMatch(/weft: 3 documents, \d+ tokens in/);
  });

  it('reads a file (blank lines skipped) or stdin, one document per line, and takes --top-n', async () => {
    const file = join(scratch, 'docs.txt');
    writeFileSync(file, `${DOCS.join('\n\n')}\n`);
    const fromFile = testIo();
    expect(await runCli(['rerank', '-m', DIR, '-q', '--query', QUERY, '-f', file, '--top-n', '2'], fromFile)).toBe(0);
    expect(lines(fromFile.out())).toEqual(expected.slice(0, 2));
    expect(fromFile.err()).toBe('');
    const fromStdin = testIo({ stdin: DOCS.join('\r\n') });
    expect(await runCli(['rerank', '-m', DIR, '-q', '--query', QUERY], fromStdin)).toBe(0);
    expect(lines(fromStdin.out())).toEqual(expected);
  });

  it('says what is wrong, with exit code 2', async () => {
    const noQuery = testIo();
    expect(await runCli(['rerank', '-m', DIR, 'doc'], noQuery)).toBe(2);
    expect(noQuery.err()).toContain('--query is required');
    const both = testIo();
    expect(await runCli(['rerank', '-m', DIR, '--query', QUERY, '-f', 'x.txt', 'doc'], both)).toBe(2);
    expect(both.err()).toContain('give documents as arguments or --file, not both');
    const none = testIo({ stdinIsTTY: true });
    expect(await runCli(['rerank', '-m', DIR, '--query', QUERY], none)).toBe(2);
    expect(none.err()).toContain('no documents given');
    const badTop = testIo();
    expect(await runCli(['rerank', '-m', DIR, '--query', QUERY, '--top-n', '0', 'doc'], badTop)).toBe(2);
    expect(badTop.err()).toContain('--top-n');
  });
});
