import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const demoModel = join(repoRoot, 'models', 'weft-demo');
const haveDemo = existsSync(join(demoModel, 'model.safetensors'));
if (!haveDemo) console.warn(`test/cli: ${demoModel} is absent; the closed-stdout test is skipped`);

describe.skipIf(!haveDemo)('weft generate into a pipe that closes early', () => {
  it('`weft generate … | head -c 10` ends quietly: no EPIPE stack trace, exit 0', () => {
    // bash, for PIPESTATUS: the exit code of weft itself, not of head.
    const weft = `"${process.execPath}" --import tsx src/cli/main.ts generate -m models/weft-demo -n 1000 -t 0 --threads 1 "Once upon a time"`;
    const result = spawnSync('bash', ['-c', `${weft} | head -c 10; echo "weft exit $\{PIPESTATUS[0]}" >&2`], {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.stdout).toHaveLength(10);
    expect(result.stderr).not.toMatch(/EPIPE|Error|\n\s+at /);
    expect(result.stderr).toContain('weft exit 0');
  });
});
