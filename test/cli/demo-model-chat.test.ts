import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { testIo } from './cli-harness.js';

// models/weft-demo ships with the repository; guard anyway (e.g. a package without models/).
const demoModel = fileURLToPath(new URL('../../models/weft-demo', import.meta.url));
const haveDemo = existsSync(join(demoModel, 'model.safetensors'));
if (!haveDemo) console.warn(`test/cli: ${demoModel} is absent; the chat-with-tools test on the demo model is skipped`);

describe.skipIf(!haveDemo)('weft chat on models/weft-demo with its tools (CPU backend)', () => {
  it('calls the calculator, takes the result from /tool, and answers with it', async () => {
    const io = testIo({ stdin: 'What is 37 times 12.5?\n/tool {"result":462.5}\n' });
    const code = await runCli(
      [
        'chat',
        '--model', demoModel,
        '--tools', join(demoModel, 'tools.json'),
        '--tool-parser', 'qwen3coder',
        '--reasoning-parser', 'qwen3',
        '-t', '0',
        '--threads', '1',
      ],
      io,
    );
    expect(io.err()).not.toContain('CHAT_TEMPLATE_ERROR');
    expect(code).toBe(0);
    const out = io.out();
    // The call is parsed (not printed as qwen3coder markup), with typed numbers.
    const call = /^→ calculator\((.*)\)$/m.exec(out);
    expect(call, out).not.toBeNull();
    expect(JSON.parse(call?.[1] ?? 'null')).toMatchObject({ a: 37, b: 12.5 });
    expect(out).not.toContain('<tool_call>');
    expect(out).not.toContain('<function=');
    // Reasoning goes through the parser: on a pipe it is wrapped in one <think> pair per block.
    expect(out.startsWith('<think>')).toBe(true);
    const answer = out.slice(out.indexOf('\n', out.indexOf('→ calculator')) + 1);
    const finalText = answer.replace(/<think>[\s\S]*?<\/think>\n?/g, '');
    expect(finalText).toContain('462.5');
    expect(io.err()).toContain('/tool <json>');
    expect(io.err()).toContain('finish: tool_calls');
    expect(io.err()).toContain('finish: stop');
  });
});
