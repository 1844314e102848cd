/** examples/embed.ts runs as docs/embeddings.md says: on an embedding folder and on the demo model. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../native/helpers.js';

const tsx = join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
const run = (...args: string[]) => promisify(execFile)(tsx, ['examples/embed.ts', ...args], { cwd: REPO_ROOT, timeout: 120_000 });

describe('examples/embed.ts', () => {
  it.each([
    ['the embedding fixture, with its query prompt', [join('test', 'fixtures', 'qwen3-embed-tiny'), 'query'], '4 documents, 64 dimensions'],
    ['the demo model (its default, the last token)', [], '4 documents, 192 dimensions'],
  ])('ranks four documents on %s', async (_, args, header) => {
    const { stdout } = await run(...args);
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toContain(header);
    const scores = lines.slice(1).map((line) => Number(line.split(' ')[0]));
    expect(scores).toHaveLength(4);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    for (const s of scores) expect(Math.abs(s)).toBeLessThanOrEqual(1.0001);
  });
});
