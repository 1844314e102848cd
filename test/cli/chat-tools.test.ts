import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { StreamPart } from '../../src/cli/pipeline-port.js';
import { runCli } from '../../src/cli/run-cli.js';
import type { ChatMessage, ToolDefinition } from '../../src/text/types.js';
import { FakePipeline, opener, testIo, textReply } from './cli-harness.js';

const dir = mkdtempSync(join(tmpdir(), 'weft-cli-tools-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CALCULATOR: ToolDefinition = {
  type: 'function',
  function: {
    name: 'calculator',
    parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  },
};

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const usage = { promptTokens: 5, completionTokens: 7, cachedPromptTokens: 0 };
const toolCall = (index: number, id: string, name: string, args: Record<string, unknown>): StreamPart => ({
  type: 'tool-call',
  index,
  id,
  name,
  arguments: args,
});

describe('weft chat --reasoning-parser / --tool-parser / --tools', () => {
  it('passes the parsers and the tools file to every turn', async () => {
    const tools = file('tools.json', JSON.stringify([CALCULATOR]));
    const pipeline = new FakePipeline((_, index) => textReply(`answer ${index}`));
    const io = testIo({ stdin: 'one\ntwo\n' });
    const code = await runCli(
      ['chat', '-m', 'x', '-q', '--reasoning-parser', 'deepseek_r1', '--tool-parser', 'hermes', '--tools', tools],
      io,
      { openPipeline: opener(pipeline).open },
    );
    expect(code).toBe(0);
    expect(pipeline.calls).toHaveLength(2);
    for (const call of pipeline.calls) {
      expect(call.options.parsers).toEqual({ reasoning: 'deepseek_r1', tool: 'hermes' });
      expect(call.options.tools).toEqual([CALCULATOR]);
    }
  });

  it('--guided-tools asks every turn for tool-guided calls', async () => {
    const tools = file('tools.json', JSON.stringify([CALCULATOR]));
    const pipeline = new FakePipeline((_, index) => textReply(`answer ${index}`));
    const code = await runCli(['chat', '-m', 'x', '-q', '--tool-parser', 'hermes', '--tools', tools, '--guided-tools'], testIo({ stdin: 'one\n' }), { openPipeline: opener(pipeline).open });
    expect(code).toBe(0);
    expect(pipeline.calls.map((call) => call.options.guidedTools)).toEqual([true]);
  });

  it.each([
    [['--tool-parser', 'qwen4'], /--tool-parser: unknown parser "qwen4" \(known: .*qwen3coder.*hermes/],
    [['--reasoning-parser', 'r2'], /--reasoning-parser: unknown parser "r2" \(known: qwen3, deepseek_r1.*none\)/],
    [['--tools', join(tmpdir(), 'no-such-weft-tools.json')], /--tools .*no-such-weft-tools\.json: no such file/],
    [['--guided-tools'], /--guided-tools needs --tools/],
  ])('%j exits 2 with a clear message before loading the model', async (flags, message) => {
    const { open, opened } = opener(new FakePipeline(() => []));
    const io = testIo({ stdin: 'hi\n' });
    expect(await runCli(['chat', '-m', 'x', ...flags], io, { openPipeline: open })).toBe(2);
    expect(io.err()).toMatch(message);
    expect(io.err()).toContain('weft chat --help');
    expect(opened).toHaveLength(0);
  });

  it.each([
    ['not JSON', '[{"type":', /not valid JSON/],
    ['an object', JSON.stringify({ tools: [CALCULATOR] }), /expected a JSON array of tool definitions/],
    ['a tool without a name', JSON.stringify([CALCULATOR, { type: 'function', function: {} }]), /tool 1 needs "function": \{ "name"/],
    ['a tool without a type', JSON.stringify([{ function: { name: 'f' } }]), /tool 0 needs "type": "function"/],
    ['parameters that are no schema', JSON.stringify([{ type: 'function', function: { name: 'f', parameters: [] } }]), /tool 0 \(f\): "parameters"/],
  ])('a tools file with %s exits 2', async (_, text, message) => {
    const path = file('bad-tools.json', text);
    const { open, opened } = opener(new FakePipeline(() => []));
    const io = testIo({ stdin: 'hi\n' });
    expect(await runCli(['chat', '-m', 'x', '--tools', path], io, { openPipeline: open })).toBe(2);
    expect(io.err()).toContain(`--tools ${path}: `);
    expect(io.err()).toMatch(message);
    expect(opened).toHaveLength(0);
  });

  it('says that --tools without --tool-parser prints calls as text', async () => {
    const tools = file('tools2.json', JSON.stringify([CALCULATOR]));
    const io = testIo({ stdin: 'hi\n' });
    await runCli(['chat', '-m', 'x', '--tools', tools], io, { openPipeline: opener(new FakePipeline(() => textReply('ok'))).open });
    expect(io.err()).toContain('--tools without --tool-parser');
  });

  it("mentions a model folder's tools.json without loading it", async () => {
    const model = mkdtempSync(join(dir, 'model-'));
    writeFileSync(join(model, 'tools.json'), JSON.stringify([CALCULATOR]));
    const pipeline = new FakePipeline(() => textReply('ok'));
    const io = testIo({ stdin: 'hi\n' });
    await runCli(['chat', '-m', model], io, { openPipeline: opener(pipeline).open });
    expect(io.err()).toContain(`pass --tools ${join(model, 'tools.json')}`);
    expect(pipeline.calls[0]?.options.tools).toBeUndefined();
  });
});

describe('weft chat: the default reasoning parser', () => {
  const run = async (pipeline: FakePipeline, flags: string[] = []) => {
    const io = testIo({ stdin: 'hi\n' });
    expect(await runCli(['chat', '-m', 'x', ...flags], io, { openPipeline: opener(pipeline).open })).toBe(0);
    return { parsers: pipeline.calls[0]?.options.parsers, err: io.err() };
  };

  it('is qwen3 when the tokenizer has a <think> token', async () => {
    const pipeline = new FakePipeline(() => textReply('ok'));
    pipeline.tokenizer = { tokenToId: (token) => (token === '<think>' ? 7 : undefined) };
    const { parsers, err } = await run(pipeline);
    expect(parsers).toEqual({ reasoning: 'qwen3' });
    expect(err).toContain('reasoning parser qwen3, since its tokenizer has a <think> token');
  });

  it('is qwen3 when the chat template opens a think block, and --quiet keeps that quiet', async () => {
    const pipeline = new FakePipeline(() => textReply('ok'));
    pipeline.tokenizer = { tokenToId: () => undefined };
    pipeline.chatTemplate = { render: (messages) => `${messages.map((m) => m.content).join('')}<|assistant|><think>\n` };
    const { parsers, err } = await run(pipeline, ['-q']);
    expect(parsers).toEqual({ reasoning: 'qwen3' });
    expect(err).toBe('');
  });

  it('is none for a model without either sign, or whose template cannot render the probe', async () => {
    const plain = new FakePipeline(() => textReply('ok'));
    plain.tokenizer = { tokenToId: () => undefined };
    plain.chatTemplate = { render: () => 'User: Hi\nAssistant:' };
    expect((await run(plain)).parsers).toBeUndefined();
    const picky = new FakePipeline(() => textReply('ok'));
    picky.chatTemplate = {
      render: () => {
        throw new Error('a system message is required');
      },
    };
    expect((await run(picky)).parsers).toBeUndefined();
  });

  it('--reasoning-parser none turns it off; a tool parser alone stays alone', async () => {
    const pipeline = new FakePipeline(() => textReply('ok'));
    pipeline.tokenizer = { tokenToId: () => 1 };
    expect((await run(pipeline, ['--reasoning-parser', 'none', '--tool-parser', 'qwen3coder'])).parsers).toEqual({ tool: 'qwen3coder' });
  });
});

describe('weft chat: tool calls and /tool', () => {
  it('prints calls as → name(args), keeps them in the history, hints once, and /tool continues the answer', async () => {
    const pipeline = new FakePipeline((_, index) => {
      if (index === 0 || index === 2) {
        return [
          { type: 'reasoning-delta', text: '\nneed the calculator\n' },
          { type: 'tool-call-start', index: 0, id: `c${index}`, name: 'calculator' },
          toolCall(0, `c${index}`, 'calculator', { a: 37, b: 12.5 }),
          { type: 'finish', finishReason: 'tool_calls', usage },
        ];
      }
      return textReply(`It is 462.5 (${index}).`);
    });
    const io = testIo({ stdin: 'What is 37 times 12.5?\n/tool {"result":462.5}\nAgain?\n/tool   {"result": 462.5}  \n' });
    expect(await runCli(['chat', '-m', 'x', '-q', '--tool-parser', 'qwen3coder'], io, { openPipeline: opener(pipeline).open })).toBe(0);

    expect(io.out()).toBe(
      '<think>\nneed the calculator\n</think>\n→ calculator({"a":37,"b":12.5})\nIt is 462.5 (1).\n' +
        '<think>\nneed the calculator\n</think>\n→ calculator({"a":37,"b":12.5})\nIt is 462.5 (3).\n',
    );
    expect(io.err().match(/\/tool <json>/g)).toHaveLength(1);
    expect(pipeline.calls).toHaveLength(4);
    const firstExchange: ChatMessage[] = [
      { role: 'user', content: 'What is 37 times 12.5?' },
      { role: 'assistant', content: '', reasoning: 'need the calculator', toolCalls: [{ id: 'c0', name: 'calculator', arguments: { a: 37, b: 12.5 } }] },
      { role: 'tool', content: '{"result":462.5}', toolCallId: 'c0', name: 'calculator' },
    ];
    expect(pipeline.calls[1]?.input).toEqual(firstExchange);
    expect(pipeline.calls[3]?.input).toEqual([
      ...firstExchange,
      { role: 'assistant', content: 'It is 462.5 (1).' },
      { role: 'user', content: 'Again?' },
      { role: 'assistant', content: '', reasoning: 'need the calculator', toolCalls: [{ id: 'c2', name: 'calculator', arguments: { a: 37, b: 12.5 } }] },
      { role: 'tool', content: '{"result": 462.5}', toolCallId: 'c2', name: 'calculator' },
    ]);
  });

  it('waits for one /tool result per call before generating again', async () => {
    const pipeline = new FakePipeline((_, index) =>
      index === 0
        ? [
            toolCall(0, 'w', 'get_weather', { city: 'Paris' }),
            toolCall(1, 'u', 'convert_units', { value: 12 }),
            { type: 'finish', finishReason: 'tool_calls', usage },
          ]
        : textReply('Sunny, and 7.46 miles.'),
    );
    const io = testIo({ stdin: 'weather and miles?\n/tool {"condition":"sunny"}\n/tool {"value":7.46}\n' });
    expect(await runCli(['chat', '-m', 'x', '-q', '--tool-parser', 'qwen3coder'], io, { openPipeline: opener(pipeline).open })).toBe(0);
    expect(io.out()).toContain('→ get_weather({"city":"Paris"})\n→ convert_units({"value":12})\n');
    expect(io.err()).toContain('1 more tool result(s) expected, next for convert_units');
    expect(pipeline.calls).toHaveLength(2);
    expect((pipeline.calls[1]?.input as ChatMessage[]).slice(2)).toEqual([
      { role: 'tool', content: '{"condition":"sunny"}', toolCallId: 'w', name: 'get_weather' },
      { role: 'tool', content: '{"value":7.46}', toolCallId: 'u', name: 'convert_units' },
    ]);
  });

  it('/tool without a result asks for one; /tool with no call pending still goes on', async () => {
    const pipeline = new FakePipeline(() => textReply('noted'));
    const io = testIo({ stdin: '/tool\n/tool 42\n' });
    expect(await runCli(['chat', '-m', 'x', '-q'], io, { openPipeline: opener(pipeline).open })).toBe(0);
    expect(io.err()).toContain('/tool needs the tool\'s result');
    expect(pipeline.calls.map((call) => call.input)).toEqual([[{ role: 'tool', content: '42' }]]);
  });

  it('/reset forgets pending calls', async () => {
    const pipeline = new FakePipeline((_, index) =>
      index === 0 ? [toolCall(0, 'a', 'f', {}), toolCall(1, 'b', 'g', {}), { type: 'finish', finishReason: 'tool_calls', usage }] : textReply('ok'),
    );
    const io = testIo({ stdin: 'go\n/reset\n/tool 1\n' });
    expect(await runCli(['chat', '-m', 'x', '-q'], io, { openPipeline: opener(pipeline).open })).toBe(0);
    expect(pipeline.calls[1]?.input).toEqual([{ role: 'tool', content: '1' }]);
  });
});
