/** examples/ai-sdk-agent.ts runs as the README says and its agents use their tools. */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { demoModelDir } from './demo-tools.js';

const root = join(demoModelDir, '..', '..');
const present = existsSync(join(demoModelDir, 'model.safetensors'));

describe.skipIf(!present)('examples/ai-sdk-agent.ts', () => {
  it('runs three agents to their answers', async () => {
    const tsx = join(root, 'node_modules', '.bin', 'tsx');
    const { stdout } = await promisify(execFile)(tsx, ['examples/ai-sdk-agent.ts'], { cwd: root, timeout: 120_000 });
    expect(stdout).toContain('called calculator({"operation":"multiply","a":37,"b":12.5})');
    expect(stdout).toMatch(/=> 37 times 12\.5 is 462\.5\./);
    expect(stdout).toContain('called get_weather({"city":"Paris","unit":"fahrenheit"})');
    expect(stdout).toMatch(/=> The capital of Japan is Tokyo\./);
  });
});
