import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { testIo } from './cli-harness.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const sharedModels = join(repoRoot, '..', 'shared', 'models');
const haveModels = existsSync(sharedModels);
if (!haveModels) console.warn(`test/cli: ${sharedModels} is absent; the CLI tests on real models are skipped`);

interface ReferenceCase {
  prompt: string;
  text: string;
}
const referenceCases = (model: string): ReferenceCase[] =>
  haveModels ? (JSON.parse(readFileSync(join(sharedModels, model, 'reference.json'), 'utf8')).cases as ReferenceCase[]) : [];

for (const model of ['stories260K', 'aidreams260K']) {
  describe.skipIf(!haveModels)(`weft generate on ${model} (CPU backend)`, () => {
    it.each(referenceCases(model))('greedy output of "$prompt" is reference.json\'s text', async ({ prompt, text }) => {
      const io = testIo();
      const code = await runCli(['generate', '--model', join(sharedModels, model), '-n', '64', '-t', '0', '--threads', '1', prompt], io);
      expect(io.err()).toContain('64 tokens in');
      expect(code).toBe(0);
      expect(io.out()).toBe(`${text}\n`);
    });
  });
}

describe.skipIf(!haveModels)('weft chat on a real model', () => {
  const dir = mkdtempSync(join(tmpdir(), 'weft-cli-chat-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('says clearly that stories260K has no chat template (exit 1)', async () => {
    const io = testIo({ stdin: 'hello\n' });
    expect(await runCli(['chat', '-m', join(sharedModels, 'stories260K'), '-q'], io)).toBe(1);
    expect(io.err()).toContain('has no chat template');
  });

  it('chats through a chat template added to a copy of stories260K, deterministically at temperature 0', async () => {
    for (const file of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json']) {
      copyFileSync(join(sharedModels, 'stories260K', file), join(dir, file));
    }
    // A story-style template: the model only knows stories, so each turn is a story prompt.
    writeFileSync(
      join(dir, 'chat_template.jinja'),
      '{{ bos_token }}{% for m in messages %}{% if m.role == "user" %}{{ m.content }}{% else %} {{ m.content }}\n{% endif %}{% endfor %}',
    );
    const chatOnce = async () => {
      const io = testIo({ stdin: 'Once upon a time\nThe dog\n' });
      const code = await runCli(['chat', '-m', dir, '-n', '12', '-t', '0', '--threads', '1'], io);
      return { code, out: io.out(), err: io.err() };
    };
    const first = await chatOnce();
    expect(first.code).toBe(0);
    const replies = first.out.split('\n').filter(Boolean);
    expect(replies).toHaveLength(2);
    expect(replies[0]).toMatch(/^, there was/); // stories260K's greedy continuation of "Once upon a time"
    expect(first.err.match(/12 tokens in/g)).toHaveLength(2);
    const second = await chatOnce();
    expect({ code: second.code, out: second.out }).toEqual({ code: first.code, out: first.out });
  });
});

describe.skipIf(!haveModels)('the weft process', () => {
  const run = (args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'src/cli/main.ts'), ...args], {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('streams to stdout, reports on stderr, and exits 0', () => {
    const result = run(['generate', '-m', join(sharedModels, 'stories260K'), '-n', '16', '-t', '0', 'Once upon a time']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^, there was a little girl/);
    expect(result.stderr).toMatch(/16 tokens in .* tokens\/s/);
  });

  it('exits 2 on a bad flag and 1 on a missing model', () => {
    const bad = run(['generate', '--model', 'x', '--nope']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("Unknown option '--nope'");
    const missing = run(['generate', '-m', join(tmpdir(), 'no-such-weft-model'), 'hi']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/weft: .*no-such-weft-model/);
    expect(missing.stdout).toBe('');
  });
});
