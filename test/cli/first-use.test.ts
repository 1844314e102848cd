// What a new user ran into with the CLI (issue 8), each pinned down.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/args.js';
import { runCli } from '../../src/cli/run-cli.js';
import { ChatTemplate, demoModelPath, loadText, type ToolDefinition } from '../../src/index.js';
import { FakePipeline, opener, testIo, textReply } from './cli-harness.js';

const dir = mkdtempSync(join(tmpdir(), 'weft-cli-first-use-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('negative numbers as flag values', () => {
  it.each([
    [['--max-tokens', '-1'], '--max-tokens must be an integer >= 1, got "-1"'],
    [['-n', '-1'], '--max-tokens must be an integer >= 1, got "-1"'],
    [['--temperature', '-0.5'], '--temperature must be a number >= 0, got "-0.5"'],
    [['--top-k', '-.5'], '--top-k must be an integer >= 0, got "-.5"'],
  ])("%j gets weft's own message, not node's \"argument is ambiguous\"", (flags, message) => {
    expect(() => parseCommandLine(['generate', '-m', 'm', ...flags, 'hi'])).toThrow(message);
  });

  it('leaves the words after -- alone', () => {
    expect(parseCommandLine(['generate', '-m', 'm', '--', '-1', '--max-tokens', '-2'])).toMatchObject({ prompt: '-1 --max-tokens -2' });
  });
});

describe('weft help shows a model the user has', () => {
  it.each(['generate', 'chat', 'demo'])('weft help %s: every example --model/-m path exists (the bundled demo model)', async (command) => {
    const io = testIo();
    expect(await runCli(['help', command], io)).toBe(0);
    const paths = [...io.out().matchAll(/(?:--model|-m) (\S+)/g)].map((m) => m[1] as string).filter((p) => !/^<\w+>$/.test(p)); // placeholders such as <dir>, <path>
    if (command !== 'demo') expect(paths.length).toBeGreaterThan(0);
    for (const path of paths) expect(existsSync(join(resolve(path), 'config.json')), path).toBe(true);
    if (command !== 'demo') expect(paths.map((p) => resolve(p))).toContain(demoModelPath());
    expect(io.out()).not.toContain('stories260K');
  });
});

describe('weft generate on a chat model', () => {
  const chatTemplate = new ChatTemplate('{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}<|assistant|>');

  it('hints at weft chat when the model has a chat template', async () => {
    const pipeline = new FakePipeline(() => textReply('gibberish'));
    pipeline.chatTemplate = chatTemplate;
    const io = testIo();
    expect(await runCli(['generate', '-m', 'some/chat-model', 'hi'], io, { openPipeline: opener(pipeline).open })).toBe(0);
    expect(io.err()).toContain('some/chat-model is a chat model');
    expect(io.err()).toContain('weft chat -m some/chat-model');
    expect(io.out()).toBe('gibberish\n');
  });

  it('says nothing for a model without a chat template, or with --quiet', async () => {
    const plain = testIo();
    await runCli(['generate', '-m', 'm', 'hi'], plain, { openPipeline: opener(new FakePipeline(() => textReply('ok'))).open });
    expect(plain.err()).not.toContain('chat model');
    const pipeline = new FakePipeline(() => textReply('ok'));
    pipeline.chatTemplate = chatTemplate;
    const quiet = testIo();
    await runCli(['generate', '-q', '-m', 'm', 'hi'], quiet, { openPipeline: opener(pipeline).open });
    expect(quiet.err()).toBe('');
  });
});

describe('weft chat: an unknown /command', () => {
  it('is reported and not sent to the model; the chat goes on; //text sends /text', async () => {
    const pipeline = new FakePipeline((_, i) => textReply(`answer ${i}`));
    const io = testIo({ stdin: '/rest\n/tools {"a":1}\nhello\n//etc is a folder\n' });
    expect(await runCli(['chat', '-m', 'x', '-q'], io, { openPipeline: opener(pipeline).open })).toBe(0);
    expect(io.err()).toContain('weft: unknown command /rest.');
    expect(io.err()).toContain('weft: unknown command /tools.');
    expect(io.err()).toContain('/reset');
    expect(pipeline.calls.map((c) => (c.input as { content: string }[]).at(-1)?.content)).toEqual(['hello', '/etc is a folder']);
  });
});

describe('weft chat --tools without --tool-parser', () => {
  const tools = join(dir, 'tools.json');
  const CALC: ToolDefinition = { type: 'function', function: { name: 'calc', parameters: { type: 'object', properties: {} } } };
  writeFileSync(tools, JSON.stringify([CALC]));

  const chatWith = async (template: ChatTemplate | undefined, flags: string[] = []) => {
    const pipeline = new FakePipeline(() => textReply('ok'));
    pipeline.chatTemplate = template;
    const io = testIo({ stdin: 'hi\n' });
    expect(await runCli(['chat', '-m', 'x', '--tools', tools, '--reasoning-parser', 'none', ...flags], io, { openPipeline: opener(pipeline).open })).toBe(0);
    return { parsers: pipeline.calls[0]?.options.parsers, err: io.err() };
  };

  it("infers qwen3coder from the demo model's chat template, and says so", async () => {
    const { chatTemplate } = await loadText(demoModelPath());
    const { parsers, err } = await chatWith(chatTemplate);
    expect(parsers).toEqual({ tool: 'qwen3coder' });
    expect(err).toContain('tool parser qwen3coder, since its chat template writes tool calls in qwen3coder markup');
  });

  it('infers hermes from a template that writes <tool_call>{json}</tool_call>', async () => {
    const hermes = new ChatTemplate(
      '{% for m in messages %}{% if m.tool_calls %}{% for tc in m.tool_calls %}<tool_call>\n{{ {"name": tc.function.name, "arguments": tc.function.arguments} | tojson }}\n</tool_call>{% endfor %}{% else %}{{ m.content }}{% endif %}{% endfor %}',
    );
    expect((await chatWith(hermes)).parsers).toEqual({ tool: 'hermes' });
  });

  it('does not guess for a template without a marker of its own, and --tool-parser wins', async () => {
    const bare = new ChatTemplate('{% for m in messages %}{% if m.tool_calls %}{{ m.tool_calls[0].function | tojson }}{% else %}{{ m.content }}{% endif %}{% endfor %}');
    const guessless = await chatWith(bare);
    expect(guessless.parsers).toBeUndefined();
    expect(guessless.err).toContain('--tools without --tool-parser');
    const { chatTemplate } = await loadText(demoModelPath());
    expect((await chatWith(chatTemplate, ['--tool-parser', 'hermes'])).parsers).toEqual({ tool: 'hermes' });
  });
});
