/** examples/rerank.ts runs as docs/reranking.md says, on the reranker fixture, and says how to call it without a folder. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../native/helpers.js';

const tsx = join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
const run = (...args: string[]) => promisify(execFile)(tsx, ['examples/rerank.ts', ...args], { cwd: REPO_ROOT, timeout: 120_000 });

describe('examples/rerank.ts', () => {
  it('prints the three best candidates, best first', async () => {
    const { stdout } = await run(join('test', 'fixtures', 'qwen3-rerank-tiny'), 'Find the passage about caches');
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^4 candidates, \d+ tokens; the best 3:$/);
    const scores = lines.slice(1).map((line) => Number(line.split(' ')[0]));
    expect(scores).toHaveLength(3);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    for (const s of scores) expect(s > 0 && s < 1).toBe(true);
  });

  it('without a folder, prints its usage and exits 1', async () => {
    await expect(run()).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('usage: npx tsx examples/rerank.ts <reranker-folder>') });
  });
});
